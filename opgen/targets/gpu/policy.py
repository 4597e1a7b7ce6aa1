"""The GPU source policy: what a CUDA or Metal kernel may contain, checked before it is compiled.

Two concerns, one list of violations (the C++ policy's Violation, so the gate, the corpus
and the repair prompt treat them alike):

* the sandbox rules every native candidate meets (``opgen.targets.cpp.policy.RULES``: no processes, files,
  network, clocks, inline assembly, output, sanitizer evasion, ...): on the CPU execution layer
  the device code is native code in the verifier's process;
* the emulated subset: what the CPU execution layer runs faithfully. Code outside it is
  rejected with the reason, not run and trusted: warp- and SIMD-group-level operations,
  atomics, memory fences and timers, dynamic parallelism and the CUDA runtime, dynamic shared
  memory, pointers into threadgroup memory, device-side allocation and exceptions, mutable
  statics and device globals, code that detects its compiler, and (Metal) double, half and swizzles.

The launch line is checked here too (``opgen.targets.gpu.launch``).
"""

from __future__ import annotations

import re

from opgen.targets.cpp.policy import RULES, Violation, strip_comments
from opgen.targets.gpu.dialect import Dialect
from opgen.targets.gpu.launch import LaunchError, parse_launch

SUBSET = "the CPU execution layer that verifies GPU kernels runs each thread until it reaches a barrier"

COMMON: tuple[tuple[str, str, str], ...] = (
    # __atomic_* / __sync_* / __c11_atomic_*: the compiler's own atomic builtins, the same thing spelt
    # without a word boundary before "atomic" (the race check's instrumented build has no hooks for them)
    ("atomics", r"\batomic\w*\s*[(<]|\batomic_\w+|\b__atomic_\w+|\b__sync_\w+|\b__c11_atomic\w*",
     "atomics are outside the emulated subset (their ordering across threads and blocks cannot be emulated "
     "faithfully); combine partial results with a reduction in shared memory and a barrier, one block per output"),
    ("allocation", r"\b(malloc|calloc|realloc|free)\s*\(|\bnew\b|\bdelete\b",
     "device code may not allocate memory; use registers, fixed-size local arrays or block-shared arrays"),
    ("exceptions", r"\b(throw|try|catch)\b", "device code has no exceptions; opgen's host code reports errors"),
    ("mutable-static", r"\bstatic\s+(?!const\b|constexpr\b|__device__\b|__forceinline__\b|inline\b|__host__\b)"
     r"(?![^;=(){}]*\()"
     r"|\bthread_local\b",
     "no mutable static or thread_local variables: they outlive the thread and the launch (declare block-shared "
     "arrays with the language's shared qualifier, constants as static const or constexpr)"),
    ("std-library", r"\bstd::", "device code cannot call the C++ standard library; use the device math functions"),
    ("detect-compiler", r"__CUDA_ARCH__|__CUDACC\w*__|__NVCC__|__METAL\w*__|\bOPGEN_\w+|\bopgen_emu\b|__GNUC__|__clang__"
     r"|__cplusplus|__x86_64__|__SANITIZE",
     "code may not detect which compiler or execution layer builds it: the CPU execution layer must run the code "
     "the GPU runs"),
    ("openmp", r"#\s*pragma\s+omp\b", "OpenMP is host parallelism; GPU kernels get their parallelism from the launch"),
    ("virtual", r"\bvirtual\b|\btypeid\b|\bdynamic_cast\b", "no virtual functions or RTTI in device code"),
)

CUDA_RULES: tuple[tuple[str, str, str], ...] = (
    ("warp", r"__shfl\w*|__ballot\w*|__any(_sync)?\s*\(|__all(_sync)?\s*\(|__activemask|__syncwarp|__match_\w+"
     r"|__reduce_\w+|\bwarpSize\b|cooperative_groups|\bcg::|__lane_id",
     f"warp-level intrinsics (shuffles, votes, warp sync, cooperative groups, warpSize) are outside the emulated "
     f"subset: {SUBSET}, so it cannot emulate warp-synchronous code; exchange values through __shared__ memory "
     "with __syncthreads()"),
    ("fence-timer", r"__threadfence\w*|__syncthreads_(count|and|or)\b|__nanosleep|\bclock(64)?\s*\(|globaltimer",
     "memory fences, barrier reductions and timers are outside the emulated subset; use __syncthreads() and "
     "shared memory"),
    ("dynamic-parallelism", r"<<<|\bcuda[A-Z]\w*\s*\(|\bcudaStream\w*|\bcudaEvent\w*",
     "a kernel may not launch kernels or call the CUDA runtime: opgen writes the host side (allocation, copies, "
     "the launch from the @launch line)"),
    ("dynamic-shared", r"\bextern\s+__shared__",
     "dynamic shared memory is outside the emulated subset; declare __shared__ arrays with a constant size "
     "(the block size is a constant of the launch line)"),
    ("shared-initializer", r"__shared__[^;]*=",
     "__shared__ variables cannot be initialized where they are declared; let the threads write them, then "
     "__syncthreads()"),
    ("device-global", r"__managed__|__device__(?:\s+\w+)*\s+\w+\s*(?:\[[^\]]*\]\s*)*(?:=[^;]*)?;",
     "no __device__ or __managed__ global variables: they are state that outlives the launch "
     "(use __constant__ for read-only tables)"),
    ("texture", r"\btex\d?D\w*\s*[<(]|cudaTextureObject_t|\bsurf\dD\w*", "textures and surfaces are outside the "
     "emulated subset; read the input pointers"),
)

METAL_RULES: tuple[tuple[str, str, str], ...] = (
    ("simdgroup", r"\bsimd_\w+|\bquad_\w+|\bsimdgroup\w*|\b\w*_simdgroup\b|\bthreads_per_simdgroup\b",
     f"SIMD-group and quad-group functions are outside the emulated subset: {SUBSET}, so it cannot emulate "
     "SIMD-group-synchronous code; exchange values through threadgroup memory with threadgroup_barrier"),
    ("double", r"\bdouble\b", "Metal has no double; compute in float"),
    ("half", r"\bhalf\d?\b|\bbfloat\d?\b", "half and bfloat are not part of the emulated subset yet; compute in float"),
    ("swizzle", r"\.(?:[xyzw]{2,4}|[rgba]{2,4})\b",
     "vector swizzles (.xy, .rgb, ...) are not emulated; use the components .x .y .z .w one by one"),
    ("threadgroup-pointer", r"\bthreadgroup\s+(?:const\s+)?\w+(?:\s*<[^>]*>)?\s*[*&]",
     "pointers and references into threadgroup memory are outside the emulated subset; declare threadgroup arrays "
     "in the kernel body and index them directly"),
    ("threadgroup-initializer", r"\bthreadgroup\s[^;]*=",
     "threadgroup variables cannot be initialized where they are declared; let the threads write them, then "
     "threadgroup_barrier(mem_flags::mem_threadgroup)"),
    ("texture", r"\btexture\w*\s*<|\bsampler\b|\bimageblock\b|\braytracing\b|\bvisible_function_table\b",
     "textures, samplers, imageblocks and function tables are outside the emulated subset"),
    ("output-metal", r"\bos_log\b", "printing is not allowed; kernels return results only"),
)


def check(source: str, dialect: Dialect, launch_names: tuple[str, ...]) -> list[Violation]:
    """Violations of the sandbox rules, the emulated subset, the include list and the launch line."""
    code = strip_comments(source)
    lines = code.splitlines() or [""]
    found: list[Violation] = []
    for i, line in enumerate(lines, 1):
        m = re.match(r"\s*#\s*include\s*[<\"]([^>\"]+)[>\"]", line)
        if m and m.group(1) not in dialect.std_includes:
            found.append(Violation("include", i, line, f"header <{m.group(1)}> is not on the allow-list for "
                                   f"{dialect.language} kernels ({', '.join(dialect.std_includes)})"))
    own = CUDA_RULES if dialect.target == "cuda" else METAL_RULES
    for rule, pattern, why in RULES + COMMON + own:
        for m in re.finditer(pattern, code):
            line_no = code.count("\n", 0, m.start()) + 1
            found.append(Violation(rule, line_no, lines[line_no - 1], why))
    try:
        parse_launch(source, launch_names)  # the line itself is a comment: read it from the source
    except LaunchError as exc:
        line_no = next((i for i, line in enumerate(source.splitlines(), 1) if "@launch" in line), 1)
        found.append(Violation("launch", line_no, (source.splitlines() or [""])[line_no - 1], str(exc)))
    return sorted(found, key=lambda v: v.line)
