"""Python source -> IR: reads a function's AST (it never runs it) and resolves every name.

The subset: annotated parameters; constants, and numpy/math/torch constants (``np.pi``,
``math.inf``); module-level literal constants (a scalar is folded in, a dict or list becomes a
static table, a constant key into one is looked up now); arithmetic, comparisons (chained too)
and unary minus as their ``operator.*`` ops; ``and``/``or``/``not`` with Python's short-circuit
and truthiness; calls to functions of imported modules (``np.exp``, ``F.softmax``) as ops of that
name, and methods through the specs' method maps; calls of the module's own functions (or ones
nested in this one), specialised to their argument types; the builtins len, float, int, bool, abs,
round, min, max, sum, any, all, sorted, list, isinstance, and range/enumerate/zip/reversed and
dict.items/keys/values where Python iterates; ``.shape``/``.ndim``/``.size`` of a tensor; list
literals, comprehensions and generator expressions; subscripts of lists, strs and dicts;
conditional expressions; assignments, tuple unpacking, ``+=`` and friends, ``xs.append(v)``;
``if``, ``for``, ``while``, ``break``, ``continue``, ``return`` anywhere. Anything else is an
error naming file:line and the construct, with a hint.
"""

from __future__ import annotations

import ast
import re
import math
import string
from pathlib import Path
from typing import Any

from opgen.compiler import einsum, ir, pipeline_intrinsic
from opgen.compiler.casts import DTYPE_CONSTANTS
from opgen.compiler.annotations import parse_annotation
from opgen.compiler.types import BOOL, FLOAT, INT, STR, TupleType
from opgen.compiler.errors import CompileError
from opgen.compiler.scope import ModuleScope, lambda_definition, read_module

BINARY_OPS = {
    ast.Add: "operator.add", ast.Sub: "operator.sub", ast.Mult: "operator.mul", ast.Div: "operator.truediv",
    ast.FloorDiv: "operator.floordiv", ast.Mod: "operator.mod", ast.Pow: "operator.pow",
    ast.MatMult: "operator.matmul", ast.LShift: "operator.lshift", ast.RShift: "operator.rshift",
    ast.BitAnd: "operator.and_", ast.BitOr: "operator.or_", ast.BitXor: "operator.xor",
}
COMPARE_OPS = {
    ast.Lt: "operator.lt", ast.LtE: "operator.le", ast.Gt: "operator.gt", ast.GtE: "operator.ge",
    ast.Eq: "operator.eq", ast.NotEq: "operator.ne",
}
BUILTIN_DTYPES = {"float": "float64", "int": "int64", "bool": "bool"}  # the dtype each builtin type names
# Exceptions a raise statement may name: what the hosts raise for the compiled code's status (emit_cpp.ERROR_KINDS)
RAISABLE = ("ValueError", "TypeError", "IndexError", "KeyError", "RuntimeError", "OverflowError",
            "ZeroDivisionError", "AssertionError", "NotImplementedError")
# One printf-style field of a % format (the part after %): a mapping key, flags, width, precision, a
# length modifier Python ignores, and the conversion.
_PERCENT_FIELD = re.compile(r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?"
                            r"(?:\.(?P<precision>\*|\d*))?[hlL]?(?P<kind>[diouxXeEfFgGcrsa%])")
# What an except clause may name, as the kinds of RAISABLE it catches (Python's hierarchy of them)
CATCHABLE: dict[str, tuple[str, ...]] = {
    **{k: (k,) for k in RAISABLE}, "ArithmeticError": ("OverflowError", "ZeroDivisionError"),
    "LookupError": ("IndexError", "KeyError"), "Exception": RAISABLE, "BaseException": RAISABLE,
}
NO_GRAD_CONTEXTS = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
# torch's in-place methods that store a value into the tensor (t[...] = v) rather than an op's result:
# how many arguments each takes, and what its value may be (ir.SetItem.in_place_value).
_STORING_METHODS = {"fill_": (1, "number"), "zero_": (0, "number"), "copy_": (1, "any")}
# torch's in-place arithmetic methods of one argument: the augmented operator they are.
_OPERATOR_METHODS = {"add_": ast.Add, "sub_": ast.Sub, "mul_": ast.Mult, "div_": ast.Div, "true_divide_": ast.Div,
                     "floor_divide_": ast.FloorDiv, "remainder_": ast.Mod, "pow_": ast.Pow}
SCALAR_TYPES = {int: INT, float: FLOAT, bool: BOOL, str: STR}  # the type a literal default says
UNARY_OPS = {ast.USub: "operator.neg", ast.UAdd: "operator.pos", ast.Invert: "operator.invert"}
# Builtins the compiler implements itself (see ir.Builtin), and those only meaningful where Python iterates.
BUILTINS = {"len", "float", "int", "bool", "abs", "round", "min", "max", "sum", "any", "all", "sorted", "list",
            "isinstance", "dict"}
ITERATORS = {"range", "enumerate", "zip", "reversed"}
# Builtins that consume an iterable: a generator expression may be their only argument.
CONSUMERS = {"min", "max", "sum", "any", "all", "sorted", "list"}
INT64 = (-(2**63), 2**63 - 1)

# Transposes are views in NumPy and torch, and so they are here (no kernel, no copy; the kernels
# that read them take any strides): module function -> (how, its axis parameters in order).
# "swap": torch's, which takes a 0-d tensor as 1-d; "swap_strict": NumPy's, which refuses it.
VIEW_FUNCTIONS = {
    "numpy.swapaxes": ("swap_strict", ("axis1", "axis2")),
    "torch.swapaxes": ("swap", ("axis0", "axis1")),
    "torch.transpose": ("swap", ("dim0", "dim1")),
    "torch.permute": ("permute", ("dims",)),
    "numpy.permute_dims": ("permute", ("axes",)),
    "numpy.matrix_transpose": ("mT", ()),
}
VIEW_METHODS = {"swapaxes", "transpose", "permute"}

# Constants of the numeric modules, used as values (``np.pi * x``): Python floats, as NumPy and
# torch define them (torch.pi is math.pi).
MODULE_CONSTANTS = {
    **{f"{m}.{n}": v for m in ("math", "numpy", "torch") for n, v in
       (("pi", math.pi), ("e", math.e), ("inf", math.inf), ("nan", math.nan))},
    "math.tau": math.tau, "numpy.euler_gamma": 0.5772156649015329,
    "numpy.newaxis": None,
}
# isinstance(x, T): the types a compiled value may be tested against, by the name written.
ISINSTANCE_NAMES = {"int": "int", "float": "float", "bool": "bool", "str": "str", "list": "list", "dict": "dict",
                    "tuple": "tuple", "numpy.ndarray": "tensor", "torch.Tensor": "tensor"}

# Constructs outside the subset: what to call them, and what to do instead.
UNSUPPORTED: dict[type, tuple[str, str]] = {
    ast.With: ("a with statement", "remove it; compiled functions cannot hold resources (with torch.no_grad() "
                                   "and torch.inference_mode() compile: compiled code keeps no autograd graph)"),
    ast.Delete: ("del", "remove it"),
    ast.Global: ("a global statement", "read module constants without declaring them"),
    ast.Nonlocal: ("a nonlocal statement", "pass the value as a parameter and return the new one"),
    ast.AsyncFunctionDef: ("a nested async function", "remove it"),
    ast.ClassDef: ("a class definition", "remove it"),
    ast.Import: ("an import inside the function", "import at module level"),
    ast.ImportFrom: ("an import inside the function", "import at module level"),
    ast.Match: ("a match statement", "use if/else"),
    ast.AsyncFor: ("async for", "use a plain for loop"),
    ast.AsyncWith: ("async with", "remove it"),
    ast.Lambda: ("a lambda here", "bind it to a name and call that (f = lambda x: ...; f(v)), write the expression "
                                  "inline, or define a function with def"),
    ast.GeneratorExp: ("a generator expression here", "use a list comprehension [...], or pass it to sum(), "
                                                      "any(), all(), min(), max(), sorted() or list()"),
    ast.SetComp: ("a set comprehension", "use a list comprehension"),
    ast.Set: ("a set literal", "use a list"),
    ast.NamedExpr: ("an assignment expression (:=)", "assign in its own statement"),
    ast.Await: ("await", "compiled functions are synchronous"),
    ast.Yield: ("yield", "return a list"),
    ast.YieldFrom: ("yield from", "return a list"),
    ast.Starred: ("a starred expression", "pass arguments one by one"),
    ast.Slice: ("slicing", "index one element at a time, or use a comprehension"),
}


def _format_op(line: int, value: ir.Expr, spec: str, source: str) -> ir.Op:
    """format(value, spec) with a literal spec: an f-string field, str(value) (the empty spec)."""
    return ir.Op(line, "builtins.format", [value, ir.Const(line, spec)], {}, source)


def _concatenate(line: int, pieces: list[ir.Expr], source: str) -> ir.Expr:
    """str pieces joined left to right with str's ``+`` (an f-string, a run-time format spec)."""
    if not pieces:
        return ir.Const(line, "")
    out = pieces[0]
    for piece in pieces[1:]:
        out = ir.Op(line, "operator.add", [out, piece], {}, source)
    return out


def trace_file(path: Path, function: str, dtypes: dict[str, str] | None = None) -> tuple[ir.Function, ModuleScope]:
    """``dtypes``: parameter name -> the dtype an array annotation without one stands for (``--dtype``)."""
    scope = read_module(path)
    fn = scope.functions.get(function)
    if fn is None:
        known = ", ".join(sorted(scope.functions)) or "none"
        raise CompileError(f"{path} has no module-level function {function!r}", hint=f"functions in it: {known}")
    names = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args]}
    unknown = sorted(set(dtypes or {}) - names)
    if unknown:
        raise CompileError(f"--dtype names {', '.join(unknown)}, not a parameter of {function}",
                           where=scope.where(fn), hint=f"its parameters: {', '.join(sorted(names)) or 'none'}")
    return Tracer(scope, fn, dtypes=dtypes).function(), scope


def retrace(fn: ir.Function) -> ir.Function:
    """A fresh, untyped trace of a compiled (not helper) function, for typing it again."""
    return Tracer(fn.scope, fn.scope.functions[fn.name], dtypes=fn.dtype_overrides).function()


def trace_helper(scope: ModuleScope, fn: ast.FunctionDef, enclosing: frozenset[str] = frozenset(),
                 visible: dict[str, ast.FunctionDef] | None = None) -> ir.Function:
    """A function the compiled one calls. Python does not enforce annotations, so a helper's types
    come from its call's arguments (type propagation specialises it per call signature); its
    annotations, if any, are not read."""
    return Tracer(scope, fn, helper=True, enclosing=enclosing, visible=visible).function()


# finfo/iinfo: their attributes of a dtype known when the function compiles are constants (propagate.type_info)
TYPE_INFO = {"numpy.finfo", "numpy.iinfo", "torch.finfo", "torch.iinfo"}

def _leaving_finally(stmts: list[ast.stmt], in_loop: bool = False) -> list[ast.stmt]:
    """The return statements of a finally clause, and its break/continue statements that leave it (not an
    inner loop's)."""
    found: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.Return) or (isinstance(s, (ast.Break, ast.Continue)) and not in_loop):
            found.append(s)
        elif isinstance(s, (ast.For, ast.While)):
            found += _leaving_finally(s.body, True) + _leaving_finally(s.orelse, in_loop)
        elif isinstance(s, (ast.If, ast.With, ast.Try)):
            for part in ("body", "orelse", "finalbody"):
                found += _leaving_finally(getattr(s, part, []), in_loop)
            for h in getattr(s, "handlers", []):
                found += _leaving_finally(h.body, in_loop)
    return found


class Tracer:
    def __init__(self, scope: ModuleScope, fn: ast.FunctionDef, *, helper: bool = False,
                 enclosing: frozenset[str] = frozenset(), visible: dict[str, ast.FunctionDef] | None = None,
                 dtypes: dict[str, str] | None = None):
        self.scope = scope
        self.dtypes = dict(dtypes or {})
        self.fn = fn
        self.helper = helper
        self.enclosing = enclosing  # locals of the function this one is nested in (closures are refused)
        self.locals = _assigned_names(fn)
        self.nested = _nested_functions(fn)
        for name in sorted(set(self.nested) & self.locals):  # f = lambda ...: ... and f = something else
            raise self.error(self.nested[name], f"{name} is bound to a function and to another value in {fn.name}; "
                                                "opgen compile takes a name bound to a lambda or a def as that "
                                                "function, bound once", f"give the other value another name than {name}")
        self.visible = dict(visible or {})  # functions nested in the functions around this one
        self.comprehension_vars: list[str] = []  # innermost last
        self.loops = 0  # loops around the statement being traced (break/continue need one)

    # ------------------------------------------------------------------ errors

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> CompileError:
        return CompileError(message, where=self.scope.where(node), hint=hint)

    def unsupported(self, node: ast.AST, what: str | None = None, hint: str | None = None) -> CompileError:
        name, default_hint = UNSUPPORTED.get(type(node), (type(node).__name__, "rewrite it with the supported subset"))
        return self.error(node, f"{what or name} is not supported by opgen compile", hint or default_hint)

    # ------------------------------------------------------------------ the function

    def function(self) -> ir.Function:
        fn = self.fn
        others = [d for d in fn.decorator_list if not self.no_grad_context(d)]  # @torch.no_grad() changes nothing here
        if others:
            raise self.error(others[0], "a decorated function is not supported by opgen compile",
                             "compile the undecorated function (@torch.no_grad() and @torch.inference_mode() are "
                             "accepted)")
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs:
            raise self.error(fn, "*args, **kwargs and keyword-only parameters are not supported by opgen compile",
                             "declare every parameter positionally")
        positional = [*a.posonlyargs, *a.args]
        defaults: list[Any] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        params = []
        for arg, default in zip(positional, defaults):
            none_default = isinstance(default, ast.Constant) and default.value is None
            if not self.helper and none_default and arg.annotation is None:
                # (a helper's None default may stand for a library's: np.sum(x, axis=axis) with axis=None)
                raise self.error(default, f"parameter {arg.arg!r} defaults to None and has no annotation, so "
                                          "nothing says what it is when it is not None",
                                 f"annotate it, e.g. {arg.arg}: Optional[np.ndarray] = None")
            if self.helper:
                param = ir.Param(arg.arg, None, None)
            elif arg.annotation is None and isinstance(default, ast.Constant) \
                    and type(default.value) in (int, float, bool, str):
                # eps=1e-6 with no annotation: a literal default says the type (the type checkers' inference)
                param = ir.Param(arg.arg, SCALAR_TYPES[type(default.value)], None)
            else:
                ann = parse_annotation(self.scope, arg.annotation, f"parameter {arg.arg!r}", arg.lineno,
                                       dtype=self.dtypes.get(arg.arg), optional=True)
                if isinstance(ann.type, TupleType):
                    raise self.error(arg, f"parameter {arg.arg!r}: a tuple parameter is not supported by opgen compile",
                                     "pass a list (list[int]) or one parameter per item")
                # `x: np.ndarray = None` admits None as Optional[np.ndarray] does (PEP 484's implicit Optional)
                param = ir.Param(arg.arg, ann.type, ann.flavor, dtype_assumed=ann.assumed,
                                 optional=ann.optional or none_default)
            if default is not None:
                try:
                    param.default, param.has_default = ast.literal_eval(default), True
                except ValueError:
                    raise self.error(default, f"the default of {arg.arg!r} is not a literal constant",
                                     "use a literal default or none") from None
            params.append(param)
        open_dtype = False
        if self.helper:
            returns, flavor = None, None
        else:
            ret = parse_annotation(self.scope, fn.returns, f"the return value of {fn.name}", fn.lineno)
            returns, flavor, open_dtype = ret.type, ret.flavor, ret.assumed
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring
        lines = self.scope.source.splitlines()
        return ir.Function(fn.name, params, returns, flavor, self.block(body), str(self.scope.path),
                           fn.lineno, fn.end_lineno or fn.lineno, lines, scope=self.scope, nested=self.nested,
                           return_dtype_open=not self.helper and open_dtype, dtype_overrides=dict(self.dtypes))

    # ------------------------------------------------------------------ statements

    def no_grad_context(self, e: ast.expr) -> bool:
        """torch.no_grad(), torch.inference_mode() (called, or as a bare decorator): nothing to compiled code."""
        name = self.scope.dotted(e.func if isinstance(e, ast.Call) and not e.args and not e.keywords else e)
        return name in NO_GRAD_CONTEXTS

    def raise_statement(self, s: ast.Raise) -> ir.Raise:
        """``raise ValueError("...")``, ``raise KeyError(key)``, ``raise TypeError`` (no message): the exception
        of a builtin class with one message (any value: its str() is the message, as Python's str(exc) is)."""
        exc = s.exc
        if exc is None:
            raise self.error(s, "a bare raise (re-raising) is not supported by opgen compile",
                             "compiled code has no try/except: raise a new exception")
        if s.cause is not None and not (isinstance(s.cause, ast.Constant) and s.cause.value is None):
            raise self.error(s, "raise ... from an exception is not supported by opgen compile", "raise it alone")
        call = exc if isinstance(exc, ast.Call) else None
        name = self.builtin_name(call.func if call else exc)
        if name not in RAISABLE:
            raise self.error(s, f"raising {ast.unparse(call.func if call else exc)} is not supported by opgen compile",
                             f"raise one of {', '.join(RAISABLE)}")
        if call is not None and (call.keywords or len(call.args) > 1):
            raise self.error(s, f"raise {name}(...) with other than one message is not supported by opgen compile",
                             "format the message into one str: f\"...\"")
        if call is None or not call.args:
            message: ir.Expr = ir.Const(s.lineno, "")
        else:
            message = self.expr(call.args[0])
        return ir.Raise(s.lineno, name, message)

    def block(self, stmts: list[ast.stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def print_statement(self, call: ast.Call) -> ir.Print:
        """print(*values, sep=' ', end='\\n'): sep.join([str(v) for each value]) + end, as one text."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            raise self.error(call, "print(*args) is not supported by opgen compile", "pass the values one by one")
        options = {k.arg: k.value for k in call.keywords}
        if set(options) - {"sep", "end", "flush", "file"}:
            raise self.error(call, f"print() with {sorted(set(options) - {'sep', 'end', 'flush', 'file'})[0]}= is "
                                   "not supported by opgen compile", "leave it out")
        none = lambda v: v is None or (isinstance(v, ast.Constant) and v.value is None)
        stream = "stdout" if none(options.get("file")) else \
            {"sys.stdout": "stdout", "sys.stderr": "stderr"}.get(self.scope.dotted(options["file"]) or "")
        if stream is None:
            raise self.error(call, f"print(file={ast.unparse(options['file'])}) is not supported by opgen compile "
                                   "(compiled code writes to its process's standard output or standard error)",
                             "print to sys.stdout or sys.stderr (import sys), or return the text")
        sep = ast.Constant(" ") if none(options.get("sep")) else options["sep"]
        end = ast.Constant("\n") if none(options.get("end")) else options["end"]
        parts = ast.List([ast.Call(ast.Name("str", ast.Load()), [a], []) for a in call.args], ast.Load())
        text = ast.BinOp(ast.Call(ast.Attribute(sep, "join", ast.Load()), [parts], []), ast.Add(), end) \
            if call.args else ast.BinOp(ast.Constant(""), ast.Add(), end)  # print(): end alone (a str)
        _located(text, call)
        return ir.Print(call.lineno, self.expr(text), stream)

    def try_statement(self, s: ast.Try) -> ir.Try:
        for leaving in _leaving_finally(s.finalbody):
            word = type(leaving).__name__.lower()
            raise self.error(leaving, f"{word} in a finally clause is not supported by opgen compile (it would "
                                      "discard the error or the return value the try is leaving with)",
                             f"move the {word} after the try statement")
        handlers = []
        for h in s.handlers:
            names = h.type.elts if isinstance(h.type, ast.Tuple) else [] if h.type is None else [h.type]
            kinds: list[str] = []
            for n in names:
                written = n.id if isinstance(n, ast.Name) and n.id not in self.scope.aliases else ast.unparse(n)
                if written not in CATCHABLE:
                    raise self.error(n, f"except {written} is not supported by opgen compile",
                                     f"catch one of {', '.join(CATCHABLE)}")
                kinds += [k for k in CATCHABLE[written] if k not in kinds]
            if h.name is not None and any(isinstance(x, ast.Name) and x.id == h.name
                                          for stmt in h.body for x in ast.walk(stmt)):
                raise self.error(h, f"reading the caught exception ({h.name}) is not supported by opgen compile",
                                 f"handle it without reading it: `except {ast.unparse(h.type)}:`")
            handlers.append(ir.Handler(h.lineno, tuple(kinds) if names else CATCHABLE["Exception"],
                                       self.block(h.body)))
        return ir.Try(s.lineno, self.block(s.body), handlers, self.block(s.orelse), self.block(s.finalbody))

    def in_place_method(self, s: ast.stmt, call: ast.Call) -> ir.Stmt:
        """torch's in-place methods as statements: ``t.add_(v)`` is ``t += v`` (the out-of-place method's
        result written into t's memory, under torch's casting rule), ``t.fill_(v)`` / ``t.zero_()`` /
        ``t.copy_(src)`` are ``t[...] = v`` (cast to t's dtype, broadcast to its shape). Either way type
        propagation compiles the write as a rebinding where no other name can tell, and refuses it
        otherwise (see opgen.compiler.aliasing)."""
        owner, method, written = call.func.value, call.func.attr, ast.unparse(call)
        if not isinstance(owner, ast.Name):
            raise self.error(s, f"{written}: an in-place method of an expression is not supported by opgen compile",
                             f"call it on a variable: t = ...; t.{method}(...)")
        if method in _STORING_METHODS:
            wanted, kind = _STORING_METHODS[method]
            if len(call.args) != wanted or call.keywords:
                raise self.error(s, f"{written}: {method}() takes {wanted} positional argument{'s' * (wanted != 1)}")
            value = self.expr(call.args[0]) if wanted else ir.Const(s.lineno, False)  # False: 0 in every dtype
            return ir.SetItem(s.lineno, owner.id, None, value, [ir.IndexPart("ellipsis")], augmented=written,
                              in_place_value=kind)
        if method in _OPERATOR_METHODS and len(call.args) == 1 and not call.keywords:  # t.mul_(2.0): t *= 2.0
            value = ir.Op(s.lineno, BINARY_OPS[_OPERATOR_METHODS[method]],
                          [ir.Var(s.lineno, owner.id), self.expr(call.args[0])], {}, written)
            return ir.Assign(s.lineno, owner.id, value, inplace=True)
        out_of_place = ast.copy_location(ast.Call(ast.Attribute(owner, method[:-1], ast.Load()), call.args,
                                                  call.keywords), call)
        value = self.expr(out_of_place)
        if hasattr(value, "source"):
            value.source = written  # messages name the call as written
        return ir.Assign(s.lineno, owner.id, value, inplace=True)

    def stmt(self, s: ast.stmt) -> list[ir.Stmt]:
        if lambda_definition(s) is not None:
            return []  # `f = lambda x: ...`: a nested function, traced where it is called (see call())
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.error(s, "chained assignment (a = b = ...) is not supported by opgen compile",
                                 "assign one name per statement")
            return [self.assignment(s, s.targets[0], s.value)]
        if isinstance(s, ast.AnnAssign):
            if s.value is None:
                raise self.error(s, "a declaration without a value is not supported by opgen compile",
                                 "give it a value: `xs: list[int] = []`")
            declared = parse_annotation(self.scope, s.annotation, f"variable {ast.unparse(s.target)!r}", s.lineno).type
            return [ir.Assign(s.lineno, self.target(s.target), self.expr(s.value), declared)]
        if isinstance(s, ast.AugAssign):
            op = BINARY_OPS[type(s.op)]
            if isinstance(s.target, ast.Subscript):  # d[k] += 1: d[k] = d[k] + 1, the key read once each way
                name, index, parts = self.item_target(s.target)
                current = ir.Index(s.lineno, ir.Var(s.lineno, name), index) if parts is None else \
                    ir.Subscript(s.lineno, ir.Var(s.lineno, name), parts)
                value = ir.Op(s.lineno, op, [current, self.expr(s.value)], {}, ast.unparse(s))
                return [ir.SetItem(s.lineno, name, index, value, parts)]
            name = self.target(s.target)
            value = ir.Op(s.lineno, op, [ir.Var(s.lineno, name), self.expr(s.value)], {}, ast.unparse(s))
            return [ir.Assign(s.lineno, name, value, inplace=True)]
        if isinstance(s, ast.Expr):
            call = s.value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                    and call.func.attr in ("append", "extend"):
                owner, method = call.func.value, call.func.attr
                if not isinstance(owner, ast.Name) or owner.id not in self.locals:
                    raise self.error(s, f"{ast.unparse(call.func)}() is not supported by opgen compile",
                                     f"{method} only to a list variable of this function")
                if len(call.args) != 1 or call.keywords:
                    raise self.error(s, f"{method} takes exactly one argument")
                return [ir.Append(s.lineno, owner.id, self.expr(call.args[0]), extend=method == "extend")]
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr.endswith("_") \
                    and not call.func.attr.startswith("_"):
                return [self.in_place_method(s, call)]
            if isinstance(call, ast.Constant) and isinstance(call.value, str):
                return []  # a string used as a comment
            if isinstance(call, ast.Call) and self.builtin_name(call.func) == "print":
                return [self.print_statement(call)]
            raise self.error(s, "an expression statement (its value is thrown away) is not supported by opgen compile",
                             "assign the value to a name, or remove the statement")
        if isinstance(s, ast.If):
            return [ir.If(s.lineno, self.expr(s.test), self.block(s.body), self.block(s.orelse))]
        if isinstance(s, ast.Raise):
            return [self.raise_statement(s)]
        if isinstance(s, ast.Try):
            return [self.try_statement(s)]
        if isinstance(s, ast.Assert):
            # assert test, message: AssertionError(message) where the test is false (message evaluated then only)
            message = self.expr(s.msg) if s.msg is not None else ir.Const(s.lineno, "")
            raised = ir.Raise(s.lineno, "AssertionError", message)
            return [ir.If(s.lineno, ir.Builtin(s.lineno, "not", [self.expr(s.test)]), [raised], [])]
        if isinstance(s, ast.With) and all(self.no_grad_context(item.context_expr) and item.optional_vars is None
                                            for item in s.items):
            return self.block(s.body)  # with torch.no_grad(): compiled code keeps no autograd graph
        if isinstance(s, ast.For):
            if s.orelse:
                raise self.error(s, "for ... else is not supported by opgen compile",
                                 "set a flag before `break` and test it after the loop")
            target = self.loop_target(s.target)
            iterable = self.iterable(s.iter)
            self.loops += 1
            try:
                body = self.block(s.body)
            finally:
                self.loops -= 1
            return [ir.For(s.lineno, target, iterable, body)]
        if isinstance(s, ast.While):
            if s.orelse:
                raise self.error(s, "while ... else is not supported by opgen compile",
                                 "set a flag before `break` and test it after the loop")
            cond = self.expr(s.test)
            self.loops += 1
            try:
                body = self.block(s.body)
            finally:
                self.loops -= 1
            return [ir.While(s.lineno, cond, body)]
        if isinstance(s, (ast.Break, ast.Continue)):
            word = "break" if isinstance(s, ast.Break) else "continue"
            if not self.loops:
                raise self.error(s, f"'{word}' outside a loop (Python's SyntaxError)", "remove it")
            return [ir.Break(s.lineno) if isinstance(s, ast.Break) else ir.Continue(s.lineno)]
        if isinstance(s, ast.Return):
            if s.value is None:
                raise self.error(s, "return without a value is not supported by opgen compile",
                                 "return the function's result")
            return [ir.Return(s.lineno, self.expr(s.value, tuple_ok=True))]
        if isinstance(s, ast.FunctionDef):
            return []  # a nested function: traced where it is called (see call())
        if isinstance(s, ast.Pass):
            return []
        raise self.unsupported(s)

    def assignment(self, s: ast.stmt, target: ast.expr, value: ast.expr) -> ir.Stmt:
        if isinstance(target, (ast.Tuple, ast.List)):
            return ir.Unpack(s.lineno, self.loop_target(target), self.expr(value, tuple_ok=True))
        if isinstance(target, ast.Subscript):
            # Python evaluates the value before the target's subscript.
            value_ir = self.expr(value)
            name, index, parts = self.item_target(target)
            return ir.SetItem(s.lineno, name, index, value_ir, parts)
        return ir.Assign(s.lineno, self.target(target), self.expr(value))

    def item_target(self, t: ast.Subscript) -> tuple[str, ir.Expr | None, list[ir.IndexPart] | None]:
        """``xs[i]``, ``d[k]`` or ``a[mask]`` as an assignment's target: a local variable and one index, or
        (``a[:, :k]``, ``a[..., 0]``) the parts of a slice or tuple index, which only an array takes (type
        propagation says which the variable is)."""
        if not isinstance(t.value, ast.Name) or t.value.id not in self.locals:
            raise self.error(t, f"assigning into {ast.unparse(t.value)} is not supported by opgen compile",
                             "assign into a list, dict or array variable of this function (copy a parameter "
                             "first: out = list(xs), y = x.copy())")
        items = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
        if isinstance(t.slice, ast.Tuple) or any(isinstance(i, ast.Slice) or _is_const(i, None) or _is_const(i, ...)
                                                 for i in items):
            return t.value.id, None, [self.index_part(i) for i in items]
        return t.value.id, self.expr(t.slice), None

    def target(self, t: ast.expr) -> str:
        if isinstance(t, ast.Name):
            return t.id
        if isinstance(t, ast.Subscript):
            raise self.error(t, f"assigning into {ast.unparse(t)} here is not supported by opgen compile",
                             "assign into an element in its own statement: xs[i] = v")
        raise self.error(t, f"assigning to {ast.unparse(t)} is not supported by opgen compile", "assign to a plain name")

    def loop_target(self, t: ast.expr) -> ir.Target:
        """A for loop's, comprehension's or unpacking's target: a name or a (nested) tuple of names."""
        if isinstance(t, (ast.Tuple, ast.List)):
            if any(isinstance(x, ast.Starred) for x in t.elts):
                raise self.error(t, "a starred target (a, *rest = ...) is not supported by opgen compile",
                                 "index the list instead")
            return tuple(self.loop_target(x) for x in t.elts)
        return self.target(t)

    # ------------------------------------------------------------------ expressions

    def expr(self, e: ast.expr, *, tuple_ok: bool = False) -> ir.Expr:
        line = e.lineno
        if isinstance(e, ast.Tuple):
            if not tuple_ok:
                raise self.error(e, "a tuple value here is not supported by opgen compile",
                                 "return or unpack it (a, b = ...), or use a list")
            return ir.TupleLit(line, [self.expr(x) for x in e.elts])
        if isinstance(e, ast.Constant):
            return self.constant(e, e.value)
        if isinstance(e, ast.UnaryOp):
            if isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
                    and type(e.operand.value) in (int, float):
                return self.constant(e, -e.operand.value)
            if isinstance(e.op, ast.Not):
                return ir.Builtin(line, "not", [self.expr(e.operand)])
            return ir.Op(line, UNARY_OPS[type(e.op)], [self.expr(e.operand)], {}, ast.unparse(e))
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mod) and isinstance(e.left, ast.Constant) \
                and isinstance(e.left.value, str):
            return self.f_string(self.percent_format(e, e.left.value))
        if isinstance(e, ast.BinOp):
            return ir.Op(line, BINARY_OPS[type(e.op)], [self.expr(e.left), self.expr(e.right)], {}, ast.unparse(e))
        if isinstance(e, ast.BoolOp):
            return ir.BoolOp(line, "and" if isinstance(e.op, ast.And) else "or", [self.expr(v) for v in e.values])
        if isinstance(e, ast.Compare):
            return self.compare(e)
        if isinstance(e, ast.IfExp):
            return ir.IfExp(line, self.expr(e.test), self.expr(e.body), self.expr(e.orelse))
        if isinstance(e, ast.Name):
            return self.name(e)
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.ListComp):
            return self.list_comp(e, e.generators, e.elt)
        if isinstance(e, ast.List):
            return ir.ListLit(line, [self.expr(x) for x in e.elts])
        if isinstance(e, ast.Dict):
            if any(k is None for k in e.keys):
                raise self.error(e, "** unpacking in a dict literal is not supported by opgen compile",
                                 "copy the dict with a comprehension, then assign the extra keys")
            return ir.DictLit(line, [self.expr(k) for k in e.keys], [self.expr(v) for v in e.values])
        if isinstance(e, ast.DictComp):
            return self.list_comp(e, e.generators, e.value, key=e.key)
        if isinstance(e, ast.Attribute):
            return self.attribute(e)
        if isinstance(e, ast.JoinedStr):
            return self.f_string(e)
        raise self.unsupported(e)

    def f_string(self, e: ast.JoinedStr) -> ir.Expr:
        """``f"{name}: {score:.3f}"`` is what Python compiles it to: each replacement field
        format(value, spec) (``builtins.format``'s kernels), the pieces concatenated left to right
        with str's ``+``."""
        pieces = [self.constant(e, part.value) if isinstance(part, ast.Constant) else self.replacement_field(e, part)
                  for part in e.values]
        return _concatenate(e.lineno, pieces, ast.unparse(e))

    def format_method(self, e: ast.Call, template: str) -> ast.JoinedStr:
        """``"{}: {:.2f}".format(name, score)`` of a literal template is the f-string ``f"{name}: {score:.2f}"``:
        str.format formats each field with format(value, spec) after its conversion, as an f-string does.
        Fields by position (``{}``, ``{0}``) or keyword (``{name}``); attribute and item lookups in a field
        and specs with nested fields are refused, and so is what Python refuses (with its exception)."""
        if any(isinstance(a, ast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
            raise self.error(e, "str.format(*args) and (**kwargs) are not supported by opgen compile",
                             "pass the values one by one")
        keywords = {k.arg: k.value for k in e.keywords}
        try:
            fields = list(string.Formatter().parse(template))
        except ValueError as exc:
            raise self.error(e, f"{ast.unparse(e.func)}: {exc} (Python raises ValueError)") from None
        values: list[ast.expr] = []
        auto, manual = 0, False
        for literal, name, spec, conversion in fields:
            if literal:
                values.append(ast.Constant(literal))
            if name is None:
                continue
            if name == "":
                if manual:
                    raise self.error(e, "cannot switch from manual field specification to automatic field "
                                        "numbering (Python raises ValueError)", "number every field, or none")
                name, auto = str(auto), auto + 1
            elif name.isdigit():
                if auto:
                    raise self.error(e, "cannot switch from automatic field numbering to manual field "
                                        "specification (Python raises ValueError)", "number every field, or none")
                manual = True
            if name.isdigit():
                if int(name) >= len(e.args):
                    raise self.error(e, f"Replacement index {name} out of range for positional args tuple (Python "
                                        "raises IndexError)", "pass a value for every field")
                value = e.args[int(name)]
            elif name in keywords:
                value = keywords[name]
            elif name.isidentifier():
                raise self.error(e, f"str.format has no value for the field {{{name}}} (Python raises KeyError)",
                                 f"pass {name}=...")
            else:
                raise self.error(e, f"the field {{{name}}}: attribute and item lookups in str.format are not "
                                    "supported by opgen compile", "look the value up first and pass it")
            if spec and "{" in spec:
                raise self.error(e, "a str.format spec with nested fields is not supported by opgen compile",
                                 "use an f-string: f\"{x:>{width}}\"")
            values.append(ast.FormattedValue(value, ord(conversion) if conversion else -1,
                                             ast.JoinedStr([ast.Constant(spec)]) if spec else None))
        return ast.copy_location(ast.JoinedStr(values), e)

    def percent_format(self, e: ast.BinOp, template: str) -> ast.JoinedStr:
        """``"%s: %.2f" % (name, score)`` of a literal template as the f-string it equals: %s, %r and %a are
        the value's str(), repr() and ascii() (then aligned: `%-8s` left, `%8s` right), %d/%i/%u int() of it
        formatted as 'd' (Python's %d truncates a float), %f %F %e %E %g %G %x %X %o the format() of that
        type with the same flags, width and precision; %% is %. The right side is a tuple literal (one
        value each) or one value. Mapping keys (%(name)s), * widths and %c are refused."""
        values = e.right.elts if isinstance(e.right, ast.Tuple) else [e.right]
        if any(isinstance(v, ast.Starred) for v in values):
            raise self.error(e, "% formatting of *args is not supported by opgen compile", "pass the values one by one")
        parts: list[ast.expr] = []
        taken, i = 0, 0
        literal = ""
        while i < len(template):
            c = template[i]
            if c != "%":
                literal += c
                i += 1
                continue
            m = _PERCENT_FIELD.match(template, i)
            if m is None:
                raise self.error(e, f"% format {template!r}: an incomplete or unsupported field at {i} (Python "
                                    "raises ValueError for the incomplete ones)", "use an f-string")
            i = m.end()
            flags, width, precision, kind = m.group("flags"), m.group("width"), m.group("precision"), m.group("kind")
            if kind == "%":
                literal += "%"
                continue
            if m.group("key") is not None or "*" in (width or "") or "*" in (precision or "") or kind == "c":
                raise self.error(e, f"the % field {m.group(0)!r} (a mapping key, a * width or %c) is not "
                                    "supported by opgen compile", "use an f-string")
            if taken == len(values):
                raise self.error(e, "not enough arguments for format string (Python raises TypeError)",
                                 "pass a value for every field")
            value = values[taken]
            taken += 1
            if literal:
                parts.append(ast.Constant(literal))
                literal = ""
            spec = ("<" if "-" in flags else "") + ("+" if "+" in flags else " " if " " in flags else "") + \
                ("#" if "#" in flags else "")
            if kind in "sra":
                align = "<" if "-" in flags else ">"
                spec = (align + (width or "")) if width else ""
                spec += ("." + (precision or "0")) if precision is not None else ""
                parts.append(ast.FormattedValue(value, ord(kind), ast.JoinedStr([ast.Constant(spec)]) if spec else None))
                continue
            zero = "0" if "0" in flags and "-" not in flags else ""
            spec += zero + (width or "") + (("." + (precision or "0")) if precision is not None else "")
            if kind in "diu":  # %d of a float is int() of it (Python's %d truncates); of a str, TypeError
                value, kind = ast.Call(ast.Name("int", ast.Load()), [value], []), "d"
                value.opgen_numbers_only = True
            parts.append(ast.FormattedValue(value, -1, ast.JoinedStr([ast.Constant(spec + kind)])))
        if taken != len(values):
            raise self.error(e, "not all arguments converted during string formatting (Python raises TypeError)",
                             "give as many values as the template has fields")
        if literal or not parts:
            parts.append(ast.Constant(literal))
        out = ast.JoinedStr(parts)
        _located(out, e)
        return out

    def replacement_field(self, e: ast.JoinedStr, part: ast.expr) -> ir.Expr:
        """One ``{value!conversion:spec}``: the conversion first (``!s`` str(), ``!r`` repr(), ``!a``
        ascii()), then format(converted, spec). A spec holding replacement fields of its own
        (``{x:>{width}}``, ``{x:.{digits}f}``) is built at run time as Python builds it, each nested
        field formatted and the pieces concatenated, so a spec Python refuses is the format kernel's
        ValueError. Python's parser allows one level of nesting and refuses a deeper one
        ("f-string: expressions nested too deeply") before opgen compile sees the source."""
        assert isinstance(part, ast.FormattedValue)
        value = self.expr(part.value)
        source = ast.unparse(part.value)
        if part.conversion == ord("s"):
            value = _format_op(e.lineno, value, "", f"str({source})")
        elif part.conversion in (ord("r"), ord("a")):
            builtin = "repr" if part.conversion == ord("r") else "ascii"
            value = ir.Op(e.lineno, f"builtins.{builtin}", [value], {}, f"{builtin}({source})")
        if part.format_spec is None:
            return _format_op(e.lineno, value, "", f"format({source}, '')")
        assert isinstance(part.format_spec, ast.JoinedStr)
        spec_parts = part.format_spec.values
        if all(isinstance(v, ast.Constant) for v in spec_parts):
            spec = "".join(v.value for v in spec_parts)  # type: ignore[attr-defined]
            return _format_op(e.lineno, value, spec, f"format({source}, {spec!r})")
        spec_pieces = [self.constant(e, v.value) if isinstance(v, ast.Constant) else self.replacement_field(e, v)
                       for v in spec_parts]
        spec_expr = _concatenate(e.lineno, spec_pieces, ast.unparse(e))
        return ir.Op(e.lineno, "builtins.format", [value, spec_expr], {}, ast.unparse(e))

    def compare(self, e: ast.Compare) -> ir.Expr:
        """``a < b < c`` is ``a < b and b < c`` with b evaluated once in Python; compiled ops are
        pure, so evaluating it twice gives the same values (and the same first error)."""
        parts = []
        left = e.left
        for op_node, right in zip(e.ops, e.comparators):
            parts.append(self.comparison(e, op_node, left, right))
            left = right
        return parts[0] if len(parts) == 1 else ir.BoolOp(e.lineno, "and", parts)

    def comparison(self, e: ast.Compare, op_node: ast.cmpop, left: ast.expr, right: ast.expr) -> ir.Expr:
        if isinstance(op_node, (ast.In, ast.NotIn)):
            found = ir.Builtin(e.lineno, "in", [self.expr(left), self.expr(right)])
            return ir.Builtin(e.lineno, "not", [found]) if isinstance(op_node, ast.NotIn) else found
        op = COMPARE_OPS.get(type(op_node))
        if op is None and (_is_const(right, None) or _is_const(left, None)) and not (
                _is_const(right, None) and _is_const(left, None)):
            # `mask is None`: a compiled value never is (the annotations admit no None), so the test folds
            # once the value is typed, as isinstance does.
            value = ir.Builtin(e.lineno, "is_none", [self.expr(left if _is_const(right, None) else right)])
            return ir.Builtin(e.lineno, "not", [value]) if isinstance(op_node, ast.IsNot) else value
        if op is None:
            word = "is" if isinstance(op_node, ast.Is) else "is not"
            raise self.error(e, f"the `{word}` operator is not supported by opgen compile (compiled values are "
                                "never None)", "compare values with == or !=")
        return ir.Op(e.lineno, op, [self.expr(left), self.expr(right)], {}, ast.unparse(e))

    def attribute(self, e: ast.Attribute) -> ir.Expr:
        if isinstance(e.value, ast.Call) and self.scope.dotted(e.value.func) in TYPE_INFO \
                and len(e.value.args) == 1 and not e.value.keywords:
            # torch.finfo(x.dtype).min, np.iinfo(np.int64).max: known when the function compiles
            return ir.Builtin(e.lineno, "type_info", [self.expr(e.value.args[0]), ir.Const(e.lineno, e.attr),
                                                      ir.Const(e.lineno, self.scope.dotted(e.value.func))])
        dotted = self.scope.dotted(e)
        if dotted is not None:
            if dotted in MODULE_CONSTANTS and MODULE_CONSTANTS[dotted] is not None:
                return ir.Const(e.lineno, MODULE_CONSTANTS[dotted])
            if dotted in DTYPE_CONSTANTS:  # x.astype(np.float32): read when the cast compiles
                return ir.DTypeConst(e.lineno, DTYPE_CONSTANTS[dotted], ast.unparse(e), dotted.split(".")[0])
            raise self.error(e, f"{ast.unparse(e)} used as a value is not supported by opgen compile",
                             "call it, or use a literal")
        if e.attr in ("shape", "ndim", "size"):  # of a tensor: no op, the compiler reads the array's header
            return ir.Builtin(e.lineno, e.attr, [self.expr(e.value)])
        if e.attr in ("T", "mT"):  # of a tensor: a view (NumPy's and torch's alike)
            return ir.Builtin(e.lineno, "axes_view", [ir.Const(e.lineno, e.attr), self.expr(e.value)])
        # x.T: an attribute some spec may declare (methods: [{name: ndarray.T, attribute: true}])
        return ir.MethodCall(e.lineno, "", [], {}, ast.unparse(e), method=e.attr, receiver=self.expr(e.value),
                             attribute=True)

    def constant(self, node: ast.AST, value: Any) -> ir.Const:
        if type(value) is int and not INT64[0] <= value <= INT64[1]:
            raise self.error(node, f"the integer {value} does not fit in int64", "native ints are 64-bit")
        if type(value) not in (int, float, str, bool):
            what = "None" if value is None else type(value).__name__
            raise self.error(node, f"a {what} constant is not supported by opgen compile",
                             "use an int, float, str or bool")
        return ir.Const(node.lineno, value)

    def name(self, e: ast.Name) -> ir.Expr:
        if e.id in self.comprehension_vars or e.id in self.locals:
            return ir.Var(e.lineno, e.id)
        if e.id in self.enclosing:
            raise self.error(e, f"{e.id} belongs to the enclosing function; a nested function reading it (a "
                                "closure) is not supported by opgen compile", f"pass {e.id} as a parameter")
        c = self.scope.constants.get(e.id)
        if c is not None:
            return self.module_constant(e, c.name, c.value)
        if e.id in self.nested or e.id in self.visible or e.id in self.scope.functions:
            raise self.error(e, f"the function {e.id} used as a value is not supported by opgen compile",
                             "call it")
        if e.id in self.scope.other_bindings:
            line, why = self.scope.other_bindings[e.id]
            raise self.error(e, f"{e.id} (module level, line {line}) is {why}; the compiler reads only literal "
                                "module constants", "make it a literal constant, or pass it as a parameter")
        if e.id in self.scope.aliases:
            raise self.error(e, f"the module {e.id} used as a value is not supported by opgen compile",
                             "call one of its functions")
        if e.id in BUILTIN_DTYPES:  # np.zeros(n, dtype=float), x.astype(int): NumPy's and torch's float64, int64, bool
            return ir.DTypeConst(e.lineno, BUILTIN_DTYPES[e.id], e.id)
        if e.id in BUILTINS or e.id in ITERATORS:
            raise self.error(e, f"the builtin {e.id} used as a value is not supported by opgen compile", "call it")
        raise self.error(e, f"name {e.id!r} is not defined", "define it, or pass it as a parameter")

    def module_constant(self, node: ast.AST, name: str, value: Any) -> ir.Expr:
        if isinstance(value, (dict, list)):
            return ir.Table(node.lineno, name, value)
        if isinstance(value, tuple):
            return ir.Table(node.lineno, name, list(value))
        return self.constant(node, value)

    def subscript(self, e: ast.Subscript) -> ir.Expr:
        items = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        if isinstance(e.slice, ast.Tuple) or any(isinstance(i, ast.Slice) or _is_const(i, None) or _is_const(i, ...)
                                                 for i in items):
            return ir.Subscript(e.lineno, self.expr(e.value), [self.index_part(i) for i in items])
        base = self.expr(e.value)
        index = self.expr(e.slice)
        if isinstance(base, ir.Table) and isinstance(index, ir.Const):
            return self.fold_lookup(e, base, index.value)
        return ir.Index(e.lineno, base, index)

    def index_part(self, i: ast.expr) -> ir.IndexPart:
        if isinstance(i, ast.Slice):
            def bound(b: ast.expr | None) -> ir.Expr | None:
                return None if b is None or _is_const(b, None) else self.expr(b)

            return ir.IndexPart("slice", start=bound(i.lower), stop=bound(i.upper), step=bound(i.step))
        if _is_const(i, None):
            return ir.IndexPart("newaxis")
        if _is_const(i, ...):
            return ir.IndexPart("ellipsis")
        return ir.IndexPart("at", index=self.expr(i))

    def fold_lookup(self, e: ast.Subscript, table: ir.Table, key: Any) -> ir.Expr:
        """A constant key into a module constant: looked up now, as Python would at run time."""
        try:
            if isinstance(table.value, dict):
                value = table.value[key]
            elif isinstance(key, int) and not isinstance(key, bool):
                value = table.value[key]
            else:
                raise TypeError
        except KeyError:
            raise self.error(e, f"{table.name} has no key {key!r} (Python would raise KeyError)",
                             f"its keys: {', '.join(map(repr, table.value))}") from None
        except IndexError:
            raise self.error(e, f"{table.name}[{key!r}] is out of range (Python would raise IndexError)") from None
        except TypeError:
            raise self.error(e, f"{table.name} cannot be indexed with {key!r}") from None
        return self.module_constant(e, f"{table.name}[{key!r}]", value)

    def builtin_name(self, func: ast.expr) -> str | None:
        """The builtin a call's function names, unless the module or function rebinds that name."""
        if isinstance(func, ast.Name) and func.id not in self.locals and func.id not in self.scope.aliases \
                and func.id not in self.scope.functions and func.id not in self.nested and func.id not in self.visible \
                and func.id not in self.scope.constants and func.id not in self.scope.other_bindings:
            return func.id
        return None

    def call_args(self, e: ast.Call, iterable_first: bool = False,
                  none_ok: bool = False) -> tuple[list[ir.Expr], dict[str, ir.Expr]]:
        """The call's arguments; with ``none_ok`` (a library call) a literal None is kept as a constant,
        for binding against the library's signature to take as an omitted argument or refuse, and a
        tuple literal is a list."""
        if any(isinstance(a, ast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
            raise self.error(e, "*args / **kwargs in a call are not supported by opgen compile", "pass arguments one by one")

        def arg(a: ast.expr) -> ir.Expr:
            if none_ok and isinstance(a, ast.Constant) and a.value is None:
                return ir.Const(a.lineno, None)
            if none_ok and isinstance(a, ast.Tuple):  # a shape, axes, a kernel size: NumPy and torch take a list alike
                return ir.ListLit(a.lineno, [self.expr(x) for x in a.elts])
            return self.expr(a)

        args = []
        for i, a in enumerate(e.args):
            if iterable_first and i == 0 and isinstance(a, ast.GeneratorExp):
                args.append(self.list_comp(a, a.generators, a.elt, lazy=True))
            elif iterable_first and i == 0:
                args.append(self.iterable(a))
            else:
                args.append(arg(a))
        return args, {k.arg: arg(k.value) for k in e.keywords}

    def call(self, e: ast.Call) -> ir.Expr:
        func = e.func
        if isinstance(func, ast.Attribute) and func.attr == "join" and len(e.args) == 1 and not e.keywords \
                and isinstance(e.args[0], ast.GeneratorExp):
            # sep.join(f(x) for x in xs): str.join makes a list of its argument before joining
            # (PySequence_Fast), so the generator is exactly the list comprehension.
            g = e.args[0]
            e = ast.copy_location(ast.Call(func, [ast.copy_location(ast.ListComp(g.elt, g.generators), g)], []), e)
        if isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant) \
                and isinstance(func.value.value, str):
            return self.f_string(self.format_method(e, func.value.value))
        builtin = self.builtin_name(func)
        if builtin in BUILTINS:
            return self.builtin(e, builtin)
        if builtin in ("str", "format", "repr", "ascii"):
            return self.format_call(e, builtin)
        if builtin in ITERATORS:
            raise self.error(e, f"{builtin}() is supported only where Python iterates over it",
                             f"loop over it (for ... in {builtin}(...)), or make a list: list({builtin}(...))")
        if isinstance(func, ast.Name) and func.id not in self.locals and (
                func.id in self.nested or func.id in self.visible or func.id in self.scope.functions):
            return self.helper_call(e, func.id)
        if isinstance(func, ast.Name) and func.id not in self.locals and func.id not in self.scope.aliases:
            raise self.error(e, f"the builtin {func.id}() is not supported by opgen compile",
                             "use len(), float(), int(), min(), max(), sum(), operators, or numpy/torch functions")
        op = self.scope.dotted(func)
        args, kwargs = self.call_args(e, none_ok=op != pipeline_intrinsic.INTRINSIC)
        if op is None:
            if isinstance(func, ast.Attribute):
                if func.attr == "dim" and not args and not kwargs:  # torch's x.dim() is x.ndim
                    return ir.Builtin(e.lineno, "ndim", [self.expr(func.value)])
                if func.attr == "size" and len(args) <= 1 and not kwargs:  # torch's x.size(d)
                    return ir.Builtin(e.lineno, "size_of" if args else "shape", [self.expr(func.value), *args])
                if func.attr == "numel" and not args and not kwargs:  # torch's x.numel() is x.size in NumPy
                    return ir.Builtin(e.lineno, "size", [self.expr(func.value)])
                if func.attr in ("flatten", "ravel") and not args and not kwargs:
                    # x.flatten(), x.ravel(), torch's t.flatten(): the elements in C order as one dim (a 0-d x
                    # gives one element), numpy.reshape(x, [-1])
                    flat = ir.Op(e.lineno, "numpy.reshape", [self.expr(func.value), ir.ListLit(e.lineno, [
                        ir.Const(e.lineno, -1)])], {}, ast.unparse(e))
                    flat.library_bound = True  # the native (a, shape)
                    return flat
                if func.attr in VIEW_METHODS:
                    return self.axes_view_method(e, func.attr, self.expr(func.value), args, kwargs)
                if func.attr == "get" and 1 <= len(args) <= 2 and not kwargs:  # d.get(k), d.get(k, default)
                    return ir.Builtin(e.lineno, "dict_get", [self.expr(func.value), *args])
                # x.sum(axis=0): which op depends on x's type (propagation)
                return ir.MethodCall(e.lineno, "", args, kwargs, ast.unparse(e), method=func.attr,
                                     receiver=self.expr(func.value))
            raise self.error(e, f"calling {ast.unparse(func)} is not supported by opgen compile",
                             "call a function of an imported module (numpy, torch, operator)")
        if op == pipeline_intrinsic.INTRINSIC:
            return self.pipeline_embed(e, args, kwargs)
        if op in VIEW_FUNCTIONS:
            return self.axes_view_function(e, op, args, kwargs)
        if op in einsum.EINSUM_OPS:
            return self.einsum(e, op, args, kwargs)
        return ir.Op(e.lineno, op, args, kwargs, ast.unparse(e))

    def einsum(self, e: ast.Call, op: str, args: list[ir.Expr], kwargs: dict[str, ir.Expr]) -> ir.Expr:
        """np.einsum / torch.einsum with a constant equation: views and one matmul (opgen.compiler.einsum)."""
        if kwargs or not args or not (isinstance(args[0], ir.Const) and isinstance(args[0].value, str)):
            raise self.error(e, f"{op}() is supported with a constant equation and the operands, positionally",
                             f"write {op}(\"bhqd,bhkd->bhqk\", q, k)")
        lowered = einsum.lower(e.lineno, args[0].value, args[1:], ast.unparse(e))
        if isinstance(lowered, tuple):
            raise self.error(e, *lowered)
        return lowered

    def format_call(self, e: ast.Call, builtin: str) -> ir.Expr:
        """``str(x)`` is ``format(x, "")`` for the values compiled code holds (int, float, str, bool);
        ``format(x, spec)`` is ``builtins.format``'s kernel, as an f-string's field is; ``repr(x)`` and
        ``ascii(x)`` are ``builtins.repr``/``builtins.ascii`` (propagation makes an int's, float's or
        bool's the empty-spec format, which is their repr)."""
        args, kwargs = self.call_args(e)
        if builtin in ("repr", "ascii"):
            if len(args) != 1 or kwargs:
                raise self.error(e, f"{builtin}() takes one argument", f"write {builtin}(x)")
            return ir.Op(e.lineno, f"builtins.{builtin}", args, {}, ast.unparse(e))
        if builtin == "str":
            if len(args) != 1 or kwargs:
                raise self.error(e, "str() with other than one argument is not supported by opgen compile",
                                 "str(x) converts one value; decode bytes before compiling")
            return _format_op(e.lineno, args[0], "", ast.unparse(e))
        if not 1 <= len(args) + len(kwargs) <= 2 or set(kwargs) - {"format_spec"}:
            raise self.error(e, "format() takes a value and a format spec", "write format(x) or format(x, spec)")
        return ir.Op(e.lineno, "builtins.format", args, kwargs, ast.unparse(e))

    def axes_view_function(self, e: ast.Call, op: str, args: list[ir.Expr], kwargs: dict[str, ir.Expr]) -> ir.Expr:
        """np.swapaxes(x, 0, 1), torch.transpose(x, -2, -1), torch.permute(x, (0, 2, 1)), ...: views."""
        how, names = VIEW_FUNCTIONS[op]
        first = "a" if op.startswith("numpy.") else "input"
        params = (first, *names)
        bound = dict(zip(params, args))
        if len(args) > len(params):
            raise self.error(e, f"{op}() takes {len(params)} arguments ({', '.join(params)}), not {len(args)}",
                             f"call it as {op}({', '.join(params)})")
        for k, v in kwargs.items():
            if k not in params or k in bound:
                raise self.error(e, f"{op}() got an unexpected or repeated argument {k}=", f"its parameters: {', '.join(params)}")
            bound[k] = v
        if missing := [n for n in params if n not in bound]:
            raise self.error(e, f"{op}() is missing {', '.join(missing)}", f"call it as {op}({', '.join(params)})")
        return ir.Builtin(e.lineno, "axes_view", [ir.Const(e.lineno, how), *(bound[n] for n in params)])

    def axes_view_method(self, e: ast.Call, method: str, receiver: ir.Expr, args: list[ir.Expr],
                         kwargs: dict[str, ir.Expr]) -> ir.Expr:
        """x.swapaxes(a, b), x.permute(2, 0, 1), x.transpose(...): views of the receiver.

        x.transpose means two things: NumPy's permutes all axes (x.transpose(), x.transpose(1, 0),
        x.transpose((2, 0, 1))), torch's swaps two (k.transpose(-2, -1)). Two ints are torch's swap;
        where NumPy accepts two (a 2-D array) its permutation is that same swap. No ints reverse the
        axes (NumPy's; torch's needs two), any other count or one tuple is NumPy's permutation."""
        keywords = {"swapaxes": ("axis0", "axis1"), "transpose": ("dim0", "dim1"), "permute": ("dims",)}[method]
        if kwargs:
            if set(kwargs) != set(keywords) or args:
                raise self.error(e, f"{method}() with {', '.join(k + '=' for k in kwargs)} is not supported by "
                                    "opgen compile", "pass the axes positionally")
            args = [kwargs[k] for k in keywords]
        if method == "swapaxes":
            if len(args) != 2:
                raise self.error(e, f"swapaxes() takes two axes, not {len(args)}", "write x.swapaxes(a, b)")
            return ir.Builtin(e.lineno, "axes_view", [ir.Const(e.lineno, "swap"), receiver, *args])
        if method == "transpose" and not args:
            return ir.Builtin(e.lineno, "axes_view", [ir.Const(e.lineno, "T"), receiver])
        if method == "transpose" and len(args) == 2 and not any(isinstance(a, ir.ListLit) for a in args):
            return ir.Builtin(e.lineno, "axes_view", [ir.Const(e.lineno, "swap"), receiver, *args])
        axes = args[0] if len(args) == 1 else ir.ListLit(e.lineno, args)
        return ir.Builtin(e.lineno, "axes_view", [ir.Const(e.lineno, "permute"), receiver, axes])

    def builtin(self, e: ast.Call, name: str) -> ir.Expr:
        if name == "isinstance":
            if len(e.args) != 2 or e.keywords:
                raise self.error(e, "isinstance() takes (value, type)")
            return ir.Builtin(e.lineno, name, [self.expr(e.args[0]), ir.Const(e.lineno, self.type_names(e.args[1]))])
        if name == "dict":
            return self.dict_call(e)
        if name in ("float", "int") and len(e.args) == 1 and not e.keywords and isinstance(e.args[0], ast.Constant) \
                and isinstance(e.args[0].value, str):
            # float("-inf"), float("nan"), int("3"): a constant, as Python parses the literal (its ValueError here)
            try:
                return self.constant(e, (float if name == "float" else int)(e.args[0].value))
            except ValueError as exc:
                raise self.error(e, f"{ast.unparse(e)} raises ValueError in Python: {exc}") from None
        allowed = {"sorted": {"reverse", "key"}, "min": {"key"}, "max": {"key"}, "sum": {"start"}}.get(name, set())
        given = {k.arg for k in e.keywords if k.arg is not None}
        if given - allowed:
            raise self.error(e, f"{name}() with {sorted(given - allowed)[0]}= is not supported by opgen compile",
                             "pass it positionally")
        key = next((k.value for k in e.keywords if k.arg == "key"), None)
        if key is not None and len(e.args) != 1:
            raise self.error(e, f"{name}() with key= is supported over one iterable here",
                             f"pass one list: {name}([a, b], key=...)")
        # min(a, b) compares its arguments; min(xs) iterates its one argument.
        iterates = name in CONSUMERS and (name not in ("min", "max") or len(e.args) == 1)
        if getattr(e, "opgen_numbers_only", False):  # %d's int(): of a number only (percent_format)
            return ir.Builtin(e.lineno, "int_of_number", self.call_args(e)[0])
        if key is not None:
            e = ast.copy_location(ast.Call(e.func, e.args, [k for k in e.keywords if k.arg != "key"]), e)
        args, kwargs = self.call_args(e, iterable_first=iterates)
        if key is not None and not (isinstance(key, ast.Constant) and key.value is None):
            # sorted(xs, key=f): the keys are the comprehension [f(x) for x in xs], read where the call is (a
            # lambda sees the enclosing function's names, as Python's closure does)
            kwargs["key"] = self.key_comprehension(e, key, e.args[0])
        return ir.Builtin(e.lineno, name, args, kwargs)

    def key_comprehension(self, call: ast.Call, key: ast.expr, iterable: ast.expr) -> ir.Expr:
        """``key=lambda x: body``, ``key=len``, ``key=str.lower``, ``key=d.get`` (over d itself) as the
        comprehension of each item's key."""
        item = "_key_item"
        if isinstance(key, ast.Lambda):
            a = key.args
            if len(a.args) != 1 or a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults:
                raise self.error(key, "a key lambda takes exactly one parameter", "write key=lambda x: ...")
            item, body = a.args[0].arg, key.body
        elif isinstance(key, ast.Name):  # key=len, key=abs, key=a function of the module
            body = ast.Call(key, [ast.Name(item, ast.Load())], [])
        elif isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name) and key.value.id in ("str", "int",
                                                                                                       "float"):
            body = ast.Call(ast.Attribute(ast.Name(item, ast.Load()), key.attr, ast.Load()), [], [])  # str.lower
        elif isinstance(key, ast.Attribute) and key.attr == "get" and ast.dump(key.value) == ast.dump(iterable):
            body = ast.Subscript(key.value, ast.Name(item, ast.Load()), ast.Load())  # sorted(d, key=d.get)
        else:
            raise self.error(key, f"key={ast.unparse(key)} is not supported by opgen compile",
                             "write it as a lambda: key=lambda x: ...")
        comp = ast.ListComp(body, [ast.comprehension(ast.Name(item, ast.Store()), iterable, [], 0)])
        _located(comp, key)
        return self.expr(comp)

    def dict_call(self, e: ast.Call) -> ir.Expr:
        """``dict()``, ``dict(a=1)``, ``dict(d)`` (a copy) and ``dict(pairs)`` (``dict(zip(keys, values))``,
        ``dict(d.items())``: a dict comprehension over the pairs)."""
        if any(k.arg is None for k in e.keywords) or any(isinstance(a, ast.Starred) for a in e.args):
            raise self.error(e, "dict(**d) and dict(*args) are not supported by opgen compile", "copy it: dict(d)")
        if len(e.args) > 1 or (e.args and e.keywords):
            raise self.error(e, "dict() takes one mapping or iterable of pairs, or keywords, here",
                             "build it with a dict literal or a comprehension")
        if not e.args:
            return ir.DictLit(e.lineno, [ir.Const(e.lineno, k.arg) for k in e.keywords],
                              [self.expr(k.value) for k in e.keywords])
        arg = e.args[0]
        source = self.iterable(arg)
        if isinstance(source, ir.Iteration):
            names = ("_pair_key", "_pair_value")
            value = ir.Var(e.lineno, names[1])
            return ir.ListComp(e.lineno, value, [ir.Generator(names, source, [])], key=ir.Var(e.lineno, names[0]))
        return ir.Builtin(e.lineno, "dict", [source])

    def type_names(self, node: ast.expr) -> str:
        nodes = node.elts if isinstance(node, ast.Tuple) else [node]
        names = []
        for n in nodes:
            written = n.id if isinstance(n, ast.Name) and n.id not in self.scope.aliases else self.scope.dotted(n)
            if written not in ISINSTANCE_NAMES:
                raise self.error(n, f"isinstance(..., {ast.unparse(n)}) is not supported by opgen compile",
                                 f"test against one of {', '.join(ISINSTANCE_NAMES)}")
            names.append(ISINSTANCE_NAMES[written])
        return ",".join(names)

    def helper_call(self, e: ast.Call, name: str) -> ir.Expr:
        args, kwargs = self.call_args(e)
        if name in self.visible and name not in self.nested:
            return ir.Call(e.lineno, name, args, kwargs, ast.unparse(e),
                           definition=(self.visible[name], self.enclosing, self.visible))
        if name in self.nested:
            definition = self.nested[name]
            if definition.lineno > e.lineno:
                raise self.error(e, f"{name}() is called before its def (line {definition.lineno}) runs "
                                    "(Python raises NameError)", "define it before the call")
            # What the nested function may see: its siblings (and the functions around it), not the
            # enclosing function's variables (closures are refused where they are read).
            outer = {**self.visible, **self.nested}
            enclosing = frozenset(self.locals | self.enclosing)
        else:
            definition, outer, enclosing = self.scope.functions[name], {}, frozenset()
        return ir.Call(e.lineno, name, args, kwargs, ast.unparse(e), definition=(definition, enclosing, outer))

    def iterable(self, e: ast.expr) -> ir.Expr:
        """What a for loop, a comprehension or a consuming builtin iterates."""
        if isinstance(e, ast.Call):
            builtin = self.builtin_name(e.func)
            if builtin in ITERATORS:
                if any(isinstance(a, ast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
                    raise self.error(e, "*args in a call are not supported by opgen compile")
                kwargs = {k.arg: k.value for k in e.keywords}
                if builtin == "enumerate" and set(kwargs) <= {"start"} and 1 <= len(e.args) + len(kwargs) <= 2:
                    start = e.args[1] if len(e.args) > 1 else kwargs.get("start")
                    args = [self.iterable(e.args[0]), self.expr(start) if start is not None else ir.Const(e.lineno, 0)]
                    return ir.Iteration(e.lineno, "enumerate", args)
                if kwargs:
                    raise self.error(e, f"{builtin}() with {sorted(kwargs)[0]}= is not supported by opgen compile",
                                     "pass arguments positionally")
                if builtin == "range":
                    if not 1 <= len(e.args) <= 3:
                        raise self.error(e, f"range expected 1 to 3 arguments, got {len(e.args)}")
                    return ir.Iteration(e.lineno, "range", [self.expr(a) for a in e.args])
                if builtin == "zip":
                    if not e.args:
                        raise self.error(e, "zip() with no arguments yields nothing; remove the loop")
                    return ir.Iteration(e.lineno, "zip", [self.iterable(a) for a in e.args])
                if builtin == "reversed" and len(e.args) == 1:
                    return ir.Iteration(e.lineno, "reversed", [self.expr(e.args[0])])
                raise self.error(e, f"{builtin}() takes other arguments than these here")
            if isinstance(e.func, ast.Attribute) and e.func.attr in ("items", "keys", "values") and not e.args \
                    and not e.keywords and self.scope.dotted(e.func) is None:
                return ir.Iteration(e.lineno, e.func.attr, [self.expr(e.func.value)])
        return self.expr(e)

    def pipeline_embed(self, e: ast.Call, args: list[ir.Expr], kwargs: dict[str, ir.Expr]) -> ir.Expr:
        """opgen.pipelines.embed(model, texts): a model's native pipeline (see pipeline_intrinsic.py)."""
        given = dict(zip(("model", "texts"), args)) | kwargs
        if len(args) > 2 or set(given) != {"model", "texts"}:
            raise self.error(e, f"{pipeline_intrinsic.INTRINSIC} takes (model, texts)",
                             f'e.g. {pipeline_intrinsic.INTRINSIC}("all-minilm-l6-v2", texts)')
        model = given["model"]
        if not (isinstance(model, ir.Const) and isinstance(model.value, str)):
            raise self.error(e, f"the model of {pipeline_intrinsic.INTRINSIC} must be a constant string, not "
                                f"{ast.unparse(e.args[0] if args else next(k.value for k in e.keywords if k.arg == 'model'))}",
                             "name the model inline (the compiler links its pipeline at compile time), e.g. "
                             f'{pipeline_intrinsic.INTRINSIC}("all-minilm-l6-v2", texts)')
        info = pipeline_intrinsic.model_for(model.value, self.scope.where(e))
        return ir.PipelineEmbed(e.lineno, info.name, given["texts"], ast.unparse(e))

    def list_comp(self, e: ast.expr, generators: list[ast.comprehension], elt: ast.expr, *,
                  lazy: bool = False, key: ast.expr | None = None) -> ir.Expr:
        out = []
        pushed = 0
        try:
            for g in generators:
                if g.is_async:
                    raise self.error(e, "an async comprehension is not supported by opgen compile")
                # The first iterable is evaluated outside the comprehension's scope, as in Python; later
                # ones see the earlier targets.
                source = self.iterable(g.iter)
                target = self.loop_target_in_comprehension(g.target)
                names = ir.target_names(target)
                self.comprehension_vars += names
                pushed += len(names)
                out.append(ir.Generator(target, source, [self.expr(c) for c in g.ifs]))
            key_ir = self.expr(key) if key is not None else None
            value = self.expr(elt)
        finally:
            del self.comprehension_vars[len(self.comprehension_vars) - pushed:]
        return ir.ListComp(e.lineno, value, out, lazy=lazy, key=key_ir)

    def loop_target_in_comprehension(self, t: ast.expr) -> ir.Target:
        if isinstance(t, (ast.Tuple, ast.List)):
            return tuple(self.loop_target_in_comprehension(x) for x in t.elts)
        if not isinstance(t, ast.Name):
            raise self.error(t, f"a comprehension target {ast.unparse(t)} is not supported by opgen compile",
                             "use plain names")
        return t.id


def _nested_functions(fn: ast.FunctionDef) -> dict[str, ast.FunctionDef]:
    """Functions defined directly inside ``fn`` (in any block of its body), by name."""
    found: dict[str, ast.FunctionDef] = {}

    def visit(stmts: list[ast.stmt]) -> None:
        for s in stmts:
            if isinstance(s, ast.FunctionDef):
                found[s.name] = s
            elif (named := lambda_definition(s)) is not None:
                found[named.name] = named  # `f = lambda x: ...`: a nested function, as if written with def
            for attr in ("body", "orelse"):
                if not isinstance(s, ast.FunctionDef):
                    visit(getattr(s, attr, []) or [])

    visit(fn.body)
    return found


def _located(tree: ast.AST, at: ast.AST) -> None:
    """Gives the nodes of syntax the compiler wrote (print's text, a % format's f-string, a key's comprehension)
    the source position of what they stand for, so errors in them point at the user's line."""
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) is None:
            ast.copy_location(node, at)


def _assigned_names(fn: ast.FunctionDef) -> set[str]:
    """Python's rule: a name bound anywhere in a function is local to all of it (parameters,
    assignment and for targets); names bound only inside comprehensions are not."""
    names = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args]}

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp, ast.Lambda,
                                  ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(child, ast.stmt) and lambda_definition(child) is not None:
                continue  # `f = lambda x: ...` names a nested function, not a variable (see _nested_functions)
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
            visit(child)

    visit(ast.Module(body=fn.body, type_ignores=[]))  # the body's statements are children there, checked as such
    return names


def _is_const(e: ast.expr, value: Any) -> bool:
    return isinstance(e, ast.Constant) and e.value is value
