"""Library calls written as NumPy's and torch's own signatures allow (tests/test_compile_library_calls.py):
defaults left out, arguments by position past the native order, None where the library's default is
None, tuples for int-or-tuple parameters."""

import numpy as np
import numpy.typing as npt
import torch
from torch.nn import functional as F
from typing import Annotated

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
T32 = Annotated[torch.Tensor, torch.float32]
TB = Annotated[torch.Tensor, torch.bool]


def gelu_default(x: T32) -> T32:
    return F.gelu(x)


def gelu_tanh(x: T32) -> T32:
    return F.gelu(x, approximate="tanh")


def normalize_default(x: T32) -> T32:
    return F.normalize(x)


def normalize_keywords(x: T32) -> T32:
    return F.normalize(x, p=2, dim=-1)


def var_ddof_by_position(x: F32) -> F32:
    return np.var(x, 0, None, None, 1)


def sum_dtype_none(x: F32) -> F32:
    return np.sum(x, axis=1, dtype=None)


def mean_keepdims_method(x: F32) -> F32:
    return x.mean(axis=0, keepdims=True)


def where_positional(c: TB, x: T32, y: T32) -> T32:
    return torch.where(c, x, y)


def where_method(c: TB, x: T32, y: T32) -> T32:
    return x.where(c, y)


def clip_method(x: F32) -> F32:
    return x.clip(-0.5, 0.5)


def argsort_axis_default(x: F32) -> I64:
    return np.argsort(x, kind="stable")


def avg_pool_int(x: T32) -> T32:
    return F.avg_pool2d(x, 2)


def max_pool_tuples(x: T32) -> T32:
    return F.max_pool2d(x, (2, 3), stride=1, padding=(1, 0))


def max_pool_1d(x: T32) -> T32:
    return F.max_pool1d(x, 3, 2, 1)


def sub_alpha_one(a: T32, b: T32) -> T32:
    return torch.sub(a, b, alpha=1)


def tril_default(x: T32) -> T32:
    return torch.tril(x)


def reshape_tuple(x: F32) -> F32:
    return x.reshape((2, -1))


def layer_norm_torch_signature(x: T32, w: T32, b: T32) -> T32:
    return F.layer_norm(x, (x.shape[-1],), w, b)


def layer_norm_list_shape(x: T32, w: T32, b: T32, d: int) -> T32:
    return F.layer_norm(x, [d], w, b, 1e-12)


def concatenate_last_axis(a: F32, b: F32) -> F32:
    return np.concatenate([a, b], axis=-1)


def cat_kv_cache(k_cache: T32, k: T32) -> T32:
    return torch.cat((k_cache, k), dim=2)


def stack_default_axis(a: F32, b: F32, c: F32) -> F32:
    return np.stack([a, b, c])


def torch_stack_dim(a: T32, b: T32) -> T32:
    return torch.stack((a, b), dim=1)
