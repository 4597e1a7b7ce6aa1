"""Model code as people write it, beyond the subset's first spelling: array annotations without a dtype
(the library's default, ``--dtype`` to choose another), torch's methods reached through the specs'
method maps (view, reshape, unsqueeze, mean, sum, argmax, pow) with torch's error kinds
(``library_errors``), ``keepdims=True`` on kernels without it, ``masked_fill``, ``contiguous()``,
``item()``/``float()`` of tensors, unary minus and ``~`` on arrays, ``float("-inf")`` and parameters typed
by their literal defaults. The differential check against Python is the realistic collection's
(examples/compile/realistic/torch_style.py); these tests type functions, and build one module of small
ones for the runtime's behaviour."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from opgen.cli import app
from opgen.compiler import CompileError, compile_many, ir
from opgen.compiler.propagate import propagate
from opgen.compiler.resolve import OpResolver
from opgen.compiler.tracer import trace_file
from opgen.compiler.types import tensor_of
from opgen.host import load_compiled
from opgen.project import Project
from opgen.registry import Registry
from opgen.spec.model import load_all
from tests.compile_support import CHECKOUT

PRELUDE = """\
from typing import Annotated, Any
import numpy as np
import numpy.typing as npt
import torch
"""


def typed(tmp_path: Path, body: str, dtypes: dict[str, str] | None = None) -> ir.Function:
    path = tmp_path / "m.py"
    path.write_text(PRELUDE + textwrap.dedent(body))
    fn, _ = trace_file(path, "f", dtypes)
    return propagate(fn, OpResolver(load_all(CHECKOUT / "specs"), Registry(CHECKOUT / "generated")))


def refused(tmp_path: Path, body: str, dtypes: dict[str, str] | None = None) -> CompileError:
    with pytest.raises(CompileError) as info:
        typed(tmp_path, body, dtypes)
    return info.value


@pytest.mark.parametrize("annotation,dtype,flavor", [
    ("torch.Tensor", "float32", "torch"), ("np.ndarray", "float64", "numpy"), ("npt.NDArray", "float64", "numpy"),
    ("npt.NDArray[Any]", "float64", "numpy"), ("'torch.Tensor'", "float32", "torch")])
def test_an_array_annotation_without_a_dtype_takes_its_librarys_default(tmp_path: Path, annotation: str, dtype: str,
                                                                         flavor: str) -> None:
    fn = typed(tmp_path, f"def f(x: {annotation}) -> {annotation}:\n    return x * 2\n")
    p = fn.params[0]
    assert (p.type, p.flavor, p.dtype_assumed) == (tensor_of(dtype), flavor, True)
    assert fn.returns == tensor_of(dtype)


def test_a_bare_return_annotation_takes_the_dtype_the_body_returns(tmp_path: Path) -> None:
    fn = typed(tmp_path, "def f(x: torch.Tensor) -> torch.Tensor:\n    return x.argmax(dim=-1)\n")
    assert fn.returns == tensor_of("int64")
    fn = typed(tmp_path, "def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:\n"
                         "    return x.argmax(dim=-1), x\n")
    assert [str(t) for t in fn.returns.items] == ["tensor[int64]", "tensor[float32]"]
    # an annotation naming its dtype still holds the body to it
    error = refused(tmp_path, "def f(x: torch.Tensor) -> Annotated[torch.Tensor, torch.float32]:\n"
                              "    return x.argmax(dim=-1)\n")
    assert "annotated" in error.message


def test_dtype_overrides_an_assumed_dtype_and_nothing_else(tmp_path: Path) -> None:
    fn = typed(tmp_path, "def f(x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:\n    return x * m\n",
               {"m": "int64"})
    assert [str(p.type) for p in fn.params] == ["tensor[float32]", "tensor[int64]"]
    assert [p.dtype_assumed for p in fn.params] == [True, False]
    error = refused(tmp_path, "def f(x: npt.NDArray[np.float32]) -> int:\n    return 1\n", {"x": "int64"})
    assert "the annotation names float32" in error.message
    error = refused(tmp_path, "def f(x: int) -> int:\n    return 1\n", {"x": "int64"})
    assert "not an array" in error.message
    error = refused(tmp_path, "def f(x: torch.Tensor) -> int:\n    return 1\n", {"y": "int64"})
    assert "--dtype names y, not a parameter of f" in error.message and "x" in error.hint


def test_an_unannotated_parameter_with_a_literal_default_has_the_defaults_type(tmp_path: Path) -> None:
    fn = typed(tmp_path, "def f(x: torch.Tensor, eps=1e-6, n=3, on=True, name='a') -> torch.Tensor:\n"
                         "    return x + eps\n")
    assert [str(p.type) for p in fn.params[1:]] == ["float", "int", "bool", "str"]
    error = refused(tmp_path, "def f(x: torch.Tensor, eps) -> torch.Tensor:\n    return x\n")
    assert "parameter 'eps' has no type annotation" in error.message


@pytest.mark.parametrize("call,op", [
    ("t.mean(-1, keepdim=True)", "numpy.mean"), ("torch.mean(t, dim=0)", "numpy.mean"),
    ("t.sum(1)", "numpy.sum"), ("torch.sum(t, 0)", "numpy.sum"), ("t.argmax(dim=-1)", "numpy.argmax"),
    ("torch.argmin(t, 1)", "numpy.argmin"), ("t.unsqueeze(-1)", "numpy.expand_dims"),
    ("torch.unsqueeze(t, dim=0)", "numpy.expand_dims"), ("t.view(-1)", "numpy.reshape"),
    ("t.view(2, -1)", "numpy.reshape"), ("t.reshape((2, -1))", "numpy.reshape"), ("torch.reshape(t, (-1,))", "numpy.reshape"),
    ("t.pow(2)", "operator.pow")])
def test_torch_methods_and_functions_reach_the_numpy_kernels(tmp_path: Path, call: str, op: str) -> None:
    fn = typed(tmp_path, f"def f(t: torch.Tensor) -> torch.Tensor:\n    return {call}\n")
    e = next(s.value for s in fn.body if isinstance(s, ir.Return))
    assert isinstance(e, ir.Op) and e.spec.op == op


def test_keepdims_on_a_kernel_without_it_puts_the_axis_back(tmp_path: Path) -> None:
    for call in ("np.sum(x, axis=-2, keepdims=True)", "x.sum(axis=1, keepdims=True)", "t.sum(-1, keepdim=True)"):
        fn = typed(tmp_path, f"def f(x: np.ndarray, t: torch.Tensor) -> np.ndarray:\n    return {call}\n"
                   .replace("-> np.ndarray", "-> torch.Tensor" if call.startswith("t.") else "-> np.ndarray"))
        e = next(s.value for s in fn.body if isinstance(s, ir.Return))
        assert e.spec.op == "numpy.expand_dims" and e.bound[0].spec.op == "numpy.sum", call
    error = refused(tmp_path, "def f(x: np.ndarray) -> np.ndarray:\n    return np.sum(x, keepdims=True)\n")
    assert "keepdims=True with no axis" in error.message
    error = refused(tmp_path, "def f(x: np.ndarray, a: int) -> np.ndarray:\n    return np.sum(x, a + 1, keepdims=True)\n")
    assert "computed axis" in error.message and "ax = " in error.hint
    error = refused(tmp_path, "def f(x: np.ndarray, k: bool) -> np.ndarray:\n    return np.sum(x, 0, keepdims=k)\n")
    assert "keepdims has no counterpart" in error.message


def test_unary_operators_on_arrays(tmp_path: Path) -> None:
    fn = typed(tmp_path, "def f(x: np.ndarray, m: npt.NDArray[np.bool_]) -> np.ndarray:\n    return np.where(~m, -x, x)\n")
    e = next(s.value for s in fn.body if isinstance(s, ir.Return))
    assert [a.spec.op for a in e.bound[:2]] == ["numpy.logical_not", "numpy.negative"]
    error = refused(tmp_path, "def f(m: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:\n    return -m\n")
    assert "numpy.negative" in error.message


def test_float_of_a_string_literal_is_a_constant(tmp_path: Path) -> None:
    fn = typed(tmp_path, "def f(x: float) -> float:\n    return max(x, float('-inf'))\n")
    assert any(isinstance(c, ir.Const) and c.value == float("-inf") for s in fn.body for c in ir.walk(s.value))
    error = refused(tmp_path, "def f(x: float) -> float:\n    return x + float('abc')\n")
    assert "raises ValueError in Python" in error.message


def test_masked_fill_refuses_what_torch_refuses_or_casts(tmp_path: Path) -> None:
    error = refused(tmp_path, "def f(t: torch.Tensor, m: torch.Tensor) -> torch.Tensor:\n    return t.masked_fill(m, 0.0)\n")
    assert "torch requires a bool mask" in error.message and "mask == 0" in error.hint
    error = refused(tmp_path, "def f(t: Annotated[torch.Tensor, torch.int64], m: Annotated[torch.Tensor, torch.bool]) "
                              "-> torch.Tensor:\n    return t.masked_fill(m, 0.5)\n")
    assert "float value into a tensor[int64]" in error.message


BUILT = """\
def view_heads(t: torch.Tensor, h: int) -> torch.Tensor:
    return t.view(t.shape[0], h, -1)

def argmax_dim(t: torch.Tensor, d: int) -> torch.Tensor:
    return t.argmax(dim=d)

def unsqueeze_at(t: torch.Tensor, d: int) -> torch.Tensor:
    return t.unsqueeze(d)

def item_of(t: torch.Tensor) -> float:
    return t.item()

def float_of(t: torch.Tensor) -> float:
    return float(t)

def truth_of(t: torch.Tensor) -> bool:
    return bool(t)

def fill_masked(t: torch.Tensor, keep: Annotated[torch.Tensor, torch.bool]) -> torch.Tensor:
    return t.contiguous().masked_fill(~keep, float("-inf"))

def scale(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    return -x * m
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("model-code")
    source = out / "m.py"
    source.write_text(PRELUDE + BUILT)
    names = [line[4:line.index("(")] for line in BUILT.splitlines() if line.startswith("def ")]
    compile_many(Project(CHECKOUT), [(source, n, out / n) for n in names])
    return {n: load_compiled(out / n) for n in names}


def outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as exc:  # noqa: BLE001 - the kind is what is compared
        return type(exc), None


@pytest.mark.parametrize("name,args", [
    ("view_heads", (torch.arange(12.0).reshape(2, 6), 3)), ("view_heads", (torch.arange(12.0).reshape(2, 6), 4)),
    ("argmax_dim", (torch.ones(2, 3), 1)), ("argmax_dim", (torch.ones(2, 3), 2)), ("argmax_dim", (torch.ones(2, 0), 1)),
    ("unsqueeze_at", (torch.ones(2), -3)), ("unsqueeze_at", (torch.ones(2), 1)),
    ("item_of", (torch.ones(1, 1),)), ("item_of", (torch.ones(2),)), ("item_of", (torch.ones(0),)),
    ("float_of", (torch.ones(1, 1, 1),)), ("float_of", (torch.ones(3),)),
    ("truth_of", (torch.zeros(1),)), ("truth_of", (torch.zeros(2),)), ("truth_of", (torch.zeros(0),)),
    ("fill_masked", (torch.arange(6.0).reshape(2, 3).t(), torch.tensor([[True, False]] * 3))),
    ("scale", (np.array([0.0, -0.0, 2.5]), np.array([1.0, 1.0, -2.0]))),
])
def test_torch_spellings_run_and_raise_as_torch_does(built: dict, name: str, args: tuple) -> None:
    namespace: dict = {}
    exec(compile(PRELUDE + BUILT, "m.py", "exec"), namespace)  # noqa: S102 - the test's own source
    want, got = outcome(namespace[name], *args), outcome(built[name], *args)
    assert want[0] == got[0], (want, got)
    if want[0] == "ok":
        w, g = want[1], got[1]
        if isinstance(w, torch.Tensor):
            assert g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w)
        elif isinstance(w, np.ndarray):
            assert g.dtype == w.dtype and np.array_equal(np.signbit(g), np.signbit(w)) and np.array_equal(g, w)
        else:
            assert type(g) is type(w) and g == w


def test_a_wrong_dtype_for_an_assumed_one_says_how_to_compile_for_it(built: dict) -> None:
    with pytest.raises(TypeError) as info:
        built["scale"](np.array([1, 2]), np.array([1.0, 1.0]))
    message = str(info.value)
    assert "x must have dtype float64, got int64" in message and "--dtype x=int64" in message
    assert "npt.NDArray[np.int64]" in message
    with pytest.raises(TypeError, match=r"--dtype t=int64.*Annotated\[torch.Tensor, torch.int64\]"):
        built["item_of"](torch.ones(1, dtype=torch.int64))


def test_the_cli_takes_dtype_overrides(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(PRELUDE + "def f(t: torch.Tensor, m: torch.Tensor) -> torch.Tensor:\n    return t * m\n")
    runner = CliRunner()
    result = runner.invoke(app, ["compile", f"{source}:f", "-o", str(tmp_path / "out"), "--dtype", "m=int64",
                                 "--root", str(CHECKOUT)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "f.manifest.json").read_text())
    assert [(p["type"], p.get("dtype_assumed", False)) for p in manifest["params"]] == \
        [("tensor[float32]", True), ("tensor[int64]", False)]
    f = load_compiled(tmp_path / "out")
    got = f(torch.ones(2), torch.tensor([2, 3]))
    assert got.dtype == torch.float32 and got.tolist() == [2.0, 3.0]
    result = runner.invoke(app, ["compile", f"{source}:f", "-o", str(tmp_path / "bad"), "--dtype", "m=int65",
                                 "--root", str(CHECKOUT)])
    assert result.exit_code != 0 and "--dtype 'm=int65' is not NAME=DTYPE" in result.output
