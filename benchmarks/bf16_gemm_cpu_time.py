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

# The C entry points (shared with tests/test_dpbf16.py): the unit includes the answer first.
UNIT = """
#include "{answer}"
#define OPGEN_EXPORT_{export}
#include "{exports}"
"""
EXPORTS = Path(__file__).parent / "bf16_gemm_exports.hpp"

# (op, m, k, n): the specs' bf16 bench shapes, linear's batch shapes flattened to rows
CASES = [("matmul", 1024, 1024, 1024), ("matmul", 640, 384, 1536), ("matmul", 640, 1536, 384),
         ("linear", 640, 384, 1536), ("linear", 1024, 384, 1536), ("linear", 1024, 1536, 384),
         ("linear", 1024, 384, 384), ("linear", 24, 384, 1536), ("linear", 24, 384, 384)]
ANSWER = {("matmul", "plain"): "operator.matmul__bf16.cpp", ("matmul", "dpbf16"): "operator.matmul__bf16@dpbf16.cpp",
          ("linear", "plain"): "torch.nn.functional.linear__bf16_bias.cpp",
          ("linear", "dpbf16"): "torch.nn.functional.linear__bf16_bias@dpbf16.cpp"}


def build(work: Path, op: str, variant: str) -> ctypes.CDLL:
    unit = work / f"{op}-{variant}.cpp"
    unit.write_text(UNIT.format(answer=ANSWERS / ANSWER[op, variant], export=op.upper(), exports=EXPORTS))
    library = unit.with_suffix(".so")
    subprocess.run(["g++", "-std=c++17", "-O3", "-march=native", "-fPIC", "-shared", "-fopenmp",
                    f"-I{ROOT / 'opgen' / 'runtime'}", str(unit), "-o", str(library)], check=True)
    lib = ctypes.CDLL(str(library))
    if op == "matmul":
        lib.bf16_matmul.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int64] * 2 + [ctypes.c_void_p] + [ctypes.c_int64] * 3
    else:
        lib.bf16_linear.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64] * 3
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
            pointers = (x.ctypes.data, y.ctypes.data, bias.ctypes.data, out.ctypes.data)
            times: dict[str, list[float]] = {"torch": [], "dpbf16": [], "plain": []}
            for _ in range(args.rounds):
                for variant in ("plain", "dpbf16"):
                    lib = libs[op, variant]
                    if op == "matmul":
                        call = lambda: lib.bf16_matmul(pointers[0], pointers[1], n, 1, pointers[3], m, k, n)  # noqa: E731
                    else:
                        call = lambda: lib.bf16_linear(*pointers, m, k, n)  # noqa: E731
                    times[variant].append(cpu_ms(call))
                times["torch"].append(cpu_ms(reference))
            med = {name: statistics.median(t) for name, t in times.items()}
            print(f"| {op} | {m} x {k} -> {n} | {med['torch']:.3f} | {med['dpbf16']:.3f} | {med['plain']:.3f} | "
                  f"{med['torch'] / med['dpbf16']:.2f}x | {med['torch'] / med['plain']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
