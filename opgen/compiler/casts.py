"""Casts in compiled code: ``x.astype(np.float32)``, ``x.to(torch.float16)``, ``x.float()``, ``x.long()``.

A cast's target dtype is a constant in every real call, and opgen.cast has one overload per (source,
target) pair whose target is not a kernel argument (docs/writing-specs.md, "A dtype that selects the
overload"). So the compiler reads the target here, at compile time, from the method (torch's
``x.half()``) or from its dtype argument (``np.float32``, ``torch.float32``, ``"float32"``), and the
resolver picks the overload whose result has that dtype. A dtype written as a value (``np.float32``)
is an ``ir.DTypeConst``: it has no run-time type, and anywhere but a cast's dtype it is refused.
"""

from __future__ import annotations

from opgen.compiler import ir
from opgen.spec.dtypes import DTYPES

CAST_OP = "opgen.cast"

# The dtype each module constant names (torch's aliases: torch.float is float32, torch.int int32).
DTYPE_CONSTANTS: dict[str, str] = {
    **{f"{m}.{n}": n for m in ("numpy", "torch") for n in DTYPES if n != "bool"},
    "numpy.bool": "bool", "numpy.bool_": "bool", "torch.bool": "bool",
    "numpy.single": "float32", "numpy.double": "float64", "numpy.half": "float16",
    "torch.float": "float32", "torch.double": "float64", "torch.half": "float16",
    "torch.long": "int64", "torch.int": "int32", "torch.short": "int16",
    "ml_dtypes.bfloat16": "bfloat16",
}
# NumPy has no bfloat16 of its own (ml_dtypes registers it): numpy.bfloat16 is not a name.
DTYPE_CONSTANTS.pop("numpy.bfloat16")

# torch's Tensor methods that name their target: x.float() is x.to(torch.float32).
NAMED_CASTS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
               "long": "int64", "int": "int32", "bool": "bool"}
# Methods whose dtype is an argument (the keyword it may be passed as): ndarray.astype, Tensor.to.
DTYPE_ARGUMENT_CASTS = {"astype": "dtype", "to": "dtype"}


def is_cast(method: str) -> bool:
    return method in NAMED_CASTS or method in DTYPE_ARGUMENT_CASTS


def dtype_constant(value: ir.Expr) -> str | None:
    """The dtype a constant names (np.float32, torch.long, float, "float32"), else None."""
    if isinstance(value, ir.DTypeConst):
        return value.dtype
    if isinstance(value, ir.Const) and isinstance(value.value, str) and value.value in DTYPES:
        return value.value
    return None


def target_dtype(e: ir.MethodCall) -> str | tuple[str, str]:
    """The dtype name ``e`` casts to, or (what is wrong, how to fix it)."""
    shown = e.source.split("(")[0]
    if e.method in NAMED_CASTS:
        if e.args or e.kwargs:
            return f"{shown}() takes no arguments here", f"write {shown}()"
        return NAMED_CASTS[e.method]
    keyword = DTYPE_ARGUMENT_CASTS[e.method]
    given = [*e.args, *([e.kwargs[keyword]] if keyword in e.kwargs else [])]
    others = [k for k in e.kwargs if k != keyword]
    if len(given) != 1 or others:
        extra = f" (not {', '.join(others)}=)" if others else ""
        return (f"{e.source}: a compiled {shown}() takes exactly one argument, the dtype{extra}",
                f"write {shown}(np.float32) or {shown}(torch.float32); a copy is always made")
    dtype = dtype_constant(given[0])
    if dtype is not None:
        return dtype
    return (f"{e.source}: the dtype must be a constant such as np.float32, torch.float32 or 'float32'"
            + (" (a device or another tensor is not a dtype)" if e.method == "to" else ""),
            "write the dtype itself; it selects the cast kernel when the function compiles")
