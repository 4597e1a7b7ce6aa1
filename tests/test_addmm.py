"""torch.addmm's admitted kernels (C++ and Rust, float32 and float64) where the gate's random draws
rarely look: the BLAS rules with nan and inf planted where they must be ignored (beta == 0
ignores input, alpha == 0 the product), k == 0, negative alpha and beta, and operands in the
layouts real callers pass (mat2 as a transposed weight, x @ W.T; a bias as a stride-0 view;
sliced and reversed views), against torch.addmm itself."""

from __future__ import annotations

import numpy as np
import pytest

from tests.registry_kernels import verified_kernels

torch = pytest.importorskip("torch")

OVERLOADS = [("torch.addmm", "f32"), ("torch.addmm", "f64")]
TARGETS = ("cpu-cpp", "cpu-rust")
DTYPES = {"f32": np.float32, "f64": np.float64}


@pytest.fixture(scope="module")
def kernels():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # these sizes are small; torch's pool waits long on a loaded machine
    yield verified_kernels(OVERLOADS, TARGETS)
    torch.set_num_threads(threads)


def _torch(input, mat1, mat2, beta, alpha):
    t = [torch.from_numpy(np.array(a)) for a in (input, mat1, mat2)]  # (copies: torch wants writable)
    return torch.addmm(t[0], t[1], t[2], beta=beta, alpha=alpha).numpy()


def _call(kernel, input, mat1, mat2, beta, alpha):
    out = np.full((mat1.shape[0], mat2.shape[1]), 12345.0, dtype=mat1.dtype)  # garbage to overwrite
    return kernel([input, mat1, mat2, beta, alpha], out=out)


def _check(got, want, mat1, mat2, beta, alpha):
    """Same nan/inf pattern; finite values within (k+16)*u of |want| + 2|alpha||mat1||mat2| (at least the error scale)."""
    dt = got.dtype
    u = np.finfo(dt).eps / 2
    k = mat1.shape[1]
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want)) and np.array_equal(got[np.isinf(got)], want[np.isinf(want)])
    fin = np.isfinite(want)
    with np.errstate(invalid="ignore", over="ignore"):
        prod = abs(alpha) * (np.abs(mat1.astype(np.float64)) @ np.abs(mat2.astype(np.float64))) if alpha else 0.0
    # |beta||input| <= |want| + |alpha||mat1||mat2|, so this bounds the error scale from above
    bound = (k + 16) * u * (np.abs(want.astype(np.float64)) + 2 * prod) + 1e-30
    bound = np.broadcast_to(bound, got.shape)
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(err[fin] <= bound[fin]), float(np.max(err[fin] / bound[fin]))


def _rand(rng, shape, dt):
    return rng.uniform(-2.0, 2.0, size=shape).astype(dt)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", ["f32", "f64"])
def test_beta_zero_ignores_nan_and_inf_in_input(kernels, ov, target):
    kernel = kernels[("torch.addmm", ov, target)][2]
    dt, rng = DTYPES[ov], np.random.default_rng(1)
    for m, k, n in [(3, 5, 4), (30, 70, 41), (100, 200, 67)]:
        mat1, mat2 = _rand(rng, (m, k), dt), _rand(rng, (k, n), dt)
        input = np.full((m, n), np.nan, dt)
        input[::2] = np.inf
        input[1::3, ::2] = -np.inf
        for alpha in (1.0, -0.7, 2.0):
            got = _call(kernel, input, mat1, mat2, 0.0, alpha)
            assert np.isfinite(got).all()
            _check(got, _torch(input, mat1, mat2, 0.0, alpha), mat1, mat2, 0.0, alpha)
        got = _call(kernel, input, mat1, mat2, -0.0, 1.0)  # -0.0 is zero too
        assert np.isfinite(got).all()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", ["f32", "f64"])
def test_alpha_zero_ignores_nan_and_inf_in_the_product(kernels, ov, target):
    kernel = kernels[("torch.addmm", ov, target)][2]
    dt, rng = DTYPES[ov], np.random.default_rng(2)
    for m, k, n in [(3, 5, 4), (50, 130, 70)]:
        mat1, mat2 = _rand(rng, (m, k), dt), _rand(rng, (k, n), dt)
        mat1[0, 0], mat1[-1, 1] = np.nan, np.inf
        mat2[2, -1], mat2[-1, 0] = -np.inf, np.nan
        input = _rand(rng, (m, n), dt)
        for beta in (1.0, -1.5, 0.3):
            got = _call(kernel, input, mat1, mat2, beta, 0.0)
            want = _torch(input, mat1, mat2, beta, 0.0)
            assert np.isfinite(got).all()
            np.testing.assert_allclose(got, want, rtol=2 * np.finfo(dt).eps, atol=0)
        got = _call(kernel, input, mat1, mat2, 0.0, 0.0)  # both zero: zeros, even from nan input
        input[0, 0] = np.nan
        assert np.array_equal(_call(kernel, input, mat1, mat2, 0.0, 0.0), np.zeros_like(got))
        # with alpha != 0 the planted nan and inf do propagate, as in torch
        got = _call(kernel, input, mat1, mat2, 1.0, 1.0)
        want = _torch(input, mat1, mat2, 1.0, 1.0)
        assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(got).any()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", ["f32", "f64"])
def test_k_zero_gives_beta_times_input(kernels, ov, target):
    kernel = kernels[("torch.addmm", ov, target)][2]
    dt, rng = DTYPES[ov], np.random.default_rng(3)
    m, n = 9, 37
    input = _rand(rng, (m, n), dt)
    input[0, 0], input[1, 1] = np.inf, np.nan
    mat1, mat2 = np.empty((m, 0), dt), np.empty((0, n), dt)
    for beta, alpha in [(1.0, 1.0), (-0.7, 2.0), (2.0, 0.0)]:
        got = _call(kernel, input, mat1, mat2, beta, alpha)
        np.testing.assert_array_equal(got, _torch(input, mat1, mat2, beta, alpha))
    got = _call(kernel, input, mat1, mat2, 0.0, 1.0)
    assert np.array_equal(got, np.zeros((m, n), dt))
    assert _call(kernel, np.empty((0, n), dt), np.empty((0, 4), dt), _rand(rng, (4, n), dt), 1.0, 1.0).shape == (0, n)


def _layouts(x: np.ndarray):
    """x itself, its transposed copy viewed back (a column-major view), a strided view, reversed."""
    yield "contiguous", x
    yield "transposed", np.ascontiguousarray(x.T).T
    buf = np.zeros((x.shape[0], 2 * x.shape[1] + 3), x.dtype)
    view = buf[:, 3::2]
    view[...] = x
    yield "strided", view
    yield "reversed", np.ascontiguousarray(x[::-1, ::-1])[::-1, ::-1]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", ["f32", "f64"])
def test_strided_operands_and_negative_scalars_match_torch(kernels, ov, target):
    kernel = kernels[("torch.addmm", ov, target)][2]
    dt, rng = DTYPES[ov], np.random.default_rng(4)
    for m, k, n in [(1, 1, 1), (13, 23, 33), (37, 129, 70), (70, 300, 47)]:
        a, b, c = _rand(rng, (m, k), dt), _rand(rng, (k, n), dt), _rand(rng, (m, n), dt)
        bias = _rand(rng, (n,), dt)
        inputs = dict(_layouts(c))
        inputs["row-bias"] = np.broadcast_to(bias, (m, n))  # stride 0 along rows
        inputs["column-bias"] = np.broadcast_to(bias[:1, None].repeat(m, 0), (m, n))  # stride 0 along columns
        inputs["scalar"] = np.broadcast_to(bias[:1], (m, n))
        scalars = [(1.0, 1.0), (-1.5, -0.7), (0.3, 2.0), (-1.0, 1.0)]
        for i, ((_, xa), (_, xb)) in enumerate(zip(_layouts(a), _layouts(b))):
            for j, xi in enumerate(inputs.values()):
                beta, alpha = scalars[(i + j) % len(scalars)]
                got = _call(kernel, xi, xa, xb, beta, alpha)
                _check(got, _torch(xi, xa, xb, beta, alpha), a, b, beta, alpha)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", ["f32", "f64"])
def test_x_at_w_transposed_with_a_bias_view_at_a_model_size(kernels, ov, target):
    """The linear-layer call torch.addmm(b, x, W.T): W (n, k) contiguous, mat2 = W.T, bias stride 0,
    over several threads' worth of rows and more than one KC block of depth (128 to 512)."""
    kernel = kernels[("torch.addmm", ov, target)][2]
    dt, rng = DTYPES[ov], np.random.default_rng(5)
    m, k, n = 128, 600, 200
    x, w, bias = _rand(rng, (m, k), dt), _rand(rng, (n, k), dt), _rand(rng, (n,), dt)
    input = np.broadcast_to(bias, (m, n))
    got = _call(kernel, input, x, w.T, 1.0, 1.0)
    _check(got, _torch(input, x, w.T, 1.0, 1.0), x, w.T, 1.0, 1.0)
