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
