"""References of the array-creation ops (specs/numpy/zeros.yaml, ones, full, their _like forms, arange).

The result dtype of zeros, ones, full and arange is no argument of their kernels: it selects the
overload (as a cast's target does), so each overload names the reference for its dtype here, built by
``_for`` from NumPy's own function with that dtype. full_like keeps a's dtype, as NumPy does
(zeros_like and ones_like are no ops of their own: opgen.compiler.creation compiles them as zeros and
ones of a's shape and dtype, whose results do not depend on a's values).
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def zeros(shape: list[int], dtype: str = "float64") -> np.ndarray:
    return np.zeros(tuple(shape), dtype=dtype)


def ones(shape: list[int], dtype: str = "float64") -> np.ndarray:
    return np.ones(tuple(shape), dtype=dtype)


def full(shape: list[int], fill_value: float, dtype: str = "float64") -> np.ndarray:
    return np.full(tuple(shape), fill_value, dtype=dtype)


def full_like(a: np.ndarray, fill_value: float) -> np.ndarray:
    return np.full_like(np.asarray(a), fill_value, order="C")


def arange(start: float, stop: float, step: float, dtype: str = "float64") -> np.ndarray:
    """numpy.arange; its ZeroDivisionError for step 0 is the op's."""
    return np.arange(start, stop, step, dtype=dtype)


def _for(fn: Callable, dtype: str) -> Callable:
    def reference(*args):
        return fn(*args, dtype=dtype)

    reference.__name__ = f"{fn.__name__}_{dtype}"
    reference.__doc__ = f"numpy.{fn.__name__}(..., dtype={dtype})"
    return reference


zeros_float32, zeros_float64, zeros_int64 = (_for(zeros, d) for d in ("float32", "float64", "int64"))
ones_float32, ones_float64, ones_int64 = (_for(ones, d) for d in ("float32", "float64", "int64"))
full_float32, full_float64, full_int64 = (_for(full, d) for d in ("float32", "float64", "int64"))
arange_float32, arange_float64, arange_int64 = (_for(arange, d) for d in ("float32", "float64", "int64"))
