"""What CUDA and Metal share as targets: the LLM writes a device kernel; opgen generates the
host code; the gate builds it for the CPU execution layer (a C++ build, audited and
sanitized like one), compiles it for the device beside that build, race-checks its
shared memory, and admits a pass as ``emulated`` (``scripts/gpu_check.py`` upgrades an
entry to ``verified`` on a real device)."""

from __future__ import annotations

from typing import Any, ClassVar

from opgen.build.cpp import BuildJob, BuildResult, build
from opgen.errors import SpecError
from opgen.spec.abi import cpp_declaration
from opgen.spec.model import Overload, Spec
from opgen.targets.base import SideCheck, Target
from opgen.targets.cpp.audit import audit_build
from opgen.targets.cpp.sanitizer import SanitizerRun
from opgen.targets.gpu import policy as gpu_policy
from opgen.targets.gpu.admission import DeviceBuild, RaceCheck, evidence
from opgen.targets.gpu.build import emulation_job
from opgen.targets.gpu.device_abi import Contract, contract, prompt_facts
from opgen.targets.gpu.dialect import Dialect, dialect
from opgen.targets.gpu.host import render_emulated_host
from opgen.verify.harness import Limits
from opgen.verify.scale import EMULATED_BUDGET


class GpuTarget(Target):
    """A device target checked on the CPU execution layer. Subclasses name the dialect."""

    names: ClassVar[str]  # what the execution layer's build compiles the source against: CUDA, MSL
    admitted_status = "emulated"
    emulated = True
    varies_threads = False
    soak_share = 20
    scale_budget = EMULATED_BUDGET
    compiled_as = None

    @property
    def dialect(self) -> Dialect:
        return dialect(self.name)

    @property
    def kernel_file(self) -> str:  # type: ignore[override]
        return self.dialect.kernel_file

    @property
    def suffix(self) -> str:  # type: ignore[override]
        return self.dialect.suffix

    def contract(self, spec: Spec, overload: Overload) -> Contract:
        return contract(spec, overload, self.dialect)

    def unsupported(self, spec: Spec, overload: Overload) -> str | None:
        try:
            self.contract(spec, overload)
        except SpecError as exc:
            return exc.message
        return None

    def declaration(self, spec: Spec, overload: Overload) -> str:
        return self.contract(spec, overload).declaration()

    def prompt_facts(self, spec: Spec, overload: Overload) -> dict[str, Any]:
        # The device contract's facts replace the C++ declaration the shared templates know.
        return {"declaration": cpp_declaration(spec.op, overload.name, overload.sig),
                **prompt_facts(spec, overload, self.dialect)}

    def answer_context(self, spec: Spec, overload: Overload) -> dict[str, Any]:
        # The answer's launch line is checked against the kernel's sizes before anything is built.
        return {**super().answer_context(spec, overload),
                "launch_names": list(self.contract(spec, overload).launch_names)}

    def shim(self, spec: Spec, overload: Overload) -> str:
        return render_emulated_host(spec, overload, self.name)

    def job(self, spec: Spec, overload: Overload, source: str) -> BuildJob:
        return emulation_job(spec, overload, self.name, source)

    def build(self, jobs: list[BuildJob]) -> list[BuildResult]:
        return build(jobs)

    def check_source(self, spec: Spec, overload: Overload, source: str) -> list[str]:
        c = self.contract(spec, overload)
        return [str(v) for v in gpu_policy.check(source, c.dialect, c.launch_names)]

    def audit(self, spec: Spec, overload: Overload, result: BuildResult) -> tuple[list[str], dict[str, Any]]:
        return audit_build(result, spec.threads_allowed(overload), emulated=True)

    def side_checks(self, spec: Spec, overload: Overload, source: str, job: BuildJob, *, examples: int,
                    seed_for, limits: Limits) -> list[SideCheck]:
        return [DeviceBuild(spec, overload, source, self.name),
                SanitizerRun(job, spec, overload, seed=seed_for("sanitizer"), examples=examples, limits=limits),
                RaceCheck(spec, overload, source, self.name, seed=seed_for("racecheck"),
                          examples=examples, limits=limits)]

    def limits(self, limits: Limits) -> Limits:
        return limits.for_emulation()  # every run is on the CPU execution layer, slow by design

    def compile_feedback(self, diagnostics: str, checks: list[SideCheck]) -> str:
        feedback = ("The CPU execution layer's build (the source compiled as C++ against opgen's "
                    f"{self.names} names) failed:\n{diagnostics or 'the build failed without diagnostics'}")
        for check in checks:
            if check.compile_error and (also := check.failure()) is not None:
                feedback += "\n\nAnd " + also
        return feedback

    def evidence(self, spec: Spec, overload: Overload, source: str) -> dict[str, Any]:
        return evidence(spec, overload, source, self.name)

    def signature(self, spec: Spec, overload: Overload) -> dict[str, Any]:
        # The device kernel's exact declaration, beside the C ABI it is reached through.
        return {**super().signature(spec, overload), self.name: self.declaration(spec, overload)}
