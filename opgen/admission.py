"""The admission gate: policy, build, verify on development seeds, verify on fresh seeds.

One gate for every way a kernel arrives (an LLM answer, a replayed recording, a
hand-written file, a registry entry being re-verified), so "admitted" means the same
thing everywhere. Each failed stage returns feedback an LLM can repair from.
"""

from __future__ import annotations

import hashlib
import os
import platform
import secrets
from concurrent.futures import ThreadPoolExecutor
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from . import policy
from .abi import c_symbol
from .build import BuildJob, BuildResult, build
from .shim import render_shim
from .spec import Overload, Spec
from .verify.harness import Limits, Verdict, verify_library


@dataclass(frozen=True)
class GateSettings:
    dev_examples: int = int(os.environ.get("OPGEN_DEV_EXAMPLES", 100))
    admission_examples: int = int(os.environ.get("OPGEN_ADMISSION_EXAMPLES", 150))
    admission_runs: int = 2
    limits: Limits = Limits()


@dataclass
class GateResult:
    ok: bool
    stage: str  # policy | compile | verify | admission | pass
    feedback: str  # for the LLM and the user
    verdicts: list[Verdict] = field(default_factory=list)
    build: BuildResult | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


def dev_seed(spec: Spec, overload: Overload) -> int:
    """The seed used while repairing: fixed, so a repair conversation is reproducible."""
    return int(hashlib.sha256(f"{spec.op}/{overload.name}/dev".encode()).hexdigest()[:8], 16)


def build_job(spec: Spec, overload: Overload, source: str) -> BuildJob:
    return BuildJob(
        name=f"{spec.op}__{overload.name}",
        sources={"kernel.cpp": source, "shim.cpp": render_shim(spec, overload)},
        threads=spec.threads_allowed(overload),
    )


def check_policy(spec: Spec, overload: Overload, source: str) -> GateResult | None:
    violations = policy.check(source, threads_allowed=spec.threads_allowed(overload))
    if violations:
        return GateResult(False, "policy", "\n".join(f"- {v}" for v in violations))
    return None


def run_gate(spec: Spec, overload: Overload, source: str, settings: GateSettings = GateSettings(),
             built: BuildResult | None = None, fresh_seeds: list[int] | None = None) -> GateResult:
    """Everything a candidate must pass before admission, in order, stopping at the first failure."""
    if (rejected := check_policy(spec, overload, source)) is not None:
        return rejected
    result = built or build([build_job(spec, overload, source)])[0]
    if not result.ok:
        return GateResult(False, "compile", result.diagnostics or "the build failed without diagnostics", build=result)
    symbol = c_symbol(spec.op, overload.name)
    verdicts = []
    dev = verify_library(result.library, symbol, spec.path, overload.name, seed=dev_seed(spec, overload),
                         max_examples=settings.dev_examples, limits=settings.limits)
    verdicts.append(dev)
    if not dev.ok:
        return GateResult(False, "verify", dev.as_feedback(), verdicts, result)
    # Admission: seeds drawn now, never shown to the LLM before this moment.
    seeds = fresh_seeds or [secrets.randbits(32) for _ in range(settings.admission_runs)]
    # The admission runs are independent child processes: run them side by side.
    with ThreadPoolExecutor(max_workers=len(seeds)) as pool:
        admission = list(pool.map(lambda s: verify_library(
            result.library, symbol, spec.path, overload.name, seed=s,
            max_examples=settings.admission_examples, limits=settings.limits), seeds))
    verdicts += admission
    for v in admission:
        if not v.ok:
            return GateResult(False, "admission", v.as_feedback(), verdicts, result)
    return GateResult(True, "pass", f"{sum(v.examples for v in verdicts)} examples passed", verdicts, result,
                      evidence=evidence(spec, overload, verdicts, result, settings))


def evidence(spec: Spec, overload: Overload, verdicts: list[Verdict], built: BuildResult,
             settings: GateSettings) -> dict[str, Any]:
    return {
        "examples": sum(v.examples for v in verdicts),
        "runs": [{"seed": v.seed, "examples": v.examples, "seconds": round(v.seconds, 3),
                  "phase": "development" if i == 0 else "admission"} for i, v in enumerate(verdicts)],
        "worst_abs_error": max(v.worst_abs_error for v in verdicts),
        "worst_rel_error": max(v.worst_rel_error for v in verdicts),
        "tolerance": _tolerances(spec, overload),
        "libraries": library_versions(spec.reference_for(overload)),
        "machine": machine(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "limits": settings.limits.as_dict(),
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
