"""operator.floordiv, operator.mod, numpy.where, numpy.logical_{and,or,xor,not} and operator.pow's
tensor overloads where the gate cannot look: the gate compares float tensors by value, so -0.0
passes for 0.0; here every element's bits must be NumPy's (nan aside), on inputs full of signed
zeros, zero divisors, infinities and INT64_MIN, broadcast and in strided layouts, for the admitted
C++ and Rust kernels. And the scalar overloads against Python itself: the sign of zero of a float
result, ZeroDivisionError for either zero, OverflowError for -2**63 // -1."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from opgen.project import PACKAGE_ROOT
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
TARGETS = ("cpu-cpp", "cpu-rust")
FLOAT_TENSOR = [(op, ov) for op in ("operator.floordiv", "operator.mod") for ov in ("tensor_f32", "tensor_f64")]
INT_TENSOR = [("operator.floordiv", "tensor_i64"), ("operator.mod", "tensor_i64")]
SCALAR = [(op, ov) for op in ("operator.floordiv", "operator.mod") for ov in ("int", "float")]
WHERE = [("numpy.where", ov) for ov in ("f32", "f64", "i64")]
LOGICAL = [(f"numpy.logical_{n}", "bool") for n in ("and", "or", "xor", "not")]
POW = [("operator.pow", "tensor_f32"), ("operator.pow", "tensor_f64")]
ALL = FLOAT_TENSOR + INT_TENSOR + SCALAR + WHERE + LOGICAL + POW
NUMPY = {"operator.floordiv": np.floor_divide, "operator.mod": np.remainder, "operator.pow": np.power}
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


@pytest.fixture(scope="module")
def kernels():
    return {key: kernel for key, (_, _, kernel) in verified_kernels(ALL, TARGETS).items()}


def _layouts(x: np.ndarray):
    yield x
    if x.ndim and x.size:
        yield np.ascontiguousarray(x[..., ::-1])[..., ::-1]  # reversed
        buf = np.zeros(2 * x.size, x.dtype)
        strided = buf[::2].reshape(x.shape)
        strided[...] = x
        yield strided
        if x.ndim >= 2:
            yield np.ascontiguousarray(x.T).T  # transposed


SHAPES = [((1,), (1,)), ((7,), (7,)), ((33,), (33,)), ((8, 65), (65,)), ((8, 65), (8, 1)), ((300,), ()), ((), (300,)),
          ((5, 1, 7), (1, 6, 7)), ((0, 3), (3,)), ((20000,), (20000,))]


def _same_bits(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    if got.dtype.kind != "f":
        return got == ref
    uint = np.uint64 if got.dtype == np.float64 else np.uint32
    return (got.view(uint) == ref.view(uint)) | (np.isnan(got) & np.isnan(ref))


def _check(got, ref, where):
    same = _same_bits(got, ref)
    if not same.all():
        i = tuple(np.argwhere(~same)[0])
        raise AssertionError(f"{where}: at {i} got {got[i]!r}, NumPy {ref[i]!r}")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,overload", FLOAT_TENSOR)
def test_float_floordiv_mod_are_numpys_bit_for_bit(kernels, op, overload, target):
    """Signed zeros, zero divisors, infinities and nan in every position: np.remainder(-0.0, 3.0) is
    0.0, np.floor_divide(-0.0, 3.0) is -0.0, x // 0 is +-inf, x % 0 is nan, -5 // inf is -1,
    -5 % inf is inf; plus random magnitudes where a - fmod rounds (quotients beyond 2**24)."""
    kernel = kernels[(op, overload, target)]
    dt = np.float32 if overload.endswith("f32") else np.float64
    tiny = np.finfo(dt).smallest_subnormal
    special = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, -3.0, 0.1, -0.7, np.inf, -np.inf, np.nan, tiny, -tiny,
                        1e30, -1e-30, np.finfo(dt).max], dt)
    rng = np.random.default_rng(0)
    for shape_a, shape_b in SHAPES:
        pools = [special[:2], special]
        for pool in pools:
            a = rng.choice(pool, size=shape_a).astype(dt)
            b = rng.choice(pool, size=shape_b).astype(dt)
            for xa in _layouts(a):
                for xb in _layouts(b):
                    with np.errstate(all="ignore"):
                        ref = NUMPY[op](xa, xb)
                    got = kernel([xa, xb], out=np.empty(np.broadcast_shapes(a.shape, b.shape), dt))
                    _check(got, ref, f"{shape_a} {shape_b}")
    a = (rng.standard_normal(50000) * 10.0 ** rng.integers(-6, 7, 50000)).astype(dt)
    b = (rng.standard_normal(50000) * 10.0 ** rng.integers(-6, 7, 50000)).astype(dt)
    with np.errstate(all="ignore"):
        _check(kernel([a, b], out=np.empty(a.shape, dt)), NUMPY[op](a, b), "random magnitudes")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,overload", INT_TENSOR)
def test_int64_floordiv_mod_are_numpys(kernels, op, overload, target):
    """x // 0 and x % 0 are 0, -2**63 // -1 wraps to -2**63, -2**63 % -1 is 0, negative quotients
    round down and remainders take the divisor's sign: every pair of edge values, broadcast."""
    kernel = kernels[(op, overload, target)]
    edges = np.array([I64_MIN, I64_MIN + 1, -(2**62), -7, -3, -2, -1, 0, 1, 2, 3, 7, 2**32, 2**62, I64_MAX - 1, I64_MAX],
                     np.int64)
    a, b = np.repeat(edges, len(edges)), np.tile(edges, len(edges))
    with np.errstate(all="ignore"):
        ref = NUMPY[op](a, b)
        _check(kernel([a, b], out=np.empty(a.shape, np.int64)), ref, "edges")
        col, row = edges.reshape(-1, 1), edges[::-1].copy()
        for xa in _layouts(col):
            for xb in _layouts(row):
                _check(kernel([xa, xb], out=np.empty((len(edges), len(edges)), np.int64)), NUMPY[op](xa, xb), "broadcast")
        rng = np.random.default_rng(1)
        a = rng.integers(I64_MIN, I64_MAX, 30000, endpoint=True, dtype=np.int64)
        b = rng.integers(-50, 50, 30000, dtype=np.int64)
        _check(kernel([a, b], out=np.empty(a.shape, np.int64)), NUMPY[op](a, b), "random")


INT_EDGES = [I64_MIN, I64_MIN + 1, -(2**62), -7, -3, -2, -1, 0, 1, 2, 3, 7, 2**62, I64_MAX - 1, I64_MAX]
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 5.0, -5.0, 3.0, -3.0, 0.7, 0.1, -0.1, 1e308, 1e-308, 5e-324, -5e-324,
               math.inf, -math.inf, math.nan, 1e-30, -1e-30]


def _python(op):
    return {"operator.floordiv": lambda a, b: a // b, "operator.mod": lambda a, b: a % b}[op]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["operator.floordiv", "operator.mod"])
def test_int_scalars_are_pythons(kernels, op, target):
    kernel, py = kernels[(op, "int", target)], _python(op)
    rng = random.Random(2)
    cases = [(a, b) for a in INT_EDGES for b in INT_EDGES]
    cases += [(rng.randint(I64_MIN, I64_MAX), rng.choice([1, -1]) * rng.randint(1, 2 ** rng.randint(1, 63))) for _ in range(3000)]
    for a, b in cases:
        if b == 0:
            with pytest.raises(ZeroDivisionError):
                kernel([a, b])
            continue
        want = py(a, b)
        if not I64_MIN <= want <= I64_MAX:
            assert (op, a, b) == ("operator.floordiv", I64_MIN, -1)
            with pytest.raises(OverflowError):
                kernel([a, b])
            continue
        assert kernel([a, b]) == want, (a, b)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["operator.floordiv", "operator.mod"])
def test_float_scalars_are_pythons_bit_for_bit(kernels, op, target):
    """5.0 // inf is 0.0, -5.0 // inf is -1.0, inf // 2.0 is nan, -0.0 % 3.0 is 0.0, -1e-30 % 1.0 is
    1.0; either zero divisor raises ZeroDivisionError, nan and inf dividends included."""
    kernel, py = kernels[(op, "float", target)], _python(op)
    rng = random.Random(3)
    cases = [(a, b) for a in FLOAT_EDGES for b in FLOAT_EDGES]
    cases += [(rng.uniform(-1, 1) * 10.0 ** rng.randint(-300, 300), rng.uniform(-1, 1) * 10.0 ** rng.randint(-300, 300))
              for _ in range(3000)]
    for a, b in cases:
        if b == 0.0:
            with pytest.raises(ZeroDivisionError):
                kernel([a, b])
            continue
        got, want = kernel([a, b]), py(a, b)
        assert (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(1, got) == math.copysign(1, want)), \
            (a, b, got, want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,overload", WHERE)
def test_where_copies_the_selected_element_bit_for_bit(kernels, op, overload, target):
    kernel = kernels[(op, overload, target)]
    dt = {"f32": np.float32, "f64": np.float64, "i64": np.int64}[overload]
    if dt == np.int64:
        pool = np.array([I64_MIN, -1, 0, 1, I64_MAX], dt)
    else:
        pool = np.array([0.0, -0.0, 1.0, -np.inf, np.inf, np.nan, np.finfo(dt).smallest_subnormal], dt)
    rng = np.random.default_rng(4)
    shapes = [((7,), (7,), (7,)), ((8, 65), (65,), ()), ((8, 1, 65), (8, 5, 65), (1, 65)), ((), (300,), (300,)),
              ((4, 1, 1, 33), (4, 3, 9, 33), ()), ((0, 3), (3,), (1,)), ((20000,), (20000,), (20000,)), ((2, 1), (1, 3), (1, 1))]
    for sc, sx, sy in shapes:
        for fill in (None, True, False):
            c = rng.integers(0, 2, sc).astype(bool) if fill is None else np.full(sc, fill)
            x, y = rng.choice(pool, size=sx).astype(dt), rng.choice(pool, size=sy).astype(dt)
            shape = np.broadcast_shapes(sc, sx, sy)
            for xc in _layouts(c):
                for xx in _layouts(x):
                    for xy in list(_layouts(y))[:2]:
                        _check(kernel([xc, xx, xy], out=np.empty(shape, dt)), np.where(xc, xx, xy), f"{sc} {sx} {sy}")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["numpy.logical_and", "numpy.logical_or", "numpy.logical_xor", "numpy.logical_not"])
def test_logical_ops_are_numpys_and_write_0_or_1(kernels, op, target):
    kernel = kernels[(op, "bool", target)]
    ref_fn = getattr(np, op.split(".")[1])
    rng = np.random.default_rng(5)
    for sa, sb in SHAPES + [((2, 1), (1, 2)), ((4, 16, 1, 33), (33, 33))]:
        a, b = rng.integers(0, 2, sa).astype(bool), rng.integers(0, 2, sb).astype(bool)
        for xa in _layouts(a):
            for xb in _layouts(b):
                if op == "numpy.logical_not":
                    got, ref = kernel([xa], out=np.empty(sa, bool)), ref_fn(xa)
                else:
                    got = kernel([xa, xb], out=np.empty(np.broadcast_shapes(sa, sb), bool))
                    ref = ref_fn(xa, xb)
                assert set(np.unique(got.view(np.uint8)).tolist()) <= {0, 1}
                _check(got, ref, f"{sa} {sb}")
            if op == "numpy.logical_not":
                break


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,overload", POW)
def test_pow_tensors_special_cases_exact_and_values_within_a_few_ulp(kernels, op, overload, target):
    """C99 pow's special cases as NumPy returns them, exactly (0 ** -1 is inf, (-0.0) ** -3 is -inf,
    (-8) ** (1/3) is nan, nan ** 0 and 1 ** nan are 1, (-1) ** inf is 1, -0.0 ** 3 is -0.0, overflow
    is inf); finite results within 4 ulp of NumPy."""
    kernel = kernels[(op, overload, target)]
    dt = np.float32 if overload.endswith("f32") else np.float64
    vals = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 2.5, -8.0, 1 / 3, np.inf, -np.inf, np.nan,
                     np.finfo(dt).smallest_subnormal, 1e30, -1e30, 100.0], dt)
    a, b = np.repeat(vals, len(vals)), np.tile(vals, len(vals))
    with np.errstate(all="ignore"):
        ref = np.power(a, b)
    got = kernel([a, b], out=np.empty(a.shape, dt))
    exact = ~np.isfinite(ref) | (ref == 0) | np.isin(ref, [1.0, -1.0])
    _check(got[exact], ref[exact], "special cases")
    ok = np.abs(got[~exact] - ref[~exact]) <= 4 * np.spacing(np.abs(ref[~exact]))
    assert ok.all(), (a[~exact][~ok], b[~exact][~ok], got[~exact][~ok], ref[~exact][~ok])
    rng = np.random.default_rng(6)
    x, y = rng.uniform(0, 10, (64, 300)).astype(dt), rng.uniform(-20, 20, (300,)).astype(dt)
    for xx in _layouts(x):
        for xy in _layouts(y):
            with np.errstate(all="ignore"):
                r = np.power(xx, xy)
            g = kernel([xx, xy], out=np.empty(r.shape, dt))
            finite = np.isfinite(r)
            _check(g[~finite], r[~finite], "overflowing powers")
            assert (np.abs(g[finite] - r[finite]) <= 4 * np.spacing(np.abs(r[finite]))
                    + np.finfo(dt).smallest_subnormal * 8).all()
