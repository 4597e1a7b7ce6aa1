"""Casts compiled by tests/test_casts.py: NumPy's astype and torch's to/float/long/half/bool, each
compared with Python on the same inputs."""

from typing import Annotated

import numpy as np
import numpy.typing as npt
import torch

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


def astype_f64(x: F32) -> F64:
    return x.astype(np.float64)


def astype_f16_then_back(x: F64) -> F32:
    return x.astype(np.float16).astype(np.float32)


def astype_by_name(x: F32) -> I64:
    return x.astype("int64")


def astype_dtype_keyword(x: I64) -> F32:
    return x.astype(dtype=np.float32)


def astype_own_dtype(x: F32) -> F32:
    return x.astype(np.float32) * 2.0


def mask_as_float(x: F32) -> F32:
    return (x > 0).astype(np.float32)


def tensor_to_float64(x: Annotated[torch.Tensor, torch.float32]) -> Annotated[torch.Tensor, torch.float64]:
    return x.to(torch.float64)


def tensor_methods(x: Annotated[torch.Tensor, torch.float32]) -> Annotated[torch.Tensor, torch.float32]:
    return x.long().float() + x.half().float() + x.bool().float() + x.double().float()


def tensor_int_to_bfloat16(x: Annotated[torch.Tensor, torch.int64]) -> Annotated[torch.Tensor, torch.float32]:
    return x.to(dtype=torch.bfloat16).float()
