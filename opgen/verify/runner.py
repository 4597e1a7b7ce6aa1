"""The trusted side of a verification run: draw examples, compute the reference, compare.

Run as ``python -m opgen.verify.runner JOB.json``. The parent applies resource limits,
a network namespace and a wall-clock timeout. This process never loads the candidate:
once its imports are done it forks the executor (``opgen.verify.executor``), which
sandboxes itself (Landlock, no capabilities, seccomp; ``opgen.verify.sandbox``) and
only then ``dlopen``s the candidate, so even its static initializers run confined.
Every call goes to the executor; if the executor dies, this process knows the input in
flight and how it died, and says so. Before each call it writes the example about to
run to ``progress.json`` (for a timeout, which the parent handles); the verdict goes
to ``result.json``, which the executor cannot write.

Each example: reference on private copies; candidate into a NaN-poisoned output;
inputs compared with their snapshots; the candidate called again on fresh copies at
new addresses into a fresh poisoned output (catches caching by pointer or value and
nondeterminism); both results checked against the reference.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings

from ..references import INT64_MAX, INT64_MIN, call_reference, error_scale
from ..spec import Overload, Spec, load_spec
from .compare import Mismatch, Outcome, compare_scalar, compare_tensor
from .executor import Executor, ExecutorDied, ProtocolViolation, poison
from .harness import EXEC_DIR, death_verdict
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
    if v.flags.c_contiguous or v.ndim == 0:
        return np.array(v, copy=True)
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


class Check:
    """Everything one example needs: the reference, the candidate and the comparison."""

    def __init__(self, spec: Spec, overload: Overload, kernel: Kernel, progress: Path):
        self.spec, self.overload, self.kernel, self.progress = spec, overload, kernel, progress
        self.sig = overload.sig
        self.reference = spec.reference_for(overload)
        self.outcome = Outcome()
        self.examples = 0
        self.current: dict[str, Any] | None = None
        self.declared = {r.error for r in overload.raises}

    def expected(self, args: dict[str, Any]) -> tuple[Any, type[BaseException] | None]:
        values = [fresh_copy(args[p.name]) for p in self.sig.params]
        try:
            result = call_reference(self.reference, values)
        except (OverflowError, ZeroDivisionError, ValueError, IndexError) as exc:
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
        self.current = describe(args)
        self.progress.write_text(json.dumps({"example": self.examples, "args": self.current}))
        try:
            return self.kernel(values, out=out), None
        except (OverflowError, ZeroDivisionError, ValueError, IndexError) as exc:
            return None, exc
        except Exception as exc:  # KernelError: an undeclared failure
            return None, exc

    def last_args(self) -> dict[str, Any]:
        """The example of the call in flight (or the last one), as a counterexample."""
        return {"args": self.current} if self.current is not None else {}

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
                scale = (self.abs_reference(args) if tol.basis == "abs_inputs"
                         else self.error_scale(args) if tol.basis == "error_scale" else None)
                compare_tensor(got, np.asarray(ref, dtype=r.dtype.np), tol, scale, self.outcome,
                               "the reference's error scale" if tol.basis == "error_scale" else "reference of |inputs|")
            else:
                tol = self.spec.tolerance_for(self.overload, r.dtype) if r.dtype is not None else None
                compare_scalar(got, ref, tol, self.outcome)
        except Mismatch as m:
            m.details["args"] = shown
            raise

    def error_scale(self, args: dict[str, Any]) -> np.ndarray:
        values = [fresh_copy(args[p.name]) for p in self.sig.params]
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(error_scale(self.reference)(*values), dtype=np.float64)

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


# A trusted stand-in for the executor, called in this process: ``Kernel(None, symbol, sig)``.
# Only for tools that replay the runner with a recording kernel of their own (opgen.corpus
# memorizes fixed-seed inputs this way); never set for a candidate, which always runs in
# the executor.
Kernel: Callable[..., Any] | None = None


def prepare(job: dict[str, Any]) -> tuple[Spec, Overload]:
    spec = load_spec(Path(job["spec_path"]))
    return spec, spec.overload(job["overload"])


def run(job: dict[str, Any], workdir: Path, spec: Spec, overload: Overload,
        kernel: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Start the executor (it loads the candidate inside its sandbox) and run Hypothesis against it.

    ``kernel``: a trusted in-process stand-in for the executor (see ``Kernel`` above)."""
    if kernel is None and Kernel is not None:
        kernel = Kernel(None, job["symbol"], overload.sig)
    if kernel is not None:
        return _hypothesis(job, workdir, spec, overload, kernel, None)
    executor = Executor(job["library"], job["symbol"], overload.sig, workdir / EXEC_DIR,
                        parent_netns=job.get("parent_netns"), heap_bytes=job.get("heap_bytes"))
    try:
        result = _run(job, workdir, spec, overload, executor)
    finally:
        if executor.pid:
            executor.close()  # before the verdict is written: nothing of the candidate outlives it
    return {**result, "sandbox": executor.sandbox}


def _run(job: dict[str, Any], workdir: Path, spec: Spec, overload: Overload, executor: Executor) -> dict[str, Any]:
    try:
        executor.start()
    except ExecutorDied as died:  # while loading: a static initializer, or the loader itself
        return _died(died, executor, job, None)
    except ProtocolViolation as bad:
        return {"ok": False, "kind": "tampering", "examples": 0,
                "message": f"the kernel's process sent the runner {bad} while loading (did it tamper with the executor?)"}
    if executor.load_error:
        return {"ok": False, "kind": "load", "message": executor.load_error}
    return _hypothesis(job, workdir, spec, overload, executor, executor)


def _hypothesis(job: dict[str, Any], workdir: Path, spec: Spec, overload: Overload, kernel: Callable[..., Any],
                executor: Executor | None) -> dict[str, Any]:
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
    except ExecutorDied as died:  # a BaseException: Hypothesis stops at once, no shrinking
        return _died(died, executor, job, check)
    except ProtocolViolation as bad:
        return {"ok": False, "kind": "tampering", "examples": check.examples,
                "message": f"the kernel's process sent the runner {bad} (did it tamper with the executor?)",
                "details": check.last_args()}
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
        "worst_tolerance_used": check.outcome.worst_tolerance_used,
    }


def _died(died: ExecutorDied, executor: Executor | None, job: dict[str, Any], check: "Check | None") -> dict[str, Any]:
    details = check.last_args() if check is not None else {}
    kind, message, more = death_verdict(
        died.returncode, executor.pid, cpu_seconds=int(job.get("cpu_seconds", 0)),
        file_size_bytes=int(job.get("file_size_bytes", 1 << 62)),
        output=executor.directory / "output.log", logs=executor.directory if job.get("sanitizer") else None,
        library=job["library"], on_input=bool(details), killed_for=died.killed_for)
    return {"ok": False, "kind": kind, "message": message, "details": {**details, **more},
            "examples": check.examples if check is not None else 0}


def _failed(m: Mismatch, check: Check) -> dict[str, Any]:
    return {"ok": False, "kind": m.kind, "message": m.message, "details": m.details, "examples": check.examples}


def main(argv: list[str]) -> int:
    job_path = Path(argv[0])
    job = json.loads(job_path.read_text())
    workdir = job_path.parent
    try:
        spec, overload = prepare(job)
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
