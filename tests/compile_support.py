"""Shared by the `opgen compile` tests: the example collection compiled once per session, the
Python oracle (the function itself, with ints held to int64 as the kernels hold them), result
comparison, and the JSON encoding that carries cases to the Node.js host and results back.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from opgen.compiler import compile_many
from opgen.host import load_compiled
from opgen.project import Project

CHECKOUT = Path(__file__).resolve().parents[1]
EXAMPLES = CHECKOUT / "examples" / "compile"
NODE_CLIENT = CHECKOUT / "clients" / "node"
# Every function of the collection: (file, function).
COLLECTION = [
    ("prompts.py", "prefix_queries"), ("prompts.py", "prefix_for_search"), ("prompts.py", "label_matches"),
    ("numeric.py", "horner"), ("numeric.py", "affine_counts"), ("numeric.py", "basket_total"),
    ("numeric.py", "pick_scaled"), ("numeric.py", "sum_exp_over_axes"), ("numeric.py", "weighted_lookup"),
    ("numeric.py", "clipped"), ("numeric.py", "count_positive_above"),
    ("attention.py", "attend"), ("embedding.py", "embed_tokens"),
]
# The functions whose every op also has a verified cpu-rust kernel: compiled for that target
# too (the Rust kernels are separate cdylibs the library loads from kernels/).
RUST_COLLECTION = [(f, n) for f, n in COLLECTION
                   if n not in ("clipped", "count_positive_above", "label_matches", "embed_tokens")]
INT64 = (-(2**63), 2**63 - 1)


@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """function name -> its output directory (library, C++, manifest), all built in one ninja run."""
    out = tmp_path_factory.mktemp("compiled")
    jobs = [(EXAMPLES / f, name, out / name) for f, name in COLLECTION]
    compile_many(Project(CHECKOUT), jobs)
    return {name: out / name for _, name in COLLECTION}


@pytest.fixture(scope="session")
def compiled_rust(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same, built from the registry's cpu-rust kernels."""
    out = tmp_path_factory.mktemp("compiled-rust")
    compile_many(Project(CHECKOUT), [(EXAMPLES / f, name, out / name) for f, name in RUST_COLLECTION],
                 target="cpu-rust")
    return {name: out / name for _, name in RUST_COLLECTION}


def data_function(source: Path, name: str) -> Callable[..., Any]:
    """A function of a tests/data file, the file run afresh (its own globals) for each lookup."""
    namespace: dict[str, Any] = {}
    exec(compile(source.read_text(), str(source), "exec", dont_inherit=True), namespace)  # noqa: S102
    return namespace[name]


def compile_data_functions(tmp_path_factory: pytest.TempPathFactory, source: Path, names: Any,
                           label: str) -> dict[str, Path]:
    """Every named function of a tests/data file compiled (one ninja run): name -> output directory."""
    out = tmp_path_factory.mktemp(label)
    compile_many(Project(CHECKOUT), [(source, name, out / name) for name in names])
    return {name: out / name for name in names}


def python_function(file: str, name: str) -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location(f"compile_examples_{Path(file).stem}", EXAMPLES / file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


# ---------------------------------------------------------------- the two Python hosts

class BothHosts:
    """A compiled function called through both Python hosts on every call, the native CPython entry
    and ctypes (opgen.host): they must return the same value (exactly: the same library computes it)
    or raise the same exception with the same message. Returns or raises what the native entry did."""

    def __init__(self, directory: Path):
        self.native = load_compiled(directory, host="native")
        self.ctypes = load_compiled(directory, host="ctypes")
        self.manifest = self.native.manifest

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        native = outcome(lambda: self.native(*args, **kwargs), [])
        via_ctypes = outcome(lambda: self.ctypes(*args, **kwargs), [])
        context = f"{self.native.__name__}{args!r}: native entry against ctypes"
        if native[0] == "error" or via_ctypes[0] == "error":
            assert (native[0], type(native[1]), str(native[1])) == (via_ctypes[0], type(via_ctypes[1]), str(via_ctypes[1])), \
                f"{context}: {native[1]!r} against {via_ctypes[1]!r}"
            raise native[1]
        assert type(native[1]) is type(via_ctypes[1]), f"{context}: {native[1]!r} against {via_ctypes[1]!r}"
        _same_value(plain(via_ctypes[1]), plain(native[1]), 0.0, 0.0, context)
        return native[1]


# ---------------------------------------------------------------- the oracle

class Int64(int):
    """An int whose + - * ** raise OverflowError outside int64, as the int kernels do.

    The Python function run on these is the oracle: Python's semantics where native ints
    can follow them, and the spec's OverflowError where they cannot."""

    def _checked(self, value: Any) -> Any:
        if type(value) is int:
            if not INT64[0] <= value <= INT64[1]:
                raise OverflowError("int64 overflow")
            return Int64(value)
        return value

    def __add__(self, other): return self._checked(int.__add__(self, other))
    def __radd__(self, other): return self._checked(int.__radd__(self, other))
    def __sub__(self, other): return self._checked(int.__sub__(self, other))
    def __rsub__(self, other): return self._checked(int.__rsub__(self, other))
    def __mul__(self, other): return self._checked(int.__mul__(self, other))
    def __rmul__(self, other): return self._checked(int.__rmul__(self, other))
    def __floordiv__(self, other): return self._checked(int.__floordiv__(self, other))
    def __rfloordiv__(self, other): return self._checked(int.__rfloordiv__(self, other))
    def __mod__(self, other): return self._checked(int.__mod__(self, other))
    def __rmod__(self, other): return self._checked(int.__rmod__(self, other))
    def __neg__(self): return self._checked(int.__neg__(self))
    def __abs__(self): return self._checked(int.__abs__(self))


def as_int64(value: Any) -> Any:
    if type(value) is int:
        return Int64(value)
    if isinstance(value, list):
        return [as_int64(v) for v in value]
    if isinstance(value, dict):
        return {k: as_int64(v) for k, v in value.items()}
    return value


def outcome(fn: Callable[..., Any], args: list[Any]) -> tuple[str, Any]:
    """("ok", result) or ("error", exception)."""
    try:
        return "ok", fn(*args)
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome being compared
        return "error", exc


def plain(value: Any) -> Any:
    """Results as comparable values: Int64 -> int, torch tensors and NumPy scalars -> arrays."""
    if isinstance(value, Int64):
        return int(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if type(value).__module__ == "torch":
        return value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    return value


def assert_same(expected: tuple[str, Any], got: tuple[str, Any], *, rtol: float = 0.0, atol: float = 0.0,
                signed_zeros: bool = True, context: str = "") -> None:
    kind, want = expected
    got_kind, have = got
    if kind == "error":
        assert got_kind == "error", f"{context}: Python raised {want!r}, the compiled function returned {have!r}"
        assert isinstance(want, type(have)), f"{context}: Python raised {want!r}, the compiled function {have!r}"
        return
    assert got_kind == "ok", f"{context}: Python returned {want!r}, the compiled function raised {have!r}"
    _same_value(plain(want), plain(have), rtol, atol, context, signed_zeros)


def _same_value(want: Any, have: Any, rtol: float, atol: float, context: str, signed_zeros: bool = True) -> None:
    if isinstance(want, np.ndarray):
        have = np.asarray(have)
        assert have.dtype == want.dtype and have.shape == want.shape, \
            f"{context}: want {want.dtype}{want.shape}, got {have.dtype}{have.shape}"
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=context)
        return
    if isinstance(want, (list, tuple)):
        assert type(have) is type(want) and len(have) == len(want), f"{context}: want {want!r}, got {have!r}"
        for w, h in zip(want, have):
            _same_value(w, h, rtol, atol, context, signed_zeros)
        return
    if isinstance(want, dict):  # the same keys in the same (insertion) order, and the same values
        assert isinstance(have, dict) and list(have) == list(want), f"{context}: want {want!r}, got {have!r}"
        for k in want:
            _same_value(want[k], have[k], rtol, atol, context, signed_zeros)
        return
    if isinstance(want, float):
        assert isinstance(have, float), f"{context}: want float {want!r}, got {have!r}"
        if math.isnan(want):
            assert math.isnan(have), f"{context}: want nan, got {have!r}"
        elif rtol == 0 and atol == 0:
            assert have == want and (not signed_zeros or math.copysign(1, have) == math.copysign(1, want)), \
                f"{context}: want {want!r}, got {have!r}"
        else:
            assert math.isclose(have, want, rel_tol=rtol, abs_tol=atol), f"{context}: want {want!r}, got {have!r}"
        return
    assert type(have) is type(want) and have == want, f"{context}: want {want!r}, got {have!r}"


# ---------------------------------------------------------------- to and from Node.js

def encode(value: Any) -> Any:
    """JSON the Node runner (clients/node/tools/run_cases.js) decodes into the host's JS values."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return {"$int": str(int(value))}
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value) or (value == 0 and math.copysign(1, value) < 0):
            return {"$float": repr(value)}
        return value
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"$dict": [[k, encode(v)] for k, v in value.items()]}
    if type(value).__module__ == "torch":
        value = value.numpy()
    if isinstance(value, np.ndarray):
        contiguous = np.array(value, order="C")  # not ascontiguousarray: it turns 0-d into 1-d
        return {"$tensor": {"dtype": str(contiguous.dtype), "shape": list(contiguous.shape),
                            "b64": base64.b64encode(contiguous.tobytes()).decode()}}
    raise TypeError(f"cannot encode {type(value).__name__}")


ERRORS = {"ValueError": ValueError, "OverflowError": OverflowError, "ZeroDivisionError": ZeroDivisionError,
          "IndexError": IndexError, "KeyError": KeyError, "RuntimeError": RuntimeError,
          "TypeError": TypeError, "AssertionError": AssertionError, "NotImplementedError": NotImplementedError}


def as_node_returns(value: Any) -> Any:
    """A Python result as the Node host gives it back: JavaScript has no tuples, so a tuple result is
    an Array (decoded as a list); dicts are Maps (decoded as dicts, in order)."""
    if isinstance(value, (list, tuple)):
        return [as_node_returns(v) for v in value]
    if isinstance(value, dict):
        return {k: as_node_returns(v) for k, v in value.items()}
    return value


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "$dict" in value:
            return {k: decode(v) for k, v in value["$dict"]}
        if "$int" in value:
            return int(value["$int"])
        if "$float" in value:
            return float(value["$float"])
        if "$tensor" in value:
            t = value["$tensor"]
            return np.frombuffer(base64.b64decode(t["b64"]), dtype=t["dtype"]).reshape(t["shape"])
        raise ValueError(f"unknown encoding {value}")
    return value


def node_outcomes(cases: list[tuple[Path, list[Any]]], tmp: Path) -> list[tuple[str, Any]]:
    """Runs every (library directory, arguments) through the Node host in one node process."""
    node = shutil.which("node")
    assert node, "node is not on PATH; install Node.js 18 or newer"
    assert (NODE_CLIENT / "node_modules" / "koffi").is_dir(), "run `npm ci` in clients/node first"
    request = tmp / "cases.json"
    response = tmp / "results.json"
    request.write_text(json.dumps({"cases": [{"library": str(d), "args": [encode(a) for a in args]}
                                             for d, args in cases]}))
    proc = subprocess.run([node, str(NODE_CLIENT / "tools" / "run_cases.js"), str(request), str(response)],
                          capture_output=True, text=True, timeout=300, env={**os.environ})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = []
    for r in json.loads(response.read_text()):
        if "error" in r:
            out.append(("error", ERRORS.get(r["error"]["name"], RuntimeError)(r["error"]["message"])))
        else:
            out.append(("ok", decode(r["value"])))
    return out
