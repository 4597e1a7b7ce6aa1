"""Verify and benchmark the registry's CUDA kernels on a real GPU; record the evidence.

The one prepared device run (issue 8): builds every CUDA entry with nvcc, verifies it on the
device with the gate's Hypothesis examples, checks the device-memory path, times it beside
torch on the same device (matmul at 4096^3, attention at EmbeddingGemma's shapes, pooling),
and records the result in each entry: a pass upgrades ``emulated`` to ``verified`` with this
device's evidence. Without a GPU it stops at once with exit status 1 and says so; the CUDA
variants then stay ``emulated``. Written to finish well under 10 minutes on one H200.

    python scripts/gpu_check.py                 # everything
    python scripts/gpu_check.py --examples 50 --no-bench --op operator.matmul
    python scripts/gpu_check.py --no-record     # look, do not touch the registry
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opgen.errors import OpgenError  # noqa: E402
from opgen.targets.gpu.device_check import run  # noqa: E402
from opgen.project import Project  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="Hypothesis examples per kernel on the device")
    parser.add_argument("--no-bench", action="store_true", help="skip the timings beside torch")
    parser.add_argument("--op", action="append", help="only this op (repeatable)")
    parser.add_argument("--no-record", action="store_true", help="do not write the results into the registry")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    args = parser.parse_args()
    try:
        summary = run(Project(ROOT), examples=args.examples, bench=not args.no_bench, ops=args.op,
                      record=not args.no_record, report=lambda s: print(s, file=sys.stderr))
    except OpgenError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
    print(f"{summary['passed']} passed, {summary['failed']} failed on {summary['device']['name']}; "
          f"results in {summary['written']}", file=sys.stderr)
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
