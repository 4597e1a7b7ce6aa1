"""Writes through basic indexing as people write them: a row, a column block, a reversed slice, an
element in a loop, a buffer filled row by row, counts bumped with +=. Python writes the array in
place; compiled, each write is a new array bound to the same name (opgen.assign_region), which is
the same thing because the array was made here and no other name holds it or a view of it. Where
the value does not fit the region (a shape that does not broadcast, an index out of range), the
compiled function raises what Python raises."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]
T32 = Annotated[torch.Tensor, torch.float32]


def set_first_row(x: F32, v: float) -> F32:
    """The first row (or element) of a copy set to a number: y[0] = v (IndexError for a 0-d or empty x)."""
    y = x.copy()
    y[0] = v
    return y


def clear_leading_columns(x: F64, k: int) -> F64:
    """The first k columns of a copy cleared: y[:, :k] = 0.0 (k clamped as a slice clamps it)."""
    y = x.copy()
    y[:, :k] = 0.0
    return y


def pad_batch(x: F32, n: int) -> F64:
    """A fixed-size batch buffer filled from the rows there are: out = np.zeros((n, d)); out[:m] = x[:m]
    (a float32 value stored into float64; ValueError where x's rows are not d long)."""
    d = x.shape[-1]
    out = np.zeros((max(n, 0), d))
    m = min(max(n, 0), x.shape[0])
    out[:m] = x[:m]
    return out


def reversed_copy(x: F64) -> F64:
    """A copy written back to front through a reversed slice: y[::-1] = x."""
    y = np.copy(x)
    y[::-1] = x
    return y


def set_diagonal(x: F32, v: float) -> F32:
    """The diagonal of a copy set element by element in a loop: y[i, i] = v."""
    y = x.copy()
    for i in range(min(y.shape[0], y.shape[1])):
        y[i, i] = v
    return y


def rows_by_loop(x: F64) -> F64:
    """An output buffer filled row by row: out[i] = 2 * x[i] + 1."""
    out = np.zeros(x.shape)
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i] + 1.0
    return out


def shift_right(x: F32) -> F32:
    """A sequence shifted by one along its last axis, the first position zeroed (a write whose value is
    a view of the same array: Python copies overlapping memory first, so the values move whole)."""
    y = x.copy()
    y[..., 1:] = y[..., :-1]
    y[..., 0] = 0.0
    return y


def bucket_counts(ids: I64, buckets: int) -> I64:
    """A histogram by += on an int array: counts[i % buckets] += 1 for every id."""
    counts = np.zeros(max(buckets, 1), dtype=np.int64)
    flat = ids.reshape(-1)
    for i in range(flat.shape[0]):
        counts[int(flat[i]) % max(buckets, 1)] += 1
    return counts


def last_flag_on(flags: B) -> B:
    """The last position of every row of a bool array set: f[..., -1] = True."""
    f = flags.copy()
    f[..., -1] = True
    return f


def zero_first_position(t: T32) -> T32:
    """torch: the first position of every sequence cleared on a clone, then the second row replaced by
    the first: t2[:, 0] = 0.0; t2[1] = t2[0]."""
    t2 = t.clone()
    t2[:, 0] = 0.0
    t2[1] = t2[0]
    return t2
