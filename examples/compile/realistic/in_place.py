"""In-place arithmetic as model code writes it: `x -= mean`, `acc += row`, `scores *= scale`, torch's
`h.add_(bias)`, `out.zero_()`, `buf.copy_(src)`. NumPy and torch write the result into the array's own
memory; compiled, the write is a new array bound to the same name, which is the same thing because
the array was made here and no other name holds it or a view of it (a parameter written in place, or
an array another name shares, is refused at compile time). Where Python raises (a result that does
not fit the array's shape), the compiled function raises the same error."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
T32 = Annotated[torch.Tensor, torch.float32]


def center_and_scale(x: F64) -> F64:
    """Standardise a copy in place: x = x - mean, then x /= (std + 1)."""
    x = x - x.mean()
    x /= x.std() + 1.0
    return x


def row_accumulator(rows: F32) -> F32:
    """Sum the rows of a 2-d array into an accumulator, then halve it (a 1-d input sums its elements)."""
    acc = np.zeros(rows.shape[1:], dtype=np.float32)
    for r in rows:
        acc += r
    acc *= 0.5
    return acc


def biased_counts(counts: I64, bias: I64) -> I64:
    """Integer counts bumped in place: y += bias (broadcast; ValueError where the sum's shape is
    larger than y's), then y //= 2 and y %= 7."""
    y = counts.copy()
    y += bias
    y //= 2
    y %= 7
    return y


def f32_accumulates_f64(x: F32, w: F64) -> F32:
    """A float32 buffer += a float64 array: NumPy casts the float64 result back into float32 in place."""
    y = x.copy()
    y += w
    return y


def damped_update(state: F64, grad: F64, steps: int) -> F64:
    """A few steps of s -= 0.1 * g; s *= 0.9, in a loop on a copy of the state."""
    s = state.copy()
    for _ in range(max(0, min(steps, 5))):
        s -= 0.1 * grad
        s *= 0.9
    return s


def torch_residual(h: T32, bias: T32) -> T32:
    """A hidden state updated with torch's in-place methods: add_, mul_, clamp_, relu_."""
    out = h.clone()
    out.add_(bias)
    out.mul_(0.5)
    out.clamp_(min=-2.0, max=2.0)
    out.relu_()
    return out


def torch_augmented(h: T32, scale: float) -> T32:
    """torch tensors with augmented operators: y = h * 2; y -= h.mean(); y *= scale."""
    y = h * 2.0
    y -= h.mean()
    y *= scale
    return y


def reset_and_copy(h: T32, src: T32) -> T32:
    """A buffer zeroed, refilled from src (copy_ broadcasts it, RuntimeError where it cannot) and
    shifted with fill_ on another buffer."""
    buf = torch.zeros_like(h)
    buf.zero_()
    buf.copy_(src)
    shift = torch.empty_like(h)
    shift.fill_(0.25)
    return buf + shift
