"""The nightly job's rules without running kernels: shards, comparison, merging, history.

Result dicts here are small hand-made fixtures in the ``opgen-nightly/1`` shape; the tests
that run real kernels through the gate are in test_nightly_run.py.
"""

from __future__ import annotations

import json

import pytest

from opgen.errors import OpgenError
from opgen.nightly.compare import bench_baseline, compare, counts
from opgen.nightly.history import History, index_line, merge
from opgen.nightly.run import SCHEMA, budget, check_run_id, target_ids
from opgen.nightly.shards import Shard, shard_of


# --- shards -----------------------------------------------------------------------------

def test_shard_parse_and_errors():
    assert Shard.parse("2/4") == Shard(2, 4)
    assert Shard.parse(" 1 / 1 ") == Shard(1, 1)
    for bad in ("0/4", "5/4", "1/0", "a/b", "3", "", "1/2/3"):
        with pytest.raises(OpgenError, match="--shard"):
            Shard.parse(bad)


def test_shards_partition_keys_and_stay_put_when_keys_are_added():
    keys = [f"verify:cpu-cpp/op{i}/f32/plain" for i in range(200)]
    for n in (1, 2, 3, 7):
        slices = [Shard(i, n).select(keys, key=lambda k: k) for i in range(1, n + 1)]
        assert sorted(k for s in slices for k in s) == sorted(keys)  # every key once
        assert all(slices), f"an empty shard among {n} for 200 keys is implausible"
    before = {k: shard_of(k, 4) for k in keys}
    more = keys + [f"verify:cpu-rust/new{i}/f32/plain" for i in range(50)]
    assert {k: shard_of(k, 4) for k in more if k in before} == before


# --- budgets and names ------------------------------------------------------------------

def test_budget_presets_are_deeper_than_admission_except_smoke():
    from opgen.gate.admission import GateSettings

    admission = GateSettings()
    total = lambda b: b.dev_examples + b.admission_runs * b.admission_examples  # noqa: E731
    admitted = admission.dev_examples + admission.admission_runs * admission.admission_examples
    for name in ("nightly", "deep"):
        b = budget(name)
        assert total(b) > admitted and b.sanitizer_examples > admission.sanitizer_examples
        assert b.admission_runs >= admission.admission_runs
    assert budget("nightly", admission_examples=7).admission_examples == 7
    assert budget("nightly", admission_examples=7).name == "nightly+custom"
    with pytest.raises(OpgenError, match="unknown budget"):
        budget("huge")
    with pytest.raises(OpgenError, match="admission-examples must be >= 1"):
        budget("smoke", admission_examples=0)


def test_budget_salts_seeds_with_the_run_id():
    assert budget("smoke").gate_settings("r1").seed_salt == "nightly/r1"
    assert budget("smoke").gate_settings("r1").seed_salt != budget("smoke").gate_settings("r2").seed_salt


def test_run_id_and_targets_are_checked():
    assert check_run_id("gh-123-1") == "gh-123-1"
    with pytest.raises(OpgenError, match="file name"):
        check_run_id("../x")
    assert target_ids(["rust", "cpp"]) == ["cpu-cpp", "cpu-rust"]
    assert target_ids(None) == ["cpu-cpp", "cpu-rust", "cuda", "metal"]
    with pytest.raises(OpgenError, match="unknown target 'vulkan'"):
        target_ids(["vulkan"])


# --- comparison ---------------------------------------------------------------------------

def _entry(ident: str, result: str, **extra):
    target, op, overload, variant = ident.split("/")
    return {"id": ident, "op": op, "overload": overload, "target": target, "variant": variant, "result": result,
            "stage": {"pass": "pass", "fail": "admission", "stale": "stale", "no_hardware": "skipped"}[result],
            "message": "" if result == "pass" else "first mismatch at index 3: expected 1.0, got 2.0", **extra}


def _bench(key: str, ratio: float | None, agrees: bool = True):
    target, op, overload, variant, case = key.split("/")
    return {"key": key, "op": op, "overload": overload, "target": target, "variant": variant, "case": case,
            "kernel_s": 1.0, "reference": "numpy.matmul", "reference_s": ratio, "ratio": ratio, "agrees": agrees}


def _corpus(name: str, outcome: str):
    return {"name": name, "op": "numpy.exp", "overload": "f64", "cheat": "taylor", "outcome": outcome,
            "expected": {"stage": ["verify"], "kind": "value"},
            "got": {"stage": "pass" if outcome == "admitted" else "verify", "kinds": [] if outcome == "admitted" else ["value"],
                    "message": ""}}


def _run(run_id: str, entries=(), corpus=(), bench=(), started="2026-11-01T00:00:00+00:00"):
    return {"schema": SCHEMA, "run_id": run_id, "started": started, "finished": started, "seconds": 1.0,
            "budget": budget("smoke").as_dict(), "targets": ["cpu-cpp"], "ops": None,
            "shards": [{"index": 1, "count": 1, "targets": ["cpu-cpp"]}],
            "entries": list(entries), "corpus": {"ran": True, "results": list(corpus)},
            "bench": {"ran": True, "results": list(bench)}}


A = "cpu-cpp/numpy.exp/f64/plain"
B = "cpu-cpp/numpy.exp/f32/plain"
K = "cpu-cpp/operator.matmul/f32/plain/square-1024"


def test_an_entry_that_stops_verifying_is_a_regression_then_a_persisting_failure():
    night1 = _run("n1", [_entry(A, "pass"), _entry(B, "pass")])
    night2 = _run("n2", [_entry(A, "fail"), _entry(B, "pass")])
    night3 = _run("n3", [_entry(A, "fail"), _entry(B, "pass")])
    c2 = compare(night2, night1, 0.25)
    assert not c2["ok"]
    assert [f["id"] for f in c2["regressions"]] == [A] and c2["regressions"][0]["new"]
    assert "no longer verifies (stage admission)" in c2["regressions"][0]["summary"]
    assert "first mismatch" in c2["regressions"][0]["detail"]
    c3 = compare(night3, night2, 0.25)
    assert not c3["ok"] and c3["regressions"] == []  # not new, but still a failure: still exit 1
    assert [f["id"] for f in c3["failures"]] == [A] and "as in the previous run" in c3["failures"][0]["summary"]
    c4 = compare(_run("n4", [_entry(A, "pass")]), night3, 0.25)
    assert c4["ok"] and [f["id"] for f in c4["improvements"]] == [A]


def test_first_run_failures_are_regressions_and_stale_counts():
    c = compare(_run("n1", [_entry(A, "stale"), _entry(B, "pass")]), None, 0.25)
    assert not c["ok"] and c["previous_run"] is None and "is stale" in c["regressions"][0]["summary"]


def test_no_hardware_is_not_a_failure():
    c = compare(_run("n2", [_entry("cuda/operator.matmul/f32/plain", "no_hardware")]),
                _run("n1", [_entry("cuda/operator.matmul/f32/plain", "pass")]), 0.25)
    assert c["ok"] and len(c["notes"]) == 1


def test_a_corpus_entry_no_longer_rejected_is_a_regression():
    before = _run("n1", corpus=[_corpus("exp_f64_taylor_degree4", "expected")])
    after = _run("n2", corpus=[_corpus("exp_f64_taylor_degree4", "admitted")])
    c = compare(after, before, 0.25)
    assert not c["ok"] and "admitted (a hole in the gate)" in c["regressions"][0]["summary"]
    assert "expected verify/value" in c["regressions"][0]["detail"]
    c = compare(_run("n3", corpus=[_corpus("exp_f64_taylor_degree4", "other")]), after, 0.25)
    assert not c["ok"] and c["regressions"] == [] and "rejected for another reason" in c["failures"][0]["summary"]


def test_benchmark_ratio_drop_beyond_the_noise_band_is_a_regression():
    prev = _run("n1", bench=[_bench(K, 1.0)])
    within = compare(_run("n2", bench=[_bench(K, 0.8)]), prev, 0.25)
    assert within["ok"] and not within["regressions"]  # -20% is inside a 25% band
    beyond = compare(_run("n2", bench=[_bench(K, 0.7)]), prev, 0.25)
    assert not beyond["ok"] and beyond["regressions"][0]["kind"] == "bench"
    assert "-30%" in beyond["regressions"][0]["summary"] and "25% noise band" in beyond["regressions"][0]["summary"]
    assert compare(_run("n2", bench=[_bench(K, 0.7)]), prev, 0.35)["ok"]  # the band is configurable
    up = compare(_run("n2", bench=[_bench(K, 1.5)]), prev, 0.25)
    assert up["ok"] and up["improvements"][0]["ratio"] == 1.5


def test_benchmark_baseline_is_the_recent_median():
    runs = [index_line({**_run(f"n{i}", bench=[_bench(K, r)], started=f"2026-11-0{i}T00:00:00+00:00"),
                        "comparison": {"ok": True}}) for i, r in enumerate([0.2, 1.0, 1.1, 0.5], start=1)]
    base = bench_baseline(runs)
    assert base[K] == pytest.approx(1.0)  # median of the newest three: 1.0, 1.1, 0.5
    c = compare(_run("n5", bench=[_bench(K, 0.8)]), None, 0.25, baseline=base)
    assert c["ok"]  # against the previous night alone (0.5) it would be a +60% "improvement"
    assert not compare(_run("n5", bench=[_bench(K, 0.7)]), None, 0.25, baseline=base)["ok"]


def test_a_benchmark_that_disagrees_with_the_reference_fails():
    c = compare(_run("n2", bench=[_bench(K, 2.0, agrees=False)]), None, 0.25)
    assert not c["ok"] and "disagrees with numpy.matmul" in c["failures"][0]["summary"]


def test_parts_that_could_not_run_are_failures():
    run = _run("n1")
    run["bench"] = {"ran": False, "error": "opgen bench operator.matmul failed: boom", "results": []}
    c = compare(run, None, 0.25)
    assert not c["ok"] and c["failures"][0]["summary"] == "the benchmarks did not run"
    with pytest.raises(ValueError):
        compare(run, None, 1.5)


# --- merging ---------------------------------------------------------------------------

def _shard(i: int, n: int, entries, run_id="r1", targets=("cpu-cpp",), **kw):
    r = _run(run_id, entries, **kw)
    r["targets"] = list(targets)
    r["shards"] = [{"index": i, "count": n, "targets": list(targets)}]
    return r


def test_merge_combines_shards_and_checks_completeness():
    s1 = _shard(1, 2, [_entry(A, "pass")], corpus=[_corpus("c1", "expected")])
    s2 = _shard(2, 2, [_entry(B, "fail")], bench=[_bench(K, 1.2)])
    m = merge([s2, s1])
    assert [e["id"] for e in m["entries"]] == sorted([A, B])
    assert [r["name"] for r in m["corpus"]["results"]] == ["c1"] and len(m["bench"]["results"]) == 1
    assert m["missing_shards"] == [] and len(m["shards"]) == 2
    with pytest.raises(OpgenError, match=r"missing shard results: 2/2 \(cpu-cpp\)"):
        merge([s1])
    partial = merge([s1], allow_partial=True)
    assert partial["missing_shards"] == ["2/2 (cpu-cpp)"]
    assert not compare(partial, None, 0.25)["ok"]
    with pytest.raises(OpgenError, match="appears twice"):
        merge([s1, s1, s2])
    with pytest.raises(OpgenError, match="different runs"):
        merge([s1, _shard(2, 2, [], run_id="r2")])


def test_merge_prefers_a_real_result_over_no_hardware():
    cpu = _shard(1, 1, [_entry("cuda/operator.matmul/f32/plain", "no_hardware")], targets=("cpu-cpp", "cuda"))
    gpu = _shard(1, 1, [_entry("cuda/operator.matmul/f32/plain", "pass")], targets=("cuda",))
    assert merge([cpu, gpu])["entries"][0]["result"] == "pass"
    gpu_fail = _shard(1, 1, [_entry("cuda/operator.matmul/f32/plain", "fail")], targets=("cuda",))
    assert merge([gpu_fail, cpu])["entries"][0]["result"] == "fail"


# --- history -------------------------------------------------------------------------------

def test_history_records_runs_latest_and_index(tmp_path):
    h = History(tmp_path / "nightly")
    assert h.latest() is None and h.index() == [] and h.previous("x") is None
    from opgen.nightly.history import finalize

    r1 = finalize(h, _run("n1", [_entry(A, "pass")], bench=[_bench(K, 1.0)], started="2026-11-01T00:00:00+00:00"), 0.25)
    assert r1["comparison"]["ok"] and r1["comparison"]["previous_run"] is None
    r2 = finalize(h, _run("n2", [_entry(A, "fail")], bench=[_bench(K, 1.0)], started="2026-11-02T00:00:00+00:00"), 0.25)
    assert r2["comparison"]["previous_run"] == "n1" and not r2["comparison"]["ok"]
    assert h.latest()["run_id"] == "n2"
    index = h.index()
    assert [r["run_id"] for r in index] == ["n1", "n2"]
    assert index[1]["entries"] == {A: "fail"} and index[1]["bench"] == {K: 1.0}
    assert index[1]["counts"]["regressions"] == 1 and index[1]["ok"] is False
    # re-merging the same run id replaces it rather than comparing it with itself
    r2b = finalize(h, _run("n2", [_entry(A, "pass")], started="2026-11-02T00:00:00+00:00"), 0.25)
    assert r2b["comparison"]["previous_run"] == "n1" and [r["run_id"] for r in h.index()] == ["n1", "n2"]
    assert json.loads((tmp_path / "nightly" / "n2.json").read_text())["entries"][0]["result"] == "pass"
    assert counts(h.latest())["passed"] == 1


def test_history_rejects_a_corrupt_index_with_a_hint(tmp_path):
    (tmp_path / "index.json").write_text("{not json")
    with pytest.raises(OpgenError, match="delete it to start a new history"):
        History(tmp_path).index()
