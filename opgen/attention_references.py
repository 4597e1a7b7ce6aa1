"""References of ``opgen.nn.attention``: general attention (an additive bias, causal masking with
an offset, an asymmetric window, soft-capping, grouped-query heads) as ONNX's Attention computes
it, in float64 NumPy; its error scale; and the torch formulation ``opgen bench`` times it against."""

from __future__ import annotations

import numpy as np

from opgen.references import _loop_flat


def _args(q, k, v, bias):
    q, k, v, bias = (np.asarray(a) for a in (q, k, v, bias))
    hq, hkv = q.shape[-3], k.shape[-3]
    if hkv == 0 or hq % hkv:
        raise ValueError(f"grouped-query attention needs the query heads ({hq}) to be a multiple of the "
                         f"key/value heads ({hkv}), and at least one key/value head")
    return _loop_flat([(q, 3), (k, 3), (v, 3), (bias, 3)])


def allowed_keys(queries: int, keys: int, is_causal: bool, offset: int, left_window: int,
                 right_window: int) -> np.ndarray:
    """(S, T) bool: key j is allowed for query i (absolute position p = i + offset) by the causal
    mask (j <= p) and the window (p - j <= left_window, j - p <= right_window; -1: no bound)."""
    p = np.arange(queries)[:, None] + int(offset)
    j = np.arange(keys)[None, :]
    allowed = np.ones((queries, keys), dtype=bool)
    if is_causal:
        allowed &= j <= p
    if left_window >= 0:
        allowed &= p - j <= left_window
    if right_window >= 0:
        allowed &= j - p <= right_window
    return allowed


def _scores(q, k, bias, is_causal, offset, left_window, right_window, softcap, scale):
    """float64 (B, Hq, S, T) scores (-inf where not visible) and the visibility mask."""
    group = q.shape[1] // k.shape[1]
    q, k = q.astype(np.float64), np.repeat(k.astype(np.float64), group, axis=1)
    bias = bias.astype(np.float64)
    raw = float(scale) * (q @ np.swapaxes(k, -1, -2))
    if softcap > 0:
        with np.errstate(over="ignore"):  # a tiny cap: raw / softcap is +-inf, tanh of it +-1
            raw = float(softcap) * np.tanh(raw / float(softcap))
    visible = allowed_keys(q.shape[2], k.shape[2], bool(is_causal), int(offset), int(left_window),
                           int(right_window)) & (bias != -np.inf)
    with np.errstate(invalid="ignore"):
        scores = np.where(visible, raw + bias, -np.inf)
    return scores, visible


def _softmax(scores):
    top = np.max(scores, axis=-1, keepdims=True, initial=-np.inf)
    weights = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = weights.sum(-1, keepdims=True)
    return np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray, is_causal: bool, offset: int,
              left_window: int, right_window: int, softcap: float, scale: float) -> np.ndarray:
    """Reference of ``opgen.nn.attention`` (in float64, rounded once to the inputs' dtype): ONNX's Attention
    with the bias, causal mask (offset-aligned), window and soft-cap; a query that sees no key
    gives zeros."""
    loop, (q, k, v, bias) = _args(q, k, v, bias)
    dtype = np.result_type(q, k, v, bias, np.float32)  # float32 inputs: rounded once to float32
    hq, s, e = q.shape[1], q.shape[2], v.shape[-1]
    group = hq // k.shape[1]
    scores, _ = _scores(q, k, bias, is_causal, offset, left_window, right_window, softcap, scale)
    p = _softmax(scores)
    out = p @ np.repeat(v.astype(np.float64), group, axis=1)
    return out.astype(dtype).reshape(loop + (hq, s, e))


def _error_scale(q, k, v, bias, is_causal, offset, left_window, right_window, softcap, scale):
    """The magnitude the float32 forward error of attention is proportional to, per output
    element: (sum_j p_ij |v_j|) * (1 + M_i), M_i = max over the visible keys j of
    |scale| sum_d |q_id k_jd| + |bias_ij| (in float64). The first factor bounds the weighted sum;
    M_i bounds every term of a score (the raw product, the soft-capped value, which is no larger,
    and the bias), so the score errors the softmax passes on (ds changes p_ij by p_ij * ds)."""
    loop, (q, k, v, bias) = _args(q, k, v, bias)
    group = q.shape[1] // k.shape[1]
    scores, visible = _scores(q, k, bias, is_causal, offset, left_window, right_window, softcap, scale)
    p = _softmax(scores)
    qa = np.abs(q.astype(np.float64))
    ka = np.repeat(np.abs(k.astype(np.float64)), group, axis=1)
    va = np.repeat(np.abs(v.astype(np.float64)), group, axis=1)
    with np.errstate(invalid="ignore"):
        spread = np.where(visible, abs(float(scale)) * (qa @ np.swapaxes(ka, -1, -2)) + np.abs(bias), 0.0)
    bound = (p @ va) * (1.0 + spread.max(-1, keepdims=True, initial=0.0))
    return bound.reshape(loop + bound.shape[1:])


attention.error_scale = _error_scale


def torch_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray, is_causal: bool, offset: int,
                    left_window: int, right_window: int, softcap: float, scale: float) -> np.ndarray:
    """What ``opgen bench`` times the kernel against: torch's float32 SDPA on tensors sharing the
    inputs' memory, with the float mask bias + (0 or -inf from the causal mask and the window),
    built per call (as transformers builds it per forward pass), enable_gqa. With a soft-cap
    (which SDPA cannot apply) the eager formulation Gemma 2 uses in transformers: scores by
    matmul, tanh cap, + mask, softmax, @ v. A query that sees no key gives zeros (masked_fill
    of the rows SDPA leaves nan on other backends; torch's CPU kernel gives zeros already)."""
    import torch  # only for the bench reference: seconds to import, and the gate's reference needs none

    tq, tk, tv, tb = (torch.from_numpy(np.ascontiguousarray(a)) for a in (q, k, v, bias))
    s, t = q.shape[-2], k.shape[-2]
    allowed = torch.from_numpy(allowed_keys(s, t, bool(is_causal), int(offset), int(left_window),
                                            int(right_window)))
    mask = tb.masked_fill(~allowed, float("-inf"))
    if softcap > 0:
        group = q.shape[-3] // k.shape[-3]
        if group > 1:
            tk, tv = tk.repeat_interleave(group, dim=-3), tv.repeat_interleave(group, dim=-3)
        w = torch.matmul(tq, tk.transpose(-1, -2)) * float(scale)
        w = torch.tanh(w / float(softcap)) * float(softcap) + mask
        p = torch.softmax(w, dim=-1)
        p = p.nan_to_num(0.0)  # a row with no visible key: zeros
        return torch.matmul(p, tv).numpy()
    return torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=mask, scale=float(scale),
                                                            enable_gqa=True).numpy()
