"""The references of opgen.nn.scaled_dot_product_attention and opgen.nn.rotary_embedding against
independent naive NumPy implementations written from their spec's semantics, against transformers'
own Gemma 3 functions, and the error scales their tolerances rest on."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from opgen import references as R
from opgen.spec.model import load_spec

SPECS = Path(__file__).resolve().parents[1] / "specs"


# ------------------------------------------------------------------ naive implementations


def naive_attention(q, k, v, key_mask, window, scale):
    """Loops straight from the spec's formulas, in float64 (any loop dims, broadcast)."""
    loop = np.broadcast_shapes(q.shape[:-3], k.shape[:-3], v.shape[:-3], key_mask.shape[:-1])
    hq, s, _ = q.shape[-3:]
    hkv, t, e = v.shape[-3:]
    out = np.zeros(loop + (hq, s, e))
    for idx in itertools.product(*(range(n) for n in loop)):
        qb, kb, vb = (np.broadcast_to(a, loop + a.shape[-3:])[idx].astype(np.float64) for a in (q, k, v))
        mb = np.broadcast_to(key_mask, loop + key_mask.shape[-1:])[idx]
        for h, i in itertools.product(range(hq), range(s)):
            g = h // (hq // hkv)
            seen = [j for j in range(t) if mb[j] != 0 and (window <= 0 or abs(i - j) < window)]
            if not seen:
                continue  # a query that sees no key gives zeros
            scores = np.array([scale * np.dot(qb[h, i], kb[g, j]) for j in seen])
            p = np.exp(scores - scores.max())
            p /= p.sum()
            out[idx + (h, i)] = sum(pj * vb[g, j] for pj, j in zip(p, seen))
    return out


def naive_rotary(x, positions, theta):
    """The spec's formulas with transformers' float32 angle, cos and sin in float64."""
    loop = np.broadcast_shapes(x.shape[:-3], positions.shape[:-1])
    xs = np.broadcast_to(x, loop + x.shape[-3:]).astype(np.float64)
    ps = np.broadcast_to(positions, loop + positions.shape[-1:])
    d = x.shape[-1]
    half = d // 2
    out = np.empty(xs.shape)
    for i in range(half):
        inv = np.float32(1) / np.float32(float(np.float32(theta)) ** float(np.float32(2 * i) / np.float32(d)))
        angle = (ps.astype(np.float32) * inv).astype(np.float64)[..., None, :]  # float32 product
        c, s = np.cos(angle), np.sin(angle)
        x1, x2 = xs[..., i], xs[..., i + half]
        out[..., i] = x1 * c - x2 * s
        out[..., i + half] = x2 * c + x1 * s
    return out


def within(got, want, scale, rtol):
    """|got - want| <= rtol * scale, element by element (0 where the scale is 0)."""
    return bool(np.all(np.abs(np.asarray(got, np.float64) - want) <= rtol * scale + 1e-30))


# ------------------------------------------------------------------ attention


def attention_case(rng, loop, hq, hkv, s, t, d, e, pad=0.3):
    q = rng.uniform(-3, 3, loop + (hq, s, d)).astype(np.float32)
    k = rng.uniform(-3, 3, loop + (hkv, t, d)).astype(np.float32)
    v = rng.uniform(-5, 5, loop + (hkv, t, e)).astype(np.float32)
    m = (rng.uniform(size=loop + (t,)) >= pad).astype(np.int64)
    return q, k, v, m


@pytest.mark.parametrize("loop,hq,hkv,s,t,d,e,window", [
    ((2,), 4, 2, 7, 7, 5, 3, 0),      # grouped-query heads, no window
    ((1,), 3, 1, 9, 9, 8, 8, 3),      # 3 query heads on 1 (EmbeddingGemma's grouping), narrow window
    ((2, 1), 2, 2, 5, 8, 4, 6, 2),    # S != T, D != Dv, two loop dims
    ((), 2, 1, 6, 6, 3, 2, 100),      # no loop dims; a window wider than the sequence
])
def test_attention_reference_matches_the_naive_formulas(loop, hq, hkv, s, t, d, e, window):
    rng = np.random.default_rng(hash((loop, hq, s, window)) % 2**32)
    q, k, v, m = attention_case(rng, loop, hq, hkv, s, t, d, e)
    got = R.scaled_dot_product_attention(q, k, v, m, window, 0.4)
    assert got.dtype == np.float32 and got.shape == loop + (hq, s, e)
    scale = R.scaled_dot_product_attention.error_scale(q, k, v, m, window, 0.4)
    assert within(got, naive_attention(q, k, v, m, window, 0.4), scale, 1e-6)


def test_attention_window_is_exclusive_at_the_boundary():
    """Key j is visible from query i iff |i - j| < window: with one-hot values the output
    says which keys a query attended to."""
    t, window = 9, 3
    q = np.zeros((1, 1, t, 1), np.float32)  # equal scores: uniform over the visible keys
    k = np.zeros((1, 1, t, 1), np.float32)
    v = np.eye(t, dtype=np.float32)[None, None]
    out = R.scaled_dot_product_attention(q, k, v, np.ones((1, t), np.int64), window, 1.0)[0, 0]
    for i, j in itertools.product(range(t), range(t)):
        assert (out[i, j] > 0) == (abs(i - j) < window), (i, j, out[i])


def test_padded_keys_get_no_weight_and_blind_queries_give_zeros():
    rng = np.random.default_rng(1)
    q, k, v, _ = attention_case(rng, (2,), 2, 1, 6, 6, 4, 3)
    mask = np.array([[1, 0, 1, 2, 0, 0], [0, 0, 0, 0, 0, 0]])  # any nonzero is a token
    out = R.scaled_dot_product_attention(q, k, v, mask, 0, 0.5)
    assert not np.isnan(out).any()
    assert np.all(out[1] == 0.0)  # every key padded
    changed = v.copy()
    changed[0, :, [1, 4, 5]] = 1e6  # values of padded keys do not matter
    assert np.array_equal(out, R.scaled_dot_product_attention(q, k, changed, mask, 0, 0.5))
    # A window that leaves a query only padded keys: zeros for that query alone.
    far = R.scaled_dot_product_attention(q, k, v, np.array([[1, 1, 0, 0, 0, 0]] * 2), 2, 0.5)
    assert np.all(far[:, :, 3:] == 0.0) and np.all(far[:, :, :3] != 0.0)


@pytest.mark.parametrize("hq,hkv", [(3, 2), (2, 0), (0, 0)])
def test_attention_head_counts_that_do_not_group_are_value_errors(hq, hkv):
    q, k, v = (np.ones((h, 2, 2), np.float32) for h in (hq, hkv, hkv))
    with pytest.raises(ValueError, match="multiple of the key/value heads"):
        R.scaled_dot_product_attention(q, k, v, np.ones(2, np.int64), 0, 1.0)


@pytest.mark.parametrize("qs,ks,vs,ms", [
    ((2, 0, 3), (1, 4, 3), (1, 4, 5), (4,)),       # no queries
    ((2, 3, 3), (1, 0, 3), (1, 0, 5), (0,)),       # no keys: zeros
    ((2, 3, 0), (1, 4, 0), (1, 4, 5), (4,)),       # head dim 0: every score 0, uniform weights
    ((0, 2, 3, 3), (1, 4, 3), (1, 4, 2), (1, 4)),  # an empty batch
])
def test_attention_zero_size_dims(qs, ks, vs, ms):
    rng = np.random.default_rng(2)
    q, k, v = (rng.uniform(-1, 1, sh).astype(np.float32) for sh in (qs, ks, vs))
    m = np.ones(ms, np.int64)
    got = R.scaled_dot_product_attention(q, k, v, m, 0, 0.7)
    want = naive_attention(q, k, v, m, 0, 0.7)
    assert got.shape == want.shape and np.allclose(got, want, atol=1e-6)


def test_attention_error_scale_bounds_torchs_float32_error_where_a_relative_bound_cannot():
    """The basis of the spec's tolerance: torch's float32 result stays within a small multiple
    of u * E of the float64 value although it is far off relative to |ref| (cancellation)."""
    rng = np.random.default_rng(3)
    q, k, v, m = attention_case(rng, (2,), 4, 2, 24, 24, 16, 16)
    q *= 2.0
    got = R.scaled_dot_product_attention(q, k, v, m, 0, 0.25)
    exact = naive_attention(q, k, v, m, 0, 0.25)
    scale = R.scaled_dot_product_attention.error_scale(q, k, v, m, 0, 0.25)
    err = np.abs(got - exact)
    assert within(got, exact, scale, 2**-24 * (2 * 24 + 2 * 16 + 5))  # the spec's worst-case bound
    assert (err / np.maximum(np.abs(exact), 1e-30)).max() > 1e-5  # where |ref| alone would not do


def test_torch_sdpa_masked_is_the_reference_on_bench_shapes():
    rng = np.random.default_rng(4)
    q, k, v, m = attention_case(rng, (2,), 3, 1, 16, 16, 8, 8)
    assert np.allclose(R.torch_sdpa_masked(q, k, v, m, 5, 0.3), R.scaled_dot_product_attention(q, k, v, m, 5, 0.3),
                       atol=1e-6)


# ------------------------------------------------------------------ rotary embedding


@pytest.mark.parametrize("shape,pshape,theta,top", [
    ((2, 3, 5, 8), (2, 5), 10_000.0, 600),
    ((1, 2, 7, 256), (1, 7), 1_000_000.0, 8191),
    ((3, 1, 4, 6), (4,), 12_345.6, 100_000),  # positions broadcast over the loop dim
    ((2, 4, 2), (4,), 2.0, 50),               # no loop dims, D == 2
])
def test_rotary_reference_matches_the_naive_formulas(shape, pshape, theta, top):
    rng = np.random.default_rng(sum(shape))
    x = rng.uniform(-10, 10, shape).astype(np.float32)
    positions = rng.integers(0, top, pshape)
    got = R.rotary_embedding(x, positions, theta)
    assert got.dtype == np.float32 and got.shape == np.broadcast_shapes(shape[:-3], pshape[:-1]) + shape[-3:]
    scale = R.rotary_embedding.error_scale(x, positions, theta)
    # The naive version computes its own float32 power: an ulp apart at most, as the spec allows.
    assert within(got, naive_rotary(x, positions, theta), scale, 5e-7)


def test_rotary_odd_head_dim_is_a_value_error():
    with pytest.raises(ValueError, match="even head dim"):
        R.rotary_embedding(np.ones((1, 2, 3), np.float32), np.zeros(2, np.int64), 10_000.0)


def test_rotary_zero_size_dims_and_nan():
    assert R.rotary_embedding(np.ones((0, 3, 4), np.float32), np.zeros(3, np.int64), 1e4).shape == (0, 3, 4)
    assert R.rotary_embedding(np.ones((2, 3, 0), np.float32), np.zeros(3, np.int64), 1e4).shape == (2, 3, 0)
    x = np.ones((1, 2, 4), np.float32)
    x[0, 1, 1] = np.nan
    out = R.rotary_embedding(x, np.array([0, 5]), 1e4)
    assert np.isnan(out[0, 1, [1, 3]]).all() and not np.isnan(out[0, 1, [0, 2]]).any()


def test_rotary_error_scale_covers_large_angles():
    """Far from 0 the float32 angle is what dominates: torch's result is off the exact-math
    value by ~1e-4 of |x| at position 8191, yet within u * E of it (E grows with the angle)."""
    x = np.random.default_rng(5).uniform(-1, 1, (1, 1, 64, 64)).astype(np.float32)
    positions = np.arange(8128, 8192)
    got = R.rotary_embedding(x, positions, 10_000.0).astype(np.float64)
    inv = 1.0 / 10_000.0 ** (np.arange(0, 64, 2) / 64)
    angle = positions[:, None] * np.concatenate([inv, inv])
    rot = np.concatenate([-x[..., 32:], x[..., :32]], axis=-1).astype(np.float64)
    exact = x * np.cos(angle) + rot * np.sin(angle)
    scale = R.rotary_embedding.error_scale(x, positions, 10_000.0)
    assert within(got, exact, scale, 4.8e-7)
    assert np.abs(got - exact).max() > 1e-5


# ------------------------------------------------------------------ against transformers


def _gemma3_config(transformers, **kw):
    cfg = transformers.Gemma3TextConfig(
        vocab_size=64, hidden_size=24, intermediate_size=48, num_hidden_layers=2, num_attention_heads=3,
        num_key_value_heads=1, head_dim=8, sliding_window=6, use_bidirectional_attention=True,
        layer_types=["sliding_attention", "full_attention"], max_position_embeddings=64, **kw)
    cfg._attn_implementation = "eager"
    return cfg


def test_attention_mask_and_values_match_transformers_gemma3():
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    gemma3 = pytest.importorskip("transformers.models.gemma3.modeling_gemma3")
    cfg = _gemma3_config(transformers)
    assert cfg.sliding_window == 4  # transformers halves the window for bidirectional attention: 6 // 2 + 1
    torch.manual_seed(0)
    model = gemma3.Gemma3TextModel(cfg).eval()
    ids = torch.randint(0, 64, (2, 11))
    mask = torch.ones(2, 11, dtype=torch.int64)
    mask[1, 8:] = 0
    with torch.no_grad():
        attn = model(input_ids=ids, attention_mask=mask, output_attentions=True).attentions
    for layer, window in zip(attn, (cfg.sliding_window, 0)):
        ours = R.visible_keys(mask.numpy(), 11, window)[:, None]  # (B, 1, S, T)
        seen = ours.any(-1, keepdims=True)
        assert np.array_equal((layer.numpy() > 0) & seen, np.broadcast_to(ours, layer.shape))

    # The values, with transformers' eager attention (repeat_kv for the grouped heads).
    rng = np.random.default_rng(6)
    q, k, v, m = attention_case(rng, (2,), 3, 1, 9, 9, 8, 8, pad=0.2)
    m[:, 0] = 1
    visible = torch.from_numpy(R.visible_keys(m, 9, 4))[:, None]
    additive = torch.zeros(visible.shape).masked_fill(~visible, torch.finfo(torch.float32).min)
    module = type("M", (), {"num_key_value_groups": 3, "training": False, "head_dim": 8})()
    theirs, _ = gemma3.eager_attention_forward(module, torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v),
                                               additive, dropout=0.0, scaling=0.35)
    ours = R.scaled_dot_product_attention(q, k, v, m, 4, 0.35)
    blind = ~R.visible_keys(m, 9, 4).any(-1)
    theirs = theirs.transpose(1, 2).numpy()
    scale = R.scaled_dot_product_attention.error_scale(q, k, v, m, 4, 0.35)
    assert within(ours[~np.broadcast_to(blind[:, None], ours.shape[:-1])],
                  theirs[~np.broadcast_to(blind[:, None], ours.shape[:-1])],
                  scale[~np.broadcast_to(blind[:, None], ours.shape[:-1])], 1e-6)


@pytest.mark.parametrize("layer_type,theta", [("sliding_attention", 10_000.0), ("full_attention", 1_000_000.0)])
def test_rotary_matches_transformers_gemma3_exactly(layer_type, theta):
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    gemma3 = pytest.importorskip("transformers.models.gemma3.modeling_gemma3")
    cfg = _gemma3_config(transformers)
    rope = gemma3.Gemma3RotaryEmbedding(cfg)
    x = torch.from_numpy(np.random.default_rng(7).uniform(-4, 4, (2, 3, 40, 8)).astype(np.float32))
    positions = torch.arange(0, 4000, 100).repeat(2, 1)
    assert math.isclose(cfg.rope_parameters[layer_type]["rope_theta"], theta)
    cos, sin = rope(x, positions, layer_type)
    theirs, _ = gemma3.apply_rotary_pos_emb(x, x, cos, sin)
    ours = R.rotary_embedding(x.numpy(), positions.numpy(), theta)
    assert np.array_equal(ours, theirs.numpy())


# ------------------------------------------------------------------ the specs


@pytest.mark.parametrize("name", ["scaled_dot_product_attention", "rotary_embedding"])
def test_specs_declare_their_error_scale_and_bench_cases(name):
    spec = load_spec(SPECS / "opgen" / "nn" / f"{name}.yaml")
    overload = spec.overload("f32")
    tol = spec.tolerance_for(overload, overload.sig.returns.dtype)
    assert tol.basis == "error_scale" and callable(R.error_scale(spec.reference))
    assert overload.bench and {"embedding-model", "attention"} <= set(spec.tags)


# ------------------------------------------------------------------ the admitted kernels beyond the gate's sizes


def _registry_kernel(name: str):
    import ctypes

    from opgen.build.cpp import build
    from opgen.verify.ffi import Kernel
    from opgen.service import build_job_for
    from opgen.registry import Registry

    spec = load_spec(SPECS / "opgen" / "nn" / f"{name}.yaml")
    overload = spec.overload("f32")
    entry = Registry(SPECS.parent / "generated").get(spec.op, "f32", "cpu-cpp")
    assert entry is not None and entry.status(spec)[0] == "verified"
    built = build([build_job_for(entry, spec, overload)])[0]
    assert built.ok, built.diagnostics
    kernel = Kernel(ctypes.CDLL(str(built.library)), entry.signature["c_symbol"], overload.sig)
    rtol = spec.tolerance_for(overload, overload.sig.returns.dtype).rtol

    def call(*args):
        out = np.empty(overload.rule.output_shape(dict(zip([p.name for p in overload.sig.params], args)),
                                                  [p.name for p in overload.sig.tensor_params]), np.float32)
        return kernel(list(args), out=out)

    return call, rtol


@pytest.mark.parametrize("loop,hq,hkv,s,d,window,strided", [
    ((4,), 12, 12, 70, 32, 0, True),     # MiniLM-like, many kv heads (a thread per kv head), (B, S, H, D) memory
    ((1,), 3, 1, 300, 64, 65, False),    # EmbeddingGemma-like, one kv head (shared packs), a window
    ((2,), 4, 2, 100, 40, 0, False),     # key panels and value columns with tails
])
def test_attention_kernel_on_shapes_larger_than_the_gate_draws(loop, hq, hkv, s, d, window, strided):
    call, rtol = _registry_kernel("scaled_dot_product_attention")
    rng = np.random.default_rng(s)
    q, k, v, m = attention_case(rng, loop, hq, hkv, s, s, d, d, pad=0.25)
    if strided:  # the projection's (B, S, H, D) layout viewed as (B, H, S, D)
        q = np.ascontiguousarray(np.swapaxes(q, -2, -3)).swapaxes(-2, -3)
    scale = d ** -0.5
    got = call(q, k, v, m, window, scale)
    want = R.scaled_dot_product_attention(q, k, v, m, window, scale)
    assert within(got, want, R.scaled_dot_product_attention.error_scale(q, k, v, m, window, scale), rtol)


def test_rotary_kernel_on_gemma_shapes_and_large_positions():
    call, rtol = _registry_kernel("rotary_embedding")
    x = np.random.default_rng(8).uniform(-3, 3, (2, 3, 200, 256)).astype(np.float32)
    positions = np.stack([np.arange(200), np.arange(2_000_000, 2_000_200)])  # the second beyond the fast path
    for theta in (10_000.0, 1_000_000.0):
        got = call(x, positions, theta)
        assert within(got, R.rotary_embedding(x, positions, theta), R.rotary_embedding.error_scale(x, positions, theta),
                      rtol)
