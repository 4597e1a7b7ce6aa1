"""NumPy indexing forms that are compositions of registry ops (opgen.compiler.lowerings), with NumPy's
checks, error kinds and words (NumPy 2.4).

index_pairs: ``x[i, j]`` with two integer index arrays (or lists) over x's first two axes: a 0-d index
checked at once (NumPy takes it as an int), the arrays broadcast together, then each wrapped and
bounds-checked on its axis, and the rows x[i, j, ...] gathered through x's first two axes taken as one
(numpy.take of the flat positions i * n1 + j).
"""

import numpy as np


def _shape_text(shape: list[int]) -> str:
    """A shape as Python shows a tuple: (), (3,), (2, 3)."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(n) for n in shape) + ")"


def _broadcast_shape(a: list[int], b: list[int]) -> list[int]:
    n = max(len(a), len(b))
    out = []
    for i in range(n):
        da = a[i - n + len(a)] if i >= n - len(a) else 1
        db = b[i - n + len(b)] if i >= n - len(b) else 1
        if da != db and da != 1 and db != 1:
            raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes "
                             f"{_shape_text(a)} {_shape_text(b)} ")
        out.append(db if da == 1 else da)
    return out


def _wrapped(index, size: int, axis: int):
    """The indices with negative ones counted from the end; IndexError for the first one out of range."""
    bad = index[(index < -size) | (index >= size)]
    if bad.size > 0:
        raise IndexError(f"index {int(bad[0])} is out of bounds for axis {axis} with size {size}")
    return np.where(index < 0, index + size, index)


def _checked_if_scalar(index, size: int, axis: int):
    if index.ndim == 0:
        return _wrapped(index, size, axis)
    return index


def index_pairs(x, i, j):
    """x[i, j] of a NumPy array."""
    if x.ndim < 2:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but 2 were indexed")
    first = _checked_if_scalar(i, x.shape[0], 0)
    second = _checked_if_scalar(j, x.shape[1], 1)
    shape = _broadcast_shape(first.shape, second.shape)
    n0 = x.shape[0]
    n1 = x.shape[1]
    # bounds are checked over the broadcast indices only (an index broadcast against an empty one is not)
    rows = _wrapped(np.broadcast_to(first, shape), n0, 0)
    cols = _wrapped(np.broadcast_to(second, shape), n1, 1)
    return np.take(x.reshape([n0 * n1] + x.shape[2:]), rows * n1 + cols, axis=0)


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True):
    """np.linspace(start, stop, num, endpoint) of Python numbers, as NumPy 2.4 computes it: float64
    throughout (start and stop converted first), arange(num) times the step (or divided by div and times
    the difference where the step underflows to 0), plus start, the last sample set to stop exactly."""
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    first = float(start)
    last = float(stop)
    delta = last - first
    y = np.arange(0, num, dtype=np.float64)
    if div > 0:
        step = delta / div
        if step == 0:
            y = y / div * delta
        else:
            y = y * step
    else:
        y = y * delta
    samples = np.copy(y + first)  # an array, never a NumPy scalar: written below
    if endpoint and num > 1:
        samples[num - 1] = last
    return samples



def eye(N: int, k: int = 0):
    """np.eye(N, k=k): float64 ones on the k-th diagonal of an N x N array."""
    return eye_rectangular(N, N, k)


def eye_rectangular(N: int, M: int, k: int = 0):
    """np.eye(N, M, k) in float64: ones on the k-th diagonal of an N x M array (a negative N or M is
    NumPy's ValueError, from the zeros)."""
    out = np.zeros((N, M), dtype=np.float64)
    i = 0 if k >= 0 else N if k < -N else -k  # -k only where it cannot overflow (k is any int64)
    while i < N and i + k < M:
        out[i, i + k] = 1.0
        i += 1
    return out
