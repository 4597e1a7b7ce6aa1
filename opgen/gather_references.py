"""References of the gathers (numpy.take, numpy.take_along_axis): NumPy itself, with an int axis and
take's mode="raise", its AxisError (a subclass of ValueError and IndexError) raised as the ValueError
the specs declare. The C++ and Rust shims check the same conditions in the same words
(``opgen.spec.shapes.gather_shape`` and ``gather_index_error``) before the kernel runs. The results
are contiguous copies, as the kernels write them (np.take with 0-d indices returns a NumPy scalar:
here a 0-d array)."""

from __future__ import annotations

import numpy as np


def _plain(fn, *args, **kwargs):
    try:
        return np.array(fn(*args, **kwargs), order="C", copy=True)
    except np.exceptions.AxisError as exc:
        raise ValueError(str(exc)) from None


def take(a: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """numpy.take(a, indices, axis=axis) (mode="raise": negative indices count from the end)."""
    return _plain(np.take, a, indices, axis=int(axis))


def take_along_axis(arr: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """numpy.take_along_axis(arr, indices, axis=axis)."""
    return _plain(np.take_along_axis, arr, indices, axis=int(axis))
