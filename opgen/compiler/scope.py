"""What a function's module gives it, read from the module's source (never by importing it).

Three things matter to the compiler: import aliases (``import numpy as np`` makes
``np.exp`` the op ``numpy.exp``), module-level constants the function reads (a dict
of task prefixes, a list of weights: literal values, evaluated with ``ast.literal_eval``)
and type aliases used in annotations (``Vec = npt.NDArray[np.float32]``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opgen.compiler.errors import CompileError


@dataclass
class Constant:
    name: str
    value: Any  # a Python literal
    line: int


@dataclass
class ModuleScope:
    path: Path
    source: str
    tree: ast.Module
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted module or object name
    constants: dict[str, Constant] = field(default_factory=dict)
    # Names bound at module level that are not literal constants: where, and why not.
    other_bindings: dict[str, tuple[int, str]] = field(default_factory=dict)
    type_aliases: dict[str, ast.expr] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)

    def where(self, node: ast.AST | int) -> str:
        line = node if isinstance(node, int) else getattr(node, "lineno", 0)
        return f"{self.path}:{line}"

    def dotted(self, node: ast.expr) -> str | None:
        """The fully qualified name an expression spells through the imports, e.g. ``np.exp``
        -> ``numpy.exp``; None when it is not a name rooted in an import."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None


def read_module(path: Path) -> ModuleScope:
    path = Path(path)
    if not path.exists():
        raise CompileError(f"{path} does not exist", hint="give FILE.py:FUNCTION with an existing file")
    source = path.read_text()
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise CompileError(f"{exc.msg}", where=f"{path}:{exc.lineno}", hint="the file must be valid Python") from None
    scope = ModuleScope(path, source, tree)
    for node in tree.body:
        _bind(scope, node)
    return scope


def lambda_definition(node: ast.stmt) -> ast.FunctionDef | None:
    """``name = lambda params: body`` as the function ``def name(params): return body`` it defines (the
    same parameters, defaults and body, at the lambda's position); None for any other statement."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Lambda)):
        return None
    lam = node.value
    fn = ast.FunctionDef(name=node.targets[0].id, args=lam.args, body=[ast.copy_location(ast.Return(lam.body), lam)],
                         decorator_list=[], returns=None, type_comment=None, type_params=[])
    return ast.fix_missing_locations(ast.copy_location(fn, node))


def _bind(scope: ModuleScope, node: ast.stmt) -> None:
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                scope.aliases[a.asname] = a.name
            else:  # `import numpy.typing` binds `numpy`
                root = a.name.split(".")[0]
                scope.aliases[root] = root
    elif isinstance(node, ast.ImportFrom):
        if node.level == 0 and node.module:
            for a in node.names:
                if a.name != "*":
                    scope.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    elif isinstance(node, ast.FunctionDef):
        scope.functions[node.name] = node
        scope.other_bindings[node.name] = (node.lineno, "a function")
    elif (named := lambda_definition(node)) is not None and named.name not in scope.other_bindings \
            and named.name not in scope.constants:
        scope.functions[named.name] = named  # `relu = lambda x: ...`: a function, as if written with def
        scope.other_bindings[named.name] = (node.lineno, "a function")
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            name = target.id
            if name in scope.constants or name in scope.type_aliases or name in scope.other_bindings:
                # A second binding: which one the function sees depends on when it runs.
                scope.constants.pop(name, None)
                scope.type_aliases.pop(name, None)
                scope.other_bindings[name] = (node.lineno, "a name bound more than once at module level")
                scope.functions.pop(name, None)
                continue
            if value is None:
                continue
            try:
                scope.constants[name] = Constant(name, ast.literal_eval(value), node.lineno)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                if isinstance(value, (ast.Subscript, ast.Attribute, ast.Name)):
                    scope.type_aliases[name] = value  # maybe a type alias; checked where used
                scope.other_bindings.setdefault(name, (node.lineno, "not a literal constant"))
    elif isinstance(node, (ast.ClassDef, ast.AsyncFunctionDef)):
        scope.other_bindings[node.name] = (node.lineno, "a class" if isinstance(node, ast.ClassDef) else "a function")
    elif isinstance(node, (ast.For, ast.While, ast.If, ast.With, ast.Try)):
        # Module-level control flow may rebind anything; names it binds are not constants.
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                scope.constants.pop(sub.id, None)
                scope.other_bindings[sub.id] = (node.lineno, "bound inside module-level control flow")
