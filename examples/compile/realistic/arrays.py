"""Array code as people write it: Python numbers with arrays, np.pi, shapes, methods."""

import math

import numpy as np
import numpy.typing as npt
import torch
from torch.nn import functional as F
from typing import Annotated

F32 = npt.NDArray[np.float32]
T32 = Annotated[torch.Tensor, torch.float32]


def gelu_tanh(x: F32) -> F32:
    """GELU's tanh form written out by hand: Python floats stay float32 with a float32 array (NumPy 2)."""
    c = (2.0 / math.pi) ** 0.5
    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x * x * x)))


def scaled_scores(q: T32, k: T32) -> T32:
    """Attention scores scaled by 1/sqrt(d), d read from the shape, then softmax over the last dim
    (the keys' last two dims swapped as a view)."""
    d = q.shape[-1]
    return F.softmax((q @ k.transpose(-2, -1)) * (1.0 / float(d) ** 0.5), dim=-1)


def circle_areas(r: F32) -> F32:
    """np.pi as a value."""
    return np.pi * r * r


def flat_size(x: F32) -> int:
    """n, d = x.shape; x.ndim; x.size."""
    if x.ndim != 2:
        return -1
    n, d = x.shape
    return n * d + x.size


def relu_shift(x: npt.NDArray[np.int64], bias: int) -> npt.NDArray[np.int64]:
    """An int array with a Python int: int64 arithmetic (NumPy wraps), maximum with 0."""
    return np.maximum(x + bias, 0)


def row_norms(x: F32) -> F32:
    """Methods on arrays: x.sum(axis=...) of a square."""
    return (x * x).sum(axis=-1)


def flatten_features(x: F32) -> F32:
    """A batch's feature maps flattened per row, NumPy's method spelling with the shape as arguments:
    x.reshape(x.shape[0], -1) (IndexError for a 0-d x, ValueError for a 0-row batch's unknown dim)."""
    return x.reshape(x.shape[0], -1)


def as_column(x: F32) -> F32:
    """Every element as one column: x.reshape(-1, 1), a single int and a tuple spelling agreeing."""
    a = x.reshape(-1, 1)
    b = x.reshape((-1, 1))
    return a + b


def row_peaks(x: F32) -> list[float]:
    """The largest value of each row, by a for loop over the array's rows (each a view; a 0-d x is
    TypeError, an empty row ValueError, as NumPy raises them)."""
    peaks = []
    for row in x:
        peaks.append(float(row.max()))
    return peaks


def sum_of_rows(t: T32) -> T32:
    """torch: the rows of a tensor added up one by one in a loop (the first row's shape; IndexError for
    no rows, TypeError for a 0-d tensor)."""
    acc = t[0] * 0.0
    for row in t:
        acc = acc + row
    return acc
