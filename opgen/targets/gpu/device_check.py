"""Verification and benchmarks of the CUDA registry entries on a real device (``scripts/gpu_check.py``).

One short run on a machine with an NVIDIA GPU:

1. find the device (torch's CUDA, else ``nvidia-smi``); without one, stop with an error that
   says the CUDA variants stay ``emulated``;
2. build every CUDA entry's kernel with its generated device host code (nvcc, sm_90 + compute_80
   PTX; ``opgen.targets.gpu.build``), in one parallel ninja run;
3. verify each on the device with the gate's own Hypothesis examples and comparison
   (``opgen.verify.runner``, the kernel called in this process: the candidates already passed the
   sandboxed gate on the CPU execution layer, and a device cannot be driven from inside the
   sandbox), through the host-memory path, then once through device memory (torch CUDA tensors,
   used in place) against the host-memory result;
4. time the kernels beside torch on the same device (CUDA events, median of rounds): matmul at
   4096^3 against torch.matmul, attention at EmbeddingGemma's shapes against
   scaled_dot_product_attention, pooling at the specs' bench shapes;
5. record each result in its registry entry (``Registry.record_device_run``): a pass makes the
   entry ``verified`` with this device's evidence and figures.

Nothing here runs without a GPU; ``tests/test_gpu_targets.py`` checks what can be checked without
one (the no-device error, the nvcc builds, the host code's argument checks in the nvcc-built
library).
"""

from __future__ import annotations

import ctypes
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np

from opgen.spec.abi import c_symbol
from opgen.gate.admission import dev_seed, library_versions
from opgen.errors import OpgenError
from opgen.verify.ffi import ERROR_KINDS, C_SCALAR, DataType, Device, ErrorInfo, Kernel, KernelError, TensorView
from opgen.project import Project
from opgen.registry import Entry, Registry
from opgen.spec.model import Spec, load_all
from opgen.targets.gpu.build import CudaBuildResult, build_cuda, cuda_job
from opgen.verify import runner
from opgen.spec.model import BenchCase

NO_DEVICE_HINT = ("run it on a machine with an NVIDIA GPU (a CUDA build of torch helps: it provides the baselines "
                  "and device tensors); until then the CUDA variants stay emulated")


class NoDevice(OpgenError):
    pass


def detect_device() -> dict[str, Any]:
    """The CUDA device this run uses, or NoDevice saying why there is none."""
    info: dict[str, Any] = {}
    try:
        # torch (seconds to import) only in the device checks that compare with it
        import torch

        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(0)
            return {**info, "name": props.name, "capability": f"{props.major}.{props.minor}",
                    "memory_gib": round(props.total_memory / 2**30, 1), "torch_has_cuda": True,
                    "driver": _smi("--query-gpu=driver_version")}
    except ImportError:
        info["torch"] = None
    smi = shutil.which("nvidia-smi")
    if smi is None:
        raise NoDevice("no CUDA device: nvidia-smi is not on this machine and torch "
                       f"{info.get('torch') or '(not installed)'} reports no GPU "
                       f"(torch.version.cuda = {info.get('torch_cuda')})", hint=NO_DEVICE_HINT)
    name = _smi("--query-gpu=name")
    if not name:
        raise NoDevice("no CUDA device: nvidia-smi lists no GPU", hint=NO_DEVICE_HINT)
    return {**info, "name": name.splitlines()[0], "driver": _smi("--query-gpu=driver_version"), "torch_has_cuda": False}


def _smi(query: str) -> str:
    try:
        out = subprocess.run(["nvidia-smi", query, "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


@dataclass
class EntryCheck:
    entry: Entry
    spec: Spec
    build: CudaBuildResult | None = None
    verify: dict[str, Any] = field(default_factory=dict)
    device_tensors: dict[str, Any] = field(default_factory=dict)
    bench: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.build and self.build.ok and self.verify.get("ok") and self.device_tensors.get("ok", True))

    def record(self, device: dict[str, Any]) -> dict[str, Any]:
        return {"device": device.get("name"), "device_info": device, "passed": self.passed,
                "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "kernel_sha256": self.entry.data["files"]["kernel"]["sha256"],
                "build": self.build.record() if self.build else None, "verify": self.verify,
                "device_tensors": self.device_tensors, "benchmark": self.bench,
                "libraries": library_versions(self.spec.reference_for(self.spec.overload(self.entry.overload))),
                "how": "scripts/gpu_check.py: the gate's Hypothesis examples and comparison on the device (host-memory "
                       "path), one device-memory round trip, CUDA-event timings beside torch on the same device"}


def cuda_entries(project: Project, specs: dict[str, Spec], ops: list[str] | None = None) -> list[EntryCheck]:
    out = []
    for e in Registry(project.generated).entries():
        if e.target != "cuda" or (ops and e.op not in ops):
            continue
        status, _ = e.status(specs.get(e.op))
        if status in ("emulated", "verified"):
            out.append(EntryCheck(e, specs[e.op]))
    return out


def build_all(checks: list[EntryCheck]) -> None:
    jobs = [cuda_job(c.spec, c.spec.overload(c.entry.overload), c.entry.file("kernel").read_text()) for c in checks]
    for c, r in zip(checks, build_cuda(jobs)):
        c.build = r


def verify_on_device(c: EntryCheck, examples: int) -> None:
    """The gate's examples and comparison (runner._hypothesis through runner.run), the kernel in this process."""

    overload = c.spec.overload(c.entry.overload)
    kernel = Kernel(ctypes.CDLL(str(c.build.library)), c_symbol(c.spec.op, overload.name), overload.sig)
    seed = dev_seed(c.spec, overload) ^ 0x9E3779B9  # not the admission seeds: examples the CPU layer never ran
    with tempfile.TemporaryDirectory(prefix="opgen-gpu-check-") as tmp:
        job = {"seed": seed, "max_examples": examples, "symbol": c_symbol(c.spec.op, overload.name)}
        started = time.monotonic()
        result = runner.run(job, Path(tmp), c.spec, overload, kernel=kernel)
    c.verify = {**result, "seed": seed, "seconds": round(time.monotonic() - started, 3)}


# --- device tensors (torch CUDA tensors used in place) ------------------------------------

def torch_view(t: Any, keep: list) -> TensorView:
    """An opgen_tensor over a torch tensor's memory (CPU or CUDA), strides in elements."""
    # torch (seconds to import) only in the device checks that compare with it
    import torch

    code, bits = {torch.float32: (2, 32), torch.float64: (2, 64), torch.int64: (0, 64), torch.int32: (0, 32)}[t.dtype]
    shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
    strides = (ctypes.c_int64 * max(t.dim(), 1))(*t.stride())
    keep += [shape, strides, t]
    device = Device(2, t.device.index or 0) if t.is_cuda else Device(1, 0)
    return TensorView(t.data_ptr(), device, t.dim(), DataType(code, bits, 1), shape, strides, 0)


def call_torch(kernel: Kernel, args: list[Any], out: Any) -> None:
    keep: list = []
    cargs: list = []
    for p, value in zip(kernel.sig.params, args):
        cargs.append(ctypes.byref(torch_view(value, keep)) if p.type.is_tensor else C_SCALAR[p.type.name](value))
    err = ErrorInfo()
    status = kernel.fn(*cargs, ctypes.byref(torch_view(out, keep)), ctypes.byref(err))
    if status:
        raise ERROR_KINDS.get(status, KernelError)(err.message.decode("utf-8", "replace"))


def bench_args(spec: Spec, overload_name: str, case: Any, rng: np.random.Generator) -> list[Any]:
    """A bench case's arguments as NumPy values (tensors drawn in the case's range)."""
    overload = spec.overload(overload_name)
    args = []
    for p in overload.sig.params:
        v = case.args[p.name]
        if p.type.is_tensor:
            dt = p.type.dtype.np
            if np.issubdtype(dt, np.integer):
                args.append(rng.integers(int(v.min), int(v.max), size=v.shape, endpoint=True).astype(dt))
            else:
                args.append(rng.uniform(v.min, v.max, size=v.shape).astype(dt))
        else:
            args.append(v)
    return args


def device_round_trip(c: EntryCheck) -> None:
    """The in-place device-memory path on the first bench case (or a small matmul): same result as the host path."""
    # torch (seconds to import) only in the device checks that compare with it
    import torch

    overload = c.spec.overload(c.entry.overload)
    if not overload.bench:
        c.device_tensors = {"ran": False, "note": "the spec has no bench case to size the round trip"}
        return
    kernel = Kernel(ctypes.CDLL(str(c.build.library)), c_symbol(c.spec.op, overload.name), overload.sig)
    args = bench_args(c.spec, overload.name, overload.bench[0], np.random.default_rng(0))
    shape = overload.rule.output_shape({p.name: a for p, a in zip(overload.sig.params, args)},
                                       [p.name for p in overload.sig.tensor_params])
    host = kernel(args, out=np.empty(shape, dtype=overload.sig.returns.dtype.np))
    dev_args = [torch.from_numpy(np.ascontiguousarray(a)).cuda() if isinstance(a, np.ndarray) else a for a in args]
    dev_out = torch.empty(shape, dtype=torch.from_numpy(host[:0]).dtype, device="cuda")
    call_torch(kernel, dev_args, dev_out)
    torch.cuda.synchronize()
    same = bool(np.array_equal(dev_out.cpu().numpy(), host, equal_nan=True))
    c.device_tensors = {"ran": True, "ok": same, "case": overload.bench[0].name,
                        "note": "device-memory result equals the host-memory result bit for bit" if same else
                                "device-memory and host-memory results differ"}


# --- benchmarks ------------------------------------------------------------------------------

def cuda_time(fn: Callable[[], None], rounds: int = 20) -> float:
    """Median seconds of fn on the device (CUDA events), after a warm-up."""
    # torch (seconds to import) only in the device checks that compare with it
    import torch

    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def baseline(op: str) -> Callable[..., Any]:
    """What a kernel is timed against on the device: torch's own implementation."""
    # torch (seconds to import) only in the device checks that compare with it
    import torch
    import torch.nn.functional as F

    def sdpa(q, k, v, key_mask, window, scale):
        s, t = q.shape[-2], k.shape[-2]
        visible = (key_mask != 0)[:, None, None, :].expand(-1, 1, s, t)
        if window > 0:
            i = torch.arange(s, device=q.device)[:, None]
            j = torch.arange(t, device=q.device)[None, :]
            visible = visible & ((i - j).abs() < window)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=visible, scale=scale, enable_gqa=True)

    return {
        "operator.matmul": lambda a, b: torch.matmul(a, b),
        "opgen.nn.scaled_dot_product_attention": sdpa,
        "opgen.nn.masked_mean_pool": lambda h, m: ((h * m[..., None].to(h.dtype)).sum(-2)
                                                   / m.sum(-1, keepdim=True).to(h.dtype).clamp(min=1e-9)),
        "torch.nn.functional.avg_pool2d": lambda x, kh, kw, sh, sw, ph, pw: F.avg_pool2d(x, (kh, kw), (sh, sw), (ph, pw)),
        "torch.nn.functional.max_pool2d": lambda x, kh, kw, sh, sw, ph, pw: F.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw)),
    }[op]


# The issue's shapes: matmul at 4096^3, attention at EmbeddingGemma's (the specs' gemma cases).
EXTRA_CASES = {"operator.matmul": [{"name": "square-4096", "args": {"a": {"shape": [4096, 4096]},
                                                                     "b": {"shape": [4096, 4096]}}}]}


def benchmark(c: EntryCheck) -> None:
    # torch (seconds to import) only in the device checks that compare with it
    import torch


    overload = c.spec.overload(c.entry.overload)
    cases = [BenchCase.model_validate(x) for x in EXTRA_CASES.get(c.spec.op, [])] + list(overload.bench)
    kernel = Kernel(ctypes.CDLL(str(c.build.library)), c_symbol(c.spec.op, overload.name), overload.sig)
    ref = baseline(c.spec.op)
    rng = np.random.default_rng(1)
    torch.backends.cuda.matmul.allow_tf32 = False  # an fp32 kernel against fp32 cuBLAS, not TF32
    for case in cases:
        args = bench_args(c.spec, overload.name, case, rng)
        shape = overload.rule.output_shape({p.name: a for p, a in zip(overload.sig.params, args)},
                                           [p.name for p in overload.sig.tensor_params])
        dev = [torch.from_numpy(np.ascontiguousarray(a)).cuda() if isinstance(a, np.ndarray) else a for a in args]
        out = torch.empty(shape, dtype=dev[0].dtype, device="cuda")
        ours = cuda_time(lambda: call_torch(kernel, dev, out))
        theirs = cuda_time(lambda: ref(*dev))
        agree = torch.allclose(out, ref(*dev).to(out.dtype), rtol=1e-3, atol=1e-3)
        c.bench.append({"case": case.name, "kernel_seconds": ours, "torch_seconds": theirs,
                        "ratio": theirs / ours if ours else None, "agree_1e-3": bool(agree),
                        "dtype": str(overload.sig.returns.dtype.name), "tf32": False})


def run(project: Project, *, examples: int = 200, bench: bool = True, ops: list[str] | None = None,
        record: bool = True, report: Callable[[str], None] = print) -> dict[str, Any]:
    """The whole device check (see the module docstring); raises NoDevice without a GPU."""
    device = detect_device()
    specs = load_all(project.specs)
    checks = cuda_entries(project, specs, ops)
    if not checks:
        raise OpgenError("no CUDA entries in the registry to check", hint="admit some first (scripts/record_answers.py --target cuda)")
    report(f"device: {device['name']}; building {len(checks)} CUDA kernels with nvcc")
    build_all(checks)
    registry = Registry(project.generated)
    results = []
    for c in checks:
        name = f"{c.entry.op} [{c.entry.overload}]"
        if not (c.build and c.build.ok):
            report(f"{name}: nvcc failed: {(c.build.diagnostics if c.build else 'no build')[:300]}")
        else:
            verify_on_device(c, examples)
            report(f"{name}: {'pass' if c.verify.get('ok') else 'FAIL'} on the device "
                   f"({c.verify.get('examples')} examples): {c.verify.get('message', '')[:200]}")
            if c.verify.get("ok") and device.get("torch_has_cuda"):
                device_round_trip(c)
                if bench:
                    benchmark(c)
                    for b in c.bench:
                        report(f"  {b['case']}: {b['ratio']:.2f}x torch ({b['kernel_seconds'] * 1e3:.3f} ms vs "
                               f"{b['torch_seconds'] * 1e3:.3f} ms)")
        run_record = c.record(device)
        if record:
            registry.record_device_run(c.entry, run_record)
        results.append({"op": c.entry.op, "overload": c.entry.overload, **run_record})
    summary = {"device": device, "entries": results, "passed": sum(r["passed"] for r in results),
               "failed": sum(not r["passed"] for r in results)}
    out_dir = project.root / "reports" / "gpu"
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    (out_dir / f"{stamp}.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    summary["written"] = str(out_dir / f"{stamp}.json")
    return summary
