"""Arrays of different dtypes, and Python numbers with integer arrays, as NumPy 2 and torch promote them:
the compiled result has the dtype Python's has (float64 where NumPy says so, float32 where torch does)."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
T32 = Annotated[torch.Tensor, torch.float32]


def gelu_numpy2(x: F32) -> F64:
    """GELU's tanh form as people write it with NumPy: np.sqrt(2 / np.pi) is a NumPy float64, which is
    strong in NumPy 2, so the float32 input gives a float64 result."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x * x * x)))


def share_of_total(counts: I64, total: int) -> F64:
    """Token counts as a share of a total: an int array divided by an int is float64 in NumPy."""
    return counts / (abs(total) + 1)


def scale_pixels(p: I32, gain: float) -> F64:
    """Integer pixel values times a Python float gain: float64 in NumPy 2 (NEP 50)."""
    return p * gain + 0.5


def residual_in_double(x: F32, r: F64) -> F64:
    """A float32 activation added to a float64 residual: float64."""
    return x + 0.1 * r


def length_ratio(a: I64, b: I32) -> F64:
    """int64 and int32 lengths combined (int64), then divided: float64."""
    return (a + b) / (b * b + 1)


def masked_energy(x: F32) -> F32:
    """A boolean mask in arithmetic: bool with float32 is float32."""
    keep = x > 0.5
    return keep * x * x + keep


def positives_weighted(x: T32) -> T32:
    """torch: an int64 tensor times a Python float is float32 (torch's default dtype), not float64."""
    positive = (x > 0).long()
    return positive * 0.5 + x
