"""The embedding-model ops: their opgen references against independent computations (the
transformers and sentence-transformers modules the models really run, and float64 math), and
the admitted linear kernel at a model shape whose blocking paths the verifier's small shapes do
not reach."""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from opgen import references as R

RNG = np.random.default_rng(20261129)


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def test_gemma_rms_norm_matches_transformers_gemma3_rmsnorm():
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RMSNorm

    for shape, eps in [((2, 5, 768), 1e-6), ((3, 4, 256), 1e-6), ((7,), 1e-3)]:
        x, w = f32(*shape, scale=3.0), f32(shape[-1], scale=0.5)
        module = Gemma3RMSNorm(shape[-1], eps=eps)
        with torch.no_grad():
            module.weight.copy_(torch.from_numpy(w))
            expected = module(torch.from_numpy(x)).numpy()
        np.testing.assert_array_equal(R.gemma_rms_norm(x, w, eps), expected)


def test_gemma_rms_norm_scales_by_one_plus_weight():
    x = np.array([[3.0, 4.0]], np.float32)  # rms = sqrt(12.5)
    out = R.gemma_rms_norm(x, np.array([0.0, -1.0], np.float32), 0.0)
    np.testing.assert_allclose(out, [[3.0 / math.sqrt(12.5), 0.0]], rtol=1e-6)


def test_masked_mean_pool_matches_sentence_transformers_pooling():
    from sentence_transformers.sentence_transformer.modules import Pooling

    hidden = f32(3, 9, 16)
    mask = np.ones((3, 9), np.int64)
    mask[0, 5:] = 0
    mask[1, 1:] = 0
    pooling = Pooling(16, pooling_mode="mean")
    features = {"token_embeddings": torch.from_numpy(hidden), "attention_mask": torch.from_numpy(mask)}
    expected = pooling(features)["sentence_embedding"].numpy()
    np.testing.assert_allclose(R.masked_mean_pool(hidden, mask), expected, rtol=1e-6, atol=0)
    exact = (hidden.astype(np.float64) * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    np.testing.assert_allclose(R.masked_mean_pool(hidden, mask), exact, rtol=1e-5)


def test_masked_mean_pool_of_a_fully_masked_row_is_zero_and_masked_nan_still_poisons():
    hidden = f32(2, 3, 4)
    hidden[1, 2, 0] = np.nan
    out = R.masked_mean_pool(hidden, np.array([[0, 0, 0], [1, 1, 0]]))
    assert np.array_equal(out[0], np.zeros(4, np.float32))
    assert np.isnan(out[1, 0]) and np.isfinite(out[1, 1:]).all(), "nan * 0 is nan, as in sentence-transformers"


def test_layer_norm_reference_is_float64_layer_norm_rounded_once():
    x, w, b = f32(4, 384, scale=5.0) + 2.0, f32(384), f32(384)
    xd = x.astype(np.float64)
    mean = xd.mean(-1, keepdims=True)
    exact = (xd - mean) / np.sqrt(((xd - mean) ** 2).mean(-1, keepdims=True) + 1e-12) * w + b
    got = R.layer_norm(x, w, b, 1e-12)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, exact, rtol=1e-7, atol=1e-12)
    # On well-conditioned rows PyTorch's float32 evaluation agrees to a few ulps.
    torch32 = F.layer_norm(torch.from_numpy(x), (384,), torch.from_numpy(w), torch.from_numpy(b), 1e-12).numpy()
    np.testing.assert_allclose(got, torch32, rtol=1e-5, atol=1e-5)


def test_layer_norm_reference_is_exact_where_float32_torch_is_not():
    x = np.array([[-137.822, -137.7236]], np.float32)  # mean/std ~ 2800
    one, zero = np.ones(2, np.float32), np.zeros(2, np.float32)
    np.testing.assert_allclose(R.layer_norm(x, one, zero, 1e-12), [[-1.0, 1.0]], rtol=1e-7)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_reference_matches_the_transformers_activations(approximate):
    from transformers.activations import GELUActivation, GELUTanh

    x = np.concatenate([np.linspace(-8, 8, 1001), f32(200, scale=30.0)]).astype(np.float32)
    module = GELUActivation() if approximate == "none" else GELUTanh()
    np.testing.assert_array_equal(R.gelu(x, approximate), module(torch.from_numpy(x)).numpy())


def test_embedding_reference_raises_index_error_for_every_out_of_range_id():
    w = f32(5, 3)
    np.testing.assert_array_equal(R.embedding(np.array([[4, 0]]), w), w[[[4, 0]]])
    for ids, table in [([5], w), ([-1], w), ([2**63 - 1], w), ([0], np.zeros((0, 3), np.float32)),
                       ([9], np.zeros((5, 0), np.float32))]:
        with pytest.raises(IndexError):
            R.embedding(np.array(ids, np.int64), table)
    assert R.embedding(np.zeros((0,), np.int64), np.zeros((0, 3), np.float32)).shape == (0, 3)


def test_linear_numpy_baseline_is_linear():
    x, w, b = f32(6, 7), f32(5, 7), f32(5)
    expected = F.linear(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)).numpy()
    np.testing.assert_allclose(R.linear_numpy(x, w, b), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(R.linear_numpy(x, w), expected - b, rtol=1e-5, atol=1e-5)


def test_admitted_linear_at_a_minilm_shape_is_within_its_error_bound():
    """(8, 128, 1536) @ (384, 1536)^T + b: k spans several packed blocks and the rows split
    across threads, which the verifier's shapes (sides <= 48) never reach."""
    from opgen.gate.admission import build_job
    from opgen.build.cpp import build
    from opgen.verify.ffi import Kernel
    from opgen.project import PACKAGE_ROOT
    from opgen.registry import Registry
    from opgen.spec.model import load_spec

    spec = load_spec(PACKAGE_ROOT / "specs/torch/nn/functional/linear.yaml")
    overload = spec.overload("f32_bias")
    entry = Registry(PACKAGE_ROOT / "generated").get(spec.op, overload.name, "cpu-cpp")
    built = build([build_job(spec, overload, entry.file("kernel").read_text())])[0]
    assert built.ok, built.diagnostics
    kernel = Kernel(ctypes.CDLL(str(built.library)), entry.signature["c_symbol"], overload.sig)
    x, w, b = f32(8, 128, 1536), f32(384, 1536), f32(384)
    x_strided = np.ascontiguousarray(x.transpose(1, 0, 2)).transpose(1, 0, 2)  # rows not evenly spaced
    for xx in (x, x_strided):
        out = np.full((8, 128, 384), np.nan, np.float32)
        kernel([xx, w, b], out=out)
        xd, wd = xx.astype(np.float64), w.astype(np.float64)
        exact = xd @ wd.T + b
        scale = np.abs(xd) @ np.abs(wd).T + np.abs(b)
        assert (np.abs(out - exact) <= 1536 * 6e-8 * scale).all()
        assert np.abs(out - exact).max() < 1e-4 * scale.max()
