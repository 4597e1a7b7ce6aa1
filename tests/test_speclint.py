"""The spec lint: specs under which a constant or all-zero kernel would pass are rejected.

Each rule has a negative test pinning its message (a bad spec written to a temp
project, linted through `opgen lint`), every shipped spec passes, and `opgen
synthesize` refuses to ask the LLM about a spec the lint rejects.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.spec.model import load_all, load_spec
from opgen.spec.lint import ZERO_PASS_LIMIT, lint_overload
from tests.conftest import CHECKOUT
from tests.fake_openai import FakeOpenAI, reply_tool_call

runner = CliRunner()


def always_seven(a: int, b: int) -> int:
    """A reference that ignores its inputs (importable as tests.test_speclint.always_seven)."""
    return 7


def lint(root: Path, *args: str):
    return runner.invoke(app, ["lint", *args, "--root", str(root)], catch_exceptions=False)


def write_spec(root: Path, rel: str, text: str) -> Path:
    path = root / "specs" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def flat(text: str) -> str:
    return " ".join(text.split())


ELEMENTWISE = """\
op: {op}
summary: test spec
reference: {reference}
overloads:
  - name: f32
    signature: "(x: tensor[float32]) -> tensor[float32]"
    shape: {{same_as: x}}
    domain:
      x: {domain}
{tolerance}targets: [cpp]
"""


def elementwise(op: str, reference: str, domain: str = "{min: -10, max: 10}", tolerance: str = "") -> str:
    return ELEMENTWISE.format(op=op, reference=reference, domain=domain, tolerance=tolerance)


# ----------------------------------------------------------------- shipped specs


SHIPPED = load_all(CHECKOUT / "specs")


# One test per spec, so the workers share the lint of the whole library (minutes on 2 cores)
# instead of one worker linting it at the end of the run; the negative tests below lint temp
# projects through `opgen lint` without op names (every spec of the root).
@pytest.mark.parametrize("op", sorted(SHIPPED))
def test_every_shipped_spec_passes_the_lint(op: str) -> None:
    result = runner.invoke(app, ["lint", op, "--json", "--root", str(CHECKOUT)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["findings"] == 0
    assert sorted(r["overload"] for r in report["results"]) == sorted(o.name for o in SHIPPED[op].overloads)
    for r in report["results"]:
        assert r["op"] == op and r["ok"] and r["changed"] > 0, r
        if r["zero_passes"] is not None:  # float results: zeros pass almost nowhere
            assert r["zero_passes"] <= ZERO_PASS_LIMIT * r["informative"], r


def test_the_lint_is_deterministic() -> None:
    spec = load_spec(CHECKOUT / "specs" / "numpy" / "sum.yaml")
    first = lint_overload(spec, spec.overload("f32")).as_dict()
    assert lint_overload(spec, spec.overload("f32")).as_dict() == first


# ----------------------------------------------------------------- rule 1: the result must depend on the inputs


def test_a_reference_that_ignores_its_tensor_input_is_rejected(tmp_path: Path) -> None:
    write_spec(tmp_path, "numpy/negative.yaml", elementwise("numpy.negative", "numpy.zeros_like"))
    result = lint(tmp_path)
    assert result.exit_code == 1, result.output
    out = flat(result.output)
    assert re.search(
        r"FAIL \S*specs/numpy/negative\.yaml:5: numpy\.negative \[f32\]: the reference numpy\.zeros_like gave the "
        r"same result for different input values in all \d+ non-empty examples: its output does not depend on its "
        r"inputs, so a kernel that returns a constant would pass", out), out
    assert ("fix: name a reference that computes the op from its inputs (e.g. numpy.exp, not numpy.zeros_like)"
            in out)
    assert "1 overloads linted, 1 finding(s)" in out


def test_a_constant_scalar_reference_is_rejected(tmp_path: Path) -> None:
    write_spec(tmp_path, "operator/sub.yaml", """\
op: operator.sub
summary: test spec
reference: tests.test_speclint.always_seven
overloads:
  - name: int
    signature: "(a: int, b: int) -> int"
targets: [cpp]
""")
    result = lint(tmp_path, "--json")
    assert result.exit_code == 1, result.output
    (r,) = json.loads(result.output)["results"]
    assert r["changed"] == 0 and r["compared"] >= 20
    assert r["zero_passes"] is None  # ints are exact: only the dependence rule applies
    (finding,) = r["findings"]
    assert finding["kind"] == "constant_output"
    assert finding["path"].endswith("specs/operator/sub.yaml") and finding["line"] == 5
    assert finding["message"].startswith("the reference tests.test_speclint.always_seven gave the same result")


# ----------------------------------------------------------------- rule 2: magnitudes above the tolerance


def test_a_domain_of_tiny_values_under_the_default_atol_is_rejected(tmp_path: Path) -> None:
    write_spec(tmp_path, "numpy/sin.yaml", elementwise("numpy.sin", "numpy.sin", "{min: -1.0e-9, max: 1.0e-9}"))
    result = lint(tmp_path)
    assert result.exit_code == 1, result.output
    out = flat(result.output)
    m = re.search(
        r"FAIL \S*specs/numpy/sin\.yaml:5: numpy\.sin \[f32\]: an all-zero result passes (\d+)% of non-empty "
        r"examples \((\d+) of the (\d+) whose reference is not all zero\): reference magnitudes ~\de-(09|10) are "
        r"under atol 1e-05 \(float32\)", out)
    assert m, out
    assert m.group(1) == "100" and m.group(2) == m.group(3)
    assert ("fix: tighten atol for float32 (the spec's 'tolerance') below the reference magnitudes that matter, "
            "or widen the domain so reference results sit well above atol") in out


def test_the_same_domain_with_a_tight_atol_passes(tmp_path: Path) -> None:
    tight = "tolerance:\n  float32: {rtol: 1.3e-6, atol: 1.0e-30}\n"
    write_spec(tmp_path, "numpy/sin.yaml",
               elementwise("numpy.sin", "numpy.sin", "{min: -1.0e-9, max: 1.0e-9}", tight))
    result = lint(tmp_path)
    assert result.exit_code == 0, result.output
    assert "ok   numpy.sin [f32]: result changes with the inputs" in result.output


def test_tiny_values_under_an_abs_inputs_tolerance_are_rejected(tmp_path: Path) -> None:
    write_spec(tmp_path, "numpy/sum.yaml", """\
op: numpy.sum
summary: test spec
reference: numpy.sum
overloads:
  - name: f32
    signature: "(a: tensor[float32], axis: int) -> tensor[float32]"
    shape: {reduce: a, axis: axis}
    domain:
      a: {min: -1.0e-9, max: 1.0e-9, min_dims: 1, max_dims: 3}
      axis: {axis_of: a}
tolerance:
  float32: {rtol: 1.0e-4, atol: 1.0e-5, basis: abs_inputs}
targets: [cpp]
""")
    result = lint(tmp_path)
    assert result.exit_code == 1, result.output
    assert re.search(r"numpy\.sum \[f32\]: an all-zero result passes \d+% of non-empty examples .*: reference "
                     r"magnitudes ~\S+ are under atol 1e-05 \+ rtol 0\.0001 \* reference of \|inputs\| \(float32\)",
                     flat(result.output)), result.output


# ----------------------------------------------------------------- references that cannot be used at all


def test_a_reference_that_cannot_be_imported_is_reported(tmp_path: Path) -> None:
    write_spec(tmp_path, "numpy/negative.yaml", elementwise("numpy.negative", "numpy.not_a_function"))
    result = lint(tmp_path)
    assert result.exit_code == 1, result.output
    out = flat(result.output)
    assert "numpy.negative [f32]: reference 'numpy.not_a_function' cannot be imported" in out
    assert "fix: name an importable callable as the spec's (or the overload's) reference" in out


def test_an_undeclared_error_of_the_reference_is_reported(tmp_path: Path) -> None:
    write_spec(tmp_path, "operator/floordiv.yaml", """\
op: operator.floordiv
summary: test spec
reference: operator.floordiv
overloads:
  - name: int
    signature: "(a: int, b: int) -> int"
    domain:
      b: {min: -3, max: 3}
targets: [cpp]
""")
    result = lint(tmp_path)
    assert result.exit_code == 1, result.output
    out = flat(result.output)
    assert re.search(r"operator\.floordiv \[int\]: the reference operator\.floordiv raised ZeroDivisionError: "
                     r"integer division or modulo by zero on an input the domain admits \(a=-?\d+, b=0\), and the "
                     r"spec declares no such error", out), out
    assert "fix: narrow the domain to inputs the reference accepts, or declare the error under 'raises'" in out


def test_lint_of_an_unknown_op_names_the_known_ones(tmp_path: Path) -> None:
    write_spec(tmp_path, "numpy/sin.yaml", elementwise("numpy.sin", "numpy.sin"))
    result = lint(tmp_path, "numpy.tan")
    assert result.exit_code == 1
    assert "no spec for numpy.tan" in result.output and "known ops: numpy.sin" in result.output


# ----------------------------------------------------------------- synthesize lints before it asks


def test_synthesize_stops_at_the_lint_before_asking(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_spec(project, "numpy/negative.yaml", elementwise("numpy.negative", "numpy.zeros_like"))
    with FakeOpenAI([reply_tool_call({"source": "never sent", "notes": ""})]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPGEN_MODEL", "m")
        result = runner.invoke(app, ["synthesize", "numpy.negative"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    out = flat(result.output)
    assert "error: spec check: the spec lint rejects numpy.negative [f32] (a constant or all-zero kernel could pass" in out
    assert "the reference numpy.zeros_like gave the same result for different input values" in out
    assert "fix: fix the fields named above, then run `opgen spec check numpy.negative` again" in out
    assert server.requests == []  # nothing was asked
    assert not (project / "generated" / "cpp").exists()
    assert not (project / "runs").exists()
