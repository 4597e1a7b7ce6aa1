"""References of the data-movement ops (numpy.transpose, numpy.reshape, numpy.expand_dims,
numpy.squeeze, numpy.broadcast_to, numpy.tile, numpy.pad, numpy.concatenate, numpy.stack): NumPy itself, with its AxisError (a subclass of ValueError and IndexError)
raised as the ValueError the specs declare; the C++ and Rust shims check the same conditions
(``opgen.spec.shapes.movement_shape``) and raise ValueError too. The results are contiguous
copies, as the kernels write them."""

from __future__ import annotations

import numpy as np

from opgen.spec.shapes import PAD_MODES, pad_pairs
from opgen.arrays import c_order


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


def tile(A: np.ndarray, reps: list[int]) -> np.ndarray:
    """numpy.tile(A, reps) (NumPy's ValueError for a negative rep); its result is already a fresh
    contiguous array (no second copy, which opgen bench would time)."""
    return c_order(np.tile(A, [int(r) for r in reps]))


def pad(array: np.ndarray, pad_width: list[int], mode: str, constant_values: float | int) -> np.ndarray:
    """numpy.pad(array, pad_width, mode, constant_values=...) with pad_width in the pad rule's forms
    (opgen.spec.shapes.pad_pairs: 1 entry, one (before, after) pair, or a pair per dim, which NumPy
    takes as an (ndim, 2) array). constant_values only in mode 'constant': NumPy refuses it with the
    others, where the op ignores it. Every error is NumPy's ValueError."""
    if mode not in PAD_MODES:
        raise ValueError(f"mode '{mode}' is not supported")
    pairs = pad_pairs(pad_width, array.ndim)
    if pairs is None:
        raise ValueError("pad_width needs 1, 2 or 2 * ndim entries")
    # 1 or 2 entries as NumPy broadcasts them itself (a 0-d array too); a pair per dim as (ndim, 2)
    widths = [int(w) for w in pad_width] if len(pad_width) in (1, 2) else np.array(pairs, np.int64).reshape(-1, 2)
    # np.pad's result is a fresh contiguous array: returned as it is (a second copy would be timed)
    if mode == "constant":
        return np.pad(array, widths, mode="constant", constant_values=constant_values)
    return np.pad(array, widths, mode=mode)


def torch_pad(input: np.ndarray, pad: list[int], mode: str, value: float) -> np.ndarray:
    """torch.nn.functional.pad(input, pad, mode, value), mode 'constant' (the only one the spec draws):
    torch's RuntimeErrors (an odd length, more pairs than dims, a crop past a dim's length) as
    ValueError."""
    import torch  # heavy, and only this reference needs it

    if mode != "constant":
        raise ValueError(f"mode '{mode}': only 'constant' is this op's")
    try:
        out = torch.nn.functional.pad(torch.from_numpy(np.array(input, order="C")), [int(p) for p in pad],
                                      mode="constant", value=float(value))
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None
    return np.array(out.numpy(), order="C", copy=True)


def concatenate(arrays: list[np.ndarray], axis: int) -> np.ndarray:
    """numpy.concatenate(arrays, axis) with an int axis (the elements share one dtype)."""
    return _plain(np.concatenate, list(arrays), int(axis))


def stack(arrays: list[np.ndarray], axis: int) -> np.ndarray:
    """numpy.stack(arrays, axis)."""
    return _plain(np.stack, list(arrays), int(axis))
