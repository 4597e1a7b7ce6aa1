"""The child process of a conformance run: every kernel call, each kernel in its sandboxed executor.

Run as ``python -m opgen.conformance.worker JOB.json FD`` by ``opgen.conformance.run``, with the
resource limits and environment of the gate's verification child (``opgen.verify.harness``). It
never loads a kernel itself: per kernel it forks the gate's executor (``opgen.verify.executor``:
Landlock, no capabilities, seccomp, then ``dlopen``), and calls it through the same protocol the
gate's runner uses (each tensor in a buffer with margins, the output prefilled with NaN, every
input buffer checked after the call).

A call that crashes the executor (a signal, abort(), a limit), hangs past the job's timeout (the
executor is killed), raises, or answers something it was not asked is reported as an error of
that call, and the next call of the same kernel gets a fresh executor. Results go to the file
descriptor ``FD`` as one JSON line per call (the parent reads them as they come, for progress
and as a watchdog); each output array to ``out-<id>.npy`` beside the job.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from opgen.spec.dtypes import numpy_dtype
from opgen.spec.model import load_spec
from opgen.verify.executor import Executor, ExecutorDied, Placed, ProtocolViolation, poison
from opgen.verify.harness import death_verdict


class _Timeout(BaseException):
    """The call ran past the job's timeout (raised by the interval timer's handler)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


class _Kernels:
    """The executor of the kernel being called: one at a time, started on first use and again after
    it died. (Only one lives at a time: a second one, forked while the first's pipes are open, would
    hold them too, could write into them and would keep the first from seeing its end of input.)"""

    def __init__(self, job: dict[str, Any], work: Path):
        self.job, self.work = job, work
        self.live: dict[str, Executor] = {}
        self.sigs: dict[str, Any] = {}
        self.started = 0

    def signature(self, key: str) -> Any:
        if key not in self.sigs:
            k = self.job["kernels"][key]
            self.sigs[key] = load_spec(Path(k["spec_path"])).overload(k["overload"]).sig
        return self.sigs[key]

    def get(self, key: str) -> Executor:
        if key in self.live:
            return self.live[key]
        self.close()
        k = self.job["kernels"][key]
        self.started += 1
        ex = Executor(k["library"], k["symbol"], self.signature(key), self.work / f"exec-{self.started}",
                      parent_netns=self.job.get("parent_netns"))
        ex.start()  # raises ExecutorDied if loading the library kills it
        if ex.load_error:
            ex.close()
            raise _LoadError(ex.load_error)
        self.live[key] = ex
        return ex

    def drop(self, key: str, kill: bool = False) -> None:
        ex = self.live.pop(key, None)
        if ex is not None and ex.pid:
            if kill:
                try:
                    os.kill(ex.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            ex.close()

    def close(self) -> None:
        for key in list(self.live):
            self.drop(key)


class _LoadError(Exception):
    pass


def _placed(spec: dict[str, Any], buffers: Any) -> Placed:
    buffer = np.ascontiguousarray(buffers[spec["buffer"]], dtype=np.uint8)
    return Placed(buffer, int(spec["offset"]), tuple(spec["shape"]), tuple(spec["strides"]), numpy_dtype(spec["dtype"]))


def _call(kernels: _Kernels, call: dict[str, Any], work: Path, timeout: float) -> dict[str, Any]:
    key = call["kernel"]
    with np.load(work / call["inputs"]) as buffers:
        values = [_placed(a, buffers) if "buffer" in a else [_placed(e, buffers) for e in a["list"]]
                  if "list" in a else a["value"] for a in call["args"]]
    placed = [(a["name"], v) for a, v in zip(call["args"], values) if isinstance(v, Placed)]
    placed += [(f"{a['name']}[{k}]", e) for a, v in zip(call["args"], values) if "list" in a
               for k, e in enumerate(v)]  # a list of tensors: every element checked as an input
    wanted = call.get("out")
    # one out array, or (a tuple result) a list of them, each prefilled with the dtype's sentinel
    outs = [poison(tuple(o["shape"]), numpy_dtype(o["dtype"])) for o in (wanted if isinstance(wanted, list) else [wanted])] \
        if wanted else []
    out = tuple(outs) if isinstance(wanted, list) else outs[0] if outs else None
    started = time.monotonic()
    ex = None
    try:
        ex = kernels.get(key)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            result = ex(values, out=out)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        kernels.drop(key, kill=True)
        return {"status": "error", "kind": "timeout", "message": f"the kernel ran past the {timeout:g} s timeout "
                "(killed)"}
    except _LoadError as exc:
        return {"status": "error", "kind": "load", "message": str(exc)}
    except ExecutorDied as died:
        pid = ex.pid if ex is not None else 0
        directory = ex.directory if ex is not None else work
        kernels.drop(key)
        kind, message, details = death_verdict(
            died.returncode, pid, cpu_seconds=int(kernels.job["cpu_seconds"]),
            file_size_bytes=int(kernels.job["file_size_bytes"]), output=directory / "output.log", logs=None,
            library=kernels.job["kernels"][key]["library"], on_input=True, killed_for=died.killed_for)
        return {"status": "error", "kind": kind, "message": message, "output_tail": details.get("output_tail", "")[-800:]}
    except ProtocolViolation as bad:
        kernels.drop(key, kill=True)
        return {"status": "error", "kind": "tampering", "message": f"the kernel's process answered {bad}"}
    except Exception as exc:  # noqa: BLE001 - the kernel raised (a declared error or an undeclared one)
        return {"status": "error", "kind": "raised", "message": f"{type(exc).__name__}: {exc}"[:1000]}
    written = [name for name, p in placed if p.after is None or not np.array_equal(p.after, p.buffer)]
    answer: dict[str, Any] = {"status": "ok", "seconds": round(time.monotonic() - started, 4), "inputs_written": written}
    if isinstance(out, tuple):  # a tuple result: out-<id>-<position>.npy
        for j, o in enumerate(out):
            np.save(work / f"out-{call['id']}-{j}.npy", o)
    elif out is not None:
        np.save(work / f"out-{call['id']}.npy", out)
    else:
        answer["value"] = result
    return answer


def main(argv: list[str]) -> int:
    job_path, fd = Path(argv[0]), int(argv[1])
    job = json.loads(job_path.read_text())
    work = job_path.parent
    signal.signal(signal.SIGALRM, _on_alarm)
    kernels = _Kernels(job, work)
    with os.fdopen(fd, "w", buffering=1) as results:
        try:
            for call in job["calls"]:
                try:
                    answer = _call(kernels, call, work, float(job["timeout"]))
                except Exception as exc:  # noqa: BLE001 - a bug here: the call is an error, the others go on
                    answer = {"status": "error", "kind": "worker",
                              "message": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-2000:]}
                results.write(json.dumps({"id": call["id"], **answer}, default=str) + "\n")
        finally:
            kernels.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
