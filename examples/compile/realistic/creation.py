"""Arrays created inside a function, as model code makes them: masks, position tables, one-hot rows
and buffers from np.zeros/ones/full/arange, their _like forms and torch's spellings (sizes as varargs,
float32 by default), with dtype= choosing the result's dtype."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
T32 = Annotated[torch.Tensor, torch.float32]
TI64 = Annotated[torch.Tensor, torch.int64]


def causal_bias(scores: T32) -> T32:
    """Attention scores with a causal mask added: -inf above the diagonal (torch.full + triu)."""
    n = scores.shape[-1]
    mask = torch.triu(torch.full((n, n), -torch.inf), diagonal=1)
    return scores + mask


def causal_keep(n: int) -> T32:
    """The 0/1 mask of what a position may attend to: 1 - triu(ones(n, n), 1) (torch's varargs sizes)."""
    return 1.0 - torch.triu(torch.ones(n, n), diagonal=1)


def sinusoidal_positions(n: int, d: int) -> F32:
    """A sinusoidal positional encoding (n positions, d = 2 * frequencies): sin and cos of pos * freq."""
    pos = np.arange(n, dtype=np.float32)[:, None]
    freq = np.exp(np.arange(0, d, 2, dtype=np.float32) * (-9.210340371976184 / d))
    angles = pos * freq[None, :]
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


def one_hot(ids: I64, k: int) -> F32:
    """One-hot rows of token ids over k classes: ids[:, None] == arange(k), as float32."""
    return (ids[:, None] == np.arange(k)[None, :]).astype(np.float32)


def running_total(x: F32) -> F32:
    """A running buffer: the sum of a batch's rows, accumulated into zeros_like(row) one row at a time."""
    acc = np.zeros((x.shape[1],), dtype=np.float32)
    for i in range(x.shape[0]):
        acc = acc + x[i]
    return acc


def centred(x: F32) -> F32:
    """Each row minus its mean, through a like-shaped buffer: ones_like(x) * the row means, subtracted."""
    return x - np.ones_like(x) * x.mean(axis=-1, keepdims=True)


def uniform_weights(n: int) -> F64:
    """Uniform weights over n items: np.ones(n) / n, NumPy's default float64."""
    return np.ones(n) / max(n, 1)


def padding_bias(mask: I64) -> F32:
    """An additive attention bias: -1e9 where the mask is 0, else 0 (full_like and zeros_like)."""
    big = np.full_like(mask, -1000000000)
    return np.where(mask == 0, big, np.zeros_like(mask)).astype(np.float32)


def position_ids(n: int, past: int) -> TI64:
    """The position ids of n new tokens after past cached ones: torch.arange(past, past + n)."""
    return torch.arange(past, past + n)


def countdown(start: int, step: int) -> I64:
    """Every step-th index from start down past 0: np.arange(start, -1, -step) (ZeroDivisionError for 0)."""
    return np.arange(start, -1, -step)


def histogram_edges(lo: float, hi: float, bins: int) -> F64:
    """The bins + 1 edges of a histogram over [lo, hi]: np.linspace (float64, the last edge exactly hi)."""
    return np.linspace(lo, hi, bins + 1)


def sample_times(duration: float, n: int) -> F64:
    """n sample times over [0, duration), the end left out: np.linspace(..., endpoint=False)."""
    return np.linspace(0, duration, num=n, endpoint=False)


def identity_blend(x: F64, alpha: float) -> F64:
    """(1 - alpha) * x + alpha * I for a square matrix: np.eye of its size (shrinkage toward identity)."""
    n = x.shape[0]
    return (1 - alpha) * x + alpha * np.eye(n)


def shifted_diagonal(n: int, m: int, k: int) -> F64:
    """The n x m array with ones on its k-th diagonal: np.eye(n, m, k=k)."""
    return np.eye(n, m, k=k)


def frame_peaks(signal: F32, frame: int) -> F64:
    """The peak of each whole frame of a signal, written into a buffer from np.empty (its values are
    never read before they are written)."""
    n = len(signal) // frame
    out = np.empty(n)
    for i in range(n):
        out[i] = float(np.max(signal[i * frame:(i + 1) * frame]))
    return out


def scaled_into_empty(x: T32, s: float) -> T32:
    """x * s written whole into torch.empty_like(x), as code that preallocates its outputs does."""
    out = torch.empty_like(x)
    out[...] = x * s
    return out
