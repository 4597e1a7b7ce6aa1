"""operator.pow on int64 and int32 tensors where the gate cannot look: its exponents are drawn
non-negative (a negative one raises for the whole call, so drawing them would leave few examples
that compute), so here: the ValueError for any negative exponent, anywhere, in any layout, with
out left unwritten; NumPy's wrap-around bit for bit on every pair of edge bases and exponents
past the width (every even base wraps to 0); 0-size calls raise nothing."""

from __future__ import annotations

import numpy as np
import pytest

from tests.registry_kernels import verified_kernels

OVERLOADS = [("operator.pow", "tensor_i64"), ("operator.pow", "tensor_i32")]
TARGETS = ("cpu-cpp", "cpu-rust")


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels(OVERLOADS, TARGETS)


def _dtype(overload: str):
    return np.int64 if overload.endswith("i64") else np.int32


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", ["tensor_i64", "tensor_i32"])
def test_every_edge_pair_is_numpys_power(kernels, overload, target):
    _, _, kernel = kernels[("operator.pow", overload, target)]
    dt = _dtype(overload)
    info = np.iinfo(dt)
    bases = np.array([info.min, info.min + 1, -3, -2, -1, 0, 1, 2, 3, 7, 46341, info.max - 1, info.max], dt)
    exps = np.array([0, 1, 2, 3, 31, 32, 33, 62, 63, 64, 65, 70, 1000, info.max], dt)
    col, row = bases.reshape(-1, 1), exps.reshape(1, -1)
    ref = col ** row
    got = kernel([col, row], out=np.empty(ref.shape, dt))
    assert got.dtype == dt and np.array_equal(got, ref), np.argwhere(got != ref)[:3]
    # reversed and strided layouts, and a broadcast 0-d exponent
    a = np.repeat(bases, len(exps))[::-1]
    b = np.tile(exps, len(bases))[::-1]
    assert np.array_equal(kernel([a, b], out=np.empty(a.shape, dt)), a ** b)
    two = np.array(2, dt)
    assert np.array_equal(kernel([bases, two], out=np.empty(bases.shape, dt)), bases ** two)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", ["tensor_i64", "tensor_i32"])
def test_a_negative_exponent_anywhere_is_a_value_error(kernels, overload, target):
    _, _, kernel = kernels[("operator.pow", overload, target)]
    dt = _dtype(overload)
    a = np.arange(1, 3001, dtype=dt).reshape(3, 1000)
    for where in (0, 1777, 2999):
        b = np.full((3, 1000), 2, dt)
        b.reshape(-1)[where] = -1
        with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
            np.power(a, b)  # NumPy's own words
        for view in (b, b.T.copy().T, b[:, ::-1][:, ::-1]):
            out = np.full(a.shape, 7, dt)
            with pytest.raises(ValueError, match="negative integer powers"):
                kernel([a, view], out=out)
    with pytest.raises(ValueError):
        kernel([a, np.array(-5, dt)], out=np.empty(a.shape, dt))  # a broadcast 0-d exponent
    empty = np.zeros((0, 4), dt)
    assert kernel([empty, np.full(4, -1, dt)], out=np.empty((0, 4), dt)).shape == (0, 4)  # nothing to raise on


@pytest.mark.parametrize("target", TARGETS)
def test_large_threaded_calls_match_numpy(kernels, target):
    rng = np.random.default_rng(4)
    for overload in ("tensor_i64", "tensor_i32"):
        _, _, kernel = kernels[("operator.pow", overload, target)]
        dt = _dtype(overload)
        a = rng.integers(-1000, 1000, size=(2200, 500)).astype(dt)
        b = rng.integers(0, 9, size=(500,)).astype(dt)
        assert np.array_equal(kernel([a, b], out=np.empty(a.shape, dt)), a ** b)
