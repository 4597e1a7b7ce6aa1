"""``opgen show`` for entries that do not exist yet: the exact declaration a kernel must implement
(what the prompt will ask for), per target, and why an overload cannot be had."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from opgen.cli import app
from opgen.spec.model import load_all
from opgen.targets.catalog import target_for
from tests.conftest import make_project

runner = CliRunner()


def show(root: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["show", *args, "--root", str(root)])
    return result.exit_code, result.stdout


def test_a_missing_entry_shows_the_declaration_its_kernel_must_implement(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")  # the shipped specs, an empty registry
    spec = load_all(root / "specs")["operator.matmul"]
    for target in ("cpp", "rust", "cuda"):
        code, out = show(root, "operator.matmul", "--overload", "f32", "--target", target)
        assert code == 0, out
        t = target_for(target)
        assert f": missing" in out and f"the {t.language} function to write:" in out
        for line in t.declaration(spec, spec.overload("f32")).splitlines():
            assert line in out, (target, line, out)
        assert f"opgen synthesize operator.matmul --overload f32 --target {target}" in out
    code, out = show(root, "operator.matmul", "--overload", "f32", "--target", "rust")
    assert "pub fn operator_matmul__f32(" in out
    result = runner.invoke(app, ["show", "operator.matmul", "--overload", "f32", "--json", "--root", str(root)])
    (shown,) = json.loads(result.stdout)
    assert shown["status"] == "missing" and shown["declaration"].startswith("void operator_matmul__f32(")
    assert shown["signature"]["c_symbol"] == "opgen_operator_matmul__f32"


def test_an_overload_a_target_cannot_have_says_why(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    code, out = show(root, "operator.matmul", "--overload", "f64", "--target", "metal")
    assert code == 0 and ": n/a" in out and "float64" in out
    code, out = show(root, "numpy.exp", "--target", "cuda")
    assert code == 0 and "numpy.exp does not list target cuda" in out
