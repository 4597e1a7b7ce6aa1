"""Type propagation: seeded by the annotations, driven by the registry.

Every expression gets a type: a constant's own, a variable's (fixed by its first
assignment), and an op's is the return type of the verified registry entry for
(op, argument types). Alongside, the checks that keep the native code faithful to
Python: a variable keeps one type; a name is read only where it is surely assigned;
every path returns; a list that is appended to is never shared with another name.
"""

from __future__ import annotations

from typing import Any

from opgen.compiler import ir
from opgen.compiler.errors import CompileError
from opgen.compiler.resolve import EXACT_COMPARISONS, OpResolver
from opgen.spec.names import method_named
from opgen.compiler.types import BOOL, FLOAT, INT, STR, DictType, Type, common_numeric, list_of, tensor_of, widens_to

# The Python type names a method of a value of each kind is declared under (``methods:`` in specs):
# a tensor may be a NumPy array or a torch tensor (the compiler does not track which), a scalar or a
# str is its own name (``str.lower``), as are lists and dicts.
METHOD_RECEIVERS = {"tensor": ("ndarray", "Tensor"), "list": ("list",), "dict": ("dict",)}

EMBEDDINGS = tensor_of("float32")  # opgen.pipelines.embed: (len(texts), the model's dimension)


def propagate(fn: ir.Function, resolver: OpResolver) -> ir.Function:
    Propagator(fn, resolver).run()
    return fn


def python_type(value: Any) -> Type | None:
    """The compiler type of a Python literal (bool before int: True is an int in Python)."""
    for py, t in ((bool, BOOL), (int, INT), (float, FLOAT), (str, STR)):
        if type(value) is py:
            return t
    return None


class Propagator:
    def __init__(self, fn: ir.Function, resolver: OpResolver):
        self.fn = fn
        self.resolver = resolver
        self.params = {p.name: p.type for p in fn.params}
        self.vars: dict[str, Type] = dict(self.params)  # every local's one type
        self.first_line: dict[str, int] = {name: fn.line for name in self.params}
        self.comprehension: list[tuple[str, Type]] = []  # innermost last
        self.iterating: list[str] = []  # list variables being looped over, outermost first
        self.appended = _appended_names(fn.body)

    def where(self, node: ir.Expr | ir.Stmt) -> str:
        return f"{self.fn.path}:{node.line}"

    def error(self, node: ir.Expr | ir.Stmt, message: str, hint: str | None = None) -> CompileError:
        return CompileError(message, where=self.where(node), hint=hint)

    def run(self) -> None:
        for name in self.appended & set(self.params):
            raise CompileError(f"appending to the parameter {name!r} would change the caller's list in Python; "
                               "a compiled function cannot", where=f"{self.fn.path}:{self.fn.line}",
                               hint=f"copy it first: out = [x for x in {name}]")
        assigned, returns = self.block(self.fn.body, set(self.params))
        if not returns:
            raise CompileError(f"{self.fn.name} can reach its end without returning (Python would return None)",
                               where=f"{self.fn.path}:{self.fn.end_line}", hint="return a value on every path")
        self.fn.locals = {k: v for k, v in self.vars.items() if k not in self.params}

    # ------------------------------------------------------------------ statements

    def block(self, stmts: list[ir.Stmt], assigned: set[str]) -> tuple[set[str], bool]:
        """Types a block; returns the names surely assigned after it and whether it always returns."""
        assigned = set(assigned)
        for s in stmts:
            if isinstance(s, ir.Assign):
                self.assign(s, assigned)
                assigned.add(s.name)
            elif isinstance(s, ir.Append):
                self.append(s, assigned)
            elif isinstance(s, ir.If):
                self.condition(s.cond, assigned)
                then, then_returns = self.block(s.body, assigned)
                orelse, else_returns = self.block(s.orelse, assigned)
                if then_returns and else_returns:
                    return assigned, True
                assigned = orelse if then_returns else then if else_returns else then & orelse
            elif isinstance(s, ir.For):
                elem = self.iterable(s.iterable, assigned, "a for loop")
                self.declare(s, s.var, elem)
                if isinstance(s.iterable, ir.Var):
                    self.iterating.append(s.iterable.name)
                self.block(s.body, assigned | {s.var})  # the body may run zero times: nothing it assigns is sure
                if isinstance(s.iterable, ir.Var):
                    self.iterating.pop()
            elif isinstance(s, ir.Return):
                t = self.expr(s.value, assigned)
                s.value = self.coerce(s.value, t, self.fn.returns, f"{self.fn.name} returns {t}, but is annotated "
                                                                    f"-> {self.fn.returns}",
                                      "return the annotated type, or change the annotation")
                return assigned, True
        return assigned, False

    def assign(self, s: ir.Assign, assigned: set[str]) -> None:
        if isinstance(s.value, ir.ListLit) and not s.value.items:
            want = s.declared or self.vars.get(s.name)
            if want is None or want.kind != "list":
                raise self.error(s, f"the element type of the empty list assigned to {s.name!r} is unknown",
                                 f"annotate it: {s.name}: list[str] = []")
            s.value.type = want
            self.declare(s, s.name, want)
            return
        t = self.expr(s.value, assigned)
        if isinstance(s.value, ir.Var) and t.kind == "list" and ({s.name, s.value.name} & self.appended):
            raise self.error(s, f"{s.name} = {s.value.name} makes both names one list in Python, and one of them "
                                "is appended to; compiled lists are values", f"copy it: {s.name} = [x for x in {s.value.name}]")
        want = s.declared or self.vars.get(s.name)
        if want is not None:
            s.value = self.coerce(s.value, t, want, f"{s.name} is {want} (line {self.first_line.get(s.name, s.line)}) "
                                                    f"but is assigned a {t} here; a compiled variable keeps one type",
                                  "use another name, or write the first value with the wider type "
                                  "(e.g. 0.0 rather than 0)")
        self.declare(s, s.name, want or t)

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
        have = self.vars.get(s.name)
        if have is None or s.name not in assigned:
            raise self.error(s, f"{s.name} may be used before it is assigned", f"start it as {s.name}: list[...] = []")
        if have.kind != "list":
            raise self.error(s, f"{s.name} is {have}, not a list; append is for lists")
        if s.name in self.iterating:
            raise self.error(s, f"appending to {s.name} while a for loop iterates over it is not supported",
                             "append to another list")
        t = self.expr(s.value, assigned)
        s.value = self.coerce(s.value, t, have.elem, f"{s.name} is {have}; cannot append a {t}",
                              "append values of the list's element type")

    # ------------------------------------------------------------------ expressions

    def expr(self, e: ir.Expr, assigned: set[str]) -> Type:
        e.type = self._type(e, assigned)
        return e.type

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
        if isinstance(e, ir.IfExp):
            self.condition(e.cond, assigned)
            a, b = self.expr(e.then, assigned), self.expr(e.orelse, assigned)
            common = common_numeric(a, b)
            if common is None:
                raise self.error(e, f"the branches of this conditional expression are {a} and {b}; "
                                    "a compiled value has one type", "make both branches the same type")
            e.then = self.coerce(e.then, a, common, "")
            e.orelse = self.coerce(e.orelse, b, common, "")
            return common
        if isinstance(e, ir.ListComp):
            elem = self.iterable(e.iterable, assigned, "a comprehension")
            self.comprehension.append((e.var, elem))
            try:
                for c in e.conds:
                    self.condition(c, assigned)
                t = self.expr(e.elt, assigned)
            finally:
                self.comprehension.pop()
            if t.kind != "scalar":
                raise self.error(e, f"a list of {t} is not supported (list elements are int, float, bool or str)",
                                 "use numpy functions on arrays instead of lists of arrays")
            return list_of(t)
        if isinstance(e, ir.Convert):
            return e.type
        if isinstance(e, ir.PipelineEmbed):
            t = self.expr(e.texts, assigned)
            if t != list_of(STR):
                raise self.error(e, f"{e.source}: the texts are a {t}, not a list[str]", "pass a list of strings")
            return EMBEDDINGS
        raise AssertionError(f"untyped IR node {type(e).__name__}")

    def op(self, e: ir.Op, assigned: set[str]) -> Type:
        args = [self.expr(a, assigned) for a in e.args]
        if e.op in EXACT_COMPARISONS and FLOAT in args:
            # `x > 0` on a float: the int constant becomes the float it equals exactly, as Python compares.
            for i, a in enumerate(e.args):
                if isinstance(a, ir.Const) and a.type == INT and float(a.value) == a.value:
                    e.args[i] = self.coerce(a, INT, FLOAT, "")
                    args[i] = FLOAT
        kwargs = {k: self.expr(v, assigned) for k, v in e.kwargs.items()}
        r = self.resolver.resolve(e.op, args, kwargs, self.where(e))
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
        return r.overload.sig.returns

    def method_call(self, e: ir.MethodCall, assigned: set[str]) -> Type:
        """Name the op from the receiver's type (the specs' ``methods:``), bind the receiver, and go on
        as for any op."""
        if e.op:  # bound on an earlier pass over this loop or branch: the receiver is in e.args now
            return self.op(e, assigned)
        receiver = self.expr(e.receiver, assigned)
        kinds = METHOD_RECEIVERS.get(receiver.kind, (str(receiver),))
        found = {}
        for kind in kinds:
            named = method_named(self.resolver.specs, f"{kind}.{e.method}")
            if named is not None and named[1].attribute == e.attribute:
                found[f"{kind}.{e.method}"] = named
        what = "attribute" if e.attribute else "method"
        shown = e.source if e.attribute else f"{e.source.split('(')[0]}()"
        if not found:
            names = " or ".join(f"{k}.{e.method}" for k in kinds)
            raise self.error(e, f"the {what} {shown} of a {receiver} is not supported by opgen compile: no spec "
                                f"declares {names}",
                             "call the module function instead (e.g. np.sum(x, axis=0) for x.sum(axis=0)), or "
                             f"declare it in its op's spec (methods: [{{name: {kinds[0]}.{e.method}}}])")
        ops = {spec.op for spec, _ in found.values()}
        if len(ops) > 1:  # ndarray.sum and Tensor.sum naming different ops: a tensor's flavor is not tracked
            raise self.error(e, f"{shown} of a {receiver} is ambiguous: {', '.join(f'{n} is {s.op}' for n, (s, _) in found.items())}",
                             "call the module function you mean instead")
        spec, method = next(iter(found.values()))
        e.op = spec.op
        if method.receiver is None:  # the receiver is the first parameter: a.sum(axis) is numpy.sum(a, axis)
            e.args = [e.receiver, *e.args]
        else:
            if method.receiver in e.kwargs:
                raise self.error(e, f"{shown}: {method.receiver} is the receiver; it cannot be passed again")
            e.kwargs = {method.receiver: e.receiver, **e.kwargs}
        return self.op(e, assigned)

    def builtin(self, e: ir.Builtin, assigned: set[str]) -> Type:
        t = self.expr(e.args[0], assigned)
        if e.name == "len":
            if t.kind == "list" or t == STR or isinstance(t, DictType):
                return INT
            raise self.error(e, f"len() of {t} is not supported", "len() takes a list, str or dict here")
        if t in (INT, BOOL, FLOAT):  # float()
            if t != FLOAT:
                e.args[0] = self.coerce(e.args[0], t, FLOAT, "")
            return FLOAT
        raise self.error(e, f"float() of {t} is not supported", "float() takes an int, bool or float here")

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
        if base.kind == "tensor":
            raise self.error(e, "indexing a tensor is not supported by opgen compile",
                             "use numpy functions on the whole array (np.sum(x, axis=...))")
        raise self.error(e, f"indexing a {base} is not supported by opgen compile")

    def list_literal(self, e: ir.ListLit, assigned: set[str]) -> Type:
        if not e.items:
            raise self.error(e, "the element type of an empty list here is unknown", "assign it to an annotated "
                                                                                    "name: xs: list[int] = []")
        types = [self.expr(x, assigned) for x in e.items]
        common = types[0]
        for t in types[1:]:
            common = common_numeric(common, t)
            if common is None:
                raise self.error(e, f"list elements of different types ({', '.join(sorted(set(map(str, types))))})",
                                 "give every element one type")
        if common.kind != "scalar":
            raise self.error(e, f"a list of {common} is not supported (list elements are int, float, bool or str)")
        e.items = [self.coerce(x, t, common, "") for x, t in zip(e.items, types)]
        return list_of(common)

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

    def iterable(self, e: ir.Expr, assigned: set[str], what: str) -> Type:
        t = self.expr(e, assigned)
        if t.kind != "list":
            raise self.error(e, f"{what} over a {t} is not supported", "iterate over a list")
        return t.elem

    def condition(self, e: ir.Expr, assigned: set[str]) -> None:
        t = self.expr(e, assigned)
        if t != BOOL:
            raise self.error(e, f"a condition must be a bool, not a {t} (Python's truthiness is not compiled)",
                             "compare explicitly, e.g. `x != 0` or `len(xs) > 0`")

    def coerce(self, e: ir.Expr, have: Type, want: Type, message: str, hint: str | None = None) -> ir.Expr:
        if have == want:
            return e
        if widens_to(have, want):
            if isinstance(e, ir.Const):  # folded: 2 -> 2.0
                c = ir.Const(e.line, float(e.value) if want == FLOAT else int(e.value))
                c.type = want
                return c
            c = ir.Convert(e.line, e)
            c.type = want
            return c
        raise self.error(e, message or f"a {have} where a {want} is needed", hint)


def _appended_names(stmts: list[ir.Stmt]) -> set[str]:
    names: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.Append):
            names.add(s.name)
        elif isinstance(s, ir.If):
            names |= _appended_names(s.body) | _appended_names(s.orelse)
        elif isinstance(s, ir.For):
            names |= _appended_names(s.body)
    return names
