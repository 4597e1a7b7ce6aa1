"""Building candidates into shared libraries with ninja, cached by content hash.

A build is keyed by the sha256 of everything that determines its output (sources,
the runtime headers, compiler identity, flags). An unchanged candidate is never
rebuilt: its library is already in the cache. Many candidates build in one ninja
run, in parallel; compiler diagnostics are kept per candidate for the repair loop.

Libraries link with ``-z defs``: every symbol a kernel uses must resolve against the
libraries on the link line (libstdc++, libm, libc, libgcc; libgomp where threads are
allowed), so a kernel cannot leave a reference to be bound at load time to whatever
the host process has (libpython, numpy, a BLAS). ``inspect_object`` reads what the
compiled kernel object imports and whether it carries code that runs at load time;
the admission gate audits that against the policy. ``sanitizer_job`` is the same
candidate built with AddressSanitizer and UndefinedBehaviorSanitizer.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from opgen.build import elf
from opgen.build.claims import build_unclaimed
from opgen.build.elf import CodeFacts
from opgen.errors import OpgenError

RUNTIME = Path(__file__).resolve().parents[1] / "runtime"
# Hardening on every C++ build (normal, sanitizer, GPU execution layer, compiled libraries):
# a stack canary on every function with an array or an address-taken local, bounds-checked
# mem*/str* calls wherever the compiler knows the destination's size (FORTIFY level 3 also
# uses sizes known only at run time), and stack probes so a large or variable-length stack
# array cannot jump over the guard page. They turn a stack buffer that long inputs overflow
# into an abort at the overflow, in the sandbox and in a user's process alike, whether or not
# the sanitizer sample happened to hold a long input. -U first: some distributions' g++
# predefine _FORTIFY_SOURCE=2, and a redefinition would warn.
HARDENING_FLAGS = ["-fstack-protector-strong", "-U_FORTIFY_SOURCE", "-D_FORTIFY_SOURCE=3", "-fstack-clash-protection"]
BASE_FLAGS = ["-std=c++17", "-O3", "-march=native", "-fPIC", "-fvisibility=hidden", "-Wall", *HARDENING_FLAGS]
OPENMP_FLAGS = ["-fopenmp"]
LINK_FLAGS = ["-Wl,-z,defs"]  # no symbol left unresolved for the loader to bind to the host process
# For a threaded library that other programs load (pipelines, compiled functions): never
# unmapped by dlclose. libgomp's worker threads outlive the parallel region and wait, spinning
# first, inside libgomp; a host that unloads the library at exit (Node's koffi finalizes its
# libraries when the isolate is torn down) would unmap libgomp under them, and the next
# wake-up jumps into unmapped code: an intermittent SIGSEGV after every call had succeeded.
RESIDENT_LINK_FLAGS = ["-Wl,-z,nodelete"]
# Applied after BASE_FLAGS, so -O1 wins over -O3 (sanitizer reports are clearest at -O1).
# FORTIFY is dropped there (-U_FORTIFY_SOURCE): fortified calls go to glibc's __*_chk entry
# points, which ASan does not intercept, so ASan would stop checking exactly those copies; its
# own checks are stricter. The stack protector and stack-clash probes stay on.
SANITIZER_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-O1", "-g",
                   "-U_FORTIFY_SOURCE"]
# Sections whose contents run when a library is loaded or unloaded.
LOAD_TIME_SECTIONS = (".init_array", ".ctors", ".preinit_array", ".fini_array", ".dtors", ".init", ".fini")
DIAGNOSTIC_LIMIT = 4000  # characters of compiler output sent back to the LLM


def hardening_in_force(flags: list[str]) -> list[str]:
    """The hardening a build has, as the evidence states it (the last -D/-U of FORTIFY wins)."""
    fortify = [f for f in flags if "_FORTIFY_SOURCE" in f]
    return ([f for f in ("-fstack-protector-strong", "-fstack-clash-protection") if f in flags]
            + ([fortify[-1]] if fortify and fortify[-1].startswith("-D") else []))


def cache_root() -> Path:
    env = os.environ.get("OPGEN_CACHE_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".opgen-cache"


@functools.cache
def toolchain() -> dict[str, str]:
    """Compiler identity and the instruction set -march=native resolves to here."""
    cxx = os.environ.get("CXX", "g++")
    path = shutil.which(cxx)
    if path is None:
        raise OpgenError(f"C++ compiler {cxx!r} not found", hint="install g++ (apt-get install g++) or set CXX")
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    target = subprocess.run([cxx, "-march=native", "-Q", "--help=target"], capture_output=True, text=True).stdout
    march = re.search(r"-march=\s+(\S+)", target)
    ninja = shutil.which("ninja") or _python_ninja()
    return {"cxx": cxx, "cxx_version": version, "isa": march.group(1) if march else "unknown", "ninja": ninja}


def _python_ninja() -> str:
    try:
        import ninja  # the PyPI package ships a binary

        return str(Path(ninja.BIN_DIR) / "ninja")
    except ImportError:
        raise OpgenError("ninja not found", hint="pip install ninja (it is in opgen's dependencies)") from None


@dataclass
class BuildJob:
    """One shared library from a few sources (kernel + generated shim)."""

    name: str
    sources: dict[str, str]  # file name -> text
    threads: bool = False
    extra_flags: list[str] = field(default_factory=list)
    # Groups of sources linked as sealed units: each group's objects are partially linked
    # into one and every hidden symbol made local to it (COMDAT groups dropped, the
    # remaining global definitions made weak), so helper
    # names two LLM-written kernels both define never meet in one library (the compiler
    # links many kernels into one; an ODR clash there would silently pick one helper).
    sealed: tuple[tuple[str, ...], ...] = ()
    resident: bool = False  # loaded by other programs: link with RESIDENT_LINK_FLAGS
    # A Python extension module: the C API it calls resolves against the interpreter that imports
    # it, which no library on the link line provides, so it links without -z defs.
    extension: bool = False
    # Headers among the sources that every job of its kind includes first and that cost most of
    # its compile (the compiled-function runtime, the CPython entry's): compiled once per cache
    # as a precompiled header (``PrecompiledHeader``). A pure speed-up: the key, the flags the
    # evidence records and the object are those of the textual include.
    precompiled: tuple[str, ...] = ()

    @property
    def flags(self) -> list[str]:
        return BASE_FLAGS + (OPENMP_FLAGS if self.threads else []) + self.extra_flags

    @property
    def link_flags(self) -> list[str]:
        return self.flags + ([] if self.extension else LINK_FLAGS) + (RESIDENT_LINK_FLAGS if self.resident else [])

    @property
    def sanitized(self) -> bool:
        return any(f.startswith("-fsanitize=") for f in self.extra_flags)

    @property
    def key(self) -> str:
        h = hashlib.sha256()
        tc = toolchain()
        h.update(json.dumps([tc["cxx_version"], tc["isa"], self.flags, LINK_FLAGS], sort_keys=True).encode())
        for header in sorted(RUNTIME.glob("*.h*")):
            h.update(header.name.encode() + b"\0" + header.read_bytes())
        for name in sorted(self.sources):
            h.update(name.encode() + b"\0" + self.sources[name].encode() + b"\0")
        if self.sealed:
            h.update(json.dumps(self.sealed).encode())
        if self.resident:
            h.update(json.dumps(RESIDENT_LINK_FLAGS).encode())
        if self.extension:
            h.update(b"extension")
        return h.hexdigest()[:32]


@dataclass(frozen=True)
class SealedUnit:
    """One sealed group of a job, built once per cache and linked by every library that holds it.

    The compiler links the same admitted kernels into many libraries (every compiled function that
    adds two ints links operator.add's kernel and shim): built in each library's own directory, each
    library compiled them again. A unit's key covers what its objects depend on (the members' text,
    the job's headers, which a member may include, the compile flags, the toolchain and the runtime
    headers), so a kernel is compiled and sealed once per machine, whichever library needs it first."""

    members: tuple[str, ...]
    sources: tuple[tuple[str, str], ...]  # (name, text): the members and the job's headers
    flags: tuple[str, ...]

    @functools.cached_property
    def key(self) -> str:  # hashed once: build() asks for it per library and per log read
        h = hashlib.sha256(b"sealed-unit\0")
        tc = toolchain()
        h.update(json.dumps([tc["cxx_version"], tc["isa"], list(self.flags), list(self.members)]).encode())
        h.update(_runtime_headers_digest())
        for name, text in self.sources:
            h.update(name.encode() + b"\0" + text.encode() + b"\0")
        return h.hexdigest()[:32]


@functools.cache
def _runtime_headers_digest() -> bytes:
    h = hashlib.sha256()
    for header in sorted(RUNTIME.glob("*.h*")):
        h.update(header.name.encode() + b"\0" + header.read_bytes())
    return h.digest()


@dataclass(frozen=True)
class PrecompiledHeader:
    """A header compiled once per cache (``<key>/<name>.gch``) and put in front of every source of
    the jobs that name it (``-include <key>/<name>``), with the flags it was compiled with.

    Each compiled function's library and CPython entry include a runtime header of over a thousand
    lines and most of the standard library: about 1.3 s of each 2 s compile. GCC uses a .gch only
    where the compile's options match those it was made with, and otherwise (-Winvalid-pch says
    so in the log) reads the header's text, so a mismatch costs time, never a different object.
    The job's own ``#include`` of the header finds its include guard defined and adds nothing."""

    name: str
    text: str
    flags: tuple[str, ...]

    @functools.cached_property
    def key(self) -> str:
        h = hashlib.sha256(b"precompiled-header\0")
        tc = toolchain()
        h.update(json.dumps([tc["cxx_version"], tc["isa"], list(self.flags), self.name]).encode())
        h.update(_runtime_headers_digest())
        h.update(self.text.encode())
        return h.hexdigest()[:32]


def precompiled_headers(job: BuildJob) -> list[PrecompiledHeader]:
    return [PrecompiledHeader(name, job.sources[name], tuple(job.flags)) for name in job.precompiled]


def sealed_units(job: BuildJob) -> list[SealedUnit]:
    headers = sorted((n, t) for n, t in job.sources.items() if not n.endswith((".cpp", ".cc")))
    return [SealedUnit(members=tuple(group), sources=tuple(sorted([*headers, *((n, job.sources[n]) for n in group)])),
                       flags=tuple(job.flags)) for group in job.sealed]


def sanitizer_job(job: BuildJob) -> BuildJob:
    """The same candidate built with ASan + UBSan (its own cache key)."""
    return BuildJob(name=f"{job.name}-asan-ubsan", sources=job.sources, threads=job.threads,
                    extra_flags=job.extra_flags + SANITIZER_FLAGS)


@functools.cache
def sanitizer_runtime() -> str | None:
    """What a sanitizer build needs preloaded into an uninstrumented Python (an ``LD_PRELOAD``
    value), or None where this compiler has no libasan.

    libasan must come first. libstdc++ comes with it: ASan intercepts ``__cxa_throw`` and
    looks the real one up at startup, before any kernel has brought libstdc++ in; without it
    the first C++ exception a kernel throws (opgen::Error) stops the process with an ASan
    CHECK failure."""
    libs = []
    for name in ("libasan.so", "libstdc++.so"):
        out = subprocess.run([toolchain()["cxx"], f"-print-file-name={name}"], capture_output=True, text=True)
        path = Path(out.stdout.strip())
        if out.returncode != 0 or not path.is_absolute() or not path.exists():
            return None
        libs.append(str(path.resolve()))
    return ":".join(libs)


@dataclass
class BuildResult:
    job: BuildJob
    ok: bool
    library: Path | None
    diagnostics: str
    cached: bool
    seconds: float
    flags: list[str]
    directory: Path | None = None  # the build directory (objects, logs), also after a failed link

    def record(self) -> dict:
        tc = toolchain()
        return {"compiler": tc["cxx_version"], "flags": self.flags, "link_flags": self.job.link_flags[len(self.flags):],
                "isa": tc["isa"], "hardening": hardening_in_force(self.flags), "cache_key": self.job.key}

    def object(self, source: str = "kernel.cpp") -> Path | None:
        """The compiled object of one source (present once it compiled, even if the link failed)."""
        if self.directory is None:
            return None
        path = self.directory / f"{source}.o"
        return path if path.exists() else None


@dataclass(frozen=True)
class ObjectInfo:
    """What a compiled object needs from outside, what it would run at load time, what it keeps
    between calls and what its machine code does."""

    imports: tuple[tuple[str, str], ...]  # (symbol, demangled), undefined in the object
    load_time_sections: tuple[tuple[str, int], ...]  # (section, size) of non-empty init/fini sections
    ifuncs: tuple[str, ...]  # GNU indirect functions: their resolvers run at load time
    writable: tuple[tuple[str, str, str, str, int], ...] = ()  # (section, symbol, demangled, bind, size)
    anonymous_writable: tuple[tuple[str, int], ...] = ()  # (section, bytes no symbol covers)
    defines: frozenset[str] = frozenset()  # non-local symbols it defines (as linked)
    code: CodeFacts = CodeFacts((), (), ())  # system calls, stray executable bytes, data in code


def inspect_object(path: Path) -> ObjectInfo:
    """Imports (``nm``), load-time sections (``readelf -S``) and ifuncs of one object file, its
    writable data and defined symbols (``readelf -s``) and the facts of its machine code
    (``objdump -d``; see ``opgen.build.elf``).

    The tools run side by side; the answer is cached per file version."""
    stat = Path(path).stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key in _INSPECTED:
        return _INSPECTED[key]
    cmds = [["nm", "-P", "-p", str(path)], ["nm", "-P", "-p", "-C", str(path)], ["readelf", "-S", "-W", str(path)]]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    (raw, err), (dem, _), (sections, _) = [p.communicate() for p in procs]
    if procs[0].returncode != 0:
        raise OpgenError(f"nm could not read {Path(path).name}: {err.strip()}", hint="install binutils")
    raw_lines, dem_lines = raw.splitlines(), dem.splitlines()
    if len(dem_lines) != len(raw_lines):
        dem_lines = raw_lines
    undefined, ifuncs = [], []
    for line, shown in zip(raw_lines, dem_lines):
        parts = line.split()
        if len(parts) < 2:
            continue
        suffix = line[len(parts[0]):]  # " U" or " T 0000 0010": the same in both listings
        name = shown[: len(shown) - len(suffix)] if suffix and shown.endswith(suffix) else parts[0]
        if parts[1] in ("U", "w", "v"):
            undefined.append((parts[0], name))
        elif parts[1] == "i":
            ifuncs.append(name)
    load_time = []
    for m in re.finditer(r"\]\s+(\.\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", sections):
        name, size = m.group(1), int(m.group(2), 16)
        if size and any(name == s or name.startswith(s + ".") for s in LOAD_TIME_SECTIONS):
            load_time.append((name, size))
    image = elf.read_elf(path)
    data, anonymous = elf.writable_data(image)
    info = ObjectInfo(imports=tuple(undefined), load_time_sections=tuple(load_time), ifuncs=tuple(ifuncs),
                      writable=tuple((d.section, d.name, d.demangled, d.bind, d.size) for d in data),
                      anonymous_writable=anonymous,
                      defines=frozenset(s.name for s in image.symbols
                                        if s.section is not None and s.bind != "LOCAL" and s.type not in ("SECTION", "FILE")),
                      code=elf.machine_code(image, elf.disassemble(path)))
    _INSPECTED[key] = info
    return info


_INSPECTED: dict[tuple[str, int, int], ObjectInfo] = {}


def build(jobs: list[BuildJob], *, parallel: int | None = None) -> list[BuildResult]:
    """Build every job (skipping cached ones) in one ninja run; results in job order.

    Sealed groups are built first, each as a shared unit (``SealedUnit``) of its own key; then the
    libraries, which link the units' objects. A library whose unit did not compile is not linked:
    its result carries the unit's diagnostics."""
    started = time.monotonic()
    root = cache_root() / "build"
    root.mkdir(parents=True, exist_ok=True)
    by_key = {}
    for job in jobs:
        by_key.setdefault(job.key, job)  # an equal job builds once (ninja rejects two rules for one output)
    units_of = {key: sealed_units(job) for key, job in by_key.items()}
    # Units only for the libraries not built yet: a cached library needs none of its objects.
    units = {u.key: u for key, us in units_of.items() if not (root / key / "lib.so").exists() for u in us}

    def compile_units(keys: list[str]) -> None:
        for key in keys:
            out_dir = root / key
            out_dir.mkdir(parents=True, exist_ok=True)
            for name, text in units[key].sources:
                _write_if_changed(out_dir / name, text)
        run_ninja(root, _unit_ninja_text([(k, units[k]) for k in keys], root), parallel)

    def unit_built(key: str) -> bool:
        return (root / key / "sealed.o").exists()

    # Each key is compiled by one process at a time (opgen.build.claims); other keys build beside it.
    build_unclaimed(root, units, unit_built, compile_units)

    # Precompiled headers, for the libraries not built yet (a failed one only costs its users time).
    headers = {h.key: h for key, job in by_key.items() if not (root / key / "lib.so").exists()
               for h in precompiled_headers(job)}

    def compile_headers(keys: list[str]) -> None:
        for key in keys:
            (root / key).mkdir(parents=True, exist_ok=True)
            _write_if_changed(root / key / headers[key].name, headers[key].text)
        run_ninja(root, _header_ninja_text([(k, headers[k]) for k in keys], root), parallel)

    build_unclaimed(root, headers, lambda key: (root / key / f"{headers[key].name}.gch").exists(), compile_headers)
    linkable = {key for key in by_key
                if (root / key / "lib.so").exists() or all(unit_built(u.key) for u in units_of[key])}

    def compile_keys(keys: list[str]) -> None:
        pending = [by_key[k] for k in keys]
        for job in pending:
            out_dir = root / job.key
            out_dir.mkdir(parents=True, exist_ok=True)
            members = {name for group in job.sealed for name in group}
            for name, text in job.sources.items():
                if name not in members:
                    _write_if_changed(out_dir / name, text)
        run_ninja(root, _ninja_text([(job, units_of[job.key]) for job in pending], root), parallel)

    built_here = build_unclaimed(root, [k for k in by_key if k in linkable],
                                 lambda key: (root / key / "lib.so").exists(), compile_keys)
    elapsed = time.monotonic() - started
    results = []
    for job in jobs:
        out_dir = root / job.key
        lib = out_dir / "lib.so"
        logs = [(out_dir, p) for p in sorted(out_dir.glob("*.log"))]
        if not lib.exists():  # a unit's diagnostics say why it did not link
            logs += [(root / u.key, p) for u in units_of[job.key] for p in sorted((root / u.key).glob("*.log"))]
        diagnostics = "".join(trim_paths(p.read_text(errors="replace"), d) for d, p in logs if p.stat().st_size)
        results.append(BuildResult(
            job=job, ok=lib.exists(), library=lib if lib.exists() else None,
            diagnostics=trim_diagnostics(diagnostics, out_dir), cached=job.key not in built_here,
            seconds=elapsed if job.key in built_here else 0.0, flags=job.flags, directory=out_dir,
        ))
    return results


def run_ninja(root: Path, text: str, parallel: int | None = None) -> None:
    """Run one ninja file in ``root``. Its build log goes to a directory of its own (``builddir``):
    other processes run ninja in the same root at the same time, on other keys."""
    with tempfile.TemporaryDirectory(dir=root, prefix=".ninja-") as own:
        ninja_file = Path(own) / "build.ninja"
        ninja_file.write_text(f"builddir = {own}\n" + text)
        subprocess.run([toolchain()["ninja"], "-f", str(ninja_file), "-k", "0", "-j", str(parallel or os.cpu_count() or 2)],
                       cwd=root, capture_output=True, text=True)


_RULES = [
    "rule cxx",
    "  command = {cxx} $flags -I{runtime} -c $in -o $out 2> $out.log || (rm -f $out; exit 1)",
    "  description = CXX $in",
    "rule pch",
    "  command = {cxx} $flags -I{runtime} -x c++-header $in -o $out.tmp 2> $out.log && mv $out.tmp $out",
    "  description = PCH $out",
    "rule link",
    "  command = {cxx} $flags -shared $in -o $out.tmp 2> $out.log && mv $out.tmp $out",
    "  description = LINK $out",
    # Sealing drops the COMDAT groups, so what the groups deduplicated (the C++ library's
    # inline templates and their static data, default visibility, identical in every
    # unit) would become duplicate strong definitions: every global symbol the unit
    # defines is made weak. Undefined references stay strong, so -z defs still checks them.
    "rule seal",
    "  command = {cxx} -r -nostdlib $in -o $out.r 2> $out.log"
    " && nm -P -g --defined-only $out.r | cut -d' ' -f1 > $out.weak"
    " && objcopy --localize-hidden --remove-section=.group --weaken-symbols=$out.weak $out.r $out 2>> $out.log;"
    " rm -f $out.r $out.weak; test -f $out",
    "  description = SEAL $out",
]


def _rules() -> list[str]:
    # Each compile writes its diagnostics next to its object so the repair loop can
    # hand the LLM exactly its own errors; a failed compile leaves no object behind.
    return [line.format(cxx=toolchain()["cxx"], runtime=RUNTIME) for line in _RULES]


def _unit_ninja_text(units: list[tuple[str, SealedUnit]], root: Path) -> str:
    """Each unit's members compiled in the unit's directory and sealed into its ``sealed.o``."""
    lines = _rules()
    for key, unit in units:
        d = root / key
        members = []
        for name in unit.members:
            obj = d / (name + ".o")
            members.append(str(obj))
            lines += [f"build {obj}: cxx {d / name}", f"  flags = {' '.join(unit.flags)}"]
        lines.append(f"build {d / 'sealed.o'}: seal {' '.join(members)}")
    return "\n".join(lines) + "\n"


def _header_ninja_text(headers: list[tuple[str, PrecompiledHeader]], root: Path) -> str:
    lines = _rules()
    for key, header in headers:
        d = root / key
        lines += [f"build {d / header.name}.gch: pch {d / header.name}", f"  flags = {' '.join(header.flags)}"]
    return "\n".join(lines) + "\n"


def _ninja_text(jobs: list[tuple[BuildJob, list[SealedUnit]]], root: Path) -> str:
    """Each library: its own sources compiled in its directory, linked with its units' objects."""
    lines = _rules()
    for job, units in jobs:
        d = root / job.key
        flags = " ".join(job.flags)
        for header in precompiled_headers(job):
            if (root / header.key / f"{header.name}.gch").exists():
                flags += f" -Winvalid-pch -include {root / header.key / header.name}"
        members = {name for group in job.sealed for name in group}
        objs = []
        for name in sorted(job.sources):
            if not name.endswith((".cpp", ".cc")) or name in members:
                continue
            obj = d / (name + ".o")
            objs.append(str(obj))
            lines += [f"build {obj}: cxx {d / name}", f"  flags = {flags}"]
        objs += [str(root / unit.key / "sealed.o") for unit in units]
        lines += [f"build {d / 'lib.so'}: link {' '.join(objs)}", f"  flags = {' '.join(job.link_flags)}"]
    return "\n".join(lines) + "\n"


def trim_paths(text: str, build_dir: Path) -> str:
    return text.replace(str(build_dir) + "/", "")


def trim_diagnostics(text: str, build_dir: Path) -> str:
    """Compiler output an LLM can use: build paths removed, errors first, bounded."""
    text = trim_paths(text, build_dir)
    errors = [line for line in text.splitlines() if "error" in line]
    body = text if len(text) <= DIAGNOSTIC_LIMIT else "\n".join(errors)[:DIAGNOSTIC_LIMIT]
    return body.strip()


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
