"""opgen.nn.apply_rotary where the gate cannot look: its reference agrees with ONNX's
RotaryEmbedding reference (interleaved or not, partial rotation, 3-d and 4-d layouts, tables
gathered by position ids); the admitted C++ and Rust kernels agree with the reference in strided
layouts (tables broadcast over the heads, a transposed projection), pass the unrotated tail
through bit for bit (nan payloads and -0.0 included), and raise ValueError for 2R > D."""

from __future__ import annotations

import numpy as np
import pytest
from onnx.reference.ops.op_rotary_embedding import rotary_embedding as onnx_rotary

from opgen.rotary_references import apply_rotary
from tests.registry_kernels import verified_kernels

OP, OV = "opgen.nn.apply_rotary", "f32"
TARGETS = ("cpu-cpp", "cpu-rust")
RTOL = 5.0e-7  # the spec's, on the error_scale basis


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([(OP, OV)], TARGETS)


def _tables(rng, n, r):
    angle = rng.uniform(0, 100, (n, r))
    return np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)


def _close(got, want, scale, rtol=RTOL):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(got) & np.isnan(want)
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf
        ok = both_nan | (got == want) | (np.abs(got - want) <= rtol * scale + 1e-44)
    assert ok.all(), f"{np.argwhere(~ok)[:3].tolist()}: got {got[~ok][:3]}, want {want[~ok][:3]}"


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("rot_dim", [0, 4, 8])  # 0: ONNX's full rotation (the head dim, 8)
@pytest.mark.parametrize("layout", ["3d", "4d"])
@pytest.mark.parametrize("with_ids", [False, True])
def test_reference_is_onnxs(interleaved, rot_dim, layout, with_ids):
    rng = np.random.default_rng(rot_dim + 10 * interleaved)
    b, h, s, d, max_pos = 2, 3, 5, 8, 11
    r = (rot_dim or d) // 2
    x4 = rng.standard_normal((b, h, s, d)).astype(np.float32) * 10
    if with_ids:
        ids = rng.integers(0, max_pos, (b, s))
        cos_cache, sin_cache = _tables(rng, max_pos, r)
        cos, sin = cos_cache[ids], sin_cache[ids]  # the caller's gather
        onnx_args = dict(cos_cache=cos_cache, sin_cache=sin_cache, position_ids=ids)
    else:
        c, sn = _tables(rng, b * s, r)
        cos, sin = c.reshape(b, s, r), sn.reshape(b, s, r)
        onnx_args = dict(cos_cache=cos, sin_cache=sin)
    if layout == "4d":
        onnx_x = x4
    else:  # (B, S, H * D), split into heads by num_heads
        onnx_x = np.ascontiguousarray(x4.transpose(0, 2, 1, 3)).reshape(b, s, h * d)
    want = onnx_rotary(onnx_x, interleaved=int(interleaved), rotary_embedding_dim=rot_dim,
                       num_heads=h if layout == "3d" else 0, **onnx_args)
    if layout == "3d":
        want = want.reshape(b, s, h, d).transpose(0, 2, 1, 3)
    got = apply_rotary(x4, cos[:, None], sin[:, None], interleaved)
    assert got.dtype == np.float32 and got.shape == x4.shape
    scale = apply_rotary.error_scale(x4, cos[:, None], sin[:, None], interleaved)
    _close(got, want, scale)
    assert np.array_equal(got[..., 2 * r:], x4[..., 2 * r:])


def test_reference_two_dim_tables_broadcast():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    cos, sin = _tables(rng, 4, 2)
    full = apply_rotary(x, np.broadcast_to(cos, (2, 1, 4, 2)), np.broadcast_to(sin, (2, 1, 4, 2)), False)
    assert np.array_equal(apply_rotary(x, cos, sin, False), full)


def _strided(a, rng):
    """a in a buffer with gaps along every dim, its last dim running backwards (stride < 0)."""
    buf = rng.standard_normal(tuple(2 * n for n in a.shape)).astype(a.dtype)
    view = buf[tuple(slice(None, None, 2) for _ in a.shape[:-1]) + (slice(None, None, -2),)]
    view[...] = a
    return view


def _specials(rng, shape):
    x = rng.uniform(-1000, 1000, shape).astype(np.float32)
    flat = x.reshape(-1)
    if flat.size == 0:
        return x
    k = flat.size // 7
    idx = rng.choice(flat.size, size=min(4 * k, flat.size), replace=False)
    flat[idx[:k]] = np.nan
    flat[idx[k:2 * k]] = np.inf
    flat[idx[2 * k:3 * k]] = -np.inf
    flat[idx[3 * k:]] = -0.0
    return x


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("interleaved", [False, True])
def test_kernels_match_reference_in_strided_layouts(kernels, target, interleaved):
    spec, o, kernel = kernels[(OP, OV, target)]
    rng = np.random.default_rng(7)
    for b, h, s, d, r in [(2, 3, 5, 8, 4), (1, 4, 9, 20, 6), (2, 2, 3, 37, 18), (1, 3, 4, 16, 0), (1, 2, 3, 2, 1),
                          (1, 0, 3, 8, 4), (1, 2, 0, 8, 4), (2, 32, 64, 128, 64)]:
        x = _specials(rng, (b, h, s, d))
        c, sn = _tables(rng, b * s, r)
        cos, sin = c.reshape(b, 1, s, r), sn.reshape(b, 1, s, r)
        want = apply_rotary(x, cos, sin, interleaved)
        scale = apply_rotary.error_scale(x, cos, sin, interleaved)
        # (B, S, H, D) projection viewed as (B, H, S, D); strided tables; 2-d (S, R) tables
        xt = np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
        layouts = [(x, cos, sin), (xt, _strided(cos, rng), _strided(sin, rng)), (_strided(x, rng), cos, sin)]
        if b == 1:
            layouts.append((x, cos[0, 0], sin[0, 0]))
        for xa, ca, sa in layouts:
            got = kernel([xa, ca, sa, interleaved], out=np.empty(x.shape, np.float32))
            _close(got, want, scale)
            # the tail: the very same bits (nan payloads, -0.0)
            assert np.array_equal(got[..., 2 * r:].view(np.uint32), x[..., 2 * r:].view(np.uint32))


@pytest.mark.parametrize("target", TARGETS)
def test_nan_payload_passes_through(kernels, target):
    _, _, kernel = kernels[(OP, OV, target)]
    x = np.zeros((1, 2, 3, 8), np.float32)
    x.view(np.uint32)[..., 6] = 0x7FC12345  # a nan with a payload in the tail
    x[..., 7] = -0.0
    cos = np.ones((1, 1, 3, 2), np.float32)
    got = kernel([x, cos, np.zeros_like(cos), False], out=np.empty(x.shape, np.float32))
    assert np.array_equal(got[..., 4:].view(np.uint32), x[..., 4:].view(np.uint32))


@pytest.mark.parametrize("target", TARGETS)
def test_tables_wider_than_half_a_row_raise(kernels, target):
    _, _, kernel = kernels[(OP, OV, target)]
    x = np.ones((2, 3, 6), np.float32)
    cos = np.ones((2, 3, 4), np.float32)
    with pytest.raises(ValueError):
        kernel([x, cos, cos, False], out=np.empty(x.shape, np.float32))
    with pytest.raises(ValueError):
        apply_rotary(x, cos, cos, False)
