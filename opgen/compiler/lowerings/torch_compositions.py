"""torch's idioms that are compositions of registry ops (opgen.compiler.lowerings), as torch 2.13 does
them (measured): each checks what torch checks, in its order, with its error kinds and words, then calls
ops the registry holds. torch returns views where these reshape or broadcast; compiled arrays are never
written through another name, so a copy is the same value.

squeeze (no dim, a dim, or a tuple of dims), flatten(start_dim, end_dim), expand: reshapes and broadcasts.

clamp (torch.clip, Tensor.clamp, Tensor.clip) with scalar bounds, either one left out: a nan bound makes
every element nan, and nothing else is checked; otherwise each bound is converted to the result's dtype
(RuntimeError past float32's range for a float32 result); then min applies, then max (so min > max gives
max), a nan element stays nan, and a tie keeps the element (its zero's sign). An int tensor with a float
bound is float32, as torch promotes it.

cosine_similarity, as ATen's (Distance.cpp): both operands broadcast, each divided by its L2 norm along
dim clamped from below at eps, the products summed along dim.
"""

import numpy as np
import torch

FLOAT32_MAX = 3.4028234663852886e38


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim as torch wraps it (a 0-d tensor takes 0 and -1), IndexError past the range."""
    n = max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _shown(sizes: list[int]) -> str:
    return "[" + ", ".join(str(s) for s in sizes) + "]"


def squeeze_dim(input, dim: int):
    """t.squeeze(d): dim d removed where its size is 1; t itself otherwise (never an error, unlike NumPy)."""
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0 or input.shape[d] != 1:
        return input
    shape = input.shape
    return input.reshape(shape[:d] + shape[d + 1:])


def squeeze_dims(input, dims):
    """t.squeeze((d0, d1, ...)): each named dim of size 1 removed, the others kept; torch checks the dims
    in order, each in range (IndexError), then not named before (RuntimeError)."""
    seen = []
    for dim in dims:
        d = _wrap_dim(dim, input.ndim)
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.append(d)
    shape = input.shape
    return input.reshape([shape[i] for i in range(len(shape)) if not (shape[i] == 1 and i in seen)])


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


def _checked(input, bound):
    """The bound, after torch's check that the tensor's dtype holds it."""
    # a float bound makes an integer tensor's result float32 (torch's promotion), so it is checked alike
    if input.dtype != torch.float64 and abs(bound) != float("inf") and abs(bound) > FLOAT32_MAX:
        raise RuntimeError("value cannot be converted to type float without overflow")
    return bound


def clamp_min_int(input, min: int):
    """torch.clamp(t, min=n): an int bound (never nan; a float tensor keeps its dtype)."""
    return torch.where(input < min, min, input)


def clamp_max_int(input, max: int):
    """torch.clamp(t, max=n)."""
    return torch.where(input > max, max, input)


def clamp_int(input, min: int, max: int):
    """torch.clamp(t, m, n)."""
    low = torch.where(input < min, min, input)
    return torch.where(low > max, max, low)


def clamp_min(input, min: float):
    """torch.clamp(t, min=v)."""
    if min != min:
        return input * 0.0 + min
    min = _checked(input, min)
    return torch.where(input < min, min, input)


def clamp_max(input, max: float):
    """torch.clamp(t, max=v)."""
    if max != max:
        return input * 0.0 + max
    max = _checked(input, max)
    return torch.where(input > max, max, input)


def clamp(input, min: float, max: float):
    """torch.clamp(t, min, max): a nan bound first (no other check), then min, then max."""
    if min != min or max != max:
        return input * 0.0 + min + max
    min = _checked(input, min)
    max = _checked(input, max)
    low = torch.where(input < min, min, input)
    return torch.where(low > max, max, low)


def _broadcast_shape(a: list[int], b: list[int]) -> list[int]:
    """The shape two tensors broadcast to, RuntimeError as torch words it where they do not."""
    n = max(len(a), len(b))
    out = []
    for i in range(n):
        da = a[i - n + len(a)] if i >= n - len(a) else 1
        db = b[i - n + len(b)] if i >= n - len(b) else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b ({db}) at "
                               f"non-singleton dimension {i}")
        out.append(db if da == 1 else da)
    return out


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """F.cosine_similarity(x1, x2, dim, eps): sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) along dim."""
    shape = _broadcast_shape(x1.shape, x2.shape)
    dim = _wrap_dim(dim, len(shape))  # torch's IndexError (the norm kernel's own is NumPy's ValueError)
    if len(shape) == 0:  # torch reduces a 0-d tensor along dim 0 or -1; the kernels take 1 dim or more
        shape = [1]
    a = np.broadcast_to(x1, shape)
    b = np.broadcast_to(x2, shape)
    na = torch.clamp(torch.linalg.vector_norm(a, 2, dim=dim, keepdim=True), min=eps)
    nb = torch.clamp(torch.linalg.vector_norm(b, 2, dim=dim, keepdim=True), min=eps)
    return torch.sum((a / na) * (b / nb), dim=dim)
