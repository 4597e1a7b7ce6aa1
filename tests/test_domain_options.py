"""Domain options for the embedding-model ops: ``choices`` (a scalar drawn from a fixed set,
e.g. gelu's approximate) and ``index_into`` (int tensors of indices into another tensor's first
dim, e.g. token ids into an embedding table), and each tensor's own ``max_dims`` under a gufunc
rule (a weight that is exactly 2-d beside an input with batch dims). Every validation rule
pins its message; the strategy tests draw from the verifier's own strategy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from opgen.errors import SpecError
from opgen.spec.model import load_spec
from opgen.verify.strategies import examples

EMBEDDING = """\
op: test.embedding
summary: a test op
reference: opgen.references.embedding
overloads:
  - name: f32
    signature: "(input: tensor[int64], weight: tensor[float32]) -> tensor[float32]"
    shape: "(),(v,d)->(d)"
    domain:
"""
# Line numbers: 8 "domain:", the first domain entry is line 9.
GELU = """\
op: test.gelu
summary: a test op
reference: opgen.references.gelu
overloads:
  - name: f32
    signature: "(input: tensor[float32], approximate: str) -> tensor[float32]"
    shape: {same_as: input}
    domain:
"""


def spec_from(tmp_path: Path, text: str):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path, load_spec


def error_of(tmp_path: Path, text: str) -> tuple[Path, str]:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return path, info.value.message


# ---------------------------------------------------------------- choices: validation


def test_choices_on_a_tensor_parameter_is_rejected(tmp_path):
    path, msg = error_of(tmp_path, GELU + "      input: {choices: [1.0]}\n")
    assert msg == (f"{path}:8: overloads.0.domain: domain.input.choices is for int, float and str parameters; "
                   "input is tensor[float32] (got {'input': {'choices': [1.0]}})")


def test_choices_of_the_wrong_type_are_rejected(tmp_path):
    path, msg = error_of(tmp_path, GELU + "      approximate: {choices: [none, 2]}\n")
    assert msg == (f"{path}:8: overloads.0.domain: domain.approximate.choices has 2, which is not a str; "
                   "list values of approximate's type (got {'approximate': {'choices': ['none', 2]}})")


def test_choices_exclude_min_max_and_special(tmp_path):
    text = GELU.replace("approximate: str", "approximate: float") + "      approximate: {choices: [2.0], min: 0}\n"
    path, msg = error_of(tmp_path, text)
    assert msg == (f"{path}:8: overloads.0.domain: domain.approximate: choices are the only values drawn; "
                   "remove min, max and special (got {'approximate': {'choices': [2.0], 'min': 0}})")


def test_empty_choices_are_rejected(tmp_path):
    path, msg = error_of(tmp_path, GELU + "      approximate: {choices: []}\n")
    assert msg.startswith(f"{path}:9: overloads.0.domain.approximate.choices: List should have at least 1 item")


def test_int_choices_do_not_take_floats_but_float_choices_take_ints(tmp_path):
    text = GELU.replace("approximate: str", "approximate: int") + "      approximate: {choices: [1, 2.5]}\n"
    path, msg = error_of(tmp_path, text)
    assert "domain.approximate.choices has 2.5, which is not a int" in msg
    ok = tmp_path / "ok.yaml"
    ok.write_text(GELU.replace("approximate: str", "approximate: float") + "      approximate: {choices: [2, 0.5]}\n")
    assert load_spec(ok).overloads[0].domain["approximate"].choices == [2, 0.5]


# ---------------------------------------------------------------- index_into: validation


def test_index_into_needs_an_integer_tensor(tmp_path):
    text = EMBEDDING.replace("input: tensor[int64]", "input: tensor[float32]") + "      input: {index_into: weight}\n"
    path, msg = error_of(tmp_path, text)
    assert msg == (f"{path}:8: overloads.0.domain: domain.input.index_into is for integer tensors of indices; "
                   "input is tensor[float32] (got {'input': {'index_into': 'weight'}})")


def test_index_into_must_name_another_tensor(tmp_path):
    path, msg = error_of(tmp_path, EMBEDDING + "      input: {index_into: input}\n")
    assert msg == (f"{path}:8: overloads.0.domain: domain.input.index_into names 'input', which is not another "
                   "tensor parameter (got {'input': {'index_into': 'input'}})")
    path, msg = error_of(tmp_path, EMBEDDING + "      input: {index_into: table}\n")
    assert "domain.input.index_into names 'table', which is not another tensor parameter" in msg


def test_index_into_excludes_min_and_max(tmp_path):
    path, msg = error_of(tmp_path, EMBEDDING + "      input: {index_into: weight, max: 3}\n")
    assert msg == (f"{path}:8: overloads.0.domain: domain.input: index_into draws indices from the size of weight; "
                   "remove min and max (got {'input': {'index_into': 'weight', 'max': 3}})")


# ---------------------------------------------------------------- the strategy


def _draw(overload, n: int = 150) -> list[dict]:
    drawn: list[dict] = []

    @settings(max_examples=n, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(examples(overload))
    def collect(args):
        drawn.append(args)

    collect()
    return drawn


def _embedding(tmp_path: Path, raises: bool):
    text = EMBEDDING + "      input: {index_into: weight, max_dims: 3}\n      weight: {max_dims: 2, max_side: 6}\n"
    if raises:
        text += "    raises:\n      - {error: IndexError, when: an id is out of range}\n"
    path = tmp_path / "emb.yaml"
    path.write_text(text)
    return load_spec(path).overloads[0]


def test_indices_stay_inside_the_table_where_no_error_is_declared(tmp_path):
    for args in _draw(_embedding(tmp_path, raises=False)):
        ids, weight = args["input"], args["weight"]
        assert ids.dtype == np.int64 and weight.ndim == 2, "the table keeps exactly its two core dims"
        if ids.size and weight.shape[0]:
            assert 0 <= ids.min() and ids.max() < weight.shape[0]


def test_out_of_range_indices_are_drawn_where_index_error_is_declared(tmp_path):
    inside = outside = 0
    edges = set()
    for args in _draw(_embedding(tmp_path, raises=True), 300):
        ids, rows = args["input"].reshape(-1), args["weight"].shape[0]
        bad = ids[(ids < 0) | (ids >= rows)]
        if ids.size:
            outside += bool(bad.size)
            inside += not bad.size
        edges.update(int(v) for v in bad)
    assert inside > outside > 0, (inside, outside)
    assert -1 in edges and edges & {2**63 - 1, -(2**63)}, edges  # checked before an id is multiplied by a stride


def test_ids_keep_batch_dims_beside_a_two_dim_table(tmp_path):
    ranks = {args["input"].ndim for args in _draw(_embedding(tmp_path, raises=False))}
    assert {1, 2, 3} <= ranks and max(ranks) <= 3


def test_choices_are_the_only_values_drawn(tmp_path):
    path = tmp_path / "gelu.yaml"
    path.write_text(GELU + "      approximate: {choices: [none, tanh]}\n")
    drawn = {args["approximate"] for args in _draw(load_spec(path).overloads[0], 60)}
    assert drawn == {"none", "tanh"}


def test_float_choices_are_drawn_as_floats(tmp_path):
    path = tmp_path / "norm.yaml"
    path.write_text(GELU.replace("approximate: str", "p: float") + "      p: {choices: [2]}\n")
    drawn = {(type(a["p"]), a["p"]) for a in _draw(load_spec(path).overloads[0], 20)}
    assert drawn == {(float, 2.0)}


def test_spec_lint_keeps_index_tensors_when_it_redraws_values(tmp_path):
    """The lint's check that a reference depends on its inputs redraws values for the same
    shapes: ids must keep pointing into their table (redrawn ones would only raise IndexError)."""
    from opgen.spec.lint import _redraw, lint_overload
    from opgen.spec.model import Spec

    overload = _embedding(tmp_path, raises=False)
    args = next(a for a in _draw(overload, 30) if a["input"].size and a["weight"].size)
    alt = _redraw(overload, args, args, np.random.default_rng(0))
    assert alt["input"] is args["input"] and alt["weight"].shape == args["weight"].shape
    assert not np.array_equal(alt["weight"], args["weight"])
    declared = _embedding(tmp_path, raises=True)  # (an empty table makes every id out of range)
    spec = Spec(op="test.embedding", summary="s", reference="opgen.references.embedding", overloads=[declared])
    result = lint_overload(spec, declared, n=20)
    assert result.ok and result.changed == result.compared > 0
