"""The CUDA target: a __global__ kernel; nvcc compiles it for the device (sm_90 and compute_80
PTX) beside the CPU execution layer's build, and the entry keeps the generated CUDA host code."""

from __future__ import annotations

import shutil
import subprocess

from opgen.llm.response import CudaKernelAnswer
from opgen.spec.model import Overload, Spec
from opgen.targets.gpu.host import render_cuda_host
from opgen.targets.gpu.target import GpuTarget


class CudaTarget(GpuTarget):
    name = "cuda"
    language = "CUDA"
    names = "CUDA"
    shim_file = "shim.cpp"
    answer_model = CudaKernelAnswer

    def extra_files(self, spec: Spec, overload: Overload) -> dict[str, tuple[str, str]]:
        return {"device_shim": ("device_shim.cu", render_cuda_host(spec, overload))}

    def missing_hardware(self) -> str | None:
        smi = shutil.which("nvidia-smi")
        if smi is None:
            return "no CUDA device on this machine (nvidia-smi not found)"
        try:
            listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"no CUDA device on this machine (nvidia-smi -L failed: {exc})"
        return None if listed.returncode == 0 and "GPU" in listed.stdout else "no CUDA device on this machine"


TARGET = CudaTarget()
