"""Two spec features attention needs: the domain option ``multiple_of`` (core dims drawn as a
multiple of another core dim or a number) and the tolerance basis ``error_scale`` (the rtol
term scales with the reference's own error scale)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from opgen.errors import SpecError
from opgen.references import error_scale
from opgen.spec.model import load_spec
from opgen.spec.lint import draw_examples, lint_overload
from opgen.verify import runner
from opgen.verify.compare import Mismatch, Outcome, compare_tensor

SPECS = Path(__file__).resolve().parents[1] / "specs"

GUFUNC = """\
op: test.attention
summary: a test op
reference: opgen.references.scaled_dot_product_attention
overloads:
  - name: f32
    signature: "(q: tensor[float32], k: tensor[float32], v: tensor[float32], key_mask: tensor[int64], window: int, scale: float) -> tensor[float32]"
    shape: "(h,s,d),(g,t,d),(g,t,e),(t)->(h,s,e)"
    domain:
      q: {{max_side: 6, max_dims: 3, multiple_of: {multiple}}}
"""

ELEMENTWISE = """\
op: test.exp
summary: a test op
reference: numpy.exp
overloads:
  - name: f32
    signature: "(x: tensor[float32]) -> tensor[float32]"
    shape: elementwise
    domain:
      x: {domain}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def error_of(path: Path) -> str:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return str(info.value)


# ------------------------------------------------------------------ multiple_of: validation


@pytest.mark.parametrize("multiple,message", [
    ("{t: g}", "domain.q.multiple_of names 't', which is not a core dim of q (its core dims: ['h', 's', 'd'])"),
    ("{h: x}", "domain.q.multiple_of.h is 'x': name another core dim of the shape rule"),
    ("{h: h}", "domain.q.multiple_of.h is 'h': name another core dim of the shape rule"),
    ("{h: 0}", "domain.q.multiple_of.h is 0: a number must be at least 1"),
])
def test_multiple_of_names_core_dims_or_positive_numbers(tmp_path: Path, multiple: str, message: str) -> None:
    text = error_of(write(tmp_path, GUFUNC.format(multiple=multiple)))
    assert message in text and "spec.yaml:8:" in text, text  # the domain key's line


def test_multiple_of_needs_a_tensor_under_a_gufunc_rule(tmp_path: Path) -> None:
    text = error_of(write(tmp_path, ELEMENTWISE.format(domain="{multiple_of: {n: 2}}")))
    assert "domain.x.multiple_of is for tensor parameters under a gufunc shape rule" in text, text


# ------------------------------------------------------------------ multiple_of: drawing


def test_multiple_of_another_dim_holds_most_of_the_time_but_not_always(tmp_path: Path) -> None:
    overload = load_spec(write(tmp_path, GUFUNC.format(multiple="{h: g}"))).overload("f32")
    drawn = draw_examples(overload, n=120)
    pairs = [(a["q"].shape[-3], a["k"].shape[-3]) for a in drawn if a["k"].shape[-3] > 0]
    grouped = sum(1 for h, g in pairs if h % g == 0)
    assert grouped >= 0.75 * len(pairs), pairs
    assert grouped < len(pairs), "the error path (h not a multiple of g) was never drawn"
    assert any(h > g for h, g in pairs if h % g == 0), "only h == g was drawn"


def test_multiple_of_a_number_resizes_the_dim_in_every_tensor_that_has_it(tmp_path: Path) -> None:
    overload = load_spec(write(tmp_path, GUFUNC.format(multiple="{d: 2}"))).overload("f32")
    drawn = draw_examples(overload, n=80)
    assert all(a["q"].shape[-1] == a["k"].shape[-1] for a in drawn)  # d is shared by q and k
    even = sum(1 for a in drawn if a["q"].shape[-1] % 2 == 0)
    assert 0.75 * len(drawn) <= even < len(drawn)


# ------------------------------------------------------------------ error_scale


def test_error_scale_must_be_defined_by_the_reference(tmp_path: Path) -> None:
    path = write(tmp_path, ELEMENTWISE.format(domain="{min: -1, max: 1}") + """\
tolerance:
  float32: {rtol: 1.0e-6, atol: 1.0e-30, basis: error_scale}
""")
    spec = load_spec(path)
    with pytest.raises(LookupError, match="has no error_scale attribute"):
        error_scale(spec.reference)
    findings = lint_overload(spec, spec.overload("f32")).findings
    assert [f.kind for f in findings] == ["reference_error"]
    assert "has no error_scale attribute" in findings[0].message


def test_a_mismatch_names_the_error_scale() -> None:
    spec = load_spec(SPECS / "opgen" / "nn" / "scaled_dot_product_attention.yaml")
    overload = spec.overload("f32")
    tol = spec.tolerance_for(overload, overload.sig.returns.dtype)
    with pytest.raises(Mismatch, match=r"rtol 1e-05 \* the reference's error scale"):
        compare_tensor(np.ones(3, np.float32), np.zeros(3, np.float32), tol, np.full(3, 1.0), Outcome(),
                       "the reference's error scale")


class _Stand:
    """A trusted in-process kernel: the reference itself, optionally nudged by a fraction of
    the error scale (what the runner must accept, and what it must reject)."""

    def __init__(self, nudge: float):
        self.nudge = nudge

    def __call__(self, values, out):
        ref = runner.call_reference("opgen.references.scaled_dot_product_attention", values)
        scale = error_scale("opgen.references.scaled_dot_product_attention")(*values)
        out[...] = ref + self.nudge * scale
        return out


@pytest.mark.parametrize("nudge,ok", [(0.5e-5, True), (3e-5, False)])
def test_the_runner_scales_rtol_by_the_error_scale(tmp_path: Path, nudge: float, ok: bool) -> None:
    spec = load_spec(SPECS / "opgen" / "nn" / "scaled_dot_product_attention.yaml")
    overload = spec.overload("f32")
    job = {"seed": 11, "max_examples": 25}
    result = runner.run(job, tmp_path, spec, overload, kernel=_Stand(nudge))
    assert result["ok"] is ok, json.dumps(result)[:600]
    if not ok:
        assert "the reference's error scale" in result["message"]
