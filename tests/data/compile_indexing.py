"""Functions for tests/test_compile_indexing.py: negative steps, integer-array indexing and the
NumPy/torch promotion rules of Python numbers, compiled and compared with Python."""

from typing import Annotated

import numpy as np
import numpy.typing as npt
import torch

F32 = npt.NDArray[np.float32]
F16 = npt.NDArray[np.float16]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
T32 = Annotated[torch.Tensor, torch.float32]
T16 = Annotated[torch.Tensor, torch.float16]
TI64 = Annotated[torch.Tensor, torch.int64]
TU8 = Annotated[torch.Tensor, torch.uint8]


def reversed_rows(x: F32) -> F32:
    return x[::-1]


def reversed_every_other_column(x: F32) -> F32:
    return x[:, ::-2]


def stepped(x: F32, a: int, b: int, k: int) -> F32:
    return x[a:b:k]


def reversed_into_op(x: F32) -> F32:
    return np.exp(x[::-1, 1:]) * 2.0


def torch_stepped(x: T32, k: int) -> T32:
    return x[::k]


def rows(emb: F32, ids: I64) -> F32:
    return emb[ids]


def torch_rows(emb: T32, ids: TI64) -> T32:
    return emb[ids]


def columns(x: F32, idx: I64) -> F32:
    return x[:, idx]


def last_axis(x: F32, idx: I64) -> F32:
    return x[..., idx]


def listed(x: F32) -> F32:
    return x[[0, -1, 2, 2]]


def row_then_gather(x: F32, i: int, idx: I64) -> F32:
    return x[i, idx]


def gather_of_view(x: F32, idx: I64) -> F32:
    return x[1:, idx, None]


def int_rows(x: I64, idx: I64) -> I64:
    return x[idx] + 1


def torch_apart(x: T32, idx: TI64) -> T32:
    return x[0, :, idx]


def wraps_or_raises(x: U8, k: int) -> U8:
    return x + k


def torch_wraps(x: TU8, k: int) -> TU8:
    return x + k


def half_scaled(x: F16, s: float) -> F16:
    return x * s


def torch_half_scaled(x: T16) -> T16:
    return x * 0.5 + 2.0


def sum_method_numpy(x: F32) -> F32:
    return x[::-1].sum(axis=0)


I32 = npt.NDArray[np.int32]
TI32 = Annotated[torch.Tensor, torch.int32]


def rows_by_int32(emb: F32, ids: I32) -> F32:
    return emb[ids]


def columns_by_int32(x: F32, idx: I32) -> F32:
    return x[1:, idx]


def torch_rows_by_int32(emb: T32, ids: TI32) -> T32:
    return emb[ids]


def rows_by_int16(emb: F32, ids: npt.NDArray[np.int16]) -> F32:
    return emb[ids]


def rows_by_int8(emb: F32, ids: npt.NDArray[np.int8]) -> F32:
    return emb[ids]


def columns_by_uint8(x: F32, ids: npt.NDArray[np.uint8]) -> F32:
    return x[:, ids]


def rows_by_uint16(emb: F32, ids: npt.NDArray[np.uint16]) -> F32:
    return emb[ids]


def rows_by_uint32(emb: F32, ids: npt.NDArray[np.uint32]) -> F32:
    return emb[ids]


B = npt.NDArray[np.bool_]
TB = Annotated[torch.Tensor, torch.bool]


def masked(x: F32, m: B) -> F32:
    """x[mask] with a mask over x's first dims (all of them, some, or none: a 0-d mask)."""
    return x[m]


def masked_rows_then_slice(x: F32, m: B) -> F32:
    """x[mask, :] and x[mask, ...]: the same rows."""
    return x[m, :] + x[m, ...]


def positive(x: F32) -> F32:
    """x[x > 0]: the mask computed in the function."""
    return x[x > 0]


def positive_total(x: F32) -> F32:
    """x[x > 0].sum(axis=0): a reduction of a result whose length is known only at run time."""
    return x[x > 0].sum(axis=0)


def masked_int(x: I64, m: B) -> I64:
    return x[m]


def masked_f64(x: npt.NDArray[np.float64], m: B) -> npt.NDArray[np.float64]:
    return x[m]


def masked_bools(x: B, m: B) -> B:
    return x[m]


def masked_view(x: F32, m: B) -> F32:
    """A mask over a reversed, transposed view."""
    return x[::-1].T[m]


def torch_masked(x: T32, m: TB) -> T32:
    return x[m]


def torch_positive(x: T32) -> T32:
    return x[x > 0] * 2.0
