"""The Metal target: a Metal Shading Language kernel; Apple's metal compiler checks it beside the
CPU execution layer's build where it exists (macOS)."""

from __future__ import annotations

import sys

from opgen.llm.response import MetalKernelAnswer
from opgen.targets.gpu.target import GpuTarget


class MetalTarget(GpuTarget):
    name = "metal"
    language = "Metal Shading Language"
    names = "MSL"
    shim_file = "shim.cpp"
    answer_model = MetalKernelAnswer

    def missing_hardware(self) -> str | None:
        return None if sys.platform == "darwin" else "Metal needs macOS (this machine runs " + sys.platform + ")"


TARGET = MetalTarget()
