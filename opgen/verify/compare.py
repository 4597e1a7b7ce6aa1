"""Closeness of a candidate's result to the reference, and the words for a mismatch.

``|got - ref| <= atol + rtol * scale`` elementwise, where scale is |ref| or, for specs
whose tolerance basis is ``abs_inputs``, the reference applied to |inputs| (``error_scale``:
the reference's own error scale). NaN must
meet NaN and an infinity must meet the same infinity; integers, booleans and strings
are exact. A mismatch names the first failing index, expected and got, so the LLM
has something concrete to repair from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from opgen.spec.model import Tolerance


def is_array_list(v: Any) -> bool:
    """A list of tensors' argument: a non-empty list of arrays."""
    return isinstance(v, list) and bool(v) and all(isinstance(e, np.ndarray) for e in v)


@dataclass
class Outcome:
    """Worst errors seen so far (evidence for the registry)."""

    worst_abs: float = 0.0
    worst_rel: float = 0.0
    # Largest |got - ref| / allowed: how close a kernel came to its tolerance (1.0 = at
    # the limit). The honest figure for specs whose tolerance is not relative to |ref|.
    worst_tolerance_used: float = 0.0

    def note(self, abs_err: float, rel_err: float, used: float = 0.0) -> None:
        self.worst_abs = max(self.worst_abs, abs_err)
        self.worst_rel = max(self.worst_rel, rel_err)
        self.worst_tolerance_used = max(self.worst_tolerance_used, used)


@dataclass
class Mismatch(Exception):
    kind: str  # value | error | input_modified | nondeterministic | crash | timeout | load | harness
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


def _fmt(x: Any) -> str:
    if isinstance(x, (float, np.floating)):
        return repr(float(x))
    return repr(x.item() if isinstance(x, np.generic) else x)


def compare_tensor(got: np.ndarray, ref: np.ndarray, tol: Tolerance, scale: np.ndarray | None, out: Outcome,
                   scale_name: str = "reference of |inputs|") -> None:
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        raise Mismatch("value", f"result shape {got.shape} but the reference has shape {ref.shape}")
    if got.dtype.kind in "biu" or ref.dtype.kind in "biuUO":
        bad = got != ref
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise Mismatch(
                "value",
                f"first mismatch at index {idx}: expected {_fmt(ref[idx])}, got {_fmt(got[idx])} (exact comparison)",
                {"index": idx, "expected": _fmt(ref[idx]), "got": _fmt(got[idx])},
            )
        return
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    s = np.abs(r) if scale is None else np.abs(np.asarray(scale, dtype=np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        both_nan = np.isnan(g) & np.isnan(r)
        same_inf = np.isinf(r) & (g == r)
        err = np.abs(g - r)
        allowed = tol.atol + tol.rtol * s
        # Where the reference is infinite only the same infinity passes: |got - inf| <= rtol * inf
        # would otherwise accept any finite value, and the other infinity.
        ok = both_nan | same_inf | (np.isfinite(r) & (err <= allowed))
    if not ok.all():
        idx = tuple(int(i) for i in np.argwhere(~ok)[0])
        bad_count = int((~ok).sum())
        raise Mismatch(
            "value",
            f"first mismatch at index {idx} of shape {got.shape}: expected {_fmt(r[idx])}, got {_fmt(g[idx])}; "
            f"|diff| {_fmt(err[idx])} exceeds the allowed {_fmt(allowed[idx])} "
            f"(atol {tol.atol:g} + rtol {tol.rtol:g} * {'|ref|' if scale is None else scale_name}); "
            f"{bad_count} of {got.size} elements are off",
            {"index": idx, "expected": _fmt(r[idx]), "got": _fmt(g[idx]), "mismatched": bad_count},
        )
    if tol.signed_zeros:
        flipped = (r == 0) & (g == 0) & (np.signbit(r) != np.signbit(g))
        if flipped.any():
            idx = tuple(int(i) for i in np.argwhere(flipped)[0])
            raise Mismatch(
                "value",
                f"first mismatch at index {idx} of shape {got.shape}: expected {_fmt(r[idx])}, got {_fmt(g[idx])} "
                f"(the sign of zero differs; {int(flipped.sum())} of {got.size} elements)",
                {"index": idx, "expected": _fmt(r[idx]), "got": _fmt(g[idx]), "mismatched": int(flipped.sum())},
            )
    finite = np.isfinite(r) & np.isfinite(g)
    if finite.any():
        # Relative error is reported where it means something: above atol (results in the
        # subnormal range carry few significant bits in any implementation).
        above = finite & (np.abs(r) > tol.atol)
        rel = float((err[above] / np.abs(r[above])).max()) if above.any() else 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(allowed[finite] > 0, err[finite] / allowed[finite], 0.0)
        out.note(float(err[finite].max()), rel, float(np.nan_to_num(ratio).max()))


def compare_scalar(got: Any, ref: Any, tol: Tolerance | None, out: Outcome) -> None:
    if isinstance(ref, float):
        if not isinstance(got, float):
            raise Mismatch("value", f"expected a float, got {type(got).__name__} {got!r}")
        # The sign of a zero is checked there, as the tolerance says (Tolerance.signed_zeros).
        compare_tensor(np.array(got), np.array(ref), tol, None, out)
        return
    if type(got) is not type(ref) or got != ref:
        if isinstance(ref, (str, list)) and type(got) is type(ref) and max(len(got), len(ref)) > LONG_VALUE:
            raise Mismatch("value", first_difference(got, ref), {"expected": brief(ref), "got": brief(got)})
        raise Mismatch("value", f"expected {ref!r}, got {got!r}", {"expected": repr(ref), "got": repr(got)})


# Strings and lists longer than this are reported by their first difference and a brief account,
# never whole: a scale case's text is megabytes, and the verdict travels through a capped pipe
# into the repair prompt.
LONG_VALUE = 200
CONTEXT = 24


def brief(v: str | list) -> str:
    """``repr(v)``, or for a long str or list its length, head and tail."""
    if len(v) <= LONG_VALUE:
        return repr(v)
    unit = "code points" if isinstance(v, str) else "items"
    size = f", {len(v.encode())} bytes as UTF-8" if isinstance(v, str) else ""
    return f"<{type(v).__name__} of {len(v)} {unit}{size}: {v[:CONTEXT]!r} ... {v[-CONTEXT:]!r}>"


def first_difference(got: str | list, ref: str | list) -> str:
    """Where two long strs (or lists) first differ, with a little of each around it."""
    i = next((k for k, (a, b) in enumerate(zip(got, ref)) if a != b), min(len(got), len(ref)))
    unit = "code point" if isinstance(ref, str) else "item"
    lo = max(0, i - CONTEXT)
    return (f"first difference at {unit} {i} (expected {len(ref)} {unit}s, got {len(got)}): expected "
            f"{ref[lo:i + CONTEXT]!r}, got {got[lo:i + CONTEXT]!r} (from {unit} {lo} on)")
