"""Model code as it is usually written: bare torch.Tensor / np.ndarray annotations (their libraries'
default dtypes), torch's methods (view, reshape, unsqueeze, mean, sum, argmax, pow, masked_fill,
contiguous, item), keepdim/keepdims on reductions, unary minus on arrays, float("-inf"), and a
parameter typed by its literal default."""

import math
from typing import Annotated

import numpy as np
import torch

Mask = Annotated[torch.Tensor, torch.bool]


def multi_head_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Two-head self-attention on (batch, seq, dim): heads split with view, scores scaled by 1/sqrt(head dim)."""
    b, s, d = q.shape
    h = 2
    q = q.view(b, s, h, d // h).transpose(1, 2)
    k = k.view(b, s, h, d // h).transpose(1, 2)
    v = v.view(b, s, h, d // h).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d // h)
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v).transpose(1, 2).contiguous().reshape(b, s, d)


def masked_softmax(scores: torch.Tensor, keep: Mask) -> torch.Tensor:
    """Attention weights with the dropped positions filled with -inf first (masked_fill of ~keep)."""
    return scores.masked_fill(~keep, float("-inf")).softmax(dim=-1)


def mean_pool_mask(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Sentence embeddings: token states averaged under a 0/1 float mask, unsqueezed over the hidden dim."""
    m = mask.unsqueeze(-1)
    return (hidden * m).sum(1) / m.sum(1)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps=1e-6) -> torch.Tensor:
    """RMSNorm: x.pow(2).mean(-1, keepdim=True), an unannotated eps typed by its default."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def greedy_next(logits: torch.Tensor) -> int:
    """The next token: argmax over every logit, as a Python int through item()."""
    return int(logits.argmax().item())


def batch_loss(losses: torch.Tensor) -> float:
    """A loss as a Python float: mean() then item() (torch's RuntimeError if it had more than one element)."""
    return losses.mean().item()


def first_score(scores: torch.Tensor) -> float:
    """float() of a one-element tensor of any rank (torch's ValueError for more than one element)."""
    return float(scores[..., :1])


def softmax_rows(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """The textbook NumPy softmax: max and sum with keepdims=True."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def l1_normalize(t: torch.Tensor) -> torch.Tensor:
    """Rows scaled to unit L1 norm: t.abs().sum(dim=-1, keepdim=True)."""
    return t / t.abs().sum(dim=-1, keepdim=True)


def centred_negation(x: np.ndarray) -> np.ndarray:
    """Unary minus on an array (numpy.negative, so -0.0 stays a signed zero)."""
    return -(x - x.mean())


def top_class(probs: torch.Tensor) -> torch.Tensor:
    """Per-row class ids: argmax(dim=-1) of a tensor, torch's IndexError for an empty or missing dim."""
    return probs.argmax(dim=-1)


def weighted_row_sum(t: torch.Tensor, weights: list[float]) -> torch.Tensor:
    """zip() of a list of weights and a tensor's rows (each a view): the shorter decides, as Python's zip."""
    out = torch.zeros(t.shape[-1])
    for w, row in zip(weights, t):
        out = out + w * row
    return out


def positional_scores(x: np.ndarray) -> list[float]:
    """enumerate() over an array's rows: each row's sum weighted by its position."""
    scores = []
    for i, row in enumerate(x):
        scores.append(float(np.sum(row)) * (i + 1))
    return scores


def label_counts(labels: np.ndarray, n: int) -> np.ndarray:
    """dtype=int (NumPy's int64) and x.astype(int): a histogram of labels truncated from floats."""
    counts = np.zeros(n, dtype=int)
    for v in labels.astype(int):
        if 0 <= v < n:  # a chained comparison of a 0-d array, as a test
            counts[int(v)] += 1
    return counts
