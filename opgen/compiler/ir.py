"""The compiler's IR: a function's body as typed-able expression trees and statements.

The tracer builds it from the AST with every name resolved (parameter, local, module
constant, op) and every operator spelled as the op the registry knows it by
(``a + b`` is ``operator.add``); type propagation fills in ``type`` on every
expression and the registry entry on every op; the emitter writes one C++ statement
per non-leaf expression.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opgen.registry import Entry
from opgen.spec.model import Overload, Spec
from opgen.compiler.types import Type


@dataclass(eq=False)
class Expr:
    line: int
    type: Type | None = field(default=None, init=False)
    # Which library's rules an array value follows: "numpy" or "torch" (None for non-arrays, and for an
    # array no parameter or library call decides). Filled by type propagation with ``type``.
    flavor: str | None = field(default=None, init=False)

    @property
    def children(self) -> list["Expr"]:
        return []


@dataclass(eq=False)
class Const(Expr):
    value: Any  # int | float | str | bool


@dataclass(eq=False)
class DTypeConst(Expr):
    """A dtype written as a value (``np.float32``, ``torch.float16``): only a cast's dtype argument,
    read when the function compiles (opgen.compiler.casts); it has no run-time type."""

    dtype: str  # the opgen dtype name
    source: str
    library: str = ""  # numpy | torch: whose dtype object it is (np.float32 == torch.float32 is False)


@dataclass(eq=False)
class ListLit(Expr):
    items: list[Expr]

    @property
    def children(self) -> list[Expr]:
        return self.items


@dataclass(eq=False)
class Var(Expr):
    name: str  # a parameter, local or loop variable


@dataclass(eq=False)
class Table(Expr):
    """A module-level constant the function reads as a whole (a dict or list): emitted once
    as a static table."""

    name: str
    value: Any


@dataclass(eq=False)
class Op(Expr):
    """A call of a registry op: ``operator.add``, ``numpy.exp``, ``torch.nn.functional.softmax``."""

    op: str
    args: list[Expr]
    kwargs: dict[str, Expr]
    source: str  # the Python text, for messages and comments
    # Filled by type propagation:
    native: str = ""  # a list operation the compiler emits itself (xs + ys, [0] * n), not a kernel;
    # "same": a cast to the array's own dtype, the array itself (compiled arrays are never written)
    result: str | None = None  # a cast's target dtype: it selects the overload (opgen.compiler.casts)
    called: str = ""  # the library name the call binds against (a method's ndarray.sum), when not ``op``
    library_bound: bool = False  # args/kwargs are the native parameters' now (opgen.spec.library_signature)
    bound: list[Expr] = field(default_factory=list)  # arguments in the kernel's parameter order
    spec: Spec | None = None
    overload: Overload | None = None
    entry: Entry | None = None
    # torch's promotion of several tensors, where a 0-d one would change the dtype (it is weak): the
    # promoted parameters, {which of them are 0-d: the dtype torch would give}, the dtype compiled
    zero_dim: tuple[list[str], dict[tuple[bool, ...], str], str] | None = None

    @property
    def children(self) -> list[Expr]:
        return self.bound or [*self.args, *self.kwargs.values()]


@dataclass(eq=False)
class MethodCall(Op):
    """``x.sum(axis=0)``, ``s.lower()``, ``x.T``: a method or attribute of a value. Which op it is
    depends on the receiver's type (``ndarray.sum`` and ``str.lower`` are names specs declare under
    ``methods:``), so the tracer leaves ``op`` empty and type propagation fills it in, with the
    receiver bound to its parameter; from then on it is an ``Op`` like any other."""

    method: str = ""
    receiver: Expr | None = None
    attribute: bool = False  # ``x.T``: no call

    @property
    def children(self) -> list[Expr]:
        return self.bound or [*([self.receiver] if self.receiver is not None else []), *self.args,
                              *self.kwargs.values()]


@dataclass(eq=False)
class Builtin(Expr):
    """A Python builtin the compiler implements itself: len, float, int, bool, abs, round, min, max,
    sum, any, all, sorted, list, isinstance; and ``.shape``, ``.ndim``, ``.size`` of a tensor."""

    name: str
    args: list[Expr]
    kwargs: dict[str, Expr] = field(default_factory=dict)
    elem: Any = None  # what a consuming builtin (sum, min, sorted...) iterates over, by type propagation

    @property
    def children(self) -> list[Expr]:
        return [*self.args, *self.kwargs.values()]


@dataclass(eq=False)
class Index(Expr):
    """``xs[i]`` on a list (IndexError) or ``d[k]`` on a dict (KeyError); ``x[i]`` or ``emb[ids]`` of an array."""

    base: Expr
    index: Expr
    gather: "Op | None" = field(default=None, init=False)  # emb[ids]: the numpy.take it is, by type propagation

    @property
    def children(self) -> list[Expr]:
        return [self.gather] if self.gather is not None else [self.base, self.index]


@dataclass(eq=False)
class IndexPart:
    """One part of a subscript: ``index`` (kind "at"), a slice's bounds (each None where Python's is),
    ``...`` (kind "ellipsis") or None (kind "newaxis")."""

    kind: str
    index: Expr | None = None
    start: Expr | None = None
    stop: Expr | None = None
    step: Expr | None = None

    @property
    def exprs(self) -> list[Expr]:
        return [x for x in (self.index, self.start, self.stop, self.step) if x is not None]


@dataclass(eq=False)
class Subscript(Expr):
    """``xs[1:]``, ``s[::-1]``, ``x[:, :k]``, ``q[0]`` of an array, ``m[..., None]``: slicing of lists and
    strs, and NumPy's basic indexing of arrays (a view of the same memory); ``x[:, idx]`` with an integer
    array is a gather (``gather``, filled by type propagation)."""

    base: Expr
    parts: list[IndexPart]
    gather: "Op | None" = field(default=None, init=False)

    @property
    def children(self) -> list[Expr]:
        if self.gather is not None:
            return [self.gather]
        return [self.base, *(x for p in self.parts for x in p.exprs)]


@dataclass(eq=False)
class IfExp(Expr):
    cond: Expr
    then: Expr
    orelse: Expr

    @property
    def children(self) -> list[Expr]:
        return [self.cond, self.then, self.orelse]


# A loop's target: a name, or a tuple of targets (``for i, (a, b) in enumerate(zip(xs, ys))``).
Target = Any  # str | tuple[Target, ...]


def target_names(t: Target) -> list[str]:
    return [t] if isinstance(t, str) else [n for sub in t for n in target_names(sub)]


@dataclass(eq=False)
class Iteration(Expr):
    """What Python iterates without building a list: ``range(a, b, c)``, ``enumerate(xs, start)``,
    ``zip(xs, ys)``, ``reversed(xs)``, ``d.items()`` / ``d.keys()`` / ``d.values()``. Only where Python
    iterates (a for loop, a comprehension, ``list()``, ``sum()``...); it is never a value itself.
    Type propagation fills ``elem``: the type each step yields, a tuple of types for zip and enumerate."""

    kind: str  # range | enumerate | zip | reversed | items | keys | values
    args: list[Expr]
    elem: Any = None

    @property
    def children(self) -> list[Expr]:
        return self.args


@dataclass(eq=False)
class Generator:
    """One ``for target in source if cond ...`` clause of a comprehension."""

    target: Target
    source: Expr  # a list-typed expression, or an Iteration
    conds: list[Expr]
    bound: list = field(default_factory=list)  # (name, type) per target name, filled by type propagation


@dataclass(eq=False)
class ListComp(Expr):
    """``[elt for t1 in s1 if c1 for t2 in s2 ...]``; the targets are local to the comprehension."""

    elt: Expr
    generators: list[Generator]
    # Filled by the tracer for any()/all()/min()/max() over a generator expression, which Python stops early.
    lazy: bool = False
    key: Expr | None = None  # ``{key: elt for ...}``: a dict comprehension (the key is evaluated first)

    @property
    def children(self) -> list[Expr]:
        out: list[Expr] = []
        for g in self.generators:
            out += [g.source, *g.conds]
        return [*out, *([self.key] if self.key is not None else []), self.elt]


@dataclass(eq=False)
class DictLit(Expr):
    """``{"a": x, "b": 2}`` or ``{}``: a str-keyed dict built when it runs (keys in order, a repeated
    key keeps its first place and its last value, as Python's)."""

    keys: list[Expr]
    values: list[Expr]

    @property
    def children(self) -> list[Expr]:
        return [x for kv in zip(self.keys, self.values) for x in kv]


@dataclass(eq=False)
class BoolOp(Expr):
    """``a and b``, ``a or b`` with Python's short-circuit: the value of the operand that decided."""

    op: str  # and | or
    values: list[Expr]

    @property
    def children(self) -> list[Expr]:
        return self.values


@dataclass(eq=False)
class Truth(Expr):
    """Python's truthiness of a scalar, str, list or dict, where a bool is needed (``if xs:``)."""

    value: Expr

    @property
    def children(self) -> list[Expr]:
        return [self.value]


@dataclass(eq=False)
class TupleLit(Expr):
    """``(a, b)``: only as a helper function's result or the right side of an unpacking."""

    items: list[Expr]

    @property
    def children(self) -> list[Expr]:
        return self.items


@dataclass(eq=False)
class Call(Expr):
    """A call of another function of the module (or one nested in this one), emitted as its own C++
    function specialised to the argument types (``callee`` is filled by type propagation)."""

    name: str
    args: list[Expr]
    kwargs: dict[str, Expr]
    source: str
    definition: Any = None  # the callee's ast.FunctionDef, and the names of the function it is nested in
    callee: Any = None  # the specialised ir.Function, filled by type propagation
    scope: Any = None  # the ModuleScope the callee is read from, where not the caller's (opgen.compiler.lowerings)

    @property
    def children(self) -> list[Expr]:
        return [*self.args, *self.kwargs.values()]


@dataclass(eq=False)
class Convert(Expr):
    """An implicit numeric widening Python does (bool -> int -> float), made explicit."""

    value: Expr

    @property
    def children(self) -> list[Expr]:
        return [self.value]


@dataclass(eq=False)
class WeakScalar(Expr):
    """A Python int or float meeting an array in an op (``x * 0.5``): NumPy 2's and torch's weak
    scalar, a 0-d array of the array's dtype (so float32 stays float32)."""

    value: Expr
    dtype: str
    wraps: bool = False  # torch's: an int outside an integer dtype's range keeps its low bits (NumPy raises)

    @property
    def children(self) -> list[Expr]:
        return [self.value]


@dataclass(eq=False)
class Region(Expr):
    """One of what the runtime works out for a basic-index write ``a[1:, 0] = v``
    (opgen::compiled::region), as opgen.assign_region takes it: ``what`` is "value" (v as a view of the
    region's shape at a's rank, broadcast as setitem broadcasts it), "starts" or "steps" (the region's
    first index and step along each of a's dims). The "value" one holds the typed view ``a[parts]``
    (its parts are what the runtime reads; the view itself is never made) and v; "starts" and "steps"
    name it in ``of``, so the work is done once. Python evaluates v before the subscript."""

    what: str
    view: Subscript | None = None
    value: Expr | None = None
    of: Region | None = None
    in_place: bool = False  # an augmented operator's write: v must have a's shape (see opgen::compiled::region)

    @property
    def children(self) -> list[Expr]:
        return [self.view, self.value] if self.what == "value" else []


@dataclass(eq=False)
class Stmt:
    line: int


@dataclass(eq=False)
class Assign(Stmt):
    name: str
    value: Expr
    declared: Type | None = None  # from `name: T = value`
    inplace: bool = False  # `xs += ys`: a list changes in place in Python (names sharing it see that)


@dataclass(eq=False)
class Append(Stmt):
    """``xs.append(v)``, and ``xs.extend(ys)`` (``extend``): the list variable changes in place."""

    name: str
    value: Expr
    extend: bool = False


@dataclass(eq=False)
class SetItem(Stmt):
    """``xs[i] = v`` (IndexError out of range) or ``d[k] = v`` (inserts or replaces): the local list or
    dict variable ``name`` changes in place. ``a[mask] = v`` of an array: type propagation makes
    ``value`` the whole new array (a functional update) and sets ``rebind``: the statement is then
    ``a = value``, which opgen.compiler.aliasing has proven no other name can tell from Python's
    write in place. ``parts``: the target's index where it is a slice or a tuple (``a[:, :k] = w``)."""

    name: str
    index: Expr | None
    value: Expr
    parts: list[IndexPart] | None = None
    rebind: bool = False
    # `a += v` (or `t.add_(v)`, `t.copy_(src)`) of an array: NumPy and torch write the result into
    # a's own memory, so type propagation makes it `a[...] = a + v` (`a[...] = src`), the value of
    # a's own shape (the statement as written, for messages). `in_place_value` says what the value
    # may be: "result", an op's result, written back under the library's in-place casting rule;
    # "any" (copy_), any dtype, converted; "number" (fill_), a number only (torch takes a 0-d tensor
    # too and raises for any other: a rank compiled code cannot see).
    augmented: str | None = None
    in_place_value: str = "result"


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    body: list[Stmt]
    orelse: list[Stmt]


@dataclass(eq=False)
class For(Stmt):
    target: Target
    iterable: Expr  # a list-typed expression, or an Iteration
    body: list[Stmt]


@dataclass(eq=False)
class While(Stmt):
    cond: Expr
    body: list[Stmt]


@dataclass(eq=False)
class Break(Stmt):
    pass


@dataclass(eq=False)
class Continue(Stmt):
    pass


@dataclass(eq=False)
class Unpack(Stmt):
    """``a, b = value``: a tuple literal (every item evaluated before any name is bound, as Python
    does), a helper's tuple result, or a list (``n, d = x.shape``; its length is checked)."""

    target: Target
    value: Expr


@dataclass(eq=False)
class Return(Stmt):
    value: Expr


@dataclass(eq=False)
class Raise(Stmt):
    """``raise ValueError(message)`` (and a failing ``assert``): the path ends with that Python exception."""
    kind: str  # the exception class's name, one of opgen.compiler.emit_cpp.ERROR_KINDS' values
    value: Expr  # the message, a str


@dataclass(eq=False)
class Print(Stmt):
    """``print(a, b, sep=..., end=...)``: the text Python's print writes (each value's str(), joined by sep,
    then end), written to the process's standard output (file=sys.stderr: standard error) and flushed."""

    value: Expr  # the whole text, a str
    stream: str = "stdout"  # file=sys.stderr: "stderr"


@dataclass(eq=False)
class Handler:
    """One ``except`` clause: the Python exception kinds it catches (ERROR_KINDS' names; ArithmeticError and
    LookupError expanded to theirs; Exception and a bare except to all of them) and its body."""

    line: int
    kinds: tuple[str, ...]
    body: list[Stmt]


@dataclass(eq=False)
class Try(Stmt):
    """``try: ... except ...: ... else: ... finally: ...``: an error the body raises (a kernel's, a raise
    statement's, the runtime's) runs the first clause naming its kind; ``orelse`` runs when none was raised;
    ``finalbody`` runs however the rest is left (falling through, an error, return, break, continue), and
    holds no return, nor a break or continue of its own (the tracer refuses them)."""

    body: list[Stmt]
    handlers: list[Handler]
    orelse: list[Stmt]
    finalbody: list[Stmt] = field(default_factory=list)


def blocks(s: Stmt) -> list[list[Stmt]]:
    """The statement lists nested in a statement (if/else, loop bodies, a try's body, handlers, else, finally)."""
    out = [b for b in (getattr(s, "body", None), getattr(s, "orelse", None)) if isinstance(b, list)]
    if isinstance(s, Try):
        out += [h.body for h in s.handlers] + [s.finalbody]
    return out


def walk_statements(stmts: list[Stmt]):
    """Every statement of ``stmts`` and of the blocks nested in them, in order."""
    for s in stmts:
        yield s
        for block in blocks(s):
            yield from walk_statements(block)


@dataclass
class Param:
    name: str
    type: Type
    flavor: str | None  # numpy | torch, for tensors
    default: Any = None
    has_default: bool = False
    dtype_assumed: bool = False  # an array annotation without a dtype: its library's default was taken
    # Optional[T] (or a None default): the caller may pass None. The entry takes a presence flag before the
    # value; the body may read the value only where a test (`if p is not None:`) or an assignment proved it
    # present, as a type checker narrows Optional.
    optional: bool = False


@dataclass
class Function:
    name: str
    params: list[Param]
    returns: Type
    return_flavor: str | None
    body: list[Stmt]
    path: str
    line: int
    end_line: int
    source_lines: list[str]
    locals: dict[str, Type] = field(default_factory=dict)  # filled by type propagation
    # The module's functions this one calls, specialised to their argument types (filled by type
    # propagation on the compiled function, in an order where each comes after those it calls).
    helpers: list["Function"] = field(default_factory=list)
    symbol: str = ""  # the emitted C++ name of a helper specialisation
    scope: Any = None  # the ModuleScope it was read from (helpers it calls are traced from it)
    nested: dict[str, Any] = field(default_factory=dict)  # name -> ast.FunctionDef defined inside it
    # An array return annotation without a dtype (-> torch.Tensor): the body's first return fixes the dtype
    # (for a tuple, per item)
    return_dtype_open: bool | tuple[bool, ...] = False
    dtype_overrides: dict[str, str] = field(default_factory=dict)  # opgen compile --dtype NAME=DTYPE


def walk(e: Expr):
    """Every expression under ``e``, children first (the order the emitter evaluates them)."""
    for c in e.children:
        yield from walk(c)
    yield e


@dataclass(eq=False)
class PipelineEmbed(Expr):
    """``opgen.pipelines.embed("model", texts)``: not a registry op but a model's whole native
    pipeline (tokenizer, encoder, pooling, normalisation), linked into the library with the
    registry kernels it calls (see pipeline_intrinsic.py)."""

    model: str  # the canonical model name
    texts: Expr
    source: str
    linked: Any = None  # pipeline_intrinsic.LinkedPipeline, filled by the driver before emission

    @property
    def children(self) -> list[Expr]:
        return [self.texts]
