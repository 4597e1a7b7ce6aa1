"""The Python signature a name has in its own library: what a call of ``torch.nn.functional.gelu``
or ``ndarray.sum`` may pass, by position and by keyword, and what it omits.

A spec's native signature is the kernel's: its own order, only the parameters the kernel takes.
Python code calls the library's function, so the compiler binds a call against the library's
signature first (``numpy.var(x, 0, None, None, 1)`` passes ddof by position; ``F.gelu(x, "tanh")``
is a TypeError because torch makes ``approximate`` keyword-only) and only then maps the bound
arguments onto the native parameters. The same signatures let a test hold every spec's defaults to
its library's.

Sources, in order: ``inspect.signature`` (Python functions, NumPy's functions and ufuncs, ``str``
and ``ndarray`` methods, ``operator``), or the documented signature of a builtin method CPython
gives none (``str.startswith``); for torch's builtins and ``Tensor`` methods, which have no
Python signature, the ATen schemas (``torch._C._jit_get_schemas_for_operator``), each schema one
candidate, as torch's own argument parser tries them. opgen's own ops (``opgen.*``) have no
library: their spec's signature is their Python signature.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

from opgen.references import resolve

EMPTY = inspect.Parameter.empty

# NumPy marks "not passed" defaults with its own sentinel (np._NoValue); for a caller these are
# omitted arguments, whose effect is the function's documented default.
_NOVALUE_REPR = "<no value>"


@dataclass(frozen=True)
class LibraryParam:
    name: str
    kind: inspect._ParameterKind
    default: Any = EMPTY  # EMPTY: required; NOVALUE: NumPy's "not passed"

    @property
    def required(self) -> bool:
        return self.default is EMPTY


class _NoValue:
    def __repr__(self) -> str:
        return "<not passed>"


NOVALUE: Any = _NoValue()


@dataclass(frozen=True)
class LibrarySignature:
    """One way of calling ``name``: its parameters in order (a method's receiver first, as ``self``)."""

    name: str
    params: tuple[LibraryParam, ...]
    source: str  # "inspect" or the ATen schema it came from

    def as_inspect(self) -> inspect.Signature:
        return inspect.Signature([inspect.Parameter(p.name, p.kind, default=p.default) for p in self.params])

    def param(self, name: str) -> LibraryParam | None:
        return next((p for p in self.params if p.name == name), None)

    def __str__(self) -> str:
        return f"{self.name}{self.as_inspect()}"


def library_signatures(name: str) -> tuple[LibrarySignature, ...]:
    """Every signature ``name`` may be called with (several for a torch builtin with overloads); empty
    when the name has no library to ask (``opgen.*``) or the library does not say."""
    return _signatures(name)


@functools.lru_cache(maxsize=None)
def _signatures(name: str) -> tuple[LibrarySignature, ...]:
    root = name.split(".", 1)[0]
    if root == "opgen":
        return ()
    if name in _DOCUMENTED and root in ("torch", "Tensor"):
        return (LibrarySignature(name, tuple(_param(p) for p in _DOCUMENTED[name].parameters.values()), "documented"),)
    if root == "Tensor" or (root == "torch" and not _has_python_signature(name)):
        return _aten(name)
    fn = _resolve(name)
    if fn is None:
        return ()
    if root == "torch":
        fn = _boolean_dispatch_target(fn)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = _DOCUMENTED.get(name)
        if sig is None:
            return ()
    return (LibrarySignature(name, tuple(_param(p) for p in sig.parameters.values()), "inspect"),)


def _positional_only(*names_defaults: tuple[str, Any]) -> inspect.Signature:
    kind = inspect.Parameter.POSITIONAL_ONLY
    return inspect.Signature([inspect.Parameter(n, kind, default=d) for n, d in names_defaults])


# Builtin methods CPython gives no text signature, as their documentation writes them
# (``str.startswith(prefix[, start[, end]])``: all positional-only).
_DOCUMENTED = {
    f"str.{m}": _positional_only(("self", EMPTY), (arg, EMPTY), ("start", None), ("end", None))
    for m, arg in (("startswith", "prefix"), ("endswith", "suffix"))
}
_DOCUMENTED["math.log"] = _positional_only(("x", EMPTY), ("base", NOVALUE))  # math.log(x[, base])
# int(x=0, /, base=10): CPython 3.11's int gives inspect no signature (float's is (x=0, /)).
_DOCUMENTED["builtins.int"] = inspect.Signature([
    inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY, default=0),
    inspect.Parameter("base", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=10)])


def _torch_factory(*positional: inspect.Parameter) -> inspect.Signature:
    """A torch factory's signature as its documentation writes it (``torch.zeros(*size, *, out=None,
    dtype=None, layout=torch.strided, device=None, requires_grad=False)``): ATen's schemas of these take
    no tensor, so _aten finds none to read."""
    kw = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature([*positional, *(inspect.Parameter(n, kw, default=d) for n, d in (
        ("out", None), ("dtype", None), ("layout", None), ("device", None), ("requires_grad", False)))])


_VAR, _POS = inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_OR_KEYWORD
_DOCUMENTED.update({
    "torch.zeros": _torch_factory(inspect.Parameter("size", _VAR)),
    "torch.ones": _torch_factory(inspect.Parameter("size", _VAR)),
    "torch.full": _torch_factory(inspect.Parameter("size", _POS), inspect.Parameter("fill_value", _POS)),
    # torch.arange(start=0, end, step=1): one positional argument is end, as Python's range
    "torch.arange": _torch_factory(inspect.Parameter("bounds", _VAR)),
    # t.view(2, 3) or t.view((2, 3)): ATen's schema takes one int list; Python's binding takes either
    **{f"Tensor.{m}": inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY),
                                          inspect.Parameter("shape", _VAR)]) for m in ("view", "reshape")},
})


def _param(p: inspect.Parameter) -> LibraryParam:
    default = p.default
    if repr(default) == _NOVALUE_REPR:
        default = NOVALUE
    return LibraryParam(p.name, p.kind, default)


def _resolve(name: str) -> Any:
    """The callable a dotted name means: ``numpy.X``, ``torch...X``, ``operator.X``, or a method
    ``ndarray.X`` / ``str.X`` / ``list.X`` / ``dict.X`` (unbound, so its receiver is ``self``)."""
    owner, _, attr = name.rpartition(".")
    if owner == "ndarray":
        return getattr(np.ndarray, attr, None)
    if owner in ("str", "list", "dict"):
        return getattr({"str": str, "list": list, "dict": dict}[owner], attr, None)
    try:
        return resolve(name)
    except LookupError:
        return None


def _boolean_dispatch_target(fn: Any) -> Any:
    """torch's max_pool2d is ``(*args, **kwargs)`` choosing on return_indices; its plain form says the rest."""
    import torch._jit_internal as jit  # torch (seconds to import) only for a torch name

    dispatched = getattr(jit, "boolean_dispatched", {})
    try:
        entry = dispatched.get(fn)
    except TypeError:  # an unhashable callable
        entry = None
    return entry["if_false"] if entry else fn


def _has_python_signature(name: str) -> bool:
    fn = _resolve(name)
    if fn is None:
        return False
    try:
        inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return True


def _aten(name: str) -> tuple[LibrarySignature, ...]:
    import torch  # seconds to import: only for a call of a torch builtin

    op = name.rsplit(".", 1)[-1]
    fn = _resolve(name)
    if fn is not None and isinstance(getattr(fn, "__name__", None), str):
        op = fn.__name__  # torch.linalg.vector_norm is aten::linalg_vector_norm
    out = []
    for schema in torch._C._jit_get_schemas_for_operator(f"aten::{op}"):
        if schema.overload_name.endswith("out") or any(a.name == "out" for a in schema.arguments):
            continue
        if any(str(a.type).startswith("Tensor(") for a in schema.arguments):  # in-place forms (Tensor(a!) self)
            continue
        # TorchScript's int/float/list forms take no tensor (a list of tensors, torch.cat's, is one)
        if not any(str(a.type) in ("Tensor", "List[Tensor]") for a in schema.arguments):
            continue
        if name.startswith("Tensor.") and not any(a.name == "self" for a in schema.arguments):
            continue  # a form only the function has (torch.where(condition))
        params = []
        for a in schema.arguments:
            # torch's Python binding names an ATen `self` `input` (torch.softmax(input=x, dim=0));
            # a method's receiver is `self` and is always passed by position.
            pname = ("self" if name.startswith("Tensor.") else "input") if a.name == "self" else a.name
            kind = inspect.Parameter.KEYWORD_ONLY if a.kwarg_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
            if a.name == "self" and name.startswith("Tensor."):
                kind = inspect.Parameter.POSITIONAL_ONLY
            default = _aten_default(a) if a.has_default_value() else EMPTY
            params.append(LibraryParam(pname, kind, default))
        # A method's receiver comes first however the schema orders it (where.self(condition, self, other)).
        params.sort(key=lambda p: p.name != "self" or not name.startswith("Tensor."))
        sig = LibrarySignature(name, tuple(params), f"{schema.name}.{schema.overload_name}".rstrip("."))
        if all(o.params != sig.params for o in out):
            out.append(sig)
    return tuple(out)


def _aten_default(a: Any) -> Any:
    value = a.default_value
    t = str(a.type)
    if t == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


@dataclass(frozen=True)
class ParamMap:
    """How one library signature's parameters meet a spec's native ones."""

    signature: LibrarySignature
    native: dict[str, str]  # library parameter -> the native parameter it is
    library_only: tuple[LibraryParam, ...]  # parameters the native kernel has no counterpart for
    spread: dict[str, list[str]]  # library parameter -> the native ones it spreads over (spec python_params)
    shape_of: dict[str, str]  # library parameter -> the native tensor whose shape it must be (spec python_params)


def map_params(sig: LibrarySignature, native_names: list[str], receiver: str | None = None,
               python_params: dict[str, Any] | None = None) -> ParamMap:
    """Pair ``sig``'s parameters with the native ones: by name first; a method's ``self`` is the
    receiver (or the first native parameter); a library parameter that may be passed by position and
    whose name the native signature lacks is the next native parameter the library does not name
    (``torch.where(condition, input, other)`` onto ``(condition, x, y)``). Keyword-only parameters
    pair by name only; what stays unpaired is the library's alone (``out``, ``dtype``, ``alpha``). A
    parameter the spec's ``python_params`` names is neither: it is spread over native parameters, or
    checked against one's shape."""
    given = {k: v for k, v in (python_params or {}).items() if sig.param(k) is not None}
    spread = {k: list(v.spread) for k, v in given.items() if v.spread}
    shape_of = {k: v.shape_of for k, v in given.items() if v.shape_of is not None}
    spread_to = {n for targets in spread.values() for n in targets}
    lib_names = {p.name for p in sig.params}
    # native parameters only position reaches
    unnamed = [n for n in native_names if n not in lib_names and n not in spread_to]
    native: dict[str, str] = {}
    only: list[LibraryParam] = []
    for p in sig.params:
        if p.kind == p.kind.VAR_POSITIONAL and p.name in native_names:  # ndarray.reshape(*shape): a list
            native[p.name] = p.name
            continue
        if p.kind in (p.kind.VAR_POSITIONAL, p.kind.VAR_KEYWORD) or p.name in given:
            continue
        if p.name in native_names:
            native[p.name] = p.name
        elif p.name == "self" and (receiver or native_names):
            target = receiver or native_names[0]
            native[p.name] = target
            if target in unnamed:
                unnamed.remove(target)
        elif p.kind != p.kind.KEYWORD_ONLY and unnamed:
            native[p.name] = unnamed.pop(0)
        else:
            only.append(p)
    return ParamMap(sig, native, tuple(only), spread, shape_of)
