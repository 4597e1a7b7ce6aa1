"""The int8, int16, uint8, uint16, uint32 and uint64 tensor overloads of the integer elementwise ops
(operator.add/sub/mul, numpy.maximum/minimum, the six comparisons, operator.floordiv/mod and
numpy.clip), where the gate cannot look: it draws integer tensors uniformly over the whole range
(and uint64 ones below 2**63 only), so it meets the exact edges (min // -1, x // 0, max + 1,
0 - 1, the upper half of uint64) rarely or never. Here every result must be NumPy 2's result bit
for bit, dtype included: wrap-around on every pair of edge values, every int8/uint8 pair of the
division ops (all 65536), zero divisors, mixed signs, broadcast shapes, 0-d and 0-size tensors,
reversed and strided layouts, sizes past the threaded paths, and numpy.clip's handling of Python
int bounds outside the dtype (dropped on their own side, OverflowError on the far side). Bool
results must be exactly the bytes 0 and 1."""

from __future__ import annotations

import numpy as np
import pytest

from opgen.references import call_reference
from tests.registry_kernels import LazyKernels

SUFFIXES = ("i8", "i16", "u8", "u16", "u32", "u64")
DT = {"i8": np.int8, "i16": np.int16, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
ARITH = ("operator.add", "operator.sub", "operator.mul", "numpy.maximum", "numpy.minimum")
COMPARE = tuple(f"operator.{c}" for c in ("eq", "ne", "lt", "le", "gt", "ge"))
DIVMOD = ("operator.floordiv", "operator.mod")
BINARY = ARITH + COMPARE + DIVMOD
TARGETS = ("cpu-cpp", "cpu-rust")

BIN_CASES = [(op, s) for s in SUFFIXES for op in BINARY]


def _edges(s: str) -> np.ndarray:
    info = np.iinfo(DT[s])
    bits = info.bits
    if info.min < 0:
        v = [info.min, info.min + 1, -(2 ** (bits - 2)), -(2 ** (bits // 2)) - 1, -12, -11, -7, -3, -2, -1, 0, 1, 2, 3,
             7, 11, 12, 2 ** (bits // 2) + 1, 2 ** (bits - 2), info.max - 1, info.max]
    else:
        v = [0, 1, 2, 3, 7, 11, 16, 2 ** (bits // 2) - 1, 2 ** (bits // 2), 2 ** (bits // 2) + 1, 2 ** (bits - 1) - 1,
             2 ** (bits - 1), 2 ** (bits - 1) + 1, info.max - 2, info.max - 1, info.max]
    return np.array(sorted(set(v)), dtype=DT[s])


@pytest.fixture(scope="module")
def kernels():
    return LazyKernels()  # each entry built (or taken from the build cache) on first use


def _layouts(x: np.ndarray):
    """x as it is, reversed along every dim (negative strides), and every other element of a
    buffer twice as long (stride 2)."""
    yield x
    if x.ndim and x.size:
        yield np.ascontiguousarray(x[(slice(None, None, -1),) * x.ndim])[(slice(None, None, -1),) * x.ndim]
        buf = np.zeros(2 * x.size, x.dtype)
        strided = buf[::2].reshape(x.shape)
        strided[...] = x
        yield strided


def _draw(rng: np.random.Generator, s: str, shape: tuple[int, ...]) -> np.ndarray:
    """Edge values, full-range values (uint64's upper half included) and small ones, mixed."""
    dt = DT[s]
    info = np.iinfo(dt)
    n = int(np.prod(shape))
    pool = rng.integers(0, 3, size=n)
    full = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
    small = rng.integers(max(int(info.min), -4), 5, size=n).astype(dt)
    v = np.where(pool == 0, rng.choice(_edges(s), size=n), np.where(pool == 1, full, small))
    return v.astype(dt).reshape(shape)


def _reference(spec, o, args):
    with np.errstate(all="ignore"):
        return np.asarray(call_reference(spec.reference_for(o), args))


def _check(got: np.ndarray, ref: np.ndarray, what: str) -> None:
    assert got.dtype == ref.dtype, (what, got.dtype, ref.dtype)
    if got.dtype == bool:
        assert (got.view(np.uint8) <= 1).all(), f"{what}: a bool byte other than 0 or 1"
    same = got == ref
    if not same.all():
        at = tuple(np.argwhere(~same)[0])
        raise AssertionError(f"{what}: at {at} got {got[at]!r}, NumPy {ref[at]!r}")


def _run(kernel, args, ref):
    return kernel(list(args), out=np.empty(ref.shape, ref.dtype))


@pytest.mark.parametrize("op,s", BIN_CASES)
@pytest.mark.parametrize("target", TARGETS)
def test_every_pair_of_edges_is_numpys_result(kernels, target, op, s):
    """All pairs of edge values (max + 1, min - 1, min * -1, min // -1, x // 0, x % 0, the upper
    half of uint64): NumPy's result in the same dtype, exactly; no error. Also as a broadcast outer
    product (a column against a row) in every pair of layouts."""
    spec, o, kernel = kernels[(op, f"tensor_{s}", target)]
    e = _edges(s)
    a, b = np.repeat(e, len(e)), np.tile(e, len(e))
    ref = _reference(spec, o, [a, b])
    assert ref.dtype == o.sig.returns.dtype.np
    assert ref.dtype == (np.bool_ if op in COMPARE else DT[s])  # NumPy keeps the dtype
    _check(_run(kernel, [a, b], ref), ref, f"{op} {s} edges")
    col, row = e.reshape(-1, 1), e.reshape(1, -1)
    ref = _reference(spec, o, [col, row])
    for xa in _layouts(col):
        for xb in _layouts(row):
            _check(_run(kernel, [xa, xb], ref), ref, f"{op} {s} outer")


SHAPES = [((), ()), ((1,), (1,)), ((0,), (0,)), ((0, 3), (3,)), ((7,), (7,)), ((33,), (33,)), ((8, 65), (65,)),
          ((8, 65), (8, 1)), ((300,), ()), ((), (300,)), ((5, 1, 7), (1, 6, 7)), ((2, 3, 4, 5), (3, 1, 5))]
# Past every kernel's per-thread minimum (1 << 13 to 1 << 19 elements): the threaded paths,
# contiguous and row-broadcast.
BIG = [((1_100_000,), (1_100_000,)), ((2200, 500), (500,))]


@pytest.mark.parametrize("op,s", BIN_CASES)
@pytest.mark.parametrize("target", TARGETS)
def test_broadcasting_and_layouts(kernels, target, op, s):
    spec, o, kernel = kernels[(op, f"tensor_{s}", target)]
    rng = np.random.default_rng(7)
    for shape_a, shape_b in SHAPES:
        a, b = _draw(rng, s, shape_a), _draw(rng, s, shape_b)
        ref = _reference(spec, o, [a, b])
        for xa in _layouts(a):
            for xb in _layouts(b):
                _check(_run(kernel, [xa, xb], ref), ref, f"{op} {s} {shape_a} {shape_b}")
    for shape_a, shape_b in BIG:
        a, b = _draw(rng, s, shape_a), _draw(rng, s, shape_b)
        ref = _reference(spec, o, [a, b])
        _check(_run(kernel, [a, b], ref), ref, f"{op} {s} {shape_a} {shape_b}")
        ref = _reference(spec, o, [a[..., ::-1], b])
        _check(_run(kernel, [a[..., ::-1], b], ref), ref, f"{op} {s} {shape_a} reversed")


@pytest.mark.parametrize("s", ("i8", "u8"))
@pytest.mark.parametrize("op", DIVMOD)
@pytest.mark.parametrize("target", TARGETS)
def test_every_8_bit_pair_of_the_division_ops(kernels, target, op, s):
    """floordiv and mod on all 65536 pairs of int8 (uint8) values: floor rounding with mixed signs,
    x // 0 and x % 0 are 0, -128 // -1 wraps to -128 and -128 % -1 is 0."""
    spec, o, kernel = kernels[(op, f"tensor_{s}", target)]
    info = np.iinfo(DT[s])
    v = np.arange(int(info.min), int(info.max) + 1).astype(DT[s])
    a, b = np.repeat(v, len(v)), np.tile(v, len(v))
    ref = _reference(spec, o, [a, b])
    _check(_run(kernel, [a, b], ref), ref, f"{op} {s} all pairs")
    if s == "i8":
        assert ref[(a == -128) & (b == -1)][0] == (-128 if op == "operator.floordiv" else 0)
    assert (ref[b == 0] == 0).all()


@pytest.mark.parametrize("s", ("i16", "u16", "u32", "u64"))
@pytest.mark.parametrize("op", DIVMOD)
@pytest.mark.parametrize("target", TARGETS)
def test_the_division_ops_on_every_dividend_or_many(kernels, target, op, s):
    """16-bit dividends: every value against the edge divisors and 40 random ones (the float
    quotient of the 8/16-bit kernels must floor exactly everywhere); wider ones: a million
    random pairs, with divisors often small."""
    spec, o, kernel = kernels[(op, f"tensor_{s}", target)]
    dt = DT[s]
    info = np.iinfo(dt)
    rng = np.random.default_rng(11)
    if info.bits == 16:
        divisors = np.concatenate([_edges(s), rng.integers(info.min, info.max, size=40, endpoint=True).astype(dt)])
        col = np.arange(int(info.min), int(info.max) + 1).astype(dt).reshape(-1, 1)
        row = divisors.reshape(1, -1)
        ref = _reference(spec, o, [col, row])
        _check(_run(kernel, [col, row], ref), ref, f"{op} {s} every dividend")
    else:
        a = _draw(rng, s, (1_000_000,))
        b = np.where(rng.integers(0, 2, size=a.size) == 0, _draw(rng, s, (a.size,)),
                     rng.integers(0, 1000, size=a.size).astype(dt)).astype(dt)
        ref = _reference(spec, o, [a, b])
        _check(_run(kernel, [a, b], ref), ref, f"{op} {s} random")


# numpy.clip with Python int bounds (NumPy 2's _clip: a bound beyond the dtype on its own side is
# dropped, one beyond it on the far side raises OverflowError, whatever the array holds).
@pytest.mark.parametrize("s", SUFFIXES)
@pytest.mark.parametrize("target", TARGETS)
def test_clip_bounds_in_and_out_of_the_dtype(kernels, target, s):
    spec, o, kernel = kernels[("numpy.clip", s, target)]
    dt = DT[s]
    info = np.iinfo(dt)
    mn, mx = int(info.min), int(info.max)
    i64 = np.iinfo(np.int64)
    bounds = sorted({v for v in (mn - 1000, mn - 1, mn, mn + 1, -5, 0, 3, 100, mx - 1, mx, mx + 1, mx + 1000,
                                 int(i64.min), int(i64.max)) if i64.min <= v <= i64.max})
    rng = np.random.default_rng(5)
    x = np.concatenate([_edges(s), _draw(rng, s, (300,))])
    x = x[: len(x) // 3 * 3]  # three rows of it, for the layouts
    raised = 0
    for lo in bounds:
        for hi in bounds:
            try:
                ref = _reference(spec, o, [x, lo, hi])
            except OverflowError:
                raised += 1
                with pytest.raises(OverflowError):
                    kernel([x, lo, hi], out=np.empty(x.shape, dt))
                with pytest.raises(OverflowError):  # even on an empty array, as NumPy
                    kernel([x[:0], lo, hi], out=np.empty((0,), dt))
                continue
            assert ref.dtype == dt
            for xx in _layouts(x.reshape(3, -1)):
                _check(kernel([xx, lo, hi], out=np.empty(xx.shape, dt)), ref.reshape(3, -1), f"clip {s} [{lo}, {hi}]")
    assert raised > 0
    big = _draw(rng, s, (8, 128, 1536))
    lo, hi = int(_edges(s)[2]), min(int(_edges(s)[-3]), int(i64.max))  # the bounds are int64 parameters
    ref = _reference(spec, o, [big, lo, hi])
    _check(kernel([big, lo, hi], out=np.empty(big.shape, dt)), ref, f"clip {s} big")
    zero_d = np.array(_edges(s)[0])
    ref = _reference(spec, o, [zero_d, 1, 2])
    _check(kernel([zero_d, 1, 2], out=np.empty((), dt)), np.asarray(ref), f"clip {s} 0-d")
