"""References of ``opgen.nn.apply_rotary``: rotary position embedding from precomputed cos/sin
tables as ONNX's RotaryEmbedding computes it (onnx/reference/ops/op_rotary_embedding.py), in
float64 NumPy rounded once to float32; its error scale; and the torch formulation (transformers'
``x * cos + rotate_half(x) * sin`` with full-width tables) ``opgen bench`` times it against."""

from __future__ import annotations

import numpy as np

from opgen.references import _loop_flat


def _args(x, cos, sin):
    x, cos, sin = np.asarray(x), np.asarray(cos), np.asarray(sin)
    d, r = x.shape[-1], cos.shape[-1]
    if 2 * r > d:
        raise ValueError(f"apply_rotary rotates 2 * {r} = {2 * r} elements of rows of {d}: the tables are "
                         "wider than half the head dim")
    loop, flat = _loop_flat([(x, 2), (cos, 2), (sin, 2)])
    return loop, flat, r


def _halves(rot: np.ndarray, r: int, interleaved: bool):
    if interleaved:
        return rot[..., 0::2], rot[..., 1::2]
    return rot[..., :r], rot[..., r:]


def _join(real: np.ndarray, imag: np.ndarray, interleaved: bool) -> np.ndarray:
    if interleaved:
        return np.stack((real, imag), axis=-1).reshape(real.shape[:-1] + (2 * real.shape[-1],))
    return np.concatenate((real, imag), axis=-1)


def apply_rotary(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool) -> np.ndarray:
    """Reference of ``opgen.nn.apply_rotary``: the first 2r elements of every row of x rotated by
    (cos, sin) (r = the tables' last dim), the rest passed through; float64, rounded once."""
    loop, (x, cos, sin), r = _args(x, cos, sin)
    x64, c, s = x.astype(np.float64), cos.astype(np.float64), sin.astype(np.float64)
    x1, x2 = _halves(x64[..., : 2 * r], r, bool(interleaved))
    with np.errstate(invalid="ignore", over="ignore"):
        real = c * x1 - s * x2
        imag = s * x1 + c * x2
        out = np.concatenate((_join(real, imag, bool(interleaved)), x64[..., 2 * r:]), axis=-1)
        out = out.astype(np.float32)
    out[..., 2 * r:] = x[..., 2 * r:]  # passed through: the very same bits
    return out.reshape(loop + x.shape[1:])


def _error_scale(x, cos, sin, interleaved):
    """Per output element: |cos * x1| + |sin * x2| (real) or |sin * x1| + |cos * x2| (imag) for a
    rotated one, the two products' magnitudes that bound a float32 evaluation's rounding (the
    result itself cancels); |x| for a passed-through one (which must be exact)."""
    loop, (x, cos, sin), r = _args(x, cos, sin)
    ax = np.abs(x.astype(np.float64))
    c, s = np.abs(cos.astype(np.float64)), np.abs(sin.astype(np.float64))
    a1, a2 = _halves(ax[..., : 2 * r], r, bool(interleaved))
    with np.errstate(invalid="ignore"):
        real = c * a1 + s * a2
        imag = s * a1 + c * a2
    out = np.concatenate((_join(real, imag, bool(interleaved)), ax[..., 2 * r:]), axis=-1)
    return out.reshape(loop + x.shape[1:])


apply_rotary.error_scale = _error_scale


def torch_apply_rotary(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool) -> np.ndarray:
    """What ``opgen bench`` times the kernel against: transformers' apply_rotary_pos_emb on one
    tensor in torch float32, ``x * cos + rotate_half(x) * sin`` with full-width (S, 2r) tables
    (cat(cos, cos), as transformers' rotary modules return them), the unrotated tail split off and
    concatenated back (GPT-NeoX's partial rotary). Interleaved: GPT-J's rotate_every_two with the
    tables repeated pairwise."""
    import torch  # only for the bench reference: seconds to import, and the gate's reference needs none

    tx, tc, ts = (torch.from_numpy(np.asarray(a)) for a in (x, cos, sin))
    r = tc.shape[-1]
    if interleaved:
        cf, sf = tc.repeat_interleave(2, dim=-1), ts.repeat_interleave(2, dim=-1)
    else:
        cf, sf = torch.cat((tc, tc), dim=-1), torch.cat((ts, ts), dim=-1)
    rot, tail = tx[..., : 2 * r], tx[..., 2 * r:]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        turned = torch.stack((-x2, x1), dim=-1).flatten(-2)
    else:
        turned = torch.cat((-rot[..., r:], rot[..., :r]), dim=-1)
    out = rot * cf + turned * sf
    if tail.shape[-1]:
        out = torch.cat((out, tail), dim=-1)
    return out.numpy()
