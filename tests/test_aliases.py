"""One spec per op, reachable by every common spelling: aliases (numpy.matmul, torch.matmul for
operator.matmul) and methods (ndarray.sum), through the registry's lookup, the CLI and the
compiler; a name two specs claim is an error; names do not bear on correctness (hash)."""

from __future__ import annotations

import numpy as np

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.compiler import ir
from opgen.compiler.propagate import propagate
from opgen.compiler.resolve import OpResolver
from opgen.compiler.tracer import trace_file
from opgen.errors import OpgenError, SpecError
from opgen.registry import Registry
from opgen.spec.model import load_all
from opgen.spec.names import all_names, find_spec, method_named, spec_named
from tests.compile_support import CHECKOUT

SPECS = load_all(CHECKOUT / "specs")


def test_aliases_and_methods_name_their_spec() -> None:
    assert spec_named(SPECS, "numpy.matmul").op == spec_named(SPECS, "torch.matmul").op == "operator.matmul"
    assert spec_named(SPECS, "torch.softmax").op == "torch.nn.functional.softmax"
    assert spec_named(SPECS, "operator.matmul").op == "operator.matmul"
    assert spec_named(SPECS, "numpy.nothing") is None
    assert spec_named(SPECS, "ndarray.sum").op == "numpy.sum"  # a method names its op too
    spec, method = method_named(SPECS, "ndarray.sum")
    assert spec.op == "numpy.sum" and method.receiver is None
    assert all_names(SPECS)["Tensor.softmax"] == "torch.nn.functional.softmax"
    with pytest.raises(OpgenError, match="no spec for numpy.matmull") as err:
        find_spec(SPECS, "numpy.matmull")
    assert "numpy.matmul (operator.matmul)" in err.value.render()


def test_the_registry_serves_an_alias_the_entry_of_its_op() -> None:
    registry = Registry(CHECKOUT / "generated")
    by_alias = registry.lookup("torch.matmul", ["tensor[float32]", "tensor[float32]"], SPECS)
    by_name = registry.lookup("operator.matmul", ["tensor[float32]", "tensor[float32]"], SPECS)
    assert by_alias.path == by_name.path and by_alias.op == "operator.matmul"


def test_the_cli_takes_an_alias_for_its_op() -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["show", "numpy.matmul", "--overload", "f32", "--json", "--root", str(CHECKOUT)])
    assert shown.exit_code == 0, shown.output
    (entry,) = json.loads(shown.stdout)
    assert entry["op"] == "operator.matmul" and entry["status"] == "verified"
    linted = runner.invoke(app, ["lint", "torch.softmax", "--root", str(CHECKOUT)])
    assert linted.exit_code == 0 and "torch.nn.functional.softmax" in linted.stdout
    unknown = runner.invoke(app, ["show", "torch.matmull", "--root", str(CHECKOUT)])
    assert unknown.exit_code == 1 and "did you mean torch.matmul (operator.matmul)" in unknown.stderr.replace("\n", "")


def test_the_compiler_resolves_an_alias_to_its_op(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent('''\
        import numpy as np
        import numpy.typing as npt
        import torch

        def f(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
            c = np.matmul(a, b)
            return torch.matmul(c, b)
        '''))
    fn, _ = trace_file(path, "f")
    typed = propagate(fn, OpResolver(SPECS, Registry(CHECKOUT / "generated")))
    ops = [e for s in typed.body for e in ([s.value] if isinstance(s, ir.Assign) else [getattr(s, "value", None)])
           if isinstance(e, ir.Op)]
    assert [o.spec.op for o in ops] == ["operator.matmul", "operator.matmul"]
    assert {o.entry.path for o in ops} == {Registry(CHECKOUT / "generated").get("operator.matmul", "f32", "cpu-cpp").path}


def test_a_name_two_specs_claim_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "specs"
    shutil.copytree(CHECKOUT / "specs", root)
    exp = root / "numpy" / "exp.yaml"
    exp.write_text(exp.read_text().replace("aliases: [torch.exp]", "aliases: [torch.exp, torch.matmul]", 1))
    with pytest.raises(SpecError, match="'torch.matmul' already names") as err:
        load_all(root)
    assert "matmul.yaml" in str(err.value) and "exp.yaml" in str(err.value)  # both claimants named
    exp.write_text(exp.read_text().replace("aliases: [torch.exp, torch.matmul]", "aliases: [exp]", 1))
    with pytest.raises(SpecError, match="an alias is a dotted Python name"):
        load_all(root)


def test_names_do_not_bear_on_correctness(tmp_path: Path) -> None:
    root = tmp_path / "specs"
    shutil.copytree(CHECKOUT / "specs", root)
    matmul = root / "operator" / "matmul.yaml"
    matmul.write_text(matmul.read_text().replace("aliases: [numpy.matmul, torch.matmul]\n", "", 1))
    bare = load_all(root)["operator.matmul"]
    named = SPECS["operator.matmul"]
    assert not bare.aliases and named.aliases
    assert all(bare.overload_hash(o) == named.overload_hash(o) for o in named.overloads)


def test_the_compiler_calls_a_method_as_the_op_its_spec_declares(tmp_path: Path) -> None:
    """a.sum(axis=0) is numpy.sum(a, axis=0) (ndarray.sum), t.exp() is numpy.exp(t) (Tensor.exp),
    chained; compiled, the function gives what Python gives."""
    # Compiling builds a library: only this test needs the compiler driver and the host.
    from opgen.compiler import compile_function
    from opgen.host import load_compiled
    from opgen.project import Project

    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent('''\
        import numpy as np
        import numpy.typing as npt

        def f(a: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
            return a.sum(axis=0) + np.exp(a).sum(1).sum(0)
        '''))
    fn, _ = trace_file(path, "f")
    typed = propagate(fn, OpResolver(SPECS, Registry(CHECKOUT / "generated")))
    calls = [e for e in _walk(typed.body[0].value) if isinstance(e, ir.MethodCall)]
    assert sorted(c.op for c in calls) == ["numpy.sum", "numpy.sum", "numpy.sum"]
    assert all(c.bound[0] is not None and len(c.bound) == 2 for c in calls)  # receiver bound to a, axis next
    compile_function(Project(CHECKOUT), path, "f", tmp_path / "out")
    compiled = load_compiled(tmp_path / "out")
    a = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    import importlib.util
    spec = importlib.util.spec_from_file_location("m", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    np.testing.assert_allclose(compiled(a), module.f(a), rtol=1e-5, atol=1e-5)


def _walk(e):
    yield e
    for c in e.children:
        yield from _walk(c)
