"""Which library's rules an array follows: NumPy's or torch's.

A parameter annotated ``npt.NDArray[...]`` is a NumPy array and one annotated
``Annotated[torch.Tensor, ...]`` a torch tensor (the manifest records it per parameter as
``flavor``); every op result takes the flavor of its array arguments, or of its module
(``np.zeros`` is NumPy's) where it has none. The two libraries agree on most of what compiles
and differ where this module says: a negative slice step (NumPy reverses, torch raises
ValueError), type promotion (opgen.compiler.promotion: a Python float meeting an integer array is
float64 in NumPy 2 and float32 in torch), a Python int outside an integer dtype's range (NumPy's
OverflowError, torch wraps it), and a Python number meeting a half-precision array (NumPy rounds the
number to the half dtype first; torch computes in float32 and rounds once).
"""

from __future__ import annotations

import numpy as np

from opgen.spec.dtypes import numpy_dtype

NUMPY, TORCH = "numpy", "torch"
LIBRARY = {NUMPY: "NumPy", TORCH: "torch"}


class FlavorMix(ValueError):
    """Arrays of both libraries meet in one op."""


def combine(flavors) -> str | None:
    """The one flavor of several values (None where none has one); FlavorMix where they differ."""
    found = {f for f in flavors if f is not None}
    if len(found) > 1:
        raise FlavorMix("a NumPy array and a torch tensor meet here: NumPy converts the tensor to an array, "
                        "torch refuses or converts the array, depending on the op")
    return found.pop() if found else None


def of_module(op: str) -> str | None:
    """The flavor of an array an op makes from no array (``numpy.zeros``): its module's."""
    root = op.split(".", 1)[0]
    return root if root in LIBRARY else None


def exact_in_half(value: float, dtype: str) -> bool:
    """Whether a Python number is exactly a value of a half dtype: then rounding it first (NumPy) and
    computing in float32 (torch) give the same result."""
    if dtype == "float16":
        return float(np.float16(value)) == value or value != value
    return float(np.asarray(value, dtype=numpy_dtype("bfloat16"))) == value or value != value
