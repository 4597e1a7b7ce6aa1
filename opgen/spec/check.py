"""``opgen spec check``: can a correct kernel pass this spec? Answered before any LLM call.

A spec whose tolerance is tighter than the reference's own error, or whose domain holds inputs on which
the reference is wrong or raises, rejects every kernel, the right ones included, and each rejection
goes back to the LLM as a counterexample nobody can fix (the silu case: PyTorch returns -0.0 below
x = -88.7 where the exact value is a normal float32, so an atol of 1e-44 burned every attempt on a
correct kernel). The lint (``opgen.spec.lint``) catches the opposite mistake, a spec so loose that a
constant passes. This module checks, per overload:

1. **lint**: the lint's findings.
2. **tolerance**: on the gate's own draws (``opgen.verify.strategies``, a fixed seed) and scale cases
   (``opgen.verify.scale``), the reference against a wider evaluation rounded once to the result
   dtype (``opgen.spec.wide``): that correctly rounded result must pass the gate's comparison against
   the reference. If it does not, the reference itself is outside the tolerance: the spec is too tight.
3. **ulp**: a faithfully rounded result (the other float neighbour of the exact value, where the wider
   evaluation says it is not representable) must pass too: a tolerance tighter than one rounding step
   rejects honest kernels that round the other way. Exact tolerances (rtol = atol = 0: one correctly
   rounded operation) are exempt; step 2 checks that the reference is exact there.
4. **backward** (``basis: abs_inputs`` only, whose error model is a backward error): the reference on
   inputs moved by one ulp must stay within the tolerance of the reference.
5. **domain**: inputs in the domain on which the reference raises an undeclared error, returns an int
   outside int64 without OverflowError declared, returns nan or an infinity where the wider evaluation is
   finite, or returns nan (an infinity) from finite inputs while the spec's text never says when.
6. **gate**: a trivially honest kernel (``opgen.spec.honest``: the correctly rounded result, or the
   reference's own where there is no wider route) through the gate's runner, on the development seed's
   examples and on the scale stage's cases. Exactly the gate's acceptance rule; any failure is the spec's.

Steps 2 to 5 live in ``opgen.spec.value_checks``, the report in ``opgen.spec.checkreport``. Every problem
names the overload, the field to change, the failing input and a fix. Nothing here calls a network or an
LLM; every seed is fixed, so a spec always gets the same verdict.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import Any

import numpy as np

from opgen.errors import SpecError
from opgen.gate.admission import dev_seed
from opgen.spec.checkreport import (OverloadCheck, Problem, Recorder, SpecCheckReport, first_float, float_result, short,
                                    tol_exact)
from opgen.spec.honest import HonestKernel, gate_run
from opgen.spec.lint import lint_overload
from opgen.spec.model import Overload, Spec, Tolerance
from opgen.spec.value_checks import CHECK_BUDGET, CHECK_EXAMPLES, CHECK_SEED, measure
from opgen.spec.wide import WideRoute, route_for

GATE_EXAMPLES = 100  # the honest kernel's Hypothesis run: the development run's default count

__all__ = ["GATE_EXAMPLES", "OverloadCheck", "Problem", "SpecCheckReport", "SpecUnsound", "check_overload",
           "check_spec", "require_spec_sound"]


class SpecUnsound(SpecError):
    """A spec under which a correct kernel would be rejected: synthesis would burn its attempts."""

    def __init__(self, report: SpecCheckReport):
        self.report = report
        problems = report.problems
        # The lint's findings other than a failing reference say the opposite of the other checks:
        # a wrong kernel (a constant, all zeros) could pass. The headline says which of the two it is.
        loose = [p for p in problems if p.check == "lint" and not p.message.startswith("reference_error")]
        strict = [p for p in problems if p not in loose]
        names = lambda ps: ", ".join(sorted({f"{p.op} [{p.overload}]" for p in ps}))  # noqa: E731
        parts = ([f"the spec lint rejects {names(loose)} (a constant or all-zero kernel could pass its verification)"]
                 if loose else []) + ([f"the spec of {names(strict)} would reject a correct kernel"] if strict else [])
        super().__init__(
            f"spec check: {'; and '.join(parts)} ({len(problems)} problem{'' if len(problems) == 1 else 's'}); "
            "nothing is asked of the model until it is fixed:\n"
            + "\n".join(p.render() for p in problems),
            hint=f"fix the fields named above, then run `opgen spec check {report.op}` again",
        )


def check_spec(spec: Spec, overloads: list[Overload] | None = None, *, examples: int = CHECK_EXAMPLES,
               gate_examples: int = GATE_EXAMPLES) -> SpecCheckReport:
    """Every check above on ``overloads`` (default: all); nothing is raised for a problem."""
    started = time.monotonic()
    report = SpecCheckReport(spec.op, str(spec.path or f"<{spec.op}>"))
    for o in overloads if overloads is not None else spec.overloads:
        report.overloads.append(check_overload(spec, o, examples=examples, gate_examples=gate_examples))
    report.seconds = time.monotonic() - started
    return report


def require_spec_sound(spec: Spec, overloads: list[Overload] | None = None) -> SpecCheckReport:
    """``check_spec``, raising ``SpecUnsound`` (an OpgenError: message, then the fix) on any problem."""
    report = check_spec(spec, overloads)
    if not report.ok:
        raise SpecUnsound(report)
    return report


def check_overload(spec: Spec, overload: Overload, *, examples: int = CHECK_EXAMPLES,
                   gate_examples: int = GATE_EXAMPLES) -> OverloadCheck:
    started = time.monotonic()
    route = route_for(spec, overload)
    result = OverloadCheck(overload.name, route.name if route.available else f"none: {route.why}")
    state = Recorder(spec, overload, result)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if _lint(state):
            if examples > 0:
                measure(state, route, examples)
            if "reference" not in state.seen:  # else the gate's run would only meet the same undeclared error
                _gate(state, route, gate_examples)
    if not route.available:
        if overload.sig.returns.is_tuple:
            what = ("the value probes measure single results: the domain, the declared errors and the gate's run "
                    "with the reference as the kernel (every result compared) are checked")
        elif not float_result(overload):
            what = "the results are compared exactly, so only the domain and the declared errors are checked"
        elif tol_exact(spec.tolerance_for(overload, first_float(overload))):
            what = "the exact tolerance (rtol = atol = 0) cannot be checked against the exact value"
        else:
            what = "the tolerance is checked against one-ulp moves of the reference's own result only"
        result.notes.append(f"no wider evaluation ({route.why}): {what}")
    result.seconds = time.monotonic() - started
    return result


def _lint(state: Recorder) -> bool:
    """The lint's findings as problems (all of them); False when the reference cannot be called or raised
    an undeclared error, which the other checks would only meet again."""
    lint = lint_overload(state.spec, state.o)
    dt = first_float(state.o)
    for f in lint.findings:
        if f.kind == "under_tolerance" and dt is not None:
            name, loc = state.tolerance_field(dt, "atol")
        elif f.kind == "reference_error" and "raised" in f.message:
            name, loc = f"{state.domain_field()[0]} or overloads[{state.o.name}].raises", state.domain_field()[1]
        else:
            name, loc = "reference", ("reference",)
        state.seen.discard("lint")  # every finding of the lint is reported
        state.problem("lint", name, f"{f.kind}: {f.message}", f.fix, loc=loc)
    return not any(f.kind == "reference_error" for f in lint.findings)


# ------------------------------------------------------------------------------------ the gate's run


def _gate(state: Recorder, route: WideRoute, examples: int) -> None:
    spec, o, result = state.spec, state.o, state.result
    kernel = HonestKernel(spec, o, route)
    what = ("a correctly rounded kernel (the wider evaluation rounded once)" if route.available
            else "a kernel that returns the reference's own result")
    runs = [("the development run", dict(seed=dev_seed(spec, o), examples=examples))] if examples > 0 else []
    runs.append(("the scale stage", dict(seed=CHECK_SEED, scale_budget=CHECK_BUDGET)))
    for name, kw in runs:
        try:
            verdict = gate_run(spec, o, kernel, **kw)
        except Exception as exc:  # noqa: BLE001 - the reference failing inside the gate's run is the spec's problem
            field_name, loc = state.domain_field()
            notes = " ".join(getattr(exc, "__notes__", []) or [])
            state.problem("gate", f"{field_name} or overloads[{o.name}].raises",
                          f"in {name} of the gate the reference {spec.reference_for(o)} raised {type(exc).__name__}: "
                          f"{short(exc)}, an error the spec does not declare"
                          + (f" ({_clip(notes)})" if notes else ""),
                          "narrow the domain to inputs the reference accepts, or declare the error under 'raises'",
                          None, loc)
            return
        result.gate_examples += int(verdict.get("examples", 0))
        if verdict.get("ok"):
            continue
        details = verdict.get("details", {}) or {}
        kind = verdict.get("kind", "")
        # the result that differed (a tuple's names it), else the single result
        r = dict(o.sig.results).get(details.get("result", "out"), o.sig.returns)
        if kind == "value" and r.dtype is not None and r.dtype.is_float:
            name_, loc = state.tolerance_field(r.dtype, _gate_part(spec.tolerance_for(o, r.dtype), details))
            fix = ("loosen the tolerance as the tolerance problem above says, or narrow the domain"
                   if "tolerance" in state.seen else "loosen the tolerance, or narrow the domain")
        elif kind == "error":
            name_, loc = f"overloads[{o.name}].raises", ("overloads", state.index, "raises")
            fix = "declare what the reference raises, or narrow the domain to where it does not raise"
        else:
            name_, loc = state.domain_field()
            fix = "the reference does not behave as the spec says on this input: narrow the domain or fix the reference"
        state.problem("gate", name_, f"{what} fails {name} of the gate (kind {kind}): {verdict.get('message', '')}",
                      fix, None, loc)
        if result.problems and result.problems[-1].check == "gate":
            shown: dict[str, Any] = {"args": details.get("args", {})}  # already described by the runner
            at = {k: details[k] for k in ("index", "expected", "got") if k in details}
            if "scale_case" in details:
                at["scale case"] = details["scale_case"].get("name")
            if at:
                shown["at"] = at
            result.problems[-1].input = shown
        return


def _gate_part(tol: Tolerance, details: dict[str, Any]) -> str:
    """atol or rtol, from the runner's expected and got (basis reference only: other scales are not shown)."""
    try:
        expected, got = float(details["expected"]), float(details["got"])
    except (KeyError, TypeError, ValueError):
        return "atol or rtol"
    err = abs(got - expected)
    if tol.basis != "reference" or not math.isfinite(err):
        return "atol or rtol"
    return "atol" if expected == 0 or tol.rtol * abs(expected) < tol.atol or err > 0.5 * abs(expected) else "rtol"


def _clip(text: str, n: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."
