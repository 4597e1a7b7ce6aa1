"""Write the linear answer of the dpbf16 variant from the matmul one (one GEMM, two entry points).

The ``dpbf16`` variant (AVX-512 BF16 dot products on bfloat16 pairs, issue 14 point 6) is one
packed GEMM: ``answers/cpp/operator.matmul__bf16@dpbf16.cpp`` holds it with matmul's entry point.
torch.nn.functional.linear's ``bf16_bias`` overload is the same product with b = weight^T (its
rows contiguous in k, so pairs pack as single words) plus a bias added before the one rounding;
this script writes its answer from the matmul answer's GEMM, unchanged, and linear's entry point,
so that the two kernels cannot drift apart. Both are admitted like any other answer
(``scripts/record_answers.py --target cpp OP__OVERLOAD@dpbf16``), so the gate checks each.

    python scripts/dpbf16_kernels.py          # (re)write the linear answer
    python scripts/dpbf16_kernels.py --check  # exit 1 if it is not what the matmul answer gives
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "answers" / "cpp"
MATMUL = ANSWERS / "operator.matmul__bf16@dpbf16.cpp"
LINEAR = ANSWERS / "torch.nn.functional.linear__bf16_bias@dpbf16.cpp"

# Where the matmul answer's shared GEMM starts and its matmul-only entry point begins.
GEMM_START = '#include "opgen_kernel.hpp"'
ENTRY_START = "void operator_matmul__bf16("

HEADER = """\
// torch.nn.functional.linear, overload bf16_bias, variant dpbf16: out[..., j] =
// bfloat16(sum_p x[..., p] * W[j, p] + b[j]) with AVX-512 BF16 dot products (vdpbf16ps) on the
// bfloat16 inputs as they are stored. Written by scripts/dpbf16_kernels.py: the GEMM below is
// answers/cpp/operator.matmul__bf16@dpbf16.cpp's, unchanged, with b = W^T (W's rows are
// contiguous in k, so each pair of W packs as one 32-bit load) and the bias (float32, exact from
// bfloat16) added to the float32 sum before its one rounding; its comments and numerics are there.
//
// The shim presents weight as (*loop, n, k) and bias as (*loop, n) with input's leading dims in
// front at stride 0; a weight or bias that really varies along a leading dim is not a linear
// layer and throws ValueError. The rows of input (any leading dims, any strides) are found
// through an offset table. k == 0 gives the bias rounded; m == 0 or n == 0 writes nothing.
"""

ENTRY = """\
void torch_nn_functional_linear__bf16_bias(const opgen::Tensor& input, const opgen::Tensor& weight,
                                           const opgen::Tensor& bias, opgen::Tensor& out) {
  const int nd = out.ndim();
  if (nd < 1 || input.ndim() != nd || weight.ndim() != nd + 1 || bias.ndim() != nd)
    throw opgen::Error(opgen::ErrorKind::Value, "linear expects input (..., k), weight (n, k) and bias (n,)");
  int64_t m = 1;
  for (int d = 0; d < nd - 1; ++d) {
    if (out.size(d) > 1 && (weight.stride(d) != 0 || bias.stride(d) != 0))
      throw opgen::Error(opgen::ErrorKind::Value, "linear expects a 2-d weight (out_features, in_features) and a 1-d bias");
    m *= out.size(d);
  }
  const int64_t n = out.size(nd - 1), k = input.size(nd - 1);
  if (m == 0 || n == 0) return;
  Half* C = out.data<Half>();
  // The bias in float32 (exact), padded with zeros to whole panels.
  std::vector<float> b(static_cast<size_t>((n + NR - 1) / NR * NR), 0.0f);
  for (int64_t j = 0; j < n; ++j) b[static_cast<size_t>(j)] = opgen::to_float(bias.data<Half>()[j * bias.stride(nd - 1)]);
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) narrow_row(b.data(), C + i * n, n);
    return;
  }
  // Offsets of the rows of input (its leading dims in row-major order).
  std::vector<int64_t> roff(static_cast<size_t>(m));
  {
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t i = 0; i < m; ++i) {
      roff[static_cast<size_t>(i)] = off;
      for (int d = nd - 2; d >= 0; --d) {
        if (++idx[d] < out.size(d)) {
          off += input.stride(d);
          break;
        }
        off -= input.stride(d) * (out.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int threads = flops >= kThreadFlops ? max_threads() : 1;
  const Work w = Work::sized(m, n, k);
  AlignedBuf<uint32_t> work(w.floats() * static_cast<size_t>(threads));  // here: nothing in the region throws
  const Gemm g{input.data<Half>(), roff.data(), input.stride(nd - 1), weight.data<Half>(), weight.stride(nd),
               weight.stride(nd - 1), b.data(), C, m, n, k};
  gemm(g, threads, work, w);
}

}  // namespace opgen::kernels
"""


def linear_answer() -> str:
    text = MATMUL.read_text()
    start, entry = text.find(GEMM_START), text.find(ENTRY_START)
    if start < 0 or entry < 0:
        sys.exit(f"{MATMUL.relative_to(ROOT)} no longer has {GEMM_START!r} and {ENTRY_START!r}: "
                 "update GEMM_START/ENTRY_START in this script to where its shared GEMM starts and ends")
    return HEADER + text[start:entry] + ENTRY


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the linear answer is out of date")
    args = parser.parse_args()
    want = linear_answer()
    if args.check:
        if not LINEAR.exists() or LINEAR.read_text() != want:
            print(f"{LINEAR.relative_to(ROOT)} is out of date: run python scripts/dpbf16_kernels.py", file=sys.stderr)
            return 1
        return 0
    LINEAR.write_text(want)
    print(f"wrote {LINEAR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
