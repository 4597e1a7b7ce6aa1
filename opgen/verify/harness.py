"""The parent side of verification: run a candidate in a limited child process.

The child (``opgen.verify.runner``) gets a private working directory, CPU-time,
address-space, file-size and open-file limits, no core dumps, and a wall-clock
timeout. Whatever the candidate does, this process survives and returns a verdict:
a pass with evidence, or a rejection with its reason and the triggering input.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 60
    wall_seconds: float = 120.0
    address_space_bytes: int = 8 << 30  # numpy/torch reserve a lot of virtual memory
    file_size_bytes: int = 64 << 20
    open_files: int = 256

    def as_dict(self) -> dict[str, Any]:
        return {
            "cpu_seconds": self.cpu_seconds,
            "wall_seconds": self.wall_seconds,
            "address_space_bytes": self.address_space_bytes,
            "file_size_bytes": self.file_size_bytes,
            "open_files": self.open_files,
        }


@dataclass
class Verdict:
    ok: bool
    kind: str  # "pass" or the rejection kind
    message: str
    examples: int = 0
    seed: int = 0
    worst_abs_error: float = 0.0
    worst_rel_error: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def as_feedback(self) -> str:
        """What the LLM is told: the rejection and the concrete counterexample."""
        lines = [f"Verification failed ({self.kind}): {self.message}"]
        args = self.details.get("args")
        if args:
            lines.append("Counterexample (after shrinking), argument by argument:")
            lines += [f"  {k}: {json.dumps(v)}" for k, v in args.items()]
        return "\n".join(lines)


def _apply_limits(limits: Limits) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes, limits.address_space_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setsid()  # its own process group, so a timeout kills everything it started


def verify_library(
    library: Path, symbol: str, spec_path: Path, overload: str, *, seed: int, max_examples: int,
    limits: Limits = Limits(),
) -> Verdict:
    """Run Hypothesis against one built kernel in a child process and read its verdict."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="opgen-verify-") as tmp:
        work = Path(tmp)
        job = {
            "library": str(Path(library).resolve()),
            "symbol": symbol,
            "spec_path": str(Path(spec_path).resolve()),
            "overload": overload,
            "seed": seed,
            "max_examples": max_examples,
        }
        (work / "job.json").write_text(json.dumps(job))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPGEN_"))}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")]))
        env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", str(os.cpu_count() or 1))
        proc = subprocess.Popen(
            [sys.executable, "-m", "opgen.verify.runner", str(work / "job.json")],
            cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            preexec_fn=lambda: _apply_limits(limits),
        )
        try:
            output, _ = proc.communicate(timeout=limits.wall_seconds)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            timed_out = True
        verdict = _read_verdict(work, proc.returncode, timed_out, output or b"", limits)
    verdict.seed = seed
    verdict.seconds = time.monotonic() - started
    return verdict


def _read_verdict(work: Path, returncode: int, timed_out: bool, output: bytes, limits: Limits) -> Verdict:
    progress = work / "progress.json"
    last = json.loads(progress.read_text()) if progress.exists() and progress.stat().st_size else None
    tail = output[-2000:].decode("utf-8", "replace")
    trigger = {"args": last["args"]} if last else {}
    if timed_out:
        return Verdict(False, "timeout", f"the kernel ran past the {limits.wall_seconds:g} s wall-clock limit "
                       "(an infinite loop, or far too slow)", details=trigger)
    if returncode < 0:
        sig = signal.Signals(-returncode).name
        why = {"SIGXCPU": f"it used more than {limits.cpu_seconds} s of CPU time",
               "SIGKILL": "it was killed (a resource limit)"}.get(sig, "the process crashed")
        return Verdict(False, "crash", f"the kernel process died with {sig}: {why}"
                       + (" on the input shown" if last else ""), details={**trigger, "output_tail": tail})
    result_path = work / "result.json"
    if not result_path.exists():
        return Verdict(False, "crash", f"the verification process exited with status {returncode} without a verdict "
                       "(the kernel called exit/abort, or ran out of memory)",
                       details={**trigger, "output_tail": tail})
    r = json.loads(result_path.read_text())
    if r["ok"]:
        return Verdict(True, "pass", f"{r['examples']} examples passed", examples=r["examples"],
                       worst_abs_error=r["worst_abs_error"], worst_rel_error=r["worst_rel_error"])
    return Verdict(False, r["kind"], r["message"], examples=r.get("examples", 0), details=r.get("details", {}))
