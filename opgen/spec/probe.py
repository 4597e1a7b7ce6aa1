"""Probing a reference for a spec draft: where it is interesting, how it treats special values, what it
raises, and how far it is from a wider evaluation.

Everything here calls the reference; nothing is assumed about the op. ``opgen.spec.draft`` turns the
findings into a spec and says which of them are guesses.

* **Edges** (``edges``): the reference on a grid over the whole finite range of the dtype (3000 magnitudes
  a side, log-spaced, and 0), one argument at a time with the others at 1. The longest run of inputs whose
  result is not nan is the natural domain; where it ends at a nan boundary (log below 0, arcsin beyond 1)
  that boundary, found by bisection, is the bound. Where it reaches the end of the range, the outermost
  inputs whose result no longer changes (tanh saturated at 1, exp overflowed to inf or underflowed to 0,
  silu flushed to -0.0) mark an edge, again found by bisection; the bound goes just past it (x 1.1, up to
  a round number; to the default bound past a saturation, where naive formulas overflow), so the draws reach the edge and a little beyond. A side that keeps changing to the end
  of the range gets ``DEFAULT_BOUND`` (unbounded draws are huge: see docs/writing-specs.md).
* **Special values** (``specials``): nan, +-inf, -0.0 and a subnormal, each alone and inside a longer array
  (a vectorised path can differ from the scalar one: PyTorch's GELU gives inf for +inf in one and nan in
  the other) and in the wider evaluation. A special value on which these disagree is left out.
* **Errors** (``errors``): empty and 0-d tensors, specials, the dtype's extremes; a raise of a built-in
  error the gate knows becomes a ``raises`` entry, any other error a note.
* **Measurement** (``measure``): the reference against ``opgen.spec.wide``'s evaluation on the gate's own
  draws and scale cases and on a dense sample of the domain and its edges; the tolerance is the measured
  error plus ``KERNEL_ULPS`` for the kernel, times ``SAFETY``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from opgen.errors import OpgenError
from opgen.references import call_reference
from opgen.spec.dtypes import DTYPES, numpy_dtype
from opgen.spec.introspect import Introspected, Loop, signature_of
from opgen.spec.lint import draw_examples
from opgen.spec.model import Overload, Spec
from opgen.spec.wide import Unavailable, combine, route_for
from opgen.verify.scale import Budget, scale_cases
from opgen.verify.strategies import special_value

DEFAULT_BOUND = 1e4  # a side that keeps changing to the end of the range (the shipped activations' bound)
GRID_PER_SIDE = 3000
PAST_EDGE = 1.1  # how far past an overflow or underflow edge the bound goes
# Past a saturation edge (tanh, sigmoid, erf) the bound goes to DEFAULT_BOUND, as the shipped
# activations' do: a kernel that computes tanh from exp(2x) is right up to the edge and nan from
# x ~ 44.4 (float32) or ~354.9 (float64) on, where exp overflows; draws that stop just past the
# edge would admit it.
NICE = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
SPECIALS = ("nan", "inf", "-inf", "-0", "subnormal")
VECTOR_LENGTH = 64  # where a special value sits inside a longer array: a vectorised path
KERNEL_ULPS = 2.0  # what a correct kernel may add to the reference's own error, in ulps of the result
SAFETY = 1.25  # the tolerance over the measured need
# Relative errors above this many eps on normal results are not rounding but flushing or underflow of the
# reference (silu's -0.0 below -88.7): atol covers them, not rtol.
RTOL_CAP_EPS = 64.0
# atol floors, a few subnormal ulps (the shipped specs' 1e-44 and 1e-320): results deep in the subnormal
# range carry few bits in any implementation.
ATOL_FLOOR = {"float16": 1.0e-7, "float32": 1.0e-44, "float64": 1.0e-320}
DENSE_POINTS = 40_000  # uniform and log-uniform points each, over the domain
EDGE_POINTS = 2_000  # points around each edge
MEASURE_EXAMPLES = 200
MEASURE_SEED = 0xD2AF7
MEASURE_BUDGET = Budget(max_work=1 << 26, max_bytes=4 << 20, max_cases=16)


def nice_up(v: float) -> float:
    """The smallest 1-1.2-1.5-2-2.5-3-4-5-6-8 x 10^k number at or above ``v`` (> 0)."""
    k = math.floor(math.log10(v))
    for base in (10.0 ** k, 10.0 ** (k + 1)):
        for m in NICE:
            if m * base >= v * (1 - 1e-12):
                return float(f"{m * base:.6g}")
    return v


def call(intro: Introspected, loop: Loop, values: dict[str, Any]) -> np.ndarray:
    """The reference on these values (tensors by name; scalars at their defaults, an axis at -1)."""
    args = []
    for p in intro.params:
        if p.kind == "tensor":
            args.append(values[p.name])
        elif p.kind == "axis":
            args.append(values.get(p.name, -1))
        else:
            args.append(values.get(p.name, p.default))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(call_reference(intro.reference, args))


def _one_at_a_time(intro: Introspected, loop: Loop, name: str, x: np.ndarray, typical: float = 1.0) -> np.ndarray:
    values = {}
    for p, dt in zip(intro.tensors, loop.inputs):
        values[p.name] = x if p.name == name else np.full(x.shape, typical, dtype=dt)
    return call(intro, loop, values)


# ------------------------------------------------------------------------------------------ edges


@dataclass
class Side:
    bound: float
    kind: str  # nan | overflow | underflow | saturation | open | capped | constant
    edge: float | None = None  # the input where the behaviour changes
    value: Any = None  # the result beyond the edge (the saturated value, inf, 0)
    inside: float | None = None  # the result at the edge (an underflow that jumps from a normal value flushes)


@dataclass
class Edges:
    lo: Side
    hi: Side

    @property
    def points(self) -> list[float]:
        return [s.edge for s in (self.lo, self.hi) if s.edge is not None]

    def flush(self, dt: np.dtype) -> tuple[float, float | None]:
        """The largest result from which the reference jumps straight to 0 (a normal value: a gradual
        underflow would pass through the subnormals), and the input where it does."""
        worst, at = 0.0, None
        for s in (self.lo, self.hi):
            if s.kind == "underflow" and s.inside is not None and abs(s.inside) >= float(np.finfo(dt).smallest_normal):
                if abs(s.inside) > worst:
                    worst, at = abs(s.inside), s.edge
        return worst, at


def _grid(dt: np.dtype) -> np.ndarray:
    info = np.finfo(dt)
    mags = np.unique(np.logspace(math.log10(float(info.smallest_normal)), math.log10(float(info.max)) - 1e-3,
                                 GRID_PER_SIDE).astype(dt))
    return np.concatenate([-mags[::-1], np.zeros(1, dtype=dt), mags])


def _same(a: Any, b: Any) -> bool:
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or a == b


def _bisect(f: Any, a: float, b: float, dt: np.dtype, pred: Any) -> float:
    """Adjacent-float bisection: the last x from a towards b with pred(f(x)) true (pred(f(a)) is true,
    pred(f(b)) false)."""
    a_, b_ = dt.type(a), dt.type(b)
    for _ in range(200):
        if np.nextafter(a_, b_) == b_:
            break
        mid = dt.type((float(a_) + float(b_)) / 2)
        if mid in (a_, b_):
            break
        if pred(f(mid)):
            a_ = mid
        else:
            b_ = mid
    return float(a_)


def edges(intro: Introspected, loop: Loop, name: str) -> tuple[Edges, float]:
    """The natural domain and the edges of one float argument (see the module docstring), and the value
    the other arguments were held at (1, or 2 where the result does not change with this one at 1:
    power(1, x) is 1 for every x)."""
    dt = numpy_dtype(dict(zip([p.name for p in intro.tensors], loop.inputs))[name])
    grid = _grid(dt)
    for typical in (1.0, 2.0) if len(intro.tensors) > 1 else (1.0,):
        y = _one_at_a_time(intro, loop, name, grid, typical).astype(np.float64).reshape(-1)
        finite = y[~np.isnan(y)]
        if finite.size and not np.all(finite == finite[0]):
            break
    else:
        return Edges(Side(-DEFAULT_BOUND, "constant"), Side(DEFAULT_BOUND, "constant")), typical

    def f(x: Any) -> float:
        return float(_one_at_a_time(intro, loop, name, np.array([x], dtype=dt), typical).reshape(-1)[0])

    ok = ~np.isnan(y)
    if not ok.any():
        raise OpgenError(f"{intro.reference} returns nan for every finite {name} (others at 1)",
                         hint="write the spec by hand (docs/writing-specs.md)")
    # The longest run of non-nan results.
    best, start = (0, -1), None
    for i, good in enumerate(np.append(ok, False)):
        if good and start is None:
            start = i
        elif not good and start is not None:
            if i - start > best[1] - best[0] + 1 or best[1] < 0:
                best = (start, i - 1)
            start = None
    i0, i1 = best
    return Edges(_side(f, grid, y, i0, -1, dt), _side(f, grid, y, i1, +1, dt)), typical


def _side(f: Any, grid: np.ndarray, y: np.ndarray, end: int, step: int, dt: np.dtype) -> Side:
    n = len(grid)
    sign = -1.0 if step < 0 else 1.0
    outer = end + step
    if 0 <= outer < n:  # a nan boundary inside the range
        x = _bisect(f, float(grid[end]), float(grid[outer]), dt, lambda v: not math.isnan(v))
        if abs(x) < float(np.finfo(dt).smallest_normal):
            x = 0.0
        return Side(x, "nan", x, float("nan"))
    tail = y[end]
    j = end
    while 0 <= j - step < n and _same(y[j - step], tail):
        j -= step
    if j == end:  # still changing at the end of the range
        return Side(sign * DEFAULT_BOUND, "open")
    if not 0 <= j - step < n:  # the same result all along the run
        return Side(sign * DEFAULT_BOUND, "constant")
    x = _bisect(f, float(grid[j - step]), float(grid[j]), dt, lambda v: not _same(v, tail))
    kind = "overflow" if math.isinf(tail) else "underflow" if tail == 0 else "saturation"
    if kind == "saturation":
        return Side(sign * DEFAULT_BOUND, kind, x, tail, f(x))
    if abs(x) * PAST_EDGE > DEFAULT_BOUND:
        return Side(sign * DEFAULT_BOUND, "capped", x, tail, f(x))
    bound = nice_up(abs(x) * PAST_EDGE) if x != 0 else 1.0
    return Side(sign * bound, kind, x, tail, f(x))


# ------------------------------------------------------------------------------------- special values


@dataclass
class Specials:
    kept: list[str] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)  # special -> what the reference gives
    left_out: list[str] = field(default_factory=list)  # why each left-out one was


def specials(intro: Introspected, loop: Loop, name: str, typical: float, elementwise: bool = True) -> Specials:
    """Which special values to plant; ``elementwise`` False (an op along an axis): the scalar and vectorised
    paths are not compared, an element's result depends on its neighbours."""
    dt = numpy_dtype(dict(zip([p.name for p in intro.tensors], loop.inputs))[name])
    found = Specials()
    spec_like = Spec.model_validate(_probe_spec(intro, loop))
    o = spec_like.overloads[0]
    route = route_for(spec_like, o)
    for s in SPECIALS:
        v = special_value(s, DTYPES[dt.name])
        alone = _one_at_a_time(intro, loop, name, np.array([v], dtype=dt), typical).reshape(-1)[0]
        long = np.full(VECTOR_LENGTH, typical, dtype=dt)
        long[VECTOR_LENGTH // 3] = v
        inside = _one_at_a_time(intro, loop, name, long, typical).reshape(-1)[VECTOR_LENGTH // 3]
        shown = _show(alone if elementwise else inside)
        if elementwise and not _same(alone, inside):
            found.left_out.append(f"{s}: the reference gives {shown} for it alone but {_show(inside)} inside a "
                                  f"{VECTOR_LENGTH}-element array (a vectorised path): no kernel can match both")
            continue
        if route.available and elementwise and np.isnan(float(alone)):
            args = {p.name: (np.array([v], dtype=d) if p.name == name else np.full(1, typical, dtype=d))
                    for p, d in zip(intro.tensors, loop.inputs)}
            args.update({p.name: (-1 if p.kind == "axis" else p.default) for p in intro.params if p.kind != "tensor"})
            try:
                wide = route.evaluate(o, args)
                better = np.asarray(route.rounded(wide)).reshape(-1)[0]
                if not np.isnan(float(better)):
                    found.left_out.append(f"{s}: the reference gives nan where a wider evaluation gives "
                                          f"{_show(better)}: a right kernel would fail there")
                    continue
            except Unavailable:
                pass
        found.kept.append(s)
        found.results[s] = shown
    return found


def _show(v: Any) -> str:
    x = float(v)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return f"{x:.9g}"


def _probe_spec(intro: Introspected, loop: Loop) -> dict[str, Any]:
    """A minimal spec of one loop, for the wider route (it needs only the signature and the reference)."""
    return {"op": "opgen.probe.draft", "summary": "probe", "reference": intro.reference,
            "overloads": [{"name": "probe", "signature": signature_of(intro, loop),
                           "shape": {"same_as": intro.tensors[0].name} if intro.shape == "same_as" else "elementwise"}]}


# ------------------------------------------------------------------------------------------ errors


@dataclass
class Errors:
    raises: list[tuple[str, str]] = field(default_factory=list)  # (error, when)
    notes: list[str] = field(default_factory=list)


GATE_ERRORS = ("OverflowError", "ZeroDivisionError", "ValueError", "IndexError")


def errors(intro: Introspected, loop: Loop) -> Errors:
    """What the reference raises on the edges: empty and 0-d tensors, specials, extremes, zero."""
    found = Errors()
    seen: set[str] = set()
    probes: list[tuple[str, dict[str, Any]]] = []
    dts = dict(zip([p.name for p in intro.tensors], loop.inputs))
    ones = {n: np.ones(3, dtype=d) for n, d in dts.items()}
    probes.append(("empty tensors", {n: np.ones(0, dtype=d) for n, d in dts.items()}))
    probes.append(("0-d tensors", {n: np.ones((), dtype=d) for n, d in dts.items()}))
    for n, d in dts.items():
        dt = numpy_dtype(d)
        if dt.kind == "f":
            info = np.finfo(dt)
            values = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, float(info.max), -float(info.max)]
        else:
            info = np.iinfo(dt)
            values = [0, 1, -1, int(info.min), int(info.max)]
        for v in values:
            probes.append((f"{n} = {v!r}", {**ones, n: np.full(3, v, dtype=dt)}))
    for what, values in probes:
        try:
            call(intro, loop, values)
        except Exception as exc:  # noqa: BLE001 - what the reference raises is what is being probed
            kind = type(exc).__name__
            message = str(exc).splitlines()[0][:120] if str(exc) else ""
            if kind in seen:
                continue
            seen.add(kind)
            if kind in GATE_ERRORS:
                found.raises.append((kind, f"as the reference raises it (probed: {what}; \"{message}\")"))
            else:
                found.notes.append(f"the reference raises {kind} on {what} ({message}), an error the gate cannot "
                                   "declare: narrow the domain to exclude it, or wrap the reference in "
                                   "opgen/references.py so that it raises ValueError")
    return found


# ------------------------------------------------------------------------------------- measurement


@dataclass
class Measured:
    dtype: str
    points: int = 0  # elements compared
    rel_eps: float = 0.0  # worst relative error on normal results, in eps
    rel_at: str = ""
    abs_err: float = 0.0  # worst absolute error the relative part does not cover
    abs_at: str = ""
    rtol: float = 0.0
    atol: float = 0.0
    route: str = ""
    measured: bool = True  # False: no wider evaluation, the tolerance is a guess


def measure(spec: Spec, overload: Overload, dense: dict[str, np.ndarray],
            flush: tuple[float, float | None] = (0.0, None)) -> Measured:
    """The reference of one float overload against its wider evaluation (``opgen.spec.wide``) on the gate's
    draws and scale cases and on ``dense`` (one array per tensor argument, the same shape), and the
    tolerance that follows: rtol from normal results, atol from the rest. ``flush``: the largest result
    the edge search saw the reference flush to 0 from (``Edges.flush``), which atol must cover even where
    nothing wider can be evaluated."""
    r = overload.sig.returns
    dt = r.dtype
    eps = dt.eps
    m = Measured(dt.name)
    route = route_for(spec, overload)
    m.route = route.why
    floor = ATOL_FLOOR.get(dt.name, 0.0)
    if not route.available:
        m.measured = False
        m.rel_eps = 1.0
        m.rtol = _round_up((m.rel_eps + KERNEL_ULPS) * eps * SAFETY)
        m.atol = floor
        if flush[0] > floor:
            m.abs_err, m.abs_at = flush[0], _flush_at(flush[1])
            m.atol = _round_up(flush[0] * SAFETY * 2)
        return m
    inputs: list[dict[str, Any]] = [dense]
    inputs += draw_examples(overload, MEASURE_EXAMPLES, MEASURE_SEED)
    inputs += [c.args for c in scale_cases(spec, overload, MEASURE_SEED, MEASURE_BUDGET)]
    rel: list[tuple[float, str]] = []
    pairs: list[tuple[np.ndarray, np.ndarray, dict[str, Any]]] = []
    tiny = float(np.finfo(dt.np).smallest_normal)
    for args in inputs:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = np.asarray(call_reference(spec.reference_for(overload),
                                                [args[p.name] for p in overload.sig.params]), dtype=dt.np)
                wide = route.evaluate(overload, args)
        except (Unavailable, ValueError, OverflowError, ZeroDivisionError, IndexError):
            continue
        exact = np.asarray(wide, dtype=np.longdouble)
        cand = combine(route, ref, route.rounded(wide, ref))
        both = np.isfinite(ref) & np.isfinite(exact) & (np.asarray(cand) == np.asarray(route.rounded(wide, ref)))
        if not both.any():
            continue
        e = ref.astype(np.longdouble)[both]
        x = exact[both]
        err = np.abs(e - x).astype(np.float64)
        with np.errstate(all="ignore"):
            relerr = np.where(np.abs(x) >= tiny, err / np.abs(x).astype(np.float64), np.inf)
        normal = np.isfinite(relerr) & (relerr <= RTOL_CAP_EPS * eps)
        m.points += int(both.sum())
        if normal.any():
            k = int(np.argmax(np.where(normal, relerr, -1)))
            rel.append((float(relerr[k]) / eps, _where(args, both, k)))
        pairs.append((err, np.abs(x).astype(np.float64), {"args": args, "both": both, "normal": normal}))
    if rel:
        m.rel_eps, m.rel_at = max(rel, key=lambda t: t[0])
    m.rtol = _round_up((m.rel_eps + KERNEL_ULPS) * eps * SAFETY)
    worst, at = 0.0, ""
    for err, mag, info in pairs:
        need = err - m.rtol * mag  # what atol must cover once rtol has done its part
        if need.size and float(need.max()) > worst:
            k = int(np.argmax(need))
            worst, at = float(need[k]), "at " + _where(info["args"], info["both"], k)
    if flush[0] > worst:
        worst, at = flush[0], _flush_at(flush[1])
    m.abs_err, m.abs_at = worst, at
    m.atol = max(floor, _round_up(worst * SAFETY * 2)) if worst > floor / 2 else floor
    return m


def _flush_at(x: float | None) -> str:
    return f"where the reference flushes to 0, at {x:.9g}" if x is not None else "where the reference flushes to 0"


def _where(args: dict[str, Any], both: np.ndarray, k: int) -> str:
    """The inputs at the k-th compared element (elementwise overloads), for the why text."""
    flat = np.flatnonzero(both.reshape(-1))
    if k >= flat.size:
        return ""
    i = int(flat[k])
    parts = []
    for name, v in args.items():
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            b = np.broadcast_to(v, both.shape).reshape(-1)
            if i < b.size:
                parts.append(f"{name} = {float(b[i]):.9g}")
    return ", ".join(parts)


def _round_up(v: float) -> float:
    """Up to two significant digits."""
    if v <= 0:
        return 0.0
    k = math.floor(math.log10(v)) - 1
    return float(f"{math.ceil(v / 10.0 ** k - 1e-9) * 10.0 ** k:.2g}")
