"""The Rust-specific stages of the admission gate: the library audit against its baseline,
and the checked-build run that stands in for C++'s ASan+UBSan run.

Stable rustc has no sanitizers. The kernel module is compiled under
``#[forbid(unsafe_code)]``, so memory errors in it are ruled out by the compiler; what a
sanitizer would still add for Rust is arithmetic overflow and failed debug assertions,
which the *checked* build (``-C debug-assertions=on -C overflow-checks=on``, opt-level 1)
turns into panics, and the shim into Internal errors the runner rejects. The evidence
says exactly that: no sanitizer ran, a checked build did, on its own fixed seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opgen.spec.abi import c_symbol
from opgen.build.cpp import BuildResult
from opgen.build.rust import (CHECKED_FLAGS, HARDENING_NOTE, RustBuildJob, added_system_calls, build_rust, checked_job,
                         inspect_library, rust_job)
from opgen.errors import OpgenError
from opgen.targets.rust.policy import audit_library
from opgen.targets.rust.shim import render_rust_shim, trivial_kernel
from opgen.spec.model import Overload, Spec
from opgen.targets.base import SideCheck
from opgen.verify.harness import Limits, Verdict, verify_library

NO_SANITIZER_NOTE = ("stable rustc has no sanitizers; the kernel module is compiled under #![forbid(unsafe_code)], "
                     "and a checked build (debug assertions, overflow checks, opt-level 1) ran instead on its own "
                     "seed: see checked_build")


def baseline_job(spec: Spec, overload: Overload) -> RustBuildJob:
    """The same shim and runtime around a kernel that computes nothing."""
    threads = spec.threads_allowed(overload)
    return rust_job(f"{spec.op}__{overload.name}-baseline", trivial_kernel(spec, overload, threads=threads),
                    render_rust_shim(spec, overload), threads=threads)


def audit(spec: Spec, overload: Overload, result: BuildResult) -> tuple[list[str], dict[str, Any]]:
    """Violations in what the built library adds beyond its baseline, and the record for the evidence."""
    if not result.ok:
        return [], {}
    base = build_rust([baseline_job(spec, overload)])[0]
    if not base.ok:
        raise OpgenError("the import-audit baseline (the generated shim around an empty kernel) did not build:\n"
                         + base.diagnostics, hint="this is a bug in opgen's Rust shim or runtime; report it")
    info, baseline = inspect_library(result.library), inspect_library(base.library)
    symbol = c_symbol(spec.op, overload.name)
    found = audit_library(info, baseline, expected_exports={symbol, "opgen_free"},
                          threads_allowed=spec.threads_allowed(overload),
                          system_calls=added_system_calls(result.library, info, baseline))
    record = {"method": "the library's dynamic imports (allow-list), exports, load-time sections, defined symbols "
                        "(std modules that reach the OS), writable data and the machine code of its new functions, "
                        "against a baseline built from the same shim and runtime around an empty kernel (Rust's "
                        "std is linked in)",
              "imports_beyond_baseline": sorted(set(info.imports) - set(baseline.imports)),
              "baseline_imports": len(baseline.imports),
              "exports": list(info.exports),
              "load_time_sections": [name for name, _ in info.load_time_sections],
              "defined_beyond_baseline": len(set(info.defined) - set(baseline.defined)),
              "writable_data_beyond_baseline": sorted({n for _, n in info.data} - {n for _, n in baseline.data}),
              "hardening": HARDENING_NOTE,
              "baseline_cache_key": base.job.key}
    return [str(v) for v in found], record


class CheckedRun(SideCheck):
    """Build (cached) and run the checked variant while the development run goes on; the
    Rust counterpart of the C++ sanitizer run (stage "checked")."""

    stage = "checked"
    sanitizer = True

    def __init__(self, job: RustBuildJob, spec: Spec, overload: Overload, *, seed: int, examples: int,
                 limits: Limits):
        super().__init__(enabled=examples > 0, disabled_note="disabled (sanitizer_examples=0)")
        self.job, self.symbol, self.spec, self.overload = job, c_symbol(spec.op, overload.name), spec, overload
        self.seed, self.examples, self.limits = seed, examples, limits
        self.built: BuildResult | None = None

    def run(self) -> None:
        self.built = build_rust([checked_job(self.job)])[0]
        if not self.built.ok:
            self.verdict = Verdict(False, "checked", "the checked build (debug assertions, overflow checks) did not "
                                   "compile although the normal build did:\n" + self.built.diagnostics)
            return
        if self.cancel.is_set():
            return
        self.verdict = verify_library(self.built.library, self.symbol, Path(self.spec.path), self.overload.name,
                                      seed=self.seed, max_examples=self.examples, limits=self.limits,
                                      cancel=self.cancel)

    def record(self) -> dict[str, Any]:
        return self.sampled_record(flags=CHECKED_FLAGS,
                                   what="arithmetic overflow and failed debug assertions panic; a panic is an "
                                        "Internal error, which the runner rejects",
                                   cache_key=self.built.job.key if self.built else None)

    def feedback(self, v: Verdict) -> str:
        return ("The checked build (debug assertions and overflow checks on) failed where the optimised build "
                "passed; an arithmetic overflow or a failed assertion panics there.\n" + v.as_feedback())

    def evidence(self) -> dict[str, Any]:
        # Say truthfully what ran: no sanitizer, a checked build.
        return {"checked_build": self.record(), "sanitizer": {"ran": False, "note": NO_SANITIZER_NOTE}}
