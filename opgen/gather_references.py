"""References of the gathers (numpy.take, numpy.take_along_axis, torch.index_select): NumPy itself, with an int axis and
take's mode="raise", its AxisError (a subclass of ValueError and IndexError) raised as the ValueError
the specs declare. The C++ and Rust shims check the same conditions in the same words
(``opgen.spec.shapes.gather_shape`` and ``gather_index_error``) before the kernel runs. The results
are contiguous copies, as the kernels write them (np.take with 0-d indices returns a NumPy scalar:
here a 0-d array). torch.index_select is torch's own, its RuntimeErrors for the index values and
counts raised as the IndexError the spec declares (torch raises IndexError for the rest)."""

from __future__ import annotations

import numpy as np

from opgen.spec.shapes import assign_region_shape


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


def index_select(input: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """torch.index_select(input, dim, index): every index in [0, n) (negative ones are errors); torch's
    RuntimeError (an index out of range, a count other than 1 for a 0-d input, an index into an
    empty dim) as IndexError."""
    import torch  # heavy, and only this reference needs it

    try:
        # (np.array, not np.ascontiguousarray: that makes a 0-d array 1-d)
        out = torch.index_select(torch.from_numpy(np.array(input, order="C")), int(dim),
                                 torch.from_numpy(np.array(index, order="C")))
    except RuntimeError as exc:
        raise IndexError(str(exc)) from None
    return np.array(out.numpy(), order="C", copy=True)


def boolean_mask(x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NumPy's x[mask] with a bool mask over x's first mask.ndim dims, and its length as a 0-d int64
    (the count result opgen.boolean_mask reports; the kernel's values past it are not compared).
    NumPy's IndexError for a mask of another shape is raised as it is."""
    values = np.array(x[np.asarray(mask, dtype=bool)], order="C", copy=True)
    return values, np.array(values.shape[0], dtype=np.int64)


def masked_fill(x: np.ndarray, mask: np.ndarray, value) -> np.ndarray:
    """NumPy's item assignment x[mask] = value on a copy of x (the functional update opgen compile makes of
    it): value cast to x's dtype as NumPy's setitem casts it; NumPy's IndexError for a mask of another
    shape is raised as it is."""
    out = np.array(x, order="C", copy=True)
    out[np.asarray(mask, dtype=bool)] = value
    return out


def assign_region(x: np.ndarray, value: np.ndarray, starts: list[int], steps: list[int]) -> np.ndarray:
    """NumPy's basic-index item assignment x[region] = value on a copy of x (the functional update opgen
    compile makes of it): the region along dim d is starts[d] + i*steps[d] for i in range(value.shape[d])
    (a negative step walks backwards); ValueError (opgen.spec.shapes.assign_region_shape, its words) for a
    region that does not lie in x."""
    x, value = np.asarray(x), np.asarray(value)
    _, err = assign_region_shape(x.shape, value.shape, starts, steps)
    if err is not None:
        raise ValueError(err)
    out = np.array(x, order="C", copy=True)
    if x.ndim == 0:
        out[()] = value[()]
        return out
    if value.size == 0:  # a count of 0 along some dim: nothing set
        return out
    out[np.ix_(*[int(s) + int(t) * np.arange(c, dtype=np.int64) for s, t, c in zip(starts, steps, value.shape)])] = value
    return out
