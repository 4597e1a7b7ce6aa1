"""References of the one-axis reductions (numpy.mean, max, min, argmax, argmin, prod, var, std,
cumsum, any, all; torch.logsumexp) on opgen's native signatures.

A reference is called positionally in signature order, and NumPy's reductions take ``dtype`` or
``out`` in the third place (``keepdims`` is keyword-only in argmax), so each one is wrapped here
and passes its arguments by name. The float sums (mean, var, std, cumsum) and products (prod)
are evaluated in x86's 80-bit long double and rounded once to a's dtype, as
``opgen.references.sum`` does: NumPy adds (multiplies) one after another in a's dtype along a
strided axis, which over the scale stage's 100k-term rows is less accurate than the kernels the
tolerances admit. max, min, argmax, argmin, any and all are exact and are NumPy's own. Errors
are NumPy's: a reduction with no identity over an empty axis raises ValueError (any and all have
one: False and True).
"""

from __future__ import annotations

import numpy as np


def _wide(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.longdouble)


def mean(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    """``numpy.mean(a, axis=axis, keepdims=keepdims)``: an empty axis gives nan."""
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.asarray(np.mean(_wide(a), axis=axis, keepdims=keepdims)).astype(a.dtype)


def max(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:  # noqa: A001 - the op's own name
    """``numpy.max(a, axis=axis, keepdims=keepdims)``; ValueError for an empty axis."""
    return np.asarray(np.max(a, axis=axis, keepdims=keepdims))


def min(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:  # noqa: A001 - the op's own name
    """``numpy.min(a, axis=axis, keepdims=keepdims)``; ValueError for an empty axis."""
    return np.asarray(np.min(a, axis=axis, keepdims=keepdims))


def argmax(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    """``numpy.argmax(a, axis=axis, keepdims=keepdims)`` as int64; ValueError for an empty axis."""
    return np.asarray(np.argmax(a, axis=axis, keepdims=keepdims)).astype(np.int64)


def argmin(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    """``numpy.argmin(a, axis=axis, keepdims=keepdims)`` as int64; ValueError for an empty axis."""
    return np.asarray(np.argmin(a, axis=axis, keepdims=keepdims)).astype(np.int64)


def any(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:  # noqa: A001 - the op's own name
    """``numpy.any(a, axis=axis, keepdims=keepdims)``, a bool tensor: an empty axis gives False."""
    return np.asarray(np.any(a, axis=axis, keepdims=keepdims))


def all(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:  # noqa: A001 - the op's own name
    """``numpy.all(a, axis=axis, keepdims=keepdims)``, a bool tensor: an empty axis gives True."""
    return np.asarray(np.all(a, axis=axis, keepdims=keepdims))


def prod(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    """``numpy.prod(a, axis=axis, keepdims=keepdims)`` multiplied in long double (its exponent
    range, 1e±4932, means no intermediate product overflows or underflows) and rounded once."""
    with np.errstate(all="ignore"):
        return np.asarray(np.prod(_wide(a), axis=axis, keepdims=keepdims)).astype(a.dtype)


def _var(a: np.ndarray, axis: int, ddof: int, keepdims: bool) -> np.ndarray:
    import warnings

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.var(_wide(a), axis=axis, ddof=ddof, keepdims=keepdims))


def var(a: np.ndarray, axis: int, ddof: int, keepdims: bool) -> np.ndarray:
    """``numpy.var(a, axis=axis, ddof=ddof, keepdims=keepdims)``: the two-pass sum of squared
    deviations over max(n - ddof, 0), so ddof >= n gives inf (nan where the sum is 0 or the axis
    empty), as NumPy (which warns)."""
    return _var(a, axis, ddof, keepdims).astype(a.dtype)


def std(a: np.ndarray, axis: int, ddof: int, keepdims: bool) -> np.ndarray:
    """``numpy.std(a, axis=axis, ddof=ddof, keepdims=keepdims)``: sqrt of var, rounded once."""
    with np.errstate(all="ignore"):
        return np.sqrt(_var(a, axis, ddof, keepdims)).astype(a.dtype)


def cumsum(a: np.ndarray, axis: int) -> np.ndarray:
    """``numpy.cumsum(a, axis=axis)`` summed in long double (one after another, as NumPy) and
    rounded once; integer prefixes are NumPy's own, exact and wrapping past the dtype's range."""
    if a.dtype.kind in "iu":
        return np.cumsum(a, axis=axis, dtype=a.dtype)
    with np.errstate(all="ignore"):
        return np.asarray(np.cumsum(_wide(a), axis=axis)).astype(a.dtype)


def logsumexp(input: np.ndarray, dim: int, keepdim: bool) -> np.ndarray:  # noqa: A002 - torch's name
    """``torch.logsumexp(input, dim, keepdim)`` (float64 inputs on float64, float32 on float32)."""
    import torch  # heavy: only the logsumexp spec's runs load it

    return torch.logsumexp(torch.from_numpy(np.array(input, copy=True)), dim, keepdim).numpy()


def _logsumexp_error_scale(input: np.ndarray, dim: int, keepdim: bool) -> np.ndarray:
    """E = max(|max along dim|, |result|, 1): the result is m + log(sum exp(x - m)); a relative
    error e in the sum is an absolute error e in the result, the final addition errs by
    u * |result|, and rounding x - m by u * |m|."""
    x = np.asarray(input, dtype=np.float64)
    with np.errstate(all="ignore"):
        if x.shape[dim] == 0:
            m = np.zeros(np.delete(x.shape, dim) if not keepdim else tuple(1 if i == dim % x.ndim else s
                                                                             for i, s in enumerate(x.shape)))
        else:
            m = np.max(np.where(np.isfinite(x), np.abs(x), 0.0), axis=dim, keepdims=keepdim)
        r = np.abs(logsumexp(x, dim, keepdim))
        r = np.where(np.isfinite(r), r, 0.0)
        return np.maximum(np.maximum(m, r), 1.0)


logsumexp.error_scale = _logsumexp_error_scale  # type: ignore[attr-defined]


# NumPy's own evaluations in a's dtype, for `opgen bench` to time against (`against:` in the
# specs' bench cases): the references above compute in long double, which is slower than NumPy.
def numpy_mean(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    return np.mean(a, axis=axis, keepdims=keepdims)


def numpy_prod(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    return np.prod(a, axis=axis, keepdims=keepdims)


def numpy_var(a: np.ndarray, axis: int, ddof: int, keepdims: bool) -> np.ndarray:
    return np.var(a, axis=axis, ddof=ddof, keepdims=keepdims)


def numpy_std(a: np.ndarray, axis: int, ddof: int, keepdims: bool) -> np.ndarray:
    return np.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
