"""The GPU-specific stages of the admission gate: the device build beside the emulated one,
and what the evidence says about where the kernel ran.

A CUDA or Metal candidate meets the same gate as a C++ one (``opgen.admission.run_gate``):
the GPU policy, the build for the CPU execution layer (g++; its object audited like any C++
kernel's), the development run, the ASan+UBSan run and the admission runs, all differential
against the references in the sandbox. Beside them this module compiles the source for the
device: nvcc for Hopper (sm_90) and as compute_80 PTX, or Apple's metal compiler where it
exists. Its errors are compile errors the LLM gets back, like g++'s. An admitted GPU kernel
is ``emulated``: it ran on the CPU execution layer only, never on a device
(``scripts/gpu_check.py`` upgrades it to ``verified`` on a real GPU).
"""

from __future__ import annotations

import threading
from typing import Any

from ..spec import Overload, Spec
from .build import build_cuda, cuda_job, metal_check
from .device_abi import contract
from .dialect import dialect
from .launch import parse_launch

STATUS = "emulated"
EXECUTION = {
    "layer": "cpu-emulation",
    "what": "the device code compiled as C++ against opgen's CUDA/MSL names and run on the CPU: blocks one after "
            "another, each thread of a block as a fiber until it reaches a barrier; odd launches in reverse block "
            "and thread order (the runner's two calls per example compare both orders); device buffers between "
            "guard pages, their tails and all shared memory filled with NaN before use; barriers checked to be "
            "reached by every thread of a block at the same call",
    "proves": "indexing and bounds for the shapes tested, the reduction and its rounding, barrier placement "
              "(missing, divergent, early returns), order-independence of the result, the launch geometry",
    "does_not_prove": "behaviour on a device: races that only instruction-level interleaving shows, memory "
                      "ordering, warp-level behaviour, device float intrinsics' rounding, resource limits "
                      "(registers, shared memory size), speed",
    "see": "opgen/gpu/README.md",
}


class DeviceBuild(threading.Thread):
    """Compile the candidate for the device while the CPU execution layer builds and verifies it."""

    def __init__(self, spec: Spec, overload: Overload, source: str, target: str):
        super().__init__(daemon=True)
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
        self.join()
        if self.error:
            return f"the device build could not run: {self.error}"
        r = self.result
        if r is None or not r.ran or r.ok:
            return None
        what = ("nvcc (CUDA, sm_90 and compute_80 PTX)" if self.target == "cuda"
                else "Apple's metal compiler (xcrun metal)")
        return f"{what} rejected the source (the CPU execution layer's build compiled it):\n{r.diagnostics}"

    def record(self) -> dict[str, Any]:
        self.join()
        if self.error:
            return {"ran": False, "note": self.error}
        return self.result.record()


def evidence(spec: Spec, overload: Overload, source: str, target: str, device: DeviceBuild) -> dict[str, Any]:
    """What an admitted GPU entry's evidence adds: where it ran, the device build, the launch line."""
    c = contract(spec, overload, dialect(target))
    return {"execution": dict(EXECUTION), "device_build": device.record(),
            "launch": parse_launch(source, c.launch_names).text}
