"""Softmax, then matmul: the core of attention, on torch tensors."""

from typing import Annotated

import torch
import torch.nn.functional as F

Tensor32 = Annotated[torch.Tensor, torch.float32]


def attend(scores: Tensor32, values: Tensor32) -> Tensor32:
    """softmax(scores) @ values over the last dim, batched over any leading dims."""
    weights = F.softmax(scores, dim=-1)
    return weights @ values
