"""Reference callables: resolving a spec's dotted name, and the few Python-semantics
refinements a native signature needs.

A reference is called with the example's arguments in signature order. NumPy arrays
go to NumPy references as they are and to PyTorch references as tensors sharing
their memory (copied first: a reference must never see the candidate's buffers).
"""

from __future__ import annotations

import importlib
import math
import operator
from typing import Any, Callable

import numpy as np

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def resolve(dotted: str) -> Callable[..., Any]:
    """Import ``package.module.attr`` (the longest importable module prefix wins)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        if callable(obj):
            return obj
    raise LookupError(f"reference {dotted!r} cannot be imported; name an importable callable such as 'numpy.exp'")


def call_reference(dotted: str, args: list[Any]) -> Any:
    fn = resolve(dotted)
    if dotted.startswith("torch."):
        import torch

        targs = [torch.from_numpy(np.array(a, copy=True)) if isinstance(a, np.ndarray) else a for a in args]
        result = fn(*targs)
        return result.numpy() if isinstance(result, torch.Tensor) else result
    return fn(*args)


def int_pow(a: int, b: int) -> int:
    """``a ** b`` for the int overload: Python's result, except that a negative
    exponent (a float in Python) is a ValueError because the native return type is int."""
    if b < 0:
        raise ValueError("negative exponent in the int overload of pow")
    return operator.pow(a, b)


def float_pow(a: float, b: float) -> float:
    """``a ** b`` on floats with Python's errors; a complex result becomes ValueError."""
    result = operator.pow(a, b)
    if isinstance(result, complex):
        raise ValueError("negative base with a non-integer exponent")
    if math.isinf(result) and math.isfinite(a) and math.isfinite(b):
        raise OverflowError("result out of range")
    return result
