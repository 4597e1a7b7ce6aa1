"""Type propagation: seeded by the annotations, driven by the registry.

Every expression gets a type: a constant's own, a variable's (fixed by its first
assignment), and an op's is the return type of the verified registry entry for
(op, argument types). Alongside, the checks that keep the native code faithful to
Python: a variable keeps one type; a name is read only where it is surely assigned;
every path returns; a list that is appended to is never shared with another name.
"""

from __future__ import annotations

import ast
import copy
import sys
from typing import Any, Callable

from opgen.compiler import aliasing, casts, creation, flavor, ir, lowerings, promotion
from opgen.compiler.errors import CompileError, MissingOp
from opgen.compiler.resolve import EXACT_COMPARISONS, OpResolver
from opgen.spec.library_signature import EMPTY, NOVALUE, library_signatures, map_params
from opgen.spec.model import check_default
from opgen.spec.names import method_named, spec_named
from opgen.compiler.types import (BOOL, FLOAT, INT, STR, DictType, TupleType, Type, common_numeric, list_of,
                                  tensor_of, widens_to)

# The Python type names a method of a value of each kind is declared under (``methods:`` in specs):
# a tensor is a NumPy array or a torch tensor (its flavor says which, where it is known), a scalar or a
# str is its own name (``str.lower``), as are lists and dicts.
METHOD_RECEIVERS = {"tensor": ("ndarray", "Tensor"), "list": ("list",), "dict": ("dict",)}
ARRAY_CLASS = {flavor.NUMPY: "ndarray", flavor.TORCH: "Tensor"}

# Index arrays widened to int64 (opgen.cast) for numpy.take, by the array's library (None: not known, so
# what both take): NumPy indexes with any integer dtype (uint64 is refused here: not every value of it is
# an int64); torch with int64 and int32 only, and reads a uint8 tensor as a mask.
WIDENED_INDEX_DTYPES: dict[str | None, tuple[str, ...]] = {
    flavor.NUMPY: ("int32", "int16", "int8", "uint8", "uint16", "uint32"),
    flavor.TORCH: ("int32",),
    None: ("int32",),
}
EMBEDDINGS = tensor_of("float32")  # opgen.pipelines.embed: (len(texts), the model's dimension)


def propagate(fn: ir.Function, resolver: OpResolver) -> ir.Function:
    """Types ``fn`` (and the helpers it calls); returns the typed function, which is a fresh trace of
    the same source when an empty container's element type had to be learnt first (see _Retry)."""
    from opgen.compiler.tracer import retrace  # the tracer imports this module's siblings only

    return _with_inferred_containers(fn, lambda hints, f: Propagator(f, resolver, _Helpers(f), hints).run(),
                                     lambda: retrace(fn))


class _Retry(Exception):
    """``out = []`` or ``counts = {}`` without an annotation: the container's type is a guess until a use
    fixes it (``out.append(s)``, ``counts[w] = n``, ``return out``). When the use disagrees with the
    guess, typing starts again from a fresh trace with the learnt type: Python's containers take
    their element type from what goes in, and so does a compiled one."""

    def __init__(self, name: str, t: Type):
        super().__init__(name)
        self.name, self.type = name, t


class _GuessFailed(Exception):
    """Typing failed where a guessed container had been read before anything was put in it
    (``out[-1]`` of ``out = []``): the next try guesses another element type."""

    def __init__(self, name: str, error: CompileError):
        super().__init__(name)
        self.name, self.error = name, error


_MAX_RETRIES = 64
# Copies of an array (a new array of the same values), by the library they belong to.
COPY_METHODS = {"copy": flavor.NUMPY, "clone": flavor.TORCH}
# Python's unary operators on an array: the op they call, by the array's kind (NumPy's and torch's ~ of a
# bool array is logical not; - of a bool array is their TypeError, which numpy.negative's overloads give).
ARRAY_UNARY = {"operator.neg": {"number": "numpy.negative", "bool": "numpy.negative"},
               "operator.invert": {"number": "operator.invert", "bool": "numpy.logical_not"}}
# a | b, a & b, a ^ b of bool arrays: NumPy's and torch's operators are the logical ufuncs on bools
ARRAY_LOGICAL = {"operator.or_": "numpy.logical_or", "operator.and_": "numpy.logical_and",
                 "operator.xor": "numpy.logical_xor"}
KEEPDIMS_NAMES = ("keepdims", "keepdim")  # NumPy's and torch's
# Arrays from data: the library, and whether an array passed in is copied (np.array) or itself (np.asarray)
ARRAY_FROM_DATA = {"numpy.array": (flavor.NUMPY, True), "numpy.asarray": (flavor.NUMPY, False),
                   "torch.tensor": (flavor.TORCH, True), "torch.as_tensor": (flavor.TORCH, False)}
DEFAULT_ARRAY_DTYPE = {flavor.NUMPY: {"float": "float64", "int": "int64", "bool": "bool"},
                       flavor.TORCH: {"float": "float32", "int": "int64", "bool": "bool"}}
SAME_METHODS = {"contiguous", "detach", "cpu"}  # torch methods whose result has the receiver's values
COPY_FUNCTIONS = {"numpy.copy": flavor.NUMPY, "torch.clone": flavor.TORCH}
_GUESSES = (INT, FLOAT, STR, BOOL)  # element types to guess in turn for a container read before it is filled


class _Hints(dict):
    """Learnt container types by name, plus the element types still to guess and those tried."""

    def __init__(self):
        super().__init__()
        self.guesses: dict[str, Type] = {}
        self.tried: dict[str, list[Type]] = {}
        self.first_error: dict[str, CompileError] = {}


def _with_inferred_containers(fn: ir.Function, run, fresh) -> ir.Function:
    """``run(hints, fn)`` until no empty container's type is learnt anew; each retry types ``fresh()``."""
    hints = _Hints()
    for _ in range(_MAX_RETRIES):
        try:
            run(hints, fn)
            return fn
        except _Retry as r:
            if hints.get(r.name) == r.type:
                raise AssertionError(f"inferring {r.name} made no progress ({r.type})") from None
            hints[r.name] = r.type
            fn = fresh()
        except _GuessFailed as g:
            tried = hints.tried.setdefault(g.name, [])
            tried.append(hints.guesses.get(g.name, INT))
            hints.first_error.setdefault(g.name, g.error)
            untried = [t for t in _GUESSES if t not in tried]
            if not untried:
                raise hints.first_error[g.name] from None
            hints.guesses[g.name] = untried[0]
            fn = fresh()
    raise CompileError(f"the types of the empty containers of {fn.name} did not settle after {_MAX_RETRIES} tries",
                       where=f"{fn.path}:{fn.line}", hint="annotate them: xs: list[int] = []")


class _Helpers:
    """The module functions a compiled function calls, one specialisation per (function, argument
    types), shared by every function of the call tree; ``active`` is the call chain being typed."""

    def __init__(self, root: ir.Function):
        self.root = root
        self.done: dict[tuple, ir.Function] = {}
        self.active: list[str] = []


def python_type(value: Any) -> Type | None:
    """The compiler type of a Python literal (bool before int: True is an int in Python)."""
    for py, t in ((bool, BOOL), (int, INT), (float, FLOAT), (str, STR)):
        if type(value) is py:
            return t
    return None


class Propagator:
    def __init__(self, fn: ir.Function, resolver: OpResolver, helpers: _Helpers,
                 hints: _Hints | None = None):
        self.fn = fn
        self.hints = hints if hints is not None else _Hints()  # empty containers' types learnt on earlier tries
        self.guesses = self.hints.guesses  # element types to guess, by name
        self.guessed: dict[str, Type] = {}  # empty containers whose type no use has fixed yet
        self.guess_reads: dict[str, tuple[int, int]] = {}  # name -> (assigned at, first read at) while guessed
        self.inferred: set[str] = set()  # containers typed by what is put in them, not by an annotation
        self.resolver = resolver
        self.helpers = helpers
        self.params = {p.name: p.type for p in fn.params}
        self.vars: dict[str, Type] = dict(self.params)  # every local's one type
        self.flavors: dict[str, str | None] = {p.name: p.flavor for p in fn.params}  # arrays' libraries, by name
        self.first_line: dict[str, int] = {name: fn.line for name in self.params}
        self.comprehension: list[tuple[str, Type]] = []  # innermost last
        self.return_line = 0  # a helper's first return, which fixed its result type
        self.return_fixed = False  # an open return dtype (-> torch.Tensor) fixed by the first return
        self.iterating: list[str] = []  # list variables being looped over, outermost first
        self.appended = _appended_names(fn.body)  # lists and dicts changed in place: never shared
        self.inplace = _inplace_names(fn.body)  # names of `x += ...`, which changes x in place if it is a list
        # Optional parameters that may be None at this point of the body: reading one is refused (what a
        # type checker says); a test (`if mask is not None:`) or an assignment takes it out, as narrowing does.
        self.maybe_none: set[str] = {p.name for p in fn.params if p.optional}

    def where(self, node: ir.Expr | ir.Stmt) -> str:
        return f"{self.fn.path}:{node.line}"

    def error(self, node: ir.Expr | ir.Stmt, message: str, hint: str | None = None) -> CompileError:
        return CompileError(message, where=self.where(node), hint=hint)

    def run(self) -> None:
        for name in self.appended & set(self.params):
            raise CompileError(f"changing the parameter {name!r} in place (append, extend, {name}[i] = ...) would "
                               "change the caller's value in Python; a compiled function cannot",
                               where=f"{self.fn.path}:{self.fn.line}",
                               hint=f"copy it first: out = list({name})" if self.params[name].kind == "list" else
                               f"copy it first: out = {name}.clone() (torch) or out = {name}.copy() (NumPy)"
                               if self.params[name].kind == "tensor" else f"copy it first: out = dict({name})")
        self.check_unpacked_params()
        try:
            assigned, returns = self.block(self.fn.body, set(self.params))
        except CompileError as e:
            read = {n: at for n, at in self.guess_reads.items() if n in self.guessed}
            if read:  # the guess may be what went wrong: say so (the next try guesses another type)
                name = next(iter(read))
                line, first = read[name]
                e.hint = ((e.hint + "; ") if e.hint else "") + (
                    f"the element type of {name} (empty at line {line}) was guessed as {self.guessed[name]} where it "
                    f"is read at line {first}, before anything is put in it: annotate it, e.g. "
                    f"{name}: {'dict[str, str]' if isinstance(self.guessed[name], DictType) else 'list[str]'} = "
                    f"{'{}' if isinstance(self.guessed[name], DictType) else '[]'}")
                raise _GuessFailed(name, e) from None
            raise
        if not returns:
            raise CompileError(f"{self.fn.name} can reach its end without returning (Python would return None)",
                               where=f"{self.fn.path}:{self.fn.end_line}", hint="return a value on every path")
        self.fn.locals = {k: v for k, v in self.vars.items() if k not in self.params}
        aliasing.check(self.fn)  # a[mask] = v compiled as a rebinding: only where no other name can tell

    # ------------------------------------------------------------------ statements

    def block(self, stmts: list[ir.Stmt], assigned: set[str]) -> tuple[set[str], bool]:
        """Types a block; returns the names surely assigned after it and whether it never falls
        through (every path returns, or loops forever)."""
        assigned = set(assigned)
        for at, s in enumerate(stmts):
            if isinstance(s, ir.Assign) and s.inplace and getattr(self.vars.get(s.name), "kind", None) == "tensor":
                s = stmts[at] = self.array_augmented(s)  # `a += v` writes into a's memory: a[...] = a + v
            if isinstance(s, ir.Assign):
                self.assign(s, assigned)
                assigned.add(s.name)
                self.maybe_none.discard(s.name)
            elif isinstance(s, ir.Unpack):
                self.unpack(s, assigned)
                assigned |= set(ir.target_names(s.target))
                self.maybe_none -= set(ir.target_names(s.target))
            elif isinstance(s, ir.Append):
                self.append(s, assigned)
            elif isinstance(s, ir.SetItem):
                self.set_item(s, assigned)
            elif isinstance(s, ir.If):
                s.cond = self.condition(s.cond, assigned)
                before = self.maybe_none
                self.maybe_none = before - _present_if(s.cond, True)
                then, then_returns = self.block(s.body, assigned)
                after_then, self.maybe_none = self.maybe_none, before - _present_if(s.cond, False)
                orelse, else_returns = self.block(s.orelse, assigned)
                after_else = self.maybe_none
                # what may be None after the if: what may be on a branch that falls through to it
                self.maybe_none = after_else if then_returns else after_then if else_returns else after_then | after_else
                if then_returns and else_returns:
                    return assigned, True
                assigned = orelse if then_returns else then if else_returns else then & orelse
            elif isinstance(s, ir.For):
                elem = self.iteration(s.iterable, assigned, "a for loop", rows=True)
                libraries = dict(self.bind(s, s.target, _row_flavors(s.iterable, elem)))
                for name, t in self.bind(s, s.target, elem):
                    self.declare(s, name, t)
                    if t.kind == "tensor":  # for row in x: each row a view of x, of x's library
                        self.declare_flavor(s, name, libraries.get(name))
                iterated = [v.name for v in _iterated_vars(s.iterable)]
                self.iterating.extend(iterated)
                # The body may run zero times: nothing it assigns is sure afterwards.
                before = self.maybe_none
                self.maybe_none = before - set(ir.target_names(s.target))
                self.block(s.body, assigned | set(ir.target_names(s.target)))
                self.maybe_none = before
                del self.iterating[len(self.iterating) - len(iterated):]
            elif isinstance(s, ir.While):
                s.cond = self.condition(s.cond, assigned)
                before = self.maybe_none
                self.maybe_none = before - _present_if(s.cond, True)
                self.block(s.body, assigned)
                self.maybe_none = before  # the body may run zero times
                if isinstance(s.cond, ir.Const) and s.cond.value is True and not _breaks(s.body):
                    return assigned, True  # `while True:` without a break only leaves by return
            elif isinstance(s, ir.Print):
                t = self.expr(s.value, assigned)
                if t != STR:
                    raise self.error(s, f"print()'s sep and end must be str (the text is a {t})", "pass str values")
            elif isinstance(s, ir.Try):
                done = self.try_statement(s, assigned)
                if done is None:
                    return assigned, True
                assigned = done
            elif isinstance(s, (ir.Break, ir.Continue)):
                return assigned, False  # what follows in this block never runs; the loop goes on after it
            elif isinstance(s, ir.Return):
                self.returned(s, assigned)
                return assigned, True
            elif isinstance(s, ir.Raise):
                self.raised(s, assigned)
                return assigned, True  # the path ends here, as a return's does
        return assigned, False

    def try_statement(self, s: ir.Try, assigned: set[str]) -> set[str] | None:
        """Types a try statement; returns the names surely assigned after it, or None when no path falls through.
        A handler may start anywhere in the body: it knows only what was sure before the try (and may-be-None
        Optional parameters are as before it)."""
        before = self.maybe_none
        ends: list[tuple[set[str], set[str]]] = []  # (assigned, maybe_none) where a path falls through
        body, body_returns = self.block(s.body, assigned)
        if not body_returns:
            orelse, else_returns = self.block(s.orelse, body)
            if not else_returns:
                ends.append((orelse, self.maybe_none))
        for h in s.handlers:
            self.maybe_none = before
            handled, h_returns = self.block(h.body, assigned)
            if not h_returns:
                ends.append((handled, self.maybe_none))
        if s.finalbody:
            # It runs on every way out, an error in the middle of the body included: it knows what was sure
            # before the try, and every Optional parameter is as unsure as on any of those ways.
            self.maybe_none = before.union(*(m for _, m in ends))
            final, _ = self.block(s.finalbody, assigned)
            newly = final - assigned
            ends = [(a | newly, m | self.maybe_none) for a, m in ends]
        if not ends:
            self.maybe_none = before
            return None
        self.maybe_none = set().union(*(m for _, m in ends))
        return set.intersection(*(a for a, _ in ends))

    def returned(self, s: ir.Return, assigned: set[str]) -> None:
        if self.fn.return_dtype_open and not self.return_fixed:
            self.open_return(s, assigned)
            self.return_fixed = True
        if isinstance(s.value, ir.TupleLit):
            want = self.fn.returns
            if want is not None and not isinstance(want, TupleType):
                raise self.error(s, f"{self.fn.name} returns a tuple, but is annotated -> {want}",
                                 f"annotate it -> tuple[...], or return a {want}")
            items = [self.expr(x, assigned) for x in s.value.items]
            if want is not None and not self.return_line:  # the annotated function: each item as annotated
                if len(items) != len(want.items):
                    raise self.error(s, f"{self.fn.name} returns {len(items)} values, but is annotated -> {want}",
                                     "return as many values as the annotation names")
                s.value.items = [self.coerce(x, have, w, f"{self.fn.name} returns a {have} as item {i} of its "
                                                         f"tuple, but is annotated -> {want}",
                                             "return the annotated type, or change the annotation")
                                 for i, (x, have, w) in enumerate(zip(s.value.items, items, want.items))]
                items = list(want.items)
            t = TupleType(tuple(items))
            s.value.type = t
        elif _empty_container(s.value) and self.fn.returns is not None and self.fn.returns.kind == \
                _empty_container(s.value):
            t = s.value.type = self.fn.returns  # return [] from a function annotated -> list[int]
        else:
            t = self.expr(s.value, assigned)
        if self.fn.returns is None:  # a helper: its first return fixes its type
            if isinstance(t, TupleType) and any(isinstance(x, TupleType) for x in t.items):
                raise self.error(s, "a nested tuple result is not supported by opgen compile", "return a flat tuple")
            self.fn.returns, self.return_line = t, s.line
            self.fn.return_flavor = s.value.flavor
            return
        if self.return_line:  # Python returns whatever each return gives: they must agree exactly
            if t == self.fn.returns and s.value.flavor != self.fn.return_flavor:
                raise self.error(s, f"{self.fn.name} returns a {flavor.LIBRARY.get(self.fn.return_flavor)} array "
                                    f"(line {self.return_line}) but a {flavor.LIBRARY.get(s.value.flavor)} one here",
                                 "return arrays of one library")
            if t != self.fn.returns:
                raise self.error(s, f"{self.fn.name} returns {self.fn.returns} (line {self.return_line}) but {t} "
                                    "here; a compiled function returns one type",
                                 "make every return the same type (e.g. 0.0 rather than 0)")
            return
        s.value = self.coerce(s.value, t, self.fn.returns, f"{self.fn.name} returns {t}, but is annotated "
                                                           f"-> {self.fn.returns}",
                              "return the annotated type, or change the annotation")

    def raised(self, s: ir.Raise, assigned: set[str]) -> None:
        """The message of a raise: a str, or what str() makes of an int, float or bool (str(exc) is str(arg))."""
        t = self.expr(s.value, assigned)
        if t in (INT, FLOAT, BOOL):
            s.value = ir.Op(s.line, "builtins.format", [s.value, ir.Const(s.line, "")], {}, "the message")
            t = self.expr(s.value, assigned)
        if t != STR:
            raise self.error(s, f"raise {s.kind}(...) with a {t} message is not supported by opgen compile",
                             "pass a str message, e.g. an f-string")

    def open_return(self, s: ir.Return, assigned: set[str]) -> None:
        """``-> torch.Tensor`` (no dtype): the array the first return gives fixes the dtype, as Python returns
        whatever the body computes; later returns must agree (the helpers' rule, through return_line)."""
        want, open_items = self.fn.returns, self.fn.return_dtype_open
        if isinstance(want, TupleType):
            if not isinstance(s.value, ir.TupleLit) or len(s.value.items) != len(want.items):
                return  # the annotated path reports it
            have = [self.expr(x, assigned) for x in s.value.items]
            self.fn.returns = TupleType(tuple(
                h if o and w.kind == "tensor" and h.kind == "tensor" else w
                for w, h, o in zip(want.items, have, open_items)))
        elif want.kind == "tensor":
            have = self.expr(s.value, assigned)
            if have.kind == "tensor":
                self.fn.returns = have

    def check_unpacked_params(self) -> None:
        for p in self.fn.params:
            if p.type is None:
                raise AssertionError(f"helper {self.fn.name} was not specialised")

    def bind(self, node: ir.Stmt | ir.Expr, target: ir.Target, elem: Any) -> list[tuple[str, Type]]:
        """The names a target binds to the parts of a value of this (possibly tuple) type."""
        if isinstance(target, str):
            if isinstance(elem, tuple):
                raise self.error(node, f"{target} would hold a tuple ({', '.join(map(str, elem))}); a tuple value is "
                                       "not supported by opgen compile", "unpack it: for a, b in ...")
            return [(target, elem)]
        if not isinstance(elem, tuple):
            raise self.error(node, f"unpacking a {elem} into {len(target)} names is not supported by opgen compile",
                             "unpack tuples from zip(), enumerate(), dict.items() or a tuple literal")
        if len(target) != len(elem):
            word = "too many" if len(elem) > len(target) else "not enough"
            raise self.error(node, f"{word} values to unpack (expected {len(target)}, got {len(elem)}); Python "
                                   "raises ValueError", "match the names to the values")
        return [pair for t, e in zip(target, elem) for pair in self.bind(node, t, e)]

    def unpack(self, s: ir.Unpack, assigned: set[str]) -> None:
        if isinstance(s.value, ir.TupleLit):
            if not isinstance(s.target, str) and len(s.target) == len(s.value.items):
                for name, x in zip(s.target, s.value.items):  # keep, drop = [], []
                    if isinstance(name, str) and _empty_container(x):
                        self.assign_empty(s, name, x, None)
            elem = tuple(x.type if _empty_container(x) and x.type is not None else self.expr(x, assigned)
                         for x in s.value.items)
            s.value.type = TupleType(elem)
        else:
            t = self.expr(s.value, assigned)
            if isinstance(t, TupleType):
                elem = t.items
            elif t.kind == "list":
                # n, d = x.shape: the length is known only when it runs (ValueError if it differs).
                elem = tuple(t.elem for _ in s.target) if not isinstance(s.target, str) else t
                if any(not isinstance(x, str) for x in s.target):
                    raise self.error(s, "nested unpacking of a list is not supported by opgen compile",
                                     "unpack one level at a time")
            else:
                raise self.error(s, f"unpacking a {t} is not supported by opgen compile",
                                 "unpack a tuple literal, a helper's tuple result or a list")
        for name, t in self.bind(s, s.target, elem):
            self.declare(s, name, self.vars.get(name) or t)
            if self.vars[name] != t:
                raise self.error(s, f"{name} is {self.vars[name]} (line {self.first_line.get(name, s.line)}) but is "
                                    f"assigned a {t} here; a compiled variable keeps one type", "use another name")

    def assign_empty(self, s: ir.Stmt, name: str, value: ir.Expr, declared: Type | None) -> None:
        """``out = []`` or ``counts = {}``: typed by an annotation, an earlier assignment, a type learnt
        on an earlier try, or else guessed until a use fixes it (see _Retry)."""
        empty = _empty_container(value)
        want = declared or self.vars.get(name) or self.hints.get(name)
        if want is None:
            elem = self.guesses.get(name, INT)
            want = list_of(elem) if empty == "list" else DictType(elem)
            self.guessed[name] = want
            self.guess_reads.pop(name, None)
            self.first_line.setdefault(name, s.line)
        if declared is None and name not in self.vars:
            self.inferred.add(name)
        if want.kind != empty:
            shown = "[]" if empty == "list" else "{}"
            raise self.error(s, f"{name} is {want} (line {self.first_line.get(name, s.line)}) but is "
                                f"assigned {shown} here; a compiled variable keeps one type", "use another name")
        value.type = want
        self.declare(s, name, want)

    def assign(self, s: ir.Assign, assigned: set[str]) -> None:
        if _empty_container(s.value):
            self.assign_empty(s, s.name, s.value, s.declared)
            return
        if s.inplace and s.name in self.params and self.params[s.name].kind == "list":
            raise self.error(s, f"{s.name} += ... changes the caller's list in Python; a compiled function cannot",
                             f"copy it first: out = list({s.name})")
        t = self.expr(s.value, assigned)
        if isinstance(s.value, ir.Var) and (t.kind == "list" or isinstance(t, DictType)) and (
                {s.name, s.value.name} & (self.appended | self.inplace)):
            raise self.error(s, f"{s.name} = {s.value.name} makes both names one list in Python, and one of them "
                                "is appended to; compiled lists are values", f"copy it: {s.name} = [x for x in {s.value.name}]")
        want = s.declared or self.vars.get(s.name)
        if want is not None:
            s.value = self.coerce(s.value, t, want, f"{s.name} is {want} (line {self.first_line.get(s.name, s.line)}) "
                                                    f"but is assigned a {t} here; a compiled variable keeps one type",
                                  "use another name, or write the first value with the wider type "
                                  "(e.g. 0.0 rather than 0)")
        self.declare(s, s.name, want or t)
        self.declare_flavor(s, s.name, s.value.flavor)

    def declare_flavor(self, node: ir.Stmt, name: str, library: str | None) -> None:
        """An array variable keeps its library, as it keeps its type."""
        have = self.flavors.get(name)
        if name in self.flavors and have != library:
            raise self.error(node, f"{name} is a {flavor.LIBRARY.get(have, 'library-less')} array (line "
                                   f"{self.first_line.get(name) or self.fn.line}) but a "
                                   f"{flavor.LIBRARY.get(library, 'library-less')} one here; NumPy and torch apply "
                                   "different rules, and a compiled variable keeps one library", "use another name")
        self.flavors[name] = library

    def declare(self, node: ir.Stmt, name: str, t: Type) -> None:
        have = self.vars.get(name)
        if have is None:
            self.vars[name] = t
            self.first_line[name] = node.line
        elif have != t:
            raise self.error(node, f"{name} is {have} (line {self.first_line.get(name) or self.fn.line}) but {t} here; "
                                   "a compiled variable keeps one type", "use another name, or write the first "
                                   "value with the wider type (e.g. 0.0 rather than 0)")

    def append(self, s: ir.Append, assigned: set[str]) -> None:
        method = "extend" if s.extend else "append"
        have = self.vars.get(s.name)
        if have is None or s.name not in assigned:
            raise self.error(s, f"{s.name} may be used before it is assigned", f"start it as {s.name} = []")
        if have.kind != "list":
            raise self.error(s, f"{s.name} is {have}, not a list; {method} is for lists")
        if s.name in self.iterating:
            raise self.error(s, f"changing {s.name} while a for loop iterates over it is not supported",
                             f"{method} to another list")
        t = self.expr(s.value, assigned)
        if s.extend:
            if t.kind != "list" and t != STR:
                raise self.error(s, f"{s.name}.extend() takes a list (or a str's characters), not a {t}",
                                 f"append one value: {s.name}.append(v)")
            elem = t.elem if t.kind == "list" else STR
            self.fix_guess(s.name, list_of(elem) if elem.kind == "scalar" else None)
            have = self.vars[s.name]
            if elem != have.elem and not widens_to(elem, have.elem):
                raise self.error(s, f"{s.name} is {have}; cannot extend it with a {t}",
                                 "extend it with values of the list's element type")
            return
        self.fix_guess(s.name, list_of(t) if t.kind == "scalar" else None)
        have = self.vars[s.name]
        if t.kind != "scalar":
            raise self.error(s, f"a list of {t} is not supported (list elements are int, float, bool or str)",
                             "use numpy functions on arrays instead of lists of arrays")
        s.value = self.coerce(s.value, t, have.elem, f"{s.name} is {have}; cannot append a {t}",
                              "append values of the list's element type")

    def array_augmented(self, s: ir.Assign) -> ir.SetItem:
        """``a += v`` (and the other augmented operators, and torch's ``t.add_(v)``) where ``a`` is an
        array: NumPy and torch compute ``a + v`` and write it into ``a``'s own memory (``np.add(a, v,
        out=a)``), so every name holding ``a`` or a view of it sees the change, the caller too when ``a``
        is an argument. Compiled as the item assignment ``a[...] = a + v`` it means: a rebinding where
        opgen.compiler.aliasing proves no other name can tell, refused otherwise."""
        written = getattr(s.value, "source", None) or f"{s.name} op= ..."
        if s.name in self.params and not _rebound_before(self.fn.body, s.name, s):
            raise self.error(s, f"{written} writes into the parameter {s.name!r} in place (as NumPy's and torch's "
                                "augmented operators and torch's in-place methods do): Python changes the caller's "
                                "array, a compiled function cannot",
                             f"make a new array instead ({s.name} = {s.name} + ...), or copy first: "
                             f"{s.name} = {s.name}.copy() (NumPy) or {s.name} = {s.name}.clone() (torch)")
        return ir.SetItem(s.line, s.name, None, s.value, [ir.IndexPart("ellipsis")], augmented=written)

    def check_in_place_cast(self, s: ir.SetItem, have: Type, t: Type) -> None:
        """NumPy writes an augmented result into the array under 'same_kind' casting and torch under its
        own casting rule (no float into an int tensor, nothing but bool into bool): both raise otherwise,
        whatever the values, so opgen compile refuses it (the Python function always raises there)."""
        into, result = have.dtype.name, t.dtype.name
        if self.flavors.get(s.name) == flavor.TORCH:
            allowed = promotion.category(result) <= promotion.category(into)
            library, error = "torch", "RuntimeError"
        else:
            allowed = promotion.same_kind(result, into)
            library, error = "NumPy", "UFuncTypeError"
        if not allowed:
            raise self.error(s, f"{s.augmented}: the result is {result} and {s.name} is {into}; {library} cannot "
                                f"write it into {s.name} in place and raises {error}",
                             f"make a new array: {s.name}2 = {s.name} ... (a new name, of the result's dtype)")

    def set_item(self, s: ir.SetItem, assigned: set[str]) -> None:
        """``xs[i] = v`` and ``d[k] = v`` (Python evaluates v, then the container, then the index)."""
        have = self.vars.get(s.name)
        if have is None or s.name not in assigned:
            raise self.error(s, f"{s.name} may be used before it is assigned (Python raises UnboundLocalError)",
                             f"start it as {s.name} = {{}} or {s.name} = []")
        if s.name in self.iterating:
            raise self.error(s, f"changing {s.name} while a for loop iterates over it is not supported",
                             f"write into a copy made before the loop ({s.name}2 = {s.name}.copy())"
                             if have.kind == "tensor" else "build a new list with a comprehension instead")
        t = self.expr(s.value, assigned)
        if have.kind == "tensor":
            if s.augmented is not None and not s.rebind and t.kind == "tensor":
                if s.in_place_value == "result":
                    self.check_in_place_cast(s, have, t)
                elif s.in_place_value == "number":
                    raise self.error(s, f"{s.augmented}: fill_ with a tensor value is not supported by opgen compile",
                                     f"pass a number: {s.name}.fill_(float(v))")
            self.array_set_item(s, have, t, assigned)
            return
        if s.parts is not None:
            raise self.error(s, f"assigning to a slice or a multi-dimensional index of a {have} is not supported "
                                "by opgen compile", "assign one element at a time")
        key = self.expr(s.index, assigned)
        if isinstance(have, DictType):
            if key != STR:
                raise self.error(s, f"{s.name} is a dict[str, ...]; its key here is a {key}", "key it by str")
            self.fix_guess(s.name, DictType(t) if t.kind == "scalar" else None)
            have = self.vars[s.name]
            if t.kind != "scalar":
                raise self.error(s, f"a dict of {t} values is not supported (dict values are int, float, bool or str)")
            s.value = self.coerce(s.value, t, have.value, f"{s.name} is {have}; cannot store a {t} in it",
                                  "store values of the dict's value type")
            return
        if have.kind == "list":
            if key not in (INT, BOOL):
                raise self.error(s, f"a list is indexed with a {key}", "index it with an int")
            s.index = self.coerce(s.index, key, INT, "")
            self.fix_guess(s.name, list_of(t) if t.kind == "scalar" else None)
            have = self.vars[s.name]
            s.value = self.coerce(s.value, t, have.elem, f"{s.name} is {have}; cannot store a {t} in it",
                                  "store values of the list's element type")
            return
        raise self.error(s, f"{s.name} is a {have}; only lists, dicts and arrays take item assignment "
                            "(Python raises TypeError)")

    def array_set_item(self, s: ir.SetItem, have: Type, t: Type, assigned: set[str]) -> None:
        """``a[mask] = v``: NumPy's and torch's item assignment with a bool mask over a's first dims and a
        scalar v, as opgen.masked_fill (v cast to a's dtype as setitem casts it; the same IndexError for
        a mask of another shape), whose result is bound to a again (``rebind``). Python writes a in
        place; opgen.compiler.aliasing refuses the functions where another name could tell."""
        if s.rebind:  # lowered on an earlier pass over this loop or branch: type the update again
            self.expr(s.value, assigned)
            return
        if s.parts is not None or s.index is None:
            self.region_set_item(s, have, t, assigned)
            return
        key = self.expr(s.index, assigned)
        if key.kind == "scalar":  # y[i] = v: a basic index
            self.region_set_item(s, have, t, assigned)
            return
        if key.kind != "tensor" or key.dtype.name != "bool":
            raise self.error(s, f"assigning into an array at a {key} index (integer-array indexing) is not "
                                "supported by opgen compile; a bool mask is (a[mask] = v), and so are ints, slices, "
                                "... and None (a[i] = v, a[:, :k] = w)",
                             "select with a bool mask of a's shape, or build the new array with np.where")
        base_flavor, mask_flavor = self.flavors.get(s.name), s.index.flavor
        if base_flavor is not None and mask_flavor is not None and base_flavor != mask_flavor:
            raise self.error(s, "a NumPy array assigned into through a torch mask, or the other way round: the "
                                "libraries convert it in their own ways", "use a mask of the same library")
        if t.kind == "tensor":
            raise self.error(s, f"assigning an array into {s.name}[mask] is not supported by opgen compile (only a "
                                "scalar is: its rows may depend on how many mask elements are true)",
                             f"write np.where(mask, v, {s.name}) for a v that broadcasts to {s.name}, or assign a "
                             "scalar")
        value = self.stored_scalar(s, f"{s.name}[mask]", have, t)
        op = ir.Op(s.line, "opgen.masked_fill", [ir.Var(s.line, s.name), s.index, value], {},
                   source=f"{s.name}[mask] = ... (a new {s.name}, opgen.masked_fill)")
        op.library_bound = True
        result = self.expr(op, assigned)
        if result != have:
            raise AssertionError(f"opgen.masked_fill of a {have} gave a {result}")
        s.value, s.index, s.rebind = op, None, True

    def stored_scalar(self, s: ir.SetItem, target: str, have: Type, t: Type) -> ir.Expr:
        """A Python scalar stored into an array (``a[mask] = 0.0``, ``y[i] = v``) as the Python value of the
        array's kind that the kernel takes, where NumPy and torch store it as that kind's value would be
        (exactly, or rounded to float32)."""
        dtype = have.dtype.name
        # The scalar types each dtype takes as NumPy stores them exactly or by rounding alone: a float into
        # an int array truncates (and raises for inf and nan), a number into a bool array tests it.
        takes = {"float32": (FLOAT, INT, BOOL), "float64": (FLOAT, INT, BOOL), "int64": (INT, BOOL), "bool": (BOOL,)}
        if dtype not in takes:
            raise self.error(s, f"assigning into a {have} is not supported by opgen compile (arrays of float32, "
                                "float64, int64 and bool are)", f"convert {s.name} to one of those first")
        if t not in takes[dtype]:
            fix = {"int64": "write int(v) if truncation is meant", "bool": "write bool(v)"}.get(dtype, "")
            raise self.error(s, f"storing a {t} into {target}, a {have}: NumPy converts it in a way opgen "
                                "compile does not follow (a float into an int array truncates, and raises for inf "
                                "and nan)", fix or None)
        if dtype == "float32" and t == FLOAT and self.flavors.get(s.name) != flavor.NUMPY \
                and not _fits_float32(s.value):
            # torch converts the Python float first and raises RuntimeError for one beyond float32's range
            # (NumPy stores inf); compiled code checks that only for a constant.
            raise self.error(s, f"storing a computed float into {target}, a float32 torch tensor: torch raises "
                                "RuntimeError for a float beyond float32's range, which opgen compile does not check",
                             f"store a constant (-float('inf'), 0.0), or clamp: torch.clamp(v, max=...)")
        want = {"float32": FLOAT, "float64": FLOAT, "int64": INT, "bool": BOOL}[dtype]
        return self.coerce(s.value, t, want, "")

    def region_set_item(self, s: ir.SetItem, have: Type, t: Type, assigned: set[str]) -> None:
        """``y[i] = v``, ``out[:, :k] = w``, ``m[..., 0] = 0.0``: NumPy's and torch's item assignment through a
        basic index (ints, slices, ``...``, None), as opgen.assign_region, whose result is bound to y again
        (``rebind``, proven safe by opgen.compiler.aliasing as for a mask). v (a Python scalar, or an array
        converted to y's dtype as setitem converts it, the astype cast) broadcasts to the view y[...] as
        setitem broadcasts it; the runtime works out the region (opgen::compiled::region) with the same
        checks and errors as the read y[...]."""
        parts = s.parts if s.parts is not None else [ir.IndexPart("at", index=s.index)]
        target = f"{s.name}[{'...' if s.parts is not None else 'i'}]"
        view = ir.Subscript(s.line, ir.Var(s.line, s.name), parts)
        self.expr(view, assigned)  # the parts typed and checked as for a read
        if view.gather is not None:
            raise self.error(s, f"assigning through integer-array indices ({target} = v with a list or an int array "
                                "among the indices) is not supported by opgen compile", "assign through a bool mask "
                                "(a[mask] = v), or ints and slices, or build the new array with np.where")
        dtype = have.dtype.name
        base_flavor = self.flavors.get(s.name)
        if t.kind == "tensor":
            if s.value.flavor is not None and base_flavor is not None and s.value.flavor != base_flavor:
                raise self.error(s, "a NumPy array stored into a torch tensor, or the other way round: the libraries "
                                    "convert it in their own ways", "convert it first (torch.from_numpy(a), t.numpy())")
            value = s.value
            if t.dtype.name != dtype:  # setitem converts as astype (NumPy) and Tensor.to (torch) do
                value = ir.MethodCall(s.line, "", [s.value], {}, f"the value stored into {target}, converted to {dtype}",
                                      method="astype", receiver=s.value, result=dtype,
                                      called="ndarray.astype" if base_flavor == flavor.NUMPY else "Tensor.to",
                                      library_bound=True)
                self.expr(value, assigned)
        elif t.kind == "scalar":
            scalar = self.stored_scalar(s, target, have, t)
            value = ir.WeakScalar(s.line, scalar, dtype)
            value.type, value.flavor = tensor_of(dtype), base_flavor
        else:
            raise self.error(s, f"storing a {t} into {target} is not supported by opgen compile (a number or an array "
                                "is)", "make it an array first: np.asarray(v, dtype=...) outside the loop")
        region = ir.Region(s.line, "value", view=view, value=value, in_place=s.augmented is not None)
        region.type, region.flavor = have, base_flavor
        starts, steps = (ir.Region(s.line, what, of=region) for what in ("starts", "steps"))
        starts.type = steps.type = list_of(INT)
        op = ir.Op(s.line, "opgen.assign_region", [ir.Var(s.line, s.name), region, starts, steps], {},
                   source=f"{target} = ... (a new {s.name}, opgen.assign_region)")
        op.library_bound = True
        result = self.expr(op, assigned)
        if result != have:
            raise AssertionError(f"opgen.assign_region of a {have} gave a {result}")
        s.value, s.index, s.parts, s.rebind = op, None, None, True

    def fix_guess(self, name: str, t: Type | None) -> None:
        """A use that decides an empty container's type (what is put in it): confirm the guess, or start
        again with the type learnt (``t`` None: what is put in cannot be held; the caller says why)."""
        if t is None:
            return
        if name in self.guessed:
            if self.guessed[name] != t:
                raise _Retry(name, t)
            del self.guessed[name]
            return
        have = self.vars.get(name)
        if name in self.inferred and have is not None and have != t and _wider(t, have):
            raise _Retry(name, t)  # [0] then 0.5 goes in: Python's list holds both; a compiled one widens

    # ------------------------------------------------------------------ expressions

    def expr(self, e: ir.Expr, assigned: set[str]) -> Type:
        e.type = self._type(e, assigned)
        if e.type.kind == "tensor" or (e.type.kind == "list" and getattr(e.type, "is_tensor_list", False)):
            e.flavor = self.flavor_of(e)
        return e.type

    def flavor_of(self, e: ir.Expr) -> str | None:
        """The library whose rules an array value follows: a variable's, a helper's result's, else that of
        the arrays it is made from (they must agree), else that of the module of the op that made it."""
        if isinstance(e, ir.Var):
            for name, _ in reversed(self.comprehension):
                if name == e.name:
                    return None
            return self.flavors.get(e.name)
        if isinstance(e, ir.Call):
            return e.callee.return_flavor if e.callee is not None else None
        if isinstance(e, ir.Builtin) and e.name == "index_array":  # x[[0, 2], ...]: an array of x's library
            return getattr(e, "library", None)
        try:
            found = flavor.combine(c.flavor for c in e.children)
        except flavor.FlavorMix as mix:
            raise self.error(e, f"{getattr(e, 'source', None) or 'this expression'}: {mix}",
                             "convert one of them explicitly (torch.from_numpy(a) or t.numpy()) before the call, "
                             "outside the compiled function") from None
        if found is None and isinstance(e, ir.Op):
            return flavor.of_module(e.op)
        return found

    def _type(self, e: ir.Expr, assigned: set[str]) -> Type:
        if isinstance(e, ir.Const):
            return python_type(e.value)
        if isinstance(e, ir.Var):
            for name, t in reversed(self.comprehension):
                if name == e.name:
                    return t
            if e.name not in assigned or e.name not in self.vars:
                raise self.error(e, f"{e.name} may be used before it is assigned (Python raises UnboundLocalError)",
                                 "assign it on every path before this line")
            if e.name in self.maybe_none:
                raise self.error(e, f"{e.name} may be None here (its annotation admits None), and opgen compile reads "
                                    "an Optional parameter only where a test or an assignment proved it is not None "
                                    "(what a type checker requires)",
                                 f"test it first: `if {e.name} is not None:`, or give it a value when it is None: "
                                 f"`if {e.name} is None: {e.name} = ...`")
            if e.name in self.guessed:
                self.guess_reads.setdefault(e.name, (self.first_line.get(e.name, e.line), e.line))
            return self.vars[e.name]
        if isinstance(e, ir.Table):
            return self.table_type(e)
        if isinstance(e, ir.ListLit):
            return self.list_literal(e, assigned)
        if isinstance(e, ir.MethodCall):
            return self.method_call(e, assigned)
        if isinstance(e, ir.Op):
            return self.op(e, assigned)
        if isinstance(e, ir.Builtin):
            return self.builtin(e, assigned)
        if isinstance(e, ir.Index):
            return self.index(e, assigned)
        if isinstance(e, ir.Subscript):
            return self.subscript(e, assigned)
        if isinstance(e, ir.IfExp):
            e.cond = self.condition(e.cond, assigned)
            before = self.maybe_none
            self.maybe_none = before - _present_if(e.cond, True)
            a = self.expr(e.then, assigned)
            self.maybe_none = before - _present_if(e.cond, False)
            b = self.expr(e.orelse, assigned)
            self.maybe_none = before
            common = common_numeric(a, b)
            if common is None:
                raise self.error(e, f"the branches of this conditional expression are {a} and {b}; "
                                    "a compiled value has one type", "make both branches the same type")
            e.then = self.coerce(e.then, a, common, "")
            e.orelse = self.coerce(e.orelse, b, common, "")
            return common
        if isinstance(e, ir.ListComp):
            elem = self.comprehension_elem(e, assigned)
            return list_of(elem) if e.key is None else DictType(elem)
        if isinstance(e, ir.DictLit):
            return self.dict_literal(e, assigned)
        if isinstance(e, ir.BoolOp):
            return self.bool_op(e, assigned)
        if isinstance(e, ir.Truth):
            return BOOL
        if isinstance(e, ir.Call):
            return self.call(e, assigned)
        if isinstance(e, ir.TupleLit):
            raise self.error(e, "a tuple value here is not supported by opgen compile", "unpack it, or use a list")
        if isinstance(e, ir.DTypeConst):
            raise self.error(e, f"the dtype {e.source} as a value is supported only as a cast's dtype "
                                f"(x.astype({e.source}), x.to({e.source})) and as dtype= of np.zeros, ones, full "
                                "and arange (and torch's)",
                             "cast the array with astype or to; other calls take the dtype of their inputs")
        if isinstance(e, ir.Iteration):
            raise self.error(e, f"{e.kind}() is supported only where Python iterates over it",
                             f"loop over it, or make a list: list({e.kind}(...))")
        if isinstance(e, (ir.Convert, ir.WeakScalar)):
            return e.type
        if isinstance(e, ir.Region):  # typed where it is made (region_set_item); a later pass types its parts
            if e.what == "value":
                self.expr(e.view, assigned)
                self.expr(e.value, assigned)
            return e.type
        if isinstance(e, ir.PipelineEmbed):
            t = self.expr(e.texts, assigned)
            if t != list_of(STR):
                raise self.error(e, f"{e.source}: the texts are a {t}, not a list[str]", "pass a list of strings")
            return EMBEDDINGS
        raise AssertionError(f"untyped IR node {type(e).__name__}")

    def comprehension_elem(self, e: ir.ListComp, assigned: set[str]) -> Type:
        """Types the generators (each target bound for the clauses after it) and the element."""
        pushed = 0
        try:
            for g in e.generators:
                elem = self.iteration(g.source, assigned, "a comprehension")
                g.bound = self.bind(e, g.target, elem)
                self.comprehension += g.bound
                pushed += len(g.bound)
                g.conds = [self.condition(c, assigned) for c in g.conds]
            if e.key is not None:
                k = self.expr(e.key, assigned)
                if k != STR:
                    raise self.error(e, f"a dict comprehension's keys are {k}; compiled dicts are keyed by str",
                                     "key it by str (str(k) is not compiled yet), or build two lists")
            t = self.expr(e.elt, assigned)
        finally:
            del self.comprehension[len(self.comprehension) - pushed:]
        if t.kind != "scalar":
            what = "list" if e.key is None else "dict"
            raise self.error(e, f"a {what} of {t} is not supported ({what} elements are int, float, bool or str)",
                             "use numpy functions on arrays instead of containers of arrays")
        return t

    def bool_op(self, e: ir.BoolOp, assigned: set[str]) -> Type:
        """``a and b`` is a if a is falsy, else b (``or`` the other way round): with bools, the
        logical operation; with other values, one of them, so they must share a type."""
        types = self.operands(e, assigned, self.expr)
        if all(t == BOOL for t in types):
            return BOOL
        if len(set(types)) != 1:
            raise self.error(e, f"`{e.op}` of {', '.join(map(str, types))}: Python gives back one of the operands, "
                                "so a compiled value would have no one type", "compare explicitly, e.g. `x != 0 "
                                f"{e.op} y != 0`, or make the operands one type")
        self.truthy(e, types[0])
        return types[0]

    def operands(self, e: ir.BoolOp, assigned: set[str], typed: Callable) -> list:
        """Each operand of ``a and b`` typed in turn by ``typed`` (expr, giving its type, or condition, giving
        the test it becomes), each knowing what the operands before it proved: in `m is not None and m.any()`,
        m is not None by the second."""
        before, out = self.maybe_none, []
        for v in e.values:
            out.append(typed(v, assigned))
            test = out[-1] if typed == self.condition else v
            self.maybe_none = self.maybe_none - _present_if(test, e.op == "and")
        self.maybe_none = before
        return out

    def static_dtype(self, e: ir.Expr, assigned: set[str], what: str) -> str:
        """The dtype a dtype-valued expression names when the function compiles: np.float32, torch.long, or
        an array's ``.dtype``."""
        if isinstance(e, ir.DTypeConst):
            return e.dtype
        if isinstance(e, ir.MethodCall) and e.attribute and e.method == "dtype":
            t = self.expr(e.receiver, assigned)
            if t.kind == "tensor":
                return t.dtype.name
        raise self.error(e, f"{what} takes a dtype known when the function compiles (np.float32, torch.float16, "
                            "x.dtype)", "pass the dtype itself")

    def type_info(self, e: ir.Builtin, assigned: set[str]) -> Type:
        """``torch.finfo(x.dtype).min``, ``np.iinfo(np.int32).max``: constants of a dtype known when the function
        compiles. torch's are Python numbers; NumPy's are scalars of that dtype (np.finfo(np.float32).eps is a
        np.float32, which NumPy 2 treats as a 0-d array of its dtype, so 1.0 - eps is float32)."""
        arg, attr, function = e.args[0], e.args[1].value, e.args[2].value
        dtype = self.static_dtype(arg, assigned, f"{function}()")
        floating = function.endswith("finfo")
        if floating != (dtype in ("float16", "bfloat16", "float32", "float64")):
            raise self.error(e, f"{function}() of {dtype} raises in Python ({'finfo takes float' if floating else 'iinfo takes integer'} dtypes)",
                             f"use {'iinfo' if floating else 'finfo'} for {dtype}")
        import ml_dtypes  # NumPy's finfo knows no bfloat16; ml_dtypes' agrees with torch's

        info = (ml_dtypes.finfo if floating else ml_dtypes.iinfo)(dtype)
        known = ("eps", "max", "min", "tiny", "smallest_normal", "resolution", "bits") if floating else \
            ("min", "max", "bits")
        if attr not in known:
            raise self.error(e, f"{function}(...).{attr} is not supported by opgen compile", f"read one of {', '.join(known)}")
        value = getattr(info, attr)
        value = int(value) if attr == "bits" or not floating else float(value)
        c = ir.Const(e.line, value)
        if function.startswith("numpy.") and attr != "bits":
            c.type = python_type(value)
            w = ir.WeakScalar(e.line, c, dtype)
            w.type, w.flavor = tensor_of(dtype), flavor.NUMPY
            e.name, e.args = "folded", [w]
            return w.type
        e.name, e.args = "folded", [c]
        return self.expr(c, assigned)

    def dtype_comparison(self, e: ir.Op, assigned: set[str]) -> Type:
        """``x.dtype == torch.float32``: known when the function compiles (each array has one dtype), so a
        constant, as isinstance is; dtype objects of NumPy and torch never compare equal."""
        sides = []
        for a in e.args:
            if isinstance(a, ir.DTypeConst):
                sides.append((a.dtype, a.library or None))
                continue
            t = self.expr(a.receiver, assigned)
            if t.kind != "tensor":
                raise self.error(e, f"{a.source}: .dtype of a {t} is not supported by opgen compile",
                                 "it is read from arrays and tensors")
            sides.append((t.dtype.name, a.receiver.flavor))
        (d1, l1), (d2, l2) = sides
        same = d1 == d2 and (l1 is None or l2 is None or l1 == l2)
        e.native, e.bound = "folded", [ir.Const(e.line, same == (e.op == "operator.eq"))]
        return self.expr(e.bound[0], assigned)

    def lowered(self, e: ir.Op, name: str, receiver: ir.Expr | None, assigned: set[str]) -> Type:
        """A library call served by its Python definition (opgen.compiler.lowerings): compiled as a call of
        the first candidate whose parameters bind the arguments (int/float annotations by their types)."""
        args = [*([receiver] if receiver is not None else []), *e.args]
        if name in lowerings.VARARGS:  # t.expand(2, -1) and t.expand((2, -1)): the sizes as one list
            rest = args[1:]
            if len(rest) == 1 and isinstance(rest[0], ir.TupleLit):
                rest = rest[0].items
            elif len(rest) == 1 and self.expr(rest[0], assigned).kind == "list":  # t.expand(other.shape)
                rest = None
            if rest is not None:
                args = [args[0], ir.ListLit(e.line, list(rest))]
        types = [self.expr(a, assigned) for a in [*args, *e.kwargs.values()]]
        given = dict(zip(range(len(args)), types[:len(args)])) | dict(zip(e.kwargs, types[len(args):]))
        for candidate in lowerings.candidates(name):
            if lowerings.binds(candidate.definition, len(args), set(e.kwargs)) and \
                    _annotations_admit(candidate.definition, given):
                break
        else:
            raise self.error(e, f"{e.source}: {name} is compiled from its Python definition "
                                f"(opgen/compiler/lowerings), none of whose forms takes these arguments "
                                f"({', '.join(map(str, types)) or 'none'})",
                             "pass the arguments the library documents (positionally or by its keywords)")
        call = ir.Call(e.line, candidate.definition.name, args, dict(e.kwargs), e.source,
                       definition=(candidate.definition, frozenset(), {}), scope=candidate.scope)
        e.native, e.bound, e.op = "lowered", [call], e.op or name
        try:
            return self.expr(call, assigned)
        except CompileError as err:
            if type(err) is CompileError and (err.where or "").startswith(str(lowerings.HERE)):  # inside it: say where
                raise self.error(e, f"{e.source}: {err.message} (in {name}'s definition, {err.where})",
                                 err.hint) from None
            raise

    def truthy(self, e: ir.Expr, t: Type) -> None:
        if not (t.kind == "scalar" or t.kind == "list" or isinstance(t, DictType)):
            raise self.error(e, f"the truth value of a {t} is not supported by opgen compile (NumPy and torch "
                                "raise for arrays of more than one element)",
                             "compare explicitly, e.g. np.any(x > 0) or len(xs) > 0")

    def iteration(self, e: ir.Expr, assigned: set[str], what: str, rows: bool = False) -> Any:
        """The type each step of iterating ``e`` yields: a Type, or a tuple of them (zip, enumerate, items).
        ``rows``: an array may be iterated (a for loop's own iterable): its rows, each a view of it, as
        NumPy's and torch's iteration gives them (a 0-d array is TypeError when it runs)."""
        if not isinstance(e, ir.Iteration):
            t = self.expr(e, assigned)
            if t.kind == "list":
                return t.elem
            if t == STR:
                return STR  # its code points, each a str
            if isinstance(t, DictType):
                return STR  # its keys
            if t.kind == "tensor" and rows:
                return t
            if t.kind == "tensor":
                raise self.error(e, f"{what} over a {t}'s rows is not supported by opgen compile (a for loop over "
                                    "the array, or over enumerate() or zip() of it, is)",
                                 "loop over range(len(x)) and index: x[i]")
            raise self.error(e, f"{what} over a {t} is not supported", "iterate over a list, str, dict or range()")
        if e.kind == "range":
            for i, a in enumerate(e.args):
                t = self.expr(a, assigned)
                if t not in (INT, BOOL):
                    raise self.error(e, f"range() takes ints, not a {t} (Python raises TypeError)", "pass ints")
                e.args[i] = self.coerce(a, t, INT, "")
            e.elem = INT
        elif e.kind == "enumerate":
            inner = self.iteration(e.args[0], assigned, what, rows)
            t = self.expr(e.args[1], assigned)
            if t not in (INT, BOOL):
                raise self.error(e, f"enumerate()'s start is a {t}, not an int", "start from an int")
            e.args[1] = self.coerce(e.args[1], t, INT, "")
            e.elem = (INT, inner)
        elif e.kind == "zip":
            e.elem = tuple(self.iteration(a, assigned, what, rows) for a in e.args)
            for a in e.args:
                if isinstance(a, ir.Iteration) and a.kind not in ("range",):
                    raise self.error(e, f"zip() over {a.kind}() is not supported by opgen compile",
                                     "zip lists or ranges")
        elif e.kind == "reversed":
            inner = e.args[0]
            if isinstance(inner, ir.Iteration):
                if inner.kind != "range":
                    raise self.error(e, f"reversed({inner.kind}(...)) is not supported by opgen compile "
                                        "(Python raises TypeError for most)", "reverse a list or a range")
                e.elem = self.iteration(inner, assigned, what)
            else:
                t = self.expr(inner, assigned)
                if t.kind != "list":
                    raise self.error(e, f"reversed() of a {t} is not supported by opgen compile",
                                     "reverse a list or a range")
                e.elem = t.elem
        else:  # items, keys, values
            t = self.expr(e.args[0], assigned)
            if not isinstance(t, DictType):
                raise self.error(e, f".{e.kind}() of a {t} is not supported by opgen compile", "call it on a dict")
            e.elem = {"items": (STR, t.value), "keys": STR, "values": t.value}[e.kind]
        return e.elem

    def call(self, e: ir.Call, assigned: set[str]) -> Type:
        """A call of another function of the module: specialised to these argument types and typed on its
        own (Python does not convert arguments to a helper's annotations, so neither does this)."""
        definition, enclosing, visible = e.definition
        if e.callee is not None:  # typed on an earlier pass over this loop or branch
            for a in [*e.args, *e.kwargs.values()]:
                self.expr(a, assigned)
            return e.callee.returns
        if definition.name in self.helpers.active:
            chain = " -> ".join([*self.helpers.active, definition.name])
            raise self.error(e, f"recursion ({chain}) is not supported by opgen compile",
                             "write it as a loop (while or for)")
        from opgen.compiler.tracer import trace_helper  # the tracer imports this module's siblings only

        scope = e.scope or self.fn.scope
        fn = trace_helper(scope, definition, enclosing, visible)
        positional = [self.expr(a, assigned) for a in e.args]
        named = {k: self.expr(v, assigned) for k, v in e.kwargs.items()}
        names = [p.name for p in fn.params]
        if len(positional) > len(names):
            raise self.error(e, f"{fn.name}() takes {len(names)} arguments but {len(positional)} were given "
                                "(Python raises TypeError)")
        for k in named:
            if k not in names:
                raise self.error(e, f"{fn.name}() got an unexpected keyword argument {k!r} (Python raises TypeError)")
            if names.index(k) < len(positional):
                raise self.error(e, f"{fn.name}() got multiple values for argument {k!r} (Python raises TypeError)")
        given = dict(zip(names, e.args)) | e.kwargs
        bound, types = [], []
        for p in fn.params:
            if p.name in given:
                value = given[p.name]
            elif p.has_default:
                value = ir.Const(e.line, p.default)
                if python_type(p.default) is None:
                    raise self.error(e, f"the default of {fn.name}'s parameter {p.name} is {p.default!r}; compiled "
                                        "defaults are int, float, bool or str", "pass it explicitly")
                self.expr(value, assigned)
            else:
                raise self.error(e, f"{fn.name}() is missing the argument {p.name!r} (Python raises TypeError)")
            if isinstance(value.type, TupleType):
                raise self.error(e, "passing a tuple is not supported by opgen compile", "unpack it first")
            bound.append(value)
            types.append(value.type)
        flavors = tuple(value.flavor for value in bound)  # a helper follows its arrays' libraries' rules
        key = (id(definition), tuple(types), flavors)
        callee = self.helpers.done.get(key)
        if callee is None:
            def specialised(f: ir.Function) -> ir.Function:
                for p, t, library in zip(f.params, types, flavors):
                    p.type, p.flavor = t, library
                f.symbol = f"fn_{f.name}__{len(self.helpers.done) + 1}"
                return f

            self.helpers.active.append(fn.name)
            try:
                fn = _with_inferred_containers(
                    specialised(fn), lambda hints, f: Propagator(f, self.resolver, self.helpers, hints).run(),
                    lambda: specialised(trace_helper(scope, definition, enclosing, visible)))
            finally:
                self.helpers.active.pop()
            self.helpers.done[key] = fn
            self.helpers.root.helpers.append(fn)  # after the helpers it calls: they finished first
            callee = fn
        e.callee = callee
        e.args, e.kwargs = bound, {}
        return callee.returns

    def bind_library(self, e: ir.Op, receiver: ir.Expr | None = None, receiver_param: str | None = None,
                     assigned: set[str] | None = None) -> bool:
        """Bind the call as its library does (``opgen.spec.library_signature``), then name each argument by
        its native parameter: positions and keywords mean what NumPy's or torch's signature says, a keyword
        the library does not take is Python's TypeError, and an argument the native kernel has no
        counterpart for is refused unless it is the library's default. False when the library does not
        say (opgen's own ops, ``*shape``): the arguments are taken in the native order then."""
        e.library_bound = True
        name = e.called or e.op
        spec = spec_named(self.resolver.specs, name)
        native = list(dict.fromkeys(p.name for o in spec.overloads for p in o.sig.params)) if spec is not None else []
        # A library's *args binds only where the native kernel takes it as a list (ndarray.reshape's *shape)
        sigs = [s for s in library_signatures(name)
                if all(p.kind != p.kind.VAR_POSITIONAL or p.name in native for p in s.params)] if spec else []
        if not sigs:
            return False
        given = [receiver] if receiver is not None else []
        problems = []
        for sig in sigs:
            pm = map_params(sig, native, receiver_param, spec.python_params)
            try:
                bound = sig.as_inspect().bind(*given, *e.args, **e.kwargs).arguments
            except TypeError as exc:
                problems.append(f"{name}{sig.as_inspect()} does not take these arguments: {exc} (Python raises "
                                "TypeError)")
                continue
            named: dict[str, ir.Expr] = {}
            problem = None
            for pname, value in bound.items():
                p = sig.param(pname)
                if pname in pm.spread or pname in pm.shape_of:
                    continue  # below, once every argument is bound
                if p.kind == p.kind.VAR_POSITIONAL:
                    value = self.varargs_list(e, value, assigned)
                    if value is None:  # none given: the library's own default, which the kernel has no value for
                        problem = f"{name} needs {pname} here (the native kernel takes it)"
                        break
                if p.kind == p.kind.VAR_KEYWORD:  # ndarray.sum(..., **kwargs) passes keepdims on
                    value = dict(value)
                    for k in KEEPDIMS_NAMES:
                        if k in value and k not in native and _reduces_without_keepdims(spec) \
                                and isinstance(value[k], ir.Const) and value[k].value is True:
                            e.keep_reduced_axis = True  # as for a keepdims parameter, below
                            del value[k]
                    extra = {k: v for k, v in value.items() if k not in native}
                    if extra:
                        problem = (f"{name}'s keyword {next(iter(extra))}= has no counterpart in the native kernel "
                                   f"({_spec_file(spec)} takes {', '.join(native)})")
                    named.update({k: v for k, v in value.items() if k in native})
                elif pname in pm.native:
                    if not (_is_none(value) and p.default is None):  # None where None is the default: omitted
                        named[pm.native[pname]] = value
                elif pname in KEEPDIMS_NAMES and _reduces_without_keepdims(spec) and isinstance(value, ir.Const) \
                        and value.value is True:
                    e.keep_reduced_axis = True  # the reduction, then its axis put back as a dim of 1 (op())
                elif not _is_default(value, p.default):
                    problem = (f"{name}'s argument {pname} has no counterpart in the native kernel "
                               f"({_spec_file(spec)} takes {', '.join(native)}); "
                               + (f"it can only be left at the default ({p.default!r})" if p.default is not EMPTY
                                  else "no call passing it compiles"))
                if problem:
                    break
            for pname, targets in pm.spread.items():
                if problem:
                    break
                if _spread_left_to_defaults(spec, sig, bound, pname):
                    continue
                values = self.spread_values(e, spec, sig, bound, pname)
                if isinstance(values, str):
                    problem = values
                else:
                    named.update(zip(targets, values))
            for pname, target in pm.shape_of.items():
                value = bound.get(pname)
                if problem or value is None or _is_none(value):
                    continue
                if target not in named:
                    problem = f"{name} needs {target} here to check {pname} against (the native kernel takes it)"
                    continue
                # The tensor goes on through a check that the library argument is its shape.
                message = ir.Const(e.line, f"{name}'s {pname} must equal the shape of {target}")
                named[target] = ir.Builtin(e.line, "checked_shape", [named[target], value, message])
            if problem:
                problems.append(problem)
                continue
            self.library_defaults(spec, sig, pm, bound, named, e.line)
            positional = []
            # The leading native parameters stay positional (operators take no keywords), in the order
            # of the first overload that has every bound parameter: overloads may order them
            # differently (str.split's (s, maxsplit) and (s, sep, maxsplit)).
            fits = [o for o in spec.overloads if set(named) <= {p.name for p in o.sig.params}]
            order = [p.name for p in fits[0].sig.params] if fits else native
            for n in order:
                if n not in named:
                    break
                positional.append(named.pop(n))
            e.args, e.kwargs = positional, named
            return True
        raise self.error(e, f"{e.source}: {problems[0]}", "pass the arguments as the library's signature names them; "
                                                          "`opgen show " + spec.op + "` lists what the native kernel takes")

    def varargs_list(self, e: ir.Op, values: tuple[ir.Expr, ...], assigned: set[str] | None) -> ir.Expr | None:
        """A library's ``*shape`` as the list the native kernel takes, as NumPy reads it: one list or tuple
        argument is the list itself (``x.reshape((2, -1))``, ``x.reshape(y.shape)``), ints are its
        entries (``x.reshape(2, -1)``, ``x.reshape(-1)``). None when nothing is given."""
        if not values:
            return None
        if len(values) == 1:
            one = values[0]
            if isinstance(one, (ir.ListLit, ir.TupleLit)):
                return one
            if assigned is not None and not isinstance(one, ir.Const):
                t = self.expr(one, assigned)
                if t.kind == "list" or isinstance(t, TupleType):
                    return one
        return ir.ListLit(e.line, list(values))

    @staticmethod
    def library_defaults(spec, sig, pm, bound: dict[str, ir.Expr], named: dict[str, ir.Expr], line: int) -> None:
        """Fill an omitted argument with its library default where the spec writes none (argsort's axis=-1 comes
        before a kind without one), but only if every overload's gate draws that value: the kernel was tested
        on what the compiled call passes."""
        for lib_name, target in pm.native.items():
            default = sig.param(lib_name).default
            if lib_name in bound or target in named or default in (EMPTY, NOVALUE, None) \
                    or type(default) not in (int, float, bool, str):
                continue
            overloads = [o for o in spec.overloads if target in [p.name for p in o.sig.params]]
            if any(o.sig.param(target).has_default for o in overloads):
                continue  # the spec's own default (tests/test_library_signatures.py holds it to the library's)
            try:
                for o in overloads:
                    check_default(target, default, o.domain.get(target))
            except ValueError:
                continue  # outside what the gate drew: the call must pass it (resolve says it is missing)
            named[target] = ir.Const(line, default)

    def spread_values(self, e: ir.Op, spec, sig, bound: dict[str, ir.Expr], pname: str,
                      seen: tuple[str, ...] = ()) -> list[ir.Expr] | str:
        """The native arguments a spread library parameter gives (spec ``python_params``), or what is wrong."""
        name = e.called or e.op
        pp = spec.python_params[pname]
        n = len(pp.spread)
        value = bound.get(pname)
        if value is None or _is_none(value):
            if pp.omitted is not None and pp.omitted not in seen:
                return self.spread_values(e, spec, sig, bound, pp.omitted, (*seen, pname))
            default = sig.param(pname).default
            if default in (EMPTY, NOVALUE, None) or (isinstance(default, list) and len(default) not in (1, n)):
                return f"{name} needs {pname} here (the native kernel takes {', '.join(pp.spread)})"
            items = default if isinstance(default, list) else [default]
            value = ir.ListLit(e.line, [ir.Const(e.line, v) for v in items])
        if isinstance(value, ir.ListLit):
            if len(value.items) == 1:
                return value.items * n
            if len(value.items) != n:
                return (f"{name}'s {pname} has {len(value.items)} entries; the native kernel takes {n} "
                        f"({', '.join(pp.spread)})")
            return list(value.items)
        return [value] * n  # an int: the same on every dim, as torch takes it

    def op(self, e: ir.Op, assigned: set[str]) -> Type:
        if e.native in ("lowered", "folded"):  # typed on an earlier pass: its definition's call, or a constant
            return self.expr(e.bound[0], assigned)
        if e.op in ("operator.eq", "operator.ne") and len(e.args) == 2 and not e.kwargs and \
                all(_dtype_value(a) for a in e.args):
            return self.dtype_comparison(e, assigned)
        if not e.library_bound and not e.native and lowerings.candidates(e.op) \
                and spec_named(self.resolver.specs, e.op) is None:
            return self.lowered(e, e.op, None, assigned)
        if not e.library_bound and creation.is_creation(e.op):  # np.zeros((n, d), dtype=...): creation.py
            try:
                creation.prepare(e, lambda a: self.expr(a, assigned))
            except creation.CreationError as exc:
                raise self.error(e, str(exc), exc.hint) from None
        if e.native == "array_from_list":  # np.array(xs), typed on an earlier pass
            self.expr(e.bound[0], assigned)
            return e.type
        if e.op in ARRAY_FROM_DATA and e.native == "same":
            return self.expr(e.bound[0], assigned)
        if e.op in ARRAY_FROM_DATA and not e.native and e.result is None:
            return self.array_from_data(e, assigned)
        if e.op in COPY_FUNCTIONS and len(e.args) == 1:
            t = self.expr(e.args[0], assigned)
            if t.kind == "tensor":
                return self.array_copy(e, e.args[0], t, COPY_FUNCTIONS[e.op], bool(e.kwargs))
        if getattr(e, "fresh_copy", False):  # a copy typed on an earlier pass over this loop or branch
            return self.expr(e.bound[0], assigned)
        if not e.library_bound:
            self.bind_library(e)
        for a in [*e.args, *e.kwargs.values()]:
            if _is_none(a):
                raise self.error(e, f"{e.source}: None as an argument is supported only where the library's "
                                    "default is None (it is then the omitted argument)", "leave the argument out")
            if isinstance(a, ir.ListLit):  # np.concatenate([a, b]): a list of arrays may be passed here
                a.library_argument = True
        self.reduce_all(e)
        args = [self.expr(a, assigned) for a in e.args]
        if e.op in EXACT_COMPARISONS and FLOAT in args:
            # `x > 0` on a float: the int constant becomes the float it equals exactly, as Python compares.
            for i, a in enumerate(e.args):
                if isinstance(a, ir.Const) and a.type == INT and float(a.value) == a.value:
                    e.args[i] = self.coerce(a, INT, FLOAT, "")
                    args[i] = FLOAT
        kwargs = {k: self.expr(v, assigned) for k, v in e.kwargs.items()}
        if e.op in ARRAY_LOGICAL and len(args) == 2 and not kwargs and \
                all(a.kind == "tensor" and a.dtype.name == "bool" for a in args):
            e.op = ARRAY_LOGICAL[e.op]  # mask1 | mask2 of bool arrays
        if e.op in ARRAY_UNARY and len(args) == 1 and args[0].kind == "tensor" and not kwargs:
            # -x, ~mask of an array: the ufunc NumPy's and torch's operator calls (numpy.negative is torch.neg)
            e.op = ARRAY_UNARY[e.op]["bool" if args[0].dtype.name == "bool" else "number"]
        if e.op in ("builtins.repr", "builtins.ascii") and len(args) == 1 and args[0] in (INT, FLOAT, BOOL):
            # repr() and ascii() of an int, float or bool are its str(): format(x, '') (bool's below)
            e.op = "builtins.format"
            e.args.append(ir.Const(e.line, ""))
            args.append(self.expr(e.args[-1], assigned))
        if e.op in ("builtins.repr", "builtins.ascii") and len(args) == 1 and args[0].kind == "list":
            fn = e.op.split(".")[1]
            raise self.error(e, f"{e.source}: {fn}() of a list is not supported by opgen compile",
                             f'write it as Python builds it: "[" + ", ".join({fn}(v) for v in xs) + "]"')
        if e.op == "builtins.format" and args and args[0] == BOOL:
            self.format_bool(e, args, assigned)
        if e.op in ("operator.add", "operator.mul") and len(args) == 2 and not kwargs and \
                any(a.kind == "list" for a in args):
            return self.sequence_operator(e, args)
        if e.op == "operator.mul" and len(args) == 2 and args[1] == STR and args[0] in (INT, BOOL):
            # 3 * "ab" is "ab" * 3: the str_repeat kernel takes the str first (both operands are pure)
            e.args.reverse()
            args.reverse()
        try:
            r = self.resolver.resolve(e.op, args, kwargs, self.where(e),
                                      result=None if e.result is None else tensor_of(e.result))
        except MissingOp as missing:
            r = self.weak_scalars(e, args, kwargs, missing)
        given = dict(zip(r.params, e.args)) | e.kwargs
        e.bound = []
        for p, widen in zip(r.overload.sig.params, r.widened):
            if p.name not in given:  # omitted from the call: the spec's default, as Python passes it
                value = ir.Const(e.line, p.default)
                self.expr(value, assigned)
                e.bound.append(value)
                continue
            value = given[p.name]
            e.bound.append(self.coerce(value, value.type, p.type, "") if widen else value)
        e.spec, e.overload, e.entry = r.spec, r.overload, r.entry
        if getattr(e, "keep_reduced_axis", False):
            return self.keep_reduced_axis(e, assigned)
        return _result_type(r.overload.sig.returns)

    def keep_reduced_axis(self, e: ir.Op, assigned: set[str]) -> Type:
        """``np.sum(x, axis=-1, keepdims=True)``, ``t.sum(1, keepdim=True)`` where the kernel has no keepdims: the
        reduction, then numpy.expand_dims at the same axis, which puts the reduced axis back as a dim of 1 (a
        negative axis counts from the end of the result, whose rank is x's, so it names the same dim)."""
        rule = e.overload.rule
        axis = dict(zip((p.name for p in e.overload.sig.params), e.bound)).get(rule.axis)
        if axis is None or _is_none(axis) or getattr(e, "reduced_all", False):
            raise self.error(e, f"{e.source}: keepdims=True with no axis (every element reduced) is not supported by "
                                "opgen compile", "pass the axis, or reshape the 0-d result if the dims of 1 are needed")
        if not isinstance(axis, (ir.Const, ir.Var)):
            raise self.error(e, f"{e.source}: keepdims=True with a computed axis is not supported by opgen compile",
                             "name the axis first: ax = ...; then pass axis=ax")
        reduced = copy.copy(e)
        reduced.keep_reduced_axis = False
        e.op, e.called, e.native = "numpy.expand_dims", "", ""
        e.args, e.kwargs, e.library_bound = [reduced, axis], {}, True
        e.keep_reduced_axis = False
        return self.op(e, assigned)

    def reduce_all(self, e: ir.Op) -> None:
        """``np.sum(x)``, ``x.mean()``, ``np.argmax(logits)``, ``np.max(x, axis=None)``: a reduction with its axis
        omitted (the library binding leaves out an axis=None, the library's default) reduces every element, as
        NumPy and torch do. The specs describe the axis form only, so the call is lowered to it: the array
        flattened to 1-D in C order (numpy.reshape(a, [-1]), NumPy's flat order: argmax's index is into it)
        reduced over axis 0, which gives the 0-d result of the dtype the axis form gives, and an empty array's
        behaviour of an empty axis (sum 0, max's ValueError). Which parameter is the array and which the axis
        is the spec's data: its overloads' reduce shape rule ({reduce: a, axis: axis}). The flattening is a
        copy; a reduction is O(n) anyway."""
        spec = spec_named(self.resolver.specs, e.op)
        if spec is None or e.native:
            return
        rules = {(o.rule.source, o.rule.axis, o.rule.keepdims) if o.rule is not None and o.rule.kind == "reduce"
                 else None for o in spec.overloads}
        if len(rules) != 1 or None in rules:
            return
        array, axis, keep = rules.pop()
        names = [p.name for p in spec.overloads[0].sig.params]
        given = dict(zip(names, e.args)) | e.kwargs
        if axis in given or array not in given or any(o.sig.param(axis).has_default for o in spec.overloads):
            return  # an axis given, or a spec default saying which axis an omitted one is
        if keep is not None and keep in given and not _is_default(given[keep], False):
            raise self.error(e, f"{e.source}: {keep}=True with no axis (every element reduced) is not supported by "
                                "opgen compile", f"leave {keep} out, and reshape the 0-d result if the dims of 1 "
                                                 "are needed")
        if spec.overloads[0].sig.returns.is_tuple:
            # torch.max(t) is the values alone, and raises RuntimeError on an empty tensor where the dim form
            # raises IndexError: compiled code raises no RuntimeError.
            raise self.error(e, f"{e.source}: {e.op} of the whole tensor (no {axis}) is not supported by opgen "
                                "compile", f"pass {axis} on a flattened tensor, e.g. torch.max(t.reshape(-1), 0).values")
        flat = ir.Op(e.line, "numpy.reshape", [given[array], ir.ListLit(e.line, [ir.Const(e.line, -1)])], {},
                     f"{e.source}: the array flattened")
        flat.library_bound = True  # the native (a, shape): no library signature to bind
        e.args = []
        e.kwargs = {array: flat, axis: ir.Const(e.line, 0), **{k: v for k, v in given.items() if k != array}}
        e.reduced_all = True

    def format_bool(self, e: ir.Op, args: list[Type], assigned: set[str]) -> None:
        """format(flag, spec): bool's __format__ is str(flag) ("True") for the empty spec and int's
        for any other ("{flag:d}" is "1"), where the int overload takes it widened."""
        spec = e.args[1] if len(e.args) > 1 else e.kwargs.get("format_spec")
        if spec is None or (isinstance(spec, ir.Const) and spec.value == ""):
            e.args[0] = ir.IfExp(e.line, e.args[0], ir.Const(e.line, "True"), ir.Const(e.line, "False"))
            args[0] = self.expr(e.args[0], assigned)
        elif not isinstance(spec, ir.Const):
            raise self.error(e, f"{e.source}: formatting a bool with a spec known only at run time is not "
                                "supported by opgen compile (an empty spec gives 'True', any other formats 1 or 0)",
                             "write the spec as a literal, or convert first: int(flag) or str(flag)")

    def sequence_operator(self, e: ir.Op, args: list[Type]) -> Type:
        """``xs + ys`` (a new list) and ``[0] * n`` (repetition; n <= 0 gives an empty one): Python's list
        operators, emitted by the compiler (they move values, no kernel computes). A str's are kernels."""
        a, b = args
        if e.op == "operator.add":
            if a.kind != "list" or b.kind != "list":
                other = b if a.kind == "list" else a
                raise self.error(e, f"{e.source}: a list + a {other} (Python raises TypeError)",
                                 "add two lists, or append the value: xs + [v]")
            for var, have, want in ((e.args[0], a, b), (e.args[1], b, a)):
                if isinstance(var, ir.Var) and var.name in self.guessed and have != want:
                    raise _Retry(var.name, want)
                if isinstance(var, ir.Var) and var.name in self.inferred and have != want and _wider(want, have):
                    raise _Retry(var.name, want)
            if a != b:
                raise self.error(e, f"{e.source}: {a} + {b} makes a list of mixed types in Python; a compiled list "
                                    "holds one", "convert the elements first: [float(v) for v in xs]")
            e.native, e.bound = "list_concat", list(e.args)
            return a
        seq, count = (0, 1) if a.kind == "list" else (1, 0)
        if args[count] not in (INT, BOOL):
            raise self.error(e, f"{e.source}: a {args[seq]} repeated by a {args[count]} (Python raises TypeError)",
                             "repeat by an int")
        e.native = "list_repeat"
        e.bound = [e.args[seq], self.coerce(e.args[count], args[count], INT, "")]
        return args[seq]

    def weak_scalars(self, e: ir.Op, args: list[Type], kwargs: dict[str, Type], missing: MissingOp):
        """``x * 0.5``, ``a_int64 + b_float32``, ``ids / n``: no overload mixes dtypes, or arrays and Python
        numbers, so the call computes in the dtype its arrays' library promotes them to
        (opgen.compiler.promotion): each array of another dtype is cast to it (opgen.cast's kernels) and
        each Python number becomes a 0-d array of it (NumPy 2's and torch's weak scalars). Where the
        libraries differ: an int out of an integer dtype's range is NumPy's OverflowError when it runs
        and torch's wrapped value; a number meeting a half array is rounded to it as NumPy does, and for
        torch (which computes in float32 and rounds once) only a constant the half dtype holds exactly is
        taken; a torch operand that may be 0-d when the function runs is checked then (torch's 0-d
        tensors are weak)."""
        if missing.command is not None:
            raise missing  # an overload matched; it only lacks a kernel
        spec = spec_named(self.resolver.specs, e.op)
        if spec is None:
            raise missing
        operands = [*e.args, *e.kwargs.values()]
        names = [*(spec.overloads[0].sig.params[i].name if i < len(spec.overloads[0].sig.params) else None
                   for i in range(len(e.args))), *e.kwargs]
        taking = promotion.promoted_params(spec)
        arrays = [x for x, n in zip(operands, names) if x.type.kind == "tensor" and n in taking]
        tensors = {n: x for x, n in zip(operands, names) if x.type.kind == "tensor"}
        if not arrays and len({x.type.dtype.name for x in tensors.values()}) == 1:
            # an op of one overload (opgen.nn.quantize_int8(x, 0.5)): its arrays' one dtype is the one
            taking, arrays = set(tensors), list(tensors.values())
        # the Python numbers passed where the op takes an array (not an axis or a k)
        array_params = {p.name for o in spec.overloads for p in o.sig.params if p.type.kind == "tensor"}
        scalars = [x for x, n in zip(operands, names) if x.type in (INT, FLOAT, BOOL) and n in array_params]
        if not arrays and scalars and flavor.of_module(e.op) == flavor.NUMPY and \
                all(n in taking for x, n in zip(operands, names) if any(x is y for y in scalars)):
            # np.sqrt(2 / np.pi): NumPy makes Python numbers 0-d arrays (float64, int64, bool) and returns
            # its own scalar, which is strong: np.sqrt(2 / np.pi) * x is float64 for a float32 x
            arrays = [self.numpy_scalar(x) for x in scalars]
            e.args = [arrays[scalars.index(a)] if a in scalars else a for a in e.args]
            e.kwargs = {k: arrays[scalars.index(v)] if v in scalars else v for k, v in e.kwargs.items()}
            operands, scalars = [*e.args, *e.kwargs.values()], []
        if not arrays:
            raise missing
        try:
            library = flavor.combine(x.flavor for x in operands)
        except flavor.FlavorMix as mix:
            raise self.error(e, f"{e.source}: {mix}", "convert one of them explicitly before the call, outside "
                                                      "the compiled function") from None
        libraries = [library] if library is not None else [flavor.NUMPY, flavor.TORCH]
        if len({x.type.dtype.name for x in arrays}) > 1 and not all(promotion.promotes(spec, lib) for lib in libraries):
            raise self.error(e, f"{e.source}: {e.op} takes arrays of one dtype in "
                                f"{' or '.join(flavor.LIBRARY[lib] for lib in libraries)} (it does not promote), "
                                f"here {', '.join(str(x.type) for x in arrays)}",
                             "cast them to one dtype first: x.astype(np.float32), x.float()") from None
        dtypes = [x.type.dtype.name for x in arrays]
        kinds = [x.type.name for x in scalars]
        found = {}
        for lib in libraries:
            try:
                found[lib] = promotion.computing(lib, spec.op, promotion.result(lib, dtypes, kinds))
            except promotion.NoPromotion as refused:
                raise self.error(e, f"{e.source}: {refused}", "cast the arrays to one dtype first") from None
        if len(set(found.values())) > 1:
            raise self.error(e, f"{e.source}: {', '.join(map(str, args))} computes in "
                                f"{found[flavor.NUMPY]} in NumPy 2 and {found[flavor.TORCH]} in torch, and this "
                                "array's library is not known here",
                             "annotate the parameters npt.NDArray[...] or Annotated[torch.Tensor, ...], or cast "
                             "explicitly (x.astype(np.float64), x.float())")
        target = tensor_of(found[libraries[0]]).dtype
        if not scalars and all(x.type.dtype.name == target.name for x in arrays) and \
                all(a.kind == "tensor" for a in args):
            raise missing  # nothing to promote: the op has no overload for this dtype
        if target.name in ("float16", "bfloat16") and scalars and (library != flavor.NUMPY or target.name == "bfloat16"):
            for x in scalars:
                if not (isinstance(x, ir.Const) and flavor.exact_in_half(x.value, target.name)):
                    raise self.error(e, f"{e.source}: a Python number with a {target.name} array: torch computes in "
                                        f"float32 with the number unrounded, NumPy rounds the number to {target.name} "
                                        "first; opgen compile takes only a constant both hold exactly here"
                                        + ("" if library else " (this array's library is not known)"),
                                     f"write a constant {target.name} holds exactly (0.5, 2.0, 1/1024)") from None
        if not (target.is_float or target.name.startswith(("int", "uint"))) and scalars:
            raise missing
        wraps = library == flavor.TORCH and target.name.startswith(("int", "uint"))
        if library == flavor.TORCH and len(arrays) > 1:  # checked when it runs: torch's 0-d tensors are weak
            e.zero_dim = ([n for x, n in zip(operands, names) if x in arrays],
                          promotion.zero_dim_results(dtypes, kinds), target.name)

        def promoted(x: ir.Expr, name: str | None) -> ir.Expr:
            if any(x is y for y in scalars):
                w = ir.WeakScalar(x.line, x, target.name, wraps)
                w.type, w.flavor = tensor_of(target.name), library
                return w
            if x.type.kind != "tensor" or name not in taking or x.type.dtype.name == target.name:
                return x
            # x.astype(target) as the tracer would make it, resolved here (a later pass over a loop types it
            # again through method_call like any cast)
            cast = ir.MethodCall(x.line, casts.CAST_OP, [x], {}, f"{getattr(x, 'source', None) or 'operand'} "
                                 f"promoted to {target.name}", method="astype", receiver=x, result=target.name,
                                 called="ndarray.astype" if library == flavor.NUMPY else "Tensor.to",
                                 library_bound=True)
            try:
                r = self.resolver.resolve(casts.CAST_OP, [x.type], {}, self.where(e), result=tensor_of(target.name))
            except MissingOp as no_cast:
                raise MissingOp(f"{e.source} computes in {target.name} ({flavor.LIBRARY.get(library, 'both libraries')}"
                                f"'s promotion), which needs a cast: {no_cast.message}", op=no_cast.op,
                                arg_types=no_cast.arg_types, command=no_cast.command, where=no_cast.where,
                                hint=no_cast.hint) from None
            cast.bound, cast.spec, cast.overload, cast.entry = [x], r.spec, r.overload, r.entry
            cast.type, cast.flavor = tensor_of(target.name), x.flavor
            return cast

        e.args = [promoted(a, n) for a, n in zip(e.args, names)]
        e.kwargs = {k: promoted(v, k) for k, v in e.kwargs.items()}
        try:
            return self.resolver.resolve(e.op, [a.type for a in e.args], {k: v.type for k, v in e.kwargs.items()},
                                         self.where(e))
        except MissingOp as now:
            raise (now if now.command is not None else missing) from None

    @staticmethod
    def numpy_scalar(x: ir.Expr) -> ir.Expr:
        """A Python number as the 0-d array NumPy makes of it: np.asarray(0.5) is float64."""
        dtype = promotion.NUMPY_SCALAR[x.type.name]
        w = ir.WeakScalar(x.line, x, dtype)
        w.type, w.flavor = tensor_of(dtype), flavor.NUMPY
        return w

    def method_call(self, e: ir.MethodCall, assigned: set[str]) -> Type:
        """Name the op from the receiver's type (the specs' ``methods:``), bind the receiver, and go on
        as for any op."""
        if e.result is not None:  # a cast, bound on an earlier pass
            return self.cast(e, self.expr(e.receiver, assigned), assigned)
        if e.op:  # bound on an earlier pass over this loop or branch: the receiver is in e.args now
            return self.op(e, assigned)
        receiver = self.expr(e.receiver, assigned)
        if receiver.kind == "tensor" and not e.attribute and e.method == "item":  # a.item(): the Python number
            if e.args or e.kwargs:
                raise self.error(e, f"{e.source}: item() with indices is not supported by opgen compile",
                                 "index first, then convert: float(a[i, j])")
            e.native, e.bound = "array_scalar", [self.array_scalar(e.receiver, receiver, "item")]
            return e.bound[0].type
        if receiver.kind == "tensor" and not e.attribute and e.method == "tolist":
            if e.args or e.kwargs:
                raise self.error(e, f"{e.source}: tolist() takes no arguments (Python raises TypeError)")
            e.native, e.bound = "array_to_list", [e.receiver]
            return list_of(self.scalar_of(receiver))  # a 1-d array's; the runtime refuses other ranks
        if receiver.kind == "tensor" and not e.attribute and e.method in SAME_METHODS:
            return self.same_tensor(e, receiver)
        if receiver.kind == "tensor" and not e.attribute and e.method == "masked_fill":
            return self.masked_fill(e, assigned)
        if receiver.kind == "tensor" and not e.attribute and e.method in COPY_METHODS:
            return self.array_copy(e, e.receiver, receiver, COPY_METHODS[e.method], bool(e.args or e.kwargs))
        if receiver.kind == "tensor" and not e.attribute and casts.is_cast(e.method):
            return self.cast(e, receiver, assigned)
        if isinstance(receiver, TupleType):
            return self.result_field(e, receiver)
        kinds = METHOD_RECEIVERS.get(receiver.kind, (str(receiver),))
        if e.receiver.flavor is not None:  # x.sum(): ndarray.sum for a NumPy array, Tensor.sum for a tensor
            kinds = (ARRAY_CLASS[e.receiver.flavor],)
        found = {}
        for kind in kinds:
            named = method_named(self.resolver.specs, f"{kind}.{e.method}")
            if named is not None and named[1].attribute == e.attribute:
                found[f"{kind}.{e.method}"] = named
        what = "attribute" if e.attribute else "method"
        shown = e.source if e.attribute else f"{e.source.split('(')[0]}()"
        served = [f"{k}.{e.method}" for k in kinds if lowerings.candidates(f"{k}.{e.method}")]
        if not found and served and not e.attribute:
            return self.lowered(e, served[0], e.receiver, assigned)
        if not found:
            names = " or ".join(f"{k}.{e.method}" for k in kinds)
            raise self.error(e, f"the {what} {shown} of a {receiver} is not supported by opgen compile: no spec "
                                f"declares {names}",
                             "call the module function instead (e.g. np.sum(x, axis=0) for x.sum(axis=0)), or "
                             f"declare it in its op's spec (methods: [{{name: {kinds[0]}.{e.method}}}])")
        ops = {spec.op for spec, _ in found.values()}
        if len(ops) > 1:  # ndarray.max and Tensor.max naming different ops, of an array of no known library:
            # the arguments may fit only one library's signature (x.max(dim=1) is torch's, x.max(axis=1) NumPy's)
            fits = {n: v for n, v in found.items() if _library_binds(n, v[0], e.receiver, e.args, e.kwargs)}
            if len({spec.op for spec, _ in fits.values()}) == 1:
                found, ops = fits, {spec.op for spec, _ in fits.values()}
        if len(ops) > 1:
            raise self.error(e, f"{shown} of a {receiver} is ambiguous: {', '.join(f'{n} is {s.op}' for n, (s, _) in found.items())}",
                             "call the module function you mean instead, or pass the axis by the keyword only one "
                             "library takes (torch's dim=, NumPy's axis=)")
        spec, method = next(iter(found.values()))
        e.op, e.called = spec.op, next(iter(found))
        if self.bind_library(e, e.receiver, method.receiver, assigned):
            return self.op(e, assigned)
        if method.receiver is None:  # the receiver is the first parameter: a.sum(axis) is numpy.sum(a, axis)
            e.args = [e.receiver, *e.args]
        else:
            if method.receiver in e.kwargs:
                raise self.error(e, f"{shown}: {method.receiver} is the receiver; it cannot be passed again")
            e.kwargs = {method.receiver: e.receiver, **e.kwargs}
        return self.op(e, assigned)

    def same_tensor(self, e: ir.MethodCall, receiver: Type) -> Type:
        """``t.contiguous()``, ``t.detach()``, ``t.cpu()``: the same values, where compiled code has no autograd
        graph, no device but the CPU, and reads any strides. The result aliases the receiver (torch returns
        the tensor itself, or one sharing its memory), so writes through it follow the aliasing rules."""
        if e.receiver.flavor not in (flavor.TORCH, None):
            raise self.error(e, f"{e.source}: a NumPy array has no {e.method}()", "it is a torch tensor method")
        if e.args or e.kwargs:
            raise self.error(e, f"{e.source}: {e.method}() with arguments is not supported by opgen compile",
                             f"call {e.method}() with none")
        e.op, e.native, e.bound = "", "same", [e.receiver]
        return receiver

    def masked_fill(self, e: ir.MethodCall, assigned: set[str]) -> Type:
        """``t.masked_fill(mask, value)``: torch.where(mask, value, t) keeping t's dtype (value is a Python
        number or a 0-d tensor, which torch casts to t's dtype). The mask must be bool, as torch requires."""
        if e.receiver.flavor == flavor.NUMPY:
            raise self.error(e, f"{e.source}: a NumPy array has no masked_fill()", "use np.where(mask, value, x)")
        names = ("mask", "value")
        if len(e.args) > 2 or set(e.kwargs) - set(names) or \
                len(e.args) + len(e.kwargs) != 2 or set(names[:len(e.args)]) & set(e.kwargs):
            raise self.error(e, f"{e.source}: masked_fill takes (mask, value) (Python raises TypeError)",
                             "call t.masked_fill(mask, value)")
        bound = dict(zip(names, e.args)) | e.kwargs
        mask, value = bound["mask"], bound["value"]
        mask_type = self.expr(mask, assigned)
        if mask_type != tensor_of("bool"):
            raise self.error(e, f"{e.source}: masked_fill's mask is a {mask_type}; torch requires a bool mask "
                                "(it raises RuntimeError)", "compare first: t.masked_fill(mask == 0, value)")
        t = self.expr(e.receiver, assigned)
        v = self.expr(value, assigned)
        if v.kind == "tensor":
            raise self.error(e, f"{e.source}: masked_fill with a tensor value is not supported by opgen compile",
                             "pass a Python number, e.g. float('-inf')")
        if v not in (INT, FLOAT, BOOL):
            raise self.error(e, f"{e.source}: masked_fill's value is a {v}, not a number (Python raises TypeError)")
        if v == FLOAT and t.dtype.name in ("int64", "int32", "int16", "int8", "uint8", "bool"):
            raise self.error(e, f"{e.source}: a float value into a {t}: torch truncates it; compiled code does not "
                                "store a float into an integer tensor", "pass an int value")
        # the value a weak Python scalar beside t, so torch.where's result has t's dtype, as masked_fill's does
        e.op, e.called = "numpy.where", "Tensor.where"
        e.args, e.kwargs, e.library_bound = [mask, value, e.receiver], {}, True
        return self.op(e, assigned)

    def result_field(self, e: ir.MethodCall, receiver: TupleType) -> Type:
        """``torch.topk(x, k).values``: a named result of an op's tuple, read as its item."""
        if not e.attribute or not receiver.names or e.method not in receiver.names:
            what = f"{e.method}()" if not e.attribute else e.method
            fields = f"its fields: {', '.join(receiver.names)}" if receiver.names else "unpack it: a, b = ..."
            raise self.error(e, f"a {receiver} has no {what} in opgen compile", fields)
        at = receiver.names.index(e.method)
        e.native, e.bound = "tuple_item", [e.receiver, ir.Const(e.line, at)]
        return receiver.items[at]

    def array_from_data(self, e: ir.Op, assigned: set[str]) -> Type:
        """``np.array(xs)``, ``np.asarray(xs, dtype=np.float32)``, ``torch.tensor(xs)``: a 1-d array of a list's
        numbers, of the dtype the library gives Python floats, ints and bools (NumPy float64, torch float32; int64;
        bool), then cast to ``dtype=`` where one is given, as NumPy and torch convert each number once (an int
        list goes int64 -> the dtype). An array passed in is itself (asarray, as_tensor) or a copy (array,
        tensor); with a dtype, its cast."""
        library, copies = ARRAY_FROM_DATA[e.op]
        names = ("object", "dtype") if library == flavor.NUMPY else ("data",)
        if len(e.args) > len(names) or len(e.args) < 1 or set(e.kwargs) - {"dtype"} or \
                (len(e.args) == 2 and "dtype" in e.kwargs):
            raise self.error(e, f"{e.source}: a compiled {e.op}() takes the data and dtype= only", 
                             f"write {e.op}(values) or {e.op}(values, dtype=...)")
        data = e.args[0]
        dtype = e.args[1] if len(e.args) == 2 else e.kwargs.get("dtype")
        t = self.expr(data, assigned)
        if t.kind == "tensor":
            if data.flavor not in (library, None):
                raise self.error(e, f"{e.source}: an array of the other library (NumPy and torch convert differently)",
                                 "convert it outside the compiled function")
            made, made_type = data, t
            if copies:
                made = ir.Op(e.line, "", [data], {}, f"{e.source}: a copy")
                made.native, made.bound, made.fresh_copy = "same", [data], True
                made.type, made.flavor = t, data.flavor
        elif t.kind == "list" and t.elem in (INT, FLOAT, BOOL):
            made_type = tensor_of(DEFAULT_ARRAY_DTYPE[library][t.elem.name])
            made = ir.Op(e.line, "", [data], {}, f"{e.source}: the list's numbers")
            made.native, made.bound, made.type, made.flavor = "array_from_list", [data], made_type, library
        else:
            raise self.error(e, f"{e.source}: an array of a {t} is not supported by opgen compile",
                             "pass a list of int, float or bool, or an array")
        target = None if dtype is None else casts.dtype_constant(dtype)
        if dtype is not None and target is None:
            raise self.error(e, f"{e.source}: the dtype must be a constant such as np.float32 or torch.float32",
                             "write the dtype itself")
        if target is None or target == made_type.dtype.name:
            e.native, e.bound, e.args, e.kwargs = "same", [made], [made], {}
            if made is not data:  # a copy, or the list's new array: not an alias of anything
                e.fresh_copy = True
            return made_type
        e.op, e.result, e.called = casts.CAST_OP, target, "ndarray.astype" if library == flavor.NUMPY else "Tensor.to"
        e.args, e.kwargs, e.library_bound = [made], {}, True
        return self.op(e, assigned)  # a cast kernel's result: a new array

    def array_copy(self, e: ir.Op, x: ir.Expr, t: Type, library: str, extra: bool) -> Type:
        """``x.copy()``, ``np.copy(x)``, ``t.clone()``, ``torch.clone(t)``: a new array of x's values. Compiled
        arrays are never written (item assignment makes a new one), so the copy is x itself; what the
        copy changes is Python's aliasing, which opgen.compiler.aliasing reads from ``fresh_copy``."""
        if extra:
            raise self.error(e, f"{e.source}: a copy with arguments (order=, memory_format=...) is not supported by "
                                "opgen compile", "copy with no arguments")
        if x.flavor is not None and x.flavor != library:
            raise self.error(e, f"{e.source}: a {flavor.LIBRARY.get(x.flavor, x.flavor)} array has no such copy",
                             "NumPy arrays copy with x.copy() or np.copy(x), torch tensors with t.clone()")
        e.op, e.native, e.bound = "", "same", [x]
        e.fresh_copy = True
        return t

    def cast(self, e: ir.MethodCall, receiver: Type, assigned: set[str]) -> Type:
        """``x.astype(np.float16)``, ``x.to(torch.float16)``, ``x.half()``: opgen.cast's overload from the
        array's dtype to the target the call names (opgen.compiler.casts), or the array itself where the
        dtypes agree."""
        if e.result is None:
            target = casts.target_dtype(e)
            if isinstance(target, tuple):
                raise self.error(e, *target)
            e.result, e.called = target, f"Tensor.{e.method}"
            e.args, e.kwargs, e.library_bound = [e.receiver], {}, True
        if e.result == receiver.dtype.name:
            e.op, e.native, e.bound = "", "same", [e.receiver]
            return receiver
        e.op, e.native = casts.CAST_OP, ""
        return self.op(e, assigned)

    def axes_view(self, e: ir.Builtin, assigned: set[str]) -> Type:
        """.T, .mT, swapaxes, transpose and permute of an array: a view, of the array's type."""
        how = e.args[0].value
        self.expr(e.args[0], assigned)
        t = self.expr(e.args[1], assigned)
        what = {"T": ".T", "mT": ".mT", "permute": "a permutation of the axes"}.get(how, "swapping two axes")
        if t.kind != "tensor":
            raise self.error(e, f"{what} of a {t} is not supported by opgen compile", "it is a view of an array or tensor")
        for i in range(2, len(e.args)):
            a = self.expr(e.args[i], assigned)
            if how == "permute" and a in (INT, BOOL):  # x.transpose(0) of a 1-D array: the axes (0,)
                e.args[i] = ir.ListLit(e.line, [self.coerce(e.args[i], a, INT, "")])
                a = self.expr(e.args[i], assigned)
            if how == "permute" and a != list_of(INT):
                raise self.error(e, f"{what} takes ints or a tuple of ints, not a {a}", "pass the axes as ints, e.g. (2, 0, 1)")
            if how != "permute":
                if a not in (INT, BOOL):
                    raise self.error(e, f"{what} takes int axes, not a {a}", "pass two int axes, e.g. (-2, -1)")
                e.args[i] = self.coerce(e.args[i], a, INT, "")
        return t

    def builtin(self, e: ir.Builtin, assigned: set[str]) -> Type:
        name = e.name
        if name == "isinstance":
            t = self.expr(e.args[0], assigned)
            names = e.args[1].value.split(",")
            if t.kind == "tensor" or "tensor" in names:
                raise self.error(e, "isinstance() with arrays or tensors is not supported by opgen compile (it does "
                                    "not track NumPy arrays apart from torch tensors)", "remove the test")
            kind = "dict" if isinstance(t, DictType) else "tuple" if isinstance(t, TupleType) else \
                "list" if t.kind == "list" else t.name
            e.name, e.args = "constant", [ir.Const(e.line, kind in names or (kind == "bool" and "int" in names))]
            e.args[0].type = BOOL
            return BOOL
        if name == "dict_get":
            return self.dict_get(e, assigned)
        if name == "dict":  # dict(d): a copy (compiled dicts are values, so the copy is the value)
            t = self.expr(e.args[0], assigned)
            if not isinstance(t, DictType):
                raise self.error(e, f"dict() of a {t} is not supported by opgen compile",
                                 "pass a dict, or pairs: dict(zip(keys, values))")
            return t
        if name == "is_none" and isinstance(e.args[0], ir.Var) and e.args[0].name in self.maybe_none \
                and not any(n == e.args[0].name for n, _ in self.comprehension):
            # an Optional parameter not yet proved present: its presence flag, read when the call runs
            e.name, e.args = "absent", [ir.Const(e.line, e.args[0].name)]
            e.args[0].type = STR
            return BOOL
        if name == "absent":  # made above, typed again on a later pass
            return BOOL
        if name == "type_info":
            return self.type_info(e, assigned)
        if name == "folded":  # a constant made when the function compiled (type_info), typed again
            return self.expr(e.args[0], assigned)
        if name == "is_none":  # never: no other compiled value is None
            self.expr(e.args[0], assigned)
            e.name, e.args = "constant", [ir.Const(e.line, False)]
            e.args[0].type = BOOL
            return BOOL
        if name in ("min", "max") and len(e.args) > 1:
            return self.min_max_of_arguments(e, assigned)
        if name in ("min", "max", "sum", "any", "all", "sorted", "list"):
            return self.consumer(e, assigned)
        if name == "index_array":  # made by gather: x[[0, 2]]'s list, an int64 array as NumPy and torch make it
            self.expr(e.args[0], assigned)
            return tensor_of("int64")
        if name == "checked_shape":  # made by bind_library: (tensor, the library's shape argument, message)
            t = self.expr(e.args[0], assigned)
            shape = self.expr(e.args[1], assigned)
            if shape != list_of(INT):  # an int too: torch's layer_norm raises TypeError for one
                raise self.error(e, f"{e.args[2].value.split(' must equal')[0]} takes a tuple or list of ints here, not a "
                                    f"{shape} (Python raises TypeError)", "write it as a tuple, e.g. (d,)")
            self.expr(e.args[2], assigned)
            return t
        if name == "axes_view":
            return self.axes_view(e, assigned)
        if name == "array_scalar":  # made below, typed again on a later pass over a loop
            return self.scalar_of(self.expr(e.args[0], assigned))
        arity = {"size_of": 2, "in": 2}.get(name, 1)
        if len(e.args) != arity or e.kwargs:
            raise self.error(e, f"{name}() takes {arity} positional argument{'s' if arity > 1 else ''} here")
        t = self.expr(e.args[0], assigned)
        if name in ("float", "int", "bool", "not") and t.kind == "tensor":
            e.args[0] = self.array_scalar(e.args[0], t, "bool" if name == "not" else name)
            t = e.args[0].type
        if name == "len":
            if t.kind in ("list", "tensor") or t == STR or isinstance(t, DictType):
                return INT
            raise self.error(e, f"len() of {t} is not supported", "len() takes a list, str, dict or array here")
        if name in ("shape", "ndim", "size", "size_of"):
            if t.kind != "tensor":
                raise self.error(e, f".{name.removesuffix('_of')} of a {t} is not supported by opgen compile",
                                 "it is read from arrays and tensors")
            if name == "size_of":
                d = self.expr(e.args[1], assigned)
                if d not in (INT, BOOL):
                    raise self.error(e, f"size() takes an int dim, not a {d}")
                e.args[1] = self.coerce(e.args[1], d, INT, "")
                return INT
            return list_of(INT) if name == "shape" else INT
        if name in ("not", "bool"):
            if t != BOOL:
                self.truthy(e, t)
                e.args[0] = self.truth(e.args[0])
            return BOOL
        if name == "in":
            return self.membership(e, t, assigned)
        if name == "int_of_number":  # %d's int() (tracer.percent_format): Python's TypeError for a str
            if t not in (INT, BOOL, FLOAT):
                raise self.error(e, f"%d of a {t} raises TypeError in Python (%d format: a real number is required)",
                                 "pass a number, or use %s")
            e.name = "int"
            name = "int"
        if name in ("int", "float") and t == STR and len(e.args) == 1:
            # int(s), float(s): Python's parsing of the text, the builtins.int / builtins.float ops
            op = ir.Op(e.line, f"builtins.{name}", [e.args[0]], {}, f"{name}() of a str")
            e.name, e.args = "folded", [op]
            return self.expr(op, assigned)
        if name == "float":
            if t in (INT, BOOL, FLOAT):
                if t != FLOAT:
                    e.args[0] = self.coerce(e.args[0], t, FLOAT, "")
                return FLOAT
            raise self.error(e, f"float() of {t} is not supported", "float() takes an int, bool or float here")
        if name in ("int", "round"):
            if t in (INT, BOOL):
                e.args[0] = self.coerce(e.args[0], t, INT, "")
                return INT
            if t == FLOAT:
                return INT
            raise self.error(e, f"{name}() of {t} is not supported by opgen compile", f"{name}() takes a number here")
        if name == "abs":
            if t in (INT, BOOL):
                e.args[0] = self.coerce(e.args[0], t, INT, "")
                return INT
            if t == FLOAT:
                return FLOAT
            raise self.error(e, f"abs() of {t} is not supported by opgen compile",
                             "abs() takes an int or float; use np.abs for arrays")
        raise AssertionError(name)

    def array_scalar(self, e: ir.Expr, t: Type, how: str) -> ir.Expr:
        """``float(a)``, ``int(a)``, ``bool(a)``, ``a.item()`` of an array: its one element as the Python number of
        its dtype's kind (a float, an int, a bool), which float()/int()/bool() then convert as for any number.
        NumPy 2 converts with float() and int() only a 0-d array (else TypeError), and bool() and item() an
        array of one element of any rank (else ValueError). torch converts one element of any rank with all
        four, raising ValueError (float, int) or RuntimeError (bool, item) otherwise. The runtime checks as the
        array's library does (the emitter picks by its flavor; an array of no known library is a torch op's)."""
        scalar = ir.Builtin(e.line, "array_scalar", [e, ir.Const(e.line, how)])
        scalar.args[1].type = STR
        scalar.type = self.scalar_of(t)
        return scalar

    @staticmethod
    def scalar_of(t: Type) -> Type:
        """The Python number an element of a ``t`` array converts to."""
        name = t.dtype.name
        return BOOL if name == "bool" else FLOAT if name.startswith(("float", "bfloat")) else INT

    def dict_get(self, e: ir.Builtin, assigned: set[str]) -> Type:
        """``d.get(k, default)``: the value, or the default where the key is missing (of one type: the
        default widens as in a conditional expression). ``d.get(k)`` gives None for a missing key, which
        no compiled value is."""
        d = self.expr(e.args[0], assigned)
        if not isinstance(d, DictType):
            raise self.error(e, f"get() of a {d} is not supported by opgen compile (it is a dict method)")
        key = self.expr(e.args[1], assigned)
        if key != STR:
            raise self.error(e, f"a dict[str, ...] is looked up with a {key}", "look it up with a str")
        if len(e.args) < 3:
            raise self.error(e, "d.get(k) gives None for a missing key, and compiled values are never None",
                             "pass a default: d.get(k, default), or index it: d[k] (KeyError)")
        default = self.expr(e.args[2], assigned)
        common = common_numeric(d.value, default)
        if common is None:
            raise self.error(e, f"the dict holds {d.value} but the default is a {default}; a compiled value has one "
                                "type", "give a default of the dict's value type")
        e.args[2] = self.coerce(e.args[2], default, common, "")
        return common

    @staticmethod
    def truth(e: ir.Expr) -> ir.Expr:
        """``e`` as Python's bool(e) (its type was checked by ``truthy``)."""
        wrapped = ir.Truth(e.line, e)
        wrapped.type = BOOL
        return wrapped

    def membership(self, e: ir.Builtin, needle: Type, assigned: set[str]) -> Type:
        """``x in container``: a dict's keys, a substring of a str, an element of a list (by ==)."""
        hay = self.expr(e.args[1], assigned)
        if isinstance(hay, DictType) or hay == STR:
            if needle != STR:
                raise self.error(e, f"`{needle} in {hay}`: the key or substring must be a str (Python raises "
                                    "TypeError)", "test a str")
            return BOOL
        if hay.kind == "list":
            if hay.elem == FLOAT or needle == FLOAT:
                raise self.error(e, "`in` over floats is not supported by opgen compile: Python tests identity "
                                    "before ==, so a NaN taken from the list is found in it",
                                 "compare explicitly with any(x == v for x in xs)")
            want = common_numeric(needle, hay.elem)
            if want is None:
                raise self.error(e, f"`{needle} in {hay}` is always False in Python; it is refused as a likely bug",
                                 "test a value of the list's element type")
            e.args[0] = self.coerce(e.args[0], needle, want, "")
            return BOOL
        raise self.error(e, f"`in` over a {hay} is not supported by opgen compile", "test a list, str or dict")

    def min_max_of_arguments(self, e: ir.Builtin, assigned: set[str]) -> Type:
        if e.kwargs:
            raise self.error(e, f"{e.name}() with keywords is not supported by opgen compile")
        types = [self.expr(a, assigned) for a in e.args]
        if len(set(types)) != 1 or types[0].kind != "scalar":
            raise self.error(e, f"{e.name}() of {', '.join(map(str, types))}: Python returns one of its arguments "
                                "unchanged, so they must share one scalar type here",
                             "convert them first (float(n)), or use np.minimum/np.maximum for arrays")
        return types[0]

    def consumer(self, e: ir.Builtin, assigned: set[str]) -> Type:
        """min/max/sum/any/all/sorted/list of one iterable (a list, str, range, comprehension...)."""
        name = e.name
        if len(e.args) != 1 and not (name == "sum" and len(e.args) == 2):
            raise self.error(e, f"{name}() takes one iterable here")
        elem = self.iteration(e.args[0], assigned, f"{name}()")
        if isinstance(elem, tuple):
            raise self.error(e, f"{name}() of tuples is not supported by opgen compile", "unpack them in a loop")
        e.elem = elem
        if name in ("any", "all"):
            self.truthy(e, elem)
            return BOOL
        if "key" in e.kwargs:  # sorted/min/max(xs, key=f): the items ordered by their keys' comparisons
            keys = self.expr(e.kwargs["key"], assigned)
            if keys.kind != "list" or keys.elem.kind != "scalar":
                raise self.error(e, f"{name}() with a key giving {keys.elem if keys.kind == 'list' else keys} values "
                                    "is not supported by opgen compile (keys compare as int, float, bool or str)",
                                 "give a key of one of those types")
            if elem.kind != "scalar":
                raise self.error(e, f"{name}() of {elem} values is not supported",
                                 "sort the indices instead: sorted(range(len(xs)), key=lambda i: ...)")
        if name in ("min", "max"):
            if elem.kind != "scalar":
                raise self.error(e, f"{name}() of {elem} values is not supported")
            return elem
        if name == "sorted":
            reverse = e.kwargs.get("reverse")
            if reverse is not None:
                r = self.expr(reverse, assigned)
                if r not in (BOOL, INT):
                    raise self.error(e, f"sorted()'s reverse is a {r}, not a bool")
                if r != BOOL:
                    e.kwargs["reverse"] = self.truth(reverse)
            if elem.kind != "scalar":
                raise self.error(e, f"sorted() of {elem} values is not supported")
            return list_of(elem)
        if name == "list":
            return list_of(elem)
        # sum(xs, start=0): ints (bools count as 0 and 1) add as ints; any float makes it float.
        start = e.args[1] if len(e.args) == 2 else e.kwargs.pop("start", None)
        if start is None:
            start = ir.Const(e.line, 0)
        st = self.expr(start, assigned)
        if elem not in (INT, FLOAT, BOOL) or st not in (INT, FLOAT, BOOL):
            raise self.error(e, f"sum() of {elem} values from a {st} start is not supported by opgen compile",
                             "sum numbers; join strings with str.join")
        result = FLOAT if FLOAT in (elem, st) else INT
        if result == FLOAT and sys.version_info >= (3, 12):
            raise self.error(e, "sum() of floats compensates its rounding errors since Python 3.12, which opgen "
                                "compile does not reproduce yet", "write the loop: total = 0.0; for x in xs: total += x")
        e.args = [e.args[0], self.coerce(start, st, result, "")]
        return result

    def index(self, e: ir.Index, assigned: set[str]) -> Type:
        base = self.expr(e.base, assigned)
        key = self.expr(e.index, assigned)
        if isinstance(base, DictType):
            if key != STR:
                raise self.error(e, f"a dict[str, ...] is indexed with a {key}", "index it with a str")
            return base.value
        if base.kind == "list":
            if key not in (INT, BOOL):
                raise self.error(e, f"a list is indexed with a {key}", "index it with an int")
            e.index = self.coerce(e.index, key, INT, "")
            return base.elem
        if base == STR:  # a code point, as a str of one character
            if key not in (INT, BOOL):
                raise self.error(e, f"a str is indexed with a {key}", "index it with an int")
            e.index = self.coerce(e.index, key, INT, "")
            return STR
        if isinstance(base, TupleType):  # torch.topk(x, k)[0]: an item of an op's or helper's tuple
            n = len(base.items)
            if not (isinstance(e.index, ir.Const) and key == INT and -n <= e.index.value < n):
                raise self.error(e, f"a {base} is indexed with "
                                    + (f"{e.index.value} (Python raises IndexError)" if isinstance(e.index, ir.Const)
                                       else "a value known only when it runs"),
                                 f"index it with a constant in [{-n}, {n}), or unpack it")
            e.index = ir.Const(e.line, e.index.value % n)
            self.expr(e.index, set())
            return base.items[e.index.value]
        if base.kind == "tensor":  # q[0]: a view of the first row, as NumPy and torch index
            if key.kind in ("tensor", "list"):  # emb[ids]: a gather
                return self.gather(e, [ir.IndexPart("at", index=e.index)], assigned)
            self.array_index(e, key, "an index")
            e.index = self.coerce(e.index, key, INT, "")
            return base
        raise self.error(e, f"indexing a {base} is not supported by opgen compile")

    def array_index(self, e: ir.Expr, t: Type, what: str) -> None:
        if t != INT:  # a bool indexes an array as a mask of one element in NumPy, not as 0 or 1
            raise self.error(e, f"{what} of an array is a {t}", "use an int")

    def gather(self, e: ir.Index | ir.Subscript, parts: list[ir.IndexPart], assigned: set[str]) -> Type:
        """``emb[ids]``, ``x[:, idx]``, ``x[[0, 2]]``: NumPy's and torch's integer-array indexing of one
        axis, as ``numpy.take`` (same values, same IndexError) of the view the other parts make, with
        the array's part a whole-axis slice there. The axis is counted from the front, or from the end
        where ``...`` comes before the array."""
        at = [i for i, p in enumerate(parts) if p.kind == "at" and p.index.type.kind in ("tensor", "list")]
        if at == [0, 1] and len(parts) == 2 and e.base.flavor == flavor.NUMPY:  # x[i, j] of a NumPy array
            return self.index_pairs(e, [parts[0].index, parts[1].index], assigned)
        if len(at) > 1:
            raise self.error(e, "indexing with several arrays at once (NumPy broadcasts them together) is supported "
                                "by opgen compile only as x[i, j] of a NumPy array over its first two axes",
                             "index one axis at a time: x[i][:, j]")
        k = at[0]
        index = parts[k].index
        t = index.type
        base = e.base.type
        if t.kind == "list":
            if t.elem != INT:
                raise self.error(e, f"indexing an array with a {t} is not supported by opgen compile (a list of "
                                    "bools is a mask)", "index with a list of ints")
            index = ir.Builtin(index.line, "index_array", [index])  # as NumPy and torch make an int64 array of it
            index.type, index.flavor = tensor_of("int64"), e.base.flavor
        elif t.dtype.name == "bool":
            pass  # x[mask]: opgen.boolean_mask (below), once the libraries are known to agree
        elif t.dtype.name in WIDENED_INDEX_DTYPES[e.base.flavor]:
            # x[i32]: NumPy and torch index with the values of the integer arrays they accept; numpy.take's
            # kernels take int64, which holds every value of these, so the indices are widened first.
            index = ir.Op(index.line, casts.CAST_OP, [index], {}, source=f"{t} indices widened to int64",
                          result="int64", library_bound=True)
        elif t.dtype.name != "int64":
            taken = ", ".join(["int64", *WIDENED_INDEX_DTYPES[e.base.flavor]])
            library = {flavor.NUMPY: "NumPy takes any integer dtype",
                       flavor.TORCH: "torch takes int64 and int32, and reads uint8 as a mask",
                       None: "the array's library is not known"}[e.base.flavor]
            raise self.error(e, f"indexing with a {t} array: opgen compile takes {taken} index arrays here "
                                f"({library})", "pass the indices as an int64 array")
        if index.flavor is not None and e.base.flavor is not None and index.flavor != e.base.flavor:
            raise self.error(e, "a NumPy array indexed by a torch tensor, or the other way round: the libraries "
                                "convert it in their own ways", "index with an array of the same library")
        if t.kind == "tensor" and t.dtype.name == "bool":
            return self.boolean_mask(e, parts, k, index, assigned)
        before, after = parts[:k], parts[k + 1:]
        kept = lambda ps: sum(1 for p in ps if p.kind in ("slice", "newaxis"))  # noqa: E731 (dims a part keeps)
        axis = -(1 + kept(after)) if any(p.kind == "ellipsis" for p in before) else kept(before)
        advanced = [i for i, p in enumerate(parts) if p.kind == "at"]
        if advanced != list(range(advanced[0], advanced[-1] + 1)) and axis != 0 and e.base.flavor != flavor.TORCH:
            # NumPy puts the result's dims first when an int and the array are apart (x[0, :, idx]); torch
            # takes the int as a basic index and keeps the dims in place.
            raise self.error(e, "an int index and an index array separated by a slice: NumPy puts the gathered "
                                "dims first, torch keeps them in place", "index in two steps: y = x[0]; y[:, idx]")
        rest = [*before, ir.IndexPart("slice"), *after]
        view: ir.Expr = e.base
        if not all(p.kind == "slice" and not p.exprs for p in rest):
            view = ir.Subscript(e.line, e.base, rest)
            view.type, view.flavor = base, e.base.flavor
        take = ir.Op(e.line, "numpy.take", [view, index, ir.Const(e.line, axis)], {},
                     source="integer-array indexing (numpy.take)")
        take.library_bound = True
        e.gather = take
        return self.expr(take, assigned)

    def index_pairs(self, e: ir.Subscript, indices: list[ir.Expr], assigned: set[str]) -> Type:
        """``x[i, j]`` of a NumPy array with integer index arrays or lists: compiled from its Python definition
        (opgen/compiler/lowerings/numpy_compositions.py). torch's checks differ where a dim or the rows are
        empty, and are not written yet: a tensor's x[i, j] stays refused."""
        args = [e.base]
        for index in indices:
            t = index.type
            if t.kind == "list":
                if t.elem != INT:
                    raise self.error(e, f"indexing an array with a {t} is not supported by opgen compile",
                                     "index with lists or arrays of ints")
                index = ir.Builtin(index.line, "index_array", [index])
                index.type, index.flavor = tensor_of("int64"), e.base.flavor
                index.library = e.base.flavor
            elif t.dtype.name != "int64":
                raise self.error(e, f"x[i, j] with a {t} index: opgen compile takes int64 index arrays here",
                                 "pass the indices as int64 arrays")
            args.append(index)
        op = ir.Op(e.line, "", args, {}, source="x[i, j] (two index arrays)")
        e.gather = op
        op.type = self.lowered(op, "opgen.index_pairs", None, assigned)
        op.flavor = e.base.flavor
        return op.type

    def boolean_mask(self, e: ir.Index | ir.Subscript, parts: list[ir.IndexPart], k: int, mask: ir.Expr,
                     assigned: set[str]) -> Type:
        """``x[mask]``, ``x[x > 0]``, ``t[mask, :]``: NumPy's and torch's boolean-mask indexing with a bool
        mask over x's first dims, as opgen.boolean_mask (same rows, same IndexError for a mask of another
        shape). Its length depends on the data: the kernel writes at most mask.size rows into an array of
        that bound and reports how many, and the result is the view of those rows (no copy)."""
        if k != 0 or not all(p.kind in ("slice", "ellipsis") and not p.exprs for p in parts[1:]):
            raise self.error(e, "a boolean mask after other indices or before a slice with bounds (x[:, mask], "
                                "x[mask, 1:]) is not supported by opgen compile: it compiles only as x[mask] over "
                                "x's first dims", "index in two steps: y = x[:, 1:]; y[mask], or move the masked "
                                "axis first")
        select = ir.Op(e.line, "opgen.boolean_mask", [e.base, mask], {}, source="boolean-mask indexing (x[mask])")
        select.library_bound = True
        result = self.expr(select, assigned)
        rows = ir.Op(e.line, "", [select], {}, source="x[mask]: the rows the kernel kept")
        rows.native, rows.bound = "bounded_rows", [select]
        rows.type, rows.flavor = result.items[0], e.base.flavor
        e.gather = rows
        return rows.type

    def subscript(self, e: ir.Subscript, assigned: set[str]) -> Type:
        """Slices of lists and strs; NumPy's basic indexing of arrays (views: ints, slices, ``...``, None)."""
        base = self.expr(e.base, assigned)
        for p in e.parts:
            for attr in ("index", "start", "stop", "step"):
                x = getattr(p, attr)
                if x is None:
                    continue
                t = self.expr(x, assigned)
                what = "an index" if attr == "index" else f"a slice's {attr}"
                if base.kind == "tensor" and attr == "index" and t.kind in ("tensor", "list"):
                    continue  # x[:, idx]: a gather (below)
                if base.kind == "tensor":
                    self.array_index(e, t, what)
                elif t not in (INT, BOOL):
                    raise self.error(e, f"{what} is a {t}", "use an int")
                setattr(p, attr, self.coerce(x, t, INT, ""))
        if base.kind == "list" or base == STR:
            if len(e.parts) != 1 or e.parts[0].kind != "slice":
                raise self.error(e, f"a {base} takes one index or one slice (Python raises TypeError for more)")
            return base
        if base.kind == "tensor":
            self.array_steps(e)
            if any(p.kind == "at" and p.index.type.kind in ("tensor", "list") for p in e.parts):
                return self.gather(e, e.parts, assigned)
            return base
        raise self.error(e, f"slicing a {base} is not supported by opgen compile", "slice a list, str or array")

    def array_steps(self, e: ir.Subscript) -> None:
        """A NumPy array takes any step (a negative one reverses: a view with negative strides, which every
        kernel reads, as the gate's reversed layouts check); torch raises ValueError for a step below 1,
        which a constant step is refused for here and a computed one raises when it runs."""
        library = e.base.flavor
        for p in e.parts:
            if p.kind != "slice" or p.step is None or library == flavor.NUMPY:
                continue
            constant = isinstance(p.step, ir.Const) or (isinstance(p.step, ir.Convert) and
                                                        isinstance(p.step.value, ir.Const))
            value = (p.step if isinstance(p.step, ir.Const) else p.step.value).value if constant else None
            if library == flavor.TORCH and constant and value <= 0:
                raise self.error(e, f"a slice step of {value} on a torch tensor (torch raises ValueError: step must "
                                    "be greater than zero)", "flip it with torch.flip, or pass a NumPy array")
            if library is None and not (constant and value > 0):
                raise self.error(e, "a slice step other than a positive constant on an array of no known library: "
                                    "NumPy reverses with a negative step where torch raises ValueError",
                                 "write a positive constant step")

    def list_literal(self, e: ir.ListLit, assigned: set[str]) -> Type:
        if not e.items:
            raise self.error(e, "the element type of an empty list here is unknown", "assign it to an annotated "
                                                                                    "name: xs: list[int] = []")
        types = [self.expr(x, assigned) for x in e.items]
        if any(t.kind == "tensor" for t in types):
            return self.tensor_list(e, types)
        e.items = self.common_elements(e, e.items, assigned, "list elements", "element", types)
        return list_of(e.items[0].type)

    def tensor_list(self, e: ir.ListLit, types: list[Type]) -> Type:
        """A list (or tuple) literal of arrays: only as a library call's argument (np.concatenate([a, b]),
        torch.cat((k_cache, k), dim=2)), every element an array of one dtype."""
        if not getattr(e, "library_argument", False):
            raise self.error(e, "a list of arrays is supported by opgen compile only as a literal argument of a "
                                "library call, as in np.concatenate([a, b], axis=1) or torch.stack((x, y))",
                             "write the list (or tuple) of arrays inside the call")
        if any(t.kind != "tensor" for t in types) or len(set(types)) != 1:
            raise self.error(e, f"the elements of a list of arrays must be arrays of one dtype (got "
                                f"{', '.join(sorted(set(map(str, types))))})", "convert them to one dtype first")
        return list_of(types[0])

    def common_elements(self, e: ir.Expr, items: list[ir.Expr], assigned: set[str], what: str,
                        one: str, types: list[Type] | None = None) -> list[ir.Expr]:
        """A literal's elements (or values), each widened to the scalar type they all widen to (``types``:
        the elements' types where the caller has propagated them already)."""
        if types is None:
            types = [self.expr(x, assigned) for x in items]
        common = types[0]
        for t in types[1:]:
            common = common_numeric(common, t)
            if common is None:
                raise self.error(e, f"{what} of different types ({', '.join(sorted(set(map(str, types))))})",
                                 f"give every {one} one type")
        if common.kind != "scalar":
            raise self.error(e, f"a {what.split()[0]} of {common} is not supported ({what} are int, float, bool or str)")
        out = [self.coerce(x, t, common, "") for x, t in zip(items, types)]
        for x in out:
            x.type = common
        return out

    def dict_literal(self, e: ir.DictLit, assigned: set[str]) -> Type:
        if not e.keys:
            raise self.error(e, "the value type of an empty dict here is unknown",
                             "assign it to a name first (d = {}), or annotate it: d: dict[str, int] = {}")
        keys = [self.expr(k, assigned) for k in e.keys]
        for k, kt in zip(e.keys, keys):
            if kt != STR:
                raise self.error(k, f"a dict key is a {kt}; compiled dicts are keyed by str", "key it by str")
        e.values = self.common_elements(e, e.values, assigned, "dict values", "value")
        return DictType(e.values[0].type)

    def table_type(self, e: ir.Table) -> Type:
        values = list(e.value.values()) if isinstance(e.value, dict) else list(e.value)
        if isinstance(e.value, dict) and not all(isinstance(k, str) for k in e.value):
            raise self.error(e, f"the module constant {e.name} has keys that are not str",
                             "key module tables by str")
        types = {python_type(v) for v in values}
        if None in types or len(types) > 1 or not values:
            shown = ", ".join(sorted(type(v).__name__ for v in {type(v): v for v in values}.values())) or "none"
            raise self.error(e, f"the module constant {e.name} holds values of types {shown}; a compiled table holds "
                                "one of int, float, bool or str", "give every value one type")
        t = types.pop()
        return DictType(t) if isinstance(e.value, dict) else list_of(t)

    # ------------------------------------------------------------------ helpers

    def condition(self, e: ir.Expr, assigned: set[str]) -> ir.Expr:
        """An if/while test or a comprehension's filter: a bool, or Python's truthiness of a value."""
        if isinstance(e, ir.BoolOp) and e.type is None:
            # `if 0 <= v < n:` of a 0-d array: in a test, `a and b` is true exactly when bool(a) and bool(b)
            # are (the operand it gives back is a or b), so each operand is a test of its own, short-circuit kept
            e.values = self.operands(e, assigned, self.condition)  # each a bool now
        t = self.expr(e, assigned)
        if t.kind == "tensor":  # `if (x > 0).any():`: NumPy's bool() of an array of one element
            e = self.array_scalar(e, t, "bool")
            t = e.type
        if t == BOOL:
            return e
        self.truthy(e, t)
        return self.truth(e)

    def coerce(self, e: ir.Expr, have: Type, want: Type, message: str, hint: str | None = None) -> ir.Expr:
        if have == want:
            return e
        if isinstance(e, ir.Var) and e.name in self.guessed and (
                (have.kind == "list" and want.kind == "list") or (isinstance(have, DictType) and isinstance(want, DictType))):
            raise _Retry(e.name, want)  # an empty container returned or passed as the annotated type
        if widens_to(have, want):
            if isinstance(e, ir.Const):  # folded: 2 -> 2.0
                c = ir.Const(e.line, float(e.value) if want == FLOAT else int(e.value))
                c.type = want
                return c
            c = ir.Convert(e.line, e)
            c.type = want
            return c
        raise self.error(e, message or f"a {have} where a {want} is needed", hint)


def _fits_float32(e: ir.Expr) -> bool:
    """A constant float (or its negation) that float32 holds without overflow: inf and nan, or finite
    within float32's range, as torch requires of a value stored into a float32 tensor."""
    negated = isinstance(e, ir.Op) and e.op == "operator.neg" and len(e.args) == 1
    c = e.args[0] if negated else e
    if isinstance(c, ir.Convert):
        c = c.value
    if not isinstance(c, ir.Const) or not isinstance(c.value, (int, float)) or isinstance(c.value, bool):
        return False
    v = float(c.value)
    return v != v or abs(v) == float("inf") or abs(v) <= 3.4028234663852886e+38


def _names_where(stmts: list[ir.Stmt], picks) -> set[str]:
    """The names of the statements ``picks`` selects, in these statements and the blocks inside them."""
    names: set[str] = set()
    for s in stmts:
        if picks(s):
            names.add(s.name)
        for block in ir.blocks(s):
            names |= _names_where(block, picks)
    return names


def _appended_names(stmts: list[ir.Stmt]) -> set[str]:
    """Containers changed in place: appended to, extended, or assigned into."""
    return _names_where(stmts, lambda s: isinstance(s, (ir.Append, ir.SetItem)))


def _rebound_before(body: list[ir.Stmt], name: str, stmt: ir.Stmt) -> bool:
    """Whether a statement at the top level of the function's body binds ``name`` anew (``x = x - m``)
    before the top-level statement holding ``stmt``: every path to ``stmt`` then passes it, so ``name``
    no longer holds the argument there."""
    for top in body:
        if any(inner is stmt for inner in ir.walk_statements([top])):
            return False
        if isinstance(top, ir.Assign) and top.name == name and not top.inplace:
            return True
        if isinstance(top, ir.Unpack) and name in ir.target_names(top.target):
            return True
    return False


def _inplace_names(stmts: list[ir.Stmt]) -> set[str]:
    return _names_where(stmts, lambda s: isinstance(s, ir.Assign) and s.inplace)


def _library_binds(name: str, spec, receiver: ir.Expr, args: list[ir.Expr], kwargs: dict[str, ir.Expr]) -> bool:
    """Whether a call with these arguments binds to one of the library's signatures of ``name`` (a keyword
    that **kwargs takes must be one of the spec's native parameters, as bind_library requires)."""
    native = {p.name for o in spec.overloads for p in o.sig.params}
    for sig in library_signatures(name):
        try:
            bound = sig.as_inspect().bind(receiver, *args, **kwargs).arguments
        except TypeError:
            continue
        extra = {k for p in sig.params if p.kind == p.kind.VAR_KEYWORD for k in bound.get(p.name, {})}
        if extra <= native:
            return True
    return False


def _result_type(returns) -> Type:
    """The compiler's type of an op's result: a tuple of named tensors is a TupleType that keeps the names."""
    if returns.is_tuple:
        return TupleType(tuple(t for _, t in returns.fields), names=tuple(n for n, _ in returns.fields))
    return returns


def _empty_container(e: ir.Expr) -> str:
    if isinstance(e, ir.ListLit) and not e.items:
        return "list"
    if isinstance(e, ir.DictLit) and not e.keys:
        return "dict"
    return ""


def _wider(t: Type, have: Type) -> bool:
    """A container type whose elements the ``have`` container's widen to (list[int] -> list[float])."""
    if t.kind == "list" and have.kind == "list":
        return widens_to(have.elem, t.elem)
    if isinstance(t, DictType) and isinstance(have, DictType):
        return widens_to(have.value, t.value)
    return False


def _breaks(stmts: list[ir.Stmt]) -> bool:
    """Whether a break in these statements leaves the loop they are the body of (not an inner one)."""
    for s in stmts:
        if isinstance(s, ir.Break):
            return True
        if isinstance(s, (ir.If, ir.Try)) and any(_breaks(b) for b in ir.blocks(s)):
            return True
    return False


def _dtype_value(e: ir.Expr) -> bool:
    """A dtype as a value: np.float32, torch.long, or an array's ``.dtype``."""
    return isinstance(e, ir.DTypeConst) or (isinstance(e, ir.MethodCall) and e.attribute and e.method == "dtype")


def _annotations_admit(definition, given: dict) -> bool:
    """Whether the arguments' types fit a lowering's int/float parameter annotations (given: position or
    keyword -> type); an int fits float, as Python's numbers do."""
    params = [*definition.args.posonlyargs, *definition.args.args]
    for i, p in enumerate(params):
        t = given.get(i, given.get(p.arg))
        want = p.annotation.id if isinstance(p.annotation, ast.Name) else None
        if t is None or want not in ("int", "float"):
            continue
        if (want == "int" and t not in (INT, BOOL)) or (want == "float" and t not in (INT, BOOL, FLOAT)):
            return False
    return True


def _present_if(test: ir.Expr, outcome: bool) -> set[str]:
    """The Optional parameters a typed test proves not None when it comes out ``outcome``."""
    if isinstance(test, ir.Builtin) and test.name == "absent":
        return set() if outcome else {test.args[0].value}
    if isinstance(test, ir.Builtin) and test.name == "not":
        return _present_if(test.args[0], not outcome)
    if isinstance(test, ir.BoolOp) and (test.op == "and") == outcome:  # every operand came out so
        return set().union(*(_present_if(v, outcome) for v in test.values))
    return set()


def _is_none(e: ir.Expr) -> bool:
    return isinstance(e, ir.Const) and e.value is None


def _is_default(e: ir.Expr, default: object) -> bool:
    """Whether a library-only argument is written as its library default (None, or an equal constant)."""
    if default is EMPTY or default is NOVALUE:
        return False
    if not isinstance(e, ir.Const):
        return False
    numbers = (int, float)
    if type(e.value) in numbers and type(default) in numbers:  # alpha=1.0 is torch's alpha=1
        return e.value == default
    return type(e.value) is type(default) and e.value == default


def _spread_left_to_defaults(spec, sig, bound: dict[str, ir.Expr], pname: str) -> bool:
    """Whether an omitted spread library parameter stays omitted: where every overload taking its
    native parameters defaults each to the library's default, the chosen overload's defaults say it,
    and an overload without them (max_pool2d's f32, beside f32_options with dilation_h, dilation_w)
    still takes the call."""
    pp = spec.python_params[pname]
    value = bound.get(pname)
    if (value is not None and not _is_none(value)) or pp.omitted is not None:
        return False
    default = sig.param(pname).default
    if isinstance(default, list) and len(default) == 1:
        default = default[0]
    if type(default) is not int:
        return False
    takers = [o for o in spec.overloads if {p.name for p in o.sig.params} >= set(pp.spread)]
    return len(takers) < len(spec.overloads) and all(
        o.sig.param(n).has_default and o.sig.param(n).default == default for o in takers for n in pp.spread)


def _row_flavors(e: ir.Expr, elem: Any) -> Any:
    """The library of each array a loop's step yields, shaped as its type (``elem``): a row of x is of x's
    library, inside enumerate() and zip() too; None where the step holds no array."""
    if isinstance(e, ir.Iteration) and e.kind == "enumerate":
        return (None, _row_flavors(e.args[0], elem[1]))
    if isinstance(e, ir.Iteration) and e.kind == "zip":
        return tuple(_row_flavors(a, t) for a, t in zip(e.args, elem))
    if isinstance(elem, tuple):
        return tuple(None for _ in elem)
    return e.flavor if elem.kind == "tensor" else None


def _iterated_vars(e: ir.Expr, inner: bool = False) -> list[ir.Var]:
    """The names a loop iterates over, which may not change inside it: the loop's own iterable, and the
    arrays inside enumerate() and zip() (their rows are views; `xs[i] = ...` of a list enumerated stays)."""
    if isinstance(e, ir.Var):
        return [e] if not inner or (e.type is not None and e.type.kind == "tensor") else []
    if isinstance(e, ir.Iteration) and e.kind in ("enumerate", "zip"):
        return [v for a in (e.args[:1] if e.kind == "enumerate" else e.args) for v in _iterated_vars(a, True)]
    return []


def _reduces_without_keepdims(spec) -> bool:
    """Every overload a reduction along one axis whose kernel takes no keepdims (numpy.sum's)."""
    return all(o.rule is not None and o.rule.kind == "reduce" and o.rule.keepdims is None and o.rule.axis
               for o in spec.overloads)


def _spec_file(spec) -> str:
    return f"specs/{spec.op.replace('.', '/')}.yaml"
