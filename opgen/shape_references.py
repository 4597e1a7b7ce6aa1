"""References of the data-movement ops (numpy.transpose, numpy.reshape, numpy.expand_dims,
numpy.squeeze, numpy.broadcast_to, numpy.concatenate, numpy.stack): NumPy itself, with its AxisError (a subclass of ValueError and IndexError)
raised as the ValueError the specs declare; the C++ and Rust shims check the same conditions
(``opgen.spec.shapes.movement_shape``) and raise ValueError too. The results are contiguous
copies, as the kernels write them."""

from __future__ import annotations

import numpy as np


def _plain(fn, *args):
    try:
        return np.array(fn(*args), order="C", copy=True)  # a copy, as the kernel writes one (and bench times)
    except np.exceptions.AxisError as exc:
        raise ValueError(str(exc)) from None


def transpose(a: np.ndarray, axes: list[int]) -> np.ndarray:
    """numpy.transpose(a, axes)."""
    return _plain(np.transpose, a, list(axes))


def reshape(a: np.ndarray, shape: list[int]) -> np.ndarray:
    """numpy.reshape(a, shape), in C order."""
    return _plain(np.reshape, a, list(shape))


def expand_dims(a: np.ndarray, axis: int) -> np.ndarray:
    """numpy.expand_dims(a, axis)."""
    return _plain(np.expand_dims, a, int(axis))


def squeeze(a: np.ndarray, axis: int) -> np.ndarray:
    """numpy.squeeze(a, axis)."""
    return _plain(np.squeeze, a, int(axis))


def broadcast_to(a: np.ndarray, shape: list[int]) -> np.ndarray:
    """numpy.broadcast_to(a, shape), written out (NumPy's own result is a read-only view)."""
    return _plain(np.broadcast_to, a, tuple(int(d) for d in shape))


def concatenate(arrays: list[np.ndarray], axis: int) -> np.ndarray:
    """numpy.concatenate(arrays, axis) with an int axis (the elements share one dtype)."""
    return _plain(np.concatenate, list(arrays), int(axis))


def stack(arrays: list[np.ndarray], axis: int) -> np.ndarray:
    """numpy.stack(arrays, axis)."""
    return _plain(np.stack, list(arrays), int(axis))
