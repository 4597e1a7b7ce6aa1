"""The launch line: how a device kernel states its launch geometry (pure: text in, data out).

Every CUDA and Metal kernel carries one line, anywhere in the source:

    // @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)

``block`` is threads per block (threadgroup), integer constants, 1 to 3 dims (missing
ones are 1), at most 1024 threads, z at most 64. ``grid`` is blocks (threadgroups) per
grid, 1 to 3 expressions over the kernel's sizes and int scalars with integer literals,
``+ - * // %``, ``ceil_div(a, b)``, ``min(...)`` and ``max(...)``. opgen renders the line
into the host code's launch (CUDA ``<<<grid, block>>>``, Metal ``dispatchThreadgroups``,
the CPU execution layer's ``launch``); the kernel itself sees the result as
blockDim/gridDim or group_size/grid_groups. A grid with a zero extent launches nothing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

LAUNCH = re.compile(r"^[ \t]*//[ \t]*@launch\b(.*)$", re.M)
MAX_THREADS = 1024
FUNCTIONS = {"ceil_div": 2, "min": None, "max": None}
OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}


class LaunchError(ValueError):
    """The launch line is missing or malformed; the message says what to write."""


@dataclass(frozen=True)
class LaunchRule:
    grid: tuple[str, str, str]  # C++ int64 expressions (over the names)
    block: tuple[int, int, int]
    text: str  # the line as written

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


EXAMPLE = "// @launch grid=(ceil_div(n, 256), batch) block=(256)"


def parse_launch(source: str, names: tuple[str, ...]) -> LaunchRule:
    """The kernel's launch line; ``names`` are what grid expressions may use."""
    found = LAUNCH.findall(source)
    allowed = ", ".join(names)
    if not found:
        raise LaunchError(f"the source has no launch line; add one comment line such as `{EXAMPLE}` "
                          f"(grid: blocks per grid over {allowed}; block: threads per block, constants)")
    if len(found) > 1:
        raise LaunchError("the source has more than one @launch line; keep exactly one")
    text = found[0].strip()
    joined = re.sub(r"(?<=[^,\s])\s+(?=(?:grid|block)\s*=)", ", ", text)  # grid=(...) block=(...)
    try:
        call = ast.parse(f"launch({joined})", mode="eval").body
    except SyntaxError:
        raise LaunchError(f"the launch line `// @launch {text}` does not parse; write it as `{EXAMPLE}`") from None
    assert isinstance(call, ast.Call)
    if call.args or {k.arg for k in call.keywords} != {"grid", "block"}:
        raise LaunchError(f"the launch line `// @launch {text}` must give exactly grid=(...) and block=(...), "
                          f"as in `{EXAMPLE}`")
    parts = {k.arg: _items(k.value) for k in call.keywords}
    if not 1 <= len(parts["grid"]) <= 3 or not 1 <= len(parts["block"]) <= 3:
        raise LaunchError("grid and block have 1 to 3 dims (x, y, z)")
    block = []
    for node in parts["block"]:
        if not (isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 1):
            raise LaunchError(f"block dims are positive integer constants (got `{ast.unparse(node)}`): a fixed "
                              "block size lets shared arrays be sized by it")
        block.append(node.value)
    block += [1] * (3 - len(block))
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS or block[2] > 64:
        raise LaunchError(f"block=({', '.join(map(str, block))}) is {threads} threads; a block has at most "
                          f"{MAX_THREADS} threads (z at most 64)")
    grid = [_render(node, names) for node in parts["grid"]]
    grid += ["1"] * (3 - len(grid))
    return LaunchRule(tuple(grid), tuple(block), f"// @launch {text}")


def _items(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def _render(node: ast.expr, names: tuple[str, ...]) -> str:
    """A grid expression as checked C++ over int64_t (opgen::gpu's helpers raise on overflow or
    division by zero)."""
    if isinstance(node, ast.Constant) and type(node.value) is int and 0 <= node.value < 2**31:
        return f"int64_t{{{node.value}}}"
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise LaunchError(f"the launch line names `{node.id}`; grid expressions may use {', '.join(names)} "
                              "and integer literals")
        return f"int64_t{{{node.id}}}"
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        helper = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floor_div", ast.Mod: "mod"}[type(node.op)]
        return f"opgen::gpu::{helper}({_render(node.left, names)}, {_render(node.right, names)})"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS and not node.keywords:
        arity = FUNCTIONS[node.func.id]
        if (arity is not None and len(node.args) != arity) or len(node.args) < 2:
            raise LaunchError(f"{node.func.id}(...) takes {arity or 'two or more'} arguments")
        args = ", ".join(_render(a, names) for a in node.args)
        return f"opgen::gpu::{node.func.id}({args})" if arity else f"opgen::gpu::{node.func.id}_of({{{args}}})"
    raise LaunchError(f"`{ast.unparse(node)}` is not allowed in a launch line: use {', '.join(names)}, integer "
                      "literals, + - * // %, ceil_div(a, b), min(...) and max(...)")


def render_geometry(rule: LaunchRule, names: tuple[str, ...], types: tuple[str, ...]) -> str:
    """``opgen_launch.hpp``: the launch line as a C++ function of the kernel's sizes and int scalars
    (generated from the kernel source at build time; the host code calls it)."""
    params = ", ".join(f"{t} {n}" for t, n in zip(types, names))
    unused = "".join(f"  (void){n};\n" for n in names)
    return (
        "// @generated by opgen from the kernel's launch line. Do not edit.\n"
        f"// {rule.text}\n"
        "#pragma once\n"
        '#include "opgen_gpu_host.hpp"\n'
        f"inline opgen::gpu::Launch opgen_launch_geometry({params}) {{\n"
        f"{unused}"
        f"  return opgen::gpu::Launch{{{{{', '.join(rule.grid)}}}, {{{', '.join(map(str, rule.block))}}}}};\n"
        "}\n"
    )
