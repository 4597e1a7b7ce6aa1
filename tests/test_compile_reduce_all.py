"""Reductions over every element (the axis omitted or None) and arrays read as Python numbers
(float(), int(), bool(), .item(), an `if` on a 0-d array): the lowering type propagation makes, and
what it refuses. The differential check of compiled functions against NumPy is the realistic
collection's (examples/compile/realistic/reductions.py); these tests build nothing but one small
function for the runtime's errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from opgen.compiler import CompileError, compile_function, ir
from opgen.compiler.propagate import propagate
from opgen.compiler.resolve import OpResolver
from opgen.compiler.tracer import trace_file
from opgen.host import load_compiled
from opgen.project import Project
from opgen.registry import Registry
from opgen.spec.model import load_all
from tests.compile_support import CHECKOUT

PRELUDE = """\
from typing import Annotated
import numpy as np
import numpy.typing as npt
import torch
F32 = npt.NDArray[np.float32]
T32 = Annotated[torch.Tensor, torch.float32]
"""


def typed(tmp_path: Path, body: str) -> ir.Function:
    path = tmp_path / "m.py"
    path.write_text(PRELUDE + textwrap.dedent(body))
    fn, _ = trace_file(path, "f")
    return propagate(fn, OpResolver(load_all(CHECKOUT / "specs"), Registry(CHECKOUT / "generated")))


def returned(fn: ir.Function) -> ir.Expr:
    return next(s.value for s in fn.body if isinstance(s, ir.Return))


@pytest.mark.parametrize("call,op,axis_param", [
    ("np.sum(x)", "numpy.sum", "axis"), ("x.mean()", "numpy.mean", "axis"), ("np.max(x, axis=None)", "numpy.max", "axis"),
    ("x.std(ddof=1)", "numpy.std", "axis"), ("np.argmax(x)", "numpy.argmax", "axis"),
    ("torch.linalg.vector_norm(t)", "torch.linalg.vector_norm", "dim")])
def test_a_reduction_without_an_axis_reduces_the_flattened_array_over_axis_0(tmp_path: Path, call: str, op: str,
                                                                             axis_param: str) -> None:
    out = "npt.NDArray[np.int64]" if "argmax" in call else "T32" if "torch" in call else "F32"
    fn = typed(tmp_path, f"def f(x: F32, t: T32) -> {out}:\n    return {call}\n")
    e = returned(fn)
    assert isinstance(e, ir.Op) and e.spec.op == op
    names = [p.name for p in e.overload.sig.params]
    flat, axis = e.bound[0], e.bound[names.index(axis_param)]
    assert isinstance(flat, ir.Op) and flat.spec.op == "numpy.reshape"
    assert isinstance(flat.bound[1], ir.ListLit) and [c.value for c in flat.bound[1].items] == [-1]
    assert isinstance(axis, ir.Const) and axis.value == 0
    if "ddof" in call:
        assert e.bound[names.index("ddof")].value == 1


def test_an_explicit_axis_is_not_lowered(tmp_path: Path) -> None:
    e = returned(typed(tmp_path, "def f(x: F32, t: T32) -> F32:\n    return x.sum(axis=-1)\n"))
    assert isinstance(e.bound[0], ir.Var) and e.bound[1].value == -1


@pytest.mark.parametrize("body,message,hint", [
    ("def f(x: F32, t: T32) -> F32:\n    return np.max(x, keepdims=True)\n",
     "keepdims=True with no axis (every element reduced) is not supported", "leave keepdims out"),
    ("def f(x: F32, t: T32) -> T32:\n    return torch.max(t)\n",
     "torch.max of the whole tensor (no dim) is not supported", "torch.max(t.reshape(-1), 0).values"),
    ("def f(x: F32, t: T32) -> float:\n    return x.item(0)\n", "item() with indices is not supported", "float(a[i, j])"),
])
def test_what_stays_refused_says_why(tmp_path: Path, body: str, message: str, hint: str) -> None:
    with pytest.raises(CompileError) as info:
        typed(tmp_path, body)
    assert message in info.value.message, info.value.render()
    assert hint in (info.value.hint or ""), info.value.render()


def test_scalars_of_arrays_raise_as_numpy_does(tmp_path: Path) -> None:
    """float() and int() take a 0-d array only (TypeError), bool() and item() one element of any rank
    (ValueError); the values are the element's."""
    source = tmp_path / "s.py"
    source.write_text(PRELUDE + textwrap.dedent("""\
        def f(x: F32, ids: npt.NDArray[np.int64], how: int) -> float:
            if how == 0:
                return float(x)
            if how == 1:
                return float(int(ids))
            if how == 2:
                return 1.0 if x else 0.0
            return x.item()
        """))
    compile_function(Project(CHECKOUT), source, "f", tmp_path / "out")
    fn = load_compiled(tmp_path / "out")

    def python(x, ids, how):
        return [lambda: float(x), lambda: float(int(ids)), lambda: 1.0 if x else 0.0, lambda: x.item()][how]()

    arrays = [np.array(2.5, np.float32), np.array([0.0], np.float32), np.zeros((1, 1), np.float32),
              np.zeros(0, np.float32), np.ones(3, np.float32)]
    for x in arrays:
        for how in range(4):
            ids = np.array(7, np.int64) if x.ndim == 0 else np.arange(x.size, dtype=np.int64)
            try:
                want = python(x, ids, how)
            except (TypeError, ValueError) as exc:
                with pytest.raises(type(exc)):
                    fn(x, ids, how)
            else:
                assert fn(x, ids, how) == want, (x, how)
