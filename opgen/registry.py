"""The registry: verified kernels, their evidence and provenance, under ``generated/``.

Layout, one directory per (op, overload, target, variant), committed:

    generated/<target>/<op>/<overload>/entry.json     what the compiler and tools read
                                       kernel.cpp     the admitted source (LLM-written)
                                       shim.cpp       the C-ABI shim (opgen-generated)
                                       transcript.json every exchange that led to it
    generated/<target>/<op>/<overload>@<variant>/     another implementation of the same
                                                      overload (e.g. blocked, threaded)

The plain variant keeps the short path. An overload may hold several verified variants
per target; ``serve`` returns the one measured fastest on this kind of machine
(``opgen bench --select`` records the figures in each entry), or the plain one when
nothing has been measured.

An entry names each file with its sha256. Status is computed, never stored: an entry
whose spec hash or file hashes no longer match is *stale* and is not served. Writes
stage a complete directory and swap it in with one atomic rename, under a lock, so a
reader or a crash sees the old entry or the new one, never a mix. What a killed
admission leaves behind (a ``.<overload>.staged-*`` directory) is never served and is
removed by the next admission of that entry.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from filelock import FileLock

from opgen.errors import OpgenError
from opgen.spec.names import spec_named
from opgen.spec.model import PLAIN_VARIANT, TARGET_IDS, Spec

TARGET_DIRS = {"cpu-cpp": "cpp", "cpu-rust": "rust", "cuda": "cuda", "metal": "metal"}


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Entry:
    path: Path  # the entry directory
    data: dict[str, Any]

    @property
    def op(self) -> str:
        return self.data["op"]

    @property
    def overload(self) -> str:
        return self.data["overload"]

    @property
    def target(self) -> str:
        return self.data["target"]

    @property
    def variant(self) -> str:
        return self.data.get("variant", PLAIN_VARIANT)

    @property
    def benchmark(self) -> dict[str, Any] | None:
        """Figures from the last ``opgen bench --select`` (seconds per case, machine)."""
        return self.data.get("benchmark")

    @property
    def signature(self) -> dict[str, Any]:
        return self.data["signature"]

    def file(self, role: str) -> Path:
        return self.path / self.data["files"][role]["path"]

    def admitted_text(self, role: str) -> str:
        """A file's text, refused if it no longer has the sha256 it was admitted with (what is
        linked into a library must be exactly what was verified)."""
        path = self.file(role)
        text = path.read_text()
        if hashlib.sha256(text.encode()).hexdigest() != self.data["files"][role]["sha256"]:
            raise OpgenError(f"{path} changed since it was admitted", hint=f"run `opgen verify {self.op}`")
        return text

    def integrity_problems(self) -> list[str]:
        """Files missing or changed since admission (tampering, hand edits)."""
        problems = []
        for role, f in self.data["files"].items():
            p = self.path / f["path"]
            if not p.exists():
                problems.append(f"{role} file {p.name} is missing")
            elif sha256_file(p) != f["sha256"]:
                problems.append(f"{role} file {p.name} changed since admission (sha256 differs)")
        return problems

    def status(self, spec: Spec | None) -> tuple[str, list[str]]:
        """('verified' | 'stale', reasons)."""
        reasons = self.integrity_problems()
        if spec is None:
            reasons.append("its spec no longer exists")
        else:
            try:
                overload = spec.overload(self.overload)
            except OpgenError:
                reasons.append(f"overload {self.overload!r} is gone from the spec")
            else:
                if spec.overload_hash(overload) != self.data["spec"]["hash"]:
                    reasons.append("the spec changed since admission")
            if self.variant not in spec.variant_names():
                reasons.append(f"the spec no longer declares variant {self.variant!r}")
        return ("stale" if reasons else self.data.get("status", "verified")), reasons


class Registry:
    def __init__(self, root: Path):
        self.root = Path(root)

    def entry_dir(self, op: str, overload: str, target: str, variant: str = PLAIN_VARIANT) -> Path:
        name = overload if variant == PLAIN_VARIANT else f"{overload}@{variant}"
        return self.root / TARGET_DIRS[target] / op / name

    def lock(self) -> FileLock:
        self.root.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.root / ".registry.lock"), timeout=600)

    def entries(self) -> Iterator[Entry]:
        for target_dir in sorted(TARGET_DIRS.values()):
            base = self.root / target_dir
            for entry_json in sorted(base.glob("*/*/entry.json")):
                if entry_json.parent.name.startswith("."):
                    continue  # a staged write that never completed (its process was killed)
                yield Entry(entry_json.parent, json.loads(entry_json.read_text()))

    def get(self, op: str, overload: str, target: str, variant: str = PLAIN_VARIANT) -> Entry | None:
        p = self.entry_dir(op, overload, target, variant) / "entry.json"
        return Entry(p.parent, json.loads(p.read_text())) if p.exists() else None

    def variants(self, op: str, overload: str, target: str) -> list[Entry]:
        """Every variant entry of one overload on one target, plain first."""
        base = self.root / TARGET_DIRS[target] / op
        found = [e for e in (self._read(p) for p in [base / overload / "entry.json",
                                                      *sorted(base.glob(f"{overload}@*/entry.json"))]) if e]
        return [e for e in found if e.overload == overload]

    def serve(self, op: str, overload: str, target: str, spec: Spec | None) -> tuple[Entry | None, list[str]]:
        """The variant to use: the fastest verified one as measured here, else plain.

        Returns (entry or None, why-not reasons of the candidates when none is verified).
        """
        verified, reasons = [], []
        candidates = self.variants(op, overload, target)
        for e in candidates:
            status, why = e.status(spec)
            if status == "verified":
                verified.append(e)
            else:
                reasons += [f"{e.variant}: {r}" if len(candidates) > 1 else r for r in why]
        if not verified:
            return None, reasons
        return min(verified, key=_serving_rank), []

    def record_benchmark(self, entry: Entry, figures: dict[str, Any]) -> Entry:
        """Store measured figures in an entry (atomic replace of entry.json, under the lock).

        entry.json itself is not hashed: figures describe a machine, not the kernel.
        """
        with self.lock():
            path = entry.path / "entry.json"
            data = json.loads(path.read_text())
            data["benchmark"] = figures
            tmp = path.with_name(f".entry.json.{os.getpid()}")
            tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
            _fsync(tmp)
            os.replace(tmp, path)
        return Entry(entry.path, data)

    def record_device_run(self, entry: Entry, run: dict[str, Any]) -> Entry:
        """Store a run on a real device (``scripts/gpu_check.py``) in an entry; a passing run makes an
        emulated GPU entry ``verified``, with that device's evidence (atomic replace, under the lock).

        Kept under ``device_runs`` (newest last); ``status`` changes only on a pass. entry.json is
        not hashed: the run describes a device, not the kernel (whose sha256 the run names)."""
        with self.lock():
            path = entry.path / "entry.json"
            data = json.loads(path.read_text())
            data.setdefault("device_runs", []).append(run)
            if run.get("passed") and data.get("status") == "emulated":
                data["status"] = "verified"
                data["verified_on"] = run.get("device")
            tmp = path.with_name(f".entry.json.{os.getpid()}")
            tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
            _fsync(tmp)
            os.replace(tmp, path)
        return Entry(entry.path, data)

    @staticmethod
    def _read(p: Path) -> Entry | None:
        return Entry(p.parent, json.loads(p.read_text())) if p.exists() else None

    def admit(self, op: str, overload: str, target: str, files: dict[str, tuple[str, str]], data: dict[str, Any],
              variant: str = PLAIN_VARIANT) -> Entry:
        """Write an entry atomically. ``files`` maps role -> (file name, text)."""
        data = dict(data)
        data["variant"] = variant
        data["files"] = {
            role: {"path": name, "sha256": hashlib.sha256(text.encode()).hexdigest()} for role, (name, text) in files.items()
        }
        final = self.entry_dir(op, overload, target, variant)
        final.parent.mkdir(parents=True, exist_ok=True)
        with self.lock():
            _recover(final)  # the lock is held: any staged or old directory is a dead admission's
            staged = Path(tempfile.mkdtemp(prefix=f".{final.name}.staged-", dir=final.parent))
            os.chmod(staged, 0o755)  # mkdtemp's 0700 would hide the entry from other users
            for name, text in files.values():
                (staged / name).write_text(text)
            (staged / "entry.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
            for p in staged.iterdir():
                _fsync(p)
            _fsync(staged)  # the directory's own entries, before it becomes visible
            _swap_into_place(staged, final)
            _fsync(final.parent)  # make the swap itself durable
        return Entry(final, data)

    def lookup(self, op: str, arg_types: list[str], specs: dict[str, Spec], target: str = "cpu-cpp",
               overload: str | None = None) -> Entry:
        """The verified entry for ``op`` whose parameter types are ``arg_types`` (of the overload named
        ``overload`` where given: opgen.cast's overloads from one dtype take the same parameters).

        This is what the compiler's type propagation calls: the entry's signature
        carries the native return type.
        """
        want = [str(t) for t in arg_types]
        spec = spec_named(specs, op)  # numpy.matmul finds operator.matmul
        if spec is None:
            raise LookupError(f"no spec for {op}; add specs/{op.replace('.', '/')}.yaml")
        op = spec.op
        for o in spec.overloads:
            if [str(p.type) for p in o.sig.params] != want or (overload is not None and o.name != overload):
                continue
            if not self.variants(op, o.name, target):
                break
            entry, reasons = self.serve(op, o.name, target, spec)
            if entry is None:
                raise LookupError(f"{op} ({', '.join(want)}) for {target} is stale: {'; '.join(reasons)}; "
                                  f"run `opgen verify {op}` or `opgen synthesize {op}`")
            return entry
        raise LookupError(f"no verified {target} kernel for {op}({', '.join(want)}); "
                          f"run `opgen synthesize {op} --target {_cli_target(target)}`")


def _serving_rank(entry: Entry) -> tuple:
    """Sort key: measured on this machine's ISA first, then by its primary time; plain
    breaks ties and wins when nothing was measured (it is the simplest to trust)."""
    from opgen.build.cpp import toolchain  # lazily: reading the registry must not need a compiler

    bench = entry.benchmark or {}
    seconds = bench.get("primary_seconds")
    try:
        here = bench.get("isa") == toolchain()["isa"]
    except OpgenError:
        here = False
    if seconds is None:
        return (2, 0.0, entry.variant != PLAIN_VARIANT, entry.variant)
    return (0 if here else 1, float(seconds), entry.variant != PLAIN_VARIANT, entry.variant)


def _cli_target(target: str) -> str:
    return {v: k for k, v in TARGET_IDS.items()}.get(target, target)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _recover(final: Path) -> None:
    """Undo what a killed admission of ``final`` left behind (call with the lock held).

    A ``.staged-`` directory is a write that never became the entry: removed. An
    ``.old-`` directory exists only on the two-rename fallback; if the kill fell between
    the renames, ``final`` is missing and the old directory is the entry as it was
    before: it is put back.
    """
    olds = sorted(final.parent.glob(f".{final.name}.old-*"))
    if olds and not final.exists() and (olds[-1] / "entry.json").exists():
        os.rename(olds.pop(), final)
    for leftover in olds + sorted(final.parent.glob(f".{final.name}.staged-*")):
        shutil.rmtree(leftover, ignore_errors=True)


_RENAME_EXCHANGE = 2  # renameat2(2) flag (Linux)
_RENAME_SWAP = 2  # renamex_np(2) flag (macOS)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one atomic step, where the platform can."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if (renameat2 := getattr(libc, "renameat2", None)) is not None:
        AT_FDCWD = -100
        return renameat2(AT_FDCWD, bytes(a), AT_FDCWD, bytes(b), _RENAME_EXCHANGE) == 0
    if (renamex_np := getattr(libc, "renamex_np", None)) is not None:
        return renamex_np(bytes(a), bytes(b), _RENAME_SWAP) == 0
    return False


def _swap_into_place(staged: Path, final: Path) -> None:
    """Make ``staged`` appear at ``final`` in one step; remove what was there."""
    if not final.exists():
        os.rename(staged, final)
        return
    if _exchange(staged, final):
        shutil.rmtree(staged)  # staged now holds the old entry; a kill here leaves it for _recover
        return
    # Without an exchange (a filesystem that refuses it): two renames. A kill between
    # them leaves no entry at ``final`` until _recover, at the next admission, puts the
    # old one back; readers meanwhile find the entry missing, never a mix.
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    os.rename(final, old)
    os.rename(staged, final)
    shutil.rmtree(old)
