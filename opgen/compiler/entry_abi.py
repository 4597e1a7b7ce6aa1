"""The C ABI of a compiled function's entry point, as data (the emitter, the manifest and
the hosts all read it from here).

    int32_t opgen_compiled_<function>(<each parameter>, <out>, opgen_error* err)

Parameters, in order, follow the kernel ABI (opgen/runtime/opgen_abi.h):

    int -> int64_t        float -> double        bool -> uint8_t
    str -> const char* <p>, int64_t <p>_len                     (UTF-8 bytes)
    list[T] -> const T* <p>, int64_t <p>_len                    (list[str]: const opgen_string*)
    dict[str, T] -> const opgen_string* <p>_keys, const T* <p>_values, int64_t <p>_len
    tensor[dtype] -> const opgen_tensor* <p>                    (any strides; the dtype is checked)
    Optional[T] -> uint8_t <p>_present, then T's arguments       (0: the caller passed None; T's are then
                                                                 zeros or NULL, never read)

The result is written to ``out`` (a dict to ``out_keys`` and ``out``, a tuple's items to ``out0``,
``out1``, ...: see result_slots): a scalar to ``T* out``; str to ``opgen_string*`` and
list to ``opgen_list*``, malloc'ed as the kernel shims do (one opgen_free); a tensor to
``opgen_tensor*`` whose ``data`` and ``shape`` are malloc'ed by the library (compact,
``strides`` NULL) and released by the caller with opgen_free, one call each. The status
is 0 or the Python error kind (opgen_abi.h, plus 6 for KeyError) with ``err`` filled.
"""

from __future__ import annotations

from opgen.compiler.types import STR, DictType, TupleType, Type, list_of
from opgen.spec.nativetypes import NativeType

ENTRY_PREFIX = "opgen_compiled_"
KEY_ERROR = 6
C_ELEM = {"int": "int64_t", "float": "double", "bool": "uint8_t", "str": "opgen_string"}


def entry_symbol(function: str) -> str:
    return ENTRY_PREFIX + function


def entry_params(fn) -> list[tuple[str, Type, bool]]:
    """(name, type, optional) of an ir.Function's parameters, as the entry takes them."""
    return [(p.name, p.type, p.optional) for p in fn.params]


def c_params(params: list[tuple[str, Type, bool]], returns: Type) -> list[tuple[str, str]]:
    """(C type, name) of every entry-point argument: parameters (entry_params), out, err."""
    out: list[tuple[str, str]] = []
    for name, t, optional in params:
        n = f"arg_{name}"
        if optional:
            out.append(("uint8_t", f"{n}_present"))
        if isinstance(t, DictType):
            out += [("const opgen_string*", f"{n}_keys"), (f"const {C_ELEM[t.value.name]}*", f"{n}_values"),
                    ("int64_t", f"{n}_len")]
        elif t.kind == "tensor":
            out.append(("const opgen_tensor*", n))
        elif t.kind == "list":
            out += [(f"const {C_ELEM[t.elem.name]}*", n), ("int64_t", f"{n}_len")]
        elif t.name == "str":
            out += [("const char*", n), ("int64_t", f"{n}_len")]
        else:
            out.append((C_ELEM[t.name], n))
    for name, slot in result_slots(returns):
        out.append((_OUT_C.get(slot.kind) or _OUT_C.get(slot.name) or f"{C_ELEM[slot.name]}*", name))
    out.append(("opgen_error*", "err"))
    return out


_OUT_C = {"tensor": "opgen_tensor*", "list": "opgen_list*", "str": "opgen_string*"}


def result_slots(returns: Type, name: str = "out") -> list[tuple[str, NativeType]]:
    """The out-parameters a result is written to, in order, each of a kernel-ABI type: one for a
    scalar, str, list or tensor; a dict[str, T] is two lists, its keys (``<name>_keys``, list[str]) and
    its values (``<name>``, list[T]), in insertion order; a tuple is its items' slots (``out0``, ``out1``,
    ...), each as above."""
    if isinstance(returns, TupleType):
        return [slot for i, item in enumerate(returns.items) for slot in result_slots(item, f"{name}{i}")]
    if isinstance(returns, DictType):
        return [(f"{name}_keys", list_of(STR)), (name, list_of(returns.value))]
    return [(name, returns)]


def c_declaration(function: str, params: list[tuple[str, Type, bool]], returns: Type) -> str:
    args = ", ".join(f"{t} {n}" for t, n in c_params(params, returns))
    return f"int32_t {entry_symbol(function)}({args})"
