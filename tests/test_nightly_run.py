"""`opgen nightly` for real, on a few shipped entries with a tiny budget: a deliberately
broken kernel fails the run and shows up as a regression in the JSON and the report;
shards merge into the same result as a whole run; a corpus entry the gate admits fails."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.gate.corpus import corpus_dir, load_manifest
from opgen.project import Project
from opgen.registry import Registry, sha256_file
from opgen.spec.model import load_all
from tests.conftest import CHECKOUT

runner = CliRunner()
# The smallest budget that still runs every stage (development, one fresh-seed run, the sanitizer).
TINY = ["--budget", "smoke", "--dev-examples", "15", "--examples", "15", "--sanitizer-examples", "5"]


def copy_entries(project_root: Path, ops: set[str], overloads: set[str] | None = None) -> list[Path]:
    """Copy the checkout's registry entries of ``ops`` (every target and variant; only those of
    ``overloads`` when given) into a project."""
    source = CHECKOUT / "generated"
    copied = []
    for entry in Registry(source).entries():
        if entry.op in ops and (overloads is None or entry.overload in overloads):
            dest = project_root / "generated" / entry.path.relative_to(source)
            shutil.copytree(entry.path, dest)
            copied.append(dest)
    assert copied, f"the checkout has no entries for {ops}"
    return copied


def break_kernel(project_root: Path, op: str, overload: str, wrong_source: str) -> Path:
    """Replace an admitted kernel with another source and update its hash, as if it had been admitted."""
    entry = Registry(project_root / "generated").get(op, overload, "cpu-cpp")
    kernel = entry.file("kernel")
    kernel.write_text(wrong_source)
    data = json.loads((entry.path / "entry.json").read_text())
    data["files"]["kernel"]["sha256"] = sha256_file(kernel)
    (entry.path / "entry.json").write_text(json.dumps(data, indent=2))
    status, reasons = Registry(project_root / "generated").get(op, overload, "cpu-cpp").status(
        load_all(project_root / "specs")[op])
    assert status == "verified", reasons  # not stale: only re-verification can tell it is wrong
    return kernel


def nightly(project: Path, *args: str):
    return runner.invoke(app, ["nightly", *TINY, "--no-bench", "--no-corpus", "--root", str(project), *args])


@pytest.fixture
def exp_project(project: Path) -> Path:
    copy_entries(project, {"numpy.exp"})
    return project


def test_a_broken_kernel_fails_the_nightly_run_and_is_reported_as_a_regression(exp_project: Path):
    project = exp_project
    # C++ only: the regression is a C++ kernel's; a Rust entry would add runs and prove nothing more.
    def cpp_nightly(*args: str):
        return nightly(project, "--target", "cpp", *args)

    good = cpp_nightly("--run-id", "night1", "--no-report")
    assert good.exit_code == 0, good.output
    assert "nightly passed" in good.output

    # The corpus's Taylor-polynomial exp: compiles, passes the policy, wrong on the spec's domain.
    taylor = next(e for e in load_manifest(corpus_dir(Project(CHECKOUT))) if e.name == "exp_f64_taylor_degree4")
    break_kernel(project, "numpy.exp", "f64", taylor.source)
    bad = cpp_nightly("--run-id", "night2")
    assert bad.exit_code == 1, bad.output
    assert "nightly FAILED" in bad.output and "cpu-cpp/numpy.exp/f64/plain no longer verifies" in bad.output

    reports = project / "reports"
    result = json.loads((reports / "nightly" / "night2.json").read_text())
    assert json.loads((reports / "nightly" / "latest.json").read_text())["run_id"] == "night2"
    by_id = {e["id"]: e for e in result["entries"]}
    broken = by_id["cpu-cpp/numpy.exp/f64/plain"]
    assert broken["result"] == "fail" and broken["stage"] in ("verify", "admission") and broken["message"]
    assert by_id["cpu-cpp/numpy.exp/f32/plain"]["result"] == "pass"
    # the seeds are recorded, derived from the run id, and differ from night1's fresh seeds
    night1 = json.loads((reports / "nightly" / "night1.json").read_text())
    seeds1 = {e["id"]: e["seeds"] for e in night1["entries"]}
    assert broken["seeds"]["admission"] != seeds1[broken["id"]]["admission"]
    assert broken["seeds"]["development"] == seeds1[broken["id"]]["development"]
    cmp = result["comparison"]
    assert cmp["previous_run"] == "night1" and not cmp["ok"]
    assert [f["id"] for f in cmp["regressions"]] == ["cpu-cpp/numpy.exp/f64/plain"]
    index = json.loads((reports / "nightly" / "index.json").read_text())["runs"]
    assert [(r["run_id"], r["ok"]) for r in index] == [("night1", True), ("night2", False)]

    # ... and in the report: the cell, the regression banner, the op page, the Markdown summary.
    html = (reports / "index.html").read_text()
    assert "Regressions in nightly night2" in html
    row = re.search(r'<tr class="op-row" data-op="numpy.exp"[^>]*data-search="numpy.exp f64[^>]*>', html)
    assert row and 'data-cpu-cpp="failed"' in row.group(0)
    page = (reports / "ops" / "numpy.exp.html").read_text()
    assert "no longer verifies" in page and "res-fail" in page
    assert "cpu-cpp/numpy.exp/f64/plain no longer verifies" in (reports / "nightly.html").read_text()
    md = runner.invoke(app, ["report", "--markdown", "--root", str(project)])
    assert md.exit_code == 0, md.output
    assert "## opgen nightly `night2`: FAILED" in md.output and "### Regressions (1)" in md.output

    # Still broken the next night: no new regression, but the run still fails.
    again = cpp_nightly("--run-id", "night3", "--no-report")
    assert again.exit_code == 1 and "STILL FAILING cpu-cpp/numpy.exp/f64/plain" in again.output


def test_shards_merge_into_one_run(project: Path, tmp_path: Path):
    # Four entries (two ops, C++ and Rust): enough for both shards to hold some; what is tested is
    # the partition and the merge, not the kernels (the whole registry is the nightly job's).
    copy_entries(project, {"numpy.exp"}, {"f64"})
    copy_entries(project, {"operator.add"}, {"str"})
    files = []
    for i in (1, 2):
        out = tmp_path / f"shard{i}.json"
        r = nightly(project, "--shard", f"{i}/2", "--run-id", "sharded", "--sanitizer-examples", "0", "--out", str(out))
        assert r.exit_code == 0, r.output
        files.append(out)
    shards = [json.loads(f.read_text()) for f in files]
    ids = [{e["id"] for e in s["entries"]} for s in shards]
    assert not ids[0] & ids[1]
    every = {f"{e.target}/{e.op}/{e.overload}/{e.variant}" for e in Registry(project / "generated").entries()}
    assert {"cpu-cpp/numpy.exp/f64/plain", "cpu-cpp/operator.add/str/plain"} <= every
    assert ids[0] | ids[1] == every

    missing = runner.invoke(app, ["nightly", "merge", str(files[0]), "--root", str(project)])
    assert missing.exit_code == 1 and "missing shard results: 2/2" in missing.output

    merged = runner.invoke(app, ["nightly", "merge", *map(str, files), "--root", str(project), "--no-report"])
    assert merged.exit_code == 0, merged.output
    result = json.loads((project / "reports" / "nightly" / "sharded.json").read_text())
    assert {e["id"] for e in result["entries"]} == ids[0] | ids[1]
    assert all(e["result"] == "pass" for e in result["entries"])
    assert [s["index"] for s in result["shards"]] == [1, 2]


def test_a_corpus_entry_the_gate_admits_fails_the_run(project: Path):
    """A corpus whose one entry is honest code: the gate admits it, so the corpus has a hole.
    (An empty registry: only the corpus runs.)"""
    corpus = project / "verification" / "corpus"
    corpus.mkdir(parents=True)
    honest = Registry(CHECKOUT / "generated").get("numpy.exp", "f64", "cpu-cpp").file("kernel").read_text()
    (corpus / "exp_f64_claims_to_cheat.cpp").write_text("// Not a cheat at all: the shipped kernel.\n" + honest)
    (corpus / "manifest.yaml").write_text(
        "entries:\n  - name: exp_f64_claims_to_cheat\n    op: numpy.exp\n    overload: f64\n"
        "    cheat: none\n    expect: {stage: verify, kind: value}\n")
    r = runner.invoke(app, ["nightly", *TINY, "--no-bench", "--op", "numpy.exp", "--run-id", "c1", "--no-report",
                            "--root", str(project)])
    assert r.exit_code == 1, r.output
    result = json.loads((project / "reports" / "nightly" / "c1.json").read_text())
    assert result["entries"] == []
    assert result["corpus"]["ran"] and result["corpus"]["results"][0]["outcome"] == "admitted"
    assert "corpus entry exp_f64_claims_to_cheat" in result["comparison"]["regressions"][0]["summary"]


def test_clear_errors(project: Path):
    r = runner.invoke(app, ["nightly", "--shard", "3/2", "--root", str(project)])
    assert r.exit_code == 1 and "I must be between 1 and N" in r.output
    r = runner.invoke(app, ["nightly", "--op", "numpy.nope", "--root", str(project)])
    assert r.exit_code == 1 and "no spec for numpy.nope" in r.output
    r = runner.invoke(app, ["nightly", "merge", str(project / "nope.json"), "--root", str(project)])
    assert r.exit_code == 1 and "does not exist" in r.output
    (project / "x.json").write_text('{"schema": "something-else"}')
    r = runner.invoke(app, ["nightly", "merge", str(project / "x.json"), "--root", str(project)])
    assert r.exit_code == 1 and "not an opgen nightly result" in r.output
