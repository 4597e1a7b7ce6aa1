"""What a call into an `opgen compile`d function costs from Python, against the library call it
replaces, both measured in this run: F.softmax on a small (4, 64) tensor against torch's own, and
a string prefix against Python's `+`. Small inputs, so the figure is the per-call overhead (argument
marshalling through ctypes, the result handed over as an array), not the kernels' speed.

    python benchmarks/compiled_call_overhead.py [--calls 20000] [--rounds 7]

Prints the median of the rounds' per-call times and the ratio compiled / reference (lower is
better; the machines are shared, so read medians from a quiet run).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import textwrap
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from opgen.compiler import compile_many  # noqa: E402
from opgen.host import load_compiled  # noqa: E402
from opgen.project import Project  # noqa: E402

SOURCE = textwrap.dedent('''\
    import torch
    from torch.nn import functional as F
    from typing import Annotated

    def softmax_rows(x: Annotated[torch.Tensor, torch.float32]) -> Annotated[torch.Tensor, torch.float32]:
        return F.softmax(x, dim=-1)

    def prefix(s: str) -> str:
        return "query: " + s
''')


def per_call(fn, calls: int, rounds: int) -> float:
    fn()  # warm: first-use loading, caches
    return statistics.median(t / calls for t in timeit.repeat(fn, number=calls, repeat=rounds))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "calls.py"
        source.write_text(SOURCE)
        compile_many(Project(ROOT), [(source, name, Path(tmp) / name) for name in ("softmax_rows", "prefix")])
        softmax_rows, prefix = load_compiled(Path(tmp) / "softmax_rows"), load_compiled(Path(tmp) / "prefix")
        x = torch.randn(4, 64)
        cases = [
            ("F.softmax (4, 64)", lambda: softmax_rows(x), lambda: torch.nn.functional.softmax(x, dim=-1)),
            ("str prefix", lambda: prefix("capital of France?"), lambda: "query: " + "capital of France?"),
        ]
        print(f"{'case':<20} {'compiled':>12} {'reference':>12} {'ratio':>8}")
        for name, compiled, reference in cases:
            c, r = per_call(compiled, args.calls, args.rounds), per_call(reference, args.calls, args.rounds)
            print(f"{name:<20} {c * 1e6:>10.2f}us {r * 1e6:>10.3f}us {c / r:>7.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
