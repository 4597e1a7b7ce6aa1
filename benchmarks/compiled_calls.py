"""What a call into an `opgen compile`d function costs, against the Python it replaces, all measured
in one run: through both Python hosts (the native CPython entry and ctypes, opgen/host.py) and
from Node.js (clients/node, koffi).

    python benchmarks/compiled_calls.py [--calls 2000] [--rounds 5] [--no-node]

Cases: a trivial function (`noop(n) -> n`: the per-call overhead), a str prefix, a prefixing
comprehension over lists of 1, 100 and 100,000 strings (examples/compile/prompts.py's shape), and
F.softmax over a small (4, 64) and a large (512, 64) float32 tensor against torch's own. Prints
the median over rounds of the per-call time and the ratio compiled / reference (below 1.0 the
compiled call is faster). Node has no torch or Python: its reference column is the Python (torch)
time measured here. The machines are shared: read medians from a quiet run, never a single one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
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

    def noop(n: int) -> int:
        return n

    def prefix(s: str) -> str:
        return "query: " + s

    def prefix_all(text: list[str], p: str = "query: ") -> list[str]:
        return [p + s for s in text]

    def softmax_rows(x: Annotated[torch.Tensor, torch.float32]) -> Annotated[torch.Tensor, torch.float32]:
        return F.softmax(x, dim=-1)
''')
FUNCTIONS = ("noop", "prefix", "prefix_all", "softmax_rows")
NODE_SCRIPT = ROOT / "clients" / "node" / "tools" / "bench_calls.js"


def noop(n: int) -> int:
    return n


def prefix_all(text: list[str], p: str = "query: ") -> list[str]:
    return [p + s for s in text]


def strings(n: int) -> list[str]:
    return [f"what is the capital of country number {i}?" for i in range(n)]


def per_call(fn, calls: int, rounds: int) -> float:
    fn()  # warm: first-use loading, caches
    return statistics.median(t / calls for t in timeit.repeat(fn, number=calls, repeat=rounds))


def cases(calls: int) -> list[tuple[str, int, object, object]]:
    """(name, calls per round, the compiled call given a loaded function set, the reference)."""
    lists = {n: strings(n) for n in (1, 100, 100_000)}
    small, large = torch.randn(4, 64), torch.randn(512, 64)
    softmax = torch.nn.functional.softmax
    return [
        ("noop(int) overhead", calls, lambda f: f["noop"](1), lambda: noop(1)),
        ("str prefix", calls, lambda f: f["prefix"]("capital of France?"), lambda: "query: " + "capital of France?"),
        *[(f"prefix {n} strs", max(calls // n, 3), lambda f, n=n: f["prefix_all"](lists[n]),
           lambda n=n: prefix_all(lists[n])) for n in lists],
        ("softmax (4, 64)", calls, lambda f: f["softmax_rows"](small), lambda: softmax(small, dim=-1)),
        ("softmax (512, 64)", max(calls // 10, 3), lambda f: f["softmax_rows"](large), lambda: softmax(large, dim=-1)),
    ]


def node_times(out: Path, calls: int, rounds: int) -> dict[str, float] | None:
    """Median per-call seconds of each case from Node.js (None where node or koffi is missing)."""
    node = shutil.which("node")
    if node is None or not (ROOT / "clients" / "node" / "node_modules" / "koffi").is_dir():
        return None
    proc = subprocess.run([node, str(NODE_SCRIPT), str(out), str(calls), str(rounds)], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"the Node benchmark failed:\n{proc.stdout}{proc.stderr}")
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per round for the small cases")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-node", action="store_true", help="skip the Node.js host")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "calls.py"
        source.write_text(SOURCE)
        compile_many(Project(ROOT), [(source, name, Path(tmp) / name) for name in FUNCTIONS])
        hosts = {host: {name: load_compiled(Path(tmp) / name, host=host) for name in FUNCTIONS}
                 for host in ("native", "ctypes")}
        table = cases(args.calls)
        node = None if args.no_node else node_times(Path(tmp), args.calls, args.rounds)
        print(f"{'case':<20} {'reference':>11} {'native':>11} {'ratio':>7} {'ctypes':>11} {'ratio':>7}"
              + (f" {'node':>11} {'ratio':>7}" if node else ""))
        for name, calls, compiled, reference in table:
            ref = per_call(reference, calls, args.rounds)
            row = f"{name:<20} {_time(ref):>11}"
            for host in ("native", "ctypes"):
                t = per_call(lambda: compiled(hosts[host]), calls, args.rounds)
                row += f" {_time(t):>11} {t / ref:>6.2f}x"
            if node:
                row += f" {_time(node[name]):>11} {node[name] / ref:>6.2f}x"
            print(row)
    return 0


def _time(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}us" if seconds < 1e-3 else f"{seconds * 1e3:.2f}ms"


if __name__ == "__main__":
    raise SystemExit(main())
