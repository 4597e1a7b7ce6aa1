"""Steps 2 to 5 of ``opgen spec check``, measured directly on the reference's results.

On the gate's own draws (``opgen.spec.lint.draw_examples``, a fixed seed) and, for float results, its scale
cases (``opgen.verify.scale``, a smaller budget):

2. **tolerance**: the reference against a wider evaluation rounded once to the result dtype
   (``opgen.spec.wide``); that correctly rounded result must pass the gate's comparison against the reference.
3. **ulp**: a faithfully rounded result (the other float neighbour of the exact value) must pass too; without
   a wider evaluation, the reference's own result one ulp further from 0. Exact tolerances are exempt, and
   so are moves into the subnormal range (atol decides there, and step 2 has measured the reference).
4. **backward** (``basis: abs_inputs``): the reference of the inputs moved by one ulp each must pass.
5. **domain**: undeclared errors of the reference, int results outside int64 without OverflowError, nan or an
   infinity where the wider evaluation is finite, and nan (an infinity) from finite inputs that the spec's
   text never explains.

Each value check keeps its worst failure over every input and the atol and rtol that would let all of them
pass (``_Worst``), so the fix it suggests is the one the spec needs, not the first example's.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from opgen.references import INT64_MAX, INT64_MIN
from opgen.spec.dtypes import floating
from opgen.spec.checkreport import Recorder, element, float_result, short, tol_exact
from opgen.spec.lint import draw_examples
from opgen.spec.model import Overload, Spec, Tolerance, term_count
from opgen.spec.probe import KERNEL_ULPS, SAFETY
from opgen.spec.wide import Unavailable, WideRoute, combine
from opgen.verify.compare import Mismatch, Outcome, compare_scalar, compare_tensor
from opgen.verify.runner import Check
from opgen.verify.scale import Budget, scale_cases

CHECK_EXAMPLES = 100  # drawn examples measured directly
CHECK_SEED = 0x5C4EC  # fixed: the same spec always gets the same verdict
# The scale stage's cases at a smaller budget than admission's (seconds, not minutes, per spec): every
# dim still goes long (4097, 8193, 100k-term reductions), the products are smaller.
CHECK_BUDGET = Budget(max_work=1 << 26, max_bytes=4 << 20, max_cases=16)
# What a suggested atol adds to the error measured (rtol: opgen.spec.probe's kernel ulps and safety factor, as
# ``spec new`` drafts it): a suggestion is a starting point, not a fit.
SUGGEST_MARGIN = 2.0



def _inputs(state: Recorder, n: int) -> list[tuple[str, dict[str, Any]]]:
    """The gate's draws (a fixed seed) and, for float results, its scale cases: rounding shows at length.
    (Exact results meet the scale cases in the gate's run of step 6, which checks all they could show.)"""
    drawn = [(f"drawn example {i + 1}", args) for i, args in enumerate(draw_examples(state.o, n, CHECK_SEED))]
    if not float_result(state.o):
        return drawn
    try:
        cases = [(f"scale case {c.name!r}", c.args) for c in scale_cases(state.spec, state.o, CHECK_SEED, CHECK_BUDGET)]
    except Exception as exc:  # noqa: BLE001 - a case the stage cannot build is the stage's business, not the spec's
        state.result.notes.append(f"the scale cases could not be built ({type(exc).__name__}: {exc})")
        cases = []
    return drawn + cases


def measure(state: Recorder, route: WideRoute, n: int) -> None:
    """Steps 2 to 5 on ``n`` drawn examples and the scale cases; problems go to ``state``."""
    spec, o, result = state.spec, state.o, state.result
    check = Check(spec, o, None, Path("progress.json"))  # for the gate's reading of the reference (never called)
    r = o.sig.returns
    # The value probes (tolerance, ulp, backward) measure one result; a tuple's results meet the gate's
    # own run with the reference as the kernel (opgen.spec.check), each compared as the gate compares it.
    is_float = float_result(o) and not r.is_tuple
    rng = np.random.default_rng(CHECK_SEED)
    unavailable: str | None = None
    missed = 0  # inputs the wider evaluation could not cover
    dt_name = r.dtype.name if r.dtype is not None else ""
    worst = {
        "tolerance": _Worst("tolerance", "the reference itself is outside its tolerance: the correctly rounded "
                            f"result (a wider evaluation rounded once to {dt_name}) fails the gate's comparison "
                            "against it"),
        "ulp": _Worst("ulp", "a faithfully rounded result (the other float neighbour of the exact value, one ulp "
                      "from the correctly rounded one) fails" if route.available else
                      "a result one ulp from the reference's (a kernel rounding the other way) fails"),
        "backward": _Worst("backward", "the reference of the inputs moved by one ulp each (a backward error the "
                           "'abs_inputs' basis is meant to admit) fails against the reference"),
    }
    inputs = _inputs(state, n)
    for label, args in inputs:
        result.examples += 1
        try:
            ref, ref_err = check.expected(args)
        except Exception as exc:  # noqa: BLE001 - an undeclared failure of the reference is a spec problem
            field_name, loc = state.domain_field()
            state.problem("reference", f"{field_name} or overloads[{o.name}].raises",
                          f"the reference {check.reference} raised {type(exc).__name__}: {short(exc)} on an input "
                          f"the domain admits ({label}), and the spec declares no such error",
                          "narrow the domain to inputs the reference accepts, declare the error under 'raises' "
                          "(OverflowError, ZeroDivisionError, ValueError or IndexError, matched by exact name), or "
                          "wrap the reference in opgen/references.py so that it raises a plain built-in error",
                          args, loc)
            return
        if ref_err is not None:
            continue
        if r.name == "int" and not isinstance(ref, bool) and not INT64_MIN <= int(ref) <= INT64_MAX:
            state.problem("domain", f"overloads[{o.name}].raises",
                          f"the reference returns {ref}, outside int64, on an input the domain admits ({label}); "
                          "a native kernel cannot return it and the spec declares no OverflowError",
                          "declare OverflowError under 'raises' (the kernel must then raise it), or narrow the domain",
                          args, ("overloads", state.index, "raises"))
            continue
        if not is_float:
            continue
        tol = spec.tolerance_at(o, r.dtype, args)
        scale = _scale(check, tol, args) if r.is_tensor else None
        _undeclared_nonfinite(state, args, ref, label)
        cand = None
        if route.available:
            try:
                wide = route.evaluate(o, args)
            except Unavailable as u:
                unavailable = unavailable or f"{label}: {u}"
                missed += 1
                wide = None
            if wide is not None:
                result.wide_examples += 1
                rounded = route.rounded(wide, ref)
                cand = combine(route, ref, rounded)
                _wrong_nonfinite(state, route, args, ref, rounded, wide, label)
                if worst["tolerance"].add(state, cand, ref, tol, scale, args, label):
                    # A wider value the result dtype holds exactly everywhere says nothing about rounding (a
                    # reference that rounds to float32 inside): move the reference's own result instead.
                    said = bool(np.any(route.inexact(wide, rounded)))
                    _one_ulp(state, worst["ulp"], route, args, ref, cand, tol, scale, label, wide if said else None)
        if cand is None:
            _one_ulp(state, worst["ulp"], route, args, ref, ref, tol, scale, label)
        if r.is_tensor and tol.basis == "abs_inputs":
            _backward(state, worst["backward"], check, args, ref, tol, scale, rng, label)
    for w in worst.values():
        w.emit(state, len(inputs))
        if w.ran:
            result.margins[w.check] = round(w.outcome.worst_tolerance_used, 4)
    outcome = worst["tolerance"].outcome
    if result.wide_examples:
        result.worst_tolerance_used = outcome.worst_tolerance_used
        exact = tol_exact(spec.tolerance_for(o, r.dtype))
        if outcome.worst_tolerance_used == 0 and outcome.worst_abs == 0 and not exact:
            result.notes.append(f"the wider evaluation ({route.name}) agreed with the reference bit for bit on every "
                                "input: the reference is correctly rounded already, or it does not really compute in "
                                "the wider dtype (rounding to float32 inside, say)")
    if unavailable is not None:
        result.notes.append(f"the wider evaluation was unavailable on {missed} of {missed + result.wide_examples} "
                            f"inputs with a result (the first: {unavailable}); the tolerance was checked against "
                            "one-ulp moves of the reference's own result there")


def _scale(check: Check, tol: Tolerance, args: dict[str, Any]) -> np.ndarray | None:
    if tol.basis == "abs_inputs":
        return check.abs_reference(args)
    if tol.basis == "error_scale":
        return check.error_scale(args)
    return None


def _gate_compare(got: Any, ref: Any, tol: Tolerance, scale: np.ndarray | None, outcome: Outcome,
                  o: Overload) -> None:
    """The comparison the runner's ``Check.check`` makes of a kernel's value result."""
    r = o.sig.returns
    if r.is_tensor:
        compare_tensor(np.asarray(got, dtype=r.dtype.np), np.asarray(ref, dtype=r.dtype.np), tol, scale, outcome,
                       "the reference's error scale" if tol.basis == "error_scale" else "reference of |inputs|")
    else:
        compare_scalar(got, ref, tol, outcome)


class _Worst:
    """One value check over every input: how many failed, the worst failure (the largest |got - ref| over
    what the tolerance allows) and what atol and rtol would have to be for every failure to pass."""

    def __init__(self, check: str, what: str):
        self.check, self.what = check, what
        self.failures = 0
        self.ratio = -1.0
        self.label = ""
        self.args: dict[str, Any] | None = None
        self.mismatch: Mismatch | None = None
        self.atol_need = 0.0
        self.rtol_need = 0.0
        self.terms: int | None = None  # the term count of the worst input (a terms-dependent tolerance)
        self.at: dict[str, Any] = {}  # the worst element: its index, the inputs there, expected and got
        self.outcome = Outcome()  # the worst fraction of the tolerance used by the inputs that passed
        self.ran = 0

    def add(self, state: Recorder, got: Any, ref: Any, tol: Tolerance, scale: np.ndarray | None,
            args: dict[str, Any], label: str) -> bool:
        """Whether ``got`` passes the gate's comparison against ``ref``; a failure is recorded."""
        self.ran += 1
        try:
            _gate_compare(got, ref, tol, scale, self.outcome, state.o)
        except Mismatch as m:
            self.failures += 1
            ratio, atol_need, rtol_need, idx = _needs(got, ref, tol, scale)
            self.atol_need = max(self.atol_need, atol_need)
            self.rtol_need = max(self.rtol_need, rtol_need)
            if ratio > self.ratio:
                self.ratio, self.label, self.args, self.mismatch = ratio, label, args, m
                self.at = element(state, args, None, idx if idx is not None else m.details.get("index"))
                if idx is not None:
                    g, e = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
                    self.at.update(expected=repr(float(e[idx])), got=repr(float(g[idx])),
                                   allowed=repr(tol.atol + tol.rtol * (float(np.abs(e[idx])) if scale is None else
                                                float(np.abs(np.broadcast_to(scale, e.shape)[idx])))))
                t = state.spec.tolerance_for(state.o, state.o.sig.returns.dtype)
                self.terms = term_count(state.o, t.terms, args) if t.terms else None
            return False
        return True

    def emit(self, state: Recorder, inputs: int) -> None:
        if not self.failures or self.mismatch is None:
            return
        dt = state.o.sig.returns.dtype
        tol = state.spec.tolerance_for(state.o, dt)
        raise_atol = self.atol_need > tol.atol
        per_term = f" + rtol_per_term * n (n = {self.terms} there)" if self.terms is not None else ""
        raise_rtol = self.rtol_need > tol.rtol + (tol.rtol_per_term * self.terms if self.terms else 0.0)
        parts = [p for p, yes in (("atol", raise_atol), ("rtol", raise_rtol)) if yes] or ["rtol"]
        name, loc = state.tolerance_field(dt, " and ".join(parts))
        asks = []
        if raise_atol:
            asks.append(f"atol to at least {self.atol_need * SUGGEST_MARGIN:.2g} ({SUGGEST_MARGIN:g}x what the failing "
                        "inputs need)")
        if raise_rtol:
            asks.append(f"rtol{per_term} to at least {(self.rtol_need + KERNEL_ULPS * dt.eps) * SAFETY:.2g} (what the "
                        f"failing inputs need, plus {KERNEL_ULPS:g} ulps for the kernel, x {SAFETY:g})")
        fix = ((f"raise {' and '.join(asks)}" if asks else "loosen the tolerance")
               + ", and say why in the tolerance's 'why'; or narrow the domain if those inputs do not matter")
        state.problem(self.check, name, f"{self.what} on {self.failures} of {inputs} inputs; the worst on "
                      f"{self.label}, where the gate says: {self.mismatch}", fix, self.args, loc, self.at)


def _needs(got: Any, ref: Any, tol: Tolerance, scale: np.ndarray | None
           ) -> tuple[float, float, float, tuple | None]:
    """Over the elements that fail: the largest error over what is allowed, the atol (for elements where
    atol decides: a zero or tiny scale, or an error as large as the value) and the rtol (elsewhere) that
    would let each pass, and the index of the worst element."""
    g = np.asarray(got, dtype=np.float64)
    e = np.asarray(ref, dtype=np.float64)
    if g.shape != e.shape:
        return math.inf, 0.0, 0.0, None  # a shape mismatch: no tolerance fixes it
    s = np.abs(e) if scale is None else np.abs(np.broadcast_to(np.asarray(scale, dtype=np.float64), e.shape))
    with np.errstate(all="ignore"):
        err = np.abs(g - e)
        allowed = tol.atol + tol.rtol * s
        bad = np.isfinite(g) & np.isfinite(e) & (err > allowed)
        if not bad.any():
            return math.inf, 0.0, 0.0, None  # a special value (nan, an infinity) where the other has a number
        ratios = np.where(bad, np.where(allowed > 0, err / np.where(allowed > 0, allowed, 1.0), math.inf), -1.0)
        worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratios)), ratios.shape)) if ratios.ndim else ()
        ratio = float(ratios[worst])
        by_atol = bad & ((s == 0) | (tol.rtol * s < tol.atol) | (err > 0.5 * s))
        by_rtol = bad & ~by_atol
        atol_need = float(err[by_atol].max()) if by_atol.any() else 0.0
        rtol_need = float(((err[by_rtol] - tol.atol) / s[by_rtol]).max()) if by_rtol.any() else 0.0
    return ratio, atol_need, rtol_need, worst


def _one_ulp(state: Recorder, worst: _Worst, route: WideRoute, args: dict[str, Any], ref: Any, cand: Any, tol: Tolerance,
             scale: np.ndarray | None, label: str, wide: Any = None) -> None:
    """A faithfully rounded result must pass: the other float neighbour of the exact value where the wider
    evaluation says it is not representable (without one, the reference's result one ulp further from 0).
    Only moves that stay normal: in the subnormal range atol decides, and step 2 has measured the
    reference's real error there."""
    if tol_exact(tol):
        return  # declared exact: a correctly rounded operation, which step 2 checks
    r = state.o.sig.returns
    tiny = float(np.finfo(r.dtype.np).smallest_normal)
    if not r.is_tensor:
        c = float(cand)
        if not math.isfinite(c):
            return
        if wide is not None:
            if not route.inexact(wide, c):
                return
            toward = math.inf if float(wide) > c else -math.inf
        else:
            if c == 0:
                return
            toward = math.copysign(math.inf, c)
        moved = math.nextafter(c, toward)
        if abs(moved) < tiny or not math.isfinite(moved):
            return
    else:
        c = np.asarray(cand, dtype=r.dtype.np)
        e = np.asarray(ref, dtype=r.dtype.np)
        ok = np.isfinite(c) & np.isfinite(e)
        if wide is not None:
            w = np.asarray(wide)
            ok &= np.broadcast_to(np.asarray(route.inexact(wide, route.rounded(wide)), dtype=bool), c.shape)
            # combine() kept the reference's value where it differs from the rounded one only in specials
            ok &= c == route.rounded(wide)
            toward = np.where(w > c.astype(w.dtype), np.inf, -np.inf).astype(c.dtype)
        else:
            ok &= c != 0
            toward = np.where(c > 0, np.inf, -np.inf).astype(c.dtype)
        moved = np.nextafter(c, toward)
        ok &= np.isfinite(moved) & (np.abs(moved) >= tiny)
        if not ok.any():
            return
        moved = np.where(ok, moved, c)
    worst.add(state, moved, ref, tol, scale, args, label)


def _backward(state: Recorder, worst: _Worst, check: Check, args: dict[str, Any], ref: Any, tol: Tolerance,
              scale: np.ndarray | None, rng: np.random.Generator, label: str) -> None:
    """basis abs_inputs bounds a backward error: the reference of inputs one ulp away must pass."""
    moved = dict(args)
    changed = False
    half = None
    for p in state.sig.tensor_params:
        v = args[p.name]
        if not (isinstance(v, np.ndarray) and floating(v.dtype) and v.size):
            continue
        if p.type.dtype.is_half:
            # Half storage, float32 arithmetic: the inputs themselves are exact, the computation's
            # backward error is float32's. So the inputs move by one float32 ulp (as float32 arrays)
            # and the moved result is rounded to the half dtype, as the kernel's would be.
            half = v.dtype
            v = v.astype(np.float32)
        flat = np.array(v, copy=True)
        ok = np.isfinite(flat) & (flat != 0)
        if not ok.any():
            continue
        direction = np.where(rng.random(flat.shape) < 0.5, -np.inf, np.inf).astype(flat.dtype)
        flat = np.where(ok, np.nextafter(flat, direction), flat)
        moved[p.name] = np.where(np.isfinite(flat), flat, v)
        changed = True
    if not changed:
        return
    try:
        ref2, err = check.expected(moved)
    except Exception:  # noqa: BLE001 - a raise one ulp away is the domain's edge, checked elsewhere
        return
    if err is not None:
        return
    if half is not None:
        ref2 = np.asarray(ref2).astype(half)
    worst.add(state, ref2, ref, tol, scale, moved, label)


def _undeclared_nonfinite(state: Recorder, args: dict[str, Any], ref: Any, label: str) -> None:
    """nan (an infinity) from finite inputs, where the spec never says when the result is one."""
    if not _finite_inputs(args):
        return
    a = np.asarray(ref, dtype=np.float64)
    text = _spec_text(state.spec, state.o)
    for kind, hit, words in (("nan", np.isnan(a), ("nan",)),
                             ("an infinity", np.isinf(a), ("inf", "infinity", "infinite", "overflow", "overflows"))):
        if hit.any() and not any(re.search(rf"\b{w}\b", text) for w in words):
            name, loc = state.domain_field()
            idx = tuple(int(i) for i in np.argwhere(hit)[0]) if a.ndim else ()
            state.problem("domain", name,
                          f"the reference returns {kind} at {idx or 'the result'} on {label}, whose inputs are all "
                          "finite, and neither the semantics nor the edge cases say when the result is "
                          f"{kind}: the kernel cannot know it must return {kind} there",
                          f"narrow the domain to where the reference is finite, or say in 'semantics' when the result "
                          f"is {kind}", args, loc, element(state, args, None, idx))


def _wrong_nonfinite(state: Recorder, route: WideRoute, args: dict[str, Any], ref: Any, rounded: Any, wide: Any,
                     label: str) -> None:
    """nan or an infinity from the reference where the wider evaluation is finite (not at the overflow edge):
    a kernel that returns the right value fails there."""
    if route.name == "mpmath":
        e, w = float(ref), float(rounded)
        bad = (not math.isfinite(e)) and math.isfinite(w) and not route.near_overflow(wide)
        idx: tuple = ()
        shown = (e, w)
    else:
        e = np.asarray(ref, dtype=np.float64)
        w = np.asarray(rounded, dtype=np.float64)
        if e.shape != w.shape:
            return
        mask = ~np.isfinite(e) & np.isfinite(w) & ~np.broadcast_to(route.near_overflow(wide), e.shape)
        bad = bool(mask.any())
        if not bad:
            return
        idx = tuple(int(i) for i in np.argwhere(mask)[0])
        shown = (float(e[idx]), float(w[idx]))
    if bad:
        name, loc = state.domain_field()
        state.problem("domain", name,
                      f"the reference returns {shown[0]!r} at {idx or 'the result'} on {label}, where a wider "
                      f"evaluation gives the finite {shown[1]!r}: a kernel that returns the right value fails there",
                      "narrow the domain (drop the special values or the range that reach it), or wrap the reference "
                      "in opgen/references.py so that it is right there", args, loc, element(state, args, None, idx))


def _finite_inputs(args: dict[str, Any]) -> bool:
    for v in args.values():
        for e in (v if isinstance(v, list) else [v]):  # a list of tensors: every element
            if isinstance(e, np.ndarray) and e.dtype.kind == "f" and e.size and not np.isfinite(e).all():
                return False
        if isinstance(v, float) and not math.isfinite(v):
            return False
    return True


def _spec_text(spec: Spec, o: Overload) -> str:
    parts = [spec.summary, spec.semantics, o.notes, *spec.edge_cases, *(r.when for r in o.raises)]
    return " ".join(parts).lower()
