"""opgen.cast: its spec and answers as scripts/cast_kernels.py writes them, the conversions that must
round once (checked on the inputs where rounding twice differs, which the gate's draws rarely meet),
and the compiler's casts (x.astype(np.float32), x.to(torch.float64), x.float(), ...) against Python."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch

from opgen.build.cpp import build
from opgen.compiler import CompileError, compile_function
from opgen.gate.admission import build_job
from opgen.host import load_compiled
from opgen.project import Project
from opgen.references import call_reference
from opgen.spec.abi import c_symbol
from opgen.spec.model import load_all
from opgen.verify import ffi
from tests.compile_support import CHECKOUT, assert_same, compile_data_functions, data_function, outcome

ROOT = CHECKOUT
SOURCE = ROOT / "tests" / "data" / "compile_casts.py"
CAST_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool")
INDEX_DTYPES = ("int16", "int8", "uint8", "uint16", "uint32")  # cast to int64 only (index arrays)


@pytest.fixture(scope="module")
def spec():
    return load_all(Project(ROOT).specs)["opgen.cast"]


def test_the_spec_and_answers_are_what_the_script_writes():
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "cast_kernels.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_one_overload_per_ordered_pair_returning_its_target(spec):
    pairs = {(o.sig.params[0].type.dtype.name, o.sig.returns.dtype.name) for o in spec.overloads}
    assert pairs == {(a, b) for a in CAST_DTYPES for b in CAST_DTYPES if a != b} | {(a, "int64") for a in INDEX_DTYPES}
    for o in spec.overloads:
        x = np.zeros((2, 0, 3), o.sig.params[0].type.dtype.np)
        got = call_reference(spec.reference_for(o), [x])
        assert got.dtype == o.sig.returns.dtype.np and got.shape == (2, 0, 3), o.name


def test_float_to_int_domains_stay_inside_the_target_range(spec):
    """NumPy's float -> int of nan, inf or an out-of-range value is undefined: the domain never draws one."""
    for o in spec.overloads:
        src, dst = o.sig.params[0].type.dtype, o.sig.returns.dtype
        if not (src.is_float and dst.name.startswith("int")):
            continue
        dom = o.domain["x"]
        assert not {"nan", "inf", "-inf"} & set(dom.special), o.name
        info = np.iinfo(dst.np)
        for bound in (dom.min, dom.max):  # the bound as the source dtype holds it, truncated, fits
            held = float(np.asarray(bound, np.float64).astype(src.np).astype(np.float64))
            assert info.min <= np.trunc(held) <= info.max, (o.name, bound, held)


# ------------------------------------------------------------------ rounding once

def _hard_doubles(rng: np.random.Generator) -> np.ndarray:
    """Doubles a tie away from a float16 or bfloat16 value by a sticky bit float32 cannot hold (where
    rounding through float32 rounds twice), random bit patterns, and the overflow thresholds."""
    out = []
    for frac in (10, 7):  # float16 and bfloat16 keep 10 and 7 fraction bits
        m = rng.integers(0, 2**frac, 4000).astype(np.float64)
        e = rng.integers(-14, 15, 4000).astype(np.float64)
        tie = (1 + (m + 0.5) / 2**frac) * 2.0**e
        sticky = 2.0**(e - 40)
        out += [tie + sticky, tie - sticky, tie, -(tie + sticky)]
    bits = rng.integers(0, 2**63, 20000, dtype=np.int64).view(np.float64)
    out += [bits, -bits, np.array([65519.99, 65520.0, 65520.000001, 3.3961e38, 3.40282e38, 1e39, 5e-324, -0.0])]
    return np.concatenate(out)


def _hard_ints(rng: np.random.Generator) -> np.ndarray:
    top = rng.integers(2**24, 2**62, 8000, dtype=np.int64)
    ties = (top >> 16 << 16) | (1 << 15)  # a bfloat16 tie at 2**31 and above
    return np.concatenate([top, -top, ties + 1, ties - 1, ties, rng.integers(-2**24, 2**24, 4000),
                           np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 65519, 65520, 2049, 2051])])


ROUND_ONCE = ["f64_to_f16", "f64_to_bf16", "i64_to_bf16", "i64_to_f16", "i32_to_bf16", "f32_to_bf16", "f32_to_f16",
              "i64_to_f32", "f64_to_f32"]


@pytest.fixture(scope="module")
def kernels(spec) -> dict[str, ffi.Kernel]:
    jobs = [build_job(spec, spec.overload(n), (ROOT / "answers" / "cpp" / f"opgen.cast__{n}.cpp").read_text())
            for n in ROUND_ONCE]
    built = build(jobs)
    for b in built:
        assert b.ok, b.diagnostics
    return {n: ffi.Kernel(ctypes.CDLL(str(b.library)), c_symbol("opgen.cast", n), spec.overload(n).sig)
            for n, b in zip(ROUND_ONCE, built)}


@pytest.mark.parametrize("name", ROUND_ONCE)
def test_each_conversion_rounds_once_as_numpy(spec, kernels, name):
    o = spec.overload(name)
    src, dst = o.sig.params[0].type.dtype.np, o.sig.returns.dtype.np
    rng = np.random.default_rng(14)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf is a value here; nan bit patterns too
        x = _hard_doubles(rng).astype(src) if src.kind == "f" else _hard_ints(rng).astype(src)
        want = x.astype(dst)
    got = kernels[name]([x], out=np.empty(x.shape, dst))
    same = (got.view(np.uint16 if dst.itemsize == 2 else np.uint32 if dst.itemsize == 4 else np.uint64)
            == want.view(np.uint16 if dst.itemsize == 2 else np.uint32 if dst.itemsize == 4 else np.uint64))
    same |= np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{name}: {x[bad[0]]!r} -> {got[bad[0]]!r}, NumPy {want[bad[0]]!r} ({bad.size} differ)"


def test_the_documented_difference_from_torch_is_real():
    """torch's CPU float64 -> float16 rounds through float32 (twice); NumPy, and opgen.cast, once."""
    x = 1.0 + 2**-11 + 2**-40
    assert float(torch.tensor([x], dtype=torch.float64).to(torch.float16)[0]) == 1.0
    assert float(np.array([x]).astype(np.float16)[0]) == float(np.float16(1.0009765625))
    assert float(np.array([2**24 + 2**16 + 1]).astype(ml_dtypes.bfloat16)[0]) == 2**24 + 2**17


# ------------------------------------------------------------------ the compiler

X32 = np.array([[-2.75, -0.0, 0.0, 0.5, 1.0, 65519.0], [3.4e5, -1e-3, 7.25, -8.5, 2.5, 1e-8]], np.float32)
CASES: dict[str, list[tuple]] = {
    "astype_f64": [(X32,), (X32.T,), (np.zeros((0, 3), np.float32),), (np.array(1.5, np.float32),)],
    "astype_f16_then_back": [(X32.astype(np.float64) * 1.0001,), (np.array([1 + 2**-11 + 2**-40, np.nan, -np.inf]),)],
    "astype_by_name": [(X32,), (X32[:, ::2],)],
    "astype_dtype_keyword": [(np.array([2**24 + 1, -(2**40) - 3, 0, 7], np.int64),)],
    "astype_own_dtype": [(X32,)],
    "mask_as_float": [(X32,), (np.array([np.nan, -1.0], np.float32),)],
    "tensor_to_float64": [(torch.from_numpy(X32),)],
    "tensor_methods": [(torch.from_numpy(X32),), (torch.from_numpy(X32[:, 1:4].T.copy()),)],
    "tensor_int_to_bfloat16": [(torch.arange(-300, 300, 7, dtype=torch.int64),)],
}


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, Path]:
    return compile_data_functions(tmp_path_factory, SOURCE, CASES, "casts")


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_casts_match_python(name, libraries):
    fn, native = data_function(SOURCE, name), load_compiled(libraries[name])
    for args in CASES[name]:
        assert_same(outcome(fn, list(args)), outcome(native, list(args)), context=name)


def test_a_cast_to_its_own_dtype_calls_no_kernel(libraries):
    manifest = (libraries["astype_own_dtype"] / "astype_own_dtype.manifest.json").read_text()
    assert "opgen.cast" not in manifest


PRELUDE = "import numpy as np\nimport numpy.typing as npt\nimport torch\n\nF32 = npt.NDArray[np.float32]\n\n\n"
REFUSED = [
    ("device", "def f(x: F32) -> F32:\n    return x.to('cpu')\n", "the dtype must be a constant such as np.float32",
     "a device or another tensor is not a dtype"),
    ("variable dtype", "def f(x: F32, d: str) -> F32:\n    return x.astype(d)\n", "the dtype must be a constant", ""),
    ("extra argument", "def f(x: F32) -> F32:\n    return x.astype(np.float32, copy=False)\n",
     "takes exactly one argument, the dtype (not copy=)", ""),
    ("dtype as a value", "def f(x: F32) -> F32:\n    return np.sum(x, axis=0, dtype=np.float64)\n", "dtype", ""),
    ("no such cast", "def f(x: F32) -> F32:\n    return x.astype(np.uint8)\n", "opgen.cast has no overload taking "
     "(tensor[float32] -> tensor[uint8])", ""),
]


@pytest.mark.parametrize("what,body,message,detail", REFUSED, ids=[r[0] for r in REFUSED])
def test_casts_the_compiler_refuses_say_why(tmp_path, what, body, message, detail):
    source = tmp_path / "f.py"
    source.write_text(PRELUDE + body)
    with pytest.raises(CompileError) as info:
        compile_function(Project(ROOT), source, "f", tmp_path / "out")
    assert message in str(info.value.message) and detail in str(info.value.message), str(info.value.message)
