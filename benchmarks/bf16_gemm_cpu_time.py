"""One-thread CPU time of the bfloat16 GEMM kernels (plain and dpbf16) beside torch's, on MiniLM shapes.

`opgen bench` reports wall time, which on a loaded machine measures the scheduler as much as the
kernel (docs/speed.md). This measures what each call costs the CPU that runs it: the calling
thread's CPU time (time.thread_time) around one call, on one thread (OMP_NUM_THREADS=1 and
torch.set_num_threads(1)), so time spent descheduled is not counted. Each round calls the plain
kernel, the dpbf16 kernel and torch once, interleaved; the median of the rounds is printed. The
kernels are the answers in answers/cpp/ (the ones the registry holds), built here with the gate's
-O3 -march=native, called through a small C export.

    python benchmarks/bf16_gemm_cpu_time.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["OMP_NUM_THREADS"] = "1"  # before the kernels' OpenMP runtime starts

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "answers" / "cpp"

EXPORTS = """
#include "{answer}"
namespace {{
opgen::Tensor view(void* p, int nd, int64_t* shape, int64_t* strides) {{
  opgen_tensor raw{{}};
  raw.data = p;
  raw.device = opgen_device{{1, 0}};
  raw.ndim = nd;
  raw.dtype = opgen_dtype{{4, 16, 1}};  // kDLBfloat
  raw.shape = shape;
  raw.strides = strides;
  return opgen::Tensor(raw);
}}
}}  // namespace
{entry}
"""

MATMUL = """
extern "C" void run(void* a, void* b, void* bias, void* out, int64_t m, int64_t k, int64_t n) {
  (void)bias;
  int64_t sa[2] = {m, k}, sb[2] = {k, n}, so[2] = {m, n};
  opgen::Tensor o = view(out, 2, so, nullptr);
  opgen::kernels::operator_matmul__bf16(view(a, 2, sa, nullptr), view(b, 2, sb, nullptr), o);
}
"""

LINEAR = """
extern "C" void run(void* x, void* w, void* bias, void* out, int64_t m, int64_t k, int64_t n) {
  int64_t sx[2] = {m, k}, sw[3] = {m, n, k}, tw[3] = {0, k, 1}, sb[2] = {m, n}, tb[2] = {0, 1}, so[2] = {m, n};
  opgen::Tensor o = view(out, 2, so, nullptr);
  opgen::kernels::torch_nn_functional_linear__bf16_bias(view(x, 2, sx, nullptr), view(w, 3, sw, tw), view(bias, 2, sb, tb), o);
}
"""

# (op, m, k, n): the specs' bf16 bench shapes, linear's batch shapes flattened to rows
CASES = [("matmul", 1024, 1024, 1024), ("matmul", 640, 384, 1536), ("matmul", 640, 1536, 384),
         ("linear", 640, 384, 1536), ("linear", 1024, 384, 1536), ("linear", 1024, 1536, 384),
         ("linear", 1024, 384, 384), ("linear", 24, 384, 1536), ("linear", 24, 384, 384)]
ANSWER = {("matmul", "plain"): "operator.matmul__bf16.cpp", ("matmul", "dpbf16"): "operator.matmul__bf16@dpbf16.cpp",
          ("linear", "plain"): "torch.nn.functional.linear__bf16_bias.cpp",
          ("linear", "dpbf16"): "torch.nn.functional.linear__bf16_bias@dpbf16.cpp"}


def build(work: Path, op: str, variant: str) -> ctypes.CDLL:
    unit = work / f"{op}-{variant}.cpp"
    unit.write_text(EXPORTS.format(answer=ANSWERS / ANSWER[op, variant], entry=MATMUL if op == "matmul" else LINEAR))
    library = unit.with_suffix(".so")
    subprocess.run(["g++", "-std=c++17", "-O3", "-march=native", "-fPIC", "-shared", "-fopenmp",
                    f"-I{ROOT / 'opgen' / 'runtime'}", str(unit), "-o", str(library)], check=True)
    lib = ctypes.CDLL(str(library))
    lib.run.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64] * 3
    return lib


def cpu_ms(call) -> float:
    start = time.thread_time()
    call()
    return (time.thread_time() - start) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        libs = {key: build(Path(tmp), *key) for key in ANSWER}
        print(f"load average {os.getloadavg()[0]:.1f}; one thread; median CPU ms of {args.rounds} interleaved rounds")
        print("| op | m x k -> n | torch | dpbf16 | plain | torch / dpbf16 | torch / plain |")
        print("|---|---|---|---|---|---|---|")
        for op, m, k, n in CASES:
            x = rng.uniform(-1, 1, (m, k)).astype(ml_dtypes.bfloat16)
            y = rng.uniform(-1, 1, (k, n) if op == "matmul" else (n, k)).astype(ml_dtypes.bfloat16)
            bias = rng.uniform(-1, 1, n).astype(ml_dtypes.bfloat16)
            out = np.zeros((m, n), ml_dtypes.bfloat16)
            tx, ty, tb = (torch.from_numpy(v.view(np.int16)).view(torch.bfloat16) for v in (x, y, bias))
            reference = (lambda: tx @ ty) if op == "matmul" else (lambda: torch.nn.functional.linear(tx, ty, tb))
            args_ = (x.ctypes.data, y.ctypes.data, bias.ctypes.data, out.ctypes.data, m, k, n)
            times: dict[str, list[float]] = {"torch": [], "dpbf16": [], "plain": []}
            for _ in range(args.rounds):
                times["plain"].append(cpu_ms(lambda: libs[op, "plain"].run(*args_)))
                times["dpbf16"].append(cpu_ms(lambda: libs[op, "dpbf16"].run(*args_)))
                times["torch"].append(cpu_ms(reference))
            med = {name: statistics.median(t) for name, t in times.items()}
            print(f"| {op} | {m} x {k} -> {n} | {med['torch']:.3f} | {med['dpbf16']:.3f} | {med['plain']:.3f} | "
                  f"{med['torch'] / med['dpbf16']:.2f}x | {med['torch'] / med['plain']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
