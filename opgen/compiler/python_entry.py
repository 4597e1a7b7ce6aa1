"""The native CPython entry of a compiled function: a small extension module, emitted from the
function's signature and built beside its library, that calls the library's C-ABI entry point
(entry_abi.py) straight from Python values: no per-argument ctypes objects, strs as their own
UTF-8, lists walked in C, arrays and CPU torch tensors as views, results built in C.

The conversions are the hand-written runtime (runtime/opgen_python_entry.hpp); what is emitted
per function is one call: each parameter taken as its kind, the entry point called with the GIL
released, each result slot turned into its Python value. opgen.host binds it to the library and
falls back to ctypes when it is absent or cannot be imported (another Python, no headers).
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

import numpy as np

from opgen.build.cpp import BuildJob
from opgen.compiler import ir
from opgen.compiler.entry_abi import c_params, entry_params, entry_symbol, result_slots
from opgen.compiler.types import DictType, TupleType, Type

RUNTIME_HEADER = Path(__file__).parent / "runtime" / "opgen_python_entry.hpp"
_ELEM = {"int": "int64_t", "float": "double", "bool": "uint8_t", "str": "opgen_string"}
_SCALAR_ARG = {"int": "IntArg", "float": "FloatArg", "bool": "BoolArg", "str": "StrArg"}
_SLOT_C = {"tensor": "opgen_tensor", "list": "opgen_list", "str": "opgen_string"}


def module_name(function: str) -> str:
    return f"_opgen_entry_{function}"


def file_name(function: str) -> str:
    """The module's file: its name carries this interpreter's ABI tag (cpython-311-x86_64-linux-gnu),
    so another Python never tries to load it."""
    return module_name(function) + sysconfig.get_config_var("EXT_SUFFIX")


def headers_missing() -> str | None:
    """Why no native entry can be built here, or None."""
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").exists():
        return f"no Python headers in {include} (install python3-dev or the interpreter's headers)"
    return None


def build_job(fn: ir.Function) -> BuildJob:
    source = render(fn.name, entry_params(fn), fn.returns)
    return BuildJob(name=f"python-entry-{fn.name}", sources={"python_entry.cpp": source,
                                                             RUNTIME_HEADER.name: RUNTIME_HEADER.read_text()},
                    extra_flags=[f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}"],
                    extension=True, precompiled=(RUNTIME_HEADER.name,))


def record(fn: ir.Function) -> dict:
    """What the manifest says of the module (the host checks it before importing)."""
    return {"file": file_name(fn.name), "module": module_name(fn.name), "python": sys.implementation.cache_tag,
            "numpy": np.__version__}


def render(function: str, params: list[tuple[str, Type, bool]], returns: Type) -> str:
    decl = ", ".join(t for t, _ in c_params(params, returns))
    lines = [
        f"// Native CPython entry of {function} (emitted by opgen compile: opgen/compiler/python_entry.py).",
        f"// Built for Python {sys.version.split()[0]} ({sys.implementation.cache_tag}) and NumPy {np.__version__}.",
        '#include "opgen_python_entry.hpp"',
        "",
        "namespace {",
        "",
        "namespace pe = opgen::pyentry;",
        f"using EntryFn = int32_t (*)({decl});",
        "",
        "PyObject* call(pe::State& st, PyObject* const* values) {",
    ]
    cargs: list[str] = []
    for i, (name, t, optional) in enumerate(params):
        arg = f"a{i}"
        lines.append(f"  pe::{_arg_type(t)} {arg};  // {name}: {t}{' or None' if optional else ''}")
        if optional:  # None: the presence flag 0 and the value's zeros (entry_abi)
            lines.append(f"  const uint8_t {arg}_present = values[{i}] != Py_None;")
            lines.append(f"  if ({arg}_present && !pe::take(st, {i}, values[{i}], {arg})) return nullptr;")
            cargs.append(f"{arg}_present")
        else:
            lines.append(f"  if (!pe::take(st, {i}, values[{i}], {arg})) return nullptr;")
        cargs += _arg_values(arg, t)
    slots = result_slots(returns)
    for k, (_, slot) in enumerate(slots):
        lines.append(f"  {_slot_c(slot)} out{k}{{}};")
    cargs += [f"&out{k}" for k in range(len(slots))]
    lines += [
        "  opgen_error err{};",
        "  int32_t status;",
        "  Py_BEGIN_ALLOW_THREADS",
        f"  status = reinterpret_cast<EntryFn>(st.entry)({', '.join([*cargs, '&err'])});",
        "  Py_END_ALLOW_THREADS",
        "  if (status != 0) return pe::raise_status(st, status, err);",
        "  bool ok = true;",
    ]
    result = _Results(slots)
    value = result.value(returns)
    lines += [f"  {line}" for line in result.lines]
    lines += [f"  return {value};", "}", "", "}  // namespace", "",
              f"OPGEN_PYTHON_ENTRY_MODULE({module_name(function)}, call)", ""]
    return "\n".join(lines)


def _arg_type(t: Type) -> str:
    if isinstance(t, DictType):
        return f"DictArg<{_ELEM[t.value.name]}>"
    if t.kind == "tensor":
        return "TensorArg"
    if t.kind == "list":
        return f"ListArg<{_ELEM[t.elem.name]}>"
    return _SCALAR_ARG[t.name]


def _arg_values(arg: str, t: Type) -> list[str]:
    """The C arguments one parameter becomes, in entry_abi.c_params order."""
    if isinstance(t, DictType):
        return [f"{arg}.key_data()", f"{arg}.value_data()", f"{arg}.len()"]
    if t.kind == "tensor":
        return [f"{arg}.ptr()"]
    if t.kind == "list" or t.name == "str":
        return [f"{arg}.data()", f"{arg}.len()"]
    return [f"{arg}.value"]


def _slot_c(slot: Type) -> str:
    return _SLOT_C.get(slot.kind) or _SLOT_C.get(slot.name) or _ELEM[slot.name]


class _Results:
    """C++ statements turning the out slots into the Python result, slot by slot in order (C++
    leaves the order of a call's arguments open, so every slot is its own statement)."""

    def __init__(self, slots: list):
        self.slots = iter(range(len(slots)))
        self.kinds = [t for _, t in slots]
        self.tensors = 0
        self.lines: list[str] = []
        self.count = 0

    def value(self, t: Type) -> str:
        if isinstance(t, TupleType):
            items = [self.value(item) for item in t.items]
            return self._temp(f"pe::tuple_out(ok, {{{', '.join(items)}}})")
        if isinstance(t, DictType):
            keys = self._slot()
            values = self._slot()
            return self._temp(f"pe::dict_out(ok, {keys}, {values})")
        return self._slot()

    def _slot(self) -> str:
        k = next(self.slots)
        t = self.kinds[k]
        if t.kind == "tensor":
            expr = f"pe::tensor_out(st, ok, out{k}, {self.tensors})"
            self.tensors += 1
        elif t.kind == "list":
            expr = f"pe::list_out<{_ELEM[t.elem.name]}>(st, ok, out{k})"
        elif t.name == "str":
            expr = f"pe::str_out(st, ok, out{k})"
        else:
            expr = f"pe::{t.name}_out(ok, out{k})"
        return self._temp(expr)

    def _temp(self, expr: str) -> str:
        name = f"r{self.count}"
        self.count += 1
        self.lines.append(f"PyObject* {name} = {expr};")
        return name
