"""The parent side of verification: run a candidate in a sandboxed child process tree.

The child is the runner (``opgen.verify.runner``, trusted: examples, reference,
comparison, verdict), which forks the executor (``opgen.verify.executor``, the only
process that loads the candidate). Both get a private working directory, their own
session and process group (killed as a group), CPU-time, address-space, file-size,
open-file and process limits, no core dumps, a wall-clock timeout and a network
namespace of their own where the platform allows; the executor adds Landlock, drops
its capabilities and installs a seccomp filter before it loads the candidate
(``opgen.verify.sandbox``). Output goes to files under the file-size limit, never into
this process's memory. Whatever the candidate does, this process survives and returns
a verdict: a pass with evidence, or a rejection naming what happened (the signal and
what it means, a forbidden system call, an output flood, a sanitizer report,
tampering) and the input that triggered it.

A sanitizer run (``sanitizer_runtime``) loads an ASan+UBSan build of the candidate with
``libasan`` preloaded; it has no address-space limit (ASan reserves terabytes of
shadow memory); the runner caps the executor's resident memory instead.
"""

from __future__ import annotations

import json
import os
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from opgen.verify import sandbox

OUTPUT_TAIL = 2000  # bytes of the child's output kept for diagnostics
EXEC_DIR = "exec"  # the executor's own directory inside the run's: its output, sanitizer logs
SANITIZER_EXIT = 86  # exit status ASan/UBSan use for a report (distinct from Python's 0/1/2)
_PARENT_NETNS = sandbox.network_namespace()


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 180  # per executor process: a large honest threaded kernel on 150 drawn 4-d examples needed over 60 s
    wall_seconds: float = 300.0  # a safety net for a starved machine: the CPU limit is what bounds a loop
    address_space_bytes: int | None = 8 << 30  # numpy/torch reserve a lot of virtual memory; None: unlimited
    file_size_bytes: int = 16 << 20  # also the output cap: stdout+stderr go to one file
    open_files: int = 256
    processes: int = 4096  # RLIMIT_NPROC; counts every task of the user, threads included
    heap_bytes: int | None = None  # resident-memory limit the runner enforces on the executor (sanitizer runs)

    def for_sanitizer(self) -> "Limits":
        """The same limits for an ASan run: no RLIMIT_AS (shadow memory); resident memory capped instead."""
        return replace(self, address_space_bytes=None, heap_bytes=self.heap_bytes or self.address_space_bytes)

    def for_emulation(self) -> "Limits":
        """The limits for a GPU kernel on the CPU execution layer: four times the CPU time and twice
        the wall clock. The layer runs every GPU thread as a fiber and checks every barrier, so an
        honest kernel costs it many times what the same arithmetic costs natively."""
        return replace(self, cpu_seconds=self.cpu_seconds * 4, wall_seconds=self.wall_seconds * 2)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "cpu_seconds": self.cpu_seconds,
            "wall_seconds": self.wall_seconds,
            "address_space_bytes": self.address_space_bytes,
            "file_size_bytes": self.file_size_bytes,
            "output_bytes": self.file_size_bytes,
            "open_files": self.open_files,
            "processes": self.processes,
            "core_dumps": 0,
            "process_group": "own session, killed as a group",
        }
        if self.heap_bytes is not None:
            d["heap_bytes"] = self.heap_bytes
        if os.geteuid() == 0:
            d["processes_note"] = ("RLIMIT_NPROC does not bind root (uid 0), which this verifier runs as; "
                                   "the seccomp filter is what blocks process creation")
        return d


@dataclass
class Verdict:
    ok: bool
    kind: str  # "pass" or the rejection kind
    message: str
    examples: int = 0
    seed: int = 0
    worst_abs_error: float = 0.0
    worst_rel_error: float = 0.0
    worst_tolerance_used: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    sandbox: dict[str, Any] = field(default_factory=dict)  # what was in force (seccomp, network)

    def as_feedback(self) -> str:
        """What the LLM is told: the rejection and the concrete counterexample."""
        lines = [f"Verification failed ({self.kind}): {self.message}"]
        report = self.details.get("report")
        if report:
            lines.append("Sanitizer report (first lines):")
            lines += [f"  {line}" for line in report.splitlines()]
        args = self.details.get("args")
        if args:
            lines.append("Counterexample (after shrinking), argument by argument:")
            lines += [f"  {k}: {json.dumps(v)}" for k, v in args.items()]
        return "\n".join(lines)


def apply_limits(limits: Limits) -> None:
    """Between fork and exec, in the child: network namespace first, then the limits."""
    sandbox.enter_network_namespace()
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    if limits.address_space_bytes is not None:
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes, limits.address_space_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def malloc_perturb(seed: int) -> int:
    """The byte glibc fills freed memory with (and new allocations with its complement) in a run of
    ``seed``: never 0 (that turns the perturbation off), different from run to run, the same for
    the same seed (so the runs of one seed at other thread counts differ only in the threads)."""
    return 1 + (seed * 0x9E3779B1 >> 7) % 255


def child_env(work: Path, limits: Limits, sanitizer_runtime: str | None, threads: int | None = None,
               perturb: int | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "OPGEN_", "ASAN_", "UBSAN_", "LSAN_")) and k not in ("LD_PRELOAD", "GLIBC_TUNABLES")}
    if perturb:
        # Heap state: a stateless kernel could still find its previous call's data in a chunk
        # malloc hands it again (glibc reuses a freed chunk of the same size at once). With the
        # perturbation every free overwrites the chunk and every malloc fills it, so no call sees
        # another's leftovers. Read by ld.so when the runner starts; the forked executor inherits
        # the setting (and removes the variable before the candidate loads). An ASan run's
        # allocator ignores it (ASan quarantines freed chunks instead). The thread cache must go too:
        # glibc's tcache hands back a chunk of the same size without perturbing it (measured: a
        # 1000-byte chunk kept its tag across free and malloc with perturb alone).
        # Chunks up to 32 MiB (glibc's largest mmap threshold) come from the heap, which is kept
        # (trim threshold 1 GiB) rather than mapped afresh and unmapped on every call: the
        # perturbation still fills each one, but a large example no longer page-faults every copy
        # of its buffers in (measured: the 150 examples of a matmul f64 seed whose inputs reach
        # 50 MB took 16.5 s before, 11.4 s after; the difference was system time).
        env["GLIBC_TUNABLES"] = ":".join([
            f"glibc.malloc.perturb={perturb}", "glibc.malloc.tcache_count=0",
            f"glibc.malloc.mmap_threshold={32 << 20}", f"glibc.malloc.trim_threshold={1 << 30}"])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = str(threads) if threads else env.get("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    # The runner forks the executor after importing NumPy: no BLAS thread pool may exist by then
    # (the references are not what is timed; the kernel's OpenMP uses OMP_NUM_THREADS).
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        env[name] = "1"
    # OpenMP's idle workers spin by default, and spinning counts as CPU time: on a loaded machine
    # (or with the thread-count stage's oversubscription) an honest threaded kernel would spend
    # its CPU limit waiting. Passive waiting changes no result, only who burns the time.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env.pop("PYTHONFAULTHANDLER", None)  # a crash is reported by its signal, not by Python's handler
    if sanitizer_runtime:
        env["LD_PRELOAD"] = sanitizer_runtime
        env.update(sanitizer_options(work, limits))
    return env


def sanitizer_options(work: Path, limits: Limits) -> dict[str, str]:
    """ASAN_OPTIONS and UBSAN_OPTIONS for a sanitizer run in ``work``.

    Reports go to stderr, which is the executor's output file: it may not open a file for
    writing (a log_path file would be opened at report time, inside the seccomp filter). No
    symbolizer: it would be a new process; the runner maps the kernel's frames to source
    lines with addr2line instead. No leak checker: its stop-the-world uses ptrace and a new
    process, and leaks are not what this run is for."""
    asan = ["detect_leaks=0", "halt_on_error=1", "abort_on_error=0", f"exitcode={SANITIZER_EXIT}",
            "symbolize=0", "allocator_may_return_null=0", "handle_abort=0"]
    if limits.heap_bytes:  # with no RLIMIT_AS: one allocation may not exceed it (the runner watches the total)
        asan.append(f"max_allocation_size_mb={max(limits.heap_bytes >> 20, 1)}")
    ubsan = ["halt_on_error=1", f"exitcode={SANITIZER_EXIT}", "print_stacktrace=1", "symbolize=0",
             "report_error_type=1"]
    return {"ASAN_OPTIONS": ":".join(asan), "UBSAN_OPTIONS": ":".join(ubsan)}


def verify_library(
    library: Path, symbol: str, spec_path: Path, overload: str, *, seed: int, max_examples: int,
    limits: Limits = Limits(), sanitizer_runtime: str | None = None, cancel: threading.Event | None = None,
    mode: str = "hypothesis", options: dict[str, Any] | None = None, threads: int | None = None,
) -> Verdict:
    """Run Hypothesis against one built kernel in a sandboxed child process and read its verdict.

    ``sanitizer_runtime``: what to preload (``build.sanitizer_runtime()``: libasan, libstdc++); the
    library is then an ASan+UBSan build.
    ``cancel``: set it to stop the run early (its verdict is then kind "cancelled").
    ``mode``: "hypothesis" (examples drawn by Hypothesis, shrunk on failure) or "scale" (the
    large, model-shaped cases of ``opgen.verify.scale`` for this seed; ``options`` carries the
    budget).
    ``threads``: the kernel's thread count (``OMP_NUM_THREADS``, which OpenMP and opgen's Rust
    runtime honour); None: the machine's cores.
    """
    started = time.monotonic()
    if sanitizer_runtime:
        limits = limits.for_sanitizer()
    with tempfile.TemporaryDirectory(prefix="opgen-verify-") as tmp:
        work = Path(tmp)
        job = {
            "library": str(Path(library).resolve()),
            "symbol": symbol,
            "spec_path": str(Path(spec_path).resolve()),
            "overload": overload,
            "seed": seed,
            "max_examples": max_examples,
            "parent_netns": _PARENT_NETNS,
            "sanitizer": bool(sanitizer_runtime),
            "cpu_seconds": limits.cpu_seconds,
            "file_size_bytes": limits.file_size_bytes,
            "heap_bytes": limits.heap_bytes,
            "mode": mode,
            "options": options or {},
        }
        (work / "job.json").write_text(json.dumps(job))
        (work / EXEC_DIR).mkdir()
        with open(work / "output.log", "wb") as output:
            proc = subprocess.Popen(
                [sys.executable, "-m", "opgen.verify.runner", str(work / "job.json")],
                cwd=work, env=child_env(work, limits, sanitizer_runtime, threads, malloc_perturb(seed)),
                stdin=subprocess.DEVNULL,
                stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=lambda: apply_limits(limits),
            )
        state = _wait(proc, started + limits.wall_seconds, cancel)
        verdict = _read_verdict(work, proc.pid, proc.returncode, state, limits, library, bool(sanitizer_runtime))
    verdict.seed = seed
    verdict.seconds = time.monotonic() - started
    return verdict


def _wait(proc: subprocess.Popen, deadline: float, cancel: threading.Event | None) -> str:
    """Wait for the child: "exited", "timeout" or "cancelled". The whole group is killed either way."""
    try:
        pidfd = os.pidfd_open(proc.pid)
        poller = select.poll()  # poll, not select: pytest and friends may hold more than 1024 fds
        poller.register(pidfd, select.POLLIN)
    except (AttributeError, OSError):
        pidfd = None
    state = "exited"
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                state = "timeout"
                break
            if cancel is not None and cancel.is_set():
                state = "cancelled"
                break
            step = min(remaining, 0.05) if cancel is not None else remaining
            if pidfd is not None:
                if poller.poll(max(1, int(step * 1000))):
                    break  # exited (still a zombie, so its process group cannot be reused yet)
            else:
                try:
                    proc.wait(timeout=step)
                    break
                except subprocess.TimeoutExpired:
                    pass
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind, and itself on a timeout
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        if pidfd is not None:
            os.close(pidfd)
    return state


def _tail(path: Path, n: int = OUTPUT_TAIL) -> str:
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _read_verdict(work: Path, pid: int, returncode: int, state: str, limits: Limits, library: Path,
                  sanitizer: bool) -> Verdict:
    progress = work / "progress.json"
    try:
        last = json.loads(progress.read_text()) if progress.exists() and progress.stat().st_size else None
    except (OSError, ValueError):
        last = None
    trigger = {"args": last["args"]} if last else {}

    def rejected(kind: str, message: str, **details: Any) -> Verdict:
        return Verdict(False, kind, message, details={**trigger, **details},
                       sandbox={"note": "the runner ended without a verdict; the executor's sandbox is unknown"})

    if state == "cancelled":
        return rejected("cancelled", "the run was stopped because another stage already rejected the kernel")
    if state == "timeout":
        return rejected("timeout", f"the kernel ran past the {limits.wall_seconds:g} s wall-clock limit "
                        "(an infinite loop, or far too slow)")
    result_path = work / "result.json"
    if returncode == 0 and result_path.exists():  # the runner's verdict (the executor cannot write here)
        r = json.loads(result_path.read_text())
        box = summarize_sandbox(r.get("sandbox"))
        if r["ok"]:
            return Verdict(True, "pass", f"{r['examples']} examples passed", examples=r["examples"],
                           worst_abs_error=r["worst_abs_error"], worst_rel_error=r["worst_rel_error"],
                           worst_tolerance_used=r.get("worst_tolerance_used", 0.0), sandbox=box)
        return Verdict(False, r["kind"], r["message"], examples=r.get("examples", 0), details=r.get("details", {}),
                       sandbox=box)
    # The runner itself ended without a verdict: say how, in the same words as for the executor.
    kind, message, details = death_verdict(
        returncode, pid, cpu_seconds=limits.cpu_seconds, file_size_bytes=limits.file_size_bytes,
        output=work / "output.log", logs=work / EXEC_DIR if sanitizer else None, library=library,
        on_input=bool(last))
    return rejected(kind, message, **details)


def death_verdict(returncode: int, pid: int, *, cpu_seconds: int, file_size_bytes: int, output: Path,
                  logs: Path | None, library: Path | str, on_input: bool, killed_for: str | None = None,
                  ) -> tuple[str, str, dict[str, Any]]:
    """(kind, message, details) for a process that ended without a verdict: a limit that killed
    it, a sanitizer report (``logs``: where a sanitizer run keeps them), an output flood, a
    signal (named, with what it means), or an exit."""
    shown = " on the input shown" if on_input else ""
    out_size = output.stat().st_size if output.exists() else 0
    tail = _tail(output)
    if killed_for:
        return "crash", f"the kernel process was killed: {killed_for} (a memory bomb){shown}", {"output_tail": tail}
    if logs is not None and (report := sanitizer_report(logs, output, Path(library))):
        return "sanitizer", f"{report['headline']}{shown}", {"report": report["text"], "output_tail": tail}
    if returncode == -signal.SIGXFSZ or out_size >= file_size_bytes:
        what = (f"flooded its output past {file_size_bytes} bytes (kernels must not print)"
                if out_size >= file_size_bytes else f"wrote a file past the {file_size_bytes}-byte file-size limit")
        how = " with SIGXFSZ" if returncode == -signal.SIGXFSZ else ""
        return "output_flood", f"the kernel {what}; the file-size limit stopped it{how}{shown}", {
            "output_tail": tail[-400:]}
    if returncode < 0:
        sig = signal.Signals(-returncode).name
        if sig == "SIGXCPU":
            why = f"it used more than {cpu_seconds} s of CPU time"
        else:
            why = sandbox.SIGNAL_MEANING.get(sig, "the process was killed by a signal")
        if sig == "SIGSYS":
            call = forbidden_call(pid)
            return "forbidden_syscall", (f"the kernel process died with SIGSYS: {why}"
                                         + (f" (it called {call})" if call else "") + shown), {"output_tail": tail}
        return "crash", f"the kernel process died with {sig}: {why}{shown}", {"output_tail": tail}
    return "crash", (f"the verification process exited with status {returncode} without a verdict "
                     "(the kernel called exit/abort, or ran out of memory)"), {"output_tail": tail}


def summarize_sandbox(state: Any) -> dict[str, Any]:
    """What was in force in the executor, short enough for the evidence (sandbox.DENIED has the table)."""
    if not isinstance(state, dict) or not state:
        return {"note": "the executor did not report its sandbox"}
    seccomp = state.get("seccomp", {})
    return {**state, "seccomp": {k: v for k, v in seccomp.items() if k != "denied"}
            | ({"denied_groups": sorted(seccomp["denied"])} if "denied" in seccomp else {})}


def forbidden_call(pid: int) -> str | None:
    """Which system call the filter killed, from the kernel's audit record in /dev/kmsg (best effort:
    it needs a readable kernel log, the same pid namespace, and a record not dropped by rate limiting)."""
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    found = None
    try:
        while True:
            try:
                record = os.read(fd, 8192).decode("utf-8", "replace")
            except BlockingIOError:
                break
            except OSError:  # EPIPE: a record was overwritten while reading; keep going
                continue
            if not record:
                break
            if "type=1326" in record and f" pid={pid} " in record and (m := re.search(r"\bsyscall=(\d+)", record)):
                found = int(m.group(1))
    finally:
        os.close(fd)
    if found is None:
        return None
    names = {nr: name for name, nr in sandbox.NR.items()}
    name = names.get(found, f"system call {found}")
    return "clone without CLONE_THREAD (a new process)" if name == "clone" else name


_FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ +\((?P<module>[^()+]+)\+(?P<offset>0x[0-9a-f]+)\)")


_REPORT_START = re.compile(r"^.*(?:AddressSanitizer: |UndefinedBehaviorSanitizer: |runtime error: ).*$", re.M)


def sanitizer_report(work: Path, output: Path, library: Path) -> dict[str, str] | None:
    """The first lines of an ASan/UBSan report, if the run produced one.

    Sanitizer log files in ``work`` (if a log_path was configured) and otherwise the output file
    (their stderr), there only around the first report line."""
    texts = [p.read_text(errors="replace") for p in sorted(work.glob("sanitizer*")) if p.is_file()]
    text = "\n".join(t for t in texts if t.strip())
    if not text:
        try:
            with open(output, "rb") as f:
                head = f.read(1 << 20).decode("utf-8", "replace")  # bounded: the file-size limit caps it anyway
        except OSError:
            head = ""
        m = _REPORT_START.search(head)
        text = head[m.start(): m.start() + 8000] if m else ""
    if not text.strip():
        return None
    lines = [re.sub(r"^==\d+==", "", line).rstrip() for line in text.splitlines()]
    lines = [line for line in lines if line.strip() and not set(line.strip()) <= {"="}]
    build_dir = str(Path(library).resolve().parent) + "/"
    headline, keep = "", []
    for line in lines:
        line = line.replace(build_dir, "")
        if not headline and _REPORT_START.match(line):
            headline = _headline(line)
            keep.append(line.strip())
        elif re.match(r"\s*(READ|WRITE) of size", line) or "is located" in line or line.startswith("SUMMARY:"):
            keep.append(line.strip())
    access = next((m.group(1) for line in keep if (m := re.match(r"((?:READ|WRITE) of size \d+)", line))), None)
    if access and headline.startswith("AddressSanitizer"):  # "... heap-buffer-overflow, READ of size 8 (...)"
        head, _, why = headline.partition(" (")
        headline = f"{head}, {access}" + (f" ({why}" if why else "")
    where = _first_kernel_frame(lines, Path(library))
    if where:
        keep.insert(1, f"first frame in the kernel: {where}")
    if not headline:
        headline = "the sanitizer build reported an error"
        keep = [line.strip() for line in lines[:6]]
    return {"headline": headline, "text": "\n".join(keep[:8])}


def _headline(line: str) -> str:
    line = line.strip()
    if "AddressSanitizer" in line:  # "ERROR: AddressSanitizer: heap-buffer-overflow on address 0x... at pc ..."
        if "hard rss limit exhausted" in line:  # "AddressSanitizer: hard rss limit exhausted (8192Mb vs 8200Mb)"
            return "AddressSanitizer: " + line.split("AddressSanitizer: ", 1)[-1] + " (a memory bomb: too much memory)"
        m = re.search(r"AddressSanitizer: ([\w-]+)", line)
        return f"AddressSanitizer: {m.group(1) if m else 'error'}" + (
            " (an out-of-bounds or invalid memory access)" if m and "overflow" in m.group(1) else "")
    m = re.search(r"runtime error: (.*)", line)  # "kernel.cpp:12:9: runtime error: signed integer overflow: ..."
    return f"UndefinedBehaviorSanitizer: {line}" if not m else (
        f"UndefinedBehaviorSanitizer: {m.group(1)} at {line.split(': runtime error')[0]}")


def _first_kernel_frame(lines: list[str], library: Path) -> str | None:
    """file:line of the first stack frame inside the kernel library (addr2line on its debug info)."""
    lib = str(Path(library).resolve())
    for line in lines:
        m = _FRAME.search(line)
        if m and os.path.realpath(m.group("module")) == lib:
            try:
                out = subprocess.run(["addr2line", "-f", "-C", "-e", lib, m.group("offset")],
                                     capture_output=True, text=True, timeout=10).stdout.split("\n")
            except (OSError, subprocess.TimeoutExpired):
                return None
            if len(out) >= 2 and out[1] and not out[1].startswith("??"):
                return f"{out[0]} at {Path(out[1].split(' ')[0]).name}"
            return None
    return None
