"""References of the vector norms (torch.linalg.vector_norm over one dim) on opgen's native
signature ``(x, ord, dim, keepdim)``.

``vector_norm`` is torch's contract evaluated in x86's 80-bit long double and rounded once to x's
dtype: |x|^p, their sum and the p-th root are all formed in long double (its exponent range,
1e+-4932, means nothing over- or underflows on the inputs the spec draws), so the reference is
more accurate than torch's own float32 evaluation (which raises |x| to the p and sums in float32)
and the tolerance bounds the kernel alone. The special orders are torch's: ord inf is max |x|,
-inf min |x| (a nan anywhere gives nan for both), 0 the count of nonzeros (nan counts: nan != 0),
1 sum |x|, 2 sqrt(sum x^2); any other p is (sum |x|^p)^(1/p), so for p < 0 a zero in the row
makes |0|^p = inf and the result 0, and an inf contributes |inf|^p = 0. An empty dim gives 0 for
ord >= 0 (an empty sum) and raises ValueError for ord < 0 or ord = inf (torch raises
RuntimeError: "the operation does not have an identity"; the spec declares ValueError, the
built-in type the gate matches by name).

``torch_vector_norm`` is torch's own evaluation, for ``opgen bench`` to time against and for the
tests to compare with.

``norm`` is ``numpy.linalg.norm(x, axis=axis, keepdims=keepdims)`` with ord=None on opgen's native
signature ``(x, axis, keepdims)``: the 2-norm sqrt(sum x^2) along one axis, the same long-double
evaluation as ``vector_norm`` at ord 2 (an empty axis gives 0). NumPy's own evaluation squares and
sums in x's dtype (float32 squares over- and underflow; along a strided axis its sum runs one
element after another), so the reference is more accurate than NumPy and the tolerance bounds the
kernel alone. An axis out of range is NumPy's AxisError (a ValueError), and a 0-d x has no axis
at all (NumPy: axis 0 is out of bounds for an array of dimension 0). ``numpy_norm`` is NumPy's own
evaluation, for ``opgen bench`` to time against.
"""

from __future__ import annotations

import math

import numpy as np

from opgen.arrays import c_order


def _check(a: np.ndarray, ord: float, dim: int) -> int:
    nd = a.ndim
    if nd == 0:
        if dim not in (0, -1):
            raise ValueError(f"dim {dim} is out of range for a 0-d tensor")
        return 1
    if not -nd <= dim < nd:
        raise ValueError(f"dim {dim} is out of range for a {nd}-d tensor")
    n = a.shape[dim]
    if n == 0 and (ord < 0 or ord == math.inf):
        raise ValueError(f"linalg.vector_norm cannot compute the {ord} norm on the empty dimension {dim}: "
                         "the operation does not have an identity")
    return n


def vector_norm(x: np.ndarray, ord: float, dim: int, keepdim: bool) -> np.ndarray:  # noqa: A002 - torch's name
    """``torch.linalg.vector_norm(x, ord, dim, keepdim)`` in long double, rounded once to x's dtype."""
    a = np.asarray(x)
    _check(a, ord, dim)
    ord = float(ord)
    if a.ndim == 0:  # torch: a 0-d tensor reduces over dim 0 / -1 as a one-element row
        a = a.reshape(1)
        dim, keepdim = 0, False
    dim %= a.ndim
    # The reduced dim last and contiguous, so that NumPy sums it pairwise (along a strided dim it
    # adds one row after another): the reference's own error stays ~log2(n) long-double ulps.
    w = c_order(np.moveaxis(np.abs(a.astype(np.longdouble)), dim, -1))
    with np.errstate(all="ignore"):
        if ord == math.inf:
            r = np.max(w, axis=-1)
        elif ord == -math.inf:
            r = np.min(w, axis=-1)
        elif ord == 0:
            r = np.sum((w != 0).astype(np.longdouble), axis=-1)
        elif ord == 1:
            r = np.sum(w, axis=-1)
        elif ord == 2:
            r = np.sqrt(np.sum(w * w, axis=-1))
        else:
            p = np.longdouble(ord)
            r = np.sum(w ** p, axis=-1) ** (np.longdouble(1) / p)
    r = np.asarray(r)
    if keepdim:
        r = np.expand_dims(r, dim)
    return r.astype(a.dtype)


def torch_vector_norm(x: np.ndarray, ord: float, dim: int, keepdim: bool) -> np.ndarray:  # noqa: A002
    """torch's own ``torch.linalg.vector_norm`` in x's dtype (RuntimeError turned into ValueError)."""
    import torch  # heavy: only the vector_norm spec's runs load it

    try:
        return torch.linalg.vector_norm(torch.from_numpy(np.array(x, copy=True)), ord, dim, keepdim).numpy()
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None


def norm(x: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    """``numpy.linalg.norm(x, axis=axis, keepdims=keepdims)`` (ord=None: the 2-norm along one axis) in
    long double, rounded once to x's dtype."""
    a = np.asarray(x)
    if not -a.ndim <= axis < a.ndim:  # NumPy's check, and its error (0-d included)
        raise np.exceptions.AxisError(axis, a.ndim)
    return vector_norm(a, 2.0, axis, keepdims)


def numpy_norm(x: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    """NumPy's own ``numpy.linalg.norm(x, axis=axis, keepdims=keepdims)`` in x's dtype."""
    return np.asarray(np.linalg.norm(x, axis=axis, keepdims=keepdims))
