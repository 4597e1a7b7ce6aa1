"""opgen.nn.attention (general attention: bias, offset-aligned causal mask, asymmetric window,
soft-cap, grouped-query heads) where the gate cannot look: its reference against ONNX's own
reference implementation of Attention (onnx.reference.ops.op_attention._compute_attention), which
the spec's semantics claim to follow, in float64; and the admitted C++ and Rust kernels against the
reference in the layouts a caller passes (the (B, S, H, D) projection viewed as (B, H, S, D), a
(S, T) mask broadcast with stride 0), on causal decode steps, negative offsets and -inf rows."""

from __future__ import annotations

import numpy as np
import pytest

from opgen.attention_references import attention, torch_attention

onnx_attention = pytest.importorskip("onnx.reference.ops.op_attention")

TARGETS = ("cpu-cpp", "cpu-rust")


def _case(rng, b, hq, hkv, s, t, d, dv, dtype=np.float64, mask_rows=False):
    q = rng.standard_normal((b, hq, s, d)).astype(dtype)
    k = rng.standard_normal((b, hkv, t, d)).astype(dtype)
    v = rng.standard_normal((b, hkv, t, dv)).astype(dtype)
    bias = rng.uniform(-3, 3, (b, hq, s, t)).astype(dtype)
    bias[rng.random(bias.shape) < 0.2] = -np.inf
    if mask_rows:
        bias[:, :, ::3, :] = -np.inf  # every third query sees no key at all
    return q, k, v, bias


# (batch, Hq, Hkv, S new queries, past keys, new keys, D, Dv, is_causal, left, right, softcap, mask rows)
ONNX_CASES = [
    (2, 4, 2, 5, 0, 5, 8, 8, True, -1, -1, 0.0, False),     # causal prefill, GQA
    (1, 6, 3, 3, 7, 3, 4, 6, True, -1, -1, 0.0, False),     # causal decode with a cache: offset 7
    (2, 2, 2, 4, 5, 4, 8, 8, False, 2, 1, 0.0, False),      # asymmetric window, offset 5, not causal
    (1, 4, 1, 6, 0, 9, 8, 5, True, 1, 3, 0.0, False),       # causal and a window, S != T
    (2, 2, 1, 5, 3, 5, 16, 8, True, -1, -1, 2.5, False),    # soft-capping with a cache
    (1, 3, 3, 6, 0, 6, 8, 8, False, -1, -1, 10.0, True),    # soft-cap, rows all -inf in the bias
    (1, 2, 2, 4, 2, 4, 8, 8, True, 0, 0, 0.0, True),        # windows 0: the own position only
]


@pytest.mark.parametrize("case", ONNX_CASES)
def test_reference_is_onnxs_attention(case):
    b, hq, hkv, s, past, new, d, dv, causal, left, right, cap, rows = case
    rng = np.random.default_rng(hash(case) % 2**32)
    q, k, v, bias = _case(rng, b, hq, hkv, s, past + new, d, dv, mask_rows=rows)
    scale = 0.3
    kwargs = dict(scale=scale, is_causal=int(causal), softcap=cap if cap > 0 else None,
                  left_window_size=left, right_window_size=right)
    if past:
        kwargs.update(past_key=k[:, :, :past], past_value=v[:, :, :past])
    want = onnx_attention._compute_attention(q, k[:, :, past:], v[:, :, past:], attn_mask=bias, **kwargs)[0]
    got = attention(q, k, v, bias, causal, past, left, right, cap, scale)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if rows:  # the fully masked rows are zeros, not nan
        assert not np.isnan(got).any() and (got[:, :, ::3] == 0).all()


def test_reference_raises_on_heads_that_do_not_divide():
    q, k, v, bias = _case(np.random.default_rng(0), 1, 3, 2, 2, 2, 4, 4)
    with pytest.raises(ValueError):
        attention(q, k, v, bias, False, 0, -1, -1, 0.0, 1.0)
    with pytest.raises(ValueError):
        attention(q, k[:, :0], v[:, :0], bias, False, 0, -1, -1, 0.0, 1.0)


def test_bench_reference_agrees_with_the_reference():
    rng = np.random.default_rng(3)
    q, k, v, bias = _case(rng, 2, 4, 2, 6, 9, 8, 8, dtype=np.float32, mask_rows=True)
    for args in [(True, 3, -1, -1, 0.0, 0.4), (True, 3, 2, -1, 5.0, 0.4), (False, 0, 1, 1, 0.0, 0.4)]:
        ref = attention(q, k, v, bias, *args)
        got = torch_attention(q, k, v, bias, *args)
        bound = attention.error_scale(q, k, v, bias, *args)
        assert (np.abs(got - ref) <= 1e-5 * bound + 1e-30).all()


@pytest.fixture(scope="module")
def kernels():
    from tests.registry_kernels import verified_kernels

    return verified_kernels([("opgen.nn.attention", "f32")], TARGETS)


def _projection_view(x):
    """(B, H, S, D) values laid out as the (B, S, H, D) projection, viewed back (strided)."""
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)


# (Hq, Hkv, S, T, D, Dv, is_causal, offset, left, right, softcap)
KERNEL_CASES = [
    (4, 2, 70, 70, 16, 24, True, 0, -1, -1, 0.0),      # causal prefill across several key panels
    (8, 2, 5, 90, 32, 32, True, 85, -1, -1, 0.0),      # decode step: offset T - S
    (4, 4, 40, 40, 8, 8, True, -10, -1, -1, 0.0),      # negative offset: the first rows see nothing
    (2, 1, 50, 60, 12, 12, False, 4, 7, 3, 0.0),       # asymmetric window
    (6, 3, 33, 65, 64, 40, True, 32, 20, -1, 30.0),    # soft-cap, causal, left window
    (2, 2, 17, 17, 4, 4, False, 0, -1, -1, 1e-35),     # a cap too small for float32: scores 0
    # huge offsets and windows (i + offset + right_window + 1 and i + offset - left_window leave int64):
    (2, 1, 20, 30, 8, 8, False, 2**62, 2**62, 2**62, 0.0),          # keys j >= i
    (2, 1, 20, 30, 8, 8, False, -2**62 - 5, 2**62, 2**62 + 5, 0.0),  # keys j <= i
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", KERNEL_CASES)
def test_kernels_match_the_reference(kernels, target, case):
    hq, hkv, s, t, d, dv, causal, offset, left, right, cap = case
    _, _, kernel = kernels[("opgen.nn.attention", "f32", target)]
    rng = np.random.default_rng(sum(map(hash, case)) % 2**32)
    q, k, v, bias = _case(rng, 2, hq, hkv, s, t, d, dv, dtype=np.float32, mask_rows=True)
    q, k, v = (a * 2 for a in (q, k, v))
    args = (causal, offset, left, right, cap, 0.25)
    ref = attention(q, k, v, bias, *args)
    bound = attention.error_scale(q, k, v, bias, *args)
    shared = np.broadcast_to(bias[0, 0], bias.shape)  # one (S, T) mask for every batch and head
    ref_shared = attention(q, k, v, np.ascontiguousarray(shared), *args)
    bound_shared = attention.error_scale(q, k, v, np.ascontiguousarray(shared), *args)
    for inputs, want, err in [((q, k, v, bias), ref, bound),
                              ((_projection_view(q), _projection_view(k), _projection_view(v), bias), ref, bound),
                              ((q, k, v, shared), ref_shared, bound_shared)]:
        out = np.empty(ref.shape, np.float32)
        got = kernel([*inputs, *args], out=out)
        got = out if got is None else got
        assert not np.isnan(got).any()
        assert (np.abs(got.astype(np.float64) - want) <= 1e-5 * err + 1e-30).all(), target
        assert (got[:, :, ::3] == 0).all()  # the rows every key of which the bias masks


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_raise_on_heads_that_do_not_divide(kernels, target):
    _, _, kernel = kernels[("opgen.nn.attention", "f32", target)]
    q, k, v, bias = _case(np.random.default_rng(0), 1, 3, 2, 2, 2, 4, 4, dtype=np.float32)
    with pytest.raises(ValueError):
        kernel([q, k, v, bias, False, 0, -1, -1, 0.0, 1.0], out=np.empty((1, 3, 2, 4), np.float32))
