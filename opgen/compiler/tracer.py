"""Python source -> IR: reads a function's AST (it never runs it) and resolves every name.

The subset: annotated parameters; constants; module-level literal constants (a scalar
is folded in, a dict or list becomes a static table, a constant key into one is looked
up now); arithmetic, comparisons and unary minus as their ``operator.*`` ops; calls to
functions of imported modules (``np.exp``, ``F.softmax``) as ops of that name;
``len`` and ``float``; list literals and comprehensions; subscripts of lists and dicts;
conditional expressions; assignments, ``+=`` and friends, ``xs.append(v)``; ``if``;
``for`` over a list; ``return``. Anything else is an error naming file:line and the
construct, with a hint.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from opgen.compiler import ir, pipeline_intrinsic
from opgen.compiler.annotations import parse_annotation
from opgen.compiler.errors import CompileError
from opgen.compiler.scope import ModuleScope, read_module

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
UNARY_OPS = {ast.USub: "operator.neg", ast.UAdd: "operator.pos", ast.Not: "operator.not_", ast.Invert: "operator.invert"}
BUILTINS = {"len", "float"}
INT64 = (-(2**63), 2**63 - 1)

# Constructs outside the subset: what to call them, and what to do instead.
UNSUPPORTED: dict[type, tuple[str, str]] = {
    ast.While: ("a while loop", "loop over a list with `for x in xs:`"),
    ast.Try: ("try/except", "errors propagate to the caller as Python exceptions; remove the try"),
    ast.With: ("a with statement", "remove it; compiled functions cannot hold resources"),
    ast.Raise: ("raise", "kernels raise Python's errors themselves; remove the raise"),
    ast.Assert: ("assert", "remove it"),
    ast.Delete: ("del", "remove it"),
    ast.Global: ("a global statement", "read module constants without declaring them"),
    ast.Nonlocal: ("a nonlocal statement", "remove it"),
    ast.FunctionDef: ("a nested function", "move it to module level and compile it separately"),
    ast.AsyncFunctionDef: ("a nested async function", "remove it"),
    ast.ClassDef: ("a class definition", "remove it"),
    ast.Import: ("an import inside the function", "import at module level"),
    ast.ImportFrom: ("an import inside the function", "import at module level"),
    ast.Break: ("break", "express the loop as a comprehension with a condition"),
    ast.Continue: ("continue", "wrap the rest of the loop body in an if"),
    ast.Match: ("a match statement", "use if/else"),
    ast.AsyncFor: ("async for", "use a plain for loop"),
    ast.AsyncWith: ("async with", "remove it"),
    ast.Lambda: ("a lambda", "write the expression inline"),
    ast.GeneratorExp: ("a generator expression", "use a list comprehension [...]"),
    ast.DictComp: ("a dict comprehension", "build a list instead, or keep the table as a module constant"),
    ast.SetComp: ("a set comprehension", "use a list comprehension"),
    ast.Set: ("a set literal", "use a list"),
    ast.Dict: ("a dict literal inside the function", "make it a module-level constant"),
    ast.Tuple: ("a tuple", "return or assign one value at a time"),
    ast.JoinedStr: ("an f-string", "concatenate with +"),
    ast.BoolOp: ("`and`/`or`", "use a conditional expression, e.g. `b if a else False`"),
    ast.NamedExpr: ("an assignment expression (:=)", "assign in its own statement"),
    ast.Await: ("await", "compiled functions are synchronous"),
    ast.Yield: ("yield", "return a list"),
    ast.YieldFrom: ("yield from", "return a list"),
    ast.Starred: ("a starred expression", "pass arguments one by one"),
    ast.Slice: ("slicing", "index one element at a time, or use a comprehension"),
}


def trace_file(path: Path, function: str) -> tuple[ir.Function, ModuleScope]:
    scope = read_module(path)
    fn = scope.functions.get(function)
    if fn is None:
        known = ", ".join(sorted(scope.functions)) or "none"
        raise CompileError(f"{path} has no module-level function {function!r}", hint=f"functions in it: {known}")
    return Tracer(scope, fn).function(), scope


class Tracer:
    def __init__(self, scope: ModuleScope, fn: ast.FunctionDef):
        self.scope = scope
        self.fn = fn
        self.locals = _assigned_names(fn)
        self.comprehension_vars: list[str] = []  # innermost last

    # ------------------------------------------------------------------ errors

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> CompileError:
        return CompileError(message, where=self.scope.where(node), hint=hint)

    def unsupported(self, node: ast.AST, what: str | None = None, hint: str | None = None) -> CompileError:
        name, default_hint = UNSUPPORTED.get(type(node), (type(node).__name__, "rewrite it with the supported subset"))
        return self.error(node, f"{what or name} is not supported by opgen compile", hint or default_hint)

    # ------------------------------------------------------------------ the function

    def function(self) -> ir.Function:
        fn = self.fn
        if fn.decorator_list:
            raise self.error(fn.decorator_list[0], "a decorated function is not supported by opgen compile",
                             "compile the undecorated function")
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs:
            raise self.error(fn, "*args, **kwargs and keyword-only parameters are not supported by opgen compile",
                             "declare every parameter positionally")
        positional = [*a.posonlyargs, *a.args]
        defaults: list[Any] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        params = []
        for arg, default in zip(positional, defaults):
            ann = parse_annotation(self.scope, arg.annotation, f"parameter {arg.arg!r}", arg.lineno)
            param = ir.Param(arg.arg, ann.type, ann.flavor)
            if default is not None:
                try:
                    param.default, param.has_default = ast.literal_eval(default), True
                except ValueError:
                    raise self.error(default, f"the default of {arg.arg!r} is not a literal constant",
                                     "use a literal default or none") from None
            params.append(param)
        ret = parse_annotation(self.scope, fn.returns, f"the return value of {fn.name}", fn.lineno)
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring
        lines = self.scope.source.splitlines()
        return ir.Function(fn.name, params, ret.type, ret.flavor, self.block(body), str(self.scope.path),
                           fn.lineno, fn.end_lineno or fn.lineno, lines)

    # ------------------------------------------------------------------ statements

    def block(self, stmts: list[ast.stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def stmt(self, s: ast.stmt) -> list[ir.Stmt]:
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.error(s, "chained assignment (a = b = ...) is not supported by opgen compile",
                                 "assign one name per statement")
            return [ir.Assign(s.lineno, self.target(s.targets[0]), self.expr(s.value))]
        if isinstance(s, ast.AnnAssign):
            if s.value is None:
                raise self.error(s, "a declaration without a value is not supported by opgen compile",
                                 "give it a value: `xs: list[int] = []`")
            declared = parse_annotation(self.scope, s.annotation, f"variable {ast.unparse(s.target)!r}", s.lineno).type
            return [ir.Assign(s.lineno, self.target(s.target), self.expr(s.value), declared)]
        if isinstance(s, ast.AugAssign):
            name = self.target(s.target)
            op = BINARY_OPS[type(s.op)]
            value = ir.Op(s.lineno, op, [ir.Var(s.lineno, name), self.expr(s.value)], {}, ast.unparse(s))
            return [ir.Assign(s.lineno, name, value)]
        if isinstance(s, ast.Expr):
            call = s.value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append":
                owner = call.func.value
                if not isinstance(owner, ast.Name) or owner.id not in self.locals:
                    raise self.error(s, f"{ast.unparse(call.func)}() is not supported by opgen compile",
                                     "append only to a list variable of this function")
                if len(call.args) != 1 or call.keywords:
                    raise self.error(s, "append takes exactly one argument")
                return [ir.Append(s.lineno, owner.id, self.expr(call.args[0]))]
            if isinstance(call, ast.Constant) and isinstance(call.value, str):
                return []  # a string used as a comment
            raise self.error(s, "an expression statement (its value is thrown away) is not supported by opgen compile",
                             "assign the value to a name, or remove the statement")
        if isinstance(s, ast.If):
            return [ir.If(s.lineno, self.expr(s.test), self.block(s.body), self.block(s.orelse))]
        if isinstance(s, ast.For):
            if s.orelse:
                raise self.error(s, "for ... else is not supported by opgen compile", "move the else block after the loop")
            if not isinstance(s.target, ast.Name):
                raise self.error(s.target, "unpacking in a for loop target is not supported by opgen compile",
                                 "loop over one list and index the others")
            return [ir.For(s.lineno, s.target.id, self.expr(s.iter), self.block(s.body))]
        if isinstance(s, ast.Return):
            if s.value is None:
                raise self.error(s, "return without a value is not supported by opgen compile",
                                 "return the function's result")
            return [ir.Return(s.lineno, self.expr(s.value))]
        if isinstance(s, ast.Pass):
            return []
        raise self.unsupported(s)

    def target(self, t: ast.expr) -> str:
        if isinstance(t, ast.Name):
            return t.id
        if isinstance(t, ast.Tuple):
            raise self.error(t, "tuple unpacking is not supported by opgen compile", "assign one name per statement")
        if isinstance(t, ast.Subscript):
            raise self.error(t, "assigning into an element is not supported by opgen compile",
                             "build a new list with a comprehension instead")
        raise self.error(t, f"assigning to {ast.unparse(t)} is not supported by opgen compile", "assign to a plain name")

    # ------------------------------------------------------------------ expressions

    def expr(self, e: ast.expr) -> ir.Expr:
        line = e.lineno
        if isinstance(e, ast.Constant):
            return self.constant(e, e.value)
        if isinstance(e, ast.UnaryOp):
            if isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
                    and type(e.operand.value) in (int, float):
                return self.constant(e, -e.operand.value)
            return ir.Op(line, UNARY_OPS[type(e.op)], [self.expr(e.operand)], {}, ast.unparse(e))
        if isinstance(e, ast.BinOp):
            return ir.Op(line, BINARY_OPS[type(e.op)], [self.expr(e.left), self.expr(e.right)], {}, ast.unparse(e))
        if isinstance(e, ast.Compare):
            if len(e.ops) != 1:
                raise self.error(e, "a chained comparison is not supported by opgen compile",
                                 "compare two values per expression")
            op = COMPARE_OPS.get(type(e.ops[0]))
            if op is None:
                word = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}[type(e.ops[0])]
                raise self.error(e, f"the `{word}` operator is not supported by opgen compile",
                                 "compare values with == or !=" if "is" in word else "look the key up directly")
            return ir.Op(line, op, [self.expr(e.left), self.expr(e.comparators[0])], {}, ast.unparse(e))
        if isinstance(e, ast.IfExp):
            return ir.IfExp(line, self.expr(e.test), self.expr(e.body), self.expr(e.orelse))
        if isinstance(e, ast.Name):
            return self.name(e)
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.ListComp):
            return self.list_comp(e)
        if isinstance(e, ast.List):
            return ir.ListLit(line, [self.expr(x) for x in e.elts])
        if isinstance(e, ast.Attribute):
            if self.scope.dotted(e):
                raise self.error(e, f"{ast.unparse(e)} used as a value is not supported by opgen compile",
                                 "call it, or use a literal")
            # x.T: an attribute some spec may declare (methods: [{name: ndarray.T, attribute: true}])
            return ir.MethodCall(line, "", [], {}, ast.unparse(e), method=e.attr, receiver=self.expr(e.value),
                                 attribute=True)
        raise self.unsupported(e)

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
        c = self.scope.constants.get(e.id)
        if c is not None:
            return self.module_constant(e, c.name, c.value)
        if e.id in self.scope.other_bindings:
            line, why = self.scope.other_bindings[e.id]
            raise self.error(e, f"{e.id} (module level, line {line}) is {why}; the compiler reads only literal "
                                "module constants", "make it a literal constant, or pass it as a parameter")
        if e.id in self.scope.aliases:
            raise self.error(e, f"the module {e.id} used as a value is not supported by opgen compile",
                             "call one of its functions")
        raise self.error(e, f"name {e.id!r} is not defined", "define it, or pass it as a parameter")

    def module_constant(self, node: ast.AST, name: str, value: Any) -> ir.Expr:
        if isinstance(value, (dict, list)):
            return ir.Table(node.lineno, name, value)
        if isinstance(value, tuple):
            return ir.Table(node.lineno, name, list(value))
        return self.constant(node, value)

    def subscript(self, e: ast.Subscript) -> ir.Expr:
        if isinstance(e.slice, ast.Slice):
            raise self.unsupported(e.slice)
        if isinstance(e.slice, ast.Tuple):
            raise self.error(e, "multi-dimensional indexing is not supported by opgen compile",
                             "use numpy functions on whole arrays")
        base = self.expr(e.value)
        index = self.expr(e.slice)
        if isinstance(base, ir.Table) and isinstance(index, ir.Const):
            return self.fold_lookup(e, base, index.value)
        return ir.Index(e.lineno, base, index)

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

    def call(self, e: ast.Call) -> ir.Expr:
        if any(isinstance(a, ast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
            raise self.error(e, "*args / **kwargs in a call are not supported by opgen compile", "pass arguments one by one")
        args = [self.expr(a) for a in e.args]
        kwargs = {k.arg: self.expr(k.value) for k in e.keywords}
        func = e.func
        if isinstance(func, ast.Name) and func.id not in self.locals and func.id not in self.scope.aliases:
            if func.id in BUILTINS:
                if kwargs or len(args) != 1:
                    raise self.error(e, f"{func.id}() takes one positional argument here")
                return ir.Builtin(e.lineno, func.id, args)
            if func.id in self.scope.functions:
                raise self.error(e, f"calling {func.id}(), another function of this module, is not supported by "
                                    "opgen compile", "inline it, or compile it separately")
            raise self.error(e, f"the builtin {func.id}() is not supported by opgen compile",
                             "use len(), float(), operators, or numpy/torch functions")
        op = self.scope.dotted(func)
        if op is None:
            if isinstance(func, ast.Attribute):  # x.sum(axis=0): which op depends on x's type (propagation)
                return ir.MethodCall(e.lineno, "", args, kwargs, ast.unparse(e), method=func.attr,
                                     receiver=self.expr(func.value))
            raise self.error(e, f"calling {ast.unparse(func)} is not supported by opgen compile",
                             "call a function of an imported module (numpy, torch, operator)")
        if op == pipeline_intrinsic.INTRINSIC:
            return self.pipeline_embed(e, args, kwargs)
        return ir.Op(e.lineno, op, args, kwargs, ast.unparse(e))

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

    def list_comp(self, e: ast.ListComp) -> ir.Expr:
        if len(e.generators) != 1:
            raise self.error(e, "a comprehension with several `for` clauses is not supported by opgen compile",
                             "nest one comprehension inside another")
        g = e.generators[0]
        if g.is_async:
            raise self.error(e, "an async comprehension is not supported by opgen compile")
        if not isinstance(g.target, ast.Name):
            raise self.error(g.target, "unpacking in a comprehension target is not supported by opgen compile",
                             "iterate over one list")
        iterable = self.expr(g.iter)  # evaluated outside the comprehension's scope, as in Python
        self.comprehension_vars.append(g.target.id)
        try:
            conds = [self.expr(c) for c in g.ifs]
            elt = self.expr(e.elt)
        finally:
            self.comprehension_vars.pop()
        return ir.ListComp(e.lineno, elt, g.target.id, iterable, conds)


def _assigned_names(fn: ast.FunctionDef) -> set[str]:
    """Python's rule: a name bound anywhere in a function is local to all of it (parameters,
    assignment and for targets); names bound only inside comprehensions are not."""
    names = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args]}

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp, ast.Lambda,
                                  ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
            visit(child)

    for stmt in fn.body:
        visit(stmt)
    return names
