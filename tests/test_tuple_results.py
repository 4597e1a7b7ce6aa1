"""Signatures that return a tuple of named tensors (torch.topk's (values, indices),
torch.native_layer_norm's (output, mean, rstd)): the grammar, the spec model's per-result shape
rules, the ABI's spellings, a shim round trip, the gate naming the result that differed, and the
references and conformance translation of the ops that need them."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest
import yaml

from opgen.build.cpp import build
from opgen.compiler import compile_function
from opgen.conformance.mapping import Node, _topk
from opgen.gate.admission import build_job
from opgen.host import load_compiled
from opgen.project import PACKAGE_ROOT, Project
from opgen.references import layer_norm, native_layer_norm
from opgen.selection_references import topk
from opgen.spec.abi import c_params, c_symbol, cpp_declaration, native_signature, rust_declaration
from opgen.spec.model import Spec, load_all
from opgen.spec.nativetypes import SignatureError, parse_signature
from opgen.spec.shapes import ShapeRuleError, parse_shape_rule, topk_shape
from opgen.verify import ffi
from opgen.verify.harness import verify_library

ROOT = PACKAGE_ROOT
TOPK = ("(input: tensor[float32], k: int, dim: int = -1, largest: bool = True, sorted: bool = True) "
        "-> tuple[values: tensor[float32], indices: tensor[int64]]")


@pytest.fixture(scope="module")
def specs() -> dict[str, Spec]:
    return load_all(ROOT / "specs")


# ----------------------------------------------------------------------------------- the grammar

def test_a_tuple_result_parses_into_named_results_and_prints_back():
    sig = parse_signature(TOPK)
    assert sig.returns.is_tuple and not sig.returns.is_tensor and sig.tensor_results
    assert [(n, str(t)) for n, t in sig.results] == [("values", "tensor[float32]"), ("indices", "tensor[int64]")]
    assert str(sig) == TOPK
    assert parse_signature(str(sig)) == sig


def test_a_single_result_is_named_out():
    sig = parse_signature("(x: tensor[float32]) -> tensor[float32]")
    assert [n for n, _ in sig.results] == ["out"] and sig.tensor_results and not sig.returns.is_tuple
    assert not parse_signature("(x: int) -> int").tensor_results


@pytest.mark.parametrize("returns, words", [
    ("tuple[tensor[float32], tensor[int64]]", "has no name"),
    ("tuple[a: tensor[float32]]", "two or more"),
    ("tuple[a: tensor[float32], a: tensor[int64]]", "appears twice"),
    ("tuple[x: tensor[float32], i: tensor[int64]]", "also a parameter's name"),
    ("tuple[a: int, b: tensor[int64]]", "tensors only"),
    ("tuple[out: tensor[float32], b: tensor[int64]]", "reserved"),
    ("tuple[a: tensor[float32], class: tensor[int64]]", "reserved"),
    ("tuple[a: tensor[float33], b: tensor[int64]]", "unknown dtype"),
])
def test_malformed_tuple_results_are_refused_with_the_reason(returns, words):
    with pytest.raises(SignatureError, match=words):
        parse_signature(f"(x: tensor[float32]) -> {returns}")


# ------------------------------------------------------------------------------ spec and shapes

def _spec(shape: str) -> Spec:
    return Spec.model_validate({
        "op": "tupletest.topk", "summary": "s", "reference": "opgen.selection_references.topk",
        "overloads": [{"name": "f32", "signature": TOPK, "shape": yaml.safe_load(shape)}]})


def test_each_result_has_its_own_shape_rule():
    o = _spec("{values: {topk: input, axis: dim, k: k}, indices: {topk: input, axis: dim, k: k}}").overloads[0]
    assert set(o.rules) == {"values", "indices"} and o.rule == o.rules["values"]
    args = {"input": np.zeros((3, 5, 2), np.float32), "k": 2, "dim": 1}
    assert o.rules["indices"].output_shape(args, ["input"]) == (3, 2, 2)


@pytest.mark.parametrize("shape, words", [
    ("{topk: input, axis: dim, k: k}", "one shape rule per result"),
    ("{values: {topk: input, axis: dim, k: k}}", "one shape rule per result"),
    ("{values: {topk: input, axis: dim, k: k}, indices: {topk: input, axis: nope, k: k}}", "shape.indices"),
])
def test_a_tuple_without_a_rule_per_result_is_a_spec_error(shape, words):
    with pytest.raises(ValueError, match=words):
        _spec(shape)


def test_topk_shape_and_torchs_errors():
    assert topk_shape((4, 6), -1, 3) == ((4, 3), None)
    assert topk_shape((), 0, 1) == ((), None) and topk_shape((), -1, 0) == ((), None)
    assert topk_shape((4, 6), 2, 1)[1].startswith("Dimension out of range (expected to be in range of [-2, 1]")
    assert topk_shape((4, 6), 0, 5) == ((0,), "selected index k out of range")
    assert topk_shape((4,), 0, -1)[1] == "selected index k out of range"


def test_a_gufunc_output_may_keep_a_dim_of_size_1_but_an_input_may_not():
    rule = parse_shape_rule("(d),(d),(d)->(1)", ["x", "w", "b"], [])
    args = {"x": np.zeros((2, 3, 5)), "w": np.zeros(5), "b": np.zeros(5)}
    assert rule.output_shape(args, ["x", "w", "b"]) == (2, 3, 1)
    with pytest.raises(ShapeRuleError, match="must be a name"):
        parse_shape_rule("(1),(d),(d)->(d)", ["x", "w", "b"], [])


# ------------------------------------------------------------------------------------------ ABI

def test_abi_spellings_have_one_out_tensor_per_result():
    sig = parse_signature(TOPK)
    assert cpp_declaration("torch.topk", "f32", sig) == (
        "void torch_topk__f32(const opgen::Tensor& input, int64_t k, int64_t dim, bool largest, bool sorted, "
        "opgen::Tensor& values, opgen::Tensor& indices)")
    assert rust_declaration("torch.topk", "f32", sig) == (
        "pub fn torch_topk__f32(input: &TensorRef<f32>, k: i64, dim: i64, largest: bool, sorted: bool, "
        "values: &mut TensorMut<f32>, indices: &mut TensorMut<i64>) -> Result<()>")
    assert c_params(sig)[-3:] == [("opgen_tensor*", "values"), ("opgen_tensor*", "indices"), ("opgen_error*", "err")]
    record = native_signature("torch.topk", "f32", sig)
    assert record["results"] == [{"name": "values", "type": "tensor[float32]"},
                                 {"name": "indices", "type": "tensor[int64]"}]
    assert "results" not in native_signature("x.y", "f32", parse_signature("(a: tensor[float32]) -> tensor[float32]"))


# ------------------------------------------------------------------------------ shim round trip

TIES_REVERSED = "  return i > j;  // ties: the higher index first (wrong)\n}\n\n}  // namespace"


def _topk_source(wrong_ties: bool = False) -> str:
    source = (ROOT / "answers" / "cpp" / "torch.topk__f32.cpp").read_text()
    if wrong_ties:
        source = source.replace("  return i < j;\n}\n\n}  // namespace", TIES_REVERSED)
        assert TIES_REVERSED in source
    return source


@pytest.fixture(scope="module")
def topk_libraries(specs) -> dict[str, Path]:
    spec = specs["torch.topk"]
    o = spec.overload("f32")
    built = build([build_job(spec, o, _topk_source()), build_job(spec, o, _topk_source(wrong_ties=True))])
    for b in built:
        assert b.ok, b.diagnostics
    return {"right": built[0].library, "ties": built[1].library}


def test_the_shim_fills_every_result_and_checks_each_out(specs, topk_libraries):
    o = specs["torch.topk"].overload("f32")
    kernel = ffi.Kernel(ctypes.CDLL(str(topk_libraries["right"])), c_symbol("torch.topk", "f32"), o.sig)
    x = np.array([[3.0, 1.0, np.nan, 3.0, -0.0, 0.0]], np.float32)[:, ::-1]  # a strided view
    outs = (np.full((1, 4), 7.0, np.float32), np.full((1, 4), -9, np.int64))
    values, indices = kernel([x, 4, -1, True, True], out=outs)
    want_values, want_indices = topk(x, 4, -1, True, True)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)
    assert indices.tolist() == [[3, 2, 5, 4]]  # nan first; the tied 3.0s lower index first
    with pytest.raises(IndexError, match="selected index k out of range"):
        kernel([x, 7, -1, True, True], out=(np.empty((1, 7), np.float32), np.empty((1, 7), np.int64)))
    with pytest.raises(IndexError, match="Dimension out of range"):
        kernel([x, 1, 2, True, True], out=outs)
    with pytest.raises(ValueError, match="shape"):  # the second result's out has the wrong shape
        kernel([x, 4, -1, True, True], out=(outs[0], np.empty((1, 3), np.int64)))
    with pytest.raises(ValueError, match="one caller-allocated out array per result"):
        kernel([x, 4, -1, True, True], out=outs[0])


def test_the_gate_rejects_a_wrong_second_result_naming_it(specs, topk_libraries):
    spec = specs["torch.topk"]
    right = verify_library(topk_libraries["right"], c_symbol("torch.topk", "f32"), spec.path, "f32",
                           seed=7, max_examples=150)
    assert right.ok, right.message
    wrong = verify_library(topk_libraries["ties"], c_symbol("torch.topk", "f32"), spec.path, "f32",
                           seed=7, max_examples=150)
    assert not wrong.ok and wrong.kind == "value"
    assert wrong.message.startswith("result 'indices' (2 of 2): "), wrong.message


# ----------------------------------------------------------------------------------- references

def test_topk_reference_agrees_with_torch_where_there_are_no_ties():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64, np.int64):
        for _ in range(100):
            shape = tuple(int(n) for n in rng.integers(0, 5, size=int(rng.integers(0, 4))))
            x = rng.permutation(10 * int(np.prod(shape)) + 1)[:int(np.prod(shape))].reshape(shape).astype(dt)
            nd = max(len(shape), 1)
            dim = int(rng.integers(-nd, nd))
            k = int(rng.integers(0, (shape[dim] if shape else 1) + 1))
            largest = bool(rng.integers(2))
            values, indices = topk(x, k, dim, largest, True)
            tv, ti = torch.topk(torch.from_numpy(x), k, dim, largest, True)
            np.testing.assert_array_equal(values, tv.numpy())
            np.testing.assert_array_equal(indices, ti.numpy())


def test_topk_reference_orders_ties_by_index_and_nan_as_largest():
    x = np.array([1.0, np.nan, 3.0, 3.0, np.nan, -np.inf], np.float32)
    assert topk(x, 4, 0, True, True)[1].tolist() == [1, 4, 2, 3]
    assert topk(x, 4, 0, False, False)[1].tolist() == [5, 0, 2, 3]
    ints = np.array([5, -2**63, 5, 2**63 - 1], np.int64)  # ~x does not overflow where -x would
    assert topk(ints, 4, 0, True, True)[1].tolist() == [3, 0, 2, 1]
    with pytest.raises(IndexError):
        topk(x, 7, 0, True, True)


def test_native_layer_norm_reference_returns_layer_norms_output_and_its_statistics():
    rng = np.random.default_rng(1)
    x = rng.normal(3, 2, (2, 3, 5)).astype(np.float32)
    w, b = rng.normal(size=5).astype(np.float32), rng.normal(size=5).astype(np.float32)
    out, mean, rstd = native_layer_norm(x, w, b, 1e-5)
    np.testing.assert_array_equal(out, layer_norm(x, w, b, 1e-5))
    assert mean.shape == rstd.shape == (2, 3, 1) and mean.dtype == rstd.dtype == np.float32
    np.testing.assert_allclose(mean[..., 0], x.astype(np.float64).mean(-1), rtol=1e-6)
    np.testing.assert_allclose(rstd[..., 0], 1 / np.sqrt(x.astype(np.float64).var(-1) + 1e-5), rtol=1e-6)
    _, mean0, rstd0 = native_layer_norm(np.zeros((2, 0), np.float32), np.zeros(0, np.float32), np.zeros(0, np.float32), 1e-5)
    assert mean0.tolist() == [[0.0], [0.0]] and np.isnan(rstd0).all()  # torch's d == 0


# ---------------------------------------------------------------------------------- conformance

def test_onnx_topk_translates_to_torch_topk_with_both_outputs(specs):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    node = Node("TopK", 11, {"axis": 1, "largest": 0}, (x, np.array([2], np.int64)), ("Values", "Indices"), 1e-6, 1e-6)
    plan = _topk(node, specs["torch.topk"])
    assert plan.overload.name == "f32"
    assert plan.args == {"input": x, "k": 2, "dim": 1, "largest": False, "sorted": True}
    results = topk(**{"x": x, "k": 2, "dim": 1, "largest": False, "sorted_": True})
    assert plan.outputs[1](results) is results[1] and plan.outputs[0](results) is results[0]


# ------------------------------------------------------------------------------------- compiler

def test_a_compiled_call_of_a_tuple_returning_op_unpacks_its_results(tmp_path):
    """Was refused; tests/test_compile_tuple_results.py compares every form with torch."""
    torch = pytest.importorskip("torch")
    source = tmp_path / "f.py"
    source.write_text("from typing import Annotated\n\nimport torch\n\n\n"
                      "def f(x: Annotated[torch.Tensor, torch.float32]) -> Annotated[torch.Tensor, torch.int64]:\n"
                      "    values, indices = torch.topk(x, 2)\n    return indices\n")
    compile_function(Project(ROOT), source, "f", tmp_path / "out")
    x = torch.tensor([[1.0, 3.0, 3.0, -1.0]])
    assert load_compiled(tmp_path / "out")(x).tolist() == [[1, 2]]
