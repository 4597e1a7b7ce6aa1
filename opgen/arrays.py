"""Array layout helpers shared by the references, the verifier and the benchmarks.

``np.ascontiguousarray`` returns an array of at least one dim: a 0-d array comes back with shape
(1,). A reference or a draw that used it would change a 0-d value's shape, so a kernel's 0-d result
would be compared with a (1,) one and a 0-d draw would never reach a kernel as 0-d. ``c_order``
keeps the shape.
"""

from __future__ import annotations

import numpy as np


def c_order(a) -> np.ndarray:
    """``a`` as a C-contiguous ndarray of the same shape (0-d stays 0-d); no copy when it already is."""
    return np.array(a, order="C", copy=None)
