"""torch's shape functions that are reshapes and broadcasts (opgen.compiler.lowerings): squeeze,
flatten(start_dim, end_dim), expand. Each checks what torch checks, in its order, with its error kinds
and words (torch 2.13), then calls ops the registry holds. torch returns views; compiled arrays are
never written through another name, so a reshaped copy is the same value."""

import numpy as np
import torch


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim as torch wraps it (a 0-d tensor takes 0 and -1), IndexError past the range."""
    n = max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _shown(sizes: list[int]) -> str:
    return "[" + ", ".join(str(s) for s in sizes) + "]"


def squeeze_dim(input, dim):
    """t.squeeze(d): dim d removed where its size is 1; t itself otherwise (never an error, unlike NumPy)."""
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0 or input.shape[d] != 1:
        return input
    shape = input.shape
    return input.reshape(shape[:d] + shape[d + 1:])


def squeeze_all(input):
    """t.squeeze(): every dim of size 1 removed."""
    return input.reshape([s for s in input.shape if s != 1])


def flatten(input, start_dim=0, end_dim=-1):
    """torch.flatten(t, start_dim, end_dim): dims start_dim..end_dim merged into one; a 0-d tensor becomes
    one element of 1 dim."""
    first = _wrap_dim(start_dim, input.ndim)
    last = _wrap_dim(end_dim, input.ndim)
    if first > last:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if input.ndim == 0:
        return input.reshape([1])
    if first == last:
        return input
    shape = input.shape
    size = 1
    for n in shape[first:last + 1]:
        size *= n
    return input.reshape(shape[:first] + [size] + shape[last + 1:])


def expand(input, sizes):
    """t.expand(*sizes): dims of size 1 repeated, new leading dims added; -1 keeps a dim's size."""
    shape = input.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand({_shown(shape)}, size={_shown(sizes)}): the number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({len(shape)})")
    lead = len(sizes) - len(shape)
    target = []
    for i, size in enumerate(sizes):
        have = shape[i - lead] if i >= lead else 1
        if size == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            size = have
        if size != have and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({size}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {_shown(sizes)}.  Tensor sizes: "
                               f"{_shown(shape)}")
        if size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {_shown(sizes)}")
        target.append(size)
    return np.broadcast_to(input, target)
