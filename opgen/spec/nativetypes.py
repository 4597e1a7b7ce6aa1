"""Native types of kernel parameters and results, and the signature grammar.

A signature is written in specs as ``(a: tensor[float32], axis: int) -> tensor[float32]``.
The vocabulary is deliberately small and maps one-to-one onto Python values the
compiler sees and the idiomatic native types the kernels take:

    int -> int64_t / i64     float -> double / f64     bool -> bool
    str -> std::string / String                        list[T] -> std::vector<T> / Vec<T>
    tensor[dtype] -> a DLPack-compatible view (opgen::Tensor / &Tensor)
    list[tensor[dtype]] -> a sequence of views of one dtype (std::vector<opgen::Tensor> / &[TensorRef<T>])

A result may also be a tuple of named tensors, as torch's named tuples and ONNX's named outputs
are: ``-> tuple[values: tensor[float32], indices: tensor[int64]]``. Each result is its own
caller-allocated out tensor, named as the tuple names it (``opgen.spec.abi``).
"""

from __future__ import annotations

import ast

import re
from dataclasses import dataclass
from typing import Any

from opgen.spec.dtypes import DTYPES, DType, dtype

SCALARS = {"int": "int64", "float": "float64", "bool": "bool", "str": None}


@dataclass(frozen=True)
class NativeType:
    kind: str  # "scalar" | "list" | "tensor" | "tuple"
    name: str  # scalar name ("int", "float", "bool", "str") or the dtype for tensors
    elem: "NativeType | None" = None  # list element type
    # A tuple result's named fields, in order (tensors only: each is one out tensor).
    fields: "tuple[tuple[str, NativeType], ...]" = ()

    def __str__(self) -> str:
        if self.kind == "tuple":
            return "tuple[" + ", ".join(f"{n}: {t}" for n, t in self.fields) + "]"
        if self.kind == "tensor":
            return f"tensor[{self.name}]"
        if self.kind == "list":
            return f"list[{self.elem}]"
        return self.name

    @property
    def is_tensor(self) -> bool:
        return self.kind == "tensor"

    @property
    def is_tuple(self) -> bool:
        return self.kind == "tuple"

    @property
    def is_tensor_list(self) -> bool:
        """A sequence of tensors (``list[tensor[float32]]``: np.concatenate's arrays), all of one dtype."""
        return self.kind == "list" and self.elem is not None and self.elem.kind == "tensor"

    @property
    def dtype(self) -> DType | None:
        """Element dtype of a tensor, or the storage dtype of a numeric scalar."""
        if self.kind == "tensor":
            return dtype(self.name)
        if self.kind == "scalar" and SCALARS.get(self.name):
            return dtype(SCALARS[self.name])
        return None


class _Required:
    """The default of a parameter that has none (``Param.default``)."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Param:
    name: str
    type: NativeType
    # Python's default (``negative_slope: float = 0.01``): what a call that omits the argument
    # passes. The native function still takes every parameter; only callers (the compiler) use it.
    default: Any = REQUIRED

    @property
    def has_default(self) -> bool:
        return self.default is not REQUIRED


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    returns: NativeType

    def __str__(self) -> str:
        args = ", ".join(f"{p.name}: {p.type}" + (f" = {p.default!r}" if p.has_default else "") for p in self.params)
        return f"({args}) -> {self.returns}"

    def bare(self) -> "Signature":
        """This signature without its defaults: what the kernel implements (it takes every argument)."""
        return Signature(tuple(Param(p.name, p.type) for p in self.params), self.returns)

    @property
    def results(self) -> tuple[tuple[str, NativeType], ...]:
        """Every result with the name of its out argument: a tuple's named fields, or ``("out", returns)``
        for a single result. Code that handles tensor results loops over these."""
        return self.returns.fields if self.returns.is_tuple else (("out", self.returns),)

    @property
    def tensor_results(self) -> bool:
        """Whether the results are caller-allocated tensors (one tensor, or a tuple of them)."""
        return self.returns.is_tensor or self.returns.is_tuple

    @property
    def tensor_params(self) -> tuple[Param, ...]:
        """The single-tensor parameters (a list of tensors is not one: see tensor_list_params)."""
        return tuple(p for p in self.params if p.type.is_tensor)

    @property
    def tensor_list_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.type.is_tensor_list)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


class SignatureError(ValueError):
    """A malformed signature; the message says which part and what is allowed."""


GRAMMAR_HINT = (
    "write it as '(name: type, ...) -> type' where type is int, float, bool, str, "
    "list[<scalar>], tensor[<dtype>] or (a parameter) list[tensor[<dtype>]] with dtype one of " + ", ".join(DTYPES)
    + "; a scalar parameter may end in a Python default, as in 'negative_slope: float = 0.01'; "
    "several tensor results are a tuple of named tensors, as in "
    "'-> tuple[values: tensor[float32], indices: tensor[int64]]'"
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RESERVED = {"out", "err", "status"}  # names the generated shim uses itself
_RESERVED_PREFIX = "opgen_"  # the generated shim's local names
# Parameter names become C++ parameter names in the kernel and its shim.
CPP_KEYWORDS = frozenset(
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t "
    "class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield "
    "decltype default delete do double dynamic_cast else enum explicit export extern false float for friend "
    "goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private "
    "protected public register reinterpret_cast requires return short signed sizeof static static_assert "
    "static_cast struct switch template this thread_local throw true try typedef typeid typename union "
    "unsigned using virtual void volatile wchar_t while xor xor_eq".split()
)


def parse_type(text: str) -> NativeType:
    t = text.strip()
    if t in SCALARS:
        return NativeType("scalar", t)
    m = re.fullmatch(r"(tensor|list)\[(.*)\]", t)
    if not m:
        raise SignatureError(f"unknown type {t!r}; {GRAMMAR_HINT}")
    kind, inner = m.group(1), m.group(2).strip()
    if kind == "tensor":
        if inner not in DTYPES:
            raise SignatureError(
                f"unknown dtype {inner!r} in {t!r}; known dtypes: {', '.join(DTYPES)}"
            )
        return NativeType("tensor", inner)
    elem = parse_type(inner)
    if elem.kind == "list":
        raise SignatureError(f"lists of lists are not supported, got {t!r}; list elements are scalars "
                             "(int, float, bool, str) or tensors of one dtype (tensor[float32])")
    return NativeType("list", f"list[{elem}]", elem)


def parse_signature(text: str) -> Signature:
    m = re.fullmatch(r"\s*\((.*)\)\s*->\s*(.+?)\s*", text)
    if not m:
        raise SignatureError(f"malformed signature {text!r}; {GRAMMAR_HINT}")
    params: list[Param] = []
    body = m.group(1).strip()
    for part in _split_top_level(body) if body else []:
        if ":" not in part:
            raise SignatureError(f"parameter {part.strip()!r} has no type; {GRAMMAR_HINT}")
        name, _, typ = part.partition(":")
        name = name.strip()
        if not _IDENT.match(name):
            raise SignatureError(f"parameter name {name!r} is not an identifier")
        if name in _RESERVED or name.startswith(_RESERVED_PREFIX):
            raise SignatureError(f"parameter name {name!r} is reserved for the generated shim; rename it")
        if name in CPP_KEYWORDS:
            raise SignatureError(f"parameter name {name!r} is a C++ keyword; rename it (e.g. {name + '_'!r})")
        if any(p.name == name for p in params):
            raise SignatureError(f"parameter {name!r} appears twice")
        typ, eq, default_text = typ.partition("=")
        ptype = parse_type(typ)
        if eq:
            params.append(Param(name, ptype, _default(name, ptype, default_text.strip())))
        elif params and params[-1].has_default:
            raise SignatureError(f"parameter {name!r} has no default but follows one that has (as in Python, "
                                 "parameters with defaults come last)")
        else:
            params.append(Param(name, ptype))
    # The C ABI passes strings and lists as (pointer, <name>_len).
    lengths = {f"{p.name}_len": p.name for p in params if p.type.kind == "list" or p.type.name == "str"}
    for p in params:
        if p.name in lengths:
            raise SignatureError(
                f"parameter name {p.name!r} collides with the length argument the C ABI passes for "
                f"{lengths[p.name]!r}; rename it"
            )
    returns = _parse_result(m.group(2), params)
    if returns.is_tensor_list:
        raise SignatureError(f"a list of tensors is a parameter type only, not a result ({returns}); "
                             "return one tensor (the caller allocates it from the shape rule)")
    return Signature(tuple(params), returns)


def _parse_result(text: str, params: list[Param]) -> NativeType:
    """The result type: any type, or ``tuple[name: tensor[dtype], ...]`` of two or more named tensors."""
    m = re.fullmatch(r"\s*tuple\[(.*)\]\s*", text)
    if not m:
        return parse_type(text)
    fields: list[tuple[str, NativeType]] = []
    for part in _split_top_level(m.group(1)):
        name, colon, typ = part.partition(":")
        name = name.strip()
        if not colon:
            raise SignatureError(f"tuple result {part.strip()!r} has no name; name each result, as in "
                                 "'tuple[values: tensor[float32], indices: tensor[int64]]'")
        if not _IDENT.match(name):
            raise SignatureError(f"result name {name!r} is not an identifier")
        if name in _RESERVED or name.startswith(_RESERVED_PREFIX) or name in CPP_KEYWORDS:
            raise SignatureError(f"result name {name!r} is reserved (a C++ keyword or a name the shim uses); rename it")
        if any(p.name == name for p in params) or name in {f"{p.name}_len" for p in params}:
            raise SignatureError(f"result name {name!r} is also a parameter's name; results and parameters "
                                 "are arguments of one native function: rename one")
        if any(n == name for n, _ in fields):
            raise SignatureError(f"result {name!r} appears twice")
        t = parse_type(typ)
        if not t.is_tensor:
            raise SignatureError(f"result {name!r} is {t}: a tuple holds tensors only (each is one out tensor)")
        fields.append((name, t))
    if len(fields) < 2:
        raise SignatureError("a tuple result has two or more named tensors; return one tensor as 'tensor[<dtype>]'")
    return NativeType("tuple", "tuple", fields=tuple(fields))


def _default(name: str, t: NativeType, text: str) -> Any:
    """A parameter's default: a Python literal of the parameter's scalar type (an int for a float
    parameter is the float it equals, as Python passes it)."""
    if t.kind != "scalar":
        raise SignatureError(f"parameter {name!r}: only scalar parameters (int, float, bool, str) take a default")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise SignatureError(f"parameter {name!r}: default {text!r} is not a Python literal") from None
    if t.name == "float" and type(value) is int:
        value = float(value)
    want = {"int": int, "float": float, "bool": bool, "str": str}.get(t.name)
    if want is None or type(value) is not want:
        raise SignatureError(f"parameter {name!r}: default {text!r} is not a {t.name}")
    return value


def _split_top_level(body: str) -> list[str]:
    """Split on commas that are not inside brackets (``list[int]`` has none, but be safe)."""
    parts, depth, cur = [], 0, []
    for ch in body:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts
