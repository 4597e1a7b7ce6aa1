"""Decoding and masking code as people write it: casts, max along a dim, top-k with its results unpacked."""

from typing import Annotated

import numpy as np
import numpy.typing as npt
import torch

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
T32 = Annotated[torch.Tensor, torch.float32]
T64 = Annotated[torch.Tensor, torch.int64]


def greedy_tokens(logits: T32) -> T64:
    """Greedy decoding: the arg-max token of every position (v, i = x.max(dim=-1); ties to the first)."""
    best, ids = logits.max(dim=-1)
    return ids


def confidence_margin(logits: T32) -> T32:
    """How far the best logit leads the runner-up (torch.topk's values, unpacked; the indices unused)."""
    values, indices = torch.topk(logits, 2)
    return values[..., 0] - values[..., 1]


def top_k_filter(logits: T32, k: int) -> T32:
    """Top-k sampling's filter: logits below the k-th largest become -inf (topk(...).values, a bool mask cast
    to float)."""
    kth = torch.topk(logits, k).values[..., -1:]
    keep = (logits >= kth).float()
    return logits * keep + (1.0 - keep) * -1e30


def attention_bias(mask: I64) -> F32:
    """BERT's extended attention mask: a 0/1 int mask cast to float32, 0 where attended, -10000 elsewhere."""
    return (1.0 - mask.astype(np.float32)) * -10000.0


def fixed_point(scores: F32) -> I64:
    """Scores as integer hundredths (astype truncates toward zero, as NumPy's float -> int cast)."""
    return (scores * 100.0).astype(np.int64)


def pooled_max_positions(hidden: T32) -> T64:
    """Where each feature peaks over the sequence: torch.max along dim 1 with keepdim, read by field."""
    return torch.max(hidden, dim=1, keepdim=True).indices
