"""Prompt rendering: every shipped overload's prompt carries the facts the LLM needs,
and a template that names a missing fact is an error, never a blank."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from opgen.spec.abi import cpp_declaration
from opgen.prompts import render_repair, render_request
from opgen.targets.cpp.policy import ALLOWED_CPP_HEADERS
from opgen.spec.model import load_all

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = ROOT / "prompts"
SPECS = load_all(ROOT / "specs")
OVERLOADS = [(spec, o) for spec in SPECS.values() for o in spec.overloads]


@pytest.fixture(scope="module")
def rendered() -> dict[tuple[str, str], tuple[str, str]]:
    out = {}
    for spec, o in OVERLOADS:
        messages = render_request(PROMPTS, spec, o, "cpp")
        assert [m["role"] for m in messages] == ["system", "user"]
        out[(spec.op, o.name)] = (messages[0]["content"], messages[1]["content"])
    return out


def _ids(pairs):
    return [f"{s.op}:{o.name}" for s, o in pairs]


@pytest.mark.parametrize(("spec", "overload"), OVERLOADS, ids=_ids(OVERLOADS))
def test_request_carries_the_overloads_facts(rendered, spec, overload):
    system, user = rendered[(spec.op, overload.name)]
    decl = cpp_declaration(spec.op, overload.name, overload.sig)
    assert f"{decl} {{" in user  # the exact function to write, as a definition
    assert f"`{decl}`" not in user  # (and not only quoted in prose)
    assert f"# Implement `{spec.op}` (overload `{overload.name}`) in C++" in user
    assert f"Python signature: `{overload.sig.bare()}`" in user  # defaults are the caller's, not the kernel's
    reference = overload.reference or spec.reference
    assert f"The reference implementation is `{reference}`" in user
    assert f"differentially tested against\n{reference} with" in system
    for r in overload.raises:
        assert f"- `{r.error}` when {r.when}" in user
    if not overload.raises:
        assert "This overload must raise" not in user
    for case in spec.edge_cases:
        assert f"- {case}\n" in user
    for p in overload.sig.params:
        assert f"- `{p.name}: {p.type}`: " in user


@pytest.mark.parametrize(("spec", "overload"), OVERLOADS, ids=_ids(OVERLOADS))
def test_request_states_the_tolerance_numbers(rendered, spec, overload):
    _, user = rendered[(spec.op, overload.name)]
    # every float result's dtype (a tuple may have several results, and integer ones beside them)
    floats = list(dict.fromkeys(t.dtype for _, t in overload.sig.results if t.dtype is not None and t.dtype.is_float))
    if not floats:
        assert "Results are compared exactly." in user
        assert "## Accuracy" not in user
        return
    for dt in floats:
        tol = spec.tolerance_for(overload, dt)
        scale = {"reference": "|ref|", "abs_inputs": "(the reference applied to |inputs|)", "error_scale": "E"}[tol.basis]
        assert f"- {dt.name}: |got - ref| <= {tol.atol} + {tol.rtol} * {scale};" in user
        # An error scale is the reference's own: the prompt says what it is (the tolerance's why).
        assert ("E is the reference's error scale: " + " ".join(tol.why.split()) in user) is (tol.basis == "error_scale")


def test_tolerance_numbers_are_the_specs_own():
    user = render_request(PROMPTS, SPECS["numpy.exp"], SPECS["numpy.exp"].overload("f32"))[1]["content"]
    assert "- float32: |got - ref| <= 1e-44 + 6e-07 * |ref|;" in user
    user = render_request(PROMPTS, SPECS["operator.matmul"], SPECS["operator.matmul"].overload("f64"))[1]["content"]
    assert "- float64: |got - ref| <= 1e-300 + 5e-15 * (the reference applied to |inputs|);" in user
    user = render_request(PROMPTS, SPECS["operator.add"], SPECS["operator.add"].overload("float"))[1]["content"]
    assert "- float64: |got - ref| <= 0.0 + 0.0 * |ref|;" in user


@pytest.mark.parametrize(("spec", "overload"), OVERLOADS, ids=_ids(OVERLOADS))
def test_openmp_is_offered_only_where_the_spec_allows_threads(rendered, spec, overload):
    system, user = rendered[(spec.op, overload.name)]
    allowed = spec.threads_allowed(overload)  # threads: true in the spec (matmul, attention, ...)
    assert allowed or spec.op not in ("operator.matmul", "opgen.nn.scaled_dot_product_attention")
    assert ("OpenMP (`#pragma omp ...`) is allowed for this operator" in system) is allowed
    assert ("No threads of any kind for this operator." in system) is (not allowed)
    headers = ", ".join(ALLOWED_CPP_HEADERS + (("omp.h",) if allowed else ()))
    assert f"only these standard headers:\n  {headers}." in system


def test_tensor_and_scalar_prompts_differ_in_the_output_contract(rendered):
    _, exp = rendered[("numpy.exp", "f64")]
    assert "`out` is allocated by the caller, contiguous (row-major)" in exp
    assert "Shape rule: same shape as x." in exp
    _, mm = rendered[("operator.matmul", "f32")]
    assert "Shape rule: gufunc (m,k),(k,n)->(m,n) (loop dims broadcast, NumPy rules)." in mm
    _, add = rendered[("operator.add", "int")]
    assert "- Return the result by value." in add
    assert "`out` is allocated" not in add


def test_domains_are_spelled_out(rendered):
    _, user = rendered[("numpy.sum", "f32")]
    assert "- `a: tensor[float32]`: values in [-10000.0, 10000.0]; special values: nan, inf, -inf, -0; rank 1 to 4" in user
    assert "- `axis: int`: an axis of a (may be negative)" in user
    _, user = rendered[("operator.add", "int")]
    assert "- `a: int`: any value of the type" in user
    _, user = rendered[("operator.add", "str")]
    assert "- `a: str`: length up to 64" in user


@pytest.mark.parametrize(
    ("stage", "expected"),
    [
        ("compile", "Your source did not compile. The compiler said:\n\n```\n{feedback}\n```"),
        ("policy", "Your source breaks a rule of the sandbox, so it was not compiled:\n\n{feedback}"),
        ("answer", "Your answer could not be used:\n\n{feedback}"),
        ("verify", "Your kernel compiled but gave wrong results. {feedback}"),
        ("admission", "Your kernel compiled but gave wrong results. {feedback}"),
    ],
)
def test_repair_template_variants(stage, expected):
    spec = SPECS["numpy.exp"]
    overload = spec.overload("f64")
    feedback = f"FEEDBACK<{stage}>: kernel.cpp:3:5: error: 'y' was not declared"
    text = render_repair(PROMPTS, spec, overload, "cpp", stage, feedback)
    assert expected.format(feedback=feedback) in text
    decl = cpp_declaration(spec.op, overload.name, overload.sig)
    assert text.rstrip().endswith(f"send the complete corrected source file for `{decl}`.")
    others = {"compile": "did not compile", "policy": "breaks a rule", "answer": "could not be used",
              "verify": "gave wrong results"}
    for other, phrase in others.items():
        if expected.find(phrase) < 0:
            assert phrase not in text, (stage, other)


def _template_dir(tmp_path: Path, system: str, kernel: str = "ok {{ kernel_name }}") -> Path:
    (tmp_path / "cpp").mkdir()
    (tmp_path / "cpp" / "system.md.j2").write_text(system)
    (tmp_path / "cpp" / "kernel.md.j2").write_text(kernel)
    (tmp_path / "repair.md.j2").write_text("{{ stage }} {{ feedback }} {{ no_such_fact }}")
    return tmp_path


def test_strict_undefined_catches_a_missing_fact(tmp_path):
    prompts = _template_dir(tmp_path, "Reference: {{ reference }}; threads: {{ threading_policy }}")
    spec = SPECS["numpy.exp"]
    with pytest.raises(jinja2.UndefinedError, match="'threading_policy' is undefined"):
        render_request(prompts, spec, spec.overload("f64"))


def test_strict_undefined_catches_a_missing_attribute(tmp_path):
    prompts = _template_dir(tmp_path, "{{ spec.op }}", kernel="{{ overload.precision }}")
    spec = SPECS["numpy.exp"]
    with pytest.raises(jinja2.UndefinedError, match="precision"):
        render_request(prompts, spec, spec.overload("f64"))


def test_strict_undefined_in_the_repair_template(tmp_path):
    prompts = _template_dir(tmp_path, "{{ spec.op }}")
    spec = SPECS["numpy.exp"]
    with pytest.raises(jinja2.UndefinedError, match="'no_such_fact' is undefined"):
        render_repair(prompts, spec, spec.overload("f64"), "cpp", "compile", "x")


def test_a_template_using_only_known_facts_renders(tmp_path):
    prompts = _template_dir(tmp_path, "{{ spec.op }} {{ declaration }}")
    spec = SPECS["numpy.exp"]
    system, user = render_request(prompts, spec, spec.overload("f64"))
    assert system["content"] == "numpy.exp void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out)"
    assert user["content"] == "ok numpy_exp__f64"
