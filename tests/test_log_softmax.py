"""torch.nn.functional.log_softmax (f32, f64; C++ and Rust) where the gate cannot look closely:
the special slices element by element (-inf entries stay -inf, an all -inf slice, a nan or a +inf
anywhere make the whole slice nan, a slice of one is exactly 0), very negative entries that a
log(softmax(x)) would turn into -inf, rows dominated by one entry where the sum must not lose its
small terms (the accuracy is checked against a float64 / long-double evaluation, tighter than the
gate's tolerance), and every layout: negative and inner dims, transposed, reversed, strided,
offset, broadcast, 0-d and 0-size tensors, which must all give the contiguous input's result (the
same specials, and values within a few ulps: another layout may take another summation order)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.registry_kernels import verified_kernels

OP = "torch.nn.functional.log_softmax"
OVERLOADS = [("f32", np.float32), ("f64", np.float64)]
TARGETS = ("cpu-cpp", "cpu-rust")
INF, NAN = np.inf, np.nan


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([(OP, o) for o, _ in OVERLOADS], TARGETS)


def _run(kernel, x: np.ndarray, dim: int) -> np.ndarray:
    return kernel([x, dim], out=np.empty(x.shape, x.dtype))


def _torch(x: np.ndarray, dim: int) -> np.ndarray:
    return torch.nn.functional.log_softmax(torch.from_numpy(np.array(x, copy=True)), dim).numpy()


def _exact(x: np.ndarray, dim: int) -> np.ndarray:
    """log-softmax in long double (finite slices only)."""
    w = np.asarray(x, np.longdouble)
    m = w.max(axis=dim, keepdims=True)
    return (w - m) - np.log(np.exp(w - m).sum(axis=dim, keepdims=True))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload,dt", OVERLOADS)
def test_special_slices_are_torchs(kernels, overload, dt, target):
    kernel = kernels[(OP, overload, target)][2]
    for n in (1, 2, 5, 16, 17, 40):  # below, at and past the 8- and 16-lane vector widths
        rows = []
        rng = np.random.default_rng(n)
        base = rng.uniform(-5, 5, n)
        rows.append(base.copy())
        r = base.copy(); r[n // 2] = -INF; rows.append(r)          # a masked entry: -inf there only
        rows.append(np.full(n, -INF))                              # all masked: nan
        r = base.copy(); r[-1] = NAN; rows.append(r)               # nan anywhere: nan
        r = base.copy(); r[0] = INF; rows.append(r)                # +inf: nan (inf - inf)
        r = np.full(n, -INF); r[n - 1] = 3.0; rows.append(r)       # one finite entry: 0 there
        x = np.array(rows, dt)
        got, ref = _run(kernel, x, -1), _torch(x, -1)
        assert np.array_equal(np.isnan(got), np.isnan(ref)), (n, got, ref)
        assert np.array_equal(np.isneginf(got), np.isneginf(ref)), (n, got, ref)
        assert not np.isposinf(got).any()
        fin = np.isfinite(ref)
        assert np.allclose(got[fin], ref[fin], rtol=1e-6, atol=1e-6), n
        assert got[-1, n - 1] == 0.0  # (3 - 3) - log(1)
    # one element: exactly 0 (also 0-d), whatever its value; specials give nan
    for v in (-1e4, -0.0, 0.0, 7.5, 1e4):
        assert _run(kernel, np.array([v], dt), 0)[0] == 0.0
        assert _run(kernel, np.array(v, dt), -1)[()] == 0.0
    for v in (NAN, INF, -INF):
        assert np.isnan(_run(kernel, np.array([v], dt), 0)[0])
        assert np.isnan(_run(kernel, np.array(v, dt), 0)[()])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload,dt", OVERLOADS)
def test_very_negative_entries_stay_finite_and_accurate(kernels, overload, dt, target):
    """log(softmax(x)) gives -inf once softmax underflows (x - max < -104 in float32, -745 in
    float64); log_softmax is exact there: x - max - log(sum)."""
    kernel = kernels[(OP, overload, target)][2]
    eps = float(np.finfo(dt).eps) / 2
    for x in (np.array([0.0, -50.0, -120.0, -800.0, -1e4, -2e4, 1e4], dt),
              np.array([1e4, 1e4 - 1, -1e4, 9990.5], dt),      # large inputs: no overflow
              np.linspace(-3000, 0, 37).astype(dt)):
        got = _run(kernel, x, 0)
        exact = _exact(x, 0)
        assert np.isfinite(got).all(), got
        err = np.abs(got.astype(np.longdouble) - exact)
        assert (err <= 4 * eps * np.abs(exact) + 8 * eps).all(), (x, got, exact)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload,dt", OVERLOADS)
def test_dominated_rows_keep_their_small_terms(kernels, overload, dt, target):
    """One entry at 0 and n - 1 entries whose exps are each just below half an ulp of 1: a sum
    kept in one float32 accumulator drops every one of them (the max's log-probability comes out
    0 instead of about -(n - 1) * 2^-24); these kernels sum in double or in blocks, and torch
    (16 lanes) itself errs by 3e-4 at n = 100003 here. Also rows of nearly equal values (the sum
    near n), where out ~ -log(n)."""
    kernel = kernels[(OP, overload, target)][2]
    eps = float(np.finfo(dt).eps) / 2
    for n in (23, 812, 8193, 100003):
        for tail in (-16.0, -16.6, -17.0):
            x = np.full((2, n), tail, dt)
            x[0, 0] = 0.0
            x[1] = np.random.default_rng(n).normal(5.0, 1e-3, n).astype(dt)
            got = _run(kernel, x, -1)
            exact = _exact(x, -1)
            err = np.abs(got.astype(np.longdouble) - exact)
            # rounding of |out| plus a sum error far below the sequential (n - 1) * u bound
            # float32: 64 terms per float lane at most before a double sum; float64: n / 8 per lane
            bound = 4 * eps * np.abs(exact) + (1e-5 if dt == np.float32 else (n / 8 + 8) * eps)
            assert (err <= bound).all(), (n, tail, float(err.max()), got[0, 0], exact[0, 0])


def _layouts(x: np.ndarray):
    """Copies of x laid out transposed, reversed, with every dim strided, offset by one element."""
    yield "transposed", np.ascontiguousarray(x.T).T
    yield "reversed", np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    buf = np.zeros(x.shape + (2,), x.dtype)
    buf[..., 1] = x
    yield "strided", buf[..., 1]
    flat = np.zeros(x.size + 1, x.dtype)
    off = flat[1:].reshape(x.shape)
    off[...] = x
    yield "offset", off


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload,dt", OVERLOADS)
def test_every_layout_and_dim_gives_the_same_result(kernels, overload, dt, target):
    kernel = kernels[(OP, overload, target)][2]
    eps = float(np.finfo(dt).eps) / 2
    rng = np.random.default_rng(7)
    for shape in ((5,), (3, 17), (4, 1, 33), (2, 3, 5, 7), (6, 40), (3, 1000)):
        x = rng.normal(0, 4, shape).astype(dt)
        x.flat[::11] = -INF
        for dim in range(-len(shape), len(shape)):
            want = _run(kernel, np.ascontiguousarray(x), dim)
            ref = _torch(x, dim)
            fin = np.isfinite(ref)
            assert np.array_equal(np.isneginf(want), np.isneginf(ref)) and np.array_equal(np.isnan(want), np.isnan(ref))
            assert np.allclose(want[fin], ref[fin], rtol=1e-5, atol=1e-5), (shape, dim)
            for name, y in _layouts(x):
                assert np.array_equal(y, x, equal_nan=True)
                got = _run(kernel, y, dim)
                # the same specials; values within the rounding of a different summation order
                # (the C++ kernels sum side-by-side slices per column, gathered ones in 16 lanes)
                assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(np.isneginf(got), np.isneginf(want))
                ok = np.isfinite(want)
                assert (np.abs(got[ok] - want[ok]) <= 8 * eps * np.abs(want[ok]) + 128 * eps).all(), (shape, dim, name)
    # a broadcast (zero-stride) dim: every slice along it is the same constant row
    row = rng.normal(0, 2, 9).astype(dt)
    x = np.broadcast_to(row, (4, 9))
    got = _run(kernel, x, 0)
    assert np.allclose(got, -np.log(4.0), rtol=1e-6)
    assert np.array_equal(_run(kernel, x, 1), np.broadcast_to(_run(kernel, row.copy(), 0), (4, 9)))
    # 0-size tensors: nothing to write, no error
    for shape, dim in (((0,), 0), ((0, 3), 1), ((3, 0), 1), ((3, 0), 0), ((2, 0, 4), -1)):
        assert _run(kernel, np.zeros(shape, dt), dim).shape == shape
