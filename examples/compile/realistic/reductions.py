"""Reductions as inference code writes them: over the whole array (no axis), with the 0-d result
read as a Python number (float(), int(), bool(), .item()) or tested in an `if`."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
T32 = Annotated[torch.Tensor, torch.float32]


def l2_norm(x: F32) -> float:
    """An embedding's L2 norm as a Python float (to log it, or compare it with a threshold)."""
    return float(np.sqrt((x * x).sum()))


def standardize(x: F32) -> F32:
    """Global mean/std normalisation of a feature map (one mean and one std for every element)."""
    return (x - x.mean()) / (x.std() + 1e-6)


def greedy_token(logits: F32) -> int:
    """Greedy decoding: the index of the largest logit (into the flattened array), as a Python int."""
    return int(np.argmax(logits))


def flat_argmin(x: F32) -> int:
    """The method form: the flat position of the smallest value."""
    return int(x.argmin())


def peak_to_peak(x: F32) -> float:
    """A signal's range, max minus min over every element (an empty signal has none: ValueError)."""
    return float(x.max() - x.min())


def mean_confidence(probs: F32) -> float:
    """The average probability, read with .item() as logging code does."""
    return probs.mean().item()


def total_energy(x: F32) -> float:
    """axis=None spelled out: the sum of squares over every element."""
    return float(np.sum(x * x, axis=None))


def scale_product(scales: F32) -> float:
    """The product of per-layer scale factors (1 for none)."""
    return float(np.prod(scales))


def is_saturated(x: F32) -> bool:
    """Whether any activation reached the clipping bound: bool() of a 0-d comparison."""
    return bool(np.max(np.abs(x)) >= 9.0)


def clip_outliers(x: F32) -> F32:
    """Rescale only when the largest magnitude exceeds a bound: an `if` on a 0-d array."""
    peak = np.max(np.abs(x))
    if peak > 5.0:
        return x * (5.0 / peak)
    return x


def embedding_norm(t: T32) -> T32:
    """torch's vector norm with no dim: the 2-norm of every element, a 0-d tensor."""
    return torch.linalg.vector_norm(t)


def any_above(x: F32, threshold: float) -> bool:
    """Whether any score passes a threshold, over the whole array: the margins past it, then
    bool(np.any(margin)) with no axis (the flattened array's any; a nan margin counts)."""
    margin = np.maximum(x - threshold, 0.0)
    return bool(np.any(margin))


def columns_all_positive(x: F32) -> npt.NDArray[np.bool_]:
    """Per column, whether every row is positive: (x > 0).all(axis=0), the method spelling (tested on
    arrays of 1 dim or more: NumPy's reductions take axis 0 of a 0-d array, compiled ones raise)."""
    return (x > 0).all(axis=0)
