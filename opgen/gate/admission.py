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
import re
import secrets
import threading
from concurrent.futures import ThreadPoolExecutor
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from opgen.targets.cpp import policy
from opgen.targets.rust import audit as admission_rust, policy as policy_rust
from opgen.spec.abi import c_symbol
from opgen.build.cpp import SANITIZER_FLAGS, BuildJob, BuildResult, build, inspect_object, sanitizer_job, sanitizer_runtime
from opgen.spec.model import Overload, Spec
from opgen.targets import backend, build_any
from opgen.verify.harness import Limits, Verdict, sanitizer_options, verify_library
from opgen.verify.scale import CPU_BUDGET, EMULATED_BUDGET, Budget


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
    return int(hashlib.sha256(f"{spec.op}/{overload.name}/sanitizer".encode()).hexdigest()[:8], 16)


def salted_seed(spec: Spec, overload: Overload, salt: str, role: str) -> int:
    """A seed derived from a salt (e.g. a nightly run id), the overload and the run's role."""
    return int(hashlib.sha256(f"{salt}/{spec.op}/{overload.name}/{role}".encode()).hexdigest()[:8], 16)


def build_job(spec: Spec, overload: Overload, source: str, target: str = "cpp") -> BuildJob:
    """The build of a candidate with its generated shim (a RustBuildJob for target rust)."""
    return backend(target).job(spec, overload, source)


def check_policy(spec: Spec, overload: Overload, source: str, target: str = "cpp") -> GateResult | None:
    b = backend(target)
    if b.gpu:  # the emulated subset of CUDA / Metal, the sandbox rules and the launch line
        from opgen.targets.gpu import policy as gpu_policy
        from opgen.targets.gpu.device_abi import contract
        from opgen.targets.gpu.dialect import dialect

        c = contract(spec, overload, dialect(b.target))
        violations = gpu_policy.check(source, c.dialect, c.launch_names)
        if violations:
            return GateResult(False, "policy", "\n".join(f"- {v}" for v in violations))
        return None
    rules = policy_rust.check if b.target == "rust" else policy.check
    violations = rules(source, threads_allowed=spec.threads_allowed(overload))
    if violations:
        return GateResult(False, "policy", "\n".join(f"- {v}" for v in violations))
    return None


def audit_build(result: BuildResult, threads_allowed: bool) -> tuple[GateResult | None, dict[str, Any]]:
    """The compiled kernel object against the object policy (imports on the allow-list, no
    load-time code, no writable data of its own, no system calls or hand-placed machine code),
    and a failed link's unresolved symbols.

    The baseline for what the trusted runtime owns is the generated unit of the same build
    (``shim.cpp``): it includes the same runtime headers, so the inline variables and
    function-local statics those headers define (the GPU execution layer's scheduler, launch
    counter, stack pool, thread state) are defined there too, as mergeable (non-local) symbols
    the linker makes one object. What the kernel object defines beyond them is its own."""
    obj = result.object("kernel.cpp")
    if obj is None:
        return None, {}
    info = inspect_object(obj)
    shim_obj = result.object("shim.cpp")
    shim = inspect_object(shim_obj) if shim_obj is not None else None
    runtime_data = frozenset(name for _, name, _, bind, _ in shim.writable if bind != "LOCAL") if shim else frozenset()
    from opgen.targets.gpu.build import EMULATION_HEADERS  # lazily, as check_policy does: C++ admission needs no GPU code

    gpu = any(name in result.job.sources for name in EMULATION_HEADERS)
    violations = [str(v) for v in policy.audit_object(info.imports, info.load_time_sections, info.ifuncs,
                                                      threads_allowed=threads_allowed,
                                                      provided=shim.defines if shim and gpu else frozenset())]
    violations += policy.audit_state(info.writable, info.anonymous_writable, baseline=runtime_data,
                                     shared_section=policy.GPU_SHARED_SECTION if gpu else None)
    violations += policy.audit_machine_code(info.code.system_calls, info.code.stray, info.code.data_in_code)
    if not result.ok:
        unresolved = sorted(set(re.findall(r"undefined reference to [`'‘]([^'’`]+)['’]", result.diagnostics)))
        violations += [f"the kernel uses `{name}`, which no library it may link against provides (libstdc++, libm, "
                       f"libc{', libgomp' if threads_allowed else ''}); implement it yourself [rule unresolved-symbol]"
                       for name in unresolved]
    record = {"imports": sorted({shown for _, shown in info.imports} - {"_GLOBAL_OFFSET_TABLE_"}),
              "load_time_sections": [name for name, _ in info.load_time_sections],
              "ifuncs": list(info.ifuncs),
              "method": "the kernel object's undefined symbols against an allow-list of what computing needs; its "
                        "writable data against the generated unit of the same build (the runtime's own); every "
                        "executable section disassembled (no system-call instructions, no bytes outside functions)",
              "writable_data": sorted(shown for section, _, shown, _, _ in info.writable
                                      if not (gpu and section == policy.GPU_SHARED_SECTION)),
              "hardening": result.record().get("hardening", [])}
    if violations:
        return GateResult(False, "policy", "\n".join(f"- {v}" for v in violations), build=result), record
    return None, record


class _SanitizerRun(threading.Thread):
    """Build (cached) and run the ASan+UBSan variant while the development run goes on."""

    def __init__(self, job: BuildJob, built: BuildResult | None, symbol: str, spec: Spec, overload: Overload,
                 settings: GateSettings):
        super().__init__(daemon=True)
        self.job, self.built, self.symbol, self.spec, self.overload, self.settings = job, built, symbol, spec, overload, settings
        self.cancel = threading.Event()
        self.verdict: Verdict | None = None
        self.note = ""

    def run(self) -> None:
        runtime = sanitizer_runtime()
        if runtime is None:
            self.note = "no libasan for this compiler (g++ -print-file-name=libasan.so found nothing): sanitizer run skipped"
            return
        built = self.built or build([sanitizer_job(self.job)])[0]
        self.built = built
        if not built.ok:
            self.verdict = Verdict(False, "sanitizer", "the sanitizer build (-fsanitize=address,undefined) did not "
                                   "compile although the normal build did:\n" + built.diagnostics)
            return
        if self.cancel.is_set():
            return
        self.verdict = verify_library(built.library, self.symbol, self.spec.path, self.overload.name,
                                      seed=(salted_seed(self.spec, self.overload, self.settings.seed_salt, "sanitizer")
                                            if self.settings.seed_salt else sanitizer_seed(self.spec, self.overload)),
                                      max_examples=self.settings.sanitizer_examples, limits=self.settings.limits,
                                      sanitizer_runtime=runtime, cancel=self.cancel)

    def record(self) -> dict[str, Any]:
        v = self.verdict
        if v is None:
            return {"ran": False, "note": self.note or "not run"}
        return {"ran": True, "passed": v.ok, "examples": v.examples, "seed": v.seed, "seconds": round(v.seconds, 3),
                "flags": SANITIZER_FLAGS, "runtime": sanitizer_runtime(),
                "options": sanitizer_options(Path("<workdir>"), self.settings.limits.for_sanitizer()),
                "cache_key": self.built.job.key if self.built else None}


def run_gate(spec: Spec, overload: Overload, source: str, settings: GateSettings = GateSettings(),
             built: BuildResult | None = None, fresh_seeds: list[int] | None = None,
             target: str = "cpp") -> GateResult:
    """Everything a candidate must pass before admission, in order, stopping at the first failure.

    ``target`` rust: the Rust policy, a rustc build, the library audit against its baseline,
    and a checked build (stage "checked") where C++ gets its sanitizer run.

    ``target`` cuda or metal: the GPU policy, the build for the CPU execution layer (a C++
    build, audited and sanitized like one) with the device build beside it (nvcc; Apple's
    metal compiler where it exists; its errors are compile errors), every run on the CPU
    execution layer, and the race check beside the sanitizer run (stage "racecheck": shared-memory
    data races, ``opgen.targets.gpu.admission.RaceCheck``); a pass is admitted as ``emulated``."""
    rust = backend(target).target == "rust"
    gpu = backend(target).gpu
    if gpu:  # every run on the CPU execution layer, which is slow by design
        settings = replace(settings, limits=settings.limits.for_emulation())
    if (rejected := check_policy(spec, overload, source, target)) is not None:
        return rejected
    device = None
    if gpu:  # compiled for the device while the CPU execution layer builds and verifies
        from opgen.targets.gpu.admission import DeviceBuild

        device = DeviceBuild(spec, overload, source, backend(target).target)
        device.start()
    job = build_job(spec, overload, source, target)
    result = built or build_any([job])[0]
    threads = spec.threads_allowed(overload)
    if rust:
        found, imports = admission_rust.audit(spec, overload, result)
        if found:
            return GateResult(False, "policy", "\n".join(f"- {v}" for v in found), build=result)
    else:
        rejected, imports = audit_build(result, threads)
        if rejected is not None:
            return rejected
    if not result.ok:
        feedback = result.diagnostics or "the build failed without diagnostics"
        if device is not None:
            feedback = ("The CPU execution layer's build (the source compiled as C++ against opgen's "
                        f"{'CUDA' if target == 'cuda' else 'MSL'} names) failed:\n{feedback}")
            if (also := device.failure()) is not None:
                feedback += "\n\nAnd " + also
        return GateResult(False, "compile", feedback, build=result)
    symbol = c_symbol(spec.op, overload.name)
    # The sanitizer variant is compiled (or found in the cache) and run while the development run
    # goes on: on a fresh candidate its compile is off the critical path.
    sanitizer = None
    if settings.sanitizer_examples and rust:
        sanitizer = admission_rust.CheckedRun(
            job, symbol, spec, overload, limits=settings.limits, examples=settings.sanitizer_examples,
            seed=(salted_seed(spec, overload, settings.seed_salt, "sanitizer") if settings.seed_salt
                  else sanitizer_seed(spec, overload)))
    elif settings.sanitizer_examples:
        sanitizer = _SanitizerRun(job, None, symbol, spec, overload, settings)
    if sanitizer is not None:
        sanitizer.start()
    racecheck = None  # GPU: the race-check build (every shared-memory access checked), beside it too
    if gpu and settings.sanitizer_examples:
        from opgen.targets.gpu.admission import RaceCheck

        racecheck = RaceCheck(spec, overload, source, backend(target).target, symbol, settings, result)
        racecheck.start()

    def finish_sanitizer() -> Verdict | None:
        if sanitizer is None:
            return None
        sanitizer.join()
        return sanitizer.verdict

    verdicts = []
    dev = verify_library(result.library, symbol, spec.path, overload.name, seed=dev_seed(spec, overload),
                         max_examples=settings.dev_examples, limits=settings.limits)
    verdicts.append(dev)
    # The device build ran beside the development run; its errors come first (compile errors
    # before wrong results, as for a C++ candidate), whatever the development run found.
    if device is not None and (failed := device.failure()) is not None:
        if sanitizer is not None:
            sanitizer.cancel.set()
        if racecheck is not None:
            racecheck.cancel.set()
        return GateResult(False, "compile", failed, verdicts, result)
    if not dev.ok:
        if sanitizer is not None:  # stop it; not waited for (it may still be compiling, uselessly)
            sanitizer.cancel.set()
        if racecheck is not None:
            racecheck.cancel.set()
        return GateResult(False, "verify", dev.as_feedback(), verdicts, result)
    # Admission: seeds drawn now, never shown to the LLM before this moment.
    seeds = fresh_seeds or ([salted_seed(spec, overload, settings.seed_salt, f"admission-{i}")
                             for i in range(settings.admission_runs)] if settings.seed_salt
                            else [secrets.randbits(32) for _ in range(settings.admission_runs)])
    scale_seed = (salted_seed(spec, overload, settings.seed_salt, "scale") if settings.seed_salt
                  else secrets.randbits(32))
    budget = settings.scale_budget or (EMULATED_BUDGET if gpu else CPU_BUDGET)

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
        san = finish_sanitizer()
        scaled = scaling.result() if scaling is not None else None
    verdicts += admission
    if san is not None and not san.ok:
        if rust:
            return GateResult(False, "checked", sanitizer.feedback(), verdicts, result, sanitizer=san)
        return GateResult(False, "sanitizer", san.as_feedback(), verdicts, result, sanitizer=san)
    if racecheck is not None and (raced := racecheck.failure()) is not None:
        return GateResult(False, "racecheck", raced, verdicts, result, sanitizer=san)
    for v in admission:
        if not v.ok:
            return GateResult(False, "admission", v.as_feedback(), verdicts, result, sanitizer=san)
    if scaled is not None and not scaled.ok:
        return GateResult(False, "scale", scale_feedback(scaled), verdicts, result, sanitizer=san, scale=scaled)
    # Threads: the same scale cases and drawn examples at other thread counts, each against the
    # reference (a kernel whose partition assumes the verifier's thread count fails here).
    threaded: list[tuple[int, Verdict]] = []
    if spec.threads_allowed(overload) and not gpu:
        counts = settings.thread_counts if settings.thread_counts is not None else thread_counts(scale_seed)
        with ThreadPoolExecutor(max_workers=max(len(counts), 1)) as pool:
            threaded = list(zip(counts, pool.map(
                lambda t: scale_run(t, settings.threads_examples) if settings.scale else verify_library(
                    result.library, symbol, spec.path, overload.name, seed=scale_seed,
                    max_examples=settings.threads_examples, limits=settings.limits, threads=t), counts)))
        for count, v in threaded:
            if not v.ok:
                return GateResult(False, "threads", threads_feedback(count, v), verdicts, result, sanitizer=san,
                                  scale=scaled, threads=threaded)
    soaked = None
    if settings.soak_calls:
        calls = max(settings.soak_calls // 20, 1) if gpu else settings.soak_calls
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
    ev["sanitizer"] = sanitizer.record() if sanitizer is not None else {"ran": False, "note": "disabled (sanitizer_examples=0)"}
    if rust:  # say truthfully what ran: no sanitizer, a checked build
        ev["checked_build"] = ev["sanitizer"]
        ev["sanitizer"] = {"ran": False, "note": admission_rust.NO_SANITIZER_NOTE}
    ev["import_audit"] = imports
    if device is not None:
        from opgen.targets.gpu.admission import evidence as gpu_evidence

        ev.update(gpu_evidence(spec, overload, source, backend(target).target, device, racecheck))
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
    dt = overload.sig.returns.dtype
    if dt is None or not dt.is_float:
        return {"exact": True}
    return {dt.name: spec.tolerance_for(overload, dt).model_dump()}


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
