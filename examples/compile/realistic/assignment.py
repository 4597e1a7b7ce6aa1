"""Item assignment as people write it: copy, then set what a mask selects (scores[mask] = -np.inf,
logits[logits < t] = 0, y[y < 0] = 0). Python writes the array in place; compiled, the write is a new
array bound to the same name (opgen.masked_fill), which is the same thing because the array was made
here and no other name holds it or a view of it (parameters are copied first)."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]
T32 = Annotated[torch.Tensor, torch.float32]


def relu_by_mask(x: F32) -> F32:
    """ReLU written as a masked write on a copy: y = x.copy(); y[y < 0] = 0."""
    y = x.copy()
    y[y < 0] = 0
    return y


def mask_scores(scores: F32, keep: B) -> F32:
    """Attention-style masking: the scores where keep is false become -inf (keep of the scores' shape,
    or over their leading dims; IndexError where it does not fit)."""
    s = np.copy(scores)
    s[np.logical_not(keep)] = -np.inf
    return s


def threshold_logits(logits: F64, thresh: float) -> F64:
    """Zero the scaled logits under a threshold: np.copy of an arithmetic result (NumPy's result of a
    0-d array is a scalar, which takes no item assignment; its copy is an array)."""
    scaled = np.copy(logits * 2.0)
    scaled[scaled < thresh] = 0.0
    return scaled


def cap_counts(counts: I64, cap: int) -> I64:
    """Counts above a cap set to the cap, then negatives to 0: two writes into one copy."""
    c = counts.copy()
    c[c > cap] = cap
    c[c < 0] = 0
    return c


def suppress_in_loop(x: T32, rounds: int) -> T32:
    """Iterative suppression on a torch tensor: each round halves it and clears what fell under 1 (a
    write in a loop into an op's result, the name rebound each time)."""
    y = x * 1.0
    for _ in range(min(max(rounds, 0), 4)):
        y = y / 2
        y[torch.abs(y) < 1.0] = 0.0
    return y


def flags_off(flags: B, off: B) -> B:
    """A bool array with the positions in off cleared: f[off] = False."""
    f = flags.copy()
    f[off] = False
    return f


def fill_torch(t: T32, level: float) -> T32:
    """torch's masked write on a clone: what exceeds a level becomes -inf (a constant: torch raises
    for a computed float beyond float32's range, which compiled code refuses)."""
    t2 = t.clone()
    t2[t2 > level] = -torch.inf
    return t2
