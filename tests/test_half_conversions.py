"""The half kernels' row conversions (scripts/half_kernels.py) against NumPy and ml_dtypes.

The half answers widen their inputs and round their results a row at a time with AVX-512 where the
build has it, and with the runtime's scalar conversions elsewhere. The gate checks each kernel on
drawn inputs; this checks the conversions themselves on every float16 and bfloat16 bit pattern
and on a million float32 patterns (ties, subnormals, overflow to infinity, nans), at lengths that
exercise both the sixteen-lane loop and its scalar tail.
"""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

# One half answer per dtype: the conversions live in its anonymous namespace, so a test unit that
# includes the answer reaches them and exports them under C names.
ANSWERS = {
    "f16": ("torch.nn.functional.softmax__f16.cpp", "_Float16", np.float16),
    "bf16": ("torch.nn.functional.softmax__bf16.cpp", "opgen::bfloat16", ml_dtypes.bfloat16),
}

EXPORTS = """
#include "{answer}"
extern "C" void test_widen(const void* a, float* b, int64_t n) {{
  opgen::kernels::widen_row(static_cast<const {ctype}*>(a), b, n);
}}
extern "C" void test_narrow(const float* a, void* b, int64_t n) {{
  opgen::kernels::narrow_row(a, static_cast<{ctype}*>(b), n);
}}
"""


@pytest.fixture(scope="module", params=sorted(ANSWERS))
def conversions(request, tmp_path_factory):
    half = request.param
    answer, ctype, np_dtype = ANSWERS[half]
    work = tmp_path_factory.mktemp(half)
    unit = work / "unit.cpp"
    unit.write_text(EXPORTS.format(answer=ROOT / "answers" / "cpp" / answer, ctype=ctype))
    library = work / "conversions.so"
    subprocess.run(["g++", "-std=c++17", "-O3", "-march=native", "-fPIC", "-shared", "-fopenmp",
                    f"-I{ROOT / 'opgen' / 'runtime'}", str(unit), "-o", str(library)],
                   check=True, capture_output=True, text=True)
    lib = ctypes.CDLL(str(library))
    lib.test_widen.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    lib.test_narrow.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    return half, lib, np_dtype


def _widen(lib, halves: np.ndarray) -> np.ndarray:
    out = np.empty(halves.size, np.float32)
    lib.test_widen(halves.ctypes.data, out.ctypes.data, halves.size)
    return out


def _narrow(lib, floats: np.ndarray, np_dtype) -> np.ndarray:
    out = np.zeros(floats.size, np_dtype)
    lib.test_narrow(floats.ctypes.data, out.ctypes.data, floats.size)
    return out


def test_every_half_pattern_widens_exactly(conversions):
    _, lib, np_dtype = conversions
    halves = np.arange(1 << 16, dtype=np.uint16).view(np_dtype)
    for n in (halves.size, 16 * 7 + 5):  # the vector loop, and a scalar tail after it
        got = _widen(lib, halves[:n])
        want = halves[:n].astype(np.float32)
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def test_float32_patterns_round_to_nearest_even(conversions):
    half, lib, np_dtype = conversions
    rng = np.random.default_rng(20261206)
    bits = rng.integers(0, 1 << 32, size=1 << 20, dtype=np.uint64).astype(np.uint32)
    # Ties and near-ties at the dtype's rounding position, subnormals, the overflow threshold.
    drop = 16 if half == "bf16" else 13
    ties = (bits & ~np.uint32((1 << drop) - 1)) | np.uint32(1 << (drop - 1))
    floats = np.concatenate([bits.view(np.float32), ties.view(np.float32),
                             np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65520.0, 65519.99,
                                       np.finfo(np.float32).max, np.finfo(np.float32).tiny,
                                       6e-8, 3e-8, -2.9802322e-08], np.float32)])
    for n in (floats.size, 16 * 3 + 11):
        got = _narrow(lib, floats[:n], np_dtype)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf is what is checked
            want = floats[:n].astype(np_dtype)
        nan = np.isnan(want.astype(np.float32))
        assert np.array_equal(np.isnan(got.astype(np.float32)), nan)
        mismatch = got[~nan].view(np.uint16) != want[~nan].view(np.uint16)
        assert not mismatch.any(), (f"{int(mismatch.sum())} of {n} differ, first "
                                    f"{floats[:n][~nan][mismatch][:3]!r}")
