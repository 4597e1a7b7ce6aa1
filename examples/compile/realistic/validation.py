"""The checks and plumbing around model calls: raise and assert with messages, torch.no_grad(),
str.format, np.array of a list, tolist()."""

import numpy as np
import torch


def checked_mean(x: np.ndarray) -> float:
    """Validation by raise: ValueError with an f-string message for the wrong rank, TypeError-free otherwise."""
    if x.ndim != 2:
        raise ValueError(f"expected a 2-d batch, got {x.ndim}-d")
    if x.shape[0] == 0:
        raise ValueError("empty batch")
    return float(x.mean())


def asserted_scale(x: np.ndarray, factor: float) -> np.ndarray:
    """assert with and without a message (AssertionError), then the work."""
    assert factor > 0, f"factor must be positive, got {factor}"
    assert x.ndim >= 1
    return x * factor


@torch.no_grad()
def logits_no_grad(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """An inference function as models write it: @torch.no_grad() and a with torch.no_grad() block."""
    with torch.no_grad():
        h = x @ w
    return h.softmax(dim=-1)


def score_line(name: str, score: float, rank: int) -> str:
    """str.format with automatic, numbered and keyword fields, specs and a conversion."""
    return "{0:>2}. {1!r:<10} {s:.3f} {0}".format(rank, name, s=score)


def scores_array(scores: list[float], threshold: float) -> list[int]:
    """np.array of a list of floats, a mask, and the kept positions back as a list through tolist()."""
    arr = np.array(scores, dtype=np.float32)
    return np.arange(arr.shape[0])[arr > threshold].tolist()


def ids_tensor(ids: list[int], pad: int, length: int) -> torch.Tensor:
    """torch.tensor of a padded list of ints (int64), NotImplementedError for a length below the ids'."""
    if length < len(ids):
        raise NotImplementedError
    return torch.tensor(ids + [pad] * (length - len(ids)))
