"""Implicit type promotion as NumPy 2 and torch do it, as data: which dtype an op computes in when
arrays of different dtypes, or arrays and Python numbers, meet.

The compiler asks here only where no overload takes the call's types as they are (``x_int64 * 0.5``,
``a_f32 + b_f64``, ``ids / n``); it then casts each array to the dtype named here (``opgen.cast``'s
verified kernels) and makes each Python number a 0-d array of it, so the compiled result has the dtype
Python's has. Each library's table is written as the rules its documentation states, and
tests/test_compile_promotion.py checks them against ``numpy.result_type`` and ``torch.promote_types`` /
``torch.result_type`` for every pair of the dtypes opgen knows:

- NumPy 2: two dtypes give the smallest dtype both cast to safely (a signed and an unsigned int of the
  same or more bits go to the next wider signed int, past int64 to float64; an int meets a float in
  the smallest float holding all its values; ml_dtypes' bfloat16 holds int8 and uint8 exactly).
  Python numbers are weak (NEP 50): an int takes the array's dtype (int64 for a bool array), a float
  keeps a float array's dtype and makes an int or bool array float64. A 0-d array is strong.
- torch: two dtypes of one category give the wider (float16 and bfloat16 give float32, int8 and uint8
  int16), an int meeting a float gives the float; uint16, uint32 and uint64 promote with nothing but a float
  (torch raises). Python numbers and 0-d tensors count only where their category (bool < int < float)
  is above the dimensioned tensors': a Python float gives the default dtype, float32, a Python int
  int64, a 0-d tensor its own dtype. A 0-d tensor's dims are known only when the function runs, so
  ``zero_dim_results`` says which patterns of 0-d operands would change the dtype.

Which ops promote is data too: those whose overloads are ``shape: elementwise`` (NumPy's ufuncs and
where, torch's TensorIterator ops), and for NumPy any op whose reference is a ``numpy.ufunc``
(``np.matmul``: torch's matmul refuses mixed dtypes). Only the parameters whose dtype differs between
overloads take part (``np.where``'s bool condition does not).
"""

from __future__ import annotations

import itertools

import numpy as np

from opgen.compiler.flavor import NUMPY, TORCH

FLOATS = ("float16", "bfloat16", "float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
BITS = {d: int(d.lstrip("abfloatuint")) for d in (*FLOATS, *SIGNED, *UNSIGNED)}
# torch's default dtype (torch.get_default_dtype(), float32 unless a program changes it) and NumPy's
# default int and float: what Python numbers and integer true division become.
DEFAULT_FLOAT = {NUMPY: "float64", TORCH: "float32"}
DEFAULT_INT = "int64"
# The 0-d array NumPy makes of a Python number passed alone to one of its functions (np.sqrt(2.0)).
NUMPY_SCALAR = {"float": "float64", "int": DEFAULT_INT, "bool": "bool"}
# Ops whose integer inputs compute in a float dtype: NumPy's true-division type resolver maps any
# integer or bool inputs to float64; torch's integer true division gives the default dtype.
TRUE_DIVISION = frozenset({"operator.truediv"})


class NoPromotion(ValueError):
    """The library refuses to combine these dtypes (torch's uint16..uint64 with another dtype)."""


def category(dtype: str) -> int:
    """bool < int < float: torch's categories (NumPy's kinds in the same order)."""
    return 0 if dtype == "bool" else 2 if dtype in FLOATS else 1


def same_kind(result: str, into: str) -> bool:
    """Whether NumPy writes a ``result`` array into an ``into`` one under 'same_kind' casting (what
    ``a += v`` does): safe casts and casts within a kind (float64 into float32, uint8 into int64), never
    a float into an int nor an int into a bool. ml_dtypes' bfloat16 counts as a float."""
    try:
        return bool(np.can_cast(np.dtype(result), np.dtype(into), "same_kind"))
    except TypeError:  # a dtype NumPy does not name (bfloat16): by category
        return category(result) <= category(into)


def numpy_pair(a: str, b: str) -> str:
    """``numpy.result_type(a, b)`` of two array dtypes (bfloat16 as ml_dtypes registers it)."""
    if a == b or b == "bool":
        return a
    if a == "bool":
        return b
    if category(a) == 2 and category(b) == 2:
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        return max(a, b, key=BITS.get)
    if category(a) == 2 or category(b) == 2:
        f, i = (a, b) if category(a) == 2 else (b, a)
        return _numpy_float_holding(f, i)
    return _numpy_ints(a, b)


def _numpy_ints(a: str, b: str) -> str:
    if (a in SIGNED) == (b in SIGNED):
        return max(a, b, key=BITS.get)
    s, u = (a, b) if a in SIGNED else (b, a)
    if BITS[s] > BITS[u]:
        return s
    return f"int{2 * BITS[u]}" if BITS[u] < 64 else "float64"


def _numpy_float_holding(f: str, i: str) -> str:
    """The smallest float at least ``f`` that holds every value of the int dtype ``i`` (8-bit ints in
    float16 or bfloat16, 16-bit in float32, wider in float64)."""
    if BITS[i] == 8:
        return f
    return numpy_pair(f, "float32" if BITS[i] == 16 else "float64")


def torch_pair(a: str, b: str) -> str:
    """``torch.promote_types(a, b)``; NoPromotion where torch raises."""
    if a == b:
        return a
    wide_unsigned = {a, b} & {"uint16", "uint32", "uint64"}
    if wide_unsigned and not (category(a) == 2 or category(b) == 2):
        raise NoPromotion(f"torch does not promote {a} with {b} (uint16, uint32 and uint64 promote with "
                          "nothing but the floats)")
    if b == "bool":
        return a
    if a == "bool":
        return b
    if category(a) != category(b):
        return a if category(a) > category(b) else b
    if category(a) == 2:
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        return max(a, b, key=BITS.get)
    if (a in SIGNED) == (b in SIGNED):
        return max(a, b, key=BITS.get)
    s, u = (a, b) if a in SIGNED else (b, a)
    return s if BITS[s] > BITS[u] else f"int{2 * BITS[u]}"


def _fold(pair, dtypes):
    result = None
    for d in dtypes:
        result = d if result is None else pair(result, d)
    return result


def numpy_result(arrays: list[str], scalars: list[str]) -> str:
    """``numpy.result_type`` of arrays (any ndim: 0-d arrays are strong in NumPy 2) and Python numbers
    (``"bool"``, ``"int"``, ``"float"``: weak, NEP 50)."""
    result = _fold(numpy_pair, arrays)
    if "float" in scalars and category(result) < 2:
        return DEFAULT_FLOAT[NUMPY]
    if "int" in scalars and result == "bool":
        return DEFAULT_INT
    return result


def torch_result(dims: list[str], zero_dims: list[str], scalars: list[str]) -> str:
    """``torch.result_type`` of dimensioned tensors, 0-d tensors and Python numbers: each later group
    counts only where its category is above the earlier ones' (c10's ResultTypeState)."""
    wrapped = _fold(torch_pair, [{"float": DEFAULT_FLOAT[TORCH], "int": DEFAULT_INT, "bool": "bool"}[s]
                                 for s in scalars])
    return _combine_categories(_fold(torch_pair, dims), _combine_categories(_fold(torch_pair, zero_dims), wrapped))


def _combine_categories(higher: str | None, lower: str | None) -> str | None:
    if higher is None:
        return lower
    if lower is None or category(higher) == 2:
        return higher
    if higher == "bool" or category(lower) == 2:
        return torch_pair(higher, lower)
    return higher


def result(library: str, arrays: list[str], scalars: list[str]) -> str:
    """The dtype ``library`` computes in for these arrays (all taken as dimensioned, as torch's
    tensors are unless ``zero_dim_results`` says otherwise) and Python numbers; NoPromotion where
    the library raises."""
    if library == NUMPY:
        return numpy_result(arrays, scalars)
    return torch_result(arrays, [], scalars)


def computing(library: str, op: str, dtype: str) -> str:
    """The dtype ``op`` computes in once its inputs are promoted to ``dtype``: integer true division's
    float (TRUE_DIVISION), else ``dtype`` itself."""
    if op in TRUE_DIVISION and category(dtype) < 2:
        return DEFAULT_FLOAT[library]
    return dtype


def zero_dim_results(arrays: list[str], scalars: list[str]) -> dict[tuple[bool, ...], str]:
    """torch: for each pattern of which arrays are 0-d when the function runs (not all, not none: those
    give ``result``), the dtype torch would compute in, where it differs from ``result``'s."""
    static = torch_result(arrays, [], scalars)
    differ = {}
    for pattern in itertools.product((False, True), repeat=len(arrays)):
        if all(pattern) or not any(pattern):
            continue
        dims = [d for d, zero in zip(arrays, pattern) if not zero]
        zeros = [d for d, zero in zip(arrays, pattern) if zero]
        got = torch_result(dims, zeros, scalars)
        if got != static:
            differ[pattern] = got
    return differ


def promotes(spec, library: str | None) -> bool:
    """Whether ``spec``'s op promotes mixed dtypes in ``library`` (module docstring)."""
    tensor_overloads = [o for o in spec.overloads if any(p.type.kind == "tensor" for p in o.sig.params)]
    if any(o.shape == "elementwise" for o in tensor_overloads):
        return True
    name = str(spec.reference)
    return library == NUMPY and name.startswith("numpy.") and isinstance(getattr(np, name[6:], None), np.ufunc)


def promoted_params(spec) -> set[str]:
    """The tensor parameters whose dtype differs between ``spec``'s overloads: those promotion casts
    (``np.where``'s condition is bool in every overload, ``np.take``'s indices int64)."""
    dtypes: dict[str, set[str]] = {}
    for o in spec.overloads:
        for p in o.sig.params:
            if p.type.kind == "tensor":
                dtypes.setdefault(p.name, set()).add(p.type.dtype.name)
    return {name for name, seen in dtypes.items() if len(seen) > 1}
