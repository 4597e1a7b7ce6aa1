"""Half precision (float16, bfloat16) as storage dtypes with float32 arithmetic: the dtype table,
the runtime's bfloat16 conversions against ml_dtypes, the half references, the executor's dtype
tokens, and the Rust target's n/a."""

from __future__ import annotations

import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from opgen.compiler.driver import compile_function
from opgen.half_references import half_ulp_rtol, softmax, widened
from opgen.host import load_compiled
from opgen.project import Project
from opgen.spec.dtypes import DTYPES, dtype, floating
from opgen.spec.model import load_all
from opgen.targets.catalog import target_for
from opgen.verify.executor import dtype_token

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "opgen" / "runtime"


def test_bfloat16_is_a_half_float_dtype_with_numpys_ml_dtypes_type() -> None:
    bf16 = dtype("bfloat16")
    assert bf16.np == np.dtype(ml_dtypes.bfloat16) and bf16.is_float and bf16.is_half and bf16.bits == 16
    assert bf16.dl_code == 4  # DLPack's kDLBfloat
    assert dtype("float16").is_half and not dtype("float32").is_half
    assert floating(np.dtype("bfloat16")) and floating(np.dtype(np.float16)) and not floating(np.dtype(np.int16))
    assert half_ulp_rtol("float16") == 2.0 ** -10 and half_ulp_rtol("bfloat16") == 2.0 ** -7


def test_the_executor_names_bfloat16_by_name_and_numpy_dtypes_by_str() -> None:
    assert dtype_token(np.dtype("bfloat16")) == "bfloat16" and np.dtype("bfloat16") == np.dtype(ml_dtypes.bfloat16)
    assert dtype_token(np.dtype(np.float16)) == "<f2" and dtype_token(np.dtype(np.int64)) == "<i8"


CONVERT = r"""
#include <cstdio>
#include <vector>
#include "opgen_kernel.hpp"
int main() {
  std::vector<float> in;
  float f;
  while (std::fread(&f, sizeof f, 1, stdin) == 1) in.push_back(f);
  for (float x : in) {
    const opgen::bfloat16 h = opgen::to_bfloat16(x);
    const float back = opgen::to_float(h);
    std::fwrite(&h.bits, sizeof h.bits, 1, stdout);
    std::fwrite(&back, sizeof back, 1, stdout);
  }
}
"""


def test_the_runtimes_bfloat16_conversions_round_as_ml_dtypes_does(tmp_path: Path) -> None:
    src = tmp_path / "convert.cpp"
    src.write_text(CONVERT)
    exe = tmp_path / "convert"
    subprocess.run(["g++", "-std=c++17", "-O2", f"-I{RUNTIME}", str(src), "-o", str(exe)], check=True)
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32)
    # ties (the low half exactly 0x8000, odd and even upper halves), subnormals, infinities, nans
    ties = (rng.integers(0, 2**16, size=4096, dtype=np.uint32) << 16) | 0x8000
    special = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001,
                        0x00000001, 0x007FFFFF, 0x7F7FFFFF, 0x7F7F8000, 0x3F808000, 0x3F818000], dtype=np.uint32)
    x = np.concatenate([bits, ties, special]).view(np.float32)
    out = subprocess.run([str(exe)], input=x.tobytes(), capture_output=True, check=True).stdout
    got = np.frombuffer(out, dtype=np.dtype([("bits", "<u2"), ("back", "<f4")]))
    with np.errstate(invalid="ignore"):  # the nans: ml_dtypes warns, and keeps them nan
        want = x.astype(ml_dtypes.bfloat16)
    nan = np.isnan(x)
    assert np.array_equal(got["bits"][~nan], want[~nan].view(np.uint16))
    assert np.all(np.isnan(got["back"][nan]))  # a nan stays a nan (quiet), of its sign
    assert np.array_equal(np.signbit(got["back"][nan]), np.signbit(x[nan]))
    assert np.array_equal(got["back"][~nan], want[~nan].astype(np.float32))


@pytest.mark.parametrize("half", [np.float16, ml_dtypes.bfloat16])
def test_a_half_reference_is_the_float32_one_rounded_once(half) -> None:
    import torch  # the float32 reference is torch's softmax; torch is slow to import

    x = np.random.default_rng(1).normal(size=(3, 17)).astype(half)
    got = softmax(x, -1)
    assert got.dtype == np.dtype(half)
    want = torch.softmax(torch.from_numpy(x.astype(np.float32)), -1).numpy().astype(half)
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
    # without a half input (the spec check's wider evaluation) the float32 reference's own result
    assert softmax(x.astype(np.float64), -1).dtype == np.float64
    assert widened("operator.add")(x, x).dtype == np.dtype(half)


def test_half_overloads_are_n_a_for_rust_and_served_in_cpp() -> None:
    rust = target_for("rust")
    halves = [(s, o) for s in load_all(ROOT / "specs").values() for o in s.overloads
              if any(p.type.dtype is not None and p.type.dtype.is_half for p in o.sig.tensor_params)]
    ops = {s.op for s, _ in halves}
    assert {"operator.add", "operator.mul", "operator.matmul", "torch.nn.functional.linear",
            "torch.nn.functional.softmax", "torch.nn.functional.layer_norm", "opgen.nn.gemma_rms_norm",
            "opgen.nn.attention"} <= ops
    for s, o in halves:
        assert "no stable" in (rust.unsupported(s, o) or ""), (s.op, o.name)
        assert target_for("cpp").unsupported(s, o) is None
    assert {d.name for d in DTYPES.values() if d.is_half} == {"float16", "bfloat16"}


HALF_FUNCTION = '''
import numpy as np
import numpy.typing as npt


def half_logits(h: npt.NDArray[np.float16], w: npt.NDArray[np.float16]) -> npt.NDArray[np.float16]:
    return h @ w + h @ w
'''


def test_a_compiled_function_keeps_float16_arrays_float16(tmp_path: Path) -> None:
    src = tmp_path / "half.py"
    src.write_text(HALF_FUNCTION)
    compile_function(Project(ROOT), src, "half_logits", tmp_path / "out")
    rng = np.random.default_rng(2)
    h, w = rng.normal(size=(6, 40)).astype(np.float16), rng.normal(size=(40, 5)).astype(np.float16)
    got = load_compiled(tmp_path / "out")(h, w)
    want = (h.astype(np.float32) @ w.astype(np.float32)).astype(np.float16)
    want = (want.astype(np.float32) * 2).astype(np.float16)
    assert got.dtype == np.float16 and got.shape == (6, 5)
    assert np.allclose(got.astype(np.float32), want.astype(np.float32), rtol=2 * 2.0 ** -10, atol=1e-3)
