"""Wall time of the admission gate for one elementwise candidate with a warm build cache.

The target (issue 12): the whole gate for one elementwise candidate, every stage included,
takes a median of at most 20 s of wall time on 2 cores once the build cache is warm. This
runs it (policy scan, cached build and object audit, development run, then the admission runs,
the ASan+UBSan run and the scale stage side by side, with the default GateSettings counts)
for numpy.exp f64, prints each run's stages and the median of N runs. (numpy.exp is not a
threaded op: the thread-count stage, two more runs, adds to threaded ones only.)

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

from opgen.gate.admission import GateSettings, build_job, run_gate  # noqa: E402
from opgen.build.cpp import build  # noqa: E402
from opgen.spec.model import load_all  # noqa: E402


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
        stages = gate.evidence.get("stages", {})
        extra = [f"sanitizer {gate.sanitizer.seconds:.2f} s" if gate.sanitizer else "no sanitizer run"]
        if "seconds" in stages.get("scale", {}):
            extra.append(f"scale {stages['scale']['cases']} cases {stages['scale']['seconds']:.2f} s")
        for run in stages.get("threads", {}).get("runs", []):
            extra.append(f"{run['threads']} threads {run['seconds']:.2f} s")
        print(f"run {i + 1}: build {build_s:.3f} s (cached={built.cached}) + verify [{runs}] beside "
              f"[{', '.join(extra)}] = {total:.2f} s wall")
        totals.append(total)
        builds.append(build_s)

    print(f"median of {args.runs}: {statistics.median(totals):.2f} s per candidate "
          f"(build {statistics.median(builds):.3f} s; {settings.dev_examples} development + "
          f"{settings.admission_runs}x{settings.admission_examples} admission examples, the sanitizer run "
          f"and the scale stage side by side; target: median <= 20 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
