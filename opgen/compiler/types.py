"""The compiler's value types: the registry's native types plus str-keyed dicts.

A compiled function's values have exactly the types kernels take (opgen.spec.nativetypes:
int, float, bool, str, list[scalar], tensor[dtype]), so type propagation can ask the
registry about them directly. Str-keyed dicts (module tables, parameters, locals built by
item assignment, results) and tuples (a helper's or the compiled function's result) are
the compiler's own: never passed to a kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from opgen.spec.nativetypes import NativeType, parse_type


@dataclass(frozen=True)
class DictType:
    value: NativeType  # a scalar; keys are always str

    kind = "dict"

    def __str__(self) -> str:
        return f"dict[str, {self.value}]"


@dataclass(frozen=True)
class TupleType:
    """A tuple result (``return q, k``): a helper's or an op's (torch.topk's values and indices), unpacked
    by its caller or read by item or name, or the compiled function's, handed to the host one out-parameter
    per item (entry_abi.result_slots)."""

    items: tuple  # of Type
    # An op's named results (torch.topk's values, indices), for r.values; not part of the type's identity.
    names: tuple[str, ...] | None = field(default=None, compare=False)

    kind = "tuple"

    def __str__(self) -> str:
        return f"tuple[{', '.join(map(str, self.items))}]"


Type = NativeType | DictType | TupleType

INT, FLOAT, BOOL, STR = (NativeType("scalar", n) for n in ("int", "float", "bool", "str"))


def list_of(elem: NativeType) -> NativeType:
    return parse_type(f"list[{elem}]")


def tensor_of(dtype_name: str) -> NativeType:
    return parse_type(f"tensor[{dtype_name}]")


def parse(text: str) -> Type:
    """Inverse of str() for every compiler type (manifests store types as text)."""
    text = text.strip()
    if text.startswith("tuple[") and text.endswith("]"):
        return TupleType(tuple(parse(part) for part in _top_level_parts(text[len("tuple["):-1])))
    if text.startswith("dict[str,") and text.endswith("]"):
        return DictType(parse_type(text[len("dict[str,"):-1]))
    return parse_type(text)


def _top_level_parts(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


# Python's implicit numeric widening: bool -> int -> float. Used where Python would mix
# them (1 + 2.5, True + 1); the compiler inserts the conversion and looks up the wider op.
_WIDER = {("bool", "int"), ("bool", "float"), ("int", "float")}


def widens_to(src: Type, dst: Type, *, int_to_float: bool = True) -> bool:
    """``int_to_float=False`` where Python does not convert: it compares an int and a float
    exactly (2**53 + 1 > 2.0**53), so a comparison must not round the int."""
    if not int_to_float and (src.name, dst.name) == ("int", "float"):
        return False
    return src.kind == "scalar" and dst.kind == "scalar" and (src.name, dst.name) in _WIDER


def common_numeric(a: Type, b: Type) -> Type | None:
    """The type both of two branch or list-element types widen to, if any."""
    if a == b:
        return a
    if widens_to(a, b):
        return b
    if widens_to(b, a):
        return a
    return None


_CPP_SCALAR = {"int": "int64_t", "float": "double", "bool": "bool", "str": "std::string"}
_CPP_ELEM = {"int": "int64_t", "float": "double", "bool": "uint8_t", "str": "std::string"}


def cpp_type(t: Type) -> str:
    """How emitted C++ holds a value of this type (see runtime/opgen_compiled.hpp)."""
    if isinstance(t, DictType):
        return f"opgen::compiled::Dict<{_CPP_ELEM[t.value.name]}>"
    if isinstance(t, TupleType):
        return f"std::tuple<{', '.join(cpp_type(x) for x in t.items)}>"
    if t.kind == "tensor":
        return "opgen::compiled::Array"
    if t.kind == "list" and t.elem.kind == "tensor":  # a literal argument of a library call only
        return "std::vector<opgen::compiled::Array>"
    if t.kind == "list":
        return f"std::vector<{_CPP_ELEM[t.elem.name]}>"
    return _CPP_SCALAR[t.name]
