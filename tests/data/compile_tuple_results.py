"""Calls of ops returning several tensors (torch.topk, torch.max/min along a dim,
torch.native_layer_norm), compiled by tests/test_compile_tuple_results.py and compared with Python."""

from typing import Annotated

import numpy as np
import numpy.typing as npt
import torch

T32 = Annotated[torch.Tensor, torch.float32]
T64 = Annotated[torch.Tensor, torch.int64]


def topk_unpacked(x: T32, k: int) -> T32:
    values, indices = torch.topk(x, k)
    return values * 2.0 + indices.float()


def topk_fields(x: T32) -> T64:
    return torch.topk(x, 2, dim=0, largest=False).indices


def topk_values_method(x: T32) -> T32:
    return x.topk(1).values


def topk_item(x: T32) -> T64:
    r = torch.topk(x, 2)
    return r[-1]


def topk_returned(x: T32, k: int) -> tuple[T32, T64]:
    return torch.topk(x, k)


def max_along(x: T32) -> tuple[T32, T64]:
    v, i = x.max(dim=1)
    return v, i


def min_kept(x: T32) -> T64:
    return torch.min(x, dim=-1, keepdim=True).indices


def max_then_item(x: T32) -> T32:
    return torch.max(x, 0)[0]


def max_method_positional(x: T32) -> T32:
    # A tensor's x.max(1) is torch's (values, indices) along dim 1: the compiler knows x is torch's.
    return x.max(1)[0]


def numpy_max_axis(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return x.max(axis=-1)


def layer_norm_statistics(x: T32, w: T32, b: T32) -> T32:
    out, mean, rstd = torch.native_layer_norm(x, (w.shape[0],), w, b, 1e-5)
    return out + mean * rstd
