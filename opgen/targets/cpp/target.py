"""The C++ target: C++17 kernels built with g++ through ninja, run natively."""

from __future__ import annotations

from typing import Any

from opgen.build.cpp import BuildJob, BuildResult, build
from opgen.llm.response import KernelAnswer
from opgen.spec.abi import cpp_declaration
from opgen.spec.model import Overload, Spec
from opgen.targets.base import SideCheck, Target
from opgen.targets.cpp import policy
from opgen.targets.cpp.audit import audit_build
from opgen.targets.cpp.sanitizer import SanitizerRun
from opgen.targets.cpp.shim import render_shim
from opgen.verify.harness import Limits


class CppTarget(Target):
    name = "cpp"
    language = "C++"
    kernel_file = "kernel.cpp"
    shim_file = "shim.cpp"
    suffix = ".cpp"
    answer_model = KernelAnswer

    def declaration(self, spec: Spec, overload: Overload) -> str:
        return cpp_declaration(spec.op, overload.name, overload.sig)

    def prompt_facts(self, spec: Spec, overload: Overload) -> dict[str, Any]:
        threads = spec.threads_allowed(overload)
        return {**super().prompt_facts(spec, overload),
                "allowed_headers": policy.ALLOWED_CPP_HEADERS + (("omp.h",) if threads else ())}

    def shim(self, spec: Spec, overload: Overload) -> str:
        return render_shim(spec, overload)

    def job(self, spec: Spec, overload: Overload, source: str) -> BuildJob:
        return BuildJob(name=f"{spec.op}__{overload.name}",
                        sources={"kernel.cpp": source, "shim.cpp": self.shim(spec, overload)},
                        threads=spec.threads_allowed(overload))

    def build(self, jobs: list[BuildJob]) -> list[BuildResult]:
        return build(jobs)

    def check_source(self, spec: Spec, overload: Overload, source: str) -> list[str]:
        return [str(v) for v in policy.check(source, threads_allowed=spec.threads_allowed(overload))]

    def audit(self, spec: Spec, overload: Overload, result: BuildResult) -> tuple[list[str], dict[str, Any]]:
        return audit_build(result, spec.threads_allowed(overload))

    def side_checks(self, spec: Spec, overload: Overload, source: str, job: BuildJob, *, examples: int,
                    seed_for, limits: Limits) -> list[SideCheck]:
        return [SanitizerRun(job, spec, overload, seed=seed_for("sanitizer"), examples=examples, limits=limits)]


TARGET = CppTarget()
