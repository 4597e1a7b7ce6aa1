"""One nightly run (or one shard of it): re-verify, run the corpus and the ONNX conformance suite,
benchmark.

What it produces is a plain dict (schema ``opgen-nightly/1``), written as JSON; the
comparison with earlier runs and the history live in ``compare`` and ``history``.
Seeds are derived from the run id (``GateSettings.seed_salt``), so each night draws
seeds no earlier night drew, and ``--run-id`` reproduces a night exactly.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from typing import Any, Callable

from opgen.gate.admission import GateSettings, dev_seed, library_versions, machine, salted_seed
from opgen.errors import OpgenError
from opgen.service import Row, reverify, status_rows
from opgen.targets.catalog import target_for
from opgen.project import Project
from opgen.spec.model import TARGET_IDS, Spec, load_all
from opgen.nightly.shards import WHOLE, Shard
from opgen.gate.corpus import corpus_dir, load_manifest, run_corpus, tally
from opgen.conformance.cases import unavailable as conformance_unavailable
from opgen.conformance.mapping import MAPPINGS
from opgen.conformance.run import run_onnx

SCHEMA = "opgen-nightly/1"
# The corpus runs once a night, in the job that verifies this target (a CI matrix runs one job
# per target; the corpus's candidates are mostly C++ and need only a compiler, no device).
CORPUS_TARGET = TARGET_IDS["cpp"]
NOISE_BAND = 0.25  # a benchmark ratio may fall this fraction below the previous run's before it is a regression

# Progress callback: (phase, label, done, total). Phases: verify, corpus, conformance, bench.
# progress(phase, label, done, total, result): an item of a phase finished (done > 0) with its
# result, or a phase starts (done == 0); bench items are told as they start (total 0).
Progress = Callable[..., None]


@dataclass(frozen=True)
class Budget:
    """How hard the nightly run looks. Every preset past ``smoke`` is deeper than admission
    (100 development + 2 x 150 admission examples + 30 under ASan+UBSan)."""

    name: str
    dev_examples: int
    admission_examples: int
    admission_runs: int
    sanitizer_examples: int
    bench_rounds: int  # interleaved kernel/reference timing rounds per case (the median is kept)
    soak_calls: int = 20_000  # the long-run check: calls on a pool of small examples, every one checked

    def gate_settings(self, run_id: str) -> GateSettings:
        return GateSettings(dev_examples=self.dev_examples, admission_examples=self.admission_examples,
                            admission_runs=self.admission_runs, sanitizer_examples=self.sanitizer_examples,
                            soak_calls=self.soak_calls, seed_salt=f"nightly/{run_id}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


BUDGETS = {
    # For tests and a quick look: shallower than admission; never a substitute for a nightly run.
    "smoke": Budget("smoke", dev_examples=20, admission_examples=20, admission_runs=1, sanitizer_examples=10,
                    bench_rounds=1, soak_calls=200),
    # The default: about twice admission's examples, a larger sanitizer sample; a few minutes for
    # the shipped library on 2 cores.
    "nightly": Budget("nightly", dev_examples=100, admission_examples=200, admission_runs=3, sanitizer_examples=60,
                      bench_rounds=7, soak_calls=20_000),
    # For a weekly job or a release: ten times admission's examples.
    "deep": Budget("deep", dev_examples=200, admission_examples=1000, admission_runs=4, sanitizer_examples=300,
                   bench_rounds=15, soak_calls=50_000),
}


def budget(name: str = "nightly", **overrides: int | None) -> Budget:
    if name not in BUDGETS:
        raise OpgenError(f"unknown budget {name!r}", hint=f"choose one of {', '.join(BUDGETS)}")
    chosen = {k: v for k, v in overrides.items() if v is not None}
    for k, v in chosen.items():
        zero_ok = k in ("sanitizer_examples", "soak_calls")
        if v < (0 if zero_ok else 1):
            raise OpgenError(f"{k.replace('_', '-')} must be {'>= 0' if zero_ok else '>= 1'}, not {v}")
    return replace(BUDGETS[name], name=name + ("+custom" if chosen else ""), **chosen)


def default_run_id(now: datetime | None = None) -> str:
    """$OPGEN_RUN_ID, else GitHub's run id and attempt (the same in every shard of a workflow
    run), else the UTC time to the second."""
    if rid := os.environ.get("OPGEN_RUN_ID"):
        return check_run_id(rid)
    if gh := os.environ.get("GITHUB_RUN_ID"):
        return check_run_id(f"gh-{gh}-{os.environ.get('GITHUB_RUN_ATTEMPT', '1')}")
    return (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")


def check_run_id(run_id: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", run_id):
        raise OpgenError(f"run id {run_id!r} is not usable as a file name",
                         hint="use letters, digits, '.', '_' and '-' (at most 100), e.g. 20261130T0300Z")
    return run_id


def target_ids(names: list[str] | None) -> list[str]:
    """CLI target names (cpp, rust, cuda, metal) or registry ids to registry ids; all when none given."""
    if not names:
        return list(TARGET_IDS.values())
    out = []
    for n in names:
        tid = TARGET_IDS.get(n, n)
        if tid not in TARGET_IDS.values():
            raise OpgenError(f"unknown target {n!r}", hint=f"choose among {', '.join(TARGET_IDS)}")
        out.append(tid)
    return sorted(set(out), key=list(TARGET_IDS.values()).index)


def missing_hardware(target: str) -> str | None:
    """Why this machine cannot run ``target``'s kernels natively, or None if it can.

    Targets whose hardware is absent are recorded as ``no_hardware`` (unverified tonight),
    never as failures. GPU targets are the exception: verify_entries re-verifies them on the CPU
    execution layer whatever the machine (their device run is scripts/gpu_check.py's).
    """
    return target_for(target).missing_hardware()


def entry_id(target: str, op: str, overload: str, variant: str) -> str:
    return f"{target}/{op}/{overload}/{variant}"


def _row_variant(row: Row) -> str:
    return getattr(row, "variant", None) or (row.entry.data.get("variant") if row.entry else None) or "plain"


def _seeds(spec: Spec | None, overload_name: str, budget_: Budget, settings: GateSettings) -> dict[str, Any]:
    """The seeds the gate uses for this entry under these settings (recorded for reproduction)."""
    if spec is None:
        return {}
    try:
        o = spec.overload(overload_name)
    except OpgenError:
        return {}
    salt = settings.seed_salt or ""
    return {"development": dev_seed(spec, o),
            "admission": [salted_seed(spec, o, salt, f"admission-{i}") for i in range(budget_.admission_runs)],
            "sanitizer": salted_seed(spec, o, salt, "sanitizer") if budget_.sanitizer_examples else None}


def _kernel_sha(row: Row) -> str | None:
    if row.entry is None:
        return None
    return (row.entry.data.get("files", {}).get("kernel") or {}).get("sha256")


def verify_entries(project: Project, specs: dict[str, Spec], rows: list[Row], budget_: Budget, run_id: str,
                   progress: Progress) -> list[dict[str, Any]]:
    settings = budget_.gate_settings(run_id)
    results: dict[int, dict[str, Any]] = {}
    runnable: list[Row] = []
    for row in rows:
        base = {"id": entry_id(row.target, row.op, row.overload, _row_variant(row)), "op": row.op,
                "overload": row.overload, "target": row.target, "variant": _row_variant(row),
                "registry_status": row.status, "kernel_sha256": _kernel_sha(row)}
        why = missing_hardware(row.target)
        if target_for(row.target).emulated:
            # GPU kernels are re-verified on the CPU execution layer, as at admission, device or not (a
            # device run is scripts/gpu_check.py's): a pass leaves them emulated, a failure fails the night.
            results[id(row)] = {**base, "execution": "cpu-emulation" + (f" ({why})" if why else "")}
            runnable.append(row)
        elif why is not None:
            results[id(row)] = {**base, "result": "no_hardware", "stage": "skipped", "message": why}
        else:
            results[id(row)] = base
            runnable.append(row)
    total, done = len(runnable), [0]

    def advanced(r) -> None:  # every row's verdict, gated or found missing or stale
        done[0] += 1
        progress("verify", f"{r.row.op} {r.row.overload} ({r.row.target})", done[0], total,
                 "pass" if r.ok else f"{r.stage}: {r.message.splitlines()[0][:120] if r.message else ''}")

    progress("verify", "building", 0, total)
    for r in reverify(project, runnable, settings, on_result=advanced, specs=specs):
        ev = r.evidence
        results[id(r.row)].update({
            "result": "pass" if r.ok else ("stale" if r.stage == "stale" else "fail"),
            "stage": r.stage,
            "message": "" if r.ok else r.message[:4000],
            "examples": ev.get("examples"),
            "seeds": _seeds(specs.get(r.row.op), r.row.overload, budget_, settings),
            "worst_abs_error": ev.get("worst_abs_error"),
            "worst_rel_error": ev.get("worst_rel_error"),
            "worst_tolerance_used": ev.get("worst_tolerance_used"),
            "sanitizer": ev.get("sanitizer"),
            "seconds": round(sum(run.get("seconds", 0) for run in ev.get("runs", [])), 3) if ev else None,
        })
    return [results[id(row)] for row in rows]


def run_corpus_slice(project: Project, specs: dict[str, Spec], shard: Shard, progress: Progress,
                     ops: list[str] | None = None) -> dict[str, Any]:
    """The adversarial corpus entries this shard owns (those about ``ops``, if given), through the gate."""

    directory = corpus_dir(project)
    if not (directory / "manifest.yaml").exists():
        return {"ran": False, "reason": f"no corpus at {directory}"}
    entries = load_manifest(directory, specs)
    names = [e.name for e in shard.select(entries, key=lambda e: f"corpus:{e.name}") if not ops or e.op in ops]
    if not names:
        return {"ran": True, "entries": 0, "results": [], "seconds": 0.0}
    report = run_corpus(project, names=names, honest=False,
                        progress=lambda label, result, seconds, done, total: progress("corpus", label, done, total,
                                                                                       result))
    t = tally(report.entries, [], report.settings)
    return {"ran": True, "entries": len(report.entries), "tally": {k: t[k] for k in (
                "entries", "rejected_as_expected", "rejected_for_another_reason", "admitted", "pending_sandbox_layer",
                "by_reason", "settings")},
            "results": [r.as_dict() for r in report.entries], "seconds": round(report.seconds, 1)}


CONFORMANCE_FIELDS = ("key", "onnx_op", "opgen_op", "target", "cases", "pass", "wrong", "error", "inexpressible",
                      "partial", "reasons", "seconds")


def run_conformance_slice(project: Project, specs: dict[str, Spec], shard: Shard, targets: list[str],
                          ops: list[str] | None, progress: Progress) -> dict[str, Any]:
    """``opgen conformance onnx`` on the ONNX ops this shard owns (those mapping to ``ops``, if given),
    through the served kernels of every target of this run whose kernels run natively here."""
    if why := conformance_unavailable():
        return {"ran": False, "reason": f"ONNX conformance not run: {why}"}
    native = [t for t in targets if missing_hardware(t) is None and not target_for(t).emulated]
    plan = [(t, [m.onnx_op for m in MAPPINGS if (not ops or m.opgen_op in ops)
                 and shard.owns(f"conformance:{t}/{m.onnx_op}")]) for t in native]
    plan = [(t, names) for t, names in plan if names]
    total, done, started = sum(len(names) for _, names in plan), [0], time.monotonic()
    rows: list[dict[str, Any]] = []
    onnx = None

    def finished(op) -> None:
        done[0] += 1
        progress("conformance", f"{op.onnx_op} ({op.opgen_op}, {op.target})", done[0], total, op.summary())

    progress("conformance", "collecting the ONNX node cases", 0, total)
    try:
        for t, names in plan:
            report = run_onnx(project, names, target=t, specs=specs, progress=finished)
            onnx = report.onnx
            for op in report.ops:
                d = op.as_dict()
                rows.append({**{k: d[k] for k in CONFORMANCE_FIELDS}, "onnx": report.onnx,
                             "results": [{k: r[k] for k in ("case", "status", "message", "subject", "why", "partial",
                                                            "overload", "variant", "error_kind") if k in r}
                                         for r in d["results"]]})
    except Exception as exc:  # noqa: BLE001 - a conformance run that breaks must not lose the night's other results
        detail = exc.render() if isinstance(exc, OpgenError) else f"{type(exc).__name__}: {exc}"
        return {"ran": False, "error": f"opgen conformance onnx failed: {detail}", "results": rows}
    return {"ran": True, "onnx": onnx, "targets": [t for t, _ in plan], "results": rows,
            "seconds": round(time.monotonic() - started, 1)}


BENCH_FIELDS = ("op", "overload", "target", "variant", "case", "kernel_s", "reference", "reference_s", "ratio",
                "agrees", "note", "kernel_gflops", "reference_gflops")


def bench_key(row: dict[str, Any]) -> str:
    return f"{row['target']}/{row['op']}/{row['overload']}/{row.get('variant') or 'plain'}/{row['case']}"


def run_bench_slice(project: Project, ops: list[str], targets: list[str], rounds: int,
                    progress: Progress) -> dict[str, Any]:
    """``opgen bench`` on the ops this shard owns, for the targets this shard runs."""
    try:
        from opgen.bench import run_benchmarks  # the timing machinery (torch): loaded only when the night benchmarks
    except ImportError as exc:
        return {"ran": False, "reason": f"benchmarks are not available in this checkout ({exc})"}
    if not ops:
        return {"ran": True, "results": [], "rounds": rounds, "seconds": 0.0}
    started, seen = time.monotonic(), [0]

    def step(label: str) -> None:
        seen[0] += 1
        progress("bench", label, seen[0], 0)

    try:
        rows = run_benchmarks(project, ops, targets=targets, rounds=rounds, progress=step)
    except Exception as exc:  # noqa: BLE001 - a crashed benchmark must not lose the night's verification results
        detail = exc.render() if isinstance(exc, OpgenError) else f"{type(exc).__name__}: {exc}"
        return {"ran": False, "error": f"opgen bench {' '.join(ops)} failed: {detail}", "results": []}
    keep = [{**{k: row.get(k) for k in BENCH_FIELDS if k in row}, "key": bench_key(row)}
            for row in rows if row.get("target") in targets]
    return {"ran": True, "results": keep, "rounds": rounds, "seconds": round(time.monotonic() - started, 1)}


def _git_commit(project: Project) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(project.root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_nightly(project: Project, *, budget_: Budget, run_id: str, shard: Shard = WHOLE,
                targets: list[str] | None = None, ops: list[str] | None = None, corpus: bool = True,
                bench: bool = True, progress: Progress = lambda phase, label, done, total: None,
                conformance: bool = True) -> dict[str, Any]:
    """One shard's share of the nightly work (the whole of it for shard 1/1), as a result dict.

    ``ops`` narrows the run to some ops (a quick local check; tests); the corpus then keeps
    only the entries that concern them, and the ONNX conformance suite the ONNX ops that map to
    them.
    """
    run_id = check_run_id(run_id)
    targets = target_ids(targets)
    started, t0 = now_iso(), time.monotonic()
    specs = load_all(project.specs)
    if ops and (unknown := sorted(set(ops) - set(specs))):
        raise OpgenError(f"no spec for {', '.join(unknown)}", hint=f"known ops: {', '.join(sorted(specs))}")
    # Registry entries only: a spec target nobody has admitted yet is coverage, not a regression.
    rows = [r for r in status_rows(project, specs) if r.entry is not None and r.target in targets
            and (not ops or r.op in ops)]
    mine = shard.select(rows, key=lambda r: "verify:" + entry_id(r.target, r.op, r.overload, _row_variant(r)))
    result: dict[str, Any] = {
        "schema": SCHEMA, "run_id": run_id, "started": started,
        "budget": budget_.as_dict(), "targets": targets, "ops": sorted(ops) if ops else None,
        "shards": [{"index": shard.index, "count": shard.count, "targets": targets,
                    "machine": machine(), "started": started}],
        "machine": machine(), "libraries": library_versions("torch."), "git_commit": _git_commit(project),
        "noise_band": None,
    }
    phase_started = time.monotonic()
    result["entries"] = verify_entries(project, specs, mine, budget_, run_id, progress)
    result["verify_seconds"] = round(time.monotonic() - phase_started, 1)

    if not corpus:
        result["corpus"] = {"ran": False, "reason": "skipped (--no-corpus)"}
    elif CORPUS_TARGET not in targets:
        result["corpus"] = {"ran": False, "reason": "the corpus is C++ and runs with the cpu-cpp target"}
    else:
        try:
            result["corpus"] = run_corpus_slice(project, specs, shard, progress, ops)
        except OpgenError as exc:  # e.g. a manifest that no longer parses: a failure of the night, reported
            result["corpus"] = {"ran": False, "error": exc.render(), "results": []}

    if not conformance:
        result["conformance"] = {"ran": False, "reason": "skipped"}
    else:
        result["conformance"] = run_conformance_slice(project, specs, shard, targets, ops, progress)

    if not bench:
        result["bench"] = {"ran": False, "reason": "skipped (--no-bench)"}
    else:
        # Ops with bench cases and an entry on a target this machine runs; a slice of them per shard.
        # (Verified entries only: a stale one is already a failure, and `opgen bench` refuses an op
        # with nothing verified to time.)
        bench_ops = sorted({r.op for r in rows if r.status == "verified" and missing_hardware(r.target) is None
                            and r.op in specs and any(o.bench for o in specs[r.op].overloads)})
        mine_ops = shard.select(bench_ops, key=lambda op: f"bench:{op}")
        runnable_targets = [t for t in targets if missing_hardware(t) is None]
        result["bench"] = run_bench_slice(project, mine_ops, runnable_targets, budget_.bench_rounds, progress)

    result["finished"] = now_iso()
    result["seconds"] = round(time.monotonic() - t0, 1)
    result["shards"][0]["finished"] = result["finished"]
    return result
