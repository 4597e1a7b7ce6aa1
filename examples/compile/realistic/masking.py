"""Boolean-mask indexing as people write it: keep what passes a test, then return or reduce it
(x[mask], x[x > 0], emb[valid] on the first axis; the result's length depends on the data)."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
T32 = Annotated[torch.Tensor, torch.float32]


def positive_values(x: F32) -> F32:
    """The positive entries of an array in C order, flattened: x[x > 0]."""
    return x[x > 0]


def sum_of_positive(x: F32) -> F32:
    """x[x > 0].sum(axis=0): the total of the positive activations, without a where."""
    return x[x > 0].sum(axis=0)


def mean_of_positive(x: F32) -> F32:
    """The mean of the positive values, 0 when there are none (a sparsity statistic)."""
    pos = x[x > 0]
    return pos.sum(axis=0) / float(max(pos.size, 1))


def confident_tokens(emb: F32, scores: F32, threshold: float) -> F32:
    """The rows of (tokens, dim) embeddings whose score passes a threshold: emb[scores >= threshold]
    (a mask over the first axis of a 2-D array; IndexError where the lengths differ)."""
    return emb[scores >= threshold]


def drop_padding(ids: I64, attention: I64) -> I64:
    """Token ids without the padding: ids[attention == 1]."""
    return ids[attention == 1]


def positive_tensor(t: T32) -> T32:
    """torch: t[t > 0] on a float32 tensor, then doubled."""
    return t[t > 0] * 2.0


def keep_mask(valid: npt.NDArray[np.bool_], padding: npt.NDArray[np.bool_], forced: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Positions kept: valid and not padding, or forced (|, & and ~ of bool arrays)."""
    return (valid & ~padding) | forced
