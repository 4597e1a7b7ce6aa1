"""einsum calls compiled by tests/test_compile_einsum.py: the contractions attention code writes."""

from typing import Annotated

import numpy as np
import numpy.typing as npt
import torch

F32 = npt.NDArray[np.float32]
T32 = Annotated[torch.Tensor, torch.float32]


def attention_scores(q: T32, k: T32) -> T32:
    return torch.einsum("bhqd,bhkd->bhqk", q, k)


def attention_values(p: T32, v: T32) -> T32:
    return torch.einsum("bhqk,bhkd->bhqd", p, v)


def batched_matmul(a: F32, b: F32) -> F32:
    return np.einsum("bij,bjk->bik", a, b)


def matmul(a: F32, b: F32) -> F32:
    return np.einsum("ij,jk->ik", a, b)


def row_dots(a: F32, b: F32) -> F32:
    return np.einsum("bi,bi->b", a, b)


def dot(a: F32, b: F32) -> F32:
    return np.einsum("i,i->", a, b)


def implicit_transposed_product(a: F32, b: F32) -> F32:
    return np.einsum("ji,jk", a, b)  # implicit output: "ik"


def heads_last(q: T32, k: T32) -> T32:
    return torch.einsum("bqhd,bkhd->bhqk", q, k)


def outer(a: F32, b: F32) -> F32:
    return np.einsum("i,j->ij", a, b)
