"""References of ops that select elements and return where they were: torch.topk, and
torch.max/torch.min along a dim, each a (values, indices) pair.

torch leaves the order of tied elements unspecified; these references fix it as ONNX TopK does
(the lower index first), which is one of torch's valid answers. NaN counts as larger than every
number, as in torch. torch's checks raise IndexError for an axis out of range (as torch) and for
k outside [0, n] (torch: RuntimeError "selected index k out of range"; opgen's error kinds have
no RuntimeError, and an index out of range is what it is).
"""

from __future__ import annotations

import numpy as np

from opgen.spec.shapes import topk_shape
from opgen.arrays import c_order


def selection_order(x: np.ndarray, largest: bool) -> np.ndarray:
    """Indices that sort ``x`` along its last axis, largest first (or smallest first), NaN counting
    as the largest, ties in index order: a stable sort on a key that reverses the order for
    ``largest`` without overflow (``~x`` for integers, ``-x`` for floats)."""
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        key = np.where(nan, 0, x)
        if largest:
            # lexsort sorts by its last key first: NaNs first, then descending values, then index
            return np.lexsort((-key, ~nan), axis=-1)
        return np.lexsort((key, nan), axis=-1)
    key = ~x if largest else x
    return np.argsort(key, axis=-1, kind="stable")


def topk(x: np.ndarray, k: int, dim: int, largest: bool, sorted_: bool) -> tuple[np.ndarray, np.ndarray]:
    """torch.topk(x, k, dim, largest, sorted) with ties broken by the lower index. ``sorted`` false
    returns the same order: torch allows any order then, and a fixed one is checkable."""
    x = np.asarray(x)
    shape, why = topk_shape(x.shape, int(dim), int(k))
    if why is not None:
        raise IndexError(why)
    if x.ndim == 0:  # one element; torch returns it whether k is 0 or 1
        return x.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(x, int(dim), -1)
    order = selection_order(moved, bool(largest))[..., :int(k)]
    values = np.take_along_axis(moved, order, axis=-1)
    return (c_order(np.moveaxis(values, -1, int(dim))),
            c_order(np.moveaxis(order.astype(np.int64), -1, int(dim))))


def _extreme_along(x, dim: int, keepdim: bool, arg, name: str):
    """(values, indices) of torch.max(x, dim) / torch.min(x, dim): NumPy's argmax/argmin give the
    first index of the extreme value, and the first nan's where a row has one (both stop at the first
    nan), exactly torch's CPU choice; the value is the element at that index (its zero sign kept)."""
    x = np.asarray(x)
    nd = max(x.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    ax = dim % x.ndim
    if x.shape[ax] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {ax} to have non-zero size.")
    idx = arg(x, axis=ax, keepdims=True)
    values = np.take_along_axis(x, idx, axis=ax)
    if not keepdim:
        values, idx = np.squeeze(values, axis=ax), np.squeeze(idx, axis=ax)
    return np.array(values, order="C"), np.array(idx, dtype=np.int64, order="C")  # ascontiguousarray makes 0-d 1-d


def max_dim(input, dim: int, keepdim: bool = False):
    """torch.max(input, dim, keepdim): the largest element along dim and its first index."""
    return _extreme_along(input, dim, keepdim, np.argmax, "max")


def min_dim(input, dim: int, keepdim: bool = False):
    """torch.min(input, dim, keepdim): the smallest element along dim and its first index."""
    return _extreme_along(input, dim, keepdim, np.argmin, "min")
