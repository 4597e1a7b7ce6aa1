"""numpy.fmod (C's fmod, the dividend's sign) where the gate cannot look: it is exact, so every
result must be NumPy's bit for bit, zero's sign and nan included, on every pair of edge values
(signed zeros, subnormals, infinities, huge quotients that the kernels' fast path hands to the
library fmod) and int64's two trapping cases, in broadcast, reversed and strided layouts and past
the threaded kernels' per-thread minimum. Also the difference from operator.mod that makes it
another op (ONNX Mod's fmod=1)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.registry_kernels import verified_kernels

OVERLOADS = [("numpy.fmod", o) for o in ("tensor_f32", "tensor_f64", "tensor_i64")]
TARGETS = ("cpu-cpp", "cpu-rust")
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 7.5, -7.5, 0.1, 1e-30, 1e30, -1e30, 3e38, 5e-324, 1e-310, 2.0**60,
               np.inf, -np.inf, np.nan]
INT_EDGES = np.array([-(2**63), -(2**63) + 1, -7, -2, -1, 0, 1, 2, 3, 7, 2**62, 2**63 - 1], np.int64)


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels(OVERLOADS, TARGETS)


def _edges(dtype) -> np.ndarray:
    if np.dtype(dtype).kind == "i":
        return INT_EDGES
    with np.errstate(all="ignore"):
        return np.array(FLOAT_EDGES, dtype)  # 5e-324 is 0 in float32, 3e38 inf in float16: fine


def _same_bits(got: np.ndarray, ref: np.ndarray, what: str) -> None:
    assert got.dtype == ref.dtype and got.shape == ref.shape, what
    if got.dtype.kind == "f":
        same = (got.view(f"u{got.itemsize}") == ref.view(f"u{ref.itemsize}")) | (np.isnan(got) & np.isnan(ref))
    else:
        same = got == ref
    if not same.all():
        at = tuple(np.argwhere(~same)[0])
        raise AssertionError(f"{what}: at {at} got {got[at]!r}, NumPy {ref[at]!r}")


def _fmod(a, b):
    with np.errstate(all="ignore"):
        return np.fmod(a, b)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", [o for _, o in OVERLOADS])
def test_every_pair_of_edges_is_numpys_result_bit_for_bit(kernels, overload, target):
    _, o, kernel = kernels[("numpy.fmod", overload, target)]
    dt = o.sig.returns.dtype.np
    e = _edges(dt)
    col, row = e.reshape(-1, 1), e.reshape(1, -1)
    ref = _fmod(col, row)
    _same_bits(kernel([col, row], out=np.empty(ref.shape, dt)), ref, f"{overload} edges")
    # the same pairs flattened, reversed and every other element of a longer buffer
    a, b = np.repeat(e, len(e)), np.tile(e, len(e))
    buf = np.zeros((2, a.size), dt)
    buf[0] = a
    for xa, xb in ((a, b), (a[::-1], b[::-1]), (buf[0], b)):
        _same_bits(kernel([xa, xb], out=np.empty(a.shape, dt)), _fmod(xa, xb), f"{overload} layouts")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", [o for _, o in OVERLOADS])
def test_broadcast_0d_0size_and_threaded_sizes(kernels, overload, target):
    _, o, kernel = kernels[("numpy.fmod", overload, target)]
    dt = o.sig.returns.dtype.np
    rng = np.random.default_rng(11)
    for sa, sb in [((), ()), ((0, 3), (3,)), ((5, 1, 7), (1, 6, 7)), ((300,), ()), ((2200, 500), (500,)),
                   ((1_100_000,), (1_100_000,))]:
        if dt.kind == "i":
            a = rng.integers(-10**6, 10**6, size=sa).astype(dt)
            b = rng.integers(-50, 50, size=sb).astype(dt)  # zeros included
        else:
            a = (rng.standard_normal(sa) * 100).astype(dt)
            b = rng.choice(np.array([-3.5, -1.0, -0.0, 0.0, 0.25, 2.0, np.inf], dt), size=sb)
        ref = _fmod(a, b)
        _same_bits(kernel([a, b], out=np.empty(ref.shape, dt)), ref, f"{overload} {sa} {sb}")


def test_fmod_is_not_mod_on_mixed_signs():
    # why ONNX Mod's fmod attribute picks another op, and why numpy.fmod has no torch alias
    a, b = np.array([-7.0, 7.0, -6.0]), np.array([2.0, -2.0, 3.0])
    assert list(np.fmod(a, b)) == [-1.0, 1.0, -0.0] and list(np.remainder(a, b)) == [1.0, -1.0, 0.0]
    assert np.signbit(np.fmod(a, b)[2]) and not np.signbit(np.remainder(a, b)[2])
