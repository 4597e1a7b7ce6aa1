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

Each example: the reference first, on private copies; then the candidate, 1 to 3 times
(and now and then an earlier example again, between new ones), so that no fixed pattern
of calls marks a verification run. Every call gets fresh addresses: each tensor input
laid out with its strides inside a larger buffer whose margins and stride gaps hold a
sentinel that changes per call, and an output prefilled with one of several contents
(the dtype's sentinel, garbage of the result's magnitude, zeros, another example's
result, random bits; never the right answer). After every call each input's whole
buffer must be byte for byte what was sent (a write inside the view, in a gap or in a
margin is named), and the result must match the reference; the calls of one example
must agree bit for bit (caching by pointer or value, nondeterminism). A counterexample
describes the inputs exactly as the kernel saw them: shape, strides, the view's offset
in its buffer and its alignment.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings

from opgen.verify.ffi import KernelError
from opgen.references import INT64_MAX, INT64_MIN, call_reference, error_scale
from opgen.spec.dtypes import floating
from opgen.spec.model import Overload, Spec, bounded_results, load_spec
from opgen.spec.nativetypes import Signature
from opgen.verify.compare import Mismatch, Outcome, brief, compare_scalar, compare_tensor, is_array_list
from opgen.verify.executor import ALIGN, Executor, ExecutorDied, Placed, ProtocolViolation, aligned_bytes, poison, view_into
from opgen.verify.harness import EXEC_DIR, death_verdict
from opgen.verify.scale import Budget, drawn_examples, scale_cases
from opgen.verify.strategies import examples

PREVIEW = 12  # elements of each array shown in a counterexample

# How many times one example is called: 1 to 3 (mean ~2), each at fresh addresses, with fresh
# margins and gap sentinels and its own output prefill, so "call, reference, call again on a
# fresh copy" is not a pattern a kernel can count on. Now and then an earlier example comes
# back between new ones (RECALL), checked against its cached reference.
CALLS = (1, 2, 3)
CALL_WEIGHTS = (0.3, 0.45, 0.25)
RECALL = 0.08
POOL = 6  # earlier examples kept for repeats
POOL_BYTES = 1 << 16  # only small examples are kept (the scale stage's are not)
EARLIER_BYTES = 1 << 20  # results kept as "an earlier result" output prefill
SOAK_POOL = 24  # examples the long call sequence cycles through
SOAK_EXAMPLE_BYTES = 1 << 16  # ... each small, so that 20k calls take seconds

# Output prefills, chosen per call by the runner's seeded RNG; every one must give the right
# answer. "nan" is the dtype's sentinel (NaN, True, the integer maximum).
FILLS = ("nan", "garbage", "zeros", "earlier", "bits")
FILL_WORDS = {
    "nan": "the dtype's sentinel (NaN for floats)",
    "garbage": "finite garbage of the result's magnitude",
    "zeros": "zeros",
    "earlier": "another example's result",
    "bits": "random bits",
}


def _fill_words(kind: str, dtype: np.dtype) -> str:
    """FILL_WORDS, with the sentinel named for the dtype it was written in."""
    if kind == "nan" and dtype.kind == "b":
        return "the dtype's sentinel, True"
    if kind == "nan" and dtype.kind in "iu":
        return f"the dtype's sentinel, the {dtype.name} maximum {np.iinfo(dtype).max}"
    return FILL_WORDS[kind]


class RecallFailed(BaseException):
    """A repeat of an earlier, passed example failed (a BaseException: Hypothesis would otherwise
    shrink the example in hand, which is not the one that failed)."""

    def __init__(self, mismatch: Mismatch):
        super().__init__(mismatch.message)
        self.mismatch = mismatch


def tensor_items(sig: Signature, args: dict[str, Any]) -> list[tuple[str, np.ndarray]]:
    """Every tensor a call hands the kernel, labelled: a tensor parameter by its name, the elements
    of a list of tensors as ``name[i]``. Each is placed in its own buffer and checked after the call."""
    items: list[tuple[str, np.ndarray]] = []
    for p in sig.params:
        if p.type.is_tensor:
            items.append((p.name, args[p.name]))
        elif p.type.is_tensor_list:
            items += [(f"{p.name}[{i}]", v) for i, v in enumerate(args[p.name])]
    return items


def describe(args: dict[str, Any], placed: dict[str, Placed] | None = None) -> dict[str, Any]:
    """A compact, JSON-able account of one example as the kernel saw it: shapes, strides, where the
    view's first element sat in the buffer passed (``offset_elems``) and its address modulo 64,
    contiguity, a few values. A list of tensors is described element by element (``xs[0]``, ...)."""
    out: dict[str, Any] = {}
    for name, v in args.items():
        if isinstance(v, np.ndarray):
            out[name] = _describe_array(v, placed.get(name) if placed is not None else None)
        elif is_array_list(v):
            out[name] = {"list_of": len(v), **{f"{name}[{i}]": _describe_array(e, (placed or {}).get(f"{name}[{i}]"))
                                               for i, e in enumerate(v)}}
        elif isinstance(v, (str, list)):
            out[name] = brief(v)  # a scale case's text is megabytes: its length, head and tail
        else:
            out[name] = repr(v)
    return out


def _describe_array(v: np.ndarray, p: Placed | None) -> dict[str, Any]:
    flat = v.reshape(-1)[:PREVIEW] if v.size else v.reshape(-1)
    d: dict[str, Any] = {
        "dtype": str(v.dtype),
        "shape": list(v.shape),
        "strides_elems": [s // v.itemsize for s in v.strides],
        "contiguous": bool(v.flags.c_contiguous),
    }
    if p is not None:
        d["offset_elems"] = p.offset // v.itemsize
        d["buffer_elems"] = p.buffer.size // v.itemsize
        if not p.tight:  # a tight buffer is wherever malloc put it
            d["address_mod_64"] = p.offset % ALIGN
    d["values_head"] = [repr(float(x)) if floating(v.dtype) else repr(x.item()) for x in flat]
    return d


def fresh_copy(v: Any) -> Any:
    """Same values and memory layout at a new address (each element of a list of tensors)."""
    if is_array_list(v):
        return [fresh_copy(e) for e in v]
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


def _extent(v: np.ndarray) -> tuple[int, int]:
    """Bytes from the view's element 0 to its lowest byte (<= 0) and past its highest byte."""
    if not v.size:
        return 0, 0
    lo = sum(min(0, (n - 1) * s) for n, s in zip(v.shape, v.strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(v.shape, v.strides)) + v.itemsize
    return lo, hi


def place(v: np.ndarray, rng: np.random.Generator, align: int, tight: bool = False) -> Placed:
    """``v`` with its strides inside a larger buffer: margins before (so that the data pointer is
    ``align`` bytes past a 64-byte boundary) and after the view, and the gaps of a strided view,
    filled with a sentinel pattern that changes from call to call (random bytes, or the view's
    own values shuffled, which look like real neighbouring data).

    ``tight`` (sanitizer runs): no margins, and the executor allocates the buffer exactly, so a
    read or write just outside the view hits ASan's redzone instead of a margin."""
    item = v.itemsize
    lo, hi = _extent(v)
    if tight:
        before = after = 0
        hi = max(hi, item)  # a 0-size view still needs a byte to point at
    else:
        before = (align + lo) % ALIGN + ALIGN * int(rng.integers(1, 3))  # at least 64 bytes, keeps the alignment
        after = item * int(rng.integers(1, 1 + 96 // item))
    offset = before - lo
    nbytes = offset + hi + after
    # Only the bytes that are not the view's need a sentinel: for a contiguous view (the large
    # model-shaped inputs) just the margins, for a strided one the whole buffer (its gaps).
    buffer = aligned_bytes(nbytes)
    spans = [(0, offset + lo), (offset + _extent(v)[1], nbytes)] if v.flags.c_contiguous else [(0, nbytes)]
    looks_real = v.size and v.dtype.kind != "b" and rng.random() < 0.35
    sample = rng.choice(v.reshape(-1), size=min(v.size, 4096)) if looks_real else None
    for a, b in spans:
        if b <= a:
            continue
        if looks_real:  # the view's own values, shuffled: neighbours that look like real data
            buffer[a:b].view(v.dtype)[:] = np.resize(sample, (b - a) // item)
        else:
            buffer[a:b] = rng.integers(0, 256, size=b - a, dtype=np.uint8)
    placed = Placed(buffer, offset, v.shape, v.strides, v.dtype, tight)
    placed.view_of(buffer)[...] = v
    placed.extent = (offset + lo, offset + _extent(v)[1])
    return placed


def where_written(p: Placed, changed: np.ndarray) -> tuple[str, dict[str, Any]]:
    """Words for the first changed byte of an input's buffer: inside the view (which element), in a
    gap between its elements, or in the margin before or after it."""
    b = int(changed[0])
    first, end = p.extent
    item = p.dtype.itemsize
    info: dict[str, Any] = {"byte_offset": b, "bytes_changed": int(changed.size)}
    if b < first:
        info["where"] = "margin_before"
        text = f"outside the view, in the margin before it ({first - b} bytes before its lowest element; byte {b} of its buffer)"
    elif b >= end:
        info["where"] = "margin_after"
        text = ("outside the view, in the margin after it (" + ("right after" if b == end else f"{b - end} bytes after")
                + f" its highest element; byte {b} of its buffer)")
    else:
        owner = np.full(p.buffer.size // item, -1, dtype=np.int64)
        size = int(np.prod(p.shape, dtype=np.int64))
        view_into(owner.view(np.uint8), p.offset // item * 8, p.shape, [s // item * 8 for s in p.strides],
                  owner.dtype)[...] = np.arange(size).reshape(p.shape)
        slot = int(owner[b // item])
        if slot >= 0:
            index = tuple(int(i) for i in np.unravel_index(slot, p.shape)) if p.shape else ()
            info.update(where="view", element=list(index))
            text = f"inside the view, element {index} (byte {b} of its buffer)"
        else:
            info["where"] = "gap"
            text = (f"outside the view, in a gap between its elements (strides "
                    f"{tuple(s // item for s in p.strides)} elements; byte {b} of its buffer)")
    return text + f"; {changed.size} bytes differ in all", info


def _digest(args: dict[str, Any]) -> int:
    """The example's content as a number: its call plan is derived from it (and the seed), so a
    replay of the same example during shrinking gets the same fills and layouts."""
    h = hashlib.blake2b(digest_size=8)
    for name, v in args.items():
        h.update(name.encode())
        for e in (v if is_array_list(v) else [v]):
            if isinstance(e, np.ndarray):
                h.update(f"{e.dtype.str}{e.shape}{e.strides}".encode())
                h.update(np.ascontiguousarray(e).tobytes())
            else:
                h.update(repr(e).encode())
    return int.from_bytes(h.digest(), "little")


class _Example:
    """One example, its reference (computed once, before any call) and its call plan."""

    def __init__(self, check: "Check", args: dict[str, Any]):
        self.args = args
        self.number = check.examples
        self.rng = np.random.default_rng([check.seed & 0xFFFFFFFF, _digest(args)])
        self.calls = int(self.rng.choice(CALLS, p=CALL_WEIGHTS))
        # The alignment of each input's data pointer, fixed for the example: an honest kernel may
        # round differently at another alignment (a peeled SIMD prologue), and its calls must agree.
        self.align = {}
        for label, v in tensor_items(check.sig, args):
            self.align[label] = 0 if self.rng.random() < 0.5 else v.itemsize * int(self.rng.integers(0, ALIGN // v.itemsize))
        self.ref, self.ref_err = check.expected(args)
        self._scale: Any = False
        self.first: Any = None
        self.nbytes = sum(v.nbytes for _, v in tensor_items(check.sig, args))


class Check:
    """Everything one example needs: the reference, the candidate and the comparison."""

    def __init__(self, spec: Spec, overload: Overload, kernel: Kernel, progress: Path, seed: int = 0):
        self.spec, self.overload, self.kernel, self.progress = spec, overload, kernel, progress
        self.sig = overload.sig
        self.reference = spec.reference_for(overload)
        self.outcome = Outcome()
        self.examples = 0
        self.current: dict[str, Any] | None = None
        self.declared = {r.error for r in overload.raises}
        self.seed = seed
        self.rng = np.random.default_rng([seed & 0xFFFFFFFF, 0x5EED])  # repeats: history, not content
        self.recall = False  # repeats of earlier examples (the Hypothesis run turns them on)
        self.failed = False  # once an example failed, Hypothesis shrinks: no more repeats
        self.pool: list[_Example] = []
        self.earlier: dict[tuple, np.ndarray] = {}
        self.tight = False  # inputs without margins (sanitizer runs; see place)

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

    def last_args(self) -> dict[str, Any]:
        """The example of the call in flight (or the last one), as a counterexample."""
        return dict(self.current) if self.current is not None else {}

    def __call__(self, args: dict[str, Any]) -> None:
        self.examples += 1
        try:
            if self.recall and not self.failed and self.pool and self.rng.random() < RECALL:
                self.repeat(self.pool[int(self.rng.integers(len(self.pool)))])
            ex = _Example(self, args)
            for k in range(ex.calls):
                got = self.attempt(ex, k)
                if k == 0:
                    ex.first = got
                elif got[1] is None and not _same(ex.first[0], got[0]):
                    raise Mismatch("nondeterministic", "two calls on equal inputs at different addresses gave "
                                   f"different results (calls 1 and {k + 1} of {ex.calls})", self.last_args())
        except Mismatch:
            self.failed = True
            raise
        self.remember(ex)

    def repeat(self, ex: _Example) -> None:
        """An earlier example again, between new ones; its result must still be right and equal."""
        try:
            got = self.attempt(ex, ex.calls, repeat=True)
            if got[1] is None and ex.first[1] is None and not _same(ex.first[0], got[0]):
                raise Mismatch("nondeterministic", "two calls on equal inputs at different addresses gave "
                               "different results", self.last_args())
        except Mismatch as m:
            m.message += (f" (on a repeat of example {ex.number}, which had passed, between examples "
                          f"{self.examples - 1} and {self.examples})")
            raise RecallFailed(m) from None

    def remember(self, ex: _Example) -> None:
        got, err = ex.first
        if ex.nbytes <= POOL_BYTES:
            if len(self.pool) >= POOL:
                self.pool.pop(int(self.rng.integers(len(self.pool))))
            self.pool.append(ex)
        for g in (got if isinstance(got, tuple) else (got,)):  # each result of a tuple
            if err is None and isinstance(g, np.ndarray) and g.size and g.nbytes <= EARLIER_BYTES:
                self.earlier[(g.shape, g.dtype.str)] = g.copy()

    def attempt(self, ex: _Example, k: int, *, fill: str | None = None, repeat: bool = False) -> tuple[Any, Any]:
        """One call of the candidate on ``ex``: inputs placed afresh, the output prefilled; the
        inputs' whole buffers checked, then the result against the reference."""
        args = ex.args
        placed = {label: place(v, ex.rng, ex.align[label], self.tight) for label, v in tensor_items(self.sig, args)}
        values = [[placed[f"{p.name}[{i}]"] for i in range(len(args[p.name]))] if p.type.is_tensor_list
                  else placed.get(p.name, args[p.name]) for p in self.sig.params]
        out, kind = self.prefill(ex, fill)
        before = None if out is None else tuple(o.copy() for o in out) if isinstance(out, tuple) else out.copy()
        self.current = {"args": describe(args, placed),
                        "call": "a repeat" if repeat else f"{k + 1} of {ex.calls}"}
        if kind is not None:
            self.current["output_prefill"] = kind
        self.progress.write_text(json.dumps({"example": self.examples, **self.current}))
        got, err = self.invoke(values, out)
        for name, p in placed.items():
            if p.after is None or p.after.shape != p.buffer.shape:
                raise RuntimeError(f"no buffer of input '{name}' came back from the call")
            changed = np.flatnonzero(p.after != p.buffer)
            if changed.size:
                text, info = where_written(p, changed)
                raise Mismatch("input_modified", f"the kernel wrote into its input '{name}' (inputs are const): "
                               f"{text}", {**self.last_args(), "written": {"input": name, **info}})
        try:
            self.check(got, err, ex)
        except Mismatch as m:
            m.details.update({k: v for k, v in self.current.items() if k != "args"})
            if m.kind != "value" or before is None:
                raise
            idx = m.details.get("index")
            if isinstance(before, tuple):  # a tuple result: the result that differed
                got, before = got[m.details["result_index"]], before[m.details["result_index"]]
            if idx is not None and isinstance(got, np.ndarray) and got.shape == before.shape and \
                    got[tuple(idx)].tobytes() == before[tuple(idx)].tobytes():
                if floating(got.dtype):
                    m.message += ("; that element still holds what the output held before the call (prefilled with "
                                  f"{FILL_WORDS[kind]}): the kernel did not write it")
                else:  # an integer or bool prefill is also a value a wrong kernel computes (a clamp, a saturation)
                    m.message += ("; that element equals what the output held before the call (prefilled with "
                                  f"{_fill_words(kind, got.dtype)}): the kernel did not write it, or it computed "
                                  "that very value")
            if kind != "nan":
                # The same input into a NaN-prefilled output: a kernel that reads or skips its output
                # is then reported in the plainest terms ("got nan"); if that call is right, the
                # result depends on what the output held before the call, and the message says so.
                try:
                    self.attempt(ex, k, fill="nan", repeat=repeat)
                except Mismatch as again:
                    raise again from None
                m.message += (f" (the output arrived prefilled with {FILL_WORDS[kind]}; into a NaN-prefilled "
                              "output the same input gave the right answer: the result depends on what the "
                              "output held before the call)")
            raise
        return got, err

    def invoke(self, values: list[Any], out: np.ndarray | None) -> tuple[Any, BaseException | None]:
        """The call itself: in the executor (it sends the whole buffers and fills ``after``), or in
        this process for a trusted stand-in (views over copies of the buffers)."""
        if not getattr(self.kernel, "placed", False):
            def unplaced(v: Any) -> Any:
                if isinstance(v, list) and v and all(isinstance(e, Placed) for e in v):
                    return [unplaced(e) for e in v]
                if isinstance(v, Placed):
                    v.after = v.buffer.copy()
                    return v.view_of(v.after)
                return v

            values = [unplaced(v) for v in values]
        try:
            got = self.kernel(values, out=out)
        except (OverflowError, ZeroDivisionError, ValueError, IndexError, KernelError) as exc:
            # KernelError: an undeclared failure. Nothing else is the kernel's: a bug here must
            # surface as one (kind "harness"), not pass for the kernel's error.
            return None, exc
        return self.trimmed(got), None

    def trimmed(self, got: Any) -> Any:
        """A bounded result (opgen.spec.shapes.BOUNDED: x[mask]) as its caller sees it: the view of its
        first ``count`` rows, ``count`` the kernel's own report, which must lie in [0, the bound]. Rows
        past it are not part of the result, so every later comparison (the reference, repeats,
        determinism) sees only these; a write past the bound is caught as for any output (the
        executor allocates outputs exactly; sanitizer runs see it)."""
        bounded = bounded_results(self.overload)
        if not bounded or not isinstance(got, tuple):
            return got
        names = [n for n, _ in self.sig.results]
        got = list(got)
        for name, count_name in bounded.items():
            i, c = names.index(name), names.index(count_name)
            count = np.asarray(got[c])
            bound = got[i].shape[0]
            if count.shape != () or not 0 <= int(count) <= bound:
                raise Mismatch("value", f"result '{count_name}' reports {_short(count)} rows of '{name}', which "
                               f"holds at most {bound}: a count must be a 0-d int64 in [0, {bound}]",
                               {**self.last_args(), "result": count_name})
            got[i] = got[i][:int(count)]
        return tuple(got)

    def prefill(self, ex: _Example, kind: str | None) -> tuple[np.ndarray | tuple[np.ndarray, ...] | None, str | None]:
        """The output buffer as the kernel will find it, and which fill it is. Never the right answer:
        a float element that would pass the comparison is replaced (NaN, or finite garbage where the
        answer is NaN or infinite); "nan" and "zeros" are chosen only where no element needs that."""
        if not self.sig.tensor_results:
            return None, None
        forced = kind is not None
        if kind is None:
            kind = str(ex.rng.choice(FILLS))
        if not self.sig.returns.is_tuple:
            return self._prefill_one(ex, kind, forced, 0)
        # A tuple: every result's buffer gets the same kind of fill (each its own values).
        fills = [self._prefill_one(ex, kind, forced, i)[0] for i in range(len(self.sig.results))]
        return tuple(fills), kind

    def _prefill_one(self, ex: _Example, kind: str, forced: bool, index: int) -> tuple[np.ndarray, str]:
        """The fill of result ``index`` (``Signature.results``; 0 for a single result)."""
        name, r = self.sig.results[index]
        shape = tuple(self.overload.rules[name].output_shape(ex.args, [p.name for p in self.sig.tensor_params]))
        dtype = np.dtype(r.dtype.np)
        rng = ex.rng
        ref = None
        if ex.ref_err is None:
            ref = np.asarray(ex.ref[index] if self.sig.returns.is_tuple else ex.ref, dtype=dtype)
            if ref.shape != shape:
                ref = None
        n = int(np.prod(shape, dtype=np.int64))

        def garbage() -> np.ndarray:
            if dtype.kind == "b":
                return rng.integers(0, 2, size=shape).astype(dtype)
            finite = ref[np.isfinite(ref)] if ref is not None and floating(dtype) else (
                ref.reshape(-1) if ref is not None else np.zeros(0))
            if floating(dtype):
                mag = float(np.median(np.abs(finite))) if finite.size else 1.0
                mag = mag if 0 < mag < float(np.finfo(dtype).max) / 8 else 1.0
                return (rng.standard_normal(shape) * mag).astype(dtype)
            info = np.iinfo(dtype)
            lo = int(finite.min()) - 3 if finite.size else -100
            hi = int(finite.max()) + 3 if finite.size else 100
            # uint64 is drawn as itself: the default int64 cannot hold its values above 2**63 - 1
            # (the other dtypes keep the int64 draw, and with it the seeded stream they always had)
            wide = np.uint64 if dtype == np.uint64 else np.int64
            return rng.integers(max(lo, info.min), min(hi, info.max), size=shape, endpoint=True, dtype=wide).astype(dtype)

        def right(fill: np.ndarray) -> np.ndarray:
            """Elements where the fill would pass as the answer."""
            if ref is None:
                return np.zeros(shape, dtype=bool)
            if not floating(dtype):
                return fill == ref
            tol = self.spec.tolerance_at(self.overload, r.dtype, ex.args)
            s = np.abs(ref.astype(np.float64)) if tol.basis not in ("abs_inputs", "error_scale") else \
                np.abs(np.broadcast_to(self.scale_of(ex, tol.basis), shape))
            g, e = fill.astype(np.float64), ref.astype(np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                return ((np.isnan(g) & np.isnan(e)) | (np.isinf(e) & (g == e))
                        | (np.isfinite(e) & (np.abs(g - e) <= tol.atol + tol.rtol * s)))

        if not forced and kind in ("nan", "zeros") and dtype.kind != "b" and ref is not None:
            candidate = poison(shape, dtype) if kind == "nan" else np.zeros(shape, dtype)
            if right(candidate).any():
                kind = "garbage"
        if kind == "nan":
            fill = poison(shape, dtype)
        elif kind == "zeros":
            fill = np.zeros(shape, dtype)
        elif kind == "earlier" and (shape, dtype.str) in self.earlier:
            fill = self.earlier[(shape, dtype.str)].copy()
        elif kind == "bits" and dtype.kind != "b":
            fill = rng.integers(0, 256, size=n * dtype.itemsize, dtype=np.uint8).view(dtype).reshape(shape)
        else:
            kind = "garbage"
            fill = garbage()
        fill = np.array(fill, dtype=dtype).reshape(shape)  # an array even for a 0-d output (not a NumPy scalar)
        if floating(dtype) and n:
            bad = right(fill)
            if bad.any():
                finite_ref = np.isfinite(ref)
                fill[bad & finite_ref] = np.nan
                fill[bad & ~finite_ref] = np.nan_to_num(garbage(), nan=1.0, posinf=1.0, neginf=-1.0)[bad & ~finite_ref]
        return fill, kind

    def scale_of(self, ex: _Example, basis: str) -> np.ndarray:
        if ex._scale is False:
            ex._scale = self.abs_reference(ex.args) if basis == "abs_inputs" else self.error_scale(ex.args)
        return ex._scale

    def check(self, got: Any, got_err: BaseException | None, ex: _Example) -> None:
        shown = self.current["args"] if self.current is not None else describe(ex.args)
        ref, ref_err = ex.ref, ex.ref_err
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
        if r.is_tuple:
            self.check_results(got, ref, ex, shown)
            return
        try:
            if r.is_tensor:
                tol = self.spec.tolerance_at(self.overload, r.dtype, ex.args)
                scale = self.scale_of(ex, tol.basis) if tol.basis in ("abs_inputs", "error_scale") else None
                compare_tensor(got, np.asarray(ref, dtype=r.dtype.np), tol, scale, self.outcome,
                               "the reference's error scale" if tol.basis == "error_scale" else "reference of |inputs|")
            else:
                tol = self.spec.tolerance_at(self.overload, r.dtype, ex.args) if r.dtype is not None else None
                compare_scalar(got, ref, tol, self.outcome)
        except Mismatch as m:
            m.details["args"] = shown
            raise

    def check_results(self, got: Any, ref: Any, ex: _Example, shown: Any) -> None:
        """A tuple result: each result against the reference's element at its position, with its own
        dtype's tolerance (integers exactly); a mismatch names the result."""
        results = self.sig.results
        if not isinstance(ref, (tuple, list)) or len(ref) != len(results):
            raise RuntimeError(f"the reference {self.reference} returned {_short(ref)}, not a tuple of "
                               f"{len(results)} results ({', '.join(n for n, _ in results)})")
        for i, (name, t) in enumerate(results):
            tol = self.spec.tolerance_at(self.overload, t.dtype, ex.args)
            if tol.basis != "reference":
                raise RuntimeError(f"tolerance basis {tol.basis!r} is for single results; result {name!r} of "
                                   f"{self.spec.op} [{self.overload.name}] is compared against the reference itself")
            try:
                compare_tensor(got[i], np.asarray(ref[i], dtype=t.dtype.np), tol, None, self.outcome,
                               "reference of |inputs|")
            except Mismatch as m:
                m.message = f"result '{name}' ({i + 1} of {len(results)}): {m.message}"
                m.details.update({"args": shown, "result": name, "result_index": i})
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
    if isinstance(a, tuple):  # a tuple result: every result equal
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
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
# Only for tools that replay the runner with a recording kernel of their own (opgen.gate.corpus
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
        if job.get("mode") == "scale":
            return _scale(job, workdir, spec, overload, kernel, None)
        if job.get("mode") == "soak":
            return _soak(job, workdir, spec, overload, kernel, None)
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
    if job.get("mode") == "scale":
        return _scale(job, workdir, spec, overload, executor, executor)
    if job.get("mode") == "soak":
        return _soak(job, workdir, spec, overload, executor, executor)
    return _hypothesis(job, workdir, spec, overload, executor, executor)


def _hypothesis(job: dict[str, Any], workdir: Path, spec: Spec, overload: Overload, kernel: Callable[..., Any],
                executor: Executor | None) -> dict[str, Any]:
    check = Check(spec, overload, kernel, workdir / "progress.json", seed=int(job["seed"]))
    check.recall = True
    check.tight = bool(job.get("sanitizer"))

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
    except RecallFailed as failed:  # a repeat of an earlier example: reported as it is, unshrunk
        return _failed(failed.mismatch, check)
    except ExecutorDied as died:  # a BaseException: Hypothesis stops at once, no shrinking
        return _died(died, executor, job, check)
    except ProtocolViolation as bad:
        return _tampering(bad, check)
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


def _scale(job: dict[str, Any], workdir: Path, spec: Spec, overload: Overload, kernel: Callable[..., Any],
           executor: Executor | None) -> dict[str, Any]:
    """The scale stage: every large, model-shaped case of this seed through the same check as a
    Hypothesis example (no shrinking: a failure names its case, which the seed reproduces)."""
    check = Check(spec, overload, kernel, workdir / "progress.json", seed=int(job["seed"]))
    budget = Budget.from_dict(job.get("options", {}).get("budget", {}))
    case = None
    try:
        for case in scale_cases(spec, overload, int(job["seed"]), budget):
            check(case.args)
    except Mismatch as m:
        m.message = f"scale case {case.name!r}: {m.message}"
        m.details["scale_case"] = case.describe()
        return _failed(m, check)
    except ExecutorDied as died:
        result = _died(died, executor, job, check)
        if case is not None:
            result["message"] = f"scale case {case.name!r}: {result['message']}"
            result.setdefault("details", {})["scale_case"] = case.describe()
        return result
    except ProtocolViolation as bad:
        return _tampering(bad, check)
    scaled = {
        "ok": True,
        "examples": check.examples,
        "worst_abs_error": check.outcome.worst_abs,
        "worst_rel_error": check.outcome.worst_rel,
        "worst_tolerance_used": check.outcome.worst_tolerance_used,
    }
    if int(job.get("max_examples", 0)) <= 0:
        return scaled
    # Then Hypothesis's examples of the same seed (the thread-count runs: small and large inputs alike).
    drawn = _hypothesis(job, workdir, spec, overload, kernel, executor)
    if not drawn["ok"]:
        return drawn
    return {"ok": True, "examples": scaled["examples"] + drawn["examples"],
            **{k: max(scaled[k], drawn[k]) for k in ("worst_abs_error", "worst_rel_error", "worst_tolerance_used")}}


def _soak(job: dict[str, Any], workdir: Path, spec: Spec, overload: Overload, kernel: Callable[..., Any],
          executor: Executor | None) -> dict[str, Any]:
    """The nightly job's long call sequence: a pool of small drawn examples, each reference computed
    once, then ``calls`` calls of the candidate on them in a random order, every call checked
    (fresh placement, its own output prefill, the whole input buffers, the result against the
    reference and against the example's first result). A kernel that counts calls, or whose
    state drifts, meets what it would meet in a long-running process."""
    calls = int(job.get("options", {}).get("calls", 20_000))
    seed_ = int(job["seed"])
    check = Check(spec, overload, kernel, workdir / "progress.json", seed=seed_)
    rng = np.random.default_rng([seed_ & 0xFFFFFFFF, 0x50A4])
    i = 0
    try:
        pool = [_Example(check, args) for args in drawn_examples(overload, seed_, SOAK_POOL, SOAK_EXAMPLE_BYTES)]
        for i in range(1, calls + 1):
            ex = pool[int(rng.integers(len(pool)))]
            check.examples += 1
            got = check.attempt(ex, int(rng.integers(0, 3)), repeat=True)
            if ex.first is None:
                ex.first = got
            elif got[1] is None and ex.first[1] is None and not _same(ex.first[0], got[0]):
                raise Mismatch("nondeterministic", "two calls on equal inputs gave different results",
                               check.last_args())
    except Mismatch as m:
        m.message = f"call {i} of a sequence of {calls} (the long-run check): {m.message}"
        return _failed(m, check)
    except ExecutorDied as died:
        result = _died(died, executor, job, check)
        result["message"] = f"call {i} of a sequence of {calls} (the long-run check): {result['message']}"
        return result
    except ProtocolViolation as bad:
        return _tampering(bad, check)
    return {"ok": True, "examples": check.examples, "worst_abs_error": check.outcome.worst_abs,
            "worst_rel_error": check.outcome.worst_rel, "worst_tolerance_used": check.outcome.worst_tolerance_used}


def _died(died: ExecutorDied, executor: Executor | None, job: dict[str, Any], check: "Check | None") -> dict[str, Any]:
    details = check.last_args() if check is not None else {}
    kind, message, more = death_verdict(
        died.returncode, executor.pid, cpu_seconds=int(job.get("cpu_seconds", 0)),
        file_size_bytes=int(job.get("file_size_bytes", 1 << 62)),
        output=executor.directory / "output.log", logs=executor.directory if job.get("sanitizer") else None,
        library=job["library"], on_input=bool(details), killed_for=died.killed_for)
    return {"ok": False, "kind": kind, "message": message, "details": {**details, **more},
            "examples": check.examples if check is not None else 0}


def _tampering(bad: ProtocolViolation, check: Check) -> dict[str, Any]:
    return {"ok": False, "kind": "tampering", "examples": check.examples,
            "message": f"the kernel's process sent the runner {bad} (did it tamper with the executor?)",
            "details": check.last_args()}


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
