"""The Rust target: std-only Rust kernels built with rustc through ninja, run natively,
audited against a baseline library, and checked by a debug-assertion build where C++ gets
its sanitizer run (stable rustc has none)."""

from __future__ import annotations

from typing import Any

from opgen.build.cpp import BuildResult
from opgen.build.rust import RustBuildJob, build_rust, rust_job
from opgen.llm.response import RustKernelAnswer
from opgen.spec.abi import rust_declaration
from opgen.spec.model import Overload, Spec
from opgen.targets.base import SideCheck, Target
from opgen.targets.rust import audit, policy
from opgen.targets.rust.shim import render_rust_shim
from opgen.verify.harness import Limits


class RustTarget(Target):
    name = "rust"
    language = "Rust"
    kernel_file = "kernel.rs"
    shim_file = "shim.rs"
    suffix = ".rs"
    answer_model = RustKernelAnswer
    compiled_as = "separate"  # a cdylib of its own (rustc links std into it), loaded at run time

    def unsupported(self, spec: Spec, overload: Overload) -> str | None:
        sig = overload.sig
        for t in [p.type for p in sig.tensor_params] + [t for _, t in sig.results if t.is_tensor]:
            if t.dtype is not None and t.dtype.is_half:
                return (f"Rust has no stable {t.dtype.name} type (its f16 is unstable, and it has no bf16): half-precision "
                        "overloads are C++ (and GPU) kernels")
        return None

    def declaration(self, spec: Spec, overload: Overload) -> str:
        return rust_declaration(spec.op, overload.name, overload.sig)

    def shim(self, spec: Spec, overload: Overload) -> str:
        return render_rust_shim(spec, overload)

    def job(self, spec: Spec, overload: Overload, source: str) -> RustBuildJob:
        return rust_job(f"{spec.op}__{overload.name}", source, self.shim(spec, overload),
                        threads=spec.threads_allowed(overload))

    def build(self, jobs: list[RustBuildJob]) -> list[BuildResult]:
        return build_rust(jobs)

    def check_source(self, spec: Spec, overload: Overload, source: str) -> list[str]:
        return [str(v) for v in policy.check(source, threads_allowed=spec.threads_allowed(overload))]

    def audit(self, spec: Spec, overload: Overload, result: BuildResult) -> tuple[list[str], dict[str, Any]]:
        return audit.audit(spec, overload, result)

    def side_checks(self, spec: Spec, overload: Overload, source: str, job: RustBuildJob, *, examples: int,
                    seed_for, limits: Limits) -> list[SideCheck]:
        return [audit.CheckedRun(job, spec, overload, seed=seed_for("sanitizer"), examples=examples, limits=limits)]

    def signature(self, spec: Spec, overload: Overload) -> dict[str, Any]:
        return {**super().signature(spec, overload), "rust": self.declaration(spec, overload)}


TARGET = RustTarget()
