"""The int32 tensor overloads of the elementwise integer ops (operator.add/sub/mul, numpy.maximum/
minimum, the six comparisons, numpy.where, numpy.negative/abs), where the gate cannot look: it
draws int32 values uniformly over the whole range, so it almost never meets the exact edges
(-2**31 + -1, -2**31 * -1, abs(-2**31), -(-2**31)) or equal pairs at the ends of int32. Here
every result must be NumPy's int32 result bit for bit (wrapping exactly as NumPy's int32 does),
on all pairs of edge values, broadcast shapes, 0-d and 0-size tensors, reversed and strided
layouts, and sizes large enough for the threaded and streaming paths. Bool results must be
exactly the bytes 0 and 1."""

from __future__ import annotations

import numpy as np
import pytest

from opgen.references import call_reference
from tests.registry_kernels import verified_kernels

ARITH = [("operator.add", "tensor_i32"), ("operator.sub", "tensor_i32"), ("operator.mul", "tensor_i32"),
         ("numpy.maximum", "tensor_i32"), ("numpy.minimum", "tensor_i32")]
COMPARE = [(f"operator.{c}", "tensor_i32") for c in ("eq", "ne", "lt", "le", "gt", "ge")]
WHERE = [("numpy.where", "i32")]
UNARY = [("numpy.negative", "i32"), ("numpy.abs", "i32")]
TARGETS = ("cpu-cpp", "cpu-rust")

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
EDGES = np.array([I32_MIN, I32_MIN + 1, -(2**30), -65536, -3, -2, -1, 0, 1, 2, 3, 46341, 65536, 2**30,
                  I32_MAX - 1, I32_MAX], np.int32)


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels(ARITH + COMPARE + WHERE + UNARY, TARGETS)


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


SHAPES = [((), ()), ((1,), (1,)), ((0,), (0,)), ((0, 3), (3,)), ((7,), (7,)), ((33,), (33,)), ((8, 65), (65,)),
          ((8, 65), (8, 1)), ((300,), ()), ((), (300,)), ((5, 1, 7), (1, 6, 7)), ((2, 3, 4, 5), (3, 1, 5))]
# Past every kernel's per-thread minimum (C++ 1 << 15 to 1 << 19 elements, Rust 1 << 17 to 1 << 19):
# the threaded paths, contiguous and row-broadcast.
BIG = [((1_100_000,), (1_100_000,)), ((2200, 500), (500,))]


def _draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Edge values, full-range values and small ones (for equal pairs), mixed."""
    n = int(np.prod(shape))
    pool = rng.integers(0, 3, size=n)
    v = np.where(pool == 0, rng.choice(EDGES, size=n),
                 np.where(pool == 1, rng.integers(I32_MIN, I32_MAX, size=n, endpoint=True), rng.integers(-4, 5, size=n)))
    return v.astype(np.int32).reshape(shape)


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


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,overload", ARITH + COMPARE)
def test_every_pair_of_edges_is_numpys_int32_result(kernels, op, overload, target):
    """All 256 pairs of edge values (2**31-1 + 1, -2**31 - 1, -2**31 * -1, 46341**2 ...): NumPy's
    int32 wrap-around, exactly; no error."""
    spec, o, kernel = kernels[(op, overload, target)]
    a, b = np.repeat(EDGES, len(EDGES)), np.tile(EDGES, len(EDGES))
    ref = _reference(spec, o, [a, b])
    assert ref.dtype == o.sig.returns.dtype.np
    got = kernel([a, b], out=np.empty(a.shape, ref.dtype))
    _check(got, ref, f"{op} edges")
    # the same pairs as a broadcast outer product: a column against a row
    col, row = EDGES.reshape(-1, 1), EDGES.reshape(1, -1)
    ref = _reference(spec, o, [col, row])
    for xa in _layouts(col):
        for xb in _layouts(row):
            _check(kernel([xa, xb], out=np.empty(ref.shape, ref.dtype)), ref, f"{op} outer")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,overload", ARITH + COMPARE)
def test_broadcasting_and_layouts(kernels, op, overload, target):
    spec, o, kernel = kernels[(op, overload, target)]
    rng = np.random.default_rng(7)
    for shape_a, shape_b in SHAPES:
        a, b = _draw(rng, shape_a), _draw(rng, shape_b)
        ref = _reference(spec, o, [a, b])
        for xa in _layouts(a):
            for xb in _layouts(b):
                got = kernel([xa, xb], out=np.empty(ref.shape, ref.dtype))
                _check(got, ref, f"{op} {shape_a} {shape_b}")
    for shape_a, shape_b in BIG:
        a, b = _draw(rng, shape_a), _draw(rng, shape_b)
        ref = _reference(spec, o, [a, b])
        _check(kernel([a, b], out=np.empty(ref.shape, ref.dtype)), ref, f"{op} {shape_a} {shape_b}")
        _check(kernel([a[..., ::-1], b], out=np.empty(ref.shape, ref.dtype)),
               _reference(spec, o, [a[..., ::-1], b]), f"{op} {shape_a} reversed")


@pytest.mark.parametrize("target", TARGETS)
def test_where_copies_int32_values(kernels, target):
    spec, o, kernel = kernels[("numpy.where", "i32", target)]
    rng = np.random.default_rng(3)
    shapes = [((), (), ()), ((7,), (7,), (7,)), ((0, 4), (4,), ()), ((8, 1, 1, 13), (8, 3, 5, 13), ()),
              ((13,), (4, 13), (4, 1)), ((40,), (), (40,)), ((1_100_000,), (1_100_000,), (1_100_000,)),
              ((1, 1, 128), (8, 12, 128), ())]
    for sc, sx, sy in shapes:
        c = rng.integers(0, 2, size=sc).astype(bool)
        x, y = _draw(rng, sx), _draw(rng, sy)
        ref = _reference(spec, o, [c, x, y])
        big = ref.size > 100_000
        for xc in _layouts(c) if not big else [c]:
            for xx in _layouts(x) if not big else [x]:
                for xy in _layouts(y) if not big else [y]:
                    got = kernel([xc, xx, xy], out=np.empty(ref.shape, np.int32))
                    _check(got, ref, f"where {sc} {sx} {sy}")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,overload", UNARY)
def test_negative_and_abs_wrap_at_int32_min(kernels, op, overload, target):
    """negative(-2**31) and abs(-2**31) are -2**31 in NumPy's int32 (they wrap); every layout, 0-d,
    0-size, and an output of more than 8 MiB (the C++ kernel's non-temporal-store path)."""
    spec, o, kernel = kernels[(op, overload, target)]
    ref = _reference(spec, o, [EDGES])
    assert ref[0] == I32_MIN
    _check(kernel([EDGES], out=np.empty(EDGES.shape, np.int32)), ref, f"{op} edges")
    rng = np.random.default_rng(5)
    for shape in [(), (0,), (1,), (5,), (16,), (17,), (23,), (3, 812), (4, 0, 2), (2, 3, 4, 5), (2_200_001,)]:
        x = _draw(rng, shape)
        ref = _reference(spec, o, [x])
        for xx in _layouts(x):
            _check(kernel([xx], out=np.empty(ref.shape, np.int32)), ref, f"{op} {shape}")
    x = _draw(rng, (2_200_001,))
    _check(kernel([x[1:]], out=np.empty(2_200_000, np.int32)), _reference(spec, o, [x[1:]]), f"{op} offset by one")
    col = _draw(rng, (40, 1))
    bx = np.broadcast_to(col, (40, 9))  # stride 0 along the last dim
    _check(kernel([bx], out=np.empty(bx.shape, np.int32)), _reference(spec, o, [bx]), f"{op} stride 0")
