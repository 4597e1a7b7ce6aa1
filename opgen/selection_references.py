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
    return (np.ascontiguousarray(np.moveaxis(values, -1, int(dim))),
            np.ascontiguousarray(np.moveaxis(order.astype(np.int64), -1, int(dim))))
