"""The shipped elementwise arithmetic (operator.sub, operator.truediv, numpy.maximum/minimum, the
int64 tensor overloads of operator.add/mul) where the gate cannot look: the gate compares float
tensors by value, so -0.0 passes for 0.0; here every element's bits must be NumPy's (nan aside),
on inputs full of signed zeros and ties, in every layout. And the edges of the scalar overloads:
int / int correctly rounded beyond 2**53, int64 tensors wrapping around as NumPy's do."""

from __future__ import annotations

import random

import numpy as np
import pytest

from opgen.project import PACKAGE_ROOT
from opgen.references import call_reference
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
FLOAT_TENSOR_OPS = [("numpy.maximum", "tensor_f32"), ("numpy.maximum", "tensor_f64"), ("numpy.minimum", "tensor_f32"),
                    ("numpy.minimum", "tensor_f64"), ("operator.sub", "tensor_f32"), ("operator.truediv", "tensor_f32")]
INT_TENSOR_OPS = [("operator.add", "tensor_i64"), ("operator.sub", "tensor_i64"), ("operator.mul", "tensor_i64"),
                  ("numpy.maximum", "tensor_i64"), ("numpy.minimum", "tensor_i64")]
SCALAR_OPS = [("operator.truediv", "int"), ("operator.truediv", "float"), ("operator.sub", "int")]
TARGETS = ("cpu-cpp", "cpu-rust")


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels(FLOAT_TENSOR_OPS + INT_TENSOR_OPS + SCALAR_OPS, TARGETS)


def _layouts(x: np.ndarray):
    yield x
    if x.ndim and x.size:
        yield np.ascontiguousarray(x[..., ::-1])[..., ::-1]  # reversed
        buf = np.zeros(2 * x.size, x.dtype)
        strided = buf[::2].reshape(x.shape)
        strided[...] = x
        yield strided


SHAPES = [((1,), (1,)), ((7,), (7,)), ((33,), (33,)), ((1000,), (1000,)), ((8, 65), (65,)), ((8, 65), (8, 1)),
          ((300,), ()), ((), (300,)), ((5, 1, 7), (1, 6, 7)), ((40000,), (40000,))]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,overload", FLOAT_TENSOR_OPS)
def test_float_results_are_numpys_bit_for_bit(kernels, op, overload, target):
    """Signed zeros in every position: maximum(-0.0, 0.0) is 0.0 and maximum(0.0, -0.0) is -0.0 in
    NumPy (x2's zero on a tie), 0.0 - 0.0 is 0.0, -0.0 - 0.0 is -0.0, 1 / -0.0 is -inf."""
    spec, o, kernel = kernels[(op, overload, target)]
    dt = o.sig.returns.dtype.np
    uint = np.uint64 if dt == np.float64 else np.uint32
    tiny = np.finfo(dt).smallest_subnormal
    values = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, tiny], dt)
    rng = np.random.default_rng(0)
    for shape_a, shape_b in SHAPES:
        for pool in (values[:2], values):
            a = rng.choice(pool, size=shape_a).astype(dt)
            b = rng.choice(pool, size=shape_b).astype(dt)
            for xa in _layouts(a):
                for xb in _layouts(b):
                    with np.errstate(all="ignore"):
                        ref = np.asarray(call_reference(spec.reference_for(o), [xa, xb]), dtype=dt)
                    got = kernel([xa, xb], out=np.empty(np.broadcast_shapes(a.shape, b.shape), dt))
                    same = (got.view(uint) == ref.view(uint)) | (np.isnan(got) & np.isnan(ref))
                    assert same.all(), (f"{shape_a} {shape_b}: at {np.argwhere(~same)[0]} got "
                                        f"{got[tuple(np.argwhere(~same)[0])]!r}, NumPy {ref[tuple(np.argwhere(~same)[0])]!r}")


I64_MIN, I64_MAX = -(2**63), 2**63 - 1


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,overload", INT_TENSOR_OPS)
def test_int64_tensors_wrap_around_as_numpy(kernels, op, overload, target):
    spec, o, kernel = kernels[(op, overload, target)]
    edges = np.array([I64_MIN, I64_MIN + 1, -(2**62), -3, -1, 0, 1, 2, 2**32, 2**62, I64_MAX - 1, I64_MAX], np.int64)
    a, b = np.repeat(edges, len(edges)), np.tile(edges, len(edges))
    ref = call_reference(spec.reference_for(o), [a, b])
    got = kernel([a, b], out=np.empty(a.shape, np.int64))
    assert np.array_equal(got, ref)


HARD_QUOTIENTS = [(487269041860457045, 192), (-(2**63), 2**53 + 1), (1, 2**53 + 1), (4732024912301898317, -12493717),
                  (-5951835463796671509, -59837), (8891722069446903952, -6249492450282325), (I64_MIN, -1),
                  (I64_MAX, 3), (I64_MAX, I64_MIN), (I64_MIN, I64_MIN), (0, -(2**62)), (0, -5), (2**53 + 1, 1)]


@pytest.mark.parametrize("target", TARGETS)
def test_int_true_division_is_pythons_correctly_rounded_quotient(kernels, target):
    _, _, div = kernels[("operator.truediv", "int", target)]
    rng = random.Random(1)
    cases = HARD_QUOTIENTS + [(rng.randint(I64_MIN, I64_MAX), rng.choice([1, -1]) * rng.randint(1, 2 ** rng.randint(1, 63)))
                              for _ in range(2000)]
    for a, b in cases:
        got, want = div([a, b]), a / b
        assert got == want and np.signbit(got) == np.signbit(want), (a, b, got, want)
    with pytest.raises(ZeroDivisionError):
        div([5, 0])


@pytest.mark.parametrize("target", TARGETS)
def test_float_division_by_either_zero_raises_as_python(kernels, target):
    _, _, div = kernels[("operator.truediv", "float", target)]
    for a in (1.0, -0.0, float("nan"), float("inf")):
        for zero in (0.0, -0.0):
            with pytest.raises(ZeroDivisionError):
                div([a, zero])
    assert div([1e308, 1e-10]) == float("inf") and np.signbit(div([-0.0, 5.0]))


@pytest.mark.parametrize("target", TARGETS)
def test_int_sub_overflow_raises(kernels, target):
    _, _, sub = kernels[("operator.sub", "int", target)]
    assert sub([I64_MIN, -1]) == I64_MIN + 1 and sub([-1, I64_MAX]) == I64_MIN
    for a, b in [(I64_MIN, 1), (I64_MAX, -1), (0, I64_MIN)]:
        with pytest.raises(OverflowError):
            sub([a, b])
