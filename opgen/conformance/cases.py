"""The ONNX backend node test cases, read from the installed ``onnx`` package.

The wheel does not ship ``onnx/backend/test/data/node``; ``collect_testcases`` generates the same
cases in Python (each node file's ``export_*`` functions compute their expected outputs with
NumPy). That takes a few seconds and prints NumPy warnings, so it is done once per process,
with the warnings silenced and anything printed sent to stderr.

A case here is one single-node model: its op, the opset it imports, its attributes, which inputs
and outputs the node names (an omitted optional one is ``''``) and the data sets (inputs, expected
outputs) with the case's rtol/atol. The ``*_expanded`` cases (the op's function body, a graph of
other ops, run on the same data) test that body, not the op, and are left out, as are models of
more than one node.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import warnings
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from opgen.errors import OpgenError


@dataclass(frozen=True)
class Case:
    name: str
    op_type: str
    domain: str
    opset: int  # the version of the node's domain the model imports
    attrs: dict[str, Any]  # decoded: bytes -> str, tensors -> arrays
    inputs: tuple[str, ...]  # the node's input names; '' where an optional input is omitted
    outputs: tuple[str, ...]
    data_sets: tuple[tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]], ...]  # present inputs, present outputs
    rtol: float
    atol: float


def unavailable() -> str | None:
    """Why the ONNX cases cannot be collected here (the ``onnx`` package is missing), or None."""
    if importlib.util.find_spec("onnx") is None:
        return "the onnx package is not installed (pip install onnx, or pip install -e '.[dev]')"
    return None


def onnx_version() -> str:
    import onnx  # the optional ONNX dependency: only conformance runs need it

    return onnx.__version__


@cache
def _collected() -> tuple[Any, ...]:
    """Every ONNX backend node test case, generated once per process."""
    if why := unavailable():
        raise OpgenError(f"the ONNX backend node cases are not available: {why}")
    # onnx is heavy (and only conformance needs it); collecting runs every node file's exports
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"), contextlib.redirect_stdout(sys.stderr):
        warnings.simplefilter("ignore")
        return tuple(collect_testcases(None))


def cases_of(op_types: set[str]) -> dict[str, list[Case]]:
    """The single-node cases of each op type of the default domain (in ONNX's order); an empty list
    for an op without cases."""
    found: dict[str, list[Case]] = {op: [] for op in sorted(op_types)}
    for t in _collected():
        graph = t.model.graph
        if t.name.endswith("_expanded") or "_expanded_ver" in t.name or len(graph.node) != 1:
            continue
        node = graph.node[0]
        if node.op_type in found and (node.domain or "") in ("", "ai.onnx"):
            found[node.op_type].append(_case(t))
    return found


def _case(t: Any) -> Case:
    # onnx is heavy (and only conformance needs it)
    from onnx import helper, numpy_helper

    node = t.model.graph.node[0]
    domain = node.domain or ""
    default = {"", "ai.onnx"}  # the default domain's two spellings
    wanted = default if domain in default else {domain}
    opset = next((o.version for o in t.model.opset_import if (o.domain or "") in wanted), 0)
    attrs = {}
    for a in node.attribute:
        value = helper.get_attribute_value(a)
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        elif hasattr(value, "dims") and hasattr(value, "data_type"):  # a TensorProto attribute
            value = numpy_helper.to_array(value)
        elif isinstance(value, list):
            value = [v.decode("utf-8") if isinstance(v, bytes) else v for v in value]
        attrs[a.name] = value
    data_sets = tuple((tuple(_array(x) for x in ins), tuple(_array(y) for y in outs)) for ins, outs in t.data_sets)
    return Case(t.name, node.op_type, domain, int(opset), attrs, tuple(node.input), tuple(node.output), data_sets,
                float(t.rtol), float(t.atol))


def _array(x: Any) -> Any:
    """A data set's value as an array (some cases give TensorProto objects)."""
    if isinstance(x, (np.ndarray, list)):  # a list: a sequence value, kept as it is
        return x
    # onnx is heavy (and only conformance needs it)
    from onnx import numpy_helper

    if hasattr(x, "dims") and hasattr(x, "data_type"):
        return numpy_helper.to_array(x)
    return np.asarray(x)
