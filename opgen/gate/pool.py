"""Gates in separate processes, so that concurrent synthesis (``opgen synthesize --jobs N``)
gates several candidates at once rather than one at a time behind the GIL.

Each gate is a fresh ``python -m opgen.gate.pool`` child in its own session: the arguments go in
on stdin and the ``GateResult`` comes back on stdout, both pickled. A fresh process per gate
costs an interpreter start (about a second, against a gate's tens of seconds) and buys what a
long-lived pool would not: no state carried from one candidate's gate into the next, and a
clean kill. ``stop()`` kills every running gate's whole process group (its builds and sandboxed
runs with it), which is what an interrupted run wants; a gate that was killed admits nothing.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
from typing import Any

from opgen.errors import Interrupted, OpgenError
from opgen.gate.admission import GateResult, GateSettings, run_gate
from opgen.spec.model import Overload, Spec


class GateProcessError(OpgenError):
    """A gate process died without a verdict (not a rejection: the gate itself failed)."""


class GatePool:
    def __init__(self, processes: int):
        if processes < 1:
            raise ValueError(f"a gate pool needs at least one process, not {processes}")
        self.processes = processes
        self._slots = threading.BoundedSemaphore(processes)
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    def run(self, spec: Spec, overload: Overload, source: str, settings: GateSettings = GateSettings(),
            target: str = "cpp") -> GateResult:
        """``run_gate``'s signature and result, in a child process (waits for a free slot first)."""
        payload = pickle.dumps((spec, overload, source, settings, target))
        with self._slots:
            if self._stopped.is_set():
                raise Interrupted(f"stopped before gating {spec.op} [{overload.name}]")
            child = subprocess.Popen([sys.executable, "-m", "opgen.gate.pool"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
            with self._lock:
                self._running.add(child)
            try:
                out, err = child.communicate(payload)
            finally:
                with self._lock:
                    self._running.discard(child)
        if self._stopped.is_set():
            raise Interrupted(f"the gate of {spec.op} [{overload.name}] was stopped")
        if child.returncode != 0 or not out:
            tail = err.decode(errors="replace").strip().splitlines()[-12:]
            raise GateProcessError(
                f"the gate process for {spec.op} [{overload.name}] exited with status {child.returncode} "
                f"without a verdict" + (":\n  " + "\n  ".join(tail) if tail else ""),
                hint="this is a failure of opgen, not of the candidate; run the same op alone "
                     "(opgen synthesize OP --jobs 1) to see it in full")
        return pickle.loads(out)

    def stop(self) -> None:
        """Kill every running gate (and whatever it started); later ``run`` calls raise Interrupted."""
        self._stopped.set()
        with self._lock:
            running = list(self._running)
        for child in running:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _serve() -> int:
    """The child: read one pickled gate call on stdin, write its pickled result on stdout."""
    spec, overload, source, settings, target = pickle.loads(sys.stdin.buffer.read())
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the gate or a library prints goes to stderr, not into the pickle
    result: Any = run_gate(spec, overload, source, settings, target=target)
    out.write(pickle.dumps(result))
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_serve())
