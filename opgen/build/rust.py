"""Building Rust candidates into shared libraries with rustc through ninja, cached by content hash.

The Rust counterpart of ``opgen.build.cpp``: one crate per candidate, its root the generated
shim (``shim.rs``), the kernel (``kernel.rs``) and the runtime (``opgen_kernel.rs``)
beside it, compiled by one ``rustc --crate-type cdylib`` (standard library only: no crate
registry is reachable). The cache key covers every source, the runtime, rustc's
identity and the flags, so an unchanged candidate is never rebuilt; builds share the C++
builds' cache directory and lock. rustc's diagnostics are trimmed for the repair loop.

Stable rustc has no sanitizers, so the admission run that C++ gets under ASan+UBSan is,
for Rust, a *checked* build (``checked_job``: debug assertions and overflow checks on, at
opt-level 1) run on a separate seed. ``inspect_library`` reads what a built library
imports and runs at load time; ``opgen.targets.rust.policy`` audits that against a baseline (the
same shim and runtime around a kernel that computes nothing), because Rust's statically
linked std brings imports of its own.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


from opgen.build.claims import build_unclaimed
from opgen.build.cpp import RUNTIME, BuildResult, cache_root, run_ninja, toolchain as cxx_toolchain
from opgen.build import elf
from opgen.errors import OpgenError

RUST_RUNTIME = RUNTIME / "opgen_kernel.rs"
CRATE_ROOT = "shim.rs"
# panic=unwind (the default, stated): the shim catches panics and reports them. One codegen
# unit: the kernel, the runtime's views and the shim inline into each other.
BASE_FLAGS = ["--edition", "2021", "--crate-type", "cdylib", "--crate-name", "opgen_kernel",
              "-C", "opt-level=3", "-C", "target-cpu=native", "-C", "codegen-units=1", "-C", "panic=unwind",
              "--color", "never"]
# Applied after BASE_FLAGS (rustc takes the last -C of a kind): every arithmetic overflow and
# debug_assert! panics, and the panic is reported with its location.
CHECKED_FLAGS = ["-C", "opt-level=1", "-C", "debug-assertions=on", "-C", "overflow-checks=on"]
DIAGNOSTIC_LIMIT = 4000  # characters of compiler output sent back to the LLM


@functools.cache
def toolchain() -> dict[str, str]:
    """rustc's identity and the CPU that target-cpu=native resolves to here."""
    rustc = os.environ.get("RUSTC", "rustc")
    path = shutil.which(rustc)
    if path is None:
        raise OpgenError(f"Rust compiler {rustc!r} not found",
                         hint="install a Rust toolchain (rustup, or apt-get install rustc) or set RUSTC")
    verbose = subprocess.run([rustc, "-vV"], capture_output=True, text=True).stdout
    cpus = subprocess.run([rustc, "--print", "target-cpus"], capture_output=True, text=True).stdout
    native = re.search(r"currently (\S+?)\)", cpus)
    return {"rustc": rustc, "rustc_version": verbose.splitlines()[0] if verbose else "unknown",
            "rustc_verbose": verbose, "cpu": native.group(1) if native else "unknown",
            "ninja": cxx_toolchain()["ninja"]}


@dataclass
class RustBuildJob:
    """One cdylib from the generated crate root, the kernel module and the runtime."""

    name: str
    sources: dict[str, str]  # file name -> text; the runtime is added by rust_job
    threads: bool = False
    extra_flags: list[str] = field(default_factory=list)

    language = "rust"

    @property
    def flags(self) -> list[str]:
        return BASE_FLAGS + self.extra_flags

    @property
    def checked(self) -> bool:
        return "overflow-checks=on" in self.extra_flags

    @property
    def key(self) -> str:
        h = hashlib.sha256()
        h.update(json.dumps(["rust", toolchain()["rustc_verbose"], toolchain()["cpu"], self.flags],
                            sort_keys=True).encode())
        for name in sorted(self.sources):
            h.update(name.encode() + b"\0" + self.sources[name].encode() + b"\0")
        return h.hexdigest()[:32]


class RustBuildResult(BuildResult):
    def record(self) -> dict:
        tc = toolchain()
        return {"compiler": tc["rustc_version"], "flags": self.flags, "link_flags": [], "isa": tc["cpu"],
                "hardening": HARDENING_NOTE, "cache_key": self.job.key}


def rust_job(name: str, kernel: str, shim: str, *, threads: bool, extra_flags: list[str] | None = None) -> RustBuildJob:
    return RustBuildJob(name=name, sources={"kernel.rs": kernel, CRATE_ROOT: shim,
                                            RUST_RUNTIME.name: RUST_RUNTIME.read_text()},
                        threads=threads, extra_flags=list(extra_flags or []))


def checked_job(job: RustBuildJob) -> RustBuildJob:
    """The same candidate with debug assertions and overflow checks (its own cache key)."""
    return RustBuildJob(name=f"{job.name}-checked", sources=job.sources, threads=job.threads,
                        extra_flags=job.extra_flags + CHECKED_FLAGS)


def build_rust(jobs: list[RustBuildJob], *, parallel: int | None = None) -> list[RustBuildResult]:
    """Build every job (skipping cached ones) in one ninja run; results in job order."""
    started = time.monotonic()
    root = cache_root() / "build"
    root.mkdir(parents=True, exist_ok=True)
    by_key: dict[str, RustBuildJob] = {}
    for job in jobs:
        by_key.setdefault(job.key, job)

    def compile_keys(keys: list[str]) -> None:
        for key in keys:
            out_dir = root / key
            out_dir.mkdir(parents=True, exist_ok=True)
            for old in out_dir.glob("*.log"):
                old.unlink()
            for name, text in by_key[key].sources.items():
                path = out_dir / name
                if not path.exists() or path.read_text() != text:
                    path.write_text(text)
        run_ninja(root, _ninja_text([by_key[k] for k in keys], root), parallel)

    # The C++ builds' cache and key locks (opgen.build.claims): one builder per key, not per cache.
    built_here = build_unclaimed(root, by_key, lambda key: (root / key / "lib.so").exists(), compile_keys)
    elapsed = time.monotonic() - started
    results = []
    for job in jobs:
        out_dir = root / job.key
        lib = out_dir / "lib.so"
        log = out_dir / "lib.so.log"
        diagnostics = log.read_text(errors="replace") if log.exists() else ""
        built_now = job.key in built_here
        results.append(RustBuildResult(
            job=job, ok=lib.exists(), library=lib if lib.exists() else None,
            diagnostics=trim_diagnostics(diagnostics, out_dir), cached=not built_now,
            seconds=elapsed if built_now else 0.0, flags=job.flags, directory=out_dir,
        ))
    return results


def _ninja_text(jobs: list[RustBuildJob], root: Path) -> str:
    tc = toolchain()
    # Run in the build directory so diagnostics name kernel.rs, not a cache path; a failed
    # build leaves no library behind, and its diagnostics in lib.so.log.
    lines = [
        "rule rustc",
        f"  command = cd $dir && {tc['rustc']} $flags {CRATE_ROOT} -o lib.so.tmp 2> lib.so.log"
        " && mv lib.so.tmp lib.so || (rm -f lib.so.tmp; exit 1)",
        "  description = RUSTC $dir",
    ]
    for job in jobs:
        d = root / job.key
        inputs = " ".join(str(d / name) for name in sorted(job.sources))
        lines += [f"build {d / 'lib.so'}: rustc {inputs}", f"  dir = {d}", f"  flags = {' '.join(job.flags)}"]
    return "\n".join(lines) + "\n"


def trim_diagnostics(text: str, build_dir: Path) -> str:
    """rustc's output an LLM can use: warnings dropped when there are errors, build paths
    removed, bounded (whole diagnostics, errors first)."""
    text = text.replace(str(build_dir) + "/", "")
    blocks = re.split(r"\n(?=(?:error|warning)(?:\[\w+\])?: )", text.strip())
    errors = [b for b in blocks if b.startswith("error")]
    keep = errors or blocks
    out = ""
    for block in keep:
        if len(out) + len(block) > DIAGNOSTIC_LIMIT:
            out += f"\n... ({len(keep) - keep.index(block)} more diagnostics left out)"
            break
        out += ("\n\n" if out else "") + block.strip()
    return out.strip()


# What stands in for C++'s hardening flags in a Rust build, stated in the evidence: there is
# no stable -fstack-protector for rustc, and none is needed for the kernel module, which is
# safe Rust (every index is bounds-checked, no raw pointers); stack probes are on by default on
# x86_64 (a large stack frame touches every page, so it cannot jump the guard page); integer
# overflow panics in the checked build.
HARDENING_NOTE = ("safe Rust: bounds-checked indexing, no raw pointers in the kernel module (#[forbid(unsafe_code)]); "
                  "stack probes on by default on x86_64 (rustc's inline stack probes); overflow checks and debug "
                  "assertions in the checked build; no stack protector (not in stable rustc)")


@dataclass(frozen=True)
class LibraryInfo:
    """What a built library needs from outside, exports, runs at load time, keeps between
    calls and defines (its full symbol table: rustc does not strip a cdylib by default, and the
    audit refuses to judge a library that has no symbol table)."""

    imports: tuple[str, ...]  # undefined dynamic symbols, version suffix dropped
    exports: tuple[str, ...]  # defined dynamic function symbols
    load_time_sections: tuple[tuple[str, int], ...]  # (section, size) of non-empty init/fini sections
    ifuncs: tuple[str, ...]
    data: tuple[tuple[str, str], ...] = ()  # (section, demangled) of symbols in writable or TLS sections
    defined: tuple[str, ...] = ()  # demangled names of every function and data symbol it defines
    functions: tuple[tuple[str, str], ...] = ()  # (as linked, demangled) of every function it defines


def inspect_library(path: Path) -> LibraryInfo:
    """Dynamic imports and exports (``nm -D``), load-time sections and ifuncs (``readelf``)."""
    und = subprocess.run(["nm", "-D", "--undefined-only", str(path)], capture_output=True, text=True)
    if und.returncode != 0:
        raise OpgenError(f"nm could not read {Path(path).name}: {und.stderr.strip()}", hint="install binutils")
    defined = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True).stdout
    sections = subprocess.run(["readelf", "-S", "-W", str(path)], capture_output=True, text=True).stdout
    imports = sorted({line.split()[-1].split("@")[0] for line in und.stdout.splitlines() if line.strip()})
    exports, ifuncs = [], []
    for line in defined.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            if parts[1] in ("T", "W"):
                exports.append(parts[2])
            elif parts[1] == "i":
                ifuncs.append(parts[2])
    load_time = []
    for m in re.finditer(r"\]\s+(\.\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", sections):
        name, size = m.group(1), int(m.group(2), 16)
        if size and name in (".init_array", ".ctors", ".preinit_array", ".fini_array", ".dtors"):
            load_time.append((name, size))
    image = elf.read_elf(path)
    if not any(s.name == ".symtab" for s in image.sections):
        raise OpgenError(f"{Path(path).name} has no symbol table, so what it keeps and defines cannot be audited",
                         hint="build Rust kernels without -C strip=symbols (opgen.build.rust.BASE_FLAGS)")
    data, _ = elf.writable_data(image)
    defined = sorted({s.demangled for s in image.symbols
                      if s.section is not None and s.type in ("FUNC", "IFUNC", "OBJECT", "TLS")})
    return LibraryInfo(tuple(imports), tuple(sorted(exports)), tuple(load_time), tuple(ifuncs),
                       data=tuple(sorted({(d.section, d.demangled) for d in data if d.section not in _LOADER_SECTIONS})),
                       defined=tuple(defined),
                       functions=tuple(sorted({(s.name, s.demangled) for s in image.symbols
                                               if s.type in ("FUNC", "IFUNC") and s.section is not None})))


def added_system_calls(path: Path, info: LibraryInfo, baseline: LibraryInfo) -> tuple[tuple[str, str], ...]:
    """System-call instructions in the functions the library has beyond its baseline (std's own
    are the baseline's too; a kernel's functions are new)."""
    base = {shown for _, shown in baseline.functions}
    return elf.system_calls_in(path, frozenset(name for name, shown in info.functions if shown not in base))


# A linked library's writable sections that only the loader writes (tables of addresses and
# load-time hooks; those hooks are audited as load-time code). Every other writable section
# (.data, .bss, .tdata, .tbss, anything else) holds program data.
_LOADER_SECTIONS = (".got", ".got.plt", ".dynamic", ".init_array", ".fini_array", ".preinit_array", ".relro_padding",
                    ".tm_clone_table")
