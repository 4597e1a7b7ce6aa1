"""The shipped library itself: every initial spec verified, replayable offline, and sound at
the edges where Python's semantics exceed the native types."""

from __future__ import annotations

import ctypes
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from opgen.gate.admission import GATE_VERSION, build_job
from opgen.build.cpp import build
from opgen.cli import app
from opgen.verify.ffi import Kernel
from opgen.llm.recordings import Recordings, request_hash
from opgen.project import PACKAGE_ROOT, Project
from opgen.prompts import render_request
from opgen.registry import Registry
from opgen.spec.model import TARGET_IDS, load_all
from opgen.targets.catalog import target_for

ROOT = PACKAGE_ROOT
INITIAL_OPS = {
    "operator.add": {"int", "float", "str"},
    "operator.mul": {"int", "float", "str_repeat"},
    "operator.pow": {"int", "float"},
    "operator.matmul": {"f32", "f64"},
    "numpy.exp": {"f32", "f64"},
    "numpy.sum": {"f32", "f64"},
    "torch.nn.functional.softmax": {"f32", "f64"},
}
runner = CliRunner()


@pytest.fixture(scope="module")
def specs():
    return load_all(ROOT / "specs")


@pytest.mark.parametrize("target", ["cpu-cpp", "cpu-rust"])
def test_list_shows_every_initial_spec_verified(target):
    result = runner.invoke(app, ["list", "--json", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    verified = {(r["op"], r["overload"]) for r in rows if r["target"] == target and r["status"] == "verified"}
    for op, overloads in INITIAL_OPS.items():
        for o in overloads:
            assert (op, o) in verified, f"{op} {o} is not verified for {target}: {[r for r in rows if r['op'] == op]}"


def test_every_entry_records_evidence_and_truthful_provenance(specs):
    for entry in Registry(ROOT / "generated").entries():
        ev, pv = entry.data["evidence"], entry.data["provenance"]
        assert ev["examples"] > 0 and len(ev["runs"]) >= 3
        where = f"{entry.op} {entry.overload} {entry.target} {entry.variant}"
        assert ev.get("gate_version") == GATE_VERSION, f"{where} was admitted by an older gate; re-admit it"
        assert ev["stages"]["scale"]["examples"] == ev["stages"]["scale"]["cases"], where
        o = specs[entry.op].overload(entry.overload)
        if specs[entry.op].threads_allowed(o) and entry.target in ("cpu-cpp", "cpu-rust"):
            counts = ev["stages"]["threads"]["counts"]
            assert 1 in counts and max(counts) >= 8, f"{where}: not run at 1 and at >= 8 threads"
        assert {"python", "numpy", "hypothesis"} <= set(ev["libraries"])
        assert ev["build"]["flags"] and ev["build"]["isa"]
        assert pv["provider"] in {"file", "replay", "openai-compatible"}
        if pv["provider"] == "file":
            assert pv["model"] is None, "a file-exchange answer must not claim a model"
        if pv["provider"] == "replay":
            assert pv["original"]["provider"] and "model" in pv["original"]
        assert entry.file("transcript").exists()
        assert entry.data["signature"]["c_symbol"].startswith("opgen_")


def test_every_entry_has_a_recording_for_its_current_first_request(specs):
    """Offline replay needs the exact request; a prompt or spec change must be re-recorded."""
    project = Project(ROOT)
    recordings = Recordings(project.recordings)
    for entry in Registry(ROOT / "generated").entries():
        assert recordings.find(request_hash(current_request(project, specs, entry), cli_target(entry))) is not None, (
            f"{entry.op} {entry.overload} {entry.target} {entry.variant}: no recording for the current prompt; "
            "run scripts/record_answers.py"
        )


def test_no_recording_is_left_over_from_an_old_prompt(specs):
    """A recording no entry's current request matches is dead weight (and misleads a reader)."""
    project = Project(ROOT)
    current = {request_hash(current_request(project, specs, e), cli_target(e))[:16]
               for e in Registry(ROOT / "generated").entries()}
    orphans = [p.relative_to(ROOT).as_posix() for p in sorted(project.recordings.glob("*/*.json"))
               if p.stem.rsplit(".", 1)[-1] not in current]
    assert orphans == [], "recordings of requests no entry makes any more; run scripts/record_answers.py --prune"


def cli_target(entry) -> str:
    return {v: k for k, v in TARGET_IDS.items()}[entry.target]


def current_request(project: Project, specs, entry) -> list[dict[str, str]]:
    spec = specs[entry.op]
    return render_request(project.prompts, spec, spec.overload(entry.overload), cli_target(entry), entry.variant)


def test_wrong_handwritten_matmul_is_rejected_with_a_counterexample():
    result = runner.invoke(app, ["verify", "--source", str(ROOT / "examples/wrong_matmul.cpp"),
                                 "--op", "operator.matmul", "--examples", "40", "--root", str(ROOT)])
    assert result.exit_code == 1
    assert "rejected operator.matmul f32" in result.output
    assert "first mismatch at index" in result.output and "Counterexample" in result.output


def _kernel(specs, op: str, overload: str) -> Kernel:
    entry = Registry(ROOT / "generated").get(op, overload, "cpu-cpp")
    spec = specs[op]
    o = spec.overload(overload)
    built = build([build_job(spec, o, entry.file("kernel").read_text())])[0]
    assert built.ok, built.diagnostics
    return Kernel(ctypes.CDLL(str(built.library)), entry.signature["c_symbol"], o.sig)


I64_MAX, I64_MIN = 2**63 - 1, -(2**63)


@pytest.mark.parametrize("a,b", [(I64_MAX, 1), (I64_MIN, -1), (I64_MAX, I64_MAX)])
def test_int_add_overflow_raises_overflow_error(specs, a, b):
    with pytest.raises(OverflowError):
        _kernel(specs, "operator.add", "int")([a, b])


def test_int_add_and_mul_at_the_edges(specs):
    add, mul = _kernel(specs, "operator.add", "int"), _kernel(specs, "operator.mul", "int")
    assert add([I64_MAX, 0]) == I64_MAX and add([I64_MIN, I64_MAX]) == -1
    assert mul([I64_MIN, 1]) == I64_MIN and mul([0, I64_MIN]) == 0
    for a, b in [(I64_MIN, -1), (2**32, 2**31), (-(2**32), 2**31 + 1)]:
        with pytest.raises(OverflowError):
            mul([a, b])


def test_int_pow_declares_negative_exponent_and_overflow(specs):
    pow_ = _kernel(specs, "operator.pow", "int")
    assert pow_([0, 0]) == 1 and pow_([-2, 63]) == I64_MIN and pow_([-1, 10**18]) == 1
    with pytest.raises(ValueError):
        pow_([2, -1])
    with pytest.raises(OverflowError):
        pow_([2, 63])


def test_float_pow_raises_as_python_does(specs):
    pow_ = _kernel(specs, "operator.pow", "float")
    for a, b, err in [(0.0, -1.0, ZeroDivisionError), (-0.0, -3.0, ZeroDivisionError),
                      (-8.0, 0.5, ValueError), (10.0, 400.0, OverflowError)]:
        with pytest.raises(err):
            pow_([a, b])
    assert pow_([-8.0, 3.0]) == -512.0 and pow_([float("nan"), 0.0]) == 1.0 and pow_([0.0, -math.inf]) == math.inf


def test_str_add_is_utf8_concatenation(specs):
    add = _kernel(specs, "operator.add", "str")
    assert add(["search_query: ", "Où est Paris? 🗼"]) == "search_query: Où est Paris? 🗼"
    assert add(["", ""]) == ""


def test_softmax_masked_and_fully_masked_slices(specs):
    softmax = _kernel(specs, "torch.nn.functional.softmax", "f32")
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]], dtype=np.float32)
    out = np.empty_like(x)
    softmax([x, -1], out=out)
    assert out[0, 1] == 0.0 and np.isclose(out[0].sum(), 1.0)
    assert np.isnan(out[1]).all(), "an all -inf slice is nan, as in PyTorch"


# Every kind of entry: C++ and Rust, a measured variant, GPU entries on the CPU layer, one
# selection each (ops, --overload, --target), so the test does not grow with every overload these
# ops gain (operator.add has twenty). The whole registry is re-verified by the nightly job
# (opgen nightly); `verify --all` itself is exercised on a smaller copy in
# tests/test_registry_integrity.py.
REVERIFIED = (
    (("numpy.exp", "operator.add"), ("f32", "tensor_f32"), ()),  # cpu-cpp and cpu-rust, plain
    (("torch.nn.functional.softmax",), ("f32",), ("cpp",)),  # the plain and the threaded variant
    (("opgen.nn.masked_mean_pool",), (), ("cuda", "metal")),  # the GPU targets, emulated
)


def test_verify_rebuilds_and_reverifies_shipped_entries_of_every_kind(tmp_path):
    # A copy, so re-verification can never touch the checkout.
    for name in ("specs", "prompts", "generated"):
        shutil.copytree(ROOT / name, tmp_path / name)
    kinds = set()
    for ops, overloads, targets in REVERIFIED:
        options = [*(a for o in overloads for a in ("--overload", o)), *(a for t in targets for a in ("--target", t))]
        result = runner.invoke(app, ["verify", *ops, *options, "--json", "--examples", "15", "--root", str(tmp_path)])
        report = json.loads(result.stdout)
        assert result.exit_code == 0, [r for r in report["results"] if not r["ok"]]
        wanted = {target_for(t).target_id for t in targets}
        entries = [e for e in Registry(tmp_path / "generated").entries()
                   if e.op in ops and (not overloads or e.overload in overloads) and (not targets or e.target in wanted)]
        assert report["failed"] == 0 and report["passed"] == len(entries) > 0
        assert {(r["op"], r["overload"], r["target"], r["variant"]) for r in report["results"]} == \
            {(e.op, e.overload, e.target, e.variant) for e in entries}
        kinds |= {(e.target, e.variant != "plain") for e in entries}
    assert {t for t, _ in kinds} >= {"cpu-cpp", "cpu-rust", "cuda", "metal"} and ("cpu-cpp", True) in kinds
