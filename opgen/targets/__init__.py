"""The native targets as data: what differs between a C++, a Rust, a CUDA and a Metal kernel.

File names in the registry, the language's name in prompts and messages, the shim
generator, the build job, and a ``build_any`` that builds a mixed list of jobs (C++ jobs in
one ninja run, Rust jobs in another) with results in job order. Everything else (the
gate's stages, the harness, the sandbox, the registry) is shared. CUDA and Metal kernels
are built for opgen's CPU execution layer as C++ jobs (``opgen.targets.gpu.build``), their shim is
the generated host code, and what passes the gate is admitted as ``emulated``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from opgen.build.cpp import BuildJob, BuildResult, build
from opgen.build.rust import RustBuildJob, build_rust, rust_job
from opgen.errors import OpgenError
from opgen.targets.cpp.shim import render_shim as render_cpp_shim
from opgen.targets.rust.shim import render_rust_shim
from opgen.spec.model import TARGET_IDS, Overload, Spec


@dataclass(frozen=True)
class Backend:
    target: str  # as in specs and on the command line: cpp, rust
    language: str  # for people: C++, Rust
    kernel_file: str  # the LLM-written source, as the registry stores it
    shim_file: str  # the generated C-ABI shim
    suffix: str  # of hand-written answers and corpus entries
    render: Callable[[Spec, Overload], str]
    # What the gate's pass means: verified (ran natively), emulated (a GPU kernel that ran on
    # the CPU execution layer only).
    admitted_status: str = "verified"
    # More generated files an entry keeps (role -> (file name, text)), e.g. the CUDA device host code.
    extra_files: Callable[[Spec, Overload], dict[str, tuple[str, str]]] = lambda spec, overload: {}

    @property
    def gpu(self) -> bool:
        return self.target in ("cuda", "metal")

    def unsupported(self, spec: Spec, overload: Overload) -> str | None:
        """Why this target cannot express the overload at all (Metal has no float64), or None."""
        if not self.gpu:
            return None
        from opgen.errors import SpecError
        from opgen.targets.gpu.device_abi import contract
        from opgen.targets.gpu.dialect import dialect

        try:
            contract(spec, overload, dialect(self.target))
        except SpecError as exc:
            return exc.message
        return None

    @property
    def target_id(self) -> str:
        return TARGET_IDS[self.target]

    def shim(self, spec: Spec, overload: Overload) -> str:
        return self.render(spec, overload)

    def job(self, spec: Spec, overload: Overload, source: str) -> BuildJob | RustBuildJob:
        threads = spec.threads_allowed(overload)
        name = f"{spec.op}__{overload.name}"
        if self.target == "rust":
            return rust_job(name, source, render_rust_shim(spec, overload), threads=threads)
        if self.gpu:
            from opgen.targets.gpu.build import emulation_job

            return emulation_job(spec, overload, self.target, source)
        return BuildJob(name=name, sources={"kernel.cpp": source, "shim.cpp": render_cpp_shim(spec, overload)},
                        threads=threads)


def _emulated_host(target: str) -> Callable[[Spec, Overload], str]:
    def render(spec: Spec, overload: Overload) -> str:
        from opgen.targets.gpu.host import render_emulated_host

        return render_emulated_host(spec, overload, target)

    return render


def _cuda_device_host(spec: Spec, overload: Overload) -> dict[str, tuple[str, str]]:
    from opgen.targets.gpu.host import render_cuda_host

    return {"device_shim": ("device_shim.cu", render_cuda_host(spec, overload))}


BACKENDS = {
    "cpp": Backend("cpp", "C++", "kernel.cpp", "shim.cpp", ".cpp", render_cpp_shim),
    "rust": Backend("rust", "Rust", "kernel.rs", "shim.rs", ".rs", render_rust_shim),
    "cuda": Backend("cuda", "CUDA", "kernel.cu", "shim.cpp", ".cu", _emulated_host("cuda"),
                    admitted_status="emulated", extra_files=_cuda_device_host),
    "metal": Backend("metal", "Metal Shading Language", "kernel.metal", "shim.cpp", ".metal", _emulated_host("metal"),
                     admitted_status="emulated"),
}


def backend(target: str) -> Backend:
    """The backend of a target, by its spec name (cpp) or registry id (cpu-cpp)."""
    name = {v: k for k, v in TARGET_IDS.items()}.get(target, target)
    if name not in BACKENDS:
        raise OpgenError(f"target {target!r} has no backend yet", hint=f"choose one of {', '.join(BACKENDS)}")
    return BACKENDS[name]


def target_of_file(path: Path) -> str:
    """The target a hand-written source is for, by its suffix (.rs Rust, .cu CUDA, .metal Metal, anything else C++)."""
    return next((b.target for b in BACKENDS.values() if Path(path).suffix == b.suffix), "cpp")


def build_any(jobs: list[BuildJob | RustBuildJob]) -> list[BuildResult]:
    """Build C++ and Rust jobs (each language in one parallel ninja run); results in job order."""
    rust = [j for j in jobs if isinstance(j, RustBuildJob)]
    cpp = [j for j in jobs if not isinstance(j, RustBuildJob)]
    done = dict(zip(map(id, cpp), build(cpp) if cpp else []))
    done.update(zip(map(id, rust), build_rust(rust) if rust else []))
    return [done[id(j)] for j in jobs]
