"""References of the half-precision overloads (float16, bfloat16): storage dtypes, float32 arithmetic.

A half-precision overload stores its tensors in 16 bits and computes in float32, as PyTorch's CPU
kernels do for Half and BFloat16 (their accumulation type is float). Its reference is the op's
float32 reference on the inputs widened to float32 (exact: every float16 and bfloat16 value is a
float32), the result rounded once to the half dtype (to nearest, ties to even). A kernel that
computes the same float32 function in another order lands within the float32 tolerance before the
final rounding, so within that plus one unit in the last place of the half dtype after it: that
is what the half overloads' tolerances add (``half_ulp_rtol``).

Each name here is the half twin of one float32 reference; inputs that are not half (indices,
masks, float64 from the spec check's wider evaluation) pass through unchanged, and where no input
is half the float32 reference's own result comes back (so the wider evaluation measures the
float32 computation itself).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from opgen.references import call_reference, resolve
from opgen.spec.dtypes import DTYPES
from opgen.arrays import c_order

HALF = {np.dtype(DTYPES[n].numpy): DTYPES[n] for n in ("float16", "bfloat16")}


def half_ulp_rtol(name: str) -> float:
    """One unit in the last place of a half dtype, relative: 2**-10 (float16), 2**-7 (bfloat16)."""
    return float(np.finfo(np.dtype(DTYPES[name].numpy)).eps)


def _half_of(args: tuple[Any, ...]) -> np.dtype | None:
    return next((a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype in HALF), None)


def _widen(args: tuple[Any, ...]) -> list[Any]:
    return [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype in HALF else a for a in args]


def widened(dotted32: str) -> Callable[..., Any]:
    """The half twin of the float32 reference ``dotted32`` (see the module's docstring)."""

    def reference(*args: Any) -> Any:
        half = _half_of(args)
        result = call_reference(dotted32, _widen(args))
        return result if half is None else np.asarray(result).astype(half)

    base = resolve(dotted32)
    scale = getattr(base, "error_scale", None)
    if callable(scale):  # tolerance basis error_scale: the float32 reference's, on the widened inputs
        reference.error_scale = lambda *args: scale(*_widen(args))  # type: ignore[attr-defined]
    reference.__name__ = dotted32.rsplit(".", 1)[-1]
    reference.__doc__ = f"{dotted32} on the inputs widened to float32, rounded once to their half dtype."
    return reference


add = widened("operator.add")
mul = widened("operator.mul")
softmax = widened("torch.nn.functional.softmax")
layer_norm = widened("opgen.references.layer_norm")
gemma_rms_norm = widened("opgen.references.gemma_rms_norm")
linear = widened("torch.nn.functional.linear")
matmul = widened("numpy.matmul")
attention = widened("opgen.attention_references.attention")
scaled_dot_product_attention = widened("opgen.references.scaled_dot_product_attention")


# --- PyTorch's own half-precision kernels: the speed baseline of the half overloads' bench cases --
# (torch computes Half and BFloat16 on the CPU with float32 accumulation too; NumPy's bfloat16 is
# ml_dtypes', which torch.from_numpy does not take, so bfloat16 crosses as its int16 bits.)

def _to_torch(a: Any) -> Any:
    import torch  # torch (seconds to import) only where a bench case times it

    if isinstance(a, np.ndarray) and a.dtype == np.dtype("bfloat16"):
        return torch.from_numpy(c_order(a).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(c_order(a)) if isinstance(a, np.ndarray) else a


def _to_numpy(t: Any) -> np.ndarray:
    import torch  # see _to_torch

    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.dtype("bfloat16"))
    return t.numpy()


def torch_half(name: str) -> Callable[..., Any]:
    """``torch.<name>`` (or torch.nn.functional's) on the half tensors as they are."""

    def run(*args: Any) -> np.ndarray:
        import torch  # see _to_torch
        import torch.nn.functional as F  # noqa: N812 - torch's own spelling

        fn = getattr(F, name, None) or getattr(torch, name)
        return _to_numpy(fn(*[_to_torch(a) for a in args]))

    run.__name__ = f"torch_{name}"
    return run


def _torch_layer_norm(input: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    import torch.nn.functional as F  # noqa: N812 - see _to_torch

    return _to_numpy(F.layer_norm(_to_torch(input), (input.shape[-1],), _to_torch(weight), _to_torch(bias), eps))


torch_add = torch_half("add")
torch_mul = torch_half("mul")
torch_matmul = torch_half("matmul")
torch_linear = torch_half("linear")
torch_softmax = torch_half("softmax")
torch_layer_norm = _torch_layer_norm
