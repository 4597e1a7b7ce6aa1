"""Calling a kernel's generated C-ABI shim from Python with ctypes.

The harness uses this in its child process; it is also the Python host's way of
calling a registry kernel. Arguments are ordinary Python values and NumPy arrays; the
result is a Python value, or the caller-allocated output array. Errors the kernel
reports come back as the Python exception the spec declares.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Sequence

import numpy as np

from opgen.spec.dtypes import DType
from opgen.spec.nativetypes import NativeType, Signature


class Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class TensorView(ctypes.Structure):
    """Mirrors opgen_tensor / DLTensor."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", Device),
        ("ndim", ctypes.c_int32),
        ("dtype", DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class String(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("len", ctypes.c_int64)]


class List(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("len", ctypes.c_int64)]


class ErrorInfo(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("message", ctypes.c_char * 256)]


ERROR_KINDS = {1: OverflowError, 2: ZeroDivisionError, 3: ValueError, 5: IndexError}
C_SCALAR = {"int": ctypes.c_int64, "float": ctypes.c_double, "bool": ctypes.c_uint8}


class KernelError(RuntimeError):
    """The kernel threw something that is not a declared Python error (status 4)."""


def tensor_view(arr: np.ndarray, dt: DType, keep: list) -> TensorView:
    """A view of ``arr``'s memory as-is (no copy): strides in elements, may be negative."""
    if arr.dtype != dt.np:
        raise TypeError(f"expected a {dt.name} array, got {arr.dtype}")
    item = arr.itemsize
    byte_strides = arr.strides
    if any(s % item for s in byte_strides):
        raise ValueError("array strides are not a multiple of its item size")
    dims = ctypes.c_int64 * max(arr.ndim, 1)
    shape = dims(*arr.shape)
    strides = dims(*(s // item for s in byte_strides))
    keep += [shape, strides, arr]
    data = arr.__array_interface__["data"][0]
    return TensorView(data, Device(1, 0), arr.ndim, DataType(dt.dl_code, dt.bits, 1), shape, strides, 0)


class Kernel:
    """One loaded kernel: ``kernel(*args, out=array)`` calls the C shim."""

    def __init__(self, lib: ctypes.CDLL, symbol: str, sig: Signature):
        self.sig = sig
        self.fn = getattr(lib, symbol)
        self.fn.restype = ctypes.c_int32
        self.fn.argtypes = _argtypes(sig)
        self._free = lib.opgen_free
        self._free.argtypes = [ctypes.c_void_p]
        self._free.restype = None

    def __call__(self, args: Sequence[Any], out: np.ndarray | Sequence[np.ndarray] | None = None) -> Any:
        """Call the shim; ``out`` is the result's array, or a tuple result's arrays in order."""
        return self.bind(args, out)()

    def bind(self, args: Sequence[Any], out: np.ndarray | Sequence[np.ndarray] | None = None) -> Callable[[], Any]:
        """The call with its arguments marshalled once: each call of the returned function runs the
        shim on the same buffers. ``opgen bench`` times this, as it times the reference on inputs
        converted beforehand: building ctypes views costs microseconds per tensor (a 12-tensor list
        took longer to marshal than to copy), which a native caller never pays."""
        keep: list = []
        cargs: list = []
        for p, value in zip(self.sig.params, args):
            cargs += _marshal(p.type, value, keep)
        r = self.sig.returns
        if r.kind == "tuple":
            if out is None or len(out) != len(r.fields):
                raise ValueError(f"a kernel returning {r} needs one caller-allocated out array per result")
            views = [tensor_view(o, t.dtype, keep) for o, (_, t) in zip(out, r.fields)]
            outs = tuple(out)

            def call_tuple(_alive: list = keep) -> tuple:  # _alive: the buffers cargs points into
                err = ErrorInfo()
                self._check(self.fn(*cargs, *(ctypes.byref(v) for v in views), ctypes.byref(err)), err)
                return outs

            return call_tuple
        if r.kind == "tensor":
            if out is None:
                raise ValueError("a tensor-returning kernel needs a caller-allocated out array")
            out_view = tensor_view(out, r.dtype, keep)

        def call(_alive: list = keep) -> Any:  # _alive: the buffers cargs points into
            # A scalar, list or str result gets a fresh holder per call (a list or str is malloc'ed by
            # the kernel and freed when read); a tensor result is written into out's one view.
            if r.kind == "tensor":
                result_holder = out_view
            elif r.kind == "list":
                result_holder = List()
            elif r.name == "str":
                result_holder = String()
            else:
                result_holder = C_SCALAR[r.name]()
            err = ErrorInfo()
            self._check(self.fn(*cargs, ctypes.byref(result_holder), ctypes.byref(err)), err)
            return self._unmarshal(r, result_holder, out)

        return call

    @staticmethod
    def _check(status: int, err: ErrorInfo) -> None:
        """Raise the declared Python error for a non-zero status."""
        if status != 0:
            message = err.message.decode("utf-8", "replace")
            raise ERROR_KINDS.get(status, KernelError)(message or f"kernel returned status {status}")

    def _unmarshal(self, r: NativeType, holder: Any, out: np.ndarray | None) -> Any:
        return out if r.kind == "tensor" else read_result(r, holder, self._free)


def read_result(r: NativeType, holder: Any, free: Any) -> Any:
    """A scalar, str or list result as a Python value; malloc'ed results are released with ``free``
    (opgen_free). Shared by kernels and compiled functions (opgen.host), which return alike."""
    if r.kind == "list":
        try:
            return _read_list(r.elem, holder)
        finally:
            free(holder.data)
    if r.name == "str":
        try:
            return ctypes.string_at(holder.data, holder.len).decode("utf-8") if holder.len else ""
        finally:
            free(holder.data)
    if r.name == "bool":
        return bool(holder.value)
    return holder.value


def _argtypes(sig: Signature) -> list:
    types: list = []
    for p in sig.params:
        t = p.type
        if t.kind == "tensor":
            types.append(ctypes.POINTER(TensorView))
        elif t.is_tensor_list:
            types += [ctypes.POINTER(TensorView), ctypes.c_int64]
        elif t.kind == "list":
            elem = String if t.elem.name == "str" else C_SCALAR[t.elem.name]
            types += [ctypes.POINTER(elem), ctypes.c_int64]
        elif t.name == "str":
            types += [ctypes.c_char_p, ctypes.c_int64]
        else:
            types.append(C_SCALAR[t.name])
    r = sig.returns
    if r.kind == "tuple":
        return types + [ctypes.POINTER(TensorView)] * len(r.fields) + [ctypes.POINTER(ErrorInfo)]
    holder = TensorView if r.kind == "tensor" else List if r.kind == "list" else String if r.name == "str" else C_SCALAR[r.name]
    return types + [ctypes.POINTER(holder), ctypes.POINTER(ErrorInfo)]


def _marshal(t: NativeType, value: Any, keep: list) -> list:
    if t.kind == "tensor":
        return [ctypes.byref(tensor_view(value, t.dtype, keep))]
    if t.is_tensor_list:  # one opgen_tensor per element, in one C array
        views = (TensorView * max(len(value), 1))(*(tensor_view(v, t.elem.dtype, keep) for v in value))
        keep.append(views)
        return [views, len(value)]
    if t.kind == "list":
        if t.elem.name == "str":
            items = string_array([s.encode("utf-8") for s in value], keep)
        else:
            items = (C_SCALAR[t.elem.name] * max(len(value), 1))(*value)
        keep.append(items)
        return [items, len(value)]
    if t.name == "str":
        b = value.encode("utf-8")
        keep.append(b)
        return [b, len(b)]
    if t.name == "int" and not -(2**63) <= value < 2**63:
        raise OverflowError(f"{value} does not fit in int64")
    return [value]


def string_array(encoded: list[bytes], keep: list) -> ctypes.Array:
    """opgen_string items pointing into one joined buffer, filled as a NumPy view: a tokenizer's
    30522-piece vocabulary marshals in about a millisecond (one ctypes object per item took
    a quarter of a second)."""
    n = len(encoded)
    blob = ctypes.create_string_buffer(b"".join(encoded), max(sum(map(len, encoded)), 1))
    items = (String * max(n, 1))()
    if n:
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=n)
        fields = np.frombuffer(items, dtype=np.int64).reshape(-1, 2)  # (data, len) per item
        fields[:n, 0] = ctypes.addressof(blob) + np.cumsum(lengths) - lengths
        fields[:n, 1] = lengths
    keep.append(blob)
    return items


def _read_list(elem: NativeType, holder: List) -> list:
    if holder.len == 0:
        return []
    if elem.name == "str":
        items = ctypes.cast(holder.data, ctypes.POINTER(String))
        return [ctypes.string_at(items[i].data, items[i].len).decode("utf-8") for i in range(holder.len)]
    items = ctypes.cast(holder.data, ctypes.POINTER(C_SCALAR[elem.name]))
    values = items[:holder.len]
    return [bool(v) for v in values] if elem.name == "bool" else values
