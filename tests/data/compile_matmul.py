"""`@` and matmul with NumPy's and torch's 1-D rules (tests/test_compile_matmul.py): a 1-D left
operand is a row, a 1-D right operand a column, and the added dim is removed from the result."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
T32 = Annotated[torch.Tensor, torch.float32]


def at(a: F32, b: F32) -> F32:
    return a @ b


def np_matmul(a: F64, b: F64) -> F64:
    return np.matmul(a, b)


def torch_matmul(a: T32, b: T32) -> T32:
    return torch.matmul(a, b)


def tensor_at(a: T32, b: T32) -> T32:
    return a @ b


def affine(x: F32, w: F32, b: F32) -> F32:
    return x @ w + b
