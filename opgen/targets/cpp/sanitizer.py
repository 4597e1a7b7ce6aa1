"""The sanitizer run: the candidate built with ASan+UBSan and run on a fixed-seed sample
beside the development run (C++ kernels and the GPU execution layer's C++ builds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opgen.build.cpp import SANITIZER_FLAGS, BuildJob, build, sanitizer_job, sanitizer_runtime
from opgen.spec.abi import c_symbol
from opgen.spec.model import Overload, Spec
from opgen.targets.base import SideCheck
from opgen.verify.harness import Limits, Verdict, sanitizer_options, verify_library


class SanitizerRun(SideCheck):
    """Build (cached) and run the ASan+UBSan variant while the development run goes on."""

    stage = "sanitizer"
    sanitizer = True

    def __init__(self, job: BuildJob, spec: Spec, overload: Overload, *, seed: int, examples: int, limits: Limits):
        super().__init__(enabled=examples > 0, disabled_note="disabled (sanitizer_examples=0)")
        self.job, self.spec, self.overload = job, spec, overload
        self.seed, self.examples, self.limits = seed, examples, limits
        self.built = None

    def run(self) -> None:
        runtime = sanitizer_runtime()
        if runtime is None:
            self.note = "no libasan for this compiler (g++ -print-file-name=libasan.so found nothing): sanitizer run skipped"
            return
        built = build([sanitizer_job(self.job)])[0]
        self.built = built
        if not built.ok:
            self.verdict = Verdict(False, "sanitizer", "the sanitizer build (-fsanitize=address,undefined) did not "
                                   "compile although the normal build did:\n" + built.diagnostics)
            return
        if self.cancel.is_set():
            return
        self.verdict = verify_library(built.library, c_symbol(self.spec.op, self.overload.name), self.spec.path,
                                      self.overload.name, seed=self.seed, max_examples=self.examples,
                                      limits=self.limits, sanitizer_runtime=runtime, cancel=self.cancel)

    def record(self) -> dict[str, Any]:
        return self.sampled_record(flags=SANITIZER_FLAGS, runtime=sanitizer_runtime(),
                                   options=sanitizer_options(Path("<workdir>"), self.limits.for_sanitizer()),
                                   cache_key=self.built.job.key if self.built else None)

    def evidence(self) -> dict[str, Any]:
        return {"sanitizer": self.record()}
