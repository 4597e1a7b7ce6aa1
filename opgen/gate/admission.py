"""The admission gate: policy, build, import audit, verify on development seeds, a
sanitizer run, verify on fresh seeds.

One gate for every way a kernel arrives (an LLM answer, a replayed recording, a
hand-written file, a registry entry being re-verified), so "admitted" means the same
thing everywhere. Each failed stage returns feedback an LLM can repair from.

Stages, in order: ``policy`` (the source rules, then the compiled object's imports and
load-time code, and symbols no allowed library provides), ``compile``, ``verify`` (the
development seed), ``sanitizer`` (an ASan+UBSan build on a fixed-seed sample, run side
by side with the development run and cancelled if that fails), ``admission`` (fresh
seeds, run side by side). Every run executes in the sandbox of ``opgen.verify``.
"""

from __future__ import annotations

import hashlib
import os
import platform
import secrets
from concurrent.futures import ThreadPoolExecutor
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from opgen.build.cpp import BuildJob, BuildResult
from opgen.spec.abi import c_symbol
from opgen.spec.model import Overload, Spec
from opgen.targets.catalog import build_any, target_for
from opgen.verify.harness import Limits, Verdict, verify_library
from opgen.verify.scale import Budget


# What "admitted" means, as a number the evidence records: bumped whenever the gate gains a check
# that an earlier admission did not pass, so an entry admitted before it is visibly out of date
# (tests/test_shipped_library.py holds every shipped entry to the current one).
# 1: policy, build, import audit, development and fresh-seed runs, ASan+UBSan / checked build.
# 2: + the scale stage, the thread-count stage, varied output pre-fill, random call order and
#    repetition, whole-buffer input checks after every call, the import allow-list, writable data
#    and system-call instructions refused in the object, hardening flags, the GPU race check.
GATE_VERSION = 2


@dataclass(frozen=True)
class GateSettings:
    dev_examples: int = int(os.environ.get("OPGEN_DEV_EXAMPLES", 100))
    admission_examples: int = int(os.environ.get("OPGEN_ADMISSION_EXAMPLES", 150))
    admission_runs: int = 2
    limits: Limits = Limits()
    sanitizer_examples: int = int(os.environ.get("OPGEN_SANITIZER_EXAMPLES", 30))  # 0: no sanitizer run
    # The scale stage (opgen.verify.scale): large, model-shaped cases on a fresh seed. OPGEN_SCALE=0
    # turns it off (a quick local look; never for admission into the shipped registry).
    scale: bool = os.environ.get("OPGEN_SCALE", "1") != "0"
    # Threaded overloads run the scale cases and ``threads_examples`` drawn examples again at these
    # thread counts; None: one thread and an oversubscribed count drawn from [8, 16]; (): not at all.
    thread_counts: tuple[int, ...] | None = None
    threads_examples: int = int(os.environ.get("OPGEN_THREADS_EXAMPLES", 30))
    # The scale stage's budget per case; None: the target's (CPU_BUDGET, or EMULATED_BUDGET for the
    # GPU execution layer).
    scale_budget: Budget | None = None
    # The long-run check (stage "soak"): this many calls on a pool of small drawn examples in a
    # random order, every one checked. The nightly job's budgets set it (20k by default);
    # admission leaves it at 0. GPU targets make a twentieth of the calls (the emulator is slow).
    soak_calls: int = 0
    # None: admission seeds are drawn at random and the sanitizer seed is fixed. A string
    # (the nightly job's run id): both are derived from it and the entry, so a nightly run
    # uses seeds no earlier run used, and re-running with the same salt reproduces them.
    seed_salt: str | None = None


@dataclass
class GateResult:
    ok: bool
    stage: str  # policy | compile | verify | sanitizer (C++) | checked (Rust) | racecheck (GPU) | admission | pass
    feedback: str  # for the LLM and the user
    verdicts: list[Verdict] = field(default_factory=list)  # development, then admission runs
    build: BuildResult | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    sanitizer: Verdict | None = None  # the ASan+UBSan run, kept apart from the verdicts above
    scale: Verdict | None = None  # the scale stage's run
    threads: list[tuple[int, Verdict]] = field(default_factory=list)  # (thread count, run) of the threads stage


def dev_seed(spec: Spec, overload: Overload) -> int:
    """The seed used while repairing: fixed, so a repair conversation is reproducible."""
    return int(hashlib.sha256(f"{spec.op}/{overload.name}/dev".encode()).hexdigest()[:8], 16)


def sanitizer_seed(spec: Spec, overload: Overload) -> int:
    """The sanitizer sample's seed: fixed, so a sanitizer report is reproducible."""
    return check_seed(spec, overload, "sanitizer")


def salted_seed(spec: Spec, overload: Overload, salt: str, role: str) -> int:
    """A seed derived from a salt (e.g. a nightly run id), the overload and the run's role."""
    return int(hashlib.sha256(f"{salt}/{spec.op}/{overload.name}/{role}".encode()).hexdigest()[:8], 16)


def check_seed(spec: Spec, overload: Overload, role: str, salt: str | None = None) -> int:
    """A side check's sample seed (role sanitizer, racecheck): fixed, so a report is reproducible,
    or derived from a nightly salt."""
    text = f"{salt}/{spec.op}/{overload.name}/{role}" if salt else f"{spec.op}/{overload.name}/{role}"
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def build_job(spec: Spec, overload: Overload, source: str, target: str = "cpp") -> BuildJob:
    """The build of a candidate with its generated shim (build it with ``catalog.build_any``)."""
    return target_for(target).job(spec, overload, source)


def check_policy(spec: Spec, overload: Overload, source: str, target: str = "cpp") -> GateResult | None:
    """The target's source policy: a rejection, or None."""
    violations = target_for(target).check_source(spec, overload, source)
    if violations:
        return GateResult(False, "policy", "\n".join(f"- {v}" for v in violations))
    return None


def audit(spec: Spec, overload: Overload, result: BuildResult,
          target: str = "cpp") -> tuple[GateResult | None, dict[str, Any]]:
    """The target's audit of the compiled candidate: a rejection (or None), and the evidence record."""
    violations, record = target_for(target).audit(spec, overload, result)
    if violations:
        return GateResult(False, "policy", "\n".join(f"- {v}" for v in violations), build=result), record
    return None, record


def run_gate(spec: Spec, overload: Overload, source: str, settings: GateSettings = GateSettings(),
             built: BuildResult | None = None, fresh_seeds: list[int] | None = None,
             target: str = "cpp") -> GateResult:
    """Everything a candidate must pass before admission, in order, stopping at the first failure.

    What differs between targets is the target's (``opgen.targets.base.Target``): its source
    policy, build and object audit, the sandbox limits, and the side checks run beside the
    development run (C++: the ASan+UBSan run; Rust: the checked build, stage "checked"; CUDA and
    Metal: the device build, whose errors are compile errors, the sanitizer run of the CPU
    execution layer's build and the race check, stage "racecheck"). What a pass means is the
    target's ``admitted_status``: verified, or emulated for the GPU execution layer."""
    t = target_for(target)
    settings = replace(settings, limits=t.limits(settings.limits))
    if (rejected := check_policy(spec, overload, source, target)) is not None:
        return rejected
    job = build_job(spec, overload, source, target)
    checks = t.side_checks(spec, overload, source, job, examples=settings.sanitizer_examples,
                           seed_for=lambda role: check_seed(spec, overload, role, settings.seed_salt),
                           limits=settings.limits)
    for check in checks:  # e.g. the device build: compiled while the CPU build and the runs go on
        if not check.needs_build:
            check.begin(None)

    def stop_checks() -> None:  # the verdict is in; not waited for (a check may still be compiling, uselessly)
        for check in checks:
            check.stop()

    result = built or build_any([job])[0]
    rejected, imports = audit(spec, overload, result, target)
    if rejected is not None:
        stop_checks()
        return rejected
    if not result.ok:
        stop_checks()
        return GateResult(False, "compile", t.compile_feedback(result.diagnostics, checks), build=result)
    symbol = c_symbol(spec.op, overload.name)
    # The sanitizer variant is compiled (or found in the cache) and run while the development run
    # goes on: on a fresh candidate its compile is off the critical path.
    for check in checks:
        if check.needs_build:
            check.begin(result)
    sanitizer = next((c for c in checks if c.sanitizer), None)

    verdicts = []
    dev = verify_library(result.library, symbol, spec.path, overload.name, seed=dev_seed(spec, overload),
                         max_examples=settings.dev_examples, limits=settings.limits)
    verdicts.append(dev)
    # A side check's compile errors (the device build) come first (compile errors before wrong
    # results, as for a C++ candidate), whatever the development run found.
    for check in checks:
        if check.compile_error and (failed := check.failure()) is not None:
            stop_checks()
            return GateResult(False, check.stage, failed, verdicts, result)
    if not dev.ok:
        stop_checks()
        return GateResult(False, "verify", dev.as_feedback(), verdicts, result)
    # Admission: seeds drawn now, never shown to the LLM before this moment.
    seeds = fresh_seeds or ([salted_seed(spec, overload, settings.seed_salt, f"admission-{i}")
                             for i in range(settings.admission_runs)] if settings.seed_salt
                            else [secrets.randbits(32) for _ in range(settings.admission_runs)])
    scale_seed = (salted_seed(spec, overload, settings.seed_salt, "scale") if settings.seed_salt
                  else secrets.randbits(32))
    budget = settings.scale_budget or t.scale_budget

    def scale_run(threads: int | None = None, examples: int = 0) -> Verdict:
        return verify_library(result.library, symbol, spec.path, overload.name, seed=scale_seed,
                              max_examples=examples, limits=settings.limits, mode="scale",
                              options={"budget": budget.as_dict()}, threads=threads)

    # The admission runs and the scale stage are independent child processes: run them side by side.
    with ThreadPoolExecutor(max_workers=len(seeds) + 1) as pool:
        scaling = pool.submit(scale_run) if settings.scale else None
        admission = list(pool.map(lambda s: verify_library(
            result.library, symbol, spec.path, overload.name, seed=s,
            max_examples=settings.admission_examples, limits=settings.limits), seeds))
        for check in checks:
            check.finish()
        scaled = scaling.result() if scaling is not None else None
    verdicts += admission
    san = sanitizer.verdict if sanitizer is not None else None
    for check in checks:
        if not check.compile_error and (failed := check.failure()) is not None:
            return GateResult(False, check.stage, failed, verdicts, result, sanitizer=san)
    for v in admission:
        if not v.ok:
            return GateResult(False, "admission", v.as_feedback(), verdicts, result, sanitizer=san)
    if scaled is not None and not scaled.ok:
        return GateResult(False, "scale", scale_feedback(scaled), verdicts, result, sanitizer=san, scale=scaled)
    # Threads: the same scale cases and drawn examples at other thread counts, each against the
    # reference (a kernel whose partition assumes the verifier's thread count fails here).
    threaded: list[tuple[int, Verdict]] = []
    if spec.threads_allowed(overload) and t.varies_threads:
        counts = settings.thread_counts if settings.thread_counts is not None else thread_counts(scale_seed)
        with ThreadPoolExecutor(max_workers=max(len(counts), 1)) as pool:
            threaded = list(zip(counts, pool.map(
                lambda n: scale_run(n, settings.threads_examples) if settings.scale else verify_library(
                    result.library, symbol, spec.path, overload.name, seed=scale_seed,
                    max_examples=settings.threads_examples, limits=settings.limits, threads=n), counts)))
        for count, v in threaded:
            if not v.ok:
                return GateResult(False, "threads", threads_feedback(count, v), verdicts, result, sanitizer=san,
                                  scale=scaled, threads=threaded)
    soaked = None
    if settings.soak_calls:
        calls = max(settings.soak_calls // t.soak_share, 1)
        soaked = verify_library(result.library, symbol, spec.path, overload.name, seed=scale_seed ^ 0x50A4,
                                max_examples=0, limits=settings.limits, mode="soak", options={"calls": calls})
        if not soaked.ok:
            return GateResult(False, "soak", "The kernel went wrong in a long sequence of calls (each one checked; "
                              "results must not depend on how often or in what order it was called):\n"
                              + soaked.as_feedback(), verdicts, result, sanitizer=san, scale=scaled, threads=threaded)
    ev = evidence(spec, overload, verdicts, result, settings)
    ev.update(stage_evidence(spec, overload, verdicts, scaled, threaded, scale_seed, budget))
    if soaked is not None:
        ev["stages"]["soak"] = {**_worst([soaked]), "calls": soaked.examples, "seed": soaked.seed}
        ev.update(_worst(verdicts + [v for v in (scaled, soaked) if v is not None] + [v for _, v in threaded]))
    if sanitizer is None:
        ev["sanitizer"] = {"ran": False, "note": f"{t.language} kernels have no sanitizer run"}
    for check in checks:
        ev.update(check.evidence())
    ev["import_audit"] = imports
    ev.update(t.evidence(spec, overload, source))
    return GateResult(True, "pass", f"{ev['examples']} examples passed", verdicts, result,
                      evidence=ev, sanitizer=san, scale=scaled, threads=threaded)


def thread_counts(seed: int) -> tuple[int, ...]:
    """One thread, and an oversubscribed count that changes from run to run (8 to 16)."""
    return (1, 8 + seed % 9)


def scale_feedback(v: Verdict) -> str:
    return ("The kernel is right on the small drawn inputs but wrong on a large, model-shaped one (the "
            "scale stage: long axes, sizes around 64/128/384/768/1024/4096 +-1, reductions over 100k "
            "elements, tables over 65536 rows, long strings; offset rows, wide ranges, large logits). "
            "Look for a blocked loop's remainder, a narrowed index or accumulator type, a fixed-size "
            "buffer, a size-dependent code path, or an unstable formula.\n" + v.as_feedback())


def threads_feedback(count: int, v: Verdict) -> str:
    return (f"The kernel is wrong when run with {count} thread{'s' if count != 1 else ''} (OMP_NUM_THREADS="
            f"{count}; the other runs used the machine's {os.cpu_count()}): its result must not depend on "
            "the thread count. Partition work by the count the runtime gives (omp_get_num_threads() inside "
            "the parallel region, opgen::max_threads() in Rust), never by an assumed one.\n" + v.as_feedback())


def _worst(runs: list[Verdict]) -> dict[str, Any]:
    return {"examples": sum(v.examples for v in runs), "seconds": round(sum(v.seconds for v in runs), 3),
            "worst_abs_error": max((v.worst_abs_error for v in runs), default=0.0),
            "worst_rel_error": max((v.worst_rel_error for v in runs), default=0.0),
            "worst_tolerance_used": max((v.worst_tolerance_used for v in runs), default=0.0)}


def stage_evidence(spec: Spec, overload: Overload, verdicts: list[Verdict], scaled: Verdict | None,
                   threaded: list[tuple[int, Verdict]], scale_seed: int, budget: Budget) -> dict[str, Any]:
    """Each verification stage's runs and worst errors, and the totals over all of them."""
    stages: dict[str, Any] = {"development": _worst(verdicts[:1]), "admission": _worst(verdicts[1:])}
    if scaled is not None:
        stages["scale"] = {**_worst([scaled]), "seed": scale_seed, "budget": budget.as_dict(),
                           "cases": scaled.examples}
    else:
        stages["scale"] = {"ran": False, "note": "turned off (GateSettings.scale / OPGEN_SCALE=0)"}
    if threaded:
        stages["threads"] = {"counts": [c for c, _ in threaded],
                             "runs": [{"threads": c, **_worst([v])} for c, v in threaded]}
    runs = verdicts + ([scaled] if scaled is not None else []) + [v for _, v in threaded]
    return {"stages": stages, **_worst(runs)}


def evidence(spec: Spec, overload: Overload, verdicts: list[Verdict], built: BuildResult,
             settings: GateSettings) -> dict[str, Any]:
    return {
        "gate_version": GATE_VERSION,
        "examples": sum(v.examples for v in verdicts),
        "runs": [{"seed": v.seed, "examples": v.examples, "seconds": round(v.seconds, 3),
                  "phase": "development" if i == 0 else "admission"} for i, v in enumerate(verdicts)],
        "worst_abs_error": max(v.worst_abs_error for v in verdicts),
        "worst_rel_error": max(v.worst_rel_error for v in verdicts),
        "worst_tolerance_used": max(v.worst_tolerance_used for v in verdicts),
        "tolerance": _tolerances(spec, overload),
        "libraries": library_versions(spec.reference_for(overload)),
        "machine": machine(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "limits": settings.limits.as_dict(),
        "sandbox": verdicts[0].sandbox if verdicts else {},
        "build": {**built.record(), "seconds": round(built.seconds, 3), "cached": built.cached},
    }


def _tolerances(spec: Spec, overload: Overload) -> dict[str, Any]:
    floats = dict.fromkeys(t.dtype for _, t in overload.sig.results if t.dtype is not None and t.dtype.is_float)
    if not floats:
        return {"exact": True}
    return {dt.name: spec.tolerance_for(overload, dt).model_dump() for dt in floats}


def library_versions(reference: str) -> dict[str, str]:
    names = ["numpy", "hypothesis"] + (["torch"] if reference.startswith("torch.") else [])
    out = {"python": platform.python_version()}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = "not installed"
    return out


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"platform": f"{sys.platform}-{platform.machine()}", "cpu": cpu, "cores": os.cpu_count()}
