"""The tracer and type propagation on their own (no build): names resolved through the module's
imports, module constants folded or kept as tables, Python's scoping and widening rules, and
every op typed by the registry entry that will serve it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from opgen.compiler import ir
from opgen.compiler.propagate import propagate
from opgen.compiler.resolve import OpResolver
from opgen.compiler.tracer import trace_file
from opgen.registry import Registry
from opgen.spec.model import load_all
from tests.compile_support import CHECKOUT

SOURCE = '''\
from typing import Annotated
import numpy
import numpy.typing as npt
from numpy import exp as e
import torch
from torch.nn import functional as F

WEIGHTS = [0.5, 2.0]
NAMES = {"a": "alpha", "b": "beta"}
LIMIT = 3
Vec = Annotated[torch.Tensor, torch.float64]


def f(x: npt.NDArray[numpy.float64], y: Vec, s: str, n: int) -> npt.NDArray[numpy.float64]:
    a = e(x)
    b = F.softmax(y, dim=-1)
    c = torch.nn.functional.softmax(b, -1)
    w = [v * LIMIT for v in WEIGHTS]
    k = NAMES["a"] + NAMES[s]
    v = n + 1.5
    return numpy.sum(a, axis=n)
'''


def traced(tmp_path: Path) -> ir.Function:
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(SOURCE))
    fn, _ = trace_file(path, "f")
    specs = load_all(CHECKOUT / "specs")
    return propagate(fn, OpResolver(specs, Registry(CHECKOUT / "generated")))


def test_names_resolve_through_every_import_spelling(tmp_path: Path) -> None:
    fn = traced(tmp_path)
    ops = [s.value.op for s in fn.body if isinstance(s, ir.Assign) and isinstance(s.value, ir.Op)]
    assert ops[:3] == ["numpy.exp", "torch.nn.functional.softmax", "torch.nn.functional.softmax"]
    assert [(p.name, str(p.type), p.flavor) for p in fn.params] == [
        ("x", "tensor[float64]", "numpy"), ("y", "tensor[float64]", "torch"), ("s", "str", None), ("n", "int", None)]


def test_every_op_is_typed_by_its_registry_entry(tmp_path: Path) -> None:
    fn = traced(tmp_path)
    assert {k: str(t) for k, t in fn.locals.items()} == {
        "a": "tensor[float64]", "b": "tensor[float64]", "c": "tensor[float64]", "w": "list[float]", "k": "str",
        "v": "float"}
    ret = fn.body[-1]
    assert isinstance(ret, ir.Return) and ret.value.entry.overload == "f64"
    assert [str(b.type) for b in ret.value.bound] == ["tensor[float64]", "int"]  # a, axis=n
    assert str(ret.value.entry.signature["returns"]) == "tensor[float64]"


def test_constants_fold_where_the_key_is_constant_and_become_tables_where_not(tmp_path: Path) -> None:
    fn = traced(tmp_path)
    k = next(s for s in fn.body if isinstance(s, ir.Assign) and s.name == "k").value
    left, right = k.bound
    assert isinstance(left, ir.Const) and left.value == "alpha"  # NAMES["a"], looked up now
    assert isinstance(right, ir.Index) and isinstance(right.base, ir.Table) and right.base.name == "NAMES"
    w = next(s for s in fn.body if isinstance(s, ir.Assign) and s.name == "w").value
    assert isinstance(w, ir.ListComp) and isinstance(w.generators[0].source, ir.Table)
    # LIMIT (an int) is folded and widened to 3.0 for the float multiply.
    assert isinstance(w.elt.bound[1], ir.Const) and w.elt.bound[1].value == 3.0 and type(w.elt.bound[1].value) is float


def test_an_int_variable_is_widened_explicitly_for_float_arithmetic(tmp_path: Path) -> None:
    fn = traced(tmp_path)
    v = next(s for s in fn.body if isinstance(s, ir.Assign) and s.name == "v").value
    assert v.op == "operator.add" and v.overload.name == "float"
    assert isinstance(v.bound[0], ir.Convert) and str(v.bound[0].type) == "float"
