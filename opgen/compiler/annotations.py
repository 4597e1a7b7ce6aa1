"""Parameter and return annotations -> compiler types.

Spellings accepted (through the module's imports, so ``np``/``npt``/``torch`` may be
aliased any way):

    int  float  str  bool  list[T]  dict[str, T]          (typing.List / typing.Dict too)
    npt.NDArray[np.float32]                               a NumPy array of that dtype
    Annotated[torch.Tensor, torch.float32]                a torch tensor of that dtype
    torch.Tensor                                          float32 (torch's default dtype), see below
    np.ndarray  npt.NDArray  npt.NDArray[Any]            float64 (NumPy's default dtype), see below
    a module-level alias of any of these                  Vec = npt.NDArray[np.float32]

An array annotation that names no dtype takes its library's default dtype, the dtype
``torch.tensor([1.0])`` or ``np.array([1.0])`` has, which is what most inference code passes. The
annotation records that the dtype was assumed (``Annotation.assumed``): the caller's ``--dtype
NAME=DTYPE`` overrides it, a bare return annotation takes whatever the body returns, and the
host's TypeError for another dtype says how to compile for it.

A tensor type remembers its flavor (numpy or torch) so the Python host can hand back
the kind of array the function would have returned.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from opgen.spec.dtypes import DTYPES
from opgen.compiler.casts import DTYPE_CONSTANTS
from opgen.compiler.errors import CompileError
from opgen.compiler.scope import ModuleScope
from opgen.compiler.types import BOOL, FLOAT, INT, STR, DictType, TupleType, Type, list_of, tensor_of

SCALARS = {"int": INT, "float": FLOAT, "str": STR, "bool": BOOL}
LIST_NAMES = {"list", "typing.List"}
DICT_NAMES = {"dict", "typing.Dict"}
TUPLE_NAMES = {"tuple", "typing.Tuple"}
NDARRAY_NAMES = {"numpy.typing.NDArray", "numpy.ndarray"}
ANNOTATED_NAMES = {"typing.Annotated", "typing_extensions.Annotated"}
TORCH_TENSOR = "torch.Tensor"

HINT = ("annotate with int, float, str, bool, list[T], dict[str, T], npt.NDArray[np.float32] "
        "(any dtype opgen knows) or Annotated[torch.Tensor, torch.float32]")


# Where None stays refused: a result, a list's or dict's element (parameters may be Optional).
NONE_HINT = ("give back a neutral value where Python gives None (0.0, an empty list or str), or raise; "
             "only a parameter may be Optional")
OPTIONAL_NAMES = {"typing.Optional"}
UNION_NAMES = {"typing.Union"}


def _may_be_none(scope: ModuleScope, node: ast.expr) -> bool:
    """``None``, ``Optional[T]``, ``Union[T, None]``, ``T | None``."""
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _may_be_none(scope, node.left) or _may_be_none(scope, node.right)
    if isinstance(node, ast.Subscript):
        head = _name(scope, node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return head in OPTIONAL_NAMES or (head in UNION_NAMES and any(_may_be_none(scope, a) for a in args))
    return False


# The dtype an array annotation without one means: what its library makes from Python floats.
DEFAULT_DTYPES = {"torch": "float32", "numpy": "float64"}
ANY_NAMES = {"typing.Any"}


@dataclass(frozen=True)
class Annotation:
    type: Type
    flavor: str | None = None  # "numpy" | "torch" for tensors
    # An array annotation that named no dtype: its library's default was taken (for a tuple: per item)
    assumed: bool | tuple[bool, ...] = False
    optional: bool = False  # Optional[T], T | None: a parameter the caller may pass None for


def parse_annotation(scope: ModuleScope, node: ast.expr | None, what: str, line: int,
                     dtype: str | None = None, optional: bool = False) -> Annotation:
    """``dtype`` (from ``opgen compile --dtype NAME=DTYPE``) replaces an array annotation's assumed dtype; an
    annotation that names its dtype keeps it (the override would contradict the source). ``optional``: a
    parameter's annotation, which may admit None (Optional[T], T | None, Union[T, None]); the result says so."""
    if node is None:
        raise CompileError(f"{what} has no type annotation", where=scope.where(line), hint=HINT)
    may_be_none = optional and _may_be_none(scope, _unquoted(node))
    if may_be_none:
        node = _without_none(scope, _unquoted(node), what)
    ann = _parse(scope, node, what, depth=0)
    if may_be_none:
        ann = Annotation(ann.type, ann.flavor, ann.assumed, optional=True)
    if dtype is not None:
        if ann.type.kind != "tensor":
            raise CompileError(f"--dtype for {what}: it is annotated {ast.unparse(node)}, not an array",
                               where=scope.where(line), hint="pass --dtype only for array parameters")
        if not ann.assumed and ann.type.dtype.name != dtype:
            raise CompileError(f"--dtype {dtype} for {what}, annotated {ast.unparse(node)}: the annotation names "
                               f"{ann.type.dtype.name}", where=scope.where(line),
                               hint="drop the --dtype, or change the annotation")
        ann = Annotation(tensor_of(dtype), ann.flavor, assumed=False, optional=ann.optional)
    return ann


def _unquoted(node: ast.expr) -> ast.expr:
    """A string annotation's expression (``"Optional[np.ndarray]"``); others as they are."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return ast.fix_missing_locations(ast.copy_location(ast.parse(node.value, mode="eval").body, node))
        except SyntaxError:
            return node
    return node


def _without_none(scope: ModuleScope, node: ast.expr, what: str) -> ast.expr:
    """The one type an annotation admitting None admits besides it: T of Optional[T], T | None, Union[T, None]."""
    members: list[ast.expr] = []

    def walk(n: ast.expr) -> None:
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
            walk(n.left)
            walk(n.right)
            return
        if isinstance(n, ast.Subscript):
            head = _name(scope, n.value)
            args = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            if head in OPTIONAL_NAMES or head in UNION_NAMES:
                for a in args:
                    walk(a)
                return
        if not (isinstance(n, ast.Constant) and n.value is None):
            members.append(n)

    walk(node)
    if len(members) != 1:
        raise CompileError(f"{what}: {ast.unparse(node)} admits {len(members)} types besides None; a compiled "
                           "parameter has one", where=scope.where(node), hint="annotate it Optional[T] with one T")
    return members[0]


def _name(scope: ModuleScope, node: ast.expr) -> str | None:
    if isinstance(node, ast.Name) and node.id in ("int", "float", "str", "bool", "list", "dict", "tuple") \
            and node.id not in scope.aliases:
        return node.id
    return scope.dotted(node)


def _parse(scope: ModuleScope, node: ast.expr, what: str, depth: int) -> Annotation:
    where = scope.where(node)
    shown = ast.unparse(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            raise CompileError(f"{what}: annotation {shown} does not parse", where=where, hint=HINT) from None
        return _parse(scope, _with_line(node, where), what, depth)
    if isinstance(node, ast.Name) and node.id in scope.type_aliases and depth < 8:
        return _parse(scope, scope.type_aliases[node.id], what, depth + 1)
    name = _name(scope, node)
    if name in SCALARS:
        return Annotation(SCALARS[name])
    if _may_be_none(scope, node):
        raise CompileError(f"{what}: {shown} may be None, and None as a value is not supported by opgen compile "
                           "(no compiled value is None)", where=where, hint=NONE_HINT)
    if isinstance(node, ast.Subscript):
        head = _name(scope, node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in LIST_NAMES and len(args) == 1:
            elem = _parse(scope, args[0], what, depth).type
            if elem.kind != "scalar":
                raise CompileError(f"{what}: list elements must be int, float, bool or str, not {elem}",
                                   where=where, hint="lists of lists or arrays are not supported; use a 2-D array")
            return Annotation(list_of(elem))
        if head in DICT_NAMES and len(args) == 2:
            key = _parse(scope, args[0], what, depth).type
            value = _parse(scope, args[1], what, depth).type
            if key != STR or value.kind != "scalar":
                raise CompileError(f"{what}: dicts must be dict[str, T] with T one of int, float, bool, str (got {shown})",
                                   where=where, hint="key tables by str")
            return Annotation(DictType(value))
        if head in TUPLE_NAMES and args and not (len(args) == 2 and isinstance(args[1], ast.Constant)
                                                 and args[1].value is Ellipsis):
            if depth == -1:
                raise CompileError(f"{what}: a nested tuple is not supported by opgen compile", where=where,
                                   hint="return a flat tuple")
            items = [_parse(scope, a, what, -1) for a in args]
            flavors = {a.flavor for a in items if a.flavor}
            if len(flavors) > 1:
                raise CompileError(f"{what}: a tuple mixing NumPy arrays and torch tensors is not supported by opgen "
                                   "compile", where=where, hint="return one kind of array")
            return Annotation(TupleType(tuple(a.type for a in items)), flavors.pop() if flavors else None,
                              assumed=tuple(a.assumed for a in items) if any(a.assumed for a in items) else False)
        if head == "numpy.typing.NDArray" and len(args) == 1:
            if _name(scope, args[0]) in ANY_NAMES:
                return Annotation(tensor_of(DEFAULT_DTYPES["numpy"]), "numpy", assumed=True)
            return Annotation(tensor_of(_dtype(scope, args[0], ("numpy",), what)), "numpy")
        if head in ANNOTATED_NAMES and len(args) == 2:
            base = _name(scope, args[0])
            if base == TORCH_TENSOR:
                return Annotation(tensor_of(_dtype(scope, args[1], ("torch",), what)), "torch")
            if base in NDARRAY_NAMES:
                return Annotation(tensor_of(_dtype(scope, args[1], ("numpy",), what)), "numpy")
    if name in NDARRAY_NAMES or name == TORCH_TENSOR:
        library = "torch" if name == TORCH_TENSOR else "numpy"
        return Annotation(tensor_of(DEFAULT_DTYPES[library]), library, assumed=True)
    raise CompileError(f"{what}: annotation {shown} is not a type opgen compile knows", where=where, hint=HINT)


def _dtype(scope: ModuleScope, node: ast.expr, modules: tuple[str, ...], what: str) -> str:
    full = scope.dotted(node) or ""
    module, _, dt = full.rpartition(".")
    if module in modules and dt in DTYPES:
        return dt
    if module in modules and full in DTYPE_CONSTANTS:  # an alias: np.bool_, np.double, torch.long
        return DTYPE_CONSTANTS[full]
    raise CompileError(f"{what}: {ast.unparse(node)} is not a dtype opgen knows", where=scope.where(node),
                       hint=f"use {modules[0]}.<dtype> with dtype one of {', '.join(DTYPES)}")


def _with_line(node: ast.expr, where: str) -> ast.expr:
    line = int(where.rsplit(":", 1)[1] or 0)
    for sub in ast.walk(node):
        if hasattr(sub, "lineno"):
            sub.lineno = line
    return node
