"""torch.clamp (torch.clip, Tensor.clamp, Tensor.clip) with scalar bounds, either one left out
(opgen.compiler.lowerings), as torch 2.13 does it (measured): a nan bound makes every element nan, and
nothing else is checked; otherwise each bound is converted to the result's dtype (RuntimeError past
float32's range for a float32 result); then min applies, then max (so min > max gives max), a nan
element stays nan, and a tie keeps the element (its zero's sign). An int tensor with a float bound is
float32, as torch promotes it."""

import torch

FLOAT32_MAX = 3.4028234663852886e38


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
