"""numpy.negative's int64 overload where the gate cannot look: it draws int64 values uniformly over
the whole range, so it seldom meets -2**63, whose negation wraps to itself. Every result must be
NumPy's int64 result bit for bit, on the edge values, 0-d and 0-size tensors, reversed, strided and
stride-0 layouts, lengths around the kernels' 8-lane vectors, and an output of more than 8 MiB (the
C++ kernel's non-temporal-store path)."""

from __future__ import annotations

import numpy as np
import pytest

from opgen.references import call_reference
from tests.registry_kernels import verified_kernels

OP, OVERLOAD = "numpy.negative", "i64"
TARGETS = ("cpu-cpp", "cpu-rust")
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
EDGES = np.array([I64_MIN, I64_MIN + 1, -(2**62), -(2**32), -(2**31), -3, -1, 0, 1, 3, 2**31 - 1, 2**31, 2**32,
                  2**62, I64_MAX - 1, I64_MAX], np.int64)


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([(OP, OVERLOAD)], TARGETS)


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


def _draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    pool = rng.integers(0, 2, size=n)
    v = np.where(pool == 0, rng.choice(EDGES, size=n), rng.integers(I64_MIN, I64_MAX, size=n, endpoint=True))
    return v.astype(np.int64).reshape(shape)


def _check(got: np.ndarray, ref: np.ndarray, what: str) -> None:
    assert got.dtype == ref.dtype == np.int64, (what, got.dtype, ref.dtype)
    same = got == ref
    if not same.all():
        at = tuple(np.argwhere(~same)[0])
        raise AssertionError(f"{what}: at {at} got {got[at]!r}, NumPy {ref[at]!r}")


def test_numpy_wraps_int64_min_to_itself():
    with np.errstate(all="raise"):  # no error, no warning: it wraps
        assert np.negative(np.array([I64_MIN], np.int64))[0] == I64_MIN


@pytest.mark.parametrize("target", TARGETS)
def test_negative_wraps_at_int64_min(kernels, target):
    spec, o, kernel = kernels[(OP, OVERLOAD, target)]
    ref = np.asarray(call_reference(spec.reference_for(o), [EDGES]))
    assert ref[0] == I64_MIN and ref[1] == I64_MAX and ref[-1] == I64_MIN + 1
    _check(kernel([EDGES], out=np.empty(EDGES.shape, np.int64)), ref, "edges")
    rng = np.random.default_rng(5)
    for shape in [(), (0,), (1,), (5,), (7,), (8,), (9,), (17,), (23,), (3, 812), (4, 0, 2), (2, 3, 4, 5), (1_100_001,)]:
        x = _draw(rng, shape)
        ref = np.negative(x)
        for xx in _layouts(x):
            _check(kernel([xx], out=np.empty(ref.shape, np.int64)), ref, f"{shape} {xx.strides}")
    x = _draw(rng, (1_100_001,))
    _check(kernel([x[1:]], out=np.empty(1_100_000, np.int64)), np.negative(x[1:]), "offset by one")
    bx = np.broadcast_to(_draw(rng, (40, 1)), (40, 9))  # stride 0 along the last dim
    _check(kernel([bx], out=np.empty(bx.shape, np.int64)), np.negative(bx), "stride 0")
