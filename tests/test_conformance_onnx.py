"""`opgen conformance onnx`: the ONNX backend node cases through the served kernels.

The shipped library passes the mapped cases of a few ops with nothing wrong; a kernel re-admitted
with an off-by-1% exp is reported wrong, case by case, and fails the run; a kernel that crashes
or hangs is an error of its cases while the run goes on; inexpressible cases name the dtype,
attribute, input or output they lack; --json prints one JSON document and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.conformance.cases import cases_of
from opgen.conformance.check import compare
from opgen.conformance.mapping import MAPPINGS, Inexpressible, Mapping, MappingError, Node, Plan
from opgen.conformance.run import _node
from opgen.nightly.compare import counts
from opgen.nightly.history import History, finalize, merge
from opgen.nightly.run import SCHEMA, budget, run_conformance_slice
from opgen.nightly.shards import WHOLE
from opgen.project import Project
from opgen.references import call_reference
from opgen.registry import Registry
from opgen.report import build_site
from opgen.spec.model import load_all
from tests.conftest import CHECKOUT
from tests.test_nightly_run import copy_entries

runner = CliRunner()

# The shipped exp kernel's last step, and the same step 1% off (far beyond the cases' rtol 1e-3).
EXP_LAST_STEP = "return __builtin_convertvector(p * scale, v8f);"
EXP_OFF_BY_ONE_PERCENT = "return __builtin_convertvector(p * scale * 1.01, v8f);"
EXP_CRASHES = """#include "opgen_kernel.hpp"
namespace opgen::kernels {
void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  volatile float* nowhere = nullptr;
  *nowhere = x.numel();  // a null write: SIGSEGV
}
}  // namespace opgen::kernels
"""
ADD_HANGS = """#include "opgen_kernel.hpp"
namespace opgen::kernels {
void operator_add__tensor_f32(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  volatile int spin = 1;
  while (spin) {
  }
}
}  // namespace opgen::kernels
"""


def conformance(*args: str):
    return runner.invoke(app, ["conformance", "onnx", *args])


def by_op(report: dict) -> dict[str, dict]:
    return {op["onnx_op"]: op for op in report["ops"]}


def readmit(project: Path, op: str, overload: str, kernel: str) -> None:
    """Admit another kernel source into an entry, as the registry admits one (new hashes, same
    evidence): it is served, not stale; only running it can tell it is wrong."""
    registry = Registry(project / "generated")
    entry = registry.get(op, overload, "cpu-cpp")
    files = {role: (f["path"], (entry.path / f["path"]).read_text()) for role, f in entry.data["files"].items()}
    files["kernel"] = (files["kernel"][0], kernel)
    data = {k: v for k, v in entry.data.items() if k not in ("files", "variant")}
    registry.admit(op, overload, "cpu-cpp", files, data, variant=entry.variant)
    spec = load_all(project / "specs")[op]
    served, why = registry.serve(op, overload, "cpu-cpp", spec)
    assert served is not None and served.file("kernel").read_text() == kernel, why


def test_the_shipped_library_passes_its_mapped_cases():
    r = conformance("Add", "Equal", "Exp", "torch.softmax", "MaxPool", "LayerNormalization", "--json", "--root",
                    str(CHECKOUT))
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["ok"] and report["totals"]["wrong"] == 0 and report["totals"]["error"] == 0
    ops = by_op(report)
    # the table's order; torch.softmax selects Attention too (its qk_matmul_output's mode 3 calls it)
    assert list(ops) == ["Add", "Equal", "Exp", "Softmax", "Attention", "MaxPool", "LayerNormalization"]
    assert (ops["Exp"]["pass"], ops["Softmax"]["pass"]) == (2, 7) and ops["Add"]["pass"] >= 2
    assert ops["Softmax"]["opgen_op"] == "torch.nn.functional.softmax" and ops["Softmax"]["cases"] == 7
    add = {c["case"]: c for c in ops["Add"]["results"]}
    assert add["test_add_bcast"]["status"] == "pass" and add["test_add_bcast"]["overload"] == "tensor_f32"
    # inexpressible cases say what the opgen op lacks: a dtype, an attribute, an output
    equal = {c["case"]: c for c in ops["Equal"]["results"]}
    assert equal["test_equal_string"]["status"] == "inexpressible"
    assert equal["test_equal_string"]["subject"] == "dtype string" and "float32" in equal["test_equal_string"]["why"]
    assert any("dtype string" in r["subjects"] and r["count"] >= 2 for r in ops["Equal"]["reasons"])
    pool = {c["case"]: c for c in ops["MaxPool"]["results"]}
    # 2-d ceil mode and dilations through max_pool2d's f32_options; floor-mode windows through f32
    assert (pool["test_maxpool_2d_ceil"]["status"], pool["test_maxpool_2d_ceil"]["overload"]) == ("pass", "f32_options")
    assert (pool["test_maxpool_2d_dilations"]["status"], pool["test_maxpool_2d_dilations"]["overload"]) == \
        ("pass", "f32_options")
    assert pool["test_maxpool_2d_ceil_output_size_reduce_by_one"]["overload"] == "f32"
    # asymmetric pads: numpy.pad (-inf) first, then the pool without padding; both steps named
    same_upper = pool["test_maxpool_2d_same_upper"]
    assert same_upper["status"] == "pass" and same_upper["overload"] == "f32"
    assert "composed: numpy.pad [f32] then torch.nn.functional.max_pool2d [f32]" in same_upper["notes"]
    assert pool["test_maxpool_2d_uint8"]["subject"] == "dtype uint8"
    assert pool["test_maxpool_2d_precomputed_strides"]["status"] == "pass"
    # LayerNormalization's Mean and InvStdDev: torch.native_layer_norm's tuple result, every output compared
    ln = ops["LayerNormalization"]
    assert ln["pass"] == ln["cases"] > 0 and ln["partial"] == 0
    first = ln["results"][0]
    assert first["status"] == "pass" and first["outputs_checked"] == ["Y", "Mean", "InvStdDev"]
    # an output the op does not compute (MaxPool's Indices): inexpressible, but Y was compared
    partly = [c for c in ops["MaxPool"]["results"] if c.get("partial")]
    assert partly and all(c["subject"] == "output z" and c["partial"] == "pass" for c in partly)  # the case's names
    assert all(c["outputs_checked"] == ["y"] and c["outputs_not_computed"] == ["z"] for c in partly)


def test_json_prints_only_json_and_progress_goes_to_stderr():
    proc = subprocess.run([sys.executable, "-m", "opgen.cli", "conformance", "onnx", "Exp", "--json",
                           "--root", str(CHECKOUT)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)  # the whole of stdout is one document
    assert report["schema"] == "opgen-conformance-onnx/1" and by_op(report)["Exp"]["pass"] == 2
    assert "conformance onnx [1/1] Exp (numpy.exp): 2 pass" in proc.stderr  # piped: a line per op


@pytest.fixture
def exp_add_project(project: Path) -> Path:
    copy_entries(project, {"numpy.exp", "operator.add"})
    return project


def test_a_wrong_kernel_is_reported_wrong_and_fails_the_run(exp_add_project: Path):
    project = exp_add_project
    shipped = Registry(project / "generated").get("numpy.exp", "f32", "cpu-cpp").file("kernel").read_text()
    assert shipped.count(EXP_LAST_STEP) >= 1
    readmit(project, "numpy.exp", "f32", shipped.replace(EXP_LAST_STEP, EXP_OFF_BY_ONE_PERCENT))

    r = conformance("Exp", "Add", "--json", "--root", str(project))
    assert r.exit_code == 1, r.output
    report = json.loads(r.stdout)
    assert not report["ok"] and report["totals"]["wrong"] == 2
    exp = by_op(report)["Exp"]
    assert (exp["wrong"], exp["pass"], exp["error"]) == (2, 0, 0)
    cases = {c["case"]: c for c in exp["results"]}
    assert set(cases) == {"test_exp", "test_exp_example"}
    wrong = cases["test_exp_example"]
    assert wrong["status"] == "wrong" and wrong["overload"] == "f32"
    m = wrong["mismatch"]
    assert m["output"] == "y" and m["reason"] == "values" and m["rtol"] == 1e-3
    assert 0.009 < m["max_rel_error"] < 0.011  # the 1% it is off by
    assert "differ beyond rtol=0.001" in wrong["message"]
    add = by_op(report)["Add"]
    assert add["wrong"] == 0 and add["error"] == 0 and add["pass"] >= 2  # the other op is unaffected

    table = conformance("Exp", "--root", str(project))
    assert table.exit_code == 1
    assert "WRONG" in table.stdout and "test_exp_example [f32]" in table.stdout
    assert "conformance onnx FAILED" in table.stdout


def test_a_kernel_changed_behind_the_registrys_back_is_not_run(exp_add_project: Path):
    """A kernel file edited without re-admission is stale: the registry does not serve it, so its
    cases cannot run (inexpressible, with the registry's reason), and the edit is never executed."""
    kernel = Registry(exp_add_project / "generated").get("numpy.exp", "f32", "cpu-cpp").file("kernel")
    kernel.write_text(EXP_CRASHES)
    r = conformance("Exp", "--json", "--root", str(exp_add_project))
    assert r.exit_code == 0, r.output
    exp = by_op(json.loads(r.stdout))["Exp"]
    assert exp["inexpressible"] == 2 and exp["error"] == 0
    assert "changed since admission" in exp["results"][0]["why"]


def test_a_crash_or_a_hang_is_an_error_and_the_run_goes_on(exp_add_project: Path):
    project = exp_add_project
    readmit(project, "numpy.exp", "f32", EXP_CRASHES)
    readmit(project, "operator.add", "tensor_f32", ADD_HANGS)
    r = conformance("Exp", "Add", "Softmax", "--timeout", "2", "--json", "--root", str(project))
    assert r.exit_code == 1, r.output
    ops = by_op(json.loads(r.stdout))
    exp = ops["Exp"]
    assert exp["error"] == 2 and exp["wrong"] == 0
    crash = exp["results"][0]
    assert crash["status"] == "error" and crash["error_kind"] == "crash"
    assert "died with SIG" in crash["message"]
    add = ops["Add"]
    assert add["error"] == 2 and add["wrong"] == 0  # the two float32 cases; the other dtypes' kernels still pass
    hung = next(c for c in add["results"] if c["status"] == "error")
    assert hung["error_kind"] == "timeout" and "2 s timeout" in hung["message"]
    # Softmax has no entry in this project: its cases say so, they are not errors
    soft = ops["Softmax"]
    assert soft["inexpressible"] == soft["cases"] == 7
    assert soft["results"][0]["subject"] == "no served cpu-cpp kernel for torch.nn.functional.softmax [f32]"


def test_the_nightly_run_records_it_a_wrong_case_fails_the_night_and_the_report_shows_it(exp_add_project: Path):
    project = exp_add_project
    shipped = Registry(project / "generated").get("numpy.exp", "f32", "cpu-cpp").file("kernel").read_text()
    readmit(project, "numpy.exp", "f32", shipped.replace(EXP_LAST_STEP, EXP_OFF_BY_ONE_PERCENT))
    seen = []
    part = run_conformance_slice(Project(project), load_all(project / "specs"), WHOLE, ["cpu-cpp"],
                                 ["numpy.exp", "operator.add"], lambda *a: seen.append(a))
    assert part["ran"] and part["onnx"] and [r["key"] for r in part["results"]] == ["cpu-cpp/Add", "cpu-cpp/Exp"]
    assert seen[-1][:4] == ("conformance", "Exp (numpy.exp, cpu-cpp)", 2, 2) and "2 wrong" in seen[-1][4]
    night = {"schema": SCHEMA, "run_id": "conf1", "started": "2026-11-01T00:00:00+00:00", "seconds": 1.0,
             "budget": budget("smoke").as_dict(), "targets": ["cpu-cpp"], "ops": None,
             "shards": [{"index": 1, "count": 1, "targets": ["cpu-cpp"]}], "entries": [],
             "corpus": {"ran": False, "reason": "skipped"}, "bench": {"ran": False, "reason": "skipped"},
             "conformance": part}
    final = finalize(History(project / "reports" / "nightly"), merge([night]), 0.25)
    cmp = final["comparison"]
    assert not cmp["ok"] and [f["id"] for f in cmp["regressions"]] == ["cpu-cpp/Exp"]
    assert "2 wrong of 2 cases" in cmp["regressions"][0]["summary"] and "test_exp" in cmp["regressions"][0]["detail"]
    add_passed = next(r for r in part["results"] if r["key"] == "cpu-cpp/Add")["pass"]
    assert counts(final)["conformance_wrong"] == 2 and counts(final)["conformance_pass"] == add_passed >= 2

    build_site(Project(project))
    html = (project / "reports" / "index.html").read_text()
    assert 'id="conformance-cpu-cpp-Exp" class="res-fail"' in html and "test_exp_example" in html
    assert 'href="#conformance-cpu-cpp-Add"' in html  # the matrix's column links to the op's row
    page = (project / "reports" / "ops" / "numpy.exp.html").read_text()
    assert 'id="conformance"' in page and "wrong: <code>test_exp</code>" in page
    md = (project / "reports" / "summary.md").read_text()
    assert "### ONNX conformance" in md and "| Exp | numpy.exp | cpu-cpp | 2 | 0 | 2 | 0 | 0 |" in md


def test_errors_found_after_parsing_exit_1():
    assert conformance("Nope", "--root", str(CHECKOUT)).exit_code == 1
    r = conformance("opgen.text.bpe_encode", "--root", str(CHECKOUT))
    assert r.exit_code == 1 and "no ONNX op maps to opgen.text.bpe_encode" in r.output
    r = conformance("Exp", "--target", "vulkan", "--root", str(CHECKOUT))
    assert r.exit_code == 1 and "unknown target" in r.output


# ------------------------------------------------------------------ translations, without running


SPECS = load_all(CHECKOUT / "specs")
TABLE = {m.onnx_op: m for m in MAPPINGS}


def translate(op: str, inputs: list, attrs: dict | None = None, outputs=("y",), opset: int = 22):
    m = TABLE[op]
    node = Node(op, opset, attrs or {}, tuple(inputs), tuple(outputs), 1e-3, 1e-7)
    return m.plan(node, SPECS)


def inexpressible(*args, **kwargs) -> Inexpressible:
    with pytest.raises(Inexpressible) as info:
        translate(*args, **kwargs)
    return info.value


def test_every_mapping_names_an_existing_spec_and_is_documented():
    assert len(TABLE) == len(MAPPINGS)
    assert all(op in SPECS for m in MAPPINGS for op in m.ops)
    doc = (CHECKOUT / "docs" / "conformance.md").read_text()
    assert all(f"| {m.onnx_op} | `{m.opgen_op}` |" in doc for m in MAPPINGS)


def test_a_row_may_choose_among_its_ops_and_only_among_them():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    upper = translate("Trilu", [x, np.array(1, np.int64)])
    lower = translate("Trilu", [x], {"upper": 0})
    assert upper.spec.op == "torch.triu" and upper.args["diagonal"] == 1
    assert lower.spec.op == "torch.tril" and lower.args["diagonal"] == 0
    m = TABLE["Trilu"]
    assert m.ops == ("torch.triu", "torch.tril")
    rogue = Mapping("Trilu", "torch.triu", lambda node, spec, *_: Plan(spec.overloads[0], {}, spec=SPECS["torch.erf"]),
                    "a translation that picks an op its row does not name", others=("torch.tril",))
    with pytest.raises(MappingError, match="torch.erf, which its row does not name"):
        rogue.plan(Node("Trilu", 22, {}, (x,), ("y",), 1e-3, 1e-7), SPECS)
    gone = {op: spec for op, spec in SPECS.items() if op != "torch.tril"}
    with pytest.raises(Inexpressible, match="op torch.tril: this project has no spec for it"):
        m.plan(Node("Trilu", 22, {}, (x,), ("y",), 1e-3, 1e-7), gone)


def test_integer_div_is_floordiv_only_where_truncation_agrees():
    a = np.array([7, -8, 9, 0], np.int64)
    assert translate("Div", [a, np.array([2, 4, -3, 5], np.int64)]).spec.op == "operator.floordiv"
    assert translate("Div", [a.astype(np.float32), np.float32([2, 4, 3, 5])]).spec.op == "operator.truediv"
    # an inexact negative quotient: truncated as (A - fmod(A, B)) // B, three steps, ONNX's values
    b = np.array([2, 3, 2, 5], np.int64)
    trunc = translate("Div", [a, b])
    assert trunc.spec.op == "numpy.fmod" and trunc.args["x1"] is a and trunc.args["x2"] is b
    produced = through_references(TABLE["Div"], trunc)
    np.testing.assert_array_equal(produced[0], [3, -2, 4, 0])  # 7/2, -8/3, 9/2, 0/5 towards zero
    assert "zero divisor" in str(inexpressible("Div", [a, np.array([2, 0, 2, 5], np.int64)]))
    lowest = np.array([-128, 6], np.int8)
    assert "-128 / -1" in str(inexpressible("Div", [lowest, np.array([-1, 3], np.int8)]))  # it overflows
    big = np.array([2**63 + 5, 1], np.uint64)
    assert "uint64 values above" in str(inexpressible("Clip", [big, np.array(0, np.uint64)], opset=13))


def test_several_unsqueeze_or_squeeze_axes_are_a_reshape():
    x = np.zeros((3, 4, 5), np.float32)
    plan = translate("Unsqueeze", [x, np.array([5, 4, 2], np.int64)], opset=13)
    assert plan.spec.op == "numpy.reshape" and plan.args["shape"] == [3, 4, 1, 5, 1, 1]
    assert list(np.expand_dims(x, (5, 4, 2)).shape) == plan.args["shape"]
    assert translate("Unsqueeze", [x, np.array([-1], np.int64)], opset=13).args["axis"] == -1
    assert "repeated or out of range" in str(inexpressible("Unsqueeze", [x, np.array([1, 1], np.int64)], opset=13))
    y = np.zeros((1, 3, 1, 5), np.float32)
    assert translate("Squeeze", [y], opset=13).args["shape"] == [3, 5]
    assert translate("Squeeze", [y, np.array([-2], np.int64)], opset=13).args["axis"] == -2
    assert "not all dims of 1" in str(inexpressible("Squeeze", [y, np.array([0, 1], np.int64)], opset=13))


def test_translations_honour_onnx_semantics():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    # Softmax before opset 13 coerces to 2-d at axis; from 13 it is along axis
    old = translate("Softmax", [x], {"axis": 1}, opset=11)
    assert old.args["x"].shape == (2, 12) and old.args["dim"] == 1
    assert old.outputs[0](np.zeros((2, 12), np.float32)).shape == (2, 3, 4)
    assert translate("Softmax", [x], {"axis": 1}, opset=13).args["dim"] == 1
    # ReduceSum: adjacent axes merged, keepdims by a reshape; non-adjacent ones are not expressible
    plan = translate("ReduceSum", [x, np.array([1, 2])], {"keepdims": 1}, opset=13)
    assert plan.args["a"].shape == (2, 12) and plan.args["axis"] == 1
    assert plan.outputs[0](np.zeros(2, np.float32)).shape == (2, 1, 1)
    assert inexpressible("ReduceSum", [x, np.array([0, 2])], opset=13).subject == "axes [0, 2]"
    # Gemm: transposes are views; linear where it can say it, else torch.addmm (alpha, beta, C any (M, N) view)
    a, b = np.ones((3, 5), np.float32), np.ones((4, 5), np.float32)
    plan = translate("Gemm", [a, b, np.zeros((1, 4), np.float32)], {"transB": 1}, opset=13)
    assert plan.spec.op == "torch.nn.functional.linear" and plan.args["weight"].shape == (4, 5) and plan.args["bias"].shape == (4,)
    scaled = translate("Gemm", [a, b.T], {"alpha": 0.5}, opset=13)
    assert scaled.spec.op == "torch.addmm" and scaled.args["alpha"] == 0.5 and scaled.args["beta"] == 0.0
    column = translate("Gemm", [a, b.T, np.arange(3, dtype=np.float32).reshape(3, 1)], {"beta": 2.0}, opset=13)
    assert column.args["input"].shape == (3, 4) and column.args["input"].strides[1] == 0  # a broadcast view
    nan_c = np.full((3, 4), np.nan, np.float32)
    assert "non-finite C" in inexpressible("Gemm", [a, b.T, nan_c], {"beta": 0.0}, opset=13).subject
    # MatMul: 1-d operands as NumPy does
    plan = translate("MatMul", [np.ones(3, np.float32), np.ones((2, 3, 4), np.float32)], opset=13)
    assert plan.args["a"].shape == (1, 3) and plan.outputs[0](np.zeros((2, 1, 4), np.float32)).shape == (2, 4)
    # Gather is numpy.take (negative indices wrap in both; int32 indices become int64, exactly);
    # GatherElements is take_along_axis, data cut to shorter indices along the other axes
    table = np.arange(10, dtype=np.float32).reshape(5, 2)
    gather = translate("Gather", [table, np.array([1, 0], np.int32)], {"axis": -1}, opset=13)
    assert gather.args["axis"] == 1 and gather.args["indices"].dtype == np.int64
    elements = translate("GatherElements", [table, np.array([[4], [-1]])], {"axis": 0}, opset=13)
    assert elements.args["arr"].shape == (5, 1) and elements.notes
    assert np.take_along_axis(elements.args["arr"], elements.args["indices"], 0).tolist() == [[8.0], [8.0]]
    # pooling: count_include_pad=0 with padding and ceil mode through the 2-d options overload, the
    # plain one where its windows are ONNX's; odd SAME padding and dilated averages inexpressible
    img = np.ones((1, 1, 5, 5), np.float32)
    excluded = translate("AveragePool", [img], {"kernel_shape": [3, 3], "pads": [1] * 4})
    assert excluded.overload.name == "f32_options" and excluded.args["count_include_pad"] is False
    counted = translate("AveragePool", [img], {"kernel_shape": [3, 3], "pads": [1] * 4, "count_include_pad": 1})
    assert counted.overload.name == "f32" and counted.args["pad_w"] == 1
    assert translate("MaxPool", [img], {"kernel_shape": [3, 3], "pads": [1] * 4}).args["pad_h"] == 1
    ceil = translate("MaxPool", [img], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1})
    assert ceil.overload.name == "f32_options" and ceil.args["ceil_mode"] is True and ceil.args["dilation_w"] == 1
    dilated = translate("MaxPool", [img], {"kernel_shape": [2, 2], "dilations": [2, 1]})
    assert (dilated.args["dilation_h"], dilated.args["dilation_w"], dilated.args["ceil_mode"]) == (2, 1, False)
    # AveragePool's dilations: opgen.nn.avg_pool3d_dilated on a view with a size-1 pooled dim in front
    dil = translate("AveragePool", [img], {"kernel_shape": [2, 2], "dilations": [2, 2], "ceil_mode": 1})
    assert dil.spec.op == "opgen.nn.avg_pool3d_dilated" and dil.args["input"].shape == (1, 1, 1, 5, 5)
    assert (dil.args["kernel_d"], dil.args["pad_d"], dil.args["dilation_d"], dil.args["dilation_w"]) == (1, 0, 1, 2)
    assert dil.args["count_include_pad"] is False and dil.outputs[0](np.zeros((1, 1, 1, 3, 3))).shape == (1, 1, 3, 3)
    same = translate("MaxPool", [img], {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"})
    assert same.spec.op == "numpy.pad" and same.args["pad_width"] == [0, 0, 0, 0, 0, 1, 0, 1]
    assert same.args["constant_values"] == -np.inf and same.outputs == {} and same.then is not None
    # Attention causal; RotaryEmbedding's tables
    q = np.ones((1, 2, 3, 4), np.float32)
    causal = translate("Attention", [q, q, q, None, q, q], {"is_causal": 1}, opset=23)  # a past cache of 3 keys
    assert causal.args["is_causal"] and causal.args["offset"] == 3 and causal.args["k"].shape == (1, 2, 6, 4)
    assert causal.args["bias"].shape == (1, 2, 3, 6) and not causal.args["bias"].any()
    mask = np.array([True, True, False])
    masked = translate("Attention", [q, q, q, mask], {"softcap": 2.0}, opset=23)
    assert masked.args["softcap"] == 2.0 and list(masked.args["bias"][0, 1, 2]) == [0, 0, -np.inf]
    # half storage through the half overloads, the bias (here the bool mask's -inf) in Q's dtype
    for half, overload in ((np.float16, "f16"), (np.dtype("bfloat16"), "bf16")):
        plan = translate("Attention", [q.astype(half)] * 3 + [mask], opset=23)
        assert plan.overload.name == overload and plan.args["bias"].dtype == np.dtype(half)
    mixed = inexpressible("Attention", [q.astype(np.float16), q, q], opset=23)
    assert mixed.subject == "dtype float32" and "Q, K and V alike" in mixed.why
    q2 = np.ones((2, 2, 3, 4), np.float32)
    ragged = translate("Attention", [q2, q2, q2, None, None, None, np.array([3, 2])], {"is_causal": 1}, opset=24)
    assert ragged.args["q"].shape == (1, 2, 3, 4) and ragged.args["offset"] == 0  # one call per batch entry
    assert ragged.outputs == {} and "one opgen.nn.attention call per batch entry" in " ".join(ragged.notes)
    even = translate("Attention", [q2, q2, q2, None, None, None, np.array([2, 2])], {"is_causal": 1}, opset=24)
    assert even.args["offset"] == -1 and (even.args["bias"][..., 2] == -np.inf).all()  # 2 - S; key 2 padding
    cache = np.ones((8, 2), np.float32)  # (max position, R): a rotary dim of 4, the head dim
    rot = translate("RotaryEmbedding", [q, cache, cache, np.array([[0, 5, 7]])], opset=23)
    assert rot.args["cos"].shape == (1, 1, 3, 2) and rot.args["interleaved"] is False
    assert inexpressible("RotaryEmbedding", [q, cache, cache, np.array([[0, 5, 8]])], opset=23).subject == \
        "position_ids out of range"
    # Pow on float and int tensors of one dtype; a mixed pair is computed where NumPy promotes it (float64),
    # each operand cast there by opgen.cast, the result cast back to A's dtype
    assert translate("Pow", [x, x], opset=15).overload.name == "tensor_f32"
    assert translate("Pow", [x.astype(np.int64), x.astype(np.int64)], opset=15).overload.name == "tensor_i64"
    mixed = translate("Pow", [x, x.astype(np.int64)], opset=15)
    assert (mixed.spec.op, mixed.overload.name, mixed.auxiliary) == ("opgen.cast", "f32_to_f64", True)
    assert mixed.notes[0].startswith("computed in float64 (float32, int64 cast by opgen.cast, the result cast to float32)")
    # the comparisons take tensors and give bool tensors, of every integer width; a float16 names its dtype
    assert translate("Equal", [x, x], opset=19).overload.name == "tensor_f32"
    assert translate("Equal", [x.astype(np.uint16)] * 2, opset=19).overload.name == "tensor_u16"
    assert "float16" in inexpressible("Equal", [x.astype(np.float16), x.astype(np.float16)], opset=19).subject


def test_outputs_compare_as_onnx_runner_does():
    f = np.float32
    assert compare(np.array([1.0, np.nan, np.inf], f), np.array([1.0005, np.nan, np.inf], f), 1e-3, 1e-7) is None
    assert compare(np.array([1.0, 0.0], f), np.array([1.0, np.nan], f), 1e-3, 1e-7)["first_index"] == [1]
    assert compare(np.array([np.inf], f), np.array([-np.inf], f), 1e-3, 1e-7)["reason"] == "values"
    assert compare(np.zeros(2, np.float64), np.zeros(2, f), 1e-3, 1e-7)["reason"] == "dtype"
    assert compare(np.zeros((2, 1), f), np.zeros(2, f), 1e-3, 1e-7)["reason"] == "shape"
    assert compare(np.array(1.002, f), np.array(1.0, f), 1e-3, 1e-7)["mismatched"] == 1


def test_a_shard_with_a_wrong_conformance_case_fails() -> None:
    """`opgen nightly --shard` exits 1 on its own when a served kernel gives a wrong ONNX value
    (not only the merge job): the shard result is a failure."""
    from opgen.service import shard_failed

    clean = {"entries": [], "corpus": {"results": []}, "bench": {},
             "conformance": {"ran": True, "results": [{"results": [{"case": "test_exp", "status": "pass"}]}]}}
    assert not shard_failed(clean)
    for status in ("wrong", "error"):
        bad = json.loads(json.dumps(clean))
        bad["conformance"]["results"][0]["results"].append({"case": "test_exp_example", "status": status})
        assert shard_failed(bad), status
    inexpressible = json.loads(json.dumps(clean))
    inexpressible["conformance"]["results"][0]["results"].append({"case": "t", "status": "inexpressible"})
    assert not shard_failed(inexpressible)
    broken = json.loads(json.dumps(clean))
    broken["conformance"] = {"ran": False, "error": "opgen conformance onnx failed: ..."}
    assert shard_failed(broken)


def test_elementwise_translations_use_each_specs_own_parameter_names():
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    y = np.ones(4, dtype=np.float32)
    plan = translate("Max", [x, y])
    assert set(plan.args) == {"x1", "x2"} and plan.overload.name == "tensor_f32"
    three = translate("Max", [x, y, y])  # a fold: the first call's result is the second's x1
    assert three.outputs == {} and three.spec.op == "numpy.maximum" and "a left fold" in three.notes[0]
    assert three.then(np.zeros((3, 4), np.float32)).args["x1"].shape == (3, 4)
    assert "no inputs" in inexpressible("Max", []).subject
    assert set(translate("Relu", [x]).args) == {"input"}
    assert translate("Sqrt", [x]).args.keys() == {"x"}
    leaky = translate("LeakyRelu", [x], {"alpha": 0.1})
    assert leaky.args["negative_slope"] == pytest.approx(0.1)
    assert translate("LeakyRelu", [x]).args["negative_slope"] == pytest.approx(0.01)
    assert set(translate("Sub", [x, y]).args) == {"a", "b"}
    # int32 Div, which floordiv lacks or fmod does: computed in int64 through opgen.cast, the result cast back
    ints = translate("Div", [np.int32([7, -7, 6]), np.int32([2, 2, -4])])
    assert ints.spec.op == "opgen.cast" and ints.auxiliary
    np.testing.assert_array_equal(through_references(TABLE["Div"], ints)[0], np.int32([3, -3, -1]))


# ------------------------------------------------------------------ composed plans (several kernel calls)

# The ONNX ops whose mapping composes several opgen ops' calls for some of their cases.
COMPOSED = ("Max", "Min", "ArgMax", "ArgMin", "CumSum", "ReduceSum", "ReduceMax", "ReduceMin", "MaxPool", "AveragePool",
            "LpNormalization", "Attention", "Mod", "Pow")


def through_references(mapping: Mapping, plan: Plan) -> dict[int, np.ndarray]:
    """Each step of ``plan`` computed by its overload's spec reference (standing in for the kernel,
    which the gate proved against it), the next step planned from that result as the runner plans
    it (Mapping.following): every ONNX output, by position, that a step produces."""
    produced: dict[int, np.ndarray] = {}
    while True:
        sig = plan.overload.sig
        result = call_reference(plan.spec.reference_for(plan.overload), [plan.args[p.name] for p in sig.params])
        result = tuple(np.asarray(r) for r in result) if isinstance(result, tuple) else np.asarray(result)
        if not isinstance(result, tuple) and sig.tensor_results:  # the kernel writes the result's dtype
            result = result.astype(np.dtype(sig.results[0][1].dtype.np), copy=False)
        for position, produce in plan.outputs.items():
            produced[position] = produce(result)
        if plan.then is None:
            return produced
        plan = mapping.following(plan, result)


def test_composed_plans_compute_what_onnx_expects_step_by_step():
    """Every data set the composing mappings express, run step by step through the references, gives
    ONNX's expected outputs by ONNX's own comparison: the composition itself is exact (the runner
    then proves the same with the served kernels)."""
    composed: set[str] = set()
    compared: dict[str, set[str]] = {}  # the outputs compared, by case
    for op, cases in cases_of(set(COMPOSED)).items():
        mapping = TABLE[op]
        for case in cases:
            for inputs, outputs in case.data_sets:
                node, positions = _node(case, inputs)
                try:
                    plan = mapping.plan(node, SPECS)
                except Inexpressible:
                    continue
                composed.add(case.name)  # one step (Max of one input: maximum(x, x)) or several
                try:
                    produced = through_references(mapping, plan)
                except Inexpressible:  # a later step's dtype (bfloat16 concatenated): not runnable
                    continue
                for position, want in zip(positions, outputs):
                    if position in produced:
                        assert compare(produced[position], want, case.rtol, case.atol) is None, \
                            (case.name, case.outputs[position])
                        compared.setdefault(case.name, set()).add(case.outputs[position])
    for name in ("test_max_example", "test_min_one_input", "test_argmax_keepdims_random_select_last_index",
                 "test_argmin_negative_axis_keepdims_example_select_last_index", "test_cumsum_1d_reverse_exclusive",
                 "test_cumsum_1d_exclusive", "test_reduce_max_empty_set", "test_reduce_min_empty_set",
                 "test_maxpool_2d_pads", "test_averagepool_2d_same_lower", "test_averagepool_2d_pads_count_include_pad",
                 "test_l1normalization_axis_last", "test_attention_4d_with_past_and_present",
                 "test_attention_4d_causal_nonpad_batch_prefill",
                 # computed in another dtype through opgen.cast (through_casts)
                 "test_cumsum_2d_int32", "test_cumsum_1d_int32_exclusive", "test_mod_mixed_sign_float16",
                 "test_mod_mixed_sign_int32", "test_pow_types_float32_int64", "test_pow_types_int64_float32",
                 "test_max_float16", "test_min_float16", "test_reduce_max_bool_inputs",
                 # AveragePool's dilations through opgen.nn.avg_pool3d_dilated (2-d as a 3-d view)
                 "test_averagepool_2d_dilations", "test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True"):
        assert name in composed, name
    # Attention's qk_matmul_output composed in each mode: 0 (the scaled product), 1 with softcap, 2
    # (+ the bias, causal with a past), 3 (the softmax; fully masked rows 0; GQA, a window and softcap)
    for name in ("test_attention_4d_with_qk_matmul", "test_attention_3d_with_past_and_present_qk_matmul_softcap",
                 "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal",
                 "test_attention_4d_with_qk_matmul_softmax", "test_attention_24_fullymasked_qk_matmul_output_mode3_zero",
                 "test_attention_local_window_gqa_rank4_mask"):
        assert "qk_matmul_output" in compared.get(name, set()), name


def test_composed_mappings_say_what_they_still_cannot_express():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    # Pow of float32 by uint32: NumPy computes it in float64, but no opgen.cast takes uint32 there
    unsigned = inexpressible("Pow", [x, x.astype(np.uint32)])
    assert unsigned.subject == "dtype uint32" and "needs an opgen.cast from uint32 to float64" in unsigned.why
    # int16 Max: no overload takes it, and the row widens float16 only (nothing is cast on a guess)
    assert inexpressible("Max", [x.astype(np.float64), x.astype(np.int16)]).subject.startswith(("dtype", "argument"))
    # ReduceMax over an empty set of booleans: no infinity to pad with
    empty = np.zeros((2, 0, 3), bool)
    assert inexpressible("ReduceMax", [empty, np.array([1])], opset=18).subject == "an empty reduction of dtype bool"
    # AveragePool: ceil-mode windows past asymmetric pads; a window wholly in the padding
    img = np.ones((1, 1, 5, 5), np.float32)
    past = inexpressible("AveragePool", [img], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 0, 0],
                                                "ceil_mode": 1})
    assert "a window past the padded input" in past.why
    assert "wholly in the padding" in inexpressible("MaxPool", [img], {"kernel_shape": [2, 2], "pads": [2, 0, 0, 0]}).why
    # LpNormalization p=1: ONNX's reference sums x, its spec |x|; 0 / 0 where a slice is all zeros
    assert inexpressible("LpNormalization", [x - 1], {"p": 1}).subject == "negative values with p=1"
    assert inexpressible("LpNormalization", [x * 0], {"p": 1, "axis": 0}).subject == "a slice whose L1 norm is 0"
    # ArgMax select_last_index=1 over an empty axis still raises in numpy.argmax
    assert inexpressible("ArgMax", [np.zeros((2, 0), np.float32)], {"axis": 1, "select_last_index": 1}).subject == \
        "an empty axis"


def test_the_runner_runs_every_step_of_a_composed_plan_through_the_served_kernels():
    r = conformance("ArgMax", "CumSum", "Max", "ReduceMax", "AveragePool", "Attention", "--json", "--root", str(CHECKOUT))
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["totals"]["wrong"] == 0 and report["totals"]["error"] == 0
    results = {c["case"]: c for op in report["ops"] for c in op["results"]}
    for name, steps in (("test_argmax_keepdims_random_select_last_index", "numpy.argmax [f32] then operator.sub"),
                        ("test_cumsum_1d_reverse_exclusive", "numpy.cumsum [f64] then numpy.pad"),
                        ("test_max_example", "numpy.maximum [tensor_f32] then numpy.maximum [tensor_f32]"),
                        ("test_reduce_max_empty_set", "numpy.pad [f32] then numpy.max"),
                        ("test_averagepool_2d_same_upper", "then torch.nn.functional.avg_pool2d [f32] then "
                                                           "operator.truediv"),
                        ("test_attention_4d_with_past_and_present", "opgen.nn.attention [f32] then numpy.concatenate"),
                        ("test_cumsum_2d_int32", "opgen.cast [i32_to_i64] then numpy.cumsum [i64] then opgen.cast "
                                                 "[i64_to_i32]"),
                        ("test_max_float16", "opgen.cast [f16_to_f32] then opgen.cast [f16_to_f32] then "
                                             "numpy.maximum [tensor_f32] then opgen.cast [f32_to_f16]")):
        assert results[name]["status"] == "pass", results[name]
        assert any(n.startswith("composed: ") and steps in n for n in results[name]["notes"]), results[name]["notes"]
    present = results["test_attention_4d_with_past_and_present"]
    assert present["outputs_checked"] == ["Y", "present_key", "present_value"]
    # what is left says why: a dtype without an overload; an output no op computes, the others compared
    # a case computed in another dtype is reported under the op's own overload, not the cast's
    assert results["test_cumsum_2d_int32"]["overload"] == "i64"
    assert any(n.startswith("computed in int64") for n in results["test_cumsum_2d_int32"]["notes"])
    assert results["test_reduce_max_empty_set_bool"]["subject"] == "an empty reduction of dtype bool"
    # qk_matmul_output composed after the attention call and the presents (float32), every output compared
    qk = results["test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal"]
    assert qk["status"] == "pass" and qk["outputs_checked"] == ["Y", "present_key", "present_value", "qk_matmul_output"]
    assert any(n.startswith("composed: opgen.nn.attention [f32] then numpy.concatenate") and
               "then operator.mul [tensor_f32] then operator.mul [tensor_f32] then operator.matmul [f32] then "
               "operator.add [tensor_f32]" in n for n in qk["notes"]), qk["notes"]
    # a float16 case's qk_matmul_output is not computed: the others compared
    half = results["test_attention_24_qk_matmul_output_mode3_softmax_precision"]
    assert half["status"] == "inexpressible" and half["partial"] == "pass" and half["subject"] == "output qk_matmul_output"
    assert half["outputs_checked"] == ["Y"]
    dilated = results["test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True"]
    assert dilated["status"] == "pass" and dilated["overload"] == "f32"
    # a later step's dtype (bfloat16 concatenated) is inexpressible, decided after the first steps ran
    assert results["test_attention_4d_causal_padded_kv_bf16"]["subject"] == "dtype bfloat16"
