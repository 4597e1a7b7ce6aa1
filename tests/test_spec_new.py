"""``opgen spec new``: a draft from the reference that loads, lints clean and passes ``spec check``, says what it
guessed, and refuses to overwrite or to shadow an existing spec."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from opgen.cli import EXIT_FAILED, EXIT_OK, app
from opgen.spec.check import check_spec
from opgen.spec.lint import lint_spec
from opgen.spec.model import load_all, load_spec
from tests.conftest import isolate_env, make_project

runner = CliRunner()

# The ops these tests draft: a project where they have no spec yet (the library may ship some of
# them; drafting is what is tested here, not the shipped spec).
DRAFTED = ("numpy.tanh", "torch.nn.functional.silu", "numpy.log", "numpy.sinh", "numpy.arctan2")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """conftest's project, less the specs of the ops drafted here."""
    root = make_project(tmp_path / "project")
    isolate_env(monkeypatch, root)
    for op in DRAFTED:
        (root / "specs" / (op.replace(".", "/") + ".yaml")).unlink(missing_ok=True)
    return root


def drafted(path: Path, name: str, *extra: str) -> str:
    result = runner.invoke(app, ["spec", "new", name, "--output", str(path), *extra])
    assert result.exit_code == EXIT_OK, result.output
    assert path.exists()
    return result.stderr


def test_numpy_tanh(project: Path, tmp_path: Path) -> None:
    path = tmp_path / "tanh.yaml"
    said = drafted(path, "numpy.tanh")
    spec = load_spec(path)
    assert spec.op == "numpy.tanh" and spec.reference == "numpy.tanh"
    assert [o.name for o in spec.overloads] == ["f32", "f64"]
    assert spec.overload("f32").signature == "(x: tensor[float32]) -> tensor[float32]"
    x = spec.overload("f32").domain["x"]
    # Far past saturation (|x| ~ 10): a tanh computed from exp(2x) is nan from x ~ 44.4 on.
    assert x.min is not None and x.max is not None and x.max >= 1000 and x.min == -x.max
    assert set(x.special) == {"nan", "inf", "-inf", "-0", "subnormal"}
    f32 = spec.tolerance["float32"]
    assert 2e-7 < f32.rtol < 1e-6 and f32.atol <= 1e-43 and "Measured" in f32.why
    assert spec.overload("f32").bench and spec.overload("f32").bench[0].args["x"].shape == [8, 128, 1536]
    # It says what it guessed, on stderr and in the YAML.
    assert "guessed: numpy.tanh [f32] x: domain" in said and "saturates" in said
    assert "measured: tolerance.float32" in said
    text = path.read_text()
    assert text.count("# guessed:") >= 3 and "# measured:" in text
    # The draft is sound: it loads, lints clean and passes spec check (which `spec new` also ran).
    assert all(r.ok for r in lint_spec(spec))
    assert check_spec(spec).ok
    assert "ok   numpy.tanh [f32]" in said


def test_torch_silu_measures_the_flush_to_minus_zero(project: Path, tmp_path: Path) -> None:
    """The issue's op: PyTorch's float32 silu returns -0.0 below -88.7, where the exact result is as large as
    2.6e-37; the drafted atol must cover that (and spec check must pass)."""
    path = tmp_path / "silu.yaml"
    said = drafted(path, "torch.nn.functional.silu")
    spec = load_spec(path)
    o = spec.overload("f32")
    assert o.signature == "(input: tensor[float32]) -> tensor[float32]"
    assert o.domain["input"].min is not None and o.domain["input"].min < -88.8  # reaches the edge
    assert 2.6e-37 < spec.tolerance["float32"].atol < 1e-35
    assert "left out inplace" in said
    assert all(r.ok for r in lint_spec(spec))
    assert check_spec(spec).ok


def test_a_binary_ufunc_gets_numpys_parameter_names_and_a_broadcast_shape(project: Path, tmp_path: Path) -> None:
    path = tmp_path / "arctan2.yaml"
    drafted(path, "numpy.arctan2", "--no-check")
    spec = load_spec(path)
    o = spec.overload("f32")
    assert o.signature == "(x1: tensor[float32], x2: tensor[float32]) -> tensor[float32]"
    assert o.shape == "elementwise"


def test_the_default_path_follows_the_op_name_and_the_draft_joins_the_project(project: Path) -> None:
    result = runner.invoke(app, ["spec", "new", "numpy.sinh", "--no-check"])
    assert result.exit_code == EXIT_OK, result.output
    path = project / "specs" / "numpy" / "sinh.yaml"
    assert path.exists() and f"wrote {path}" in result.stderr
    assert "numpy.sinh" in load_all(project / "specs")  # every command loads it now, without error


def test_it_refuses_to_overwrite_and_says_how_to_proceed(project: Path, tmp_path: Path) -> None:
    path = tmp_path / "tanh.yaml"
    path.write_text("# mine\n")
    result = runner.invoke(app, ["spec", "new", "numpy.tanh", "--output", str(path)])
    assert result.exit_code == EXIT_FAILED
    assert "already exists" in result.stderr and "--force" in result.stderr and "--output" in result.stderr
    assert path.read_text() == "# mine\n"
    drafted(path, "numpy.tanh", "--force", "--no-check")
    assert load_spec(path).op == "numpy.tanh"


def test_it_refuses_a_second_spec_of_a_shipped_op(project: Path) -> None:
    result = runner.invoke(app, ["spec", "new", "numpy.exp", "--output", str(project / "specs" / "numpy" / "exp2.yaml")])
    assert result.exit_code == EXIT_FAILED
    assert "already has a spec" in result.stderr and "exp.yaml" in result.stderr
    assert not (project / "specs" / "numpy" / "exp2.yaml").exists()


@pytest.mark.parametrize("name, words", [
    ("numpy.no_such_function", "does not resolve"),
    ("json.dumps", "neither a NumPy ufunc nor a PyTorch op"),
    ("numpy.divmod", "2 outputs"),
    ("torch.matmul", "elementwise"),
])
def test_it_refuses_what_it_cannot_draft_with_a_hint(project: Path, name: str, words: str) -> None:
    result = runner.invoke(app, ["spec", "new", name, "--stdout"])
    assert result.exit_code == EXIT_FAILED, result.output
    assert words in result.stderr and "fix:" in result.stderr and "Traceback" not in result.output


def test_stdout_prints_a_spec_that_loads(project: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["spec", "new", "numpy.log", "--stdout"])
    assert result.exit_code == EXIT_OK, result.output
    data = yaml.safe_load(result.stdout)
    assert data["op"] == "numpy.log"
    assert data["overloads"][0]["domain"]["x"]["min"] == 0  # log is nan below 0: the domain stops there
    path = tmp_path / "log.yaml"
    path.write_text(result.stdout)
    spec = load_spec(path)
    assert check_spec(spec).ok
    assert not (project / "specs" / "numpy" / "log.yaml").exists()
