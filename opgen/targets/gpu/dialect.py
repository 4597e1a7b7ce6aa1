"""CUDA and Metal as data: what differs between the two device languages.

Type spellings, qualifiers, how a kernel parameter is written, the barrier, the files;
everything else (the contract, the host code, the gate) is shared and reads these rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from opgen.spec.dtypes import DType
from opgen.errors import SpecError

# Thread positions a Metal kernel receives, in the fixed order of its signature:
# (parameter name, MSL attribute, what it is).
METAL_POSITIONS = (
    ("thread_pos", "thread_position_in_grid", "this thread's position in the grid (group_pos * group_size + local_pos)"),
    ("local_pos", "thread_position_in_threadgroup", "this thread's position in its threadgroup"),
    ("group_pos", "threadgroup_position_in_grid", "this threadgroup's position in the grid"),
    ("group_size", "threads_per_threadgroup", "threads per threadgroup (the launch line's block)"),
    ("grid_groups", "threadgroups_per_grid", "threadgroups per grid (the launch line's grid)"),
)


@dataclass(frozen=True)
class Dialect:
    target: str  # cuda | metal
    language: str  # for people
    suffix: str  # of kernel sources and hand-written answers
    kernel_file: str  # as the registry stores the LLM-written source
    fence: str  # markdown fence language in prompts
    kernel_qualifier: str  # before `void name(`
    size_type: str  # sizes the host passes (32-bit: GPU index arithmetic)
    barrier: str  # how the kernel spells the block barrier
    shared: str  # how it declares block-shared memory
    scalar_types: dict[str, str]  # spec scalar (int, float, bool) -> device type
    element_types: dict[str, str]  # tensor dtype name -> device element type
    emulation_header: str  # the names header the kernel's translation unit starts with
    std_includes: tuple[str, ...]  # includes the source may have (blanked for the emulation build)

    def element(self, dt: DType, where: str) -> str:
        if dt.name not in self.element_types:
            raise SpecError(f"{where} is {dt.name}, which {self.language} kernels cannot take here",
                            hint=f"{self.language} element types: {', '.join(self.element_types)}; leave "
                                 f"{self.target} out of this spec's targets")
        return self.element_types[dt.name]

    def scalar(self, name: str, where: str) -> str:
        if name not in self.scalar_types:
            raise SpecError(f"{where} is a {name}, which {self.language} kernels cannot take",
                            hint=f"{self.language} kernels take tensors and {', '.join(self.scalar_types)} "
                                 f"scalars; leave {self.target} out of this spec's targets")
        return self.scalar_types[name]


CUDA = Dialect(
    target="cuda", language="CUDA", suffix=".cu", kernel_file="kernel.cu", fence="cuda",
    kernel_qualifier="__global__ void", size_type="int", barrier="__syncthreads()",
    shared="__shared__ float tile[16][16];",
    scalar_types={"int": "int64_t", "float": "float", "bool": "bool"},
    element_types={"float32": "float", "float64": "double", "int64": "int64_t", "int32": "int", "uint8": "unsigned char",
                   "bool": "bool"},
    emulation_header="opgen_emu_cuda.hpp",
    std_includes=("cstdint", "cfloat", "climits", "cmath", "math.h", "stdint.h", "float.h", "cuda_runtime.h",
                  "math_constants.h"),
)

# Metal has no double (no float64 tensors or scalars); a float scalar arrives as float.
METAL = Dialect(
    target="metal", language="Metal Shading Language", suffix=".metal", kernel_file="kernel.metal", fence="metal",
    kernel_qualifier="kernel void", size_type="int", barrier="threadgroup_barrier(mem_flags::mem_threadgroup)",
    shared="threadgroup float tile[16][16];",
    scalar_types={"int": "long", "float": "float", "bool": "bool"},
    element_types={"float32": "float", "int64": "long", "int32": "int", "uint8": "uchar", "bool": "bool"},
    emulation_header="opgen_emu_metal.hpp",
    std_includes=("metal_stdlib", "metal_math", "metal_common"),
)

DIALECTS = {"cuda": CUDA, "metal": METAL}


def dialect(target: str) -> Dialect:
    return DIALECTS[target]
