"""CUDA and Metal targets: the launch line, the device contract, the GPU policy, the response
models, the CPU execution layer (results, barriers, schedules, bounds), the gate on GPU sources,
the nvcc build and the real-device host code without a device, the registry's emulated and
n/a states, and the device check's refusal without a GPU."""

from __future__ import annotations

import ctypes
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from opgen.gate.admission import GateSettings, run_gate
from opgen.build.cpp import build
from opgen.cli import app
from opgen.verify.ffi import Kernel, KernelError
from opgen.targets.gpu import policy as gpu_policy
from opgen.targets.gpu.admission import RACE_RECORD, explain_race
from opgen.targets.gpu.build import build_cuda, build_racecheck, cuda_job, emulation_job, nvcc
from opgen.targets.gpu.device_abi import contract
from opgen.targets.gpu.dialect import CUDA, METAL
from opgen.targets.gpu.host import render_cuda_host, render_emulated_host
from opgen.targets.gpu.launch import LaunchError, parse_launch
from opgen.service import status_rows
from opgen.targets.catalog import target_for
from opgen.project import PACKAGE_ROOT, Project
from opgen.registry import Registry
from opgen.spec.model import load_all
from opgen.verify.harness import Limits

ROOT = PACKAGE_ROOT
SPECS = load_all(ROOT / "specs")
MATMUL = SPECS["operator.matmul"]
ATTENTION = SPECS["opgen.nn.scaled_dot_product_attention"]
AVG_POOL = SPECS["torch.nn.functional.avg_pool2d"]
ANSWERS = sorted((ROOT / "answers").glob("cuda/*.cu")) + sorted((ROOT / "answers").glob("metal/*.metal"))
FAST = GateSettings(dev_examples=30, admission_examples=20, admission_runs=1, sanitizer_examples=0,
                    limits=Limits(cpu_seconds=60, wall_seconds=120.0))
MATMUL_HEAD = ("__global__ void operator_matmul__f32(const float* __restrict__ a, const float* __restrict__ b, "
               "float* __restrict__ out, int batch, int m, int k, int n)")


# ------------------------------------------------------------------ the launch line

def test_launch_line_renders_checked_int64_arithmetic():
    rule = parse_launch("// @launch grid=(ceil_div(n, 16), m // 2 + 1, batch) block=(16, 16)\n", ("batch", "m", "n"))
    assert rule.block == (16, 16, 1) and rule.threads == 256
    assert rule.grid[0] == "opgen::gpu::ceil_div(int64_t{n}, int64_t{16})"
    assert rule.grid[1] == "opgen::gpu::add(opgen::gpu::floor_div(int64_t{m}, int64_t{2}), int64_t{1})"
    assert parse_launch("//@launch grid=batch, block=256", ("batch",)).grid == ("int64_t{batch}", "1", "1")


@pytest.mark.parametrize("line,message", [
    ("", "has no launch line"),
    ("// @launch grid=(x) block=(16)", "names `x`"),
    ("// @launch grid=(n) block=(64, 32)", "2048 threads"),
    ("// @launch grid=(n) block=(n)", "positive integer constants"),
    ("// @launch grid=(n ** 2) block=(16)", "is not allowed"),
    ("// @launch grid=(n)", "exactly grid=(...) and block=(...)"),
    ("// @launch grid=(n) block=(1)\n// @launch grid=(n) block=(1)", "more than one"),
])
def test_launch_line_errors_say_what_to_write(line, message):
    with pytest.raises(LaunchError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        parse_launch(line, ("n",))


# ------------------------------------------------------------------ the device contract

def test_contract_spells_the_kernel_for_each_language():
    cuda = contract(MATMUL, MATMUL.overload("f32"), CUDA)
    assert " ".join(cuda.declaration().split()).replace("( ", "(") == MATMUL_HEAD
    assert cuda.function_type() == "void (*)(const float*, const float*, float*, int, int, int, int)"
    metal = contract(ATTENTION, ATTENTION.overload("f32"), METAL)
    text = metal.declaration()
    assert "device const long* key_mask [[buffer(3)]]" in text and "constant float& scale [[buffer(13)]]" in text
    assert text.rstrip(")").endswith("uint3 grid_groups [[threadgroups_per_grid]]")
    assert metal.launch_names == ("batch", "h", "s", "d", "g", "t", "e", "window")
    # the spec's declared ValueError (Hq % Hkv) becomes a host-side check
    assert metal.checks == (("opgen_dim_g == 0 || opgen_dim_h % opgen_dim_g != 0",
                             ATTENTION.overload("f32").raises[0].when),)


def test_metal_has_no_float64_and_list_says_n_a():
    from opgen.targets.catalog import target_for

    assert "float64" in target_for("metal").unsupported(MATMUL, MATMUL.overload("f64"))
    assert target_for("cuda").unsupported(MATMUL, MATMUL.overload("f64")) is None
    rows = {(r.op, r.overload, r.target): r for r in status_rows(Project(ROOT), SPECS)}
    assert rows[("operator.matmul", "f64", "metal")].status == "n/a"


def test_host_code_is_pure_and_keeps_the_c_abi():
    o = AVG_POOL.overload("f32")
    emulated, device = render_emulated_host(AVG_POOL, o, "cuda"), render_cuda_host(AVG_POOL, o)
    assert emulated == render_emulated_host(AVG_POOL, o, "cuda")  # spec in, text out
    symbol = 'int32_t opgen_torch_nn_functional_avg_pool2d__f32(const opgen_tensor* input, int64_t kernel_h'
    assert symbol in emulated and symbol in device
    assert "padding should be at most half of the kernel size" in emulated  # the pool2d rule's checks
    assert "<<<opgen::gpu::grid_of(opgen_launch), opgen::gpu::block_of(opgen_launch)>>>" in device
    assert "cudaMemcpy" not in emulated


# ------------------------------------------------------------------ policy and response models

@pytest.mark.parametrize("answer", ANSWERS, ids=lambda p: p.name)
def test_every_shipped_gpu_answer_is_inside_the_subset(answer):
    op, overload = answer.stem.split("__")
    spec = SPECS[op]
    c = contract(spec, spec.overload(overload), CUDA if answer.suffix == ".cu" else METAL)
    assert gpu_policy.check(answer.read_text(), c.dialect, c.launch_names) == []


@pytest.mark.parametrize("snippet,rule", [
    ("x = __shfl_down_sync(0xffffffff, x, 1);", "warp"),
    ("if (threadIdx.x < warpSize) {}", "warp"),
    ("atomicAdd(out, 1.0f);", "atomics"),
    ("__atomic_fetch_add((int*)out, 1, 0);", "atomics"),  # the compiler's builtins: no race-check hooks either
    ("__sync_fetch_and_add((int*)out, 1);", "atomics"),
    ("__threadfence();", "fence-timer"),
    ("extern __shared__ float dyn[];", "dynamic-shared"),
    ("__shared__ float t[4] = {0};", "shared-initializer"),
    ("__device__ float counter;", "device-global"),
    ("k<<<1, 1>>>(out);", "dynamic-parallelism"),
    ("cudaMalloc(&p, 4);", "dynamic-parallelism"),
    ('asm("mov.u32 %0, %%laneid;" : "=r"(x));', "asm"),
    ('printf("%f", x);', "output"),
    ("float* p = new float[4];", "allocation"),
    ("static float carry;", "mutable-static"),
    ("#ifdef __CUDA_ARCH__\n#endif", "detect-compiler"),
    ("#include <thrust/sort.h>", "include"),
])
def test_cuda_policy_rejects_what_the_layer_cannot_emulate(snippet, rule):
    source = f"// @launch grid=(n) block=(32)\n{MATMUL_HEAD} {{\n  {snippet}\n}}\n"
    found = gpu_policy.check(source, CUDA, ("batch", "m", "k", "n"))
    assert rule in {v.rule for v in found}, found


@pytest.mark.parametrize("snippet,rule", [
    ("float s = simd_sum(x);", "simdgroup"),
    ("double y = x;", "double"),
    ("half y = x;", "half"),
    ("float2 v = a.xy;", "swizzle"),
    ("threadgroup float* p = tile;", "threadgroup-pointer"),
    ("threadgroup float t[4] = {0, 0, 0, 0};", "threadgroup-initializer"),
    ("atomic_fetch_add_explicit(c, 1, memory_order_relaxed);", "atomics"),
])
def test_metal_policy_rejects_what_the_layer_cannot_emulate(snippet, rule):
    source = f"// @launch grid=(n) block=(32)\n#include <metal_stdlib>\nkernel void f() {{\n  {snippet}\n}}\n"
    assert rule in {v.rule for v in gpu_policy.check(source, METAL, ("n",))}


def test_response_models_check_name_and_launch_line():
    ctx = {"kernel_name": "operator_matmul__f32", "launch_names": ["batch", "m", "k", "n"]}
    good = (ROOT / "answers/cuda/operator.matmul__f32.cu").read_text()
    assert target_for("cuda").answer_model.model_validate({"source": good}, context=ctx).source == good
    with pytest.raises(ValidationError, match="no launch line"):
        target_for("cuda").answer_model.model_validate({"source": good.replace("@launch", "launch")}, context=ctx)
    with pytest.raises(ValidationError, match="__global__ void operator_matmul__f32"):
        target_for("cuda").answer_model.model_validate({"source": good.replace("__global__", "")}, context=ctx)
    metal = (ROOT / "answers/metal/operator.matmul__f32.metal").read_text()
    assert target_for("metal").answer_model.model_validate({"source": metal}, context=ctx)
    with pytest.raises(ValidationError, match="no main"):
        target_for("metal").answer_model.model_validate({"source": metal + "\nint main() { return 0; }"}, context=ctx)


# ------------------------------------------------------------------ the CPU execution layer, in process

def emulated(source: str, target: str = "cuda", spec=MATMUL, overload: str = "f32") -> Kernel:
    o = spec.overload(overload)
    built = build([emulation_job(spec, o, target, source)])[0]
    assert built.ok, built.diagnostics
    return Kernel(ctypes.CDLL(str(built.library)), f"opgen_{contract(spec, o, CUDA).name}", o.sig)


def matmul_kernel(body: str, launch: str = "grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)") -> str:
    return f"// @launch {launch}\n{MATMUL_HEAD} {{\n{body}\n}}\n"


@pytest.mark.parametrize("answer", ["cuda/operator.matmul__f32.cu", "metal/operator.matmul__f32.metal"])
def test_tiled_matmul_runs_on_the_layer_with_broadcast_and_strided_inputs(answer):
    kernel = emulated((ROOT / "answers" / answer).read_text(), Path(answer).parent.name)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 1, 37, 21)).astype(np.float32)
    b = rng.standard_normal((3, 17, 21)).astype(np.float32).transpose(0, 2, 1)  # strided
    out = kernel([a, b], out=np.full((2, 3, 37, 17), np.nan, np.float32))
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    empty = kernel([a[:, :, :0], b], out=np.empty((2, 3, 0, 17), np.float32))
    assert empty.shape == (2, 3, 0, 17)
    zeros = kernel([a[..., :0], b[:, :0]], out=np.full((2, 3, 37, 17), np.nan, np.float32))
    assert (zeros == 0).all()  # k == 0: every thread writes its zero


def test_early_return_before_a_barrier_is_reported_with_the_line():
    source = (ROOT / "verification/corpus/matmul_f32_cuda_early_return.cu").read_text()
    kernel = emulated(source)
    with pytest.raises(KernelError, match=r"barrier misuse in block .* waits at __syncthreads\(\) at kernel\.cu:\d+ "
                                          r"but thread .* has returned"):
        kernel([np.ones((20, 3), np.float32), np.ones((3, 5), np.float32)], out=np.empty((20, 5), np.float32))


def test_barriers_in_divergent_branches_are_reported():
    body = """  if (threadIdx.x % 2) { __syncthreads(); } else { __syncthreads(); }
  const int i = blockIdx.x * 16 + threadIdx.x, j = blockIdx.y * 16 + threadIdx.y;
  if (i < n && j < m) out[j * n + i] = 0.0f;"""
    kernel = emulated(matmul_kernel(body))
    with pytest.raises(KernelError, match="threads wait at different barriers"):
        kernel([np.ones((2, 2), np.float32), np.ones((2, 2), np.float32)], out=np.empty((2, 2), np.float32))


def test_order_dependent_results_differ_between_the_two_schedules():
    # Every thread of the block writes out[0]; without order the last writer wins, and the
    # layer's second launch runs the threads in reverse, so the two calls disagree.
    body = """  if (m > 0 && n > 0) out[0] = (float)(threadIdx.y * 16 + threadIdx.x);
  const int i = blockIdx.x * 16 + threadIdx.x, j = blockIdx.y * 16 + threadIdx.y;
  if (i < n && j < m && (i || j)) out[j * n + i] = 1.0f;"""
    kernel = emulated(matmul_kernel(body))
    a, b = np.ones((3, 3), np.float32), np.ones((3, 3), np.float32)
    first = kernel([a, b], out=np.empty((3, 3), np.float32))[0, 0]
    second = kernel([a, b], out=np.empty((3, 3), np.float32))[0, 0]
    assert {first, second} == {0.0, 255.0}


def test_unwritten_outputs_keep_the_callers_prefill_and_unwritten_shared_memory_reads_as_nan():
    """The device output starts as the caller's out (the verifier varies it from call to call, so
    an all-NaN output is no tell of a verification call); shared memory starts as 0xff (NaN)."""
    body = """  __shared__ float tile[16][16];
  const int i = blockIdx.x * 16 + threadIdx.x, j = blockIdx.y * 16 + threadIdx.y;
  if (i < n && j < m && i > 0) out[j * n + i] = tile[threadIdx.y][threadIdx.x];"""
    prefill = np.arange(6, dtype=np.float32).reshape(2, 3) + 7
    out = emulated(matmul_kernel(body))([np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)],
                                        out=prefill.copy())
    assert (out[:, 0] == prefill[:, 0]).all()  # never written: what the caller put there
    assert np.isnan(out[:, 1:]).all()  # written from shared memory nobody wrote


def test_a_write_past_the_end_of_a_device_buffer_is_reported():
    body = """  if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) out[batch * m * n] = 1.0f;  // one past
  const int i = blockIdx.x * 16 + threadIdx.x, j = blockIdx.y * 16 + threadIdx.y;
  if (i < n && j < m) out[j * n + i] = 0.0f;"""
    kernel = emulated(matmul_kernel(body))
    with pytest.raises(KernelError, match="wrote past the end of device buffer `out`"):
        kernel([np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)], out=np.empty((2, 3), np.float32))


def test_launch_geometry_limits_are_checked_at_launch():
    kernel = emulated(matmul_kernel("  if (m < 0) out[0] = 0.0f;", launch="grid=(1, n * 70000) block=(1)"))
    with pytest.raises(KernelError, match="blocks in y"):
        kernel([np.ones((1, 1), np.float32), np.ones((1, 1), np.float32)], out=np.empty((1, 1), np.float32))


def test_declared_errors_are_raised_by_the_host_code():
    kernel = emulated((ROOT / "answers/cuda/opgen.nn.scaled_dot_product_attention__f32.cu").read_text(), "cuda",
                      ATTENTION)
    q, k = np.ones((3, 4, 8), np.float32), np.ones((2, 4, 8), np.float32)
    with pytest.raises(ValueError, match="do not divide the query heads"):
        kernel([q, k, k, np.ones(4, np.int64), 0, 0.5], out=np.empty((3, 4, 8), np.float32))
    pool = emulated((ROOT / "answers/cuda/torch.nn.functional.avg_pool2d__f32.cu").read_text(), "cuda", AVG_POOL)
    with pytest.raises(ValueError, match="padding should be at most half"):
        pool([np.ones((2, 5, 5), np.float32), 2, 2, 1, 1, 2, 0], out=np.empty((2, 0, 0), np.float32))


# ------------------------------------------------------------------ the race check

def race_checked(source: str, target: str = "cuda", spec=MATMUL, overload: str = "f32") -> tuple[Kernel, Path]:
    """The race-check build of a kernel (instrumented, opgen's race detector), loaded in process."""
    o = spec.overload(overload)
    job = emulation_job(spec, o, target, source)
    normal = build([job])[0]
    assert normal.ok, normal.diagnostics
    race = build_racecheck(job, normal)
    assert race.ok, race.diagnostics
    name = contract(spec, o, CUDA if target == "cuda" else METAL).name
    return Kernel(ctypes.CDLL(str(race.library)), f"opgen_{name}", o.sig), race.library


RACY = """  __shared__ float sums[16];
  const int i = blockIdx.x * 16 + threadIdx.x, j = blockIdx.y * 16 + threadIdx.y;
  if (threadIdx.y == 0) sums[threadIdx.x] = 0.0f;
  __syncthreads();
  sums[threadIdx.x] += 1.0f;
  __syncthreads();
  if (i < n && j < m) {
    float acc = sums[threadIdx.x] - 16.0f;  // 0: every thread of the column added its 1
    const long long z = blockIdx.z;
    for (int t = 0; t < k; ++t) acc += a[(z * m + j) * k + t] * b[(z * k + t) * n + i];
    out[(z * m + j) * n + i] = acc;
  }"""


def test_the_race_check_names_both_accesses_threads_and_interval():
    # Sixteen threads of a column add into one shared slot between two barriers: 16 on the layer
    # (every thread runs to the barrier alone), so the matmul comes out right; on a GPU increments
    # are lost. The normal build cannot tell.
    source = matmul_kernel(RACY)
    a, b = np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)
    assert (emulated(source)([a, b], out=np.empty((3, 5), np.float32)) == 4).all()
    kernel, library = race_checked(source)
    records = []
    for _ in range(2):  # the forward and the reverse schedule both see it
        with pytest.raises(KernelError, match="shared-memory data race") as info:
            kernel([a, b], out=np.empty((3, 5), np.float32))
        records.append(RACE_RECORD.search(str(info.value)))
    assert all(records) and records[0]["now_tid"] != records[1]["now_tid"]
    text = explain_race(records[0], library, "kernel.cu", "__syncthreads()")
    line = 3 + RACY.splitlines().index("  sums[threadIdx.x] += 1.0f;")  # after the launch line and the head
    assert f"thread (0, 1, 0) reads `sums` (byte 0 of its 64) at kernel.cu:{line}" in text
    assert f"thread (0, 0, 0) wrote the same byte at kernel.cu:{line}" in text
    assert f"from __syncthreads() at kernel.cu:{line - 1} to __syncthreads() at kernel.cu:{line + 1}" in text


def test_the_race_check_sees_metal_threadgroup_memory():
    source = (ROOT / "verification/corpus/max_pool2d_f32_metal_threadgroup_max_race.metal").read_text()
    pool = SPECS["torch.nn.functional.max_pool2d"]
    kernel, library = race_checked(source, "metal", pool)
    with pytest.raises(KernelError, match="shared-memory data race") as info:
        kernel([np.arange(32, dtype=np.float32).reshape(2, 4, 4), 4, 4, 4, 4, 0, 0], out=np.empty((2, 1, 1), np.float32))
    text = explain_race(RACE_RECORD.search(str(info.value)), library, "kernel.metal",
                        "threadgroup_barrier(mem_flags::mem_threadgroup)")
    assert "`best`" in text and "kernel.metal:51" in text and "threadgroup_barrier(mem_flags::mem_threadgroup) at kernel.metal:" in text


@pytest.mark.parametrize("answer", ["cuda/operator.matmul__f32.cu", "metal/operator.matmul__f32.metal"])
def test_a_kernel_with_its_barriers_passes_the_race_check(answer):
    # The tiled matmul: every tile element written by one thread, read by others only after the
    # barrier, overwritten only after the next one; two tiles of k, partial blocks, both schedules.
    kernel, _ = race_checked((ROOT / "answers" / answer).read_text(), Path(answer).parent.name)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 19, 37)).astype(np.float32), rng.standard_normal((37, 21)).astype(np.float32)
    for _ in range(2):
        out = kernel([a, b], out=np.full((2, 19, 21), np.nan, np.float32))
        np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_the_gate_rejects_a_race_at_stage_racecheck_with_the_lines():
    settings = GateSettings(dev_examples=10, admission_examples=10, admission_runs=1, sanitizer_examples=3,
                            limits=Limits(cpu_seconds=60, wall_seconds=120.0))
    gate = run_gate(MATMUL, MATMUL.overload("f32"), matmul_kernel(RACY), settings, target="cuda")
    assert (gate.ok, gate.stage) == (False, "racecheck"), gate.feedback
    assert "shared-memory data race" in gate.feedback and "`sums`" in gate.feedback
    assert re.search(r"kernel\.cu:\d+, and thread .* kernel\.cu:\d+", gate.feedback)


# ------------------------------------------------------------------ the gate

def test_a_wrong_metal_kernel_is_rejected_with_a_counterexample():
    source = (ROOT / "verification/corpus/matmul_f32_metal_drops_last_tile.metal").read_text()
    gate = run_gate(MATMUL, MATMUL.overload("f32"), source, FAST, target="metal")
    assert (gate.ok, gate.stage) == (False, "verify")
    assert "first mismatch" in gate.feedback and "Counterexample" in gate.feedback


def test_a_gpu_answer_passes_the_gate_as_emulated_with_its_device_build():
    source = (ROOT / "answers/cuda/torch.nn.functional.avg_pool2d__f32.cu").read_text()
    gate = run_gate(AVG_POOL, AVG_POOL.overload("f32"), source, FAST, target="cuda")
    assert gate.ok, gate.feedback
    ev = gate.evidence
    assert ev["execution"]["layer"] == "cpu-emulation" and ev["launch"].startswith("// @launch")
    if nvcc() is not None:
        assert ev["device_build"]["ran"] and ev["device_build"]["ok"]


def test_nvcc_errors_reach_the_repair_loop_as_compile_errors():
    if nvcc() is None:
        pytest.skip("nvcc (the CUDA toolkit) is not installed here")
    # Right on the CPU layer, not valid CUDA: g++ sees a plain function; nvcc refuses to call a
    # __host__ function from a __global__ one.
    source = (ROOT / "answers/cuda/operator.matmul__f32.cu").read_text().replace(
        "#define TILE 16", "#define TILE 16\n__host__ float host_only() { return 0.0f; }").replace(
        "float acc = 0.0f;", "float acc = host_only();")
    gate = run_gate(MATMUL, MATMUL.overload("f32"), source, FAST, target="cuda")
    assert (gate.ok, gate.stage) == (False, "compile")
    assert "nvcc" in gate.feedback and "host_only" in gate.feedback


def test_the_device_library_checks_arguments_and_fails_cleanly_without_a_gpu():
    if nvcc() is None:
        pytest.skip("nvcc (the CUDA toolkit) is not installed here")
    o = MATMUL.overload("f32")
    built = build_cuda([cuda_job(MATMUL, o, (ROOT / "answers/cuda/operator.matmul__f32.cu").read_text())])[0]
    assert built.ok, built.diagnostics
    kernel = Kernel(ctypes.CDLL(str(built.library)), "opgen_operator_matmul__f32", o.sig)
    with pytest.raises(ValueError, match="core dimension k differs"):  # checked before any CUDA call
        kernel([np.ones((2, 3), np.float32), np.ones((4, 2), np.float32)], out=np.empty((2, 2), np.float32))
    assert kernel([np.ones((0, 3), np.float32), np.ones((3, 2), np.float32)],
                  out=np.empty((0, 2), np.float32)).shape == (0, 2)
    if shutil.which("nvidia-smi") is None:
        with pytest.raises(KernelError, match="CUDA error in cudaMalloc"):
            kernel([np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)], out=np.empty((2, 2), np.float32))


# ------------------------------------------------------------------ registry, list, device check

def test_list_shows_the_gpu_variants_emulated():
    result = CliRunner().invoke(app, ["list", "--json", "--root", str(ROOT)])
    rows = json.loads(result.stdout)
    emulated_rows = {(r["op"], r["overload"], r["target"]) for r in rows if r["status"] == "emulated"}
    for op in ("operator.matmul", "opgen.nn.scaled_dot_product_attention", "torch.nn.functional.avg_pool2d",
               "torch.nn.functional.max_pool2d"):
        for target in ("cuda", "metal"):
            assert (op, "f32", target) in emulated_rows, (op, target)
    for entry in Registry(ROOT / "generated").entries():
        if entry.target in ("cuda", "metal") and entry.data["status"] == "verified":
            assert any(run["passed"] for run in entry.data.get("device_runs", [])), "verified only by a device run"


def test_a_device_run_upgrades_emulated_to_verified(tmp_path):
    shutil.copytree(ROOT / "generated" / "cuda" / "operator.matmul", tmp_path / "cuda" / "operator.matmul")
    registry = Registry(tmp_path)
    entry = registry.get("operator.matmul", "f32", "cuda")
    assert entry.status(MATMUL)[0] == "emulated"
    failed = registry.record_device_run(entry, {"device": "NVIDIA H200", "passed": False})
    assert failed.status(MATMUL)[0] == "emulated"
    passed = registry.record_device_run(entry, {"device": "NVIDIA H200", "passed": True})
    assert passed.status(MATMUL)[0] == "verified" and passed.data["verified_on"] == "NVIDIA H200"
    assert [r["passed"] for r in passed.data["device_runs"]] == [False, True]


def test_gpu_check_without_a_gpu_says_so_and_fails():
    if shutil.which("nvidia-smi") is not None:
        pytest.skip("this machine has a GPU: scripts/gpu_check.py would run for real")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_check.py"), "--no-record"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "no CUDA device" in done.stderr and "stay emulated" in done.stderr


def test_the_file_exchange_reads_cu_and_metal_answers(tmp_path):
    from opgen.llm.providers import FileProvider, Request
    from opgen.prompts import render_request

    o = MATMUL.overload("f32")
    for target, answer in (("cuda", "answers/cuda/operator.matmul__f32.cu"),
                           ("metal", "answers/metal/operator.matmul__f32.metal")):
        request = Request(MATMUL.op, "f32", target, render_request(ROOT / "prompts", MATMUL, o, target),
                          {"kernel_name": "operator_matmul__f32", "launch_names": ["batch", "m", "k", "n"]})
        provider = FileProvider(tmp_path)
        with pytest.raises(Exception, match=f"answer.{'cu' if target == 'cuda' else 'metal'}"):
            provider.complete(request)  # the prompt is written; the hint names the answer file
        prompt = next(tmp_path.glob(f"*.{target}.*.prompt.md"))
        assert "@launch" in prompt.read_text() and "operator_matmul__f32" in prompt.read_text()
        suffix = ".cu" if target == "cuda" else ".metal"
        shutil.copy(ROOT / answer, prompt.with_name(prompt.name.replace(".prompt.md", f".answer{suffix}")))
        reply = provider.complete(request)
        assert reply.answer.source == (ROOT / answer).read_text() and reply.provenance["provider"] == "file"
