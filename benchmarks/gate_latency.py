"""Wall time of the admission gate for one elementwise candidate with a warm build cache.

The issue's target: building and verifying one elementwise candidate takes at most
3 s of wall time on this machine once the cache is warm. This runs the whole gate
(policy scan, cached build, development run and admission runs with the default
GateSettings example counts) for numpy.exp f64 and prints the median of N runs.

    python benchmarks/gate_latency.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opgen.admission import GateSettings, build_job, run_gate  # noqa: E402
from opgen.build import build  # noqa: E402
from opgen.spec import load_all  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    spec = load_all(ROOT / "specs")["numpy.exp"]
    overload = spec.overload("f64")
    source = (Path(__file__).parent / "exp_f64_kernel.cpp").read_text()
    settings = GateSettings()
    (warm,) = build([build_job(spec, overload, source)])  # make sure the cache is warm
    if not warm.ok:
        print(warm.diagnostics)
        return 1

    totals, builds = [], []
    for i in range(args.runs):
        started = time.monotonic()
        (built,) = build([build_job(spec, overload, source)])
        build_s = time.monotonic() - started
        gate = run_gate(spec, overload, source, settings, built=built)
        total = time.monotonic() - started
        if not gate.ok:
            print(f"run {i + 1}: the gate rejected the candidate: {gate.feedback}")
            return 1
        runs = ", ".join(f"{v.examples} examples {v.seconds:.2f} s" for v in gate.verdicts)
        print(f"run {i + 1}: build {build_s:.3f} s (cached={built.cached}) + verify [{runs}] = {total:.2f} s")
        totals.append(total)
        builds.append(build_s)

    print(f"median of {args.runs}: {statistics.median(totals):.2f} s per candidate "
          f"(build {statistics.median(builds):.3f} s; {settings.dev_examples} development + "
          f"{settings.admission_runs}x{settings.admission_examples} admission examples; target <= 3 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
