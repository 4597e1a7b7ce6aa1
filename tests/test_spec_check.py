"""``opgen spec check``: a spec that would reject a correct kernel is reported as a spec problem, with the
field to change and the failing input, before any LLM request; every shipped spec passes."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from opgen.cli import EXIT_FAILED, EXIT_OK, app
from opgen.errors import OpgenError
from opgen.spec.check import SpecUnsound, check_spec, require_spec_sound
from opgen.spec.model import load_all, load_spec
from tests.conftest import CHECKOUT

runner = CliRunner()
SHIPPED = load_all(CHECKOUT / "specs")

TANH = """\
op: numpy.tanh
summary: Elementwise hyperbolic tangent (numpy.tanh).
semantics: out = tanh(x); nan stays nan, +-inf give +-1.
reference: numpy.tanh
overloads:
  - name: f32
    signature: "(x: tensor[float32]) -> tensor[float32]"
    shape: {same_as: x}
    domain:
      x: {min: -20, max: 20, special: [nan, inf, -inf, "-0", subnormal], max_dims: 4}
tolerance:
  float32: {rtol: RTOL, atol: ATOL}
"""

# The case: PyTorch's silu returns -0.0 below x = -88.7 where the exact value is a normal float32.
SILU = """\
op: torch.nn.functional.silu
summary: SiLU, x * sigmoid(x).
semantics: out = x * sigmoid(x); nan stays nan, inf gives inf.
reference: torch.nn.functional.silu
overloads:
  - name: f32
    signature: "(input: tensor[float32]) -> tensor[float32]"
    shape: {same_as: input}
    domain:
      input: {min: -100, max: 100, special: [nan, inf, "-0", subnormal], max_dims: 4}
tolerance:
  float32: {rtol: 5.0e-7, atol: 1.0e-44}
"""

LOG = """\
op: numpy.log
summary: Natural logarithm (numpy.log).
semantics: out = log(x) elementwise.
reference: numpy.log
overloads:
  - name: f32
    signature: "(x: tensor[float32]) -> tensor[float32]"
    shape: {same_as: x}
    domain:
      x: {min: MIN, max: 10, max_dims: 4}
tolerance:
  float32: {rtol: 1.0e-6, atol: 1.0e-30}
"""


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection attempt fails the test: spec check must not talk to anything."""

    def refuse(*args, **kwargs):
        raise AssertionError("spec check tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def write(project: Path, rel: str, text: str) -> Path:
    path = project / "specs" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_too_tight_tolerance_is_caught_before_any_request(project: Path, no_network: None) -> None:
    """The done-when of the issue: exit 1, the field to loosen, the input it fails on; with no provider
    configured (the project fixture clears OPENAI_*/OPGEN_*) and every connection refused."""
    write(project, "numpy/tanh.yaml", TANH.replace("RTOL", "0.0").replace("ATOL", "0.0"))
    result = runner.invoke(app, ["spec", "check", "numpy.tanh"])
    assert result.exit_code == EXIT_FAILED, result.output
    out = result.stdout
    assert "FAIL" in out and "numpy.tanh [f32] tolerance" in out
    assert "the reference itself is outside its tolerance" in out
    assert "field: tolerance.float32.rtol" in out
    assert "input: x: float32" in out and "x[" in out  # the failing input, down to its element
    assert "fix: raise rtol to at least" in out
    assert "gate" in out  # the gate's own run of a correctly rounded kernel fails too
    assert "1 overloads checked" in out


def test_the_report_names_the_failing_input_in_json(project: Path) -> None:
    write(project, "numpy/tanh.yaml", TANH.replace("RTOL", "1.0e-12").replace("ATOL", "0.0"))
    result = runner.invoke(app, ["spec", "check", "numpy.tanh", "--json"])
    assert result.exit_code == EXIT_FAILED, result.output
    doc = json.loads(result.stdout)
    assert doc["problems"] >= 1
    (report,) = doc["reports"]
    problems = report["overloads"][0]["problems"]
    tolerance = next(p for p in problems if p["check"] == "tolerance")
    assert tolerance["field"] == "tolerance.float32.rtol" and tolerance["overload"] == "f32"
    assert tolerance["input"]["args"]["x"]["dtype"] == "float32"
    assert "expected" in tolerance["input"]["at"] and "got" in tolerance["input"]["at"]


def test_a_sound_tolerance_passes(project: Path) -> None:
    write(project, "numpy/tanh.yaml", TANH.replace("RTOL", "4.4e-7").replace("ATOL", "1.0e-44"))
    result = runner.invoke(app, ["spec", "check", "numpy.tanh"])
    assert result.exit_code == EXIT_OK, result.output
    assert "ok   numpy.tanh [f32]" in result.stdout and "0 spec problem(s)" in result.stdout


def test_silu_flushing_to_minus_zero_needs_an_atol_above_the_edge(tmp_path: Path) -> None:
    path = tmp_path / "silu.yaml"
    path.write_text(SILU)
    report = check_spec(load_spec(path))
    problem = next(p for p in report.problems if p.check == "tolerance")
    assert problem.field == "tolerance.float32.atol"
    # The worst element sits at the flush edge, and the suggestion covers its 2.6e-37.
    assert -89.0 < float(problem.input["at"]["input" + str(problem.input["at"]["index"])]) < -88.0
    suggested = float(problem.fix.split("atol to at least ")[1].split()[0])
    assert 2.6e-37 < suggested < 1e-35
    # With atol above the edge the same spec is sound.
    path.write_text(SILU.replace("atol: 1.0e-44", "atol: 6.6e-37"))
    assert check_spec(load_spec(path)).ok


def test_require_spec_sound_raises_an_opgen_error_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "tanh.yaml"
    path.write_text(TANH.replace("RTOL", "0.0").replace("ATOL", "0.0"))
    spec = load_spec(path)
    with pytest.raises(SpecUnsound) as caught:
        require_spec_sound(spec)
    assert isinstance(caught.value, OpgenError)
    assert "would reject a correct kernel" in caught.value.message
    assert "opgen spec check numpy.tanh" in caught.value.hint
    assert caught.value.report.problems
    report = require_spec_sound(SHIPPED["operator.add"], [SHIPPED["operator.add"].overload("int")])
    assert report.ok


def test_nan_on_domain_inputs_the_spec_does_not_explain_is_a_domain_problem(tmp_path: Path) -> None:
    path = tmp_path / "log.yaml"
    path.write_text(LOG.replace("MIN", "-10"))
    report = check_spec(load_spec(path))
    problem = next(p for p in report.problems if p.check == "domain")
    assert problem.field == "overloads[f32].domain"
    assert "returns nan" in problem.message and "all finite" in problem.message
    at = problem.input["at"]
    assert float(at[f"x{at['index']}"]) < 0  # the input it is nan on
    # Domain from 0: log(0) is -inf from a finite input, which the semantics must then say.
    path.write_text(LOG.replace("MIN", "0"))
    problem = next(p for p in check_spec(load_spec(path)).problems if p.check == "domain")
    assert "returns an infinity" in problem.message
    path.write_text(LOG.replace("MIN", "0").replace("out = log(x) elementwise.", "out = log(x); log(0) is -inf."))
    assert check_spec(load_spec(path)).ok


def float32_only_bug(x: np.ndarray) -> np.ndarray:
    """tanh, but nan above |x| = 15 in float32 only (a float32 path that is wrong where float64 is not)."""
    out = np.tanh(x)
    if x.dtype == np.float32:
        out = np.where(np.abs(x) > 15, np.float32(np.nan), out).astype(np.float32)
    return out


def test_a_reference_that_is_nan_where_the_wider_evaluation_is_finite_is_a_domain_problem(tmp_path: Path) -> None:
    path = tmp_path / "tanh.yaml"
    path.write_text(TANH.replace("RTOL", "4.4e-7").replace("ATOL", "1.0e-44")
                    .replace("reference: numpy.tanh", "reference: tests.test_spec_check.float32_only_bug"))
    report = check_spec(load_spec(path))
    problem = next(p for p in report.problems if p.check == "domain")
    assert "where a wider evaluation gives the finite" in problem.message
    assert abs(float(problem.input["at"][f"x{problem.input['at']['index']}"])) > 15


def test_a_tolerance_below_one_ulp_is_caught_even_for_a_correctly_rounded_reference(tmp_path: Path) -> None:
    """numpy.sqrt is correctly rounded, so the reference passes; a kernel one ulp away (faithfully rounded)
    does not under rtol 3e-8, a quarter of an ulp."""
    path = tmp_path / "sqrt.yaml"
    path.write_text(LOG.replace("numpy.log", "numpy.sqrt").replace("MIN", "0").replace("rtol: 1.0e-6", "rtol: 3.0e-8"))
    report = check_spec(load_spec(path))
    checks = {p.check for p in report.problems}
    assert "ulp" in checks and "tolerance" not in checks
    assert next(p for p in report.problems if p.check == "ulp").field == "tolerance.float32.rtol"


def test_abs_inputs_tolerances_must_admit_a_one_ulp_backward_error(tmp_path: Path) -> None:
    text = (CHECKOUT / "specs" / "numpy" / "sum.yaml").read_text()
    path = tmp_path / "sum.yaml"
    path.write_text(text.replace("rtol: 1.0e-4", "rtol: 1.0e-9"))
    assert "rtol: 1.0e-9" in path.read_text()
    spec = load_spec(path)
    report = check_spec(spec, [spec.overload("f32")])
    assert "backward" in {p.check for p in report.problems}


def test_an_int_result_outside_int64_without_overflow_error_declared(tmp_path: Path) -> None:
    text = (CHECKOUT / "specs" / "operator" / "add.yaml").read_text()
    spec_path = tmp_path / "add.yaml"
    spec_path.write_text(text)
    spec = load_spec(spec_path)
    o = spec.overload("int")
    bare = spec.model_copy(update={"overloads": [o.model_copy(update={"raises": []})]})
    report = check_spec(bare)
    problem = next(p for p in report.problems if p.check == "domain")
    assert problem.field == "overloads[int].raises" and "outside int64" in problem.message


def test_an_undeclared_error_of_the_reference_is_a_spec_problem(tmp_path: Path) -> None:
    spec = SHIPPED["operator.pow"]
    o = spec.overload("int")
    bare = spec.model_copy(update={"overloads": [o.model_copy(update={"raises": [r for r in o.raises
                                                                                 if r.error != "ValueError"]})]})
    report = check_spec(bare)
    assert report.problems and all(p.overload == "int" for p in report.problems)
    assert any("ValueError" in p.message for p in report.problems)


@pytest.mark.parametrize("op", sorted(SHIPPED))
def test_every_shipped_spec_passes(op: str) -> None:
    """A false "spec problem" would block synthesis of a shipped op (synthesize runs the check first)."""
    # Fewer examples than `opgen spec check`'s default: every shipped spec is checked in each suite run.
    report = check_spec(SHIPPED[op], examples=50, gate_examples=50)
    assert report.ok, "\n".join(p.render() for p in report.problems)


def test_a_long_double_tie_is_not_a_rounding_error_of_the_reference() -> None:
    """Long double is 11 bits wider than float64: a - b of doubles far apart lands on a double
    midpoint there, and rounding that tie rounds twice. The reference's correctly rounded float64
    difference must not be reported as off by one ulp (it was: exact float64 specs failed)."""
    from fractions import Fraction

    from opgen.spec.wide import WideRoute

    a, b = np.float64(-1.2525004756347439e-05), np.float64(1.4116965520291507)
    exact = float(Fraction(float(a)) - Fraction(float(b)))  # correctly rounded, once
    wide = np.asarray([np.longdouble(a) - np.longdouble(b)])
    ref = np.asarray([a - b])
    assert ref[0] == exact
    route = WideRoute("longdouble", "test", "numpy.subtract", "float64")
    if float(route.rounded(wide)[0]) != exact:  # this machine's long double shows the double rounding
        assert float(route.rounded(wide, ref)[0]) == exact
    # A reference that is not one of the two neighbours is not excused.
    far = np.nextafter(np.nextafter(ref, np.inf), np.inf)
    assert float(route.rounded(wide, far)[0]) != float(far[0])
