"""The dpbf16 variant's two code paths (AVX-512 BF16 dot products, and the portable float32 one).

The gate verifies a kernel as this machine builds it (-march=native), so it checks only one of the
variant's paths: the vdpbf16ps one where the CPU has AVX512_BF16, the portable one elsewhere. Here
each answer is also built with -mno-avx512bf16, so both paths are checked on every machine that
builds the first, against float64 products of the same bfloat16 inputs, within the spec's bfloat16
tolerance (k * u of any summation order plus one bfloat16 rounding), on the shapes where packing
can go wrong: odd k (a half-empty last pair), k over one block (float32 partial sums carried
between blocks), tiles cut by m and n, transposed b, nan, and subnormal inputs (which vdpbf16ps
reads as zero, within atol).
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "answers" / "cpp"

# The specs' bfloat16 tolerance for matmul and linear (specs/operator/matmul.yaml, bf16).
RTOL, RTOL_PER_TERM, ATOL = 0.0078175, 6.0e-08, 1.0e-30

# The C entry points (shared with benchmarks/bf16_gemm_cpu_time.py): the unit includes the answer first.
UNIT = """
#include "{answer}"
#define OPGEN_EXPORT_{export}
#include "{exports}"
"""
EXPORTS = ROOT / "benchmarks" / "bf16_gemm_exports.hpp"

PATHS = {"native": ["-march=native"], "portable": ["-march=native", "-mno-avx512bf16"]}


def _build(work: Path, answer: str, export: str, flags: list[str]) -> ctypes.CDLL:
    unit = work / "unit.cpp"
    unit.write_text(UNIT.format(answer=ANSWERS / answer, export=export, exports=EXPORTS))
    library = work / "kernel.so"
    subprocess.run(["g++", "-std=c++17", "-O2", *flags, "-fPIC", "-shared", "-fopenmp",
                    f"-I{ROOT / 'opgen' / 'runtime'}", str(unit), "-o", str(library)],
                   check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(library))


@pytest.fixture(scope="module", params=sorted(PATHS))
def matmul(request, tmp_path_factory):
    lib = _build(tmp_path_factory.mktemp(f"matmul-{request.param}"), "operator.matmul__bf16@dpbf16.cpp", "MATMUL",
                 PATHS[request.param])
    lib.bf16_matmul.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    return lib


@pytest.fixture(scope="module", params=sorted(PATHS))
def linear(request, tmp_path_factory):
    lib = _build(tmp_path_factory.mktemp(f"linear-{request.param}"), "torch.nn.functional.linear__bf16_bias@dpbf16.cpp",
                 "LINEAR", PATHS[request.param])
    lib.bf16_linear.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64] * 3
    return lib


def _draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-4, 4, shape).astype(ml_dtypes.bfloat16)


def _assert_within_tolerance(got: np.ndarray, x: np.ndarray, y: np.ndarray, bias: np.ndarray | None = None) -> None:
    """got ~ x @ y (+ bias), the reference and its magnitude in float64 from the same bfloat16 values."""
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    ref = x64 @ y64
    scale = np.abs(x64) @ np.abs(y64)
    if bias is not None:
        ref += bias.astype(np.float64)
        scale += np.abs(bias.astype(np.float64))
    got = got.astype(np.float64)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan), "nan in the wrong places"
    infinite = np.isinf(ref)
    assert np.array_equal(got[infinite], ref[infinite]), "an infinite result is not the same infinity"
    finite = ~nan & ~infinite
    allowed = (RTOL + RTOL_PER_TERM * x.shape[-1]) * scale + ATOL
    excess = np.abs(got[finite] - ref[finite]) - allowed[finite]
    assert excess.max(initial=-1.0) <= 0, f"{int((excess > 0).sum())} results outside the tolerance"


# (m, k, n): one tile; odd k; tiles cut by m and n; k over one block (KC = 1536) with an odd tail; one row
SHAPES = [(12, 32, 32), (5, 7, 3), (37, 129, 70), (25, 1601, 45), (1, 9, 1)]


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matmul_matches_float64_within_the_bf16_tolerance(matmul, m, k, n):
    rng = np.random.default_rng(m * 10007 + k * 101 + n)
    a, b = _draw(rng, (m, k)), _draw(rng, (k, n))
    out = np.zeros((m, n), ml_dtypes.bfloat16)
    matmul.bf16_matmul(a.ctypes.data, b.ctypes.data, n, 1, out.ctypes.data, m, k, n)
    _assert_within_tolerance(out, a, b)


def test_matmul_reads_a_transposed_b(matmul):
    rng = np.random.default_rng(7)
    m, k, n = 30, 101, 50
    a, bt = _draw(rng, (m, k)), _draw(rng, (n, k))  # b = bt.T: strides (1, k)
    out = np.zeros((m, n), ml_dtypes.bfloat16)
    matmul.bf16_matmul(a.ctypes.data, bt.ctypes.data, 1, k, out.ctypes.data, m, k, n)
    _assert_within_tolerance(out, a, bt.T)


def test_matmul_nan_and_subnormal_inputs(matmul):
    rng = np.random.default_rng(11)
    m, k, n = 20, 65, 40
    a, b = _draw(rng, (m, k)), _draw(rng, (k, n))
    a[3, 64] = np.nan  # the last, half-empty pair
    b[10, 33] = np.nan
    tiny = np.array([1e-39, -3e-40], ml_dtypes.bfloat16)  # bfloat16 subnormals
    a[7, :] = tiny[rng.integers(0, 2, k)]
    out = np.zeros((m, n), ml_dtypes.bfloat16)
    matmul.bf16_matmul(a.ctypes.data, b.ctypes.data, n, 1, out.ctypes.data, m, k, n)
    _assert_within_tolerance(out, a, b)


@pytest.mark.parametrize("m,k,n", [(40, 384, 96), (3, 1537, 17), (24, 33, 384)])
def test_linear_matches_float64_within_the_bf16_tolerance(linear, m, k, n):
    rng = np.random.default_rng(m + k + n)
    x, w, bias = _draw(rng, (m, k)), _draw(rng, (n, k)), _draw(rng, (n,))
    bias[n // 2] = np.inf
    out = np.zeros((m, n), ml_dtypes.bfloat16)
    linear.bf16_linear(x.ctypes.data, w.ctypes.data, bias.ctypes.data, out.ctypes.data, m, k, n)
    _assert_within_tolerance(out, x, w.T, bias)


def test_linear_answer_is_what_the_script_writes_from_matmuls():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "dpbf16_kernels.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
