"""YAML loading that remembers where every key and value came from.

pydantic reports errors by location path (``overloads.0.signature``); torchgen-style
errors need ``file:line``. We compose the YAML node tree once and record the line of
every path, so a validation error can point at the exact line to fix.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from opgen.errors import SpecError

Loc = tuple[Any, ...]


# libyaml's parser where PyYAML was built with it: the same node tree (tags, values, lines) as the
# pure-Python one, in about a third of the time (every CLI call and compile loads all the specs).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_with_lines(path: Path, text: str | None = None) -> tuple[Any, dict[Loc, int]]:
    """``path``'s YAML (or ``text``, read from it already) and the line of every key and value."""
    text = path.read_text(encoding="utf-8") if text is None else text
    try:
        try:
            node = yaml.compose(text, Loader=_LOADER)
        except yaml.YAMLError:  # PyYAML's own parser says what it expected and found; libyaml's is terser
            node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise SpecError(
            f"not valid YAML: {getattr(exc, 'problem', exc)}",
            where=f"{path}:{line}",
            hint="check indentation and quoting; signatures and gufunc strings with ':' or '->' are safest quoted",
        ) from None
    if node is None:
        raise SpecError("the file is empty", where=f"{path}:1", hint="a spec needs at least op, summary, reference and overloads")
    lines: dict[Loc, int] = {}
    return _convert(node, (), lines, path), lines


def _convert(node: yaml.Node, loc: Loc, lines: dict[Loc, int], path: Path) -> Any:
    lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            if key in out:
                raise SpecError(
                    f"key {key!r} appears twice", where=f"{path}:{key_node.start_mark.line + 1}", hint="keep one of them"
                )
            lines[loc + (key,)] = key_node.start_mark.line + 1
            out[key] = _convert(value_node, loc + (key,), lines, path)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, loc + (i,), lines, path) for i, item in enumerate(node.value)]
    return _scalar(node)


# YAML 1.1 (PyYAML) reads an unquoted ``1e-5`` as a string; specs are full of such
# tolerances, so plain scalars that look like floats are read as floats.
_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+\Z")


def _scalar(node: yaml.ScalarNode) -> Any:
    # A plain scalar's style is None from PyYAML's parser and "" from libyaml's.
    if not node.style and node.tag == "tag:yaml.org,2002:str" and _FLOAT.match(node.value):
        return float(node.value)
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def line_of(lines: dict[Loc, int], loc: Loc) -> int:
    """The line of the longest known prefix of ``loc`` (pydantic adds model-internal parts)."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1
