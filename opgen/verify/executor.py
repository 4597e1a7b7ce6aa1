"""The only process that runs candidate code: a sandboxed executor forked by the runner.

A candidate is arbitrary native code. Whatever process loads it can be made to do
anything that process may do: write files, forge a verdict, patch the comparison
code in its own memory. So the verifier is split in two:

* the **runner** (``opgen.verify.runner``, trusted) draws the examples, computes the
  reference, compares, and writes the verdict;
* the **executor** (this module, untrusted) is forked from the runner once its imports
  are done, confines itself (resource limits inherited from the runner; capabilities
  dropped; Landlock: writes only in its own directory; seccomp: no processes, network,
  signals to others or limit changes; see ``opgen.verify.sandbox``), and only then
  ``dlopen``s the candidate. It answers call requests over a pipe: arguments in, the
  result, the output array and the inputs as they are after the call back out.

The runner parses every reply strictly (sizes, dtypes, error kinds); a reply it did
not ask for is a rejection, never a pass. What the executor can forge is only its
answer, and answers are what the runner checks. If it dies, the runner knows the
input in flight and how it died (``waitpid``), and says so.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import struct
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from ..ffi import Kernel, KernelError
from ..nativetypes import Signature
from . import sandbox

MAX_HEADER = 64 << 20  # bytes: a reply's JSON part (a string result can be long)
_LEN = struct.Struct("<Q")
ERRORS = {"OverflowError": OverflowError, "ZeroDivisionError": ZeroDivisionError, "ValueError": ValueError, "IndexError": IndexError}


class ExecutorDied(BaseException):
    """The executor process ended during a call (a BaseException: Hypothesis must not shrink it)."""

    def __init__(self, returncode: int, killed_for: str | None = None):
        super().__init__(f"executor ended with {returncode}")
        self.returncode = returncode
        self.killed_for = killed_for  # set when the runner killed it (resident-memory limit)


class ProtocolViolation(BaseException):
    """The executor answered something that was not asked for: the candidate tampered with it."""


def poison(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    out = np.empty(shape, dtype=dtype)
    if dtype.kind == "f":
        out.fill(np.nan)
    elif dtype.kind == "b":
        out.fill(True)
    else:
        out.fill(np.iinfo(dtype).max)
    return out


# --- framing --------------------------------------------------------------------------

def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def send(fd: int, header: dict[str, Any], blobs: list[bytes] = ()) -> None:
    header = {**header, "blobs": [len(b) for b in blobs]}
    raw = json.dumps(header).encode()
    _write_all(fd, b"".join([_LEN.pack(len(raw)), raw, *blobs]))  # one write for a small frame


class _Reader:
    """Reads frames, buffered; while waiting it wakes every ``tick`` seconds to run ``watch``."""

    def __init__(self, fd: int, watch=None, tick: float = 0.05):
        self.fd, self.watch, self.tick = fd, watch, tick
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN | select.POLLHUP)
        self.buffer = bytearray()

    def exact(self, n: int) -> bytes | None:
        while len(self.buffer) < n:
            if self.watch is not None and not self.poller.poll(int(self.tick * 1000)):
                self.watch()
                continue
            chunk = os.read(self.fd, max(n - len(self.buffer), 1 << 16))
            if not chunk:
                return None  # EOF: the other side is gone
            self.buffer += chunk
        out = bytes(self.buffer[:n])
        del self.buffer[:n]
        return out

    def frame(self, max_blob: int | None = None) -> tuple[dict[str, Any], list[bytes]] | None:
        head = self.exact(_LEN.size)
        if head is None:
            return None
        (size,) = _LEN.unpack(head)
        if size > MAX_HEADER:
            raise ProtocolViolation(f"a reply header of {size} bytes")
        raw = self.exact(size)
        if raw is None:
            return None
        try:
            header = json.loads(raw)
            lengths = [int(n) for n in header["blobs"]]
        except Exception as exc:  # noqa: BLE001 - anything unparsable is tampering
            raise ProtocolViolation(f"an unreadable reply ({type(exc).__name__})") from None
        if not isinstance(header, dict) or any(n < 0 or (max_blob is not None and n > max_blob) for n in lengths):
            raise ProtocolViolation("a reply with impossible sizes")
        blobs = []
        for n in lengths:
            b = self.exact(n)
            if b is None:
                return None
            blobs.append(b)
        return header, blobs


# --- the runner's side --------------------------------------------------------------------

class Executor:
    """A forked, sandboxed process holding the candidate; called like ``ffi.Kernel``."""

    def __init__(self, library: str, symbol: str, sig: Signature, directory: Path, *, parent_netns: str | None,
                 heap_bytes: int | None = None):
        self.library, self.symbol, self.sig, self.directory = library, symbol, sig, directory
        self.parent_netns, self.heap_bytes = parent_netns, heap_bytes
        self.killed_for: str | None = None
        self.returncode: int | None = None
        self.sandbox: dict[str, Any] = {}
        self.load_error: str | None = None
        self.pid = 0

    def start(self) -> "Executor":
        """Fork the executor and wait until it has loaded the candidate (raises ExecutorDied)."""
        self.directory.mkdir(exist_ok=True)
        sandbox.make_undumpable()
        req_r, self.req_w = os.pipe()
        self.resp_r, resp_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the executor: never returns
            try:
                os.close(self.req_w)
                os.close(self.resp_r)
                _serve(req_r, resp_w, self.library, self.symbol, self.sig, self.directory, self.parent_netns)
            except BaseException:  # a bug here, not the candidate's doing: leave a trace in its output
                traceback.print_exc()
                sys.stderr.flush()
            finally:
                os._exit(70)
        self.pid = pid
        os.close(req_r)
        os.close(resp_w)
        self.reader = _Reader(self.resp_r, watch=self._watch if self.heap_bytes else None)
        # First what the sandbox is (sent before the candidate was loaded, so it cannot be forged),
        # then whether the candidate loaded.
        for expected in ("sandboxed", "loaded"):
            reply = self.reader.frame(max_blob=0)
            if reply is None:
                raise ExecutorDied(self._reap(), self.killed_for)
            header, _ = reply
            if expected == "sandboxed":
                if header.get("status") != "sandboxed" or not isinstance(header.get("sandbox"), dict):
                    raise ProtocolViolation("no sandbox report")
                self.sandbox = header["sandbox"]
            elif header.get("status") == "load_error":
                self.load_error = str(header.get("message", "the library did not load"))[:2000]
            elif header.get("status") != "ready":
                raise ProtocolViolation("an unexpected reply while loading")
        return self

    def _watch(self) -> None:
        """Resident-memory limit where there is no address-space limit (sanitizer runs)."""
        try:
            pages = int(Path(f"/proc/{self.pid}/statm").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            return
        rss = pages * os.sysconf("SC_PAGE_SIZE")
        if rss > self.heap_bytes:
            self.killed_for = f"it used {rss >> 20} MiB of resident memory, over the {self.heap_bytes >> 20} MiB limit"
            os.kill(self.pid, signal.SIGKILL)

    def _reap(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def __call__(self, values: list[Any], out: np.ndarray | None = None) -> Any:
        header: list[dict[str, Any]] = []
        blobs: list[bytes] = []
        arrays: list[tuple[int, np.ndarray]] = []
        for i, (p, v) in enumerate(zip(self.sig.params, values)):
            if p.type.kind == "tensor":
                header.append({"dtype": v.dtype.str, "shape": list(v.shape), "strides": list(v.strides)})
                blobs.append(np.ascontiguousarray(v).tobytes())
                arrays.append((i, v))
            else:
                header.append({"value": v})
        request = {"args": header, "out": None if out is None else {"dtype": out.dtype.str, "shape": list(out.shape)}}
        try:
            send(self.req_w, request, blobs)
        except BrokenPipeError:
            raise ExecutorDied(self._reap(), self.killed_for) from None
        expected = [out.nbytes] if out is not None else []
        expected += [v.nbytes for _, v in arrays]
        reply = self.reader.frame(max_blob=max(expected, default=0))
        if reply is None:
            raise ExecutorDied(self._reap(), self.killed_for)
        answer, got = reply
        status = answer.get("status")
        if status == "error":
            kind, message = str(answer.get("type")), str(answer.get("message"))[:2000]
            raise ERRORS.get(kind, KernelError)(message if kind in ERRORS or kind == "KernelError" else f"{kind}: {message}")
        if status != "ok" or [len(b) for b in got] != expected:
            raise ProtocolViolation("a reply that does not match the call")
        if out is not None:
            np.copyto(out, np.frombuffer(got[0], dtype=out.dtype).reshape(out.shape))
            got = got[1:]
        for (i, v), b in zip(arrays, got):  # mirror writes into the inputs, so the runner sees them
            after = np.frombuffer(b, dtype=v.dtype).reshape(v.shape)
            if not np.array_equal(v, after, equal_nan=True):
                v[...] = after
        if self.sig.returns.kind == "tensor":
            return out
        return _checked_value(self.sig, answer.get("value"))

    def close(self) -> int:
        """Ask the executor to end; kill it if it does not. Returns its exit status."""
        try:
            os.close(self.req_w)
        except OSError:
            pass
        deadline = time.monotonic() + 2.0
        while self.returncode is None and time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.005)
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)
            self._reap()
        os.close(self.resp_r)
        return self.returncode


def _checked_value(sig: Signature, value: Any) -> Any:
    """The scalar/str/list result, only in the type the signature returns."""
    r = sig.returns
    ok = {
        "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
        "float": lambda x: isinstance(x, (float, int)) and not isinstance(x, bool),
        "bool": lambda x: isinstance(x, bool),
        "str": lambda x: isinstance(x, str),
    }
    if r.kind == "list":
        check = ok.get(r.elem.name, lambda x: False)
        if isinstance(value, list) and all(check(x) for x in value):
            return [float(x) for x in value] if r.elem.name == "float" else value
    elif check := ok.get(r.name):
        if check(value):
            return float(value) if r.name == "float" else value
    raise ProtocolViolation("a result of the wrong type")


# --- the executor's side --------------------------------------------------------------------

def _serve(req_fd: int, resp_fd: int, library: str, symbol: str, sig: Signature, directory: Path,
           parent_netns: str | None) -> None:
    os.chdir(directory)
    log = os.open("output.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    state = sandbox.enter(directory, parent_netns)  # from here on, nothing outside may be touched
    send(resp_fd, {"status": "sandboxed", "sandbox": state})
    try:
        kernel = Kernel(ctypes.CDLL(library), symbol, sig)  # static initializers run now, inside the sandbox
    except (OSError, AttributeError) as exc:
        send(resp_fd, {"status": "load_error", "message": f"the library does not load or lacks its symbol: {exc}"})
        os._exit(0)
    send(resp_fd, {"status": "ready"})
    reader = _Reader(req_fd)
    previous: list[Any] = []  # noqa: F841 - the last call's buffers stay alive while the next call's are allocated
    while True:
        frame = reader.frame()
        if frame is None:
            os._exit(0)
        request, blobs = frame
        values, arrays = [], []
        blob = iter(blobs)
        for a in request["args"]:
            if "dtype" in a:
                v = _layout(np.frombuffer(next(blob), dtype=np.dtype(a["dtype"])).reshape(a["shape"]), a["strides"])
                values.append(v)
                arrays.append(v)
            else:
                values.append(a["value"])
        out = poison(tuple(request["out"]["shape"]), np.dtype(request["out"]["dtype"])) if request["out"] else None
        try:
            result = kernel(values, out=out)
        except Exception as exc:  # noqa: BLE001 - the runner decides what an error means
            kind = next((n for n, t in ERRORS.items() if type(exc) is t),
                        "KernelError" if isinstance(exc, KernelError) else type(exc).__name__)
            send(resp_fd, {"status": "error", "type": kind, "message": str(exc)})
        else:
            reply = [out.tobytes()] if out is not None else []
            reply += [np.ascontiguousarray(v).tobytes() for v in arrays]
            send(resp_fd, {"status": "ok", "value": None if out is not None else result}, reply)
        previous = values + [out]  # noqa: F841 - released only after the next call's buffers exist


def _layout(values: np.ndarray, strides: list[int]) -> np.ndarray:
    """``values`` in a fresh buffer with the caller's strides (non-contiguity survives the trip)."""
    shape = values.shape
    item = values.itemsize
    if values.ndim == 0 or tuple(strides) == np.empty(shape, values.dtype).strides:
        return values.copy()
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides) if n) if values.size else 0
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides) if n) if values.size else 0
    buf = np.zeros(max((hi - lo) // item + 1, 1), dtype=values.dtype)
    view = np.lib.stride_tricks.as_strided(buf[(-lo) // item:], shape=shape, strides=strides, writeable=True)
    view[...] = values
    return view
