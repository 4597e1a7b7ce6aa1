"""``opgen bench``: each verified kernel's speed beside its reference, in one run.

For every overload with ``bench:`` cases in its spec, every target and every verified
variant, the kernel (through the same C ABI the harness and the emitter use, its arguments
marshalled into ctypes views once) and the reference (NumPy or PyTorch, called directly on
pre-converted inputs) run on the same inputs, so only the computation is timed on either
side, interleaved round by round so that load from other processes hits both alike. The
ratio is reference time / kernel time: above 1 the kernel is faster. Each result also says
whether the kernel's output agreed with the reference on those inputs (a benchmark of a
wrong answer is no benchmark).

With ``select``, the figures are written into each variant's registry entry and the
registry then serves the fastest verified variant on this kind of machine.
"""

from __future__ import annotations

import ctypes
import os
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from opgen.build.cpp import toolchain
from opgen.errors import OpgenError
from opgen.spec.names import find_spec
from opgen.verify.ffi import Kernel
from opgen.service import build_job_for
from opgen.spec.nativetypes import NativeType
from opgen.project import Project
from opgen.references import error_scale, resolve
from opgen.registry import Entry, Registry
from opgen.spec.model import TARGET_IDS, BenchCase, BenchTensor, Overload, Spec, load_all
from opgen.targets.catalog import build_any
from opgen.verify.compare import Mismatch, Outcome, compare_tensor, is_array_list
from opgen.arrays import c_order

MIN_ROUND_SECONDS = 0.05  # each timed round repeats a call until at least this long
ROUNDS = 7  # interleaved kernel/reference rounds; the median round is reported
# A pause after each side's round: OpenBLAS's and OpenMP's idle worker threads keep spinning
# for a while after a parallel call (OpenBLAS about 2**28 cycles), and would otherwise take a
# core from whichever side runs next.
SETTLE_SECONDS = 0.2


@dataclass
class BenchResult:
    op: str
    overload: str
    target: str
    variant: str
    case: str
    kernel_s: float | None
    reference: str
    reference_s: float | None
    agrees: bool
    note: str = ""
    flop: float | None = None  # floating-point operations per call, where the op defines them

    @property
    def ratio(self) -> float | None:
        if not self.kernel_s or not self.reference_s:
            return None
        return self.reference_s / self.kernel_s

    def as_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in ("op", "overload", "target", "variant", "case", "kernel_s", "reference",
                                           "reference_s", "agrees", "note")}
        d["ratio"] = self.ratio
        if self.flop and self.kernel_s and self.reference_s:
            d["kernel_gflops"] = self.flop / self.kernel_s / 1e9
            d["reference_gflops"] = self.flop / self.reference_s / 1e9
        return d


def run_benchmarks(project: Project, ops: list[str] | None = None, *, targets: Iterable[str] | None = None,
                   rounds: int = ROUNDS, select: bool = False,
                   progress: Callable[[str], None] = lambda s: None) -> list[dict[str, Any]]:
    """Benchmark every verified variant of every overload with bench cases; dicts for JSON."""
    return [r.as_dict() for r in benchmark(project, ops, targets=targets, rounds=rounds, select=select,
                                           progress=progress)]


def benchmark(project: Project, ops: list[str] | None = None, *, targets: Iterable[str] | None = None,
              overloads: Iterable[str] | None = None, rounds: int = ROUNDS, select: bool = False,
              progress: Callable[[str], None] = lambda s: None) -> list[BenchResult]:
    specs = load_all(project.specs)
    ops = [find_spec(specs, op).op for op in ops] if ops else ops  # an alias names its op
    wanted_targets = {TARGET_IDS.get(t, t) for t in targets} if targets else None
    wanted_overloads = set(overloads) if overloads else None
    chosen = [specs[op] for op in ops] if ops else list(specs.values())
    if wanted_overloads and (unknown := wanted_overloads - {o.name for s in chosen for o in s.overloads}):
        raise OpgenError(f"no overload {', '.join(sorted(unknown))} among the selected ops",
                         hint="their overloads: " + ", ".join(sorted({o.name for s in chosen for o in s.overloads})))
    registry = Registry(project.generated)
    plan: list[tuple[Spec, Overload, Entry]] = []
    for spec in chosen:
        for overload in spec.overloads:
            if not overload.bench or (wanted_overloads and overload.name not in wanted_overloads):
                continue
            for t in spec.targets:
                target = TARGET_IDS[t]
                if wanted_targets and target not in wanted_targets:
                    continue
                for entry in registry.variants(spec.op, overload.name, target):
                    if entry.status(spec)[0] == "verified":
                        plan.append((spec, overload, entry))
    if ops and not plan:
        raise OpgenError(f"nothing to benchmark for {', '.join(ops)}",
                         hint="an op needs bench: cases in its spec and a verified registry entry")
    _set_reference_threads()
    progress(f"building {len(plan)} kernels")
    built = build_any([build_job_for(entry, spec, overload) for spec, overload, entry in plan])
    results: list[BenchResult] = []
    for (spec, overload, entry), b in zip(plan, built):
        if not b.ok:
            raise OpgenError(f"{entry.op} {entry.overload} ({entry.target}, {entry.variant}) no longer builds",
                             hint=f"run `opgen verify {entry.op}`; compiler said: {b.diagnostics[:300]}")
        kernel = Kernel(ctypes.CDLL(str(b.library)), entry.signature["c_symbol"], overload.sig)
        mine = []
        for case in overload.bench:
            progress(f"{entry.op} {entry.overload} {entry.target} {entry.variant}: {case.name}")
            mine.append(_bench_case(spec, overload, entry, kernel, case, rounds))
        results += mine
        if select:
            _record(registry, entry, mine)
    return results


def _bench_case(spec: Spec, overload: Overload, entry: Entry, kernel: Kernel, case: BenchCase,
                rounds: int) -> BenchResult:
    args = make_args(spec, overload, case)
    reference = case.against or spec.reference_for(overload)
    call_reference = _reference_caller(reference, [args[p.name] for p in overload.sig.params])
    out = _output(overload, args)
    # Marshalled once, as the reference's inputs are converted once: only the kernel's call is timed.
    call_kernel = kernel.bind([args[p.name] for p in overload.sig.params], out=out)
    result = BenchResult(entry.op, entry.overload, entry.target, entry.variant, case.name, None, reference, None,
                         agrees=False, flop=_flop(spec, overload, args))
    try:
        got = call_kernel()
        ref = call_reference()
    except Exception as exc:  # noqa: BLE001 (reported, not hidden: the row says what failed)
        result.note = f"{type(exc).__name__}: {exc}"
        return result
    result.agrees, result.note = _agrees(spec, overload, got, ref, args, reference)
    k_times, r_times = [], []
    for _ in range(rounds):  # interleaved, so a burst of load elsewhere hits both sides alike
        k_times.append(_time_round(call_kernel))
        time.sleep(SETTLE_SECONDS)
        r_times.append(_time_round(call_reference))
        time.sleep(SETTLE_SECONDS)
    result.kernel_s, result.reference_s = statistics.median(k_times), statistics.median(r_times)
    return result


def make_args(spec: Spec, overload: Overload, case: BenchCase) -> dict[str, Any]:
    """Inputs for one case: tensors drawn from a fixed seed (the same every run), scalars as given."""
    rng = np.random.default_rng(0)
    args: dict[str, Any] = {}
    missing = [p.name for p in overload.sig.params if p.name not in case.args]
    extra = sorted(set(case.args) - {p.name for p in overload.sig.params})
    if missing or extra:
        raise OpgenError(f"{spec.op} {overload.name}: bench case {case.name!r} "
                         + (f"lacks {', '.join(missing)}" if missing else f"names unknown {', '.join(extra)}"),
                         hint=f"give exactly the parameters {', '.join(p.name for p in overload.sig.params)}")
    for p in overload.sig.params:
        value = case.args[p.name]
        if p.type.kind == "tensor":
            if not isinstance(value, BenchTensor):
                raise OpgenError(f"{spec.op} {overload.name}: bench case {case.name!r} gives {p.name} as {value!r}",
                                 hint=f"{p.name} is a tensor: give {{shape: [...]}}")
            args[p.name] = _tensor(rng, p.type, value)
        elif p.type.is_tensor_list:
            if not (isinstance(value, list) and all(isinstance(e, BenchTensor) for e in value)):
                raise OpgenError(f"{spec.op} {overload.name}: bench case {case.name!r} gives {p.name} as {value!r}",
                                 hint=f"{p.name} is a list of tensors: give [{{shape: [...]}}, ...]")
            args[p.name] = [_tensor(rng, p.type.elem, e) for e in value]
        else:
            args[p.name] = value
    return args


def _tensor(rng: np.random.Generator, t: NativeType, spec: BenchTensor) -> np.ndarray:
    dt = t.dtype
    if dt.name == "bool":
        return rng.integers(0, 2, size=spec.shape).astype(bool)
    if dt.is_float:
        return rng.uniform(spec.min, spec.max, size=spec.shape).astype(dt.np)
    return rng.integers(int(spec.min), int(spec.max), size=spec.shape, endpoint=True).astype(dt.np)


def _output(overload: Overload, args: dict[str, Any]) -> np.ndarray | tuple[np.ndarray, ...] | None:
    r = overload.sig.returns
    if r.is_tuple:  # one out array per result
        names = [p.name for p in overload.sig.tensor_params]
        return tuple(np.empty(overload.rules[n].output_shape(args, names), dtype=t.dtype.np) for n, t in r.fields)
    if r.kind != "tensor":
        return None
    shape = overload.rule.output_shape(args, [p.name for p in overload.sig.tensor_params])
    return np.empty(shape, dtype=r.dtype.np)


def _reference_caller(dotted: str, values: list[Any]) -> Callable[[], Any]:
    fn = resolve(dotted)
    if dotted.startswith("torch."):
        # torch takes seconds to import; only this path needs it
        import torch

        # Converted once, outside the timed calls: torch works on its own tensors in real use.
        def to_torch(v: Any) -> Any:
            if is_array_list(v):  # a list of tensors
                return [to_torch(e) for e in v]
            return torch.from_numpy(c_order(v)) if isinstance(v, np.ndarray) else v

        targs = [to_torch(v) for v in values]
        return lambda: _to_numpy(fn(*targs))
    return lambda: fn(*values)


def _to_numpy(result: Any) -> Any:
    if isinstance(result, tuple):  # several results (torch's named tuples)
        return tuple(_to_numpy(r) for r in result)
    return result.numpy() if hasattr(result, "numpy") else result


def _set_reference_threads() -> None:
    """Give the references every core the kernels may use (OpenMP uses them all)."""
    try:
        # torch takes seconds to import; only this path needs it
        import torch

        torch.set_num_threads(os.cpu_count() or 1)
    except ImportError:
        pass


def _time_round(fn: Callable[[], Any]) -> float:
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= MIN_ROUND_SECONDS:
            return elapsed / calls


def _agrees(spec: Spec, overload: Overload, got: Any, ref: Any, args: dict[str, Any],
            reference: str) -> tuple[bool, str]:
    """A sanity check, not verification: bench shapes are far larger than the verifier's
    (k = 1024 against k <= 48), so the spec's tolerance, derived for its own domain, is
    widened 100x; a wrong kernel misses by far more than that."""
    r = overload.sig.returns
    if r.is_tuple:  # each result against the reference's element at its position
        for (name, t), g, e in zip(r.fields, got, ref):
            tol = spec.tolerance_for(overload, t.dtype)
            try:
                compare_tensor(np.asarray(g), np.asarray(e).astype(g.dtype, copy=False),
                               tol.model_copy(update={"rtol": tol.rtol * 100}), None, Outcome())
            except Mismatch as m:
                return False, f"result '{name}' disagrees with the reference: {str(m).splitlines()[0]}"
        return True, ""
    if r.kind != "tensor":
        return (got == ref), ("" if got == ref else "the kernel's result differs from the reference")
    ref = np.asarray(ref)
    tol = spec.tolerance_for(overload, r.dtype)
    loose = tol.model_copy(update={"rtol": tol.rtol * 100})
    scale = None
    if tol.basis == "abs_inputs":
        values = [np.abs(args[p.name]) if p.type.kind == "tensor" else args[p.name] for p in overload.sig.params]
        scale = np.asarray(_reference_caller(reference, values)(), dtype=np.float64)
    elif tol.basis == "error_scale":  # the overload's reference's own error scale, on the same inputs
        values = [args[p.name] for p in overload.sig.params]
        scale = np.asarray(error_scale(spec.reference_for(overload))(*values), dtype=np.float64)
    try:
        compare_tensor(np.asarray(got), ref.astype(got.dtype, copy=False), loose, scale, Outcome())
    except Mismatch as m:
        return False, f"disagrees with the reference: {str(m).splitlines()[0]}"
    return True, ""


def _flop(spec: Spec, overload: Overload, args: dict[str, Any]) -> float | None:
    """Multiply-adds x 2 for the ops whose speed is usually quoted in GFLOP/s."""
    if spec.op == "operator.matmul":
        a, b = args["a"], args["b"]
        out = overload.rule.output_shape(args, ["a", "b"])
        return 2.0 * float(np.prod(out)) * a.shape[-1]
    if spec.op == "torch.nn.functional.linear":
        x, w = args["input"], args["weight"]
        return 2.0 * float(np.prod(x.shape[:-1])) * w.shape[0] * w.shape[1]
    return None


def _record(registry: Registry, entry: Entry, results: list[BenchResult]) -> None:
    timed = [r for r in results if r.kernel_s and r.agrees]
    if not timed:
        return
    # Variants are ranked by the first case (the spec lists its main shape first); a variant
    # that could not run it correctly gets no rank and is not preferred over plain.
    primary = results[0] if results[0] in timed else None
    registry.record_benchmark(entry, {
        "isa": toolchain()["isa"],
        "cpus": os.cpu_count(),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "primary_case": results[0].case,
        "primary_seconds": primary.kernel_s if primary else None,
        "cases": {r.case: {"kernel_s": r.kernel_s, "reference": r.reference, "reference_s": r.reference_s,
                           "ratio": r.ratio} for r in timed},
    })
