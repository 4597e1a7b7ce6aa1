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
import fcntl
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

from opgen.verify.ffi import Kernel, KernelError
from opgen.spec.dtypes import floating, numpy_dtype
from opgen.spec.nativetypes import Signature
from opgen.verify import sandbox

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


def dtype_token(dt: np.dtype) -> str:
    """How a dtype crosses to the executor: NumPy's str ('<f4'), except where that loses it
    (ml_dtypes' bfloat16 is '|V2', any two-byte void): there, its name."""
    return dt.name if floating(dt) and dt.kind != "f" else dt.str


def poison(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The dtype's sentinel: NaN, True, or the integer maximum."""
    out = np.empty(shape, dtype=dtype)
    if floating(dtype):
        out.fill(np.nan)
    elif dtype.kind == "b":
        out.fill(True)
    else:
        out.fill(np.iinfo(dtype).max)
    return out


ALIGN = 64  # bytes: every buffer the executor hands a kernel starts on this boundary (as large mallocs do)


def aligned_bytes(n: int) -> np.ndarray:
    """A writeable uint8 array of n bytes whose data pointer is ALIGN-aligned."""
    raw = np.empty(n + ALIGN, dtype=np.uint8)
    start = (-raw.ctypes.data) % ALIGN
    return raw[start:start + n]


class Placed:
    """A tensor input as the kernel sees it: a view (shape, strides in bytes) whose element 0 sits
    ``offset`` bytes into a larger buffer. The bytes around and between the view's elements (the
    margins before and after it, the gaps of a strided view) hold a sentinel pattern chosen by the
    runner; after the call the executor sends back the whole buffer, which the runner compares
    byte for byte with ``buffer`` (``after``)."""

    def __init__(self, buffer: np.ndarray, offset: int, shape: tuple[int, ...], strides: tuple[int, ...],
                 dtype: np.dtype, tight: bool = False):
        self.buffer, self.offset, self.shape, self.strides, self.dtype = buffer, offset, shape, strides, dtype
        self.tight = tight
        self.after: np.ndarray | None = None
        self.extent = (offset, offset)  # the bytes [first, end) the view's elements span in the buffer

    def header(self) -> dict[str, Any]:
        return {"dtype": dtype_token(self.dtype), "shape": list(self.shape), "strides": list(self.strides),
                "offset": self.offset, "nbytes": int(self.buffer.size), "tight": self.tight}

    def view_of(self, buf: np.ndarray) -> np.ndarray:
        return view_into(buf, self.offset, self.shape, self.strides, self.dtype)


def view_into(buf: np.ndarray, offset: int, shape, strides, dtype: np.dtype) -> np.ndarray:
    """The strided view at ``offset`` bytes into the uint8 buffer ``buf`` (no copy)."""
    first = buf[offset:offset + dtype.itemsize].view(dtype)
    return np.lib.stride_tricks.as_strided(first, shape=tuple(shape), strides=tuple(strides), writeable=True)


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


def _widen_pipe(fd: int) -> None:
    """Grow a pipe from Linux's 64 KiB to what an unprivileged process may ask for (1 MiB by
    default): a call's buffers (tens of MB for a large example) then cross in a sixteenth of the
    context switches. Best effort: any size works, only slower."""
    try:
        limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, min(limit, 1 << 20))
    except (OSError, ValueError, AttributeError):
        pass


class _Reader:
    """Reads frames of known length from a pipe, each straight into its own buffer (no read-ahead);
    while waiting it wakes every ``tick`` seconds to run ``watch``."""

    def __init__(self, fd: int, watch=None, tick: float = 0.05):
        self.fd, self.watch, self.tick = fd, watch, tick
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN | select.POLLHUP)

    def exact(self, n: int) -> bytes | bytearray | None:
        """The next ``n`` bytes, read straight into one buffer of that size.

        Why not ``os.read(fd, n)`` in a loop: each such call allocates an ``n``-byte object for
        the at most 64 KiB a pipe hands over, and the verifier's processes run with glibc's malloc
        perturbation on (``opgen.verify.harness.child_env``), which fills every allocation. A
        50 MB buffer then cost ~800 reads x 50 MB of page faults and memset: a call that took
        milliseconds took 20 s, almost all of it system time (seen as a 300 s admission timeout
        on a batched matmul)."""
        out = bytearray(n)
        have = 0
        view = memoryview(out)
        while have < n:
            if self.watch is not None and not self.poller.poll(int(self.tick * 1000)):
                self.watch()
                continue
            got = os.readv(self.fd, [view[have:]])
            if not got:
                return None  # EOF: the other side is gone
            have += got
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
        for fd in (self.req_w, resp_w):
            _widen_pipe(fd)
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

    # The runner hands tensors over as Placed (the whole buffer travels, gaps and margins included).
    placed = True

    def __call__(self, values: list[Any], out: np.ndarray | tuple[np.ndarray, ...] | None = None) -> Any:
        """Call the kernel on ``values`` (tensors as Placed) into ``out`` (one array, or a tuple
        result's arrays in order), which arrives prefilled: its contents travel too, and the kernel
        finds them in its output. On return ``out`` holds the result and each Placed's ``after``
        the whole buffer as the call left it."""
        header: list[dict[str, Any]] = []
        blobs: list[bytes] = []
        arrays: list[Placed] = []
        for p, v in zip(self.sig.params, values):
            if p.type.kind == "tensor":
                header.append(v.header())
                blobs.append(v.buffer.tobytes())
                arrays.append(v)
            elif p.type.is_tensor_list:  # each element in its own buffer, each sent back after the call
                header.append({"list": [e.header() for e in v]})
                blobs += [e.buffer.tobytes() for e in v]
                arrays += v
            else:
                header.append({"value": v})
        outs = [] if out is None else list(out) if isinstance(out, (tuple, list)) else [out]
        blobs += [np.ascontiguousarray(o).tobytes() for o in outs]
        request = {"args": header, "out": [{"dtype": dtype_token(o.dtype), "shape": list(o.shape)} for o in outs] or None}
        try:
            send(self.req_w, request, blobs)
        except BrokenPipeError:
            raise ExecutorDied(self._reap(), self.killed_for) from None
        expected = [o.nbytes for o in outs]
        expected += [v.buffer.size for v in arrays]
        reply = self.reader.frame(max_blob=max(expected, default=0))
        if reply is None:
            raise ExecutorDied(self._reap(), self.killed_for)
        answer, got = reply
        status = answer.get("status")
        if status == "error":  # the inputs come back on an error too: a kernel may write them, then throw
            if [len(b) for b in got] != expected[len(outs):]:
                raise ProtocolViolation("a reply that does not match the call")
            for v, b in zip(arrays, got):
                v.after = np.frombuffer(b, dtype=np.uint8)
            kind, message = str(answer.get("type")), str(answer.get("message"))[:2000]
            raise ERRORS.get(kind, KernelError)(message if kind in ERRORS or kind == "KernelError" else f"{kind}: {message}")
        if status != "ok" or [len(b) for b in got] != expected:
            raise ProtocolViolation("a reply that does not match the call")
        for o, b in zip(outs, got):
            np.copyto(o, np.frombuffer(b, dtype=o.dtype).reshape(o.shape))
        got = got[len(outs):]
        for v, b in zip(arrays, got):  # the whole buffer after the call: the runner compares it with v.buffer
            v.after = np.frombuffer(b, dtype=np.uint8)
        if self.sig.tensor_results:
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

def _received(a: dict[str, Any], blob: bytes, buffers: list[np.ndarray]) -> np.ndarray:
    """The runner's buffer, byte for byte, at a fresh aligned address; the kernel gets the view at
    its offset and the whole buffer goes back (appended to ``buffers``), so writes anywhere in it
    show. A tight buffer (sanitizer runs: nothing around the view) is allocated exactly, so ASan's
    redzones sit right at its ends."""
    buf = np.empty(int(a["nbytes"]), np.uint8) if a.get("tight") else aligned_bytes(int(a["nbytes"]))
    buf[:] = np.frombuffer(blob, dtype=np.uint8)
    buffers.append(buf)
    return view_into(buf, int(a["offset"]), a["shape"], a["strides"], numpy_dtype(a["dtype"]))


def _serve(req_fd: int, resp_fd: int, library: str, symbol: str, sig: Signature, directory: Path,
           parent_netns: str | None) -> None:
    os.chdir(directory)
    log = os.open("output.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    state = sandbox.enter(directory, parent_netns)  # from here on, nothing outside may be touched
    send(resp_fd, {"status": "sandboxed", "sandbox": state})
    # The malloc perturbation (harness.child_env) was read when the runner started; the setting
    # itself is not left for the candidate to find (one more sign of the harness fewer).
    os.environ.pop("GLIBC_TUNABLES", None)
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
        values, buffers = [], []
        blob = iter(blobs)
        for a in request["args"]:
            if "dtype" in a:
                values.append(_received(a, next(blob), buffers))
            elif "list" in a:  # a list of tensors: each element's buffer as a single tensor's
                values.append([_received(e, next(blob), buffers) for e in a["list"]])
            else:
                values.append(a["value"])
        outs = []
        for o in request["out"] or ():  # prefilled by the runner (NaN, garbage, zeros, an earlier result, random bits)
            dtype = numpy_dtype(o["dtype"])
            shape = tuple(o["shape"])
            arr = np.empty(shape, dtype)  # exactly its size: a write past its end is a heap overflow ASan sees
            arr.reshape(-1).view(np.uint8)[:] = np.frombuffer(next(blob), dtype=np.uint8)
            outs.append(arr)
        out = None if not outs else tuple(outs) if sig.returns.is_tuple else outs[0]
        try:
            result = kernel(values, out=out)
        except Exception as exc:  # noqa: BLE001 - the runner decides what an error means
            kind = next((n for n, t in ERRORS.items() if type(exc) is t),
                        "KernelError" if isinstance(exc, KernelError) else type(exc).__name__)
            send(resp_fd, {"status": "error", "type": kind, "message": str(exc)}, [b.tobytes() for b in buffers])
        else:
            reply = [o.tobytes() for o in outs]
            reply += [b.tobytes() for b in buffers]
            send(resp_fd, {"status": "ok", "value": None if outs else result}, reply)
        previous = values + buffers + outs  # noqa: F841 - released only after the next call's buffers exist
