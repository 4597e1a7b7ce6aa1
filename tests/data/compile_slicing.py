"""Slicing and basic indexing as Python, NumPy and torch define them (tests/test_compile_slicing.py)."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
T32 = Annotated[torch.Tensor, torch.float32]


def list_slice(xs: list[int], a: int, b: int, c: int) -> list[int]:
    return xs[a:b:c]


def list_tail(xs: list[str]) -> list[str]:
    return xs[1:]


def list_reversed_prefix(xs: list[float], k: int) -> list[float]:
    return xs[k::-1]


def str_slice(s: str, a: int, b: int, c: int) -> str:
    return s[a:b:c]


def str_open_ends(s: str, k: int) -> list[str]:
    return [s[:k], s[k:], s[::-1], s[-k:]]


def array_rows(x: F32, a: int, b: int) -> F32:
    return x[a:b]


def array_columns(x: F32, k: int) -> F32:
    return x[:, :k]


def array_row(x: I64, i: int) -> I64:
    return x[i]


def array_element(x: I64, i: int, j: int) -> I64:
    return x[i, j]


def array_strided(x: F32) -> F32:
    return x[1::2, ::3]


def array_ellipsis_last(x: T32) -> T32:
    return x[..., -1]


def array_new_axis(x: F32) -> F32:
    return x[:, None] - x[None, :]


def array_view_into_op(x: T32, k: int) -> T32:
    return torch.exp(x[:, k:]) + 1.0


def array_mixed(x: F32, i: int) -> F32:
    return x[None, ..., i, 1:]


# Transposes: views, as NumPy and torch make them (tests/test_compile_slicing.py).
def t_attr(x: F32) -> F32:
    return x.T


def mt_attr(x: F32) -> F32:
    return x.mT


def swap_np(x: F32, a: int, b: int) -> F32:
    return np.swapaxes(x, a, b)


def swap_method(x: F32, a: int, b: int) -> F32:
    return x.swapaxes(a, b)


def transpose_torch(k: T32) -> T32:
    return torch.transpose(k, -2, -1)


def transpose_method_swap(k: T32, a: int, b: int) -> T32:
    return k.transpose(a, b)


def transpose_method_reverse(x: F32) -> F32:
    return x.transpose()


def transpose_method_axes(x: F32) -> F32:
    return x.transpose((2, 0, 1))


def permute_varargs(x: T32) -> T32:
    return x.permute(2, 0, 1)


def permute_torch(x: T32, d: list[int]) -> T32:
    return torch.permute(x, d)


def scores(q: T32, k: T32) -> T32:
    return q @ k.transpose(-2, -1)


def transposed_into_op(x: F32) -> F32:
    return np.exp(x.T[1:])
