"""Spec lint: reject specs under which a constant or all-zero kernel would pass verification.

Two ways a spec lets a cheat through, both visible before any kernel exists:

* **The reference ignores its inputs.** If the reference gives the same result for
  different input values (``numpy.zeros_like`` named as the reference), any kernel
  that returns that constant passes. Each drawn example is paired with a redraw that
  keeps the shapes (and axis arguments) and changes the values; if the result never
  changes over the non-empty examples (at least ``MIN_COMPARED`` of them), the spec
  is rejected.
* **Reference magnitudes under the tolerance.** If the default inputs give results so
  small that an all-zero result is within ``atol`` (or within ``atol + rtol*scale`` for
  ``basis: abs_inputs``), a kernel that writes zeros passes. For float results the lint
  asks the harness's own comparison whether zeros would pass, example by example, and
  rejects the spec when they pass on more than ``ZERO_PASS_LIMIT`` of the non-empty
  examples whose reference is not all zero (where the reference itself is exactly
  zero, zeros are the right answer, not a magnitude hiding under atol). Integer, bool
  and string results are compared exactly and need only the first check.

A reference that cannot be imported, or that raises an error the spec does not
declare on an input the domain admits, is reported too: verification could not run.

Examples come from the same Hypothesis strategy the verifier uses, with a fixed seed
and no example database. (Hypothesis also mixes in literal constants from the local
modules a process has imported, so the exact draws can differ a little between a
script and the CLI; the verdicts on the shipped specs have wide margins.)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings

from opgen.errors import SpecError
from opgen.references import INT64_MAX, INT64_MIN, DeclaredError, call_declaring, call_reference, error_scale, resolve
from opgen.spec.model import Domain, Overload, Spec, Tolerance
from opgen.spec.source import line_of, load_with_lines
from opgen.verify.compare import Mismatch, Outcome, compare_scalar, compare_tensor
from opgen.verify.strategies import DISTRIBUTIONS, _values, examples

LINT_EXAMPLES = 60
LINT_SEED = 0x5BEC  # fixed: the same spec always gets the same verdict
ZERO_PASS_LIMIT = 0.10  # an all-zero result may pass at most this fraction of non-empty examples
MIN_COMPARED = 5  # fewer non-empty pairs than this and "never changes" proves nothing


@dataclass
class Finding:
    """One reason a spec overload is rejected: what was found, where, and the fix."""

    path: str
    line: int
    op: str
    overload: str
    kind: str  # constant_output | under_tolerance | reference_error
    message: str
    fix: str

    def render(self) -> str:
        return f"{self.path}:{self.line}: {self.op} [{self.overload}]: {self.message}\n  fix: {self.fix}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LintResult:
    """The lint's verdict on one overload, with the numbers it rests on."""

    op: str
    overload: str
    examples: int = 0  # examples drawn
    nonempty: int = 0  # of which the reference gave a non-empty result
    changed: int = 0  # non-empty pairs whose result changed with the input values
    compared: int = 0  # non-empty pairs compared
    informative: int | None = None  # float results: non-empty examples whose reference is not all zero
    zero_passes: int | None = None  # float results: of those, the ones an all-zero result passes
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "overload": self.overload, "ok": self.ok, "examples": self.examples,
                "nonempty": self.nonempty, "changed": self.changed, "compared": self.compared,
                "informative": self.informative, "zero_passes": self.zero_passes, "findings": [f.as_dict() for f in self.findings]}


class SpecLintError(SpecError):
    """A spec that verification could not protect from constant or all-zero kernels."""

    def __init__(self, findings: list[Finding]):
        self.findings = findings
        super().__init__(
            "the spec lint rejects " + ", ".join(sorted({f"{f.op} [{f.overload}]" for f in findings}))
            + " (a constant or all-zero kernel could pass its verification):\n"
            + "\n".join(f.render() for f in findings),
            hint="fix the spec as the lines above say, then run `opgen lint` again",
        )


def draw_examples(overload: Overload, n: int = LINT_EXAMPLES, seed_: int = LINT_SEED) -> list[dict[str, Any]]:
    """``n`` examples from the verifier's own strategy, deterministically."""
    drawn: list[dict[str, Any]] = []

    @seed(seed_)
    @settings(max_examples=n, database=None, deadline=None, derandomize=False, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(examples(overload))
    def collect(args: dict[str, Any]) -> None:
        drawn.append(args)

    collect()
    return drawn


def _redraw(overload: Overload, args: dict[str, Any], other: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """Other values for the same shapes: tensors redrawn from their domain, axis
    arguments kept (they decide the result's shape), index tensors kept (redrawn ones would
    fall outside their table), other scalars taken from another drawn example."""
    alt: dict[str, Any] = {}
    for p in overload.sig.params:
        dom = overload.domain.get(p.name, Domain())
        v = args[p.name]
        if p.type.is_tensor and dom.index_into is None and dom.index_of is None:
            dist = DISTRIBUTIONS[int(rng.integers(len(DISTRIBUTIONS)))]
            alt[p.name] = _values(rng, dist, v.shape, p.type.dtype, dom)
        elif dom.axis_of is not None or dom.index_into is not None or dom.index_of is not None:
            alt[p.name] = v  # (indices keep pointing into their table, whose values are redrawn)
        else:
            alt[p.name] = other[p.name]
    return alt


class _Raised(Exception):
    """The reference raised an error the spec declares: no result to compare."""


def _reference(spec: Spec, overload: Overload, args: dict[str, Any]) -> Any:
    """The result the verifier expects, with the verifier's reading of declared errors."""
    declared = {r.error for r in overload.raises}
    values = [np.array(args[p.name], copy=True) if isinstance(args[p.name], np.ndarray) else args[p.name]
              for p in overload.sig.params]
    try:
        with np.errstate(all="ignore"):
            result = call_declaring(spec.reference_for(overload), values, declared)
    except DeclaredError:
        raise _Raised from None
    r = overload.sig.returns
    if r.name == "int" and not isinstance(result, bool) and not INT64_MIN <= int(result) <= INT64_MAX:
        if "OverflowError" in declared:
            raise _Raised
    if r.is_tensor:
        result = np.asarray(result, dtype=r.dtype.np)
    if r.is_tuple:  # each result in its own dtype (a reference that returns fewer is a spec bug, raised here)
        if not isinstance(result, (tuple, list)) or len(result) != len(r.fields):
            raise TypeError(f"returned {type(result).__name__}, not a tuple of {len(r.fields)} results")
        result = tuple(np.asarray(x, dtype=t.dtype.np) for x, (_, t) in zip(result, r.fields))
    return result


def _abs_reference(spec: Spec, overload: Overload, args: dict[str, Any]) -> np.ndarray:
    values = [np.abs(args[p.name]) if isinstance(args[p.name], np.ndarray) else args[p.name] for p in overload.sig.params]
    with np.errstate(all="ignore"):
        return np.asarray(call_reference(spec.reference_for(overload), values), dtype=np.float64)


def _error_scale(spec: Spec, overload: Overload, args: dict[str, Any]) -> np.ndarray:
    values = [np.array(args[p.name], copy=True) if isinstance(args[p.name], np.ndarray) else args[p.name]
              for p in overload.sig.params]
    with np.errstate(all="ignore"):
        return np.asarray(error_scale(spec.reference_for(overload))(*values), dtype=np.float64)


def _nonempty(result: Any) -> bool:
    if isinstance(result, np.ndarray):
        return result.size > 0
    if isinstance(result, tuple) and result and all(isinstance(x, np.ndarray) for x in result):
        return any(x.size > 0 for x in result)  # a tuple result
    if isinstance(result, (str, list, tuple)):
        return len(result) > 0
    return True


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):  # a tuple result: every result the same
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _zeros_pass(spec: Spec, overload: Overload, tol: Tolerance, args: dict[str, Any], ref: Any) -> bool:
    """Would an all-zero result pass the verifier's comparison on this example?"""
    try:
        if isinstance(ref, np.ndarray):
            scale = (_abs_reference(spec, overload, args) if tol.basis == "abs_inputs"
                     else _error_scale(spec, overload, args) if tol.basis == "error_scale" else None)
            compare_tensor(np.zeros_like(ref), ref, tol, scale, Outcome())
        else:
            compare_scalar(0.0, float(ref), tol, Outcome())
    except Mismatch:
        return False
    return True


def _magnitude(ref: Any) -> float | None:
    a = np.abs(np.asarray(ref, dtype=np.float64))
    a = a[np.isfinite(a)]
    return float(a.max()) if a.size else None


def lint_overload(spec: Spec, overload: Overload, *, n: int = LINT_EXAMPLES, seed_: int = LINT_SEED) -> LintResult:
    where = _where(spec, overload)
    result = LintResult(spec.op, overload.name)
    reference = spec.reference_for(overload)

    def finding(kind: str, message: str, fix: str) -> None:
        result.findings.append(Finding(where[0], where[1], spec.op, overload.name, kind, message, fix))

    try:
        resolve(reference)
    except LookupError as exc:
        finding("reference_error", str(exc), "name an importable callable as the spec's (or the overload's) reference")
        return result
    r = overload.sig.returns
    if r.dtype is not None and r.dtype.is_float and spec.tolerance_for(overload, r.dtype).basis == "error_scale":
        try:
            error_scale(reference)
        except LookupError as exc:
            finding("reference_error", str(exc), "define the reference's error_scale, or change the tolerance basis")
            return result
    drawn = draw_examples(overload, n, seed_)
    result.examples = len(drawn)
    rng = np.random.default_rng(seed_)
    # The float results whose all-zero stand-in is checked: (position in a tuple result or None, type).
    floats = [(i if overload.sig.returns.is_tuple else None, t) for i, (_, t) in enumerate(overload.sig.results)
              if t.dtype is not None and t.dtype.is_float]
    is_float = bool(floats)
    r = floats[0][1] if floats else overload.sig.returns
    tol = spec.tolerance_for(overload, r.dtype) if is_float else None
    zero_magnitudes: list[float] = []
    zero_passes = informative = 0
    for i, args in enumerate(drawn):
        try:
            ref = _reference(spec, overload, args)
        except _Raised:
            continue
        except Exception as exc:  # noqa: BLE001 - any undeclared failure of the reference is a spec bug
            finding("reference_error",
                    f"the reference {reference} raised {type(exc).__name__}: {exc} on an input the domain admits "
                    f"({_describe(args)}), and the spec declares no such error",
                    "narrow the domain to inputs the reference accepts, or declare the error under 'raises'")
            return result
        if not _nonempty(ref):
            continue
        result.nonempty += 1
        for index, t in floats:
            value = ref if index is None else ref[index]
            if m := _magnitude(value):  # an all-zero reference is not a magnitude under atol
                informative += 1
                if _zeros_pass(spec, overload, spec.tolerance_for(overload, t.dtype), args, value):
                    zero_passes += 1
                    zero_magnitudes.append(m)
        alt_args = _redraw(overload, args, drawn[(i + 1 + i % 7) % len(drawn)], rng)
        try:
            alt = _reference(spec, overload, alt_args)
        except Exception:  # noqa: BLE001 - a raise on other values is itself a change
            result.changed += 1
            result.compared += 1
            continue
        result.compared += 1
        if not _same(ref, alt):
            result.changed += 1
    if is_float:
        result.informative, result.zero_passes = informative, zero_passes
    if result.compared >= MIN_COMPARED and result.changed == 0:
        finding("constant_output",
                f"the reference {reference} gave the same result for different input values in all "
                f"{result.compared} non-empty examples: its output does not depend on its inputs, so a kernel "
                "that returns a constant would pass",
                "name a reference that computes the op from its inputs (e.g. numpy.exp, not numpy.zeros_like)")
    if is_float and informative and zero_passes > ZERO_PASS_LIMIT * informative:
        share = zero_passes / informative
        bound = (f"atol {tol.atol:g}" if tol.basis == "reference"
                 else f"atol {tol.atol:g} + rtol {tol.rtol:g} * "
                 + ("the reference's error scale" if tol.basis == "error_scale" else "reference of |inputs|"))
        finding("under_tolerance",
                f"an all-zero result passes {share:.0%} of non-empty examples ({zero_passes} of the {informative} "
                f"whose reference is not all zero): reference magnitudes ~{float(np.median(zero_magnitudes)):.0e} "
                f"are under {bound} ({r.dtype.name})",
                f"tighten atol for {r.dtype.name} (the spec's 'tolerance') below the reference magnitudes that "
                "matter, or widen the domain so reference results sit well above atol")
    return result


def lint_spec(spec: Spec, overloads: list[Overload] | None = None, **kw: Any) -> list[LintResult]:
    return [lint_overload(spec, o, **kw) for o in (overloads if overloads is not None else spec.overloads)]


def require_clean(spec: Spec, overloads: list[Overload] | None = None) -> None:
    """Raise SpecLintError when any of ``overloads`` (default: all) fails the lint."""
    findings = [f for r in lint_spec(spec, overloads) for f in r.findings]
    if findings:
        raise SpecLintError(findings)


def _where(spec: Spec, overload: Overload) -> tuple[str, int]:
    if spec.path is None:
        return f"<{spec.op}>", 1
    try:
        _, lines = load_with_lines(Path(spec.path))
        index = [o.name for o in spec.overloads].index(overload.name)
        return str(spec.path), line_of(lines, ("overloads", index))
    except (SpecError, OSError, ValueError):
        return str(spec.path), 1


def _describe(args: dict[str, Any]) -> str:
    parts = []
    for k, v in args.items():
        if isinstance(v, np.ndarray):
            parts.append(f"{k}: {v.dtype}{list(v.shape)}")
        else:
            text = repr(v)
            parts.append(f"{k}={text if len(text) <= 40 else text[:37] + '...'}")
    return ", ".join(parts)
