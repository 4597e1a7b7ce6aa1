"""References of opgen.cast: NumPy's ``ndarray.astype`` to each target dtype, one function per target.

An overload of opgen.cast is one (source, target) pair whose target dtype is not a kernel argument
(see specs/opgen/cast.yaml), so each overload names the reference for its target: ``to_float16(x)``
is ``x.astype(np.float16)``. NumPy (with ml_dtypes for bfloat16) rounds every conversion once, from
the source value itself: float64 -> float16 and int64 -> bfloat16 included, where torch's CPU casts
go through float32 and can round twice (torch.tensor(1 + 2**-11 + 2**-40, dtype=torch.float64)
.to(torch.float16) is 1.0, NumPy's 1.001); the spec follows NumPy.
"""

from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from opgen.spec.dtypes import DTYPES
from opgen.arrays import c_order


def astype(x: np.ndarray, dtype: str) -> np.ndarray:
    """``x.astype(dtype)``, a new contiguous array. NumPy warns on float -> int of nan or out-of-range
    values (undefined, which the spec's domains never draw) and on overflow to inf (defined: inf);
    the reference does not warn for the latter, which is a value, not an error."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "overflow encountered in cast", RuntimeWarning)
        return c_order(np.asarray(x).astype(DTYPES[dtype].np))


def _to(name: str) -> Callable[[np.ndarray], np.ndarray]:
    def reference(x: np.ndarray) -> np.ndarray:
        return astype(x, name)

    reference.__name__ = f"to_{name}"
    reference.__doc__ = f"x.astype({name}), as NumPy converts (rounded once)."
    return reference


to_float32 = _to("float32")
to_float64 = _to("float64")
to_float16 = _to("float16")
to_bfloat16 = _to("bfloat16")
to_int64 = _to("int64")
to_int32 = _to("int32")
to_bool = _to("bool")
