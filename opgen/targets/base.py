"""The one protocol every target provides: what differs between a C++, a Rust, a CUDA and a
Metal kernel, as data and methods, so the synthesis loop, the gate, the registry and the
consumers never ask which target they hold.

A target answers, for one overload:
  prompting   ``declaration``, ``prompt_facts`` (template variables), ``answer_context``
              (what the structured answer is validated against), ``answer_model``;
  building    ``shim``, ``job``, ``build`` (many jobs in one run), ``extra_files``;
  the gate    ``check_source`` (the source policy), ``audit`` (the compiled object),
              ``side_checks`` (runs beside the development run: a sanitizer build, a
              checked build, a device build, a race check), ``limits``, ``scale_budget``,
              ``soak_share``, ``varies_threads``, ``compile_feedback``, ``evidence``;
  the registry ``admitted_status``, ``signature``, file names;
  the nightly job ``missing_hardware``.

Per-overload facts that are costly to derive (the GPU device contract) are memoised where
they are computed (``opgen.targets.gpu.device_abi.contract``), so asking many times is cheap.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from opgen.build.cpp import BuildJob, BuildResult
from opgen.llm.response import KernelAnswer
from opgen.spec.abi import kernel_name, native_signature
from opgen.spec.model import TARGET_IDS, Overload, Spec
from opgen.verify.harness import Limits, Verdict
from opgen.verify.scale import CPU_BUDGET, Budget


class SideCheck(threading.Thread):
    """A check the gate runs in a thread beside the development and admission runs.

    ``stage``: the gate stage its failure is reported as. ``compile_error``: its failure is a
    compile error, reported before a failed development run (the device build).
    ``needs_build``: started once the candidate built (False: before the build). ``sanitizer``:
    its verdict is the gate result's ``sanitizer`` (ASan+UBSan, Rust's checked build).
    A disabled check (``enabled`` False) never runs; its evidence says why."""

    stage: ClassVar[str] = "sanitizer"
    compile_error: ClassVar[bool] = False
    needs_build: ClassVar[bool] = True
    sanitizer: ClassVar[bool] = False

    def __init__(self, *, enabled: bool = True, disabled_note: str = ""):
        super().__init__(daemon=True)
        self.enabled = enabled
        self.disabled_note = disabled_note
        self.note = ""  # why an enabled check did not run (no libasan, ...)
        self.cancel = threading.Event()
        self.verdict: Verdict | None = None
        self.normal_build: BuildResult | None = None

    def begin(self, built: BuildResult | None) -> None:
        """Start (if enabled), knowing the candidate's normal build (None before the build)."""
        self.normal_build = built
        if self.enabled:
            self.start()

    def stop(self) -> None:
        """Cancel: the gate has its verdict already; not waited for."""
        self.cancel.set()

    def finish(self) -> Verdict | None:
        """Wait for the check (if it was started) and return its verdict."""
        if self.ident is not None:
            self.join()
        return self.verdict

    def failure(self) -> str | None:
        """The feedback when this check rejects the candidate (waits for it); None: it passed or did not run."""
        v = self.finish()
        if v is None or v.ok or v.kind == "cancelled":
            return None
        return self.feedback(v)

    def feedback(self, v: Verdict) -> str:
        return v.as_feedback()

    def evidence(self) -> dict[str, Any]:
        """What the admitted entry's evidence records about this check (keys merged into it)."""
        raise NotImplementedError

    def sampled_record(self, **extra: Any) -> dict[str, Any]:
        """The evidence of a sampled run: disabled, not run (and why), or its figures plus ``extra``."""
        if not self.enabled:
            return {"ran": False, "note": self.disabled_note}
        v = self.verdict
        if v is None:
            return {"ran": False, "note": self.note or "not run"}
        return {"ran": True, "passed": v.ok, "examples": v.examples, "seed": v.seed, "seconds": round(v.seconds, 3),
                **extra}


class Target:
    """A native target. Subclasses set the class attributes and override what differs."""

    name: ClassVar[str]  # as in specs and on the command line: cpp, rust, cuda, metal
    language: ClassVar[str]  # for people: C++, Rust, CUDA, Metal Shading Language
    kernel_file: ClassVar[str]  # the LLM-written source, as the registry stores it
    shim_file: ClassVar[str]  # the generated C-ABI shim (or the generated host code)
    suffix: ClassVar[str]  # of hand-written answers and corpus entries
    answer_model: ClassVar[type[KernelAnswer]]  # the structured answer the LLM gives
    # What the gate's pass means: verified (ran natively), emulated (ran on the CPU execution
    # layer only, never on the device).
    admitted_status: ClassVar[str] = "verified"
    # Its kernels run on opgen's CPU execution layer, on any machine (GPU targets): the nightly
    # job re-verifies them there whether or not the device is present.
    emulated: ClassVar[bool] = False
    # The gate runs every threaded overload again at other thread counts (CPU targets; the GPU
    # execution layer runs a block's threads as fibers, so OMP thread counts mean nothing there).
    varies_threads: ClassVar[bool] = True
    # The soak stage makes 1/soak_share of the calls it makes for a native kernel (the GPU
    # execution layer is slow by design).
    soak_share: ClassVar[int] = 1
    scale_budget: ClassVar[Budget] = CPU_BUDGET
    # How ``opgen compile`` takes an entry of this target into a compiled library: "linked" (its
    # kernel and shim sources built into the library), "separate" (its own library beside it,
    # loaded at run time), or None (it cannot: the GPU targets' entries are emulated).
    compiled_as: ClassVar[str | None] = "linked"

    @property
    def target_id(self) -> str:
        """The registry's id: cpu-cpp, cpu-rust, cuda, metal."""
        return TARGET_IDS[self.name]

    @property
    def answer_extension(self) -> str:
        """What the file exchange reads an answer from: <id>.answer.<extension>."""
        return self.suffix.lstrip(".")

    # --- prompting ---------------------------------------------------------------------
    def unsupported(self, spec: Spec, overload: Overload) -> str | None:
        """Why this target cannot express the overload at all (Metal has no float64), or None."""
        return None

    def declaration(self, spec: Spec, overload: Overload) -> str:
        """The exact function the LLM writes."""
        raise NotImplementedError

    def prompt_facts(self, spec: Spec, overload: Overload) -> dict[str, Any]:
        """Template variables beyond the shared ones (the declaration, a device contract)."""
        return {"declaration": self.declaration(spec, overload)}

    def answer_context(self, spec: Spec, overload: Overload) -> dict[str, Any]:
        """What the structured answer is validated against before anything is built."""
        return {"kernel_name": kernel_name(spec.op, overload.name), "language": self.name}

    # --- building ----------------------------------------------------------------------
    def shim(self, spec: Spec, overload: Overload) -> str:
        raise NotImplementedError

    def job(self, spec: Spec, overload: Overload, source: str) -> BuildJob:
        raise NotImplementedError

    def build(self, jobs: list[BuildJob]) -> list[BuildResult]:
        """Build this target's jobs in one parallel run; results in job order."""
        raise NotImplementedError

    def extra_files(self, spec: Spec, overload: Overload) -> dict[str, tuple[str, str]]:
        """More generated files an entry keeps: role -> (file name, text)."""
        return {}

    # --- the gate ----------------------------------------------------------------------
    def check_source(self, spec: Spec, overload: Overload, source: str) -> list[str]:
        """Violations of the source policy (empty: none)."""
        raise NotImplementedError

    def audit(self, spec: Spec, overload: Overload, result: BuildResult) -> tuple[list[str], dict[str, Any]]:
        """Violations in the compiled object, and the import-audit record for the evidence."""
        raise NotImplementedError

    def side_checks(self, spec: Spec, overload: Overload, source: str, job: BuildJob, *, examples: int,
                    seed_for, limits: Limits) -> list[SideCheck]:
        """The checks run beside the development run, in the order their failures are reported.
        ``seed_for(role)`` gives a check's seed; ``examples`` 0 disables the sampled ones."""
        return []

    def limits(self, limits: Limits) -> Limits:
        """The sandbox limits every run of this target's kernels gets."""
        return limits

    def compile_feedback(self, diagnostics: str, checks: list[SideCheck]) -> str:
        """What a failed build tells the LLM."""
        return diagnostics or "the build failed without diagnostics"

    def evidence(self, spec: Spec, overload: Overload, source: str) -> dict[str, Any]:
        """What this target adds to an admitted entry's evidence beyond its side checks'."""
        return {}

    # --- the registry and its consumers ------------------------------------------------
    def signature(self, spec: Spec, overload: Overload) -> dict[str, Any]:
        """What a registry entry records for the compiler: types in and out, the C and C++
        spellings every target shares, and this target's own declaration where it differs."""
        return native_signature(spec.op, overload.name, overload.sig)

    def missing_hardware(self) -> str | None:
        """Why this machine cannot run the target's kernels natively, or None if it can."""
        return None
