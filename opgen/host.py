"""The Python host: load a library built by ``opgen compile`` in-process and call it with
ordinary Python values.

    from opgen.host import load_compiled
    prefix_queries = load_compiled("out/")          # the directory, the manifest or the .so
    prefix_queries(["capital of France?"], task="query")

The callable has the Python function's signature (names, defaults). Arguments are
converted as the manifest's types say: int, float, bool, str, lists of those, dicts
with str keys, and NumPy arrays (or torch tensors where the annotation said
torch.Tensor) of the declared dtype. Results come back as the same kinds of values; a
tensor result is a NumPy array (torch tensor) that owns the library's buffer, no copy.
Errors are raised as the Python exception the kernel reported (ValueError,
OverflowError, ZeroDivisionError, IndexError, KeyError, TypeError).

Two ways in, with the same results and errors: the native CPython entry `opgen compile` builds
beside the library (opgen/compiler/python_entry.py: arguments converted in C, about a
microsecond a call) where it is present and imports here, else ctypes (every argument marshalled
by Python code; a library compiled before the entry existed, or a Python without headers).
``load_compiled(path, host="ctypes")`` forces the second; ``fn.host`` says which one a function uses.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.machinery
import importlib.util
import inspect
import json
import math
import sys
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from opgen.compiler import types as ctypes_model
from opgen.compiler.entry_abi import result_slots
from opgen.compiler.types import DictType, TupleType, Type
from opgen.spec.dtypes import dtype_of_code
from opgen.errors import OpgenError
from opgen.verify.ffi import (C_SCALAR, ERROR_KINDS, ErrorInfo, KernelError, List, String, TensorView, read_result,
                              string_array, tensor_view)

# A compiled function's statuses: the kernels' kinds; RuntimeError (torch's errors, a raise RuntimeError: status
# 4, which a kernel verified alone reports as KernelError); kinds only compiled code raises (a KeyError of a
# dict, a TypeError, a raise statement's or an assert's)
PY_ERRORS = {**ERROR_KINDS, 4: RuntimeError, 6: KeyError, 7: TypeError, 8: AssertionError, 9: NotImplementedError}
_INT64 = (-(2**63), 2**63 - 1)


HOSTS = ("auto", "native", "ctypes")
# torch dtypes a tensor's memory is read from directly by the native entry (those whose
# .numpy() the ctypes host relies on exists); others go through the host's own conversion.
_TORCH_FAST_DTYPES = ("float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool")


def load_compiled(path: str | Path, *, host: str = "auto") -> "CompiledFunction":
    """``host``: "auto" (the native entry where it is present and imports, else ctypes), "native"
    (an error where it cannot be used, saying why) or "ctypes"."""
    if host not in HOSTS:
        raise OpgenError(f"unknown host {host!r}", hint=f"use one of {', '.join(HOSTS)}")
    fn = CompiledFunction(_manifest_path(Path(path)))
    if host == "ctypes":
        return fn
    entry, why_not = _native_entry(fn)
    if entry is None:
        if host == "native":
            raise OpgenError(f"{fn.__name__} has no usable native entry: {why_not}",
                             hint="compile it again with this Python (and its headers), or use host='ctypes'")
        fn.native_unavailable = why_not
        return fn
    return NativeCompiledFunction(fn, entry)


def _manifest_path(path: Path) -> Path:
    if path.is_dir():
        found = sorted(path.glob("*.manifest.json"))
        if len(found) != 1:
            raise OpgenError(f"{path} holds {len(found)} compiled manifests", hint="name the manifest file itself")
        return found[0]
    if path.suffix == ".so":
        path = path.with_name(path.name.removeprefix("lib").removesuffix(".so") + ".manifest.json")
    if not path.exists():
        raise OpgenError(f"{path} does not exist", hint="run `opgen compile FILE.py:FUNCTION -o OUT` first")
    return path


class CompiledFunction:
    def __init__(self, manifest_path: Path):
        self.manifest_path = manifest_path
        self.manifest = json.loads(manifest_path.read_text())
        m = self.manifest
        self.__name__ = m["function"]
        self.library_path = manifest_path.parent / m["library"]
        self.lib = ctypes.CDLL(str(self.library_path))
        self.params = [(p["name"], ctypes_model.parse(p["type"]), p.get("flavor")) for p in m["params"]]
        # Parameters the caller may pass None for (Optional[T]): the entry takes a presence flag first
        self.optional = frozenset(p["name"] for p in m["params"] if p.get("optional"))
        # Array parameters whose annotation named no dtype (their library's default was compiled for)
        self.assumed_dtypes = frozenset(p["name"] for p in m["params"] if p.get("dtype_assumed"))
        self.returns = ctypes_model.parse(m["returns"]["type"])
        self.return_flavor = m["returns"].get("flavor")
        self.slots = [t for _, t in result_slots(self.returns)]  # the out-parameters, in order
        self.fn = getattr(self.lib, m["symbol"])
        self.fn.restype = ctypes.c_int32
        self.fn.argtypes = [a for name, t, _ in self.params
                            for a in ([ctypes.c_uint8] if name in self.optional else []) + _argtypes(t)] + \
            [_out_type(t) for t in self.slots] + [ctypes.POINTER(ErrorInfo)]
        self._free = self.lib.opgen_free
        self._free.argtypes = [ctypes.c_void_p]
        self._free.restype = None
        self.__signature__ = inspect.Signature([
            inspect.Parameter(p["name"], inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              default=p["default"] if "default" in p else inspect.Parameter.empty)
            for p in m["params"]])
        self.host = "ctypes"
        self.native_unavailable: str | None = None  # why the native entry is not used, where it is not

    def __repr__(self) -> str:
        return f"<compiled {self.__name__}{self.__signature__} from {self.library_path} ({self.host})>"

    def bind(self, args: tuple, kwargs: dict) -> tuple:
        """Every parameter's value, as Python binds a call (its TypeError for a call it refuses)."""
        bound = self.__signature__.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def coerce(self, index: int, value: Any) -> Any:
        """One argument as the plain value its parameter takes (np.int64 -> int, a torch tensor -> its
        NumPy view), raising what the ctypes path raises for it: the native entry's way for anything
        its C side does not take directly."""
        name, t, flavor = self.params[index]
        if value is None and name in self.optional:
            return None
        with _dtype_hint(name in self.assumed_dtypes, name, flavor):
            return _plain(name, t, flavor, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != len(self.params):  # keywords, defaults, or a wrong count (Python's TypeError)
            args = self.bind(args, kwargs)
        keep: list = []
        cargs: list = []
        for (name, t, flavor), value in zip(self.params, args):
            if name in self.optional:  # the presence flag; None passes zeros beside it (entry_abi)
                if value is None:
                    cargs += [0, *_absent(t)]
                    continue
                cargs.append(1)
            with _dtype_hint(name in self.assumed_dtypes, name, flavor):
                cargs += _marshal(name, t, flavor, value, keep)
        err = ErrorInfo()
        if len(self.slots) == 1:
            holder = _holder(self.returns)
            status = self.fn(*cargs, ctypes.byref(holder), ctypes.byref(err))
        else:  # a dict or a tuple: several out-parameters (entry_abi.result_slots)
            holders = [_holder(t) for t in self.slots]
            status = self.fn(*cargs, *map(ctypes.byref, holders), ctypes.byref(err))
        if status != 0:
            message = err.message.decode("utf-8", "replace")
            # statuses from 6 on are compiled code's own: a raise statement's message may be empty, as Python's
            raise PY_ERRORS.get(status, KernelError)(message if message or status >= 6
                                                     else f"{self.__name__} failed with status {status}")
        if len(self.slots) == 1:
            return self._result(self.returns, holder)
        values = iter([self._result(t, h) for t, h in zip(self.slots, holders)])
        return _assemble(self.returns, values)

    def _result(self, r: Type, holder: Any) -> Any:
        if r.kind == "tensor":
            return self._tensor(holder)
        return read_result(r, holder, self._free)

    def _tensor(self, t: TensorView) -> Any:
        shape = tuple(t.shape[d] for d in range(t.ndim))
        self._free(ctypes.cast(t.shape, ctypes.c_void_p))
        dt = dtype_of_code(t.dtype.code, t.dtype.bits).np
        count = math.prod(shape)  # np.prod costs microseconds a call
        if count == 0:
            self._free(t.data)
            arr = np.empty(shape, dtype=dt)
        else:
            # The array owns the library's buffer: released with opgen_free when the last view goes.
            buffer = (ctypes.c_char * (count * dt.itemsize)).from_address(t.data)
            weakref.finalize(buffer, self._free, t.data)
            arr = np.frombuffer(buffer, dtype=dt).reshape(shape)
        if self.return_flavor == "torch":
            # torch takes seconds to import; only this path needs it
            import torch

            return torch.from_numpy(arr)
        return arr


class NativeCompiledFunction(CompiledFunction):
    """The same function called through its native CPython entry (opgen/compiler/python_entry.py)."""

    def __init__(self, base: CompiledFunction, entry: Any):
        self.__dict__.update(base.__dict__)
        self.host = "native"
        self._entry = entry

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._entry(*args, **kwargs)


def _native_entry(fn: CompiledFunction) -> tuple[Any, str | None]:
    """The bound native entry of a loaded function, or (None, why it cannot be used)."""
    record = fn.manifest.get("python_entry")
    if not record:
        return None, "its manifest records none (compiled before opgen built one)"
    if "absent" in record:
        return None, f"none was built: {record['absent']}"
    if record["python"] != sys.implementation.cache_tag:
        return None, f"it was built for {record['python']}, this is {sys.implementation.cache_tag}"
    path = fn.manifest_path.parent / record["file"]
    if not path.exists():
        return None, f"{path} is missing"
    try:
        loader = importlib.machinery.ExtensionFileLoader(record["module"], str(path))
        module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(record["module"], path,
                                                                                         loader=loader))
        loader.exec_module(module)
    except ImportError as exc:  # another NumPy ABI, a broken file: ctypes still works
        return None, f"{path.name} does not import here: {exc}"
    torch_params = any(flavor == "torch" for _, _, flavor in fn.params)
    if torch_params or fn.return_flavor == "torch":
        # torch takes seconds to import; only functions declared with torch tensors need it
        import torch
    tensor_slots = [t for t in fn.slots if t.kind == "tensor"]
    entry = module.bind(
        str(fn.library_path), fn.manifest["symbol"],
        tuple(sys.intern(name) for name, _, _ in fn.params),
        tuple(p["default"] if "default" in p else inspect.Parameter.empty for p in fn.manifest["params"]),
        inspect.Parameter.empty, fn.coerce, fn.bind, PY_ERRORS, KernelError,
        tuple(t.dtype.np if t.kind == "tensor" else None for _, t, _ in fn.params),
        tuple(getattr(torch, t.dtype.name) if t.kind == "tensor" and flavor == "torch"
              and t.dtype.name in _TORCH_FAST_DTYPES else None for _, t, flavor in fn.params),
        tuple(t.dtype.np for t in tensor_slots),
        torch.from_numpy if fn.return_flavor == "torch" else None,
        fn.__name__)
    return entry, None


class _DtypeMismatch(TypeError):
    """An array argument of another dtype than the one compiled for."""

    def __init__(self, message: str, have: str):
        super().__init__(message)
        self.have = have  # the argument's dtype


@contextlib.contextmanager
def _dtype_hint(assumed: bool, name: str, flavor: str | None):
    """A dtype TypeError for a parameter whose annotation named no dtype says where the compiled one came
    from and how to compile for the dtype passed."""
    try:
        yield
    except _DtypeMismatch as exc:
        if not assumed:
            raise
        have = exc.have
        annotated = f"Annotated[torch.Tensor, torch.{have}]" if flavor == "torch" else f"npt.NDArray[np.{have}]"
        raise TypeError(f"{exc} (the annotation of {name} names no dtype, so opgen compile took its library's "
                        f"default; compile with --dtype {name}={have}, or annotate it {annotated})") from None


def _plain(name: str, t: Type, flavor: str | None, value: Any) -> Any:
    """An argument checked as the ctypes path checks it, as the plain Python value its type holds."""
    if isinstance(t, DictType):
        if not isinstance(value, dict):
            raise TypeError(f"{name} must be a dict[str, {t.value}], got {type(value).__name__}")
        keys = _plain_items(f"{name} keys", ctypes_model.STR, list(value.keys()))
        return dict(zip(keys, _plain_items(f"{name} values", t.value, list(value.values()))))
    if t.kind == "tensor":
        arr = _array(name, value, flavor, t)
        if any(s % arr.itemsize for s in arr.strides):
            raise ValueError("array strides are not a multiple of its item size")
        return arr
    if t.kind == "list":
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{name} must be a list of {t.elem}, got {type(value).__name__}")
        return _plain_items(name, t.elem, list(value))
    if t.name == "str":
        return _str(name, value)
    return _number(name, t, value)


def _str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    value.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError, as marshalling it would
    return value


def _plain_items(name: str, elem: Type, values: list) -> list:
    if elem.name == "str":
        for v in values:
            if not isinstance(v, str):
                raise TypeError(f"{name} must hold str, got {type(v).__name__}")
            v.encode("utf-8")
        return values
    return [_number(name, elem, v) for v in values]


def _assemble(t: Type, values) -> Any:
    """The Python value of a result read slot by slot: a dict from its keys and values, a tuple of
    its items."""
    if isinstance(t, TupleType):
        return tuple(_assemble(item, values) for item in t.items)
    if isinstance(t, DictType):
        keys = next(values)
        return dict(zip(keys, next(values)))
    return next(values)


def _argtypes(t: Type) -> list:
    if isinstance(t, DictType):
        return [ctypes.POINTER(String), ctypes.POINTER(_elem(t.value)), ctypes.c_int64]
    if t.kind == "tensor":
        return [ctypes.POINTER(TensorView)]
    if t.kind == "list":
        return [ctypes.POINTER(_elem(t.elem)), ctypes.c_int64]
    if t.name == "str":
        return [ctypes.c_char_p, ctypes.c_int64]
    return [C_SCALAR[t.name]]


def _absent(t: Type) -> list:
    """The arguments standing for a value the caller passed None for (the entry never reads them)."""
    return [None if a is ctypes.c_char_p or issubclass(a, ctypes._Pointer) else 0 for a in _argtypes(t)]


def _elem(t: Type) -> Any:
    return String if t.name == "str" else C_SCALAR[t.name]


def _out_type(t: Type) -> Any:
    return ctypes.POINTER(type(_holder(t)))


def _holder(t: Type) -> Any:
    if t.kind == "tensor":
        return TensorView()
    if t.kind == "list":
        return List()
    if t.name == "str":
        return String()
    return C_SCALAR[t.name]()


def _marshal(name: str, t: Type, flavor: str | None, value: Any, keep: list) -> list:
    if isinstance(t, DictType):
        if not isinstance(value, dict):
            raise TypeError(f"{name} must be a dict[str, {t.value}], got {type(value).__name__}")
        keys = _items(f"{name} keys", ctypes_model.STR, list(value.keys()), keep)
        values = _items(f"{name} values", t.value, list(value.values()), keep)
        return [keys, values, len(value)]
    if t.kind == "tensor":
        arr = _array(name, value, flavor, t)
        return [ctypes.byref(tensor_view(arr, t.dtype, keep))]
    if t.kind == "list":
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{name} must be a list of {t.elem}, got {type(value).__name__}")
        return [_items(name, t.elem, list(value), keep), len(value)]
    return _scalar(name, t, value, keep)


def _scalar(name: str, t: Type, value: Any, keep: list) -> list:
    if t.name == "str":
        b = _str(name, value).encode("utf-8")
        keep.append(b)
        return [b, len(b)]
    return [_number(name, t, value)]


def _number(name: str, t: Type, value: Any) -> Any:
    if t.name == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
        return bool(value)
    if t.name == "int":
        if not isinstance(value, (int, np.integer)):  # True is an int in Python, too
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        value = int(value)
        if not _INT64[0] <= value <= _INT64[1]:
            raise OverflowError(f"{name}={value} does not fit in int64")
        return value
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a float, got {type(value).__name__}")
    return float(value)


def _items(name: str, elem: Type, values: list, keep: list) -> Any:
    n = max(len(values), 1)
    if elem.name == "str":
        # One joined buffer that the items point into (no ctypes object per string).
        items = string_array([v.encode("utf-8") for v in _plain_items(name, elem, values)], keep)
    else:
        items = (C_SCALAR[elem.name] * n)(*(_number(name, elem, v) for v in values))
    keep.append(items)
    return items


def _array(name: str, value: Any, flavor: str | None, t: Type) -> np.ndarray:
    if flavor == "torch" and not isinstance(value, np.ndarray):
        # torch takes seconds to import; only this path needs it
        import torch

        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor of {t.dtype.name}, got {type(value).__name__}")
        if value.device.type != "cpu":
            raise ValueError(f"{name} must be in CPU memory")
        value = value.detach().numpy()  # shares the memory
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array of {t.dtype.name}, got {type(value).__name__}")
    if value.dtype != t.dtype.np:
        raise _DtypeMismatch(f"{name} must have dtype {t.dtype.name}, got {value.dtype}", str(value.dtype))
    return value
