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

    @property
    def children(self) -> list["Expr"]:
        return []


@dataclass(eq=False)
class Const(Expr):
    value: Any  # int | float | str | bool


@dataclass(eq=False)
class ListLit(Expr):
    items: list[Expr]


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
    bound: list[Expr] = field(default_factory=list)  # arguments in the kernel's parameter order
    spec: Spec | None = None
    overload: Overload | None = None
    entry: Entry | None = None

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
    """A Python builtin the compiler implements itself: len(list), float(number)."""

    name: str
    args: list[Expr]

    @property
    def children(self) -> list[Expr]:
        return self.args


@dataclass(eq=False)
class Index(Expr):
    """``xs[i]`` on a list (IndexError) or ``d[k]`` on a dict (KeyError)."""

    base: Expr
    index: Expr

    @property
    def children(self) -> list[Expr]:
        return [self.base, self.index]


@dataclass(eq=False)
class IfExp(Expr):
    cond: Expr
    then: Expr
    orelse: Expr

    @property
    def children(self) -> list[Expr]:
        return [self.cond, self.then, self.orelse]


@dataclass(eq=False)
class ListComp(Expr):
    """``[elt for var in iterable if cond ...]``; ``var`` is local to the comprehension."""

    elt: Expr
    var: str
    iterable: Expr
    conds: list[Expr]

    @property
    def children(self) -> list[Expr]:
        return [self.iterable, *self.conds, self.elt]


@dataclass(eq=False)
class Convert(Expr):
    """An implicit numeric widening Python does (bool -> int -> float), made explicit."""

    value: Expr

    @property
    def children(self) -> list[Expr]:
        return [self.value]


@dataclass(eq=False)
class Stmt:
    line: int


@dataclass(eq=False)
class Assign(Stmt):
    name: str
    value: Expr
    declared: Type | None = None  # from `name: T = value`


@dataclass(eq=False)
class Append(Stmt):
    name: str
    value: Expr


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    body: list[Stmt]
    orelse: list[Stmt]


@dataclass(eq=False)
class For(Stmt):
    var: str
    iterable: Expr
    body: list[Stmt]


@dataclass(eq=False)
class Return(Stmt):
    value: Expr


@dataclass
class Param:
    name: str
    type: Type
    flavor: str | None  # numpy | torch, for tensors
    default: Any = None
    has_default: bool = False


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
