"""The GPU-specific stages of the admission gate: the device build beside the emulated one,
and what the evidence says about where the kernel ran.

A CUDA or Metal candidate meets the same gate as a C++ one (``opgen.gate.admission.run_gate``):
the GPU policy, the build for the CPU execution layer (g++; its object audited like any C++
kernel's), the development run, the ASan+UBSan run and the admission runs, all differential
against the references in the sandbox. Beside them this module compiles the source for the
device: nvcc for Hopper (sm_90) and as compute_80 PTX, or Apple's metal compiler where it
exists. Its errors are compile errors the LLM gets back, like g++'s. An admitted GPU kernel
is ``emulated``: it ran on the CPU execution layer only, never on a device
(``scripts/gpu_check.py`` upgrades it to ``verified`` on a real GPU).

``RaceCheck`` is the stage ``racecheck``: the race-check build (``opgen.targets.gpu.build.build_racecheck``,
the kernel instrumented so that every shared-memory access is checked) run on a fixed-seed
sample beside the development run; two threads of a block touching one shared byte in one
barrier interval, one of them writing, reject the kernel with both sites (``explain_race``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from opgen.spec.abi import c_symbol
from opgen.spec.model import Overload, Spec
from opgen.targets.base import SideCheck
from opgen.verify.harness import Verdict, verify_library
from opgen.targets.gpu.build import RACECHECK_FLAGS, RaceBuild, build_cuda, build_racecheck, cuda_job, emulation_job, metal_check
from opgen.targets.gpu.device_abi import contract
from opgen.targets.gpu.dialect import dialect
from opgen.targets.gpu.launch import parse_launch

STATUS = "emulated"
EXECUTION = {
    "layer": "cpu-emulation",
    "what": "the device code compiled as C++ against opgen's CUDA/MSL names and run on the CPU: blocks one after "
            "another, each thread of a block as a fiber until it reaches a barrier; odd launches in reverse block "
            "and thread order (the runner's two calls per example compare both orders); device buffers between "
            "guard pages, their tails and all shared memory filled with NaN before use; barriers checked to be "
            "reached by every thread of a block at the same call; in the race-check build every shared-memory access "
            "checked against every other thread's in the same barrier interval",
    "proves": "indexing and bounds for the shapes tested, the reduction and its rounding, barrier placement "
              "(missing, divergent, early returns), no shared-memory data race between the threads of a block "
              "(for the shapes the race check ran), order-independence of the result, the launch geometry",
    "does_not_prove": "behaviour on a device: races through global memory or between blocks, memory ordering, "
                      "warp-level behaviour, device float intrinsics' rounding, resource limits (registers, "
                      "shared memory size), speed",
    "see": "opgen/targets/gpu/README.md",
}


class DeviceBuild(SideCheck):
    """Compile the candidate for the device while the CPU execution layer builds and verifies it.
    Its failure is a compile error, reported before a failed development run."""

    stage = "compile"
    compile_error = True
    needs_build = False

    def __init__(self, spec: Spec, overload: Overload, source: str, target: str):
        super().__init__()
        self.spec, self.overload, self.source, self.target = spec, overload, source, target
        self.result: Any = None
        self.error: str | None = None

    def run(self) -> None:
        try:
            if self.target == "cuda":
                self.result = build_cuda([cuda_job(self.spec, self.overload, self.source)])[0]
            else:
                self.result = metal_check(self.source)
        except Exception as exc:  # a broken toolchain must reach the gate's verdict, not vanish in a thread
            self.error = f"{type(exc).__name__}: {exc}"

    def failure(self) -> str | None:
        """Compile feedback when the device compiler rejected the source; None when it passed or did not run."""
        self.finish()
        if self.error:
            return f"the device build could not run: {self.error}"
        r = self.result
        if r is None or not r.ran or r.ok:
            return None
        what = ("nvcc (CUDA, sm_90 and compute_80 PTX)" if self.target == "cuda"
                else "Apple's metal compiler (xcrun metal)")
        return f"{what} rejected the source (the CPU execution layer's build compiled it):\n{r.diagnostics}"

    def record(self) -> dict[str, Any]:
        self.finish()
        if self.error:
            return {"ran": False, "note": self.error}
        return self.result.record()

    def evidence(self) -> dict[str, Any]:
        return {"device_build": self.record()}


def evidence(spec: Spec, overload: Overload, source: str, target: str) -> dict[str, Any]:
    """What an admitted GPU entry's evidence adds beyond its side checks': where it ran, the launch line."""
    c = contract(spec, overload, dialect(target))
    return {"execution": dict(EXECUTION), "launch": parse_launch(source, c.launch_names).text}


# --- the race check ---------------------------------------------------------------------

RACECHECK_EXAMPLES = int(os.environ.get("OPGEN_RACECHECK_EXAMPLES", 30))
RACE_RECORD = re.compile(
    r"shared-memory data race \{opgen-race b=(?P<block>[\d.]+) i=(?P<interval>\d+) o=(?P<opened>\d+) "
    r"c=(?P<closed>\d+) a=0x(?P<addr>[0-9a-f]+) n=(?P<size>\d+) now=(?P<now>[RW]),(?P<now_tid>[\d.]+),"
    r"0x(?P<now_pc>[0-9a-f]+) before=(?P<before>[RW]),(?P<before_tid>[\d.]+),0x(?P<before_pc>[0-9a-f]+)\}")


class RaceCheck(SideCheck):
    """Build (cached) and run the race-check variant on a fixed-seed sample while the development
    run goes on; the GPU counterpart of the gate's sanitizer run (stage "racecheck")."""

    stage = "racecheck"

    def __init__(self, spec: Spec, overload: Overload, source: str, target: str, *, seed: int, examples: int,
                 limits: Any):
        super().__init__(enabled=examples > 0,
                         disabled_note="disabled (sanitizer_examples=0: the gate's checked runs are off)")
        self.spec, self.overload, self.source, self.target = spec, overload, source, target
        self.symbol = c_symbol(spec.op, overload.name)
        self.examples = RACECHECK_EXAMPLES
        self.seed, self.limits = seed, limits
        self.built: RaceBuild | None = None

    def run(self) -> None:
        try:
            self.built = build_racecheck(emulation_job(self.spec, self.overload, self.target, self.source),
                                         self.normal_build)
        except Exception as exc:  # a broken toolchain must reach the verdict, not vanish in a thread
            self.verdict = Verdict(False, "racecheck", f"the race-check build could not run: {type(exc).__name__}: {exc}")
            return
        if not self.built.ok:
            self.verdict = Verdict(False, "racecheck", "the race-check build (the kernel compiled with "
                                   "-fsanitize=thread instrumentation against opgen's race detector) did not compile "
                                   "although the normal build did:\n" + self.built.diagnostics)
            return
        if self.cancel.is_set():
            return
        v = verify_library(self.built.library, self.symbol, self.spec.path, self.overload.name, seed=self.seed,
                           max_examples=self.examples, limits=self.limits, cancel=self.cancel)
        if not v.ok and (m := RACE_RECORD.search(v.message)):
            d = dialect(self.target)
            v = dataclasses.replace(v, kind="race", message=explain_race(m, self.built.library, d.kernel_file,
                                                                         d.barrier))
        self.verdict = v

    def feedback(self, v: Verdict) -> str:
        if v.kind == "race":
            return ("The race check (the kernel run on the CPU execution layer with every shared-memory access "
                    f"checked, {self.examples} examples of a fixed seed) found a data race:\n" + v.as_feedback())
        return ("The race-check build of the kernel (instrumented, -Og) failed where the normal build passed:\n"
                + v.as_feedback())

    def evidence(self) -> dict[str, Any]:
        return {"racecheck": self.record()}

    def record(self) -> dict[str, Any]:
        return self.sampled_record(
            flags=RACECHECK_FLAGS, libtsan=False,
            what="two threads of a block, one shared-memory byte, one barrier interval, at least one write",
            build_seconds=round(self.built.seconds, 3) if self.built else None,
            cached=self.built.cached if self.built else None, cache_key=self.built.key if self.built else None)


def _code_lines(library: Path, pcs: list[str], kernel_file: str) -> list[str]:
    """file:line of each code offset: the innermost inlined frame in the kernel's own file (a
    helper the kernel wrote is named where the access is, an opgen header's vector type where
    the kernel used it); the innermost frame when none is."""
    try:
        out = subprocess.run(["addr2line", "-a", "-i", "-e", str(library), *pcs], capture_output=True, text=True,
                             timeout=20).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return [f"offset {pc} of the kernel library" for pc in pcs]
    groups: list[list[str]] = []
    for line in out:
        if line.startswith("0x"):
            groups.append([])
        elif groups:
            groups[-1].append(line.split(" ")[0])
    found = []
    for pc, frames in zip(pcs, groups + [[]] * (len(pcs) - len(groups))):
        named = [f for f in frames if not f.startswith("??")]
        ours = [f for f in named if Path(f.rsplit(":", 1)[0]).name == kernel_file]
        best = (ours or named or [""])[0]
        found.append(f"{Path(best.rsplit(':', 1)[0]).name}:{best.rsplit(':', 1)[1]}" if best
                     else f"offset {pc} of the kernel library")
    return found


def _shared_array(library: Path, addr: int) -> str:
    """The shared array that holds a library offset, as `name` (byte i of n), from the symbol table."""
    try:
        out = subprocess.run(["nm", "-C", "-S", "--defined-only", str(library)], capture_output=True, text=True,
                             timeout=20).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        out = []
    for line in out:
        parts = line.split(" ", 3)
        if len(parts) < 4 or parts[2].lower() not in ("d", "b"):
            continue
        start, size = int(parts[0], 16), int(parts[1], 16)
        if start <= addr < start + size:
            return f"`{parts[3].rsplit('::', 1)[-1]}` (byte {addr - start} of its {size})"
    return "shared memory"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def explain_race(m: re.Match, library: Path, kernel_file: str, barrier: str) -> str:
    """The runtime's compact race record (opgen_emu_racecheck.hpp) as a message an LLM can repair from."""
    now_line, before_line = _code_lines(library, [f"0x{m['now_pc']}", f"0x{m['before_pc']}"], kernel_file)
    where = _shared_array(library, int(m["addr"], 16))

    def tid(text: str) -> str:
        return "(" + ", ".join(text.split(".")) + ")"

    opened = f"{barrier} at {kernel_file}:{m['opened']}" if int(m["opened"]) else "the kernel's start"
    closed = f"{barrier} at {kernel_file}:{m['closed']}" if int(m["closed"]) else "the kernel's end"
    verb = {"R": ("reads", "read"), "W": ("writes", "wrote")}
    kind = {("W", "W"): "write-write", ("R", "W"): "write-read", ("W", "R"): "read-write"}[(m["now"], m["before"])]
    return (f"shared-memory data race ({kind}) in block {tid(m['block'])}: thread {tid(m['now_tid'])} "
            f"{verb[m['now']][0]} {where} at {now_line}, and thread {tid(m['before_tid'])} {verb[m['before']][1]} the "
            f"same byte at {before_line}, in the same barrier interval (the {_ordinal(int(m['interval']) + 1)} of the "
            f"block: from {opened} to {closed}), with no barrier between them. On a GPU the threads of a block run "
            "at the same time, so what is read or left there depends on their timing; the CPU execution layer runs "
            "them one after another, so the values may have come out right here (the race check looks at the "
            "accesses, as compute-sanitizer's racecheck does, not at the values). Between two barriers a shared "
            "byte may be touched by several threads only if none of them writes it: give each thread its own "
            "element (accumulate in a register, then write once), put a barrier that every thread reaches between "
            "one thread's write and another's read or write, and combine per-thread values with a tree reduction "
            "with a barrier after every level")
