"""The package's layout rules, read from the source with `ast` (nothing under opgen/ is imported):

- no import cycles between opgen's modules, at module level or inside functions;
- an import inside a function (of an opgen module or a third-party one) says why, in a comment on
  its line or the line directly above (a heavy optional dependency, a cycle it avoids, ...);
- only opgen/targets/ knows the targets by name: elsewhere no comparison with a target's name and
  no `.gpu` on a target/backend object (opgen/cli/ may validate its arguments: an `if` on a target
  name whose body raises);
- nothing is left at the paths the reorganisation moved away from.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "opgen"

# A floor for the module count, so that no rule passes because nothing was read.
MIN_MODULES = 80

TARGET_NAMES = frozenset({"cpp", "rust", "cuda", "metal", "cpu-cpp", "cpu-rust"})

OLD_PATHS = [f"opgen/{name}.py" for name in (
    "admission", "admission_rust", "build_rust", "policy", "policy_rust", "shim", "shim_rust", "spec",
    "specyaml", "speclint", "elf", "ffi", "library", "cli", "abi", "dtypes", "nativetypes", "shapes",
    "corpus")] + ["opgen/gpu"]


@dataclass(frozen=True)
class Import:
    source: str      # the importing module, e.g. "opgen.gate.admission"
    target: str      # the imported module: opgen.x, or a top-level third-party/stdlib name
    path: str        # file, relative to the repository root
    line: int
    end_line: int
    in_function: bool


def relative(path: Path) -> Path:
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else Path(path.name)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    """Every module under opgen/ by dotted name (a package by its __init__.py)."""
    found = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    assert len(found) > MIN_MODULES, f"only {len(found)} modules found under {PACKAGE}: is this the repository?"
    return found


def is_module(name: str) -> bool:
    return name in modules()


def resolve_from(module: str | None, level: int, importer: str, importer_is_package: bool) -> str | None:
    """The absolute module name of `from <level dots><module> import ...` in `importer`."""
    if level == 0:
        return module
    base = importer.split(".")
    if not importer_is_package:
        base = base[:-1]
    if level > 1:
        base = base[:-(level - 1)]
    return ".".join(base + ([module] if module else []))


def nearest_module(name: str) -> str:
    """opgen.a.b.c -> the longest prefix that is a module (an import of a name inside a module)."""
    parts = name.split(".")
    while parts and not is_module(".".join(parts)):
        parts.pop()
    return ".".join(parts) if parts else name


@cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imports_of(name: str, path: Path) -> list[Import]:
    rel = str(relative(path))
    is_package = path.name == "__init__.py"
    out: list[Import] = []

    def add(target: str, node: ast.stmt, in_function: bool) -> None:
        out.append(Import(name, target, rel, node.lineno, node.end_lineno or node.lineno, in_function))

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                add(nearest_module(alias.name) if top == "opgen" else top, node, in_function)
        elif isinstance(node, ast.ImportFrom):
            base = resolve_from(node.module, node.level, name, is_package)
            if base is None:
                return
            if base.split(".")[0] != "opgen":
                add(base.split(".")[0], node, in_function)
            else:
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    add(sub if is_module(sub) else nearest_module(base), node, in_function)
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(parsed(path), False)
    return out


@cache
def all_imports() -> list[Import]:
    return [i for name, path in modules().items() for i in imports_of(name, path)]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def shortest_cycle(graph: dict[str, set[str]], start: str, members: set[str]) -> list[str]:
    """A shortest cycle through `start` inside one component (breadth-first), start ... start."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start] + path[::-1][1:] + [start] if node != start else [start, start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return [start]


def test_no_import_cycles():
    imports = [i for i in all_imports() if i.target.split(".")[0] == "opgen"]
    graph: dict[str, set[str]] = {name: set() for name in modules()}
    sites: dict[tuple[str, str], list[Import]] = {}
    for i in imports:
        graph[i.source].add(i.target)
        sites.setdefault((i.source, i.target), []).append(i)
    assert sum(map(len, graph.values())) > MIN_MODULES, "implausibly few imports between opgen's modules"

    def where(a: str, b: str) -> str:
        return ", ".join(dict.fromkeys(f"{i.path}:{i.line}{' (in a function)' if i.in_function else ''}"
                                       for i in sites[(a, b)]))

    report = []
    for component in strongly_connected(graph):
        members = set(component)
        if len(component) == 1 and component[0] not in graph[component[0]]:
            continue
        if len(component) == 1:
            report.append(f"- {component[0]} imports itself: {where(component[0], component[0])}")
            continue
        cycle = shortest_cycle(graph, component[0], members)
        lines = [f"- cycle of {len(component)} modules: {', '.join(component)}",
                 f"  e.g. {' -> '.join(cycle)}",
                 "  its imports:"]
        for a in component:
            for b in sorted(graph[a] & members):
                lines.append(f"    {a} -> {b}  ({where(a, b)})")
        report.append("\n".join(lines))
    assert not report, (f"{len(report)} import cycle(s) among opgen's modules (an import of a package "
                        "counts as one of its __init__.py); break each by moving the shared piece down "
                        "a layer:\n" + "\n".join(report))


@cache
def comment_lines(path: Path) -> tuple[frozenset[int], frozenset[int]]:
    """(lines holding a comment, lines that are only a comment)."""
    source = path.read_text(encoding="utf-8")
    anywhere, alone = set(), set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            anywhere.add(tok.start[0])
            if tok.line[:tok.start[1]].strip() == "":
                alone.add(tok.start[0])
    return frozenset(anywhere), frozenset(alone)


def unexplained(path: Path, imports: list[Import]) -> list[Import]:
    """The imports (inside functions, of one file) with no comment on their lines or directly above.

    An import that directly follows an explained one (the run `import torch`, then
    `import torch.nn.functional as F`) shares its comment."""
    anywhere, alone = comment_lines(path)
    covered: set[int] = set()
    previous: tuple[int, int] | None = None
    for line, end in sorted({(i.line, i.end_line) for i in imports}):
        if (any(k in anywhere for k in range(line, end + 1)) or (line - 1) in alone
                or (previous is not None and previous[1] == line - 1 and previous[0] in covered)):
            covered.add(line)
        previous = (line, end)
    return [i for i in imports if i.line not in covered]


def test_function_level_imports_say_why():
    in_functions = [i for i in all_imports() if i.in_function]
    assert in_functions, "no import inside a function found at all: the scan is broken"
    by_file: dict[str, list[Import]] = {}
    for i in in_functions:
        by_file.setdefault(i.path, []).append(i)
    missing = []
    for path, imports in sorted(by_file.items()):
        lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
        flagged = [i for i in unexplained(ROOT / path, imports) if i.target not in sys.stdlib_module_names]
        for line in sorted({i.line for i in flagged}):
            missing.append(f"- {path}:{line}: {lines[line - 1].strip()}")
    assert not missing, (f"{len(missing)} import(s) inside functions without a comment saying why (on the "
                         "import's line, or on a comment line directly above it or above the run of imports "
                         "it belongs to: e.g. a heavy optional dependency such as torch or onnxruntime, or "
                         "the cycle it avoids); add one, or move the import to module level:\n"
                         + "\n".join(missing))


def _target_constants(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in TARGET_NAMES:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for e in node.elts for v in _target_constants(e)]
    return []


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _raises(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def target_branches(path: Path, in_cli: bool | None = None) -> list[str]:
    rel = relative(path)
    if in_cli is None:
        in_cli = rel.parts[:2] == ("opgen", "cli")
    tree = parsed(path)
    validation = set()  # Compare nodes in opgen/cli/ that guard a raise: argument validation
    if in_cli:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and _raises(node.body):
                validation.update(id(n) for n in ast.walk(node.test) if isinstance(n, ast.Compare))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and id(node) not in validation:
            names = [v for e in [node.left, *node.comparators] for v in _target_constants(e)]
            if names:
                found.append((node.lineno, f"compares with {', '.join(repr(n) for n in sorted(set(names)))}"))
        elif isinstance(node, ast.MatchValue):
            names = _target_constants(node.value)
            if names:
                found.append((node.lineno, f"matches case {names[0]!r}"))
        elif isinstance(node, ast.Attribute) and node.attr == "gpu":
            base = _dotted(node.value) or ""
            if base.split(".")[-1] != "targets":  # opgen.targets.gpu, the module, is not a branch
                found.append((node.lineno, f"uses `{ast.unparse(node)}`"))
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f"- {rel}:{n}: {what}: {lines[n - 1].strip()}" for n, what in sorted(set(found))]


def test_no_per_target_branches_outside_targets():
    scanned = [p for p in modules().values() if p.relative_to(ROOT).parts[:2] != ("opgen", "targets")]
    assert len(scanned) > MIN_MODULES - 20, f"only {len(scanned)} modules outside opgen/targets/"
    report = [line for p in scanned for line in target_branches(p)]
    assert not report, (f"{len(report)} place(s) outside opgen/targets/ branch on a target's name or on `.gpu` "
                        f"(names: {', '.join(sorted(TARGET_NAMES))}); ask the target's protocol in "
                        "opgen/targets/ instead:\n" + "\n".join(report))


def test_scanners_see_what_they_look_for(tmp_path):
    """The rules' scanners on a sample: each pattern they must flag is flagged (no vacuous pass)."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(target, b):\n"
        "    import numpy\n"
        "    # torch is heavy\n"
        "    import torch\n"
        "    import torch.nn.functional as F\n"
        "    import json\n"
        "    if target == 'cuda' or target in ('cpu-cpp', 'x'):\n"
        "        return b.gpu\n"
        "    match target:\n"
        "        case 'rust':\n"
        "            pass\n")
    branches = target_branches(sample)
    assert [b.split(":")[1] for b in branches] == ["7", "7", "8", "10"], branches
    imports = imports_of("opgen.sample", sample)
    assert [(i.target, i.line, i.in_function) for i in imports] == [
        ("numpy", 2, True), ("torch", 4, True), ("torch", 5, True), ("json", 6, True)]
    assert [i.line for i in unexplained(sample, imports)] == [2]  # torch.nn.functional and json: in torch's run
    cli = tmp_path / "cli.py"
    cli.write_text("def check(target):\n"
                   "    if target not in ('cpp', 'rust'):\n"
                   "        raise ValueError(target)\n"
                   "    if target == 'cuda':\n"
                   "        return 1\n")
    assert [b.split(":")[1] for b in target_branches(cli, in_cli=True)] == ["4"]
    assert [b.split(":")[1] for b in target_branches(cli, in_cli=False)] == ["2", "4"]
    resolution = tmp_path / "resolution.py"
    resolution.write_text("from opgen.spec import model, NotAModule\nimport opgen.spec.model.x\nfrom . import synthesize\n")
    assert [i.target for i in imports_of("opgen.resolution", resolution)] == [
        "opgen.spec.model", "opgen.spec", "opgen.spec.model", "opgen.synthesize"]
    cycle = strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": set()})
    assert sorted(cycle) == [["a", "b", "c"], ["d"], ["e"]]
    assert shortest_cycle({"a": {"b"}, "b": {"a"}}, "a", {"a", "b"}) == ["a", "b", "a"]
    assert shortest_cycle({"a": {"b", "x"}, "b": {"c"}, "c": {"a"}, "x": {"b"}}, "a", {"a", "b", "c", "x"}) == ["a", "b", "c", "a"]
    assert shortest_cycle({"d": {"d"}}, "d", {"d"}) == ["d", "d"]


def test_old_paths_are_gone():
    left = [p for p in OLD_PATHS if (ROOT / p).exists()]
    assert not left, "modules left at their pre-reorganisation paths (move them into the flow's packages): " + ", ".join(left)
