"""Building GPU candidates: for the CPU execution layer (g++), and for the device (nvcc; Apple's
metal compiler where it exists).

* ``emulation_job``: a C++ BuildJob (built and cached by ``opgen.build.cpp`` like any C++ kernel,
  sanitizer variant included). Two translation units: ``kernel.cpp`` (the CUDA or Metal names
  header, then the source unchanged, then a check of the kernel's exact parameter list) and
  ``shim.cpp`` (the generated host code with the execution layer). The runtime headers and
  ``opgen_launch.hpp`` (the source's launch line as C++) travel as sources, so the cache key
  covers them.
* ``cuda_job`` / ``build_cuda``: the source with the generated CUDA host code in one nvcc
  translation unit, for Hopper (sm_90 SASS) and as compute_80 PTX (any GPU from Ampere on
  JIT-compiles it), into a shared library exposing the same C symbol. Cached by content
  hash under ``.opgen-cache/build-cuda``; diagnostics kept for the repair loop.
* ``metal_check``: ``xcrun metal`` on macOS; elsewhere it says it did not run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opgen.build.claims import build_unclaimed, key_lock
from opgen.build.cpp import RUNTIME, BuildJob, cache_root, run_ninja
from opgen.spec.model import Overload, Spec
from opgen.targets.gpu.device_abi import contract
from opgen.targets.gpu.dialect import dialect
from opgen.targets.gpu.host import launch_types, render_cuda_host, render_emulated_host, render_kernel_unit
from opgen.targets.gpu.launch import parse_launch, render_geometry
from opgen.build.cpp import LINK_FLAGS, toolchain, trim_diagnostics

GPU_RUNTIME = Path(__file__).parent / "runtime"
EMULATION_HEADERS = ("opgen_emu.hpp", "opgen_emu_cuda.hpp", "opgen_emu_metal.hpp", "opgen_emu_metal_types.hpp",
                     "opgen_emu_runtime.hpp", "opgen_emu_racecheck.hpp", "opgen_gpu_host.hpp", "opgen_gpu_emu_host.hpp")
CUDA_HEADERS = ("opgen_gpu_host.hpp", "opgen_gpu_cuda_host.cuh")
# Device code routinely reads floats through float4 (vector loads): no strict-aliasing
# assumptions; MSL attributes ([[buffer(0)]]) and #pragma unroll are not g++'s.
EMULATION_FLAGS = ["-fno-strict-aliasing", "-Wno-attributes", "-Wno-unknown-pragmas"]
CUDA_ARCHS = ["-gencode", "arch=compute_90,code=sm_90", "-gencode", "arch=compute_80,code=compute_80"]
NVCC_FLAGS = ["-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC,-fvisibility=hidden", *CUDA_ARCHS]
DIAGNOSTIC_LIMIT = 4000


def geometry_header(spec: Spec, overload: Overload, target: str, source: str) -> str:
    """``opgen_launch.hpp`` from the source's launch line (raises LaunchError when it has none or a bad one)."""
    c = contract(spec, overload, dialect(target))
    return render_geometry(parse_launch(source, c.launch_names), c.launch_names, launch_types(c))


def emulation_job(spec: Spec, overload: Overload, target: str, source: str) -> BuildJob:
    c = contract(spec, overload, dialect(target))
    sources = {
        "kernel.cpp": render_kernel_unit(c, source),
        "shim.cpp": render_emulated_host(spec, overload, target),
        "opgen_launch.hpp": geometry_header(spec, overload, target, source),
    }
    sources.update({name: (GPU_RUNTIME / name).read_text() for name in EMULATION_HEADERS})
    return BuildJob(name=f"{spec.op}__{overload.name}-{target}-emulated", sources=sources, threads=False,
                    extra_flags=list(EMULATION_FLAGS))


# --- the race-check build ----------------------------------------------------------------

# The kernel's translation unit with GCC's ThreadSanitizer instrumentation: every load and store
# calls a __tsan_* hook, and opgen's own hooks (runtime/opgen_emu_racecheck.hpp, in the host code's
# unit) check the ones that touch shared memory. No libtsan is linked (the link line has no
# -fsanitize=thread): its happens-before runtime knows nothing of the fibers, and the hooks need
# none of it. -Og -g: every access stays where the source put it, so addr2line names its line (at
# -O1 a `shared[i] += x` in a loop is loaded before the loop and stored after it, and would be
# reported at the loop's lines); function entry/exit hooks off (they would only cost).
RACECHECK_FLAGS = ["-Og", "-g", "-fno-omit-frame-pointer", "-fsanitize=thread",
                   "--param=tsan-instrument-func-entry-exit=0"]


@dataclass
class RaceBuild:
    key: str
    ok: bool
    library: Path | None
    diagnostics: str
    cached: bool
    seconds: float
    flags: list[str]


def build_racecheck(job: BuildJob, built: Any = None) -> RaceBuild:
    """The race-check variant of an emulation job: kernel.cpp instrumented, linked with the host code.

    The host code's object is the normal build's (``built``, a BuildResult of ``job``; the race
    runtime is in every build of it, idle unless the kernel is instrumented) when it has one;
    otherwise it is compiled here. The kernel object comes first on the link line, so the
    instrumented copy of every inline function the two units share is the one kept. Cached under
    ``.opgen-cache/build-racecheck`` by the job's key and these flags."""

    started = time.monotonic()
    key = hashlib.sha256(json.dumps([job.key, RACECHECK_FLAGS]).encode()).hexdigest()[:32]
    root = cache_root() / "build-racecheck"
    root.mkdir(parents=True, exist_ok=True)
    d = root / key
    flags = job.flags + RACECHECK_FLAGS
    with key_lock(root, key):  # one builder of this key at a time (opgen.build.claims); others build beside it
        lib = d / "lib.so"
        if lib.exists():
            return RaceBuild(key, True, lib, "", True, 0.0, flags)
        d.mkdir(parents=True, exist_ok=True)
        for name, text in job.sources.items():
            (d / name).write_text(text)
        cxx = toolchain()["cxx"]
        include = f"-I{RUNTIME}"
        shim = built.object("shim.cpp") if built is not None and getattr(built, "ok", False) else None
        compiles = [subprocess.Popen([cxx, *flags, include, "-c", "kernel.cpp", "-o", "kernel.cpp.o"], cwd=d,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)]
        if shim is None:
            shim = d / "shim.cpp.o"
            compiles.append(subprocess.Popen([cxx, *job.flags, include, "-c", "shim.cpp", "-o", "shim.cpp.o"], cwd=d,
                                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        logs = [p.communicate()[0] for p in compiles]
        ok = all(p.returncode == 0 for p in compiles)
        if ok:
            done = subprocess.run([cxx, *job.flags, *LINK_FLAGS, "-shared", "kernel.cpp.o", str(shim), "-o",
                                   "lib.so.tmp"], cwd=d, capture_output=True, text=True)
            logs.append(done.stdout + done.stderr)
            ok = done.returncode == 0
            if ok:
                os.replace(d / "lib.so.tmp", lib)
        diagnostics = trim_diagnostics("".join(logs), d)
    return RaceBuild(key, ok, lib if ok else None, diagnostics, False, time.monotonic() - started, flags)


# --- CUDA with nvcc ---------------------------------------------------------------------

@functools.cache
def nvcc() -> dict[str, str] | None:
    """nvcc's path and version, or None where the CUDA toolkit is absent."""
    path = os.environ.get("NVCC") or shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if not path:
        return None
    out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
    release = re.search(r"release ([\d.]+), (V[\d.]+)", out)
    return {"nvcc": path, "version": f"{release.group(1)} ({release.group(2)})" if release else out.strip()[-60:]}


@dataclass
class CudaBuildJob:
    name: str
    sources: dict[str, str]
    flags: list[str] = field(default_factory=lambda: list(NVCC_FLAGS))

    @property
    def key(self) -> str:
        h = hashlib.sha256()
        tool = nvcc() or {}
        h.update(json.dumps(["nvcc", tool.get("version"), self.flags], sort_keys=True).encode())
        for header in sorted(RUNTIME.glob("*.h*")):
            h.update(header.name.encode() + b"\0" + header.read_bytes())
        for name in sorted(self.sources):
            h.update(name.encode() + b"\0" + self.sources[name].encode() + b"\0")
        return h.hexdigest()[:32]


@dataclass
class CudaBuildResult:
    job: CudaBuildJob
    ran: bool  # False: no nvcc on this machine
    ok: bool
    library: Path | None
    diagnostics: str
    cached: bool
    seconds: float

    def record(self) -> dict[str, Any]:
        tool = nvcc()
        if not self.ran:
            return {"ran": False, "note": "nvcc not found: the CUDA toolkit is not installed on this machine, so the "
                                          "kernel was not compiled for a device (set NVCC or install the toolkit)"}
        return {"ran": True, "ok": self.ok, "compiler": f"nvcc {tool['version']}" if tool else None,
                "flags": self.job.flags, "targets": "sm_90 (Hopper SASS) and compute_80 PTX (JIT on Ampere and later)",
                "cache_key": self.job.key, "seconds": round(self.seconds, 3), "cached": self.cached}


def cuda_job(spec: Spec, overload: Overload, source: str) -> CudaBuildJob:
    sources = {"kernel.cu": source, "device_shim.cu": render_cuda_host(spec, overload),
               "opgen_launch.hpp": geometry_header(spec, overload, "cuda", source)}
    sources.update({name: (GPU_RUNTIME / name).read_text() for name in CUDA_HEADERS})
    return CudaBuildJob(name=f"{spec.op}__{overload.name}-cuda", sources=sources)


def build_cuda(jobs: list[CudaBuildJob]) -> list[CudaBuildResult]:
    """Build every job with nvcc (cached ones skipped) in one ninja run; results in job order."""
    tool = nvcc()
    if tool is None:
        return [CudaBuildResult(j, False, False, None, "", False, 0.0) for j in jobs]

    started = time.monotonic()
    root = cache_root() / "build-cuda"
    root.mkdir(parents=True, exist_ok=True)
    by_key: dict[str, CudaBuildJob] = {}
    for job in jobs:
        by_key.setdefault(job.key, job)

    def compile_keys(keys: list[str]) -> None:
        lines = ["rule nvcc",
                 f"  command = cd $dir && {tool['nvcc']} $flags -I{RUNTIME} device_shim.cu -o lib.so.tmp "
                 "> lib.so.log 2>&1 && mv lib.so.tmp lib.so || (rm -f lib.so.tmp; exit 1)",
                 "  description = NVCC $dir"]
        for key in keys:
            job, d = by_key[key], root / key
            d.mkdir(parents=True, exist_ok=True)
            for name, text in job.sources.items():
                (d / name).write_text(text)
            inputs = " ".join(str(d / n) for n in sorted(job.sources))
            lines += [f"build {d / 'lib.so'}: nvcc {inputs}", f"  dir = {d}", f"  flags = {' '.join(job.flags)}"]
        run_ninja(root, "\n".join(lines) + "\n")

    # nvcc's own cache root, with a lock per key (opgen.build.claims): beside the g++ builds.
    built_here = build_unclaimed(root, by_key, lambda key: (root / key / "lib.so").exists(), compile_keys)
    elapsed = time.monotonic() - started
    results = []
    for job in jobs:
        d = root / job.key
        lib = d / "lib.so"
        log = d / "lib.so.log"
        text = log.read_text(errors="replace") if log.exists() and not lib.exists() else ""
        results.append(CudaBuildResult(job, True, lib.exists(), lib if lib.exists() else None,
                                       trim_nvcc(text, d), job.key not in built_here,
                                       elapsed if job.key in built_here else 0.0))
    return results


def trim_nvcc(text: str, build_dir: Path) -> str:
    """nvcc's output an LLM can use: paths removed, the lines about errors first, bounded."""
    text = text.replace(str(build_dir) + "/", "")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("Remark")]
    errors = [line for line in lines if "error" in line]
    body = "\n".join(lines)
    return (body if len(body) <= DIAGNOSTIC_LIMIT else "\n".join(errors)[:DIAGNOSTIC_LIMIT]).strip()


# --- Metal with Apple's compiler -------------------------------------------------------

@dataclass
class MetalCheck:
    ran: bool
    ok: bool
    diagnostics: str
    note: str = ""

    def record(self) -> dict[str, Any]:
        if not self.ran:
            return {"ran": False, "note": self.note}
        return {"ran": True, "ok": self.ok, "compiler": "xcrun -sdk macosx metal -std=metal3.0 -c"}


def metal_check(source: str) -> MetalCheck:
    """Compile the source with Apple's metal compiler where it exists (macOS with Xcode)."""
    if sys.platform != "darwin" or shutil.which("xcrun") is None:
        return MetalCheck(False, False, "", note=(
            f"Apple's Metal compiler (xcrun metal) does not exist on {sys.platform}: the source was compiled as C++ "
            "against opgen's MSL header instead, which checks syntax, names, types and the kernel's parameter list "
            "but not address spaces or MSL-only rules (see opgen/targets/gpu/README.md)"))
    work = cache_root() / "build-metal" / hashlib.sha256(source.encode()).hexdigest()[:32]
    work.mkdir(parents=True, exist_ok=True)
    (work / "kernel.metal").write_text(source)
    done = subprocess.run(["xcrun", "-sdk", "macosx", "metal", "-std=metal3.0", "-c", "kernel.metal", "-o", "kernel.air"],
                          cwd=work, capture_output=True, text=True)
    return MetalCheck(True, done.returncode == 0, (done.stdout + done.stderr).strip()[:DIAGNOSTIC_LIMIT])
