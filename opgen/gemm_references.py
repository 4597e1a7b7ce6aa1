"""References of ``torch.addmm`` (GEMM with alpha and beta, BLAS rules): an accurate NumPy
reference, its error scale, and the torch call ``opgen bench`` times the kernels against.

torch.addmm(input, mat1, mat2, *, beta=1, alpha=1) = beta * input + alpha * (mat1 @ mat2), where
(as BLAS's gemm and torch on CPU) beta == 0 ignores input (nan and inf in it do not propagate),
alpha == 0 ignores the product (nan and inf in mat1 and mat2 do not propagate), and k == 0
gives beta * input. torch takes beta and alpha by keyword only; these functions take them as
the last two positional parameters, in the spec's order."""

from __future__ import annotations

import numpy as np

from opgen.spec.shapes import dot_shape, dot_terms

# Above this many multiply-adds a float64 product is summed in float64 (BLAS) rather than in
# long double (NumPy's long-double matmul has no BLAS and is slow at the scale stage's sizes);
# the float64 tolerance allows for the reference's own k-term rounding there.
_LONGDOUBLE_MACS = 2.0e7


def _wide(dtype: np.dtype, macs: float) -> type:
    if dtype == np.float32 or dtype == np.float16:
        return np.float64
    if dtype == np.float64 and macs > _LONGDOUBLE_MACS:
        return np.float64
    return np.longdouble


def addmm(input: np.ndarray, mat1: np.ndarray, mat2: np.ndarray, beta: float = 1.0,
          alpha: float = 1.0) -> np.ndarray:
    """Reference of ``torch.addmm``: beta * input + alpha * (mat1 @ mat2) for 2-d operands, computed
    in float64 for float32 inputs (long double for float64 ones) and rounded once to the inputs'
    dtype, with the BLAS rules for beta == 0, alpha == 0 and k == 0."""
    input, mat1, mat2 = (np.asarray(a) for a in (input, mat1, mat2))
    if mat1.ndim != 2 or mat2.ndim != 2 or mat1.shape[1] != mat2.shape[0]:
        raise ValueError(f"addmm needs mat1 (m, k) and mat2 (k, n), got {mat1.shape} and {mat2.shape}")
    m, k = mat1.shape
    n = mat2.shape[1]
    dtype = np.result_type(input, mat1, mat2, np.float32)
    wide = _wide(dtype, float(m) * n * k)
    beta, alpha = float(beta), float(alpha)
    out = np.zeros((m, n), dtype=wide)
    with np.errstate(invalid="ignore", over="ignore"):
        if alpha != 0.0 and k > 0:
            out = wide(alpha) * (mat1.astype(wide) @ mat2.astype(wide))
        if beta != 0.0:
            out = out + wide(beta) * np.broadcast_to(input, (m, n)).astype(wide)
    return np.asarray(out, dtype=dtype)


def _addmm_error_scale(input: np.ndarray, mat1: np.ndarray, mat2: np.ndarray, beta: float = 1.0,
                       alpha: float = 1.0) -> np.ndarray:
    """The magnitude the forward error of addmm is proportional to, per output element (float64):
    |beta| * |input| + |alpha| * (|mat1| @ |mat2|), without the input term when beta == 0 and
    without the product term when alpha == 0 (what those operands hold is ignored then). A k-term
    sum in any order errs by up to about k*u times the product term, and the scaling by alpha and
    beta and the final addition by a few u of the whole."""
    input, mat1, mat2 = (np.asarray(a) for a in (input, mat1, mat2))
    m, n = mat1.shape[0], mat2.shape[1]
    beta, alpha = float(beta), float(alpha)
    scale = np.zeros((m, n), dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if alpha != 0.0 and mat1.shape[1] > 0:
            scale = abs(alpha) * (np.abs(mat1.astype(np.float64)) @ np.abs(mat2.astype(np.float64)))
        if beta != 0.0:
            scale = scale + abs(beta) * np.abs(np.broadcast_to(input, (m, n)).astype(np.float64))
    return scale


addmm.error_scale = _addmm_error_scale  # type: ignore[attr-defined]


def torch_addmm(input: np.ndarray, mat1: np.ndarray, mat2: np.ndarray, beta: float = 1.0,
                alpha: float = 1.0) -> np.ndarray:
    """What ``opgen bench`` times the kernels against: torch.addmm on tensors sharing the inputs'
    memory (beta and alpha by keyword, as torch takes them)."""
    # torch (seconds to import) only in the functions that use it: numpy ones must not wait for it
    import torch

    t = [torch.from_numpy(np.asarray(a)) for a in (input, mat1, mat2)]
    return torch.addmm(t[0], t[1], t[2], beta=float(beta), alpha=float(alpha)).numpy()


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Reference of ``numpy.dot(a, b)`` (NumPy 2): a 0-d operand multiplies elementwise; otherwise a's
    last dim is contracted with b's second-to-last (its only one when b is 1-D), out's shape
    a.shape[:-1] + b.shape[:-2] + b.shape[-1:]. ValueError in the words of opgen.spec.shapes.dot_shape
    (NumPy's "shapes (2,3) and (4,) not aligned: 3 (dim 1) != 4 (dim 0)") for lengths that differ, as
    the shims raise it. A 0-d operand is IEEE multiplication, nan * 0 = nan (NumPy's own np.dot hands
    a float scalar to BLAS's scal, which in some BLAS builds writes 0 for alpha == 0). float32 is
    computed in float64 and float64 in long double (in float64, BLAS,
    above _LONGDOUBLE_MACS multiply-adds), each result rounded once; int64 in uint64, wrapping modulo
    2**64 as NumPy's int64 products and sums do (exact, so in any order). A contiguous array, 0-d
    where NumPy returns a scalar."""
    a, b = np.asarray(a), np.asarray(b)
    shape, err = dot_shape(a.shape, b.shape)
    if err is not None:
        raise ValueError(err)
    if a.ndim == 0 or b.ndim == 0:  # IEEE multiplication (nan * 0 is nan): np.dot's BLAS scal may give 0 there
        with np.errstate(all="ignore"):
            wide = np.uint64 if a.dtype.kind in "iu" else np.float64
            out = np.multiply(a.astype(wide), b.astype(wide)).astype(a.dtype)
    elif a.dtype.kind in "iu":
        out = np.dot(a.astype(np.uint64), b.astype(np.uint64)).astype(a.dtype)
    else:
        wide = _wide(a.dtype, float(np.prod(shape, dtype=np.float64)) * dot_terms(a.shape, b.shape))
        with np.errstate(all="ignore"):
            out = np.dot(a.astype(wide), b.astype(wide)).astype(a.dtype)
    return np.array(out, dtype=a.dtype, order="C", copy=True).reshape(shape)
