"""The child-process side of verification: load one kernel library, run Hypothesis.

Run as ``python -m opgen.verify.runner JOB.json``. The parent applies resource limits,
a network namespace and a wall-clock timeout; this process may die with the candidate
and that is fine. Order matters: imports and a warm-up first (the reference is called
once, so NumPy/PyTorch finish their lazy initialisation: thread pools, CPU probing),
then the seccomp filter (``opgen.verify.sandbox``), and only then is the candidate
library ``dlopen``ed, so its static initializers already run inside the filter.
Before each call it writes the example about to run to ``progress.json`` so a crash
can be attributed to its input. The result is written to ``result.json``.

Each example: reference on private copies; candidate into a NaN-poisoned output;
inputs compared with their snapshots; the candidate called again on fresh copies at
new addresses into a fresh poisoned output (catches caching by pointer or value and
nondeterminism); both results checked against the reference.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings

from ..ffi import Kernel
from ..references import INT64_MAX, INT64_MIN, call_reference
from ..spec import Overload, Spec, load_spec
from . import sandbox
from .compare import Mismatch, Outcome, compare_scalar, compare_tensor
from .strategies import examples

PREVIEW = 12  # elements of each array shown in a counterexample


def describe(args: dict[str, Any]) -> dict[str, Any]:
    """A compact, JSON-able account of one example (shapes, strides, a few values)."""
    out: dict[str, Any] = {}
    for name, v in args.items():
        if isinstance(v, np.ndarray):
            flat = v.reshape(-1)[:PREVIEW] if v.size else v.reshape(-1)
            out[name] = {
                "dtype": str(v.dtype),
                "shape": list(v.shape),
                "strides_elems": [s // v.itemsize for s in v.strides],
                "contiguous": bool(v.flags.c_contiguous),
                "values_head": [repr(float(x)) if v.dtype.kind == "f" else repr(x.item()) for x in flat],
            }
        else:
            out[name] = repr(v)
    return out


def fresh_copy(v: Any) -> Any:
    """Same values and memory layout at a new address."""
    if not isinstance(v, np.ndarray):
        return v
    base = np.empty_like(v, order="K")
    base[...] = v
    if v.flags.c_contiguous or v.ndim == 0:
        return base
    return _same_strides(v)


def _same_strides(v: np.ndarray) -> np.ndarray:
    # Rebuild the view pattern (e.g. a transpose) by copying the underlying buffer
    # extent, so non-contiguity survives the copy.
    span_lo = sum(min(0, (n - 1) * s) for n, s in zip(v.shape, v.strides) if n) if v.size else 0
    span_hi = sum(max(0, (n - 1) * s) for n, s in zip(v.shape, v.strides) if n) if v.size else 0
    nbytes = span_hi - span_lo + v.itemsize
    buf = np.zeros(max(nbytes // v.itemsize, 1), dtype=v.dtype)
    view = np.lib.stride_tricks.as_strided(
        buf[(-span_lo) // v.itemsize:], shape=v.shape, strides=v.strides, writeable=True
    )
    view[...] = v
    return view


def poison(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    out = np.empty(shape, dtype=dtype)
    if dtype.kind == "f":
        out.fill(np.nan)
    elif dtype.kind == "b":
        out.fill(True)
    else:
        out.fill(np.iinfo(dtype).max)
    return out


class Check:
    """Everything one example needs: the reference, the candidate and the comparison."""

    def __init__(self, spec: Spec, overload: Overload, kernel: Kernel, progress: Path):
        self.spec, self.overload, self.kernel, self.progress = spec, overload, kernel, progress
        self.sig = overload.sig
        self.reference = spec.reference_for(overload)
        self.outcome = Outcome()
        self.examples = 0
        self.declared = {r.error for r in overload.raises}

    def expected(self, args: dict[str, Any]) -> tuple[Any, type[BaseException] | None]:
        values = [fresh_copy(args[p.name]) for p in self.sig.params]
        try:
            result = call_reference(self.reference, values)
        except (OverflowError, ZeroDivisionError, ValueError) as exc:
            if type(exc).__name__ in self.declared:
                return None, type(exc)
            raise
        if self.sig.returns.name == "int" and not isinstance(result, bool):
            if not INT64_MIN <= int(result) <= INT64_MAX and "OverflowError" in self.declared:
                return None, OverflowError
        return result, None

    def call(self, args: dict[str, Any]) -> tuple[Any, BaseException | None]:
        values = [args[p.name] for p in self.sig.params]
        out = None
        r = self.sig.returns
        if r.is_tensor:
            shape = self.overload.rule.output_shape(args, [p.name for p in self.sig.tensor_params])
            out = poison(shape, r.dtype.np)
        self.progress.write_text(json.dumps({"example": self.examples, "args": describe(args)}))
        try:
            return self.kernel(values, out=out), None
        except (OverflowError, ZeroDivisionError, ValueError) as exc:
            return None, exc
        except Exception as exc:  # KernelError: an undeclared failure
            return None, exc

    def __call__(self, args: dict[str, Any]) -> None:
        self.examples += 1
        snapshot = {k: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for k, v in args.items()}
        got, got_err = self.call(args)
        for name, before in snapshot.items():
            after = args[name]
            if isinstance(before, np.ndarray) and not np.array_equal(before, after, equal_nan=True):
                raise Mismatch("input_modified", f"the kernel wrote into its input '{name}' (inputs are const)",
                               {"args": describe(snapshot)})
        ref, ref_err = self.expected(args)
        second_args = {k: fresh_copy(v) for k, v in args.items()}
        got2, got2_err = self.call(second_args)
        self.check(got, got_err, ref, ref_err, snapshot)
        self.check(got2, got2_err, ref, ref_err, snapshot)
        if got_err is None and not _same(got, got2):
            raise Mismatch("nondeterministic", "two calls on equal inputs at different addresses gave different results",
                           {"args": describe(snapshot)})

    def check(self, got: Any, got_err: BaseException | None, ref: Any, ref_err: type | None, args: dict) -> None:
        shown = describe(args)
        if ref_err is not None:
            if got_err is None or type(got_err) is not ref_err:
                raise Mismatch(
                    "error",
                    f"expected {ref_err.__name__} (declared by the spec) but the kernel "
                    + (f"raised {type(got_err).__name__}: {got_err}" if got_err else f"returned {_short(got)}"),
                    {"args": shown, "expected": ref_err.__name__, "got": type(got_err).__name__ if got_err else _short(got)},
                )
            return
        if got_err is not None:
            raise Mismatch("error", f"expected {_short(ref)} but the kernel raised {type(got_err).__name__}: {got_err}"
                           + _out_of_memory(got_err),
                           {"args": shown, "expected": _short(ref), "got": type(got_err).__name__})
        r = self.sig.returns
        try:
            if r.is_tensor:
                tol = self.spec.tolerance_for(self.overload, r.dtype)
                scale = self.abs_reference(args) if tol.basis == "abs_inputs" else None
                compare_tensor(got, np.asarray(ref, dtype=r.dtype.np), tol, scale, self.outcome)
            else:
                tol = self.spec.tolerance_for(self.overload, r.dtype) if r.dtype is not None else None
                compare_scalar(got, ref, tol, self.outcome)
        except Mismatch as m:
            m.details["args"] = shown
            raise

    def abs_reference(self, args: dict[str, Any]) -> np.ndarray:
        values = [np.abs(args[p.name]) if isinstance(args[p.name], np.ndarray) else args[p.name] for p in self.sig.params]
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(call_reference(self.reference, values), dtype=np.float64)


def _out_of_memory(err: BaseException) -> str:
    if "bad_alloc" not in str(err):
        return ""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    return (" (it ran out of memory" + (f" under the sandbox's {limit}-byte address-space limit" if limit > 0 else "")
            + ")")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"an array of shape {v.shape}"
    text = repr(v)
    return text if len(text) < 120 else text[:117] + "..."


def warm_up(spec: Spec, overload: Overload) -> None:
    """Everything lazy that the sandbox would otherwise meet later: PyTorch's import and thread
    pool, the reference's first call, Hypothesis's engine. One example, fixed seed."""
    reference = spec.reference_for(overload)
    if reference.startswith("torch."):
        import torch

        torch.set_num_threads(1)  # the reference is not what is being measured; keep the pool small

    @seed(0)
    @settings(max_examples=1, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(examples(overload))
    def once(args: dict[str, Any]) -> None:
        try:
            call_reference(reference, [fresh_copy(args[p.name]) for p in overload.sig.params])
        except Exception:  # noqa: BLE001 - a declared error, or an input the reference rejects: still warm
            pass

    once()


def prepare(job: dict[str, Any]) -> tuple[Spec, Overload]:
    spec = load_spec(Path(job["spec_path"]))
    overload = spec.overload(job["overload"])
    warm_up(spec, overload)
    return spec, overload


def run(job: dict[str, Any], workdir: Path, spec: Spec, overload: Overload) -> dict[str, Any]:
    """Load the candidate (inside the sandbox) and run Hypothesis against it."""
    try:
        lib = ctypes.CDLL(job["library"])
        kernel = Kernel(lib, job["symbol"], overload.sig)
    except (OSError, AttributeError) as exc:
        return {"ok": False, "kind": "load", "message": f"the library does not load or lacks its symbol: {exc}"}
    check = Check(spec, overload, kernel, workdir / "progress.json")

    @seed(int(job["seed"]))
    @settings(
        max_examples=int(job["max_examples"]),
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @given(examples(overload))
    def verify(args: dict[str, Any]) -> None:
        check(args)

    try:
        verify()
    except Mismatch as m:
        return _failed(m, check)
    except BaseExceptionGroup as group:  # Hypothesis's FlakyFailure: a failure that did not reproduce
        match, _ = group.split(Mismatch)
        if match is None:
            raise
        first = match.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        first.message += " (the failure did not reproduce on a rerun of the same input: nondeterministic)"
        return _failed(first, check)
    return {
        "ok": True,
        "examples": check.examples,
        "worst_abs_error": check.outcome.worst_abs,
        "worst_rel_error": check.outcome.worst_rel,
    }


def _failed(m: Mismatch, check: Check) -> dict[str, Any]:
    return {"ok": False, "kind": m.kind, "message": m.message, "details": m.details, "examples": check.examples}


def main(argv: list[str]) -> int:
    job_path = Path(argv[0])
    job = json.loads(job_path.read_text())
    workdir = job_path.parent
    try:
        spec, overload = prepare(job)
        sandbox.enter(workdir, job.get("parent_netns"))  # from here on, a forbidden system call is fatal
        result = run(job, workdir, spec, overload)
    except BaseException as exc:  # a harness bug must still be reported, not lost
        result = {"ok": False, "kind": "harness", "message": f"{type(exc).__name__}: {exc}",
                  "details": {"traceback": traceback.format_exc()[-4000:]}}
    # Write atomically: a half-written result must never be read as a verdict.
    tmp = workdir / "result.json.tmp"
    tmp.write_text(json.dumps(result))
    os.replace(tmp, workdir / "result.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
