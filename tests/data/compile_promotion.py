"""Functions where arrays of different dtypes, or arrays and Python numbers, meet, compiled by
tests/test_compile_promotion.py and compared with NumPy 2 and torch running them: the compiled result
must have Python's dtype (opgen.compiler.promotion)."""

from typing import Annotated

import numpy as np
import numpy.typing as npt
import torch

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]
F16 = npt.NDArray[np.float16]
I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
B = npt.NDArray[np.bool_]
T64 = Annotated[torch.Tensor, torch.float64]
T32 = Annotated[torch.Tensor, torch.float32]
T16 = Annotated[torch.Tensor, torch.float16]
TI64 = Annotated[torch.Tensor, torch.int64]
TI32 = Annotated[torch.Tensor, torch.int32]
TB = Annotated[torch.Tensor, torch.bool]


def float_times_ints(x: I64) -> F64:
    return x * 0.5


def torch_float_times_ints(x: TI64) -> T32:
    return x * 0.5


def ints_plus_floats(a: I64, b: F32) -> F64:
    return a + b


def torch_ints_plus_floats(a: TI64, b: T32) -> T32:
    return a + b


def single_with_double(a: F32, b: F64) -> F64:
    return a * b


def torch_single_with_double(a: T32, b: T64) -> T64:
    return a * b


def mask_arithmetic(m: B, x: F32) -> F32:
    return m * x + m


def mask_count(m: B) -> I64:
    return m + 1


def torch_mask_count(m: TB) -> TI64:
    return m + 1


def widths(a: I32, b: I64) -> I64:
    return a - b


def torch_widths(a: TI32, b: TI64) -> TI64:
    return b - a


def ratios(a: I64, b: I64) -> F64:
    return a / b


def torch_ratios(a: TI64, b: TI64) -> T32:
    return a / b


def half_with_single(h: F16, x: F32) -> F32:
    return h + x


def torch_half_with_single(h: T16, x: T32) -> T32:
    return x * h


def where_mixed(m: B, a: I64, b: F32) -> F64:
    return np.where(m, a, b)


def compare_mixed(a: I32, b: F64) -> B:
    return a < b


def scaled_gelu_constant(x: F32) -> F64:
    return np.sqrt(2 / np.pi) * x


def matmul_mixed(a: F32, b: F64) -> F64:
    return a @ b


def bool_tensor_sum(m: TB, x: T32) -> T32:
    return m + x


def int_rows_scaled(x: I32) -> F64:
    return x * 0.25 + 1
