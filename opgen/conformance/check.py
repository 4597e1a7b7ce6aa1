"""Is a kernel's output what an ONNX case expects? The rule of ONNX's backend test runner
(``onnx.backend.test.runner.Runner.assert_similar_outputs``), applied to one output:

1. the shape must be equal;
2. strings (object arrays) must be equal; otherwise the dtype must be equal;
3. ``numpy.testing.assert_allclose(got, expected, rtol, atol)`` with the case's rtol and atol:
   ``|got - expected| <= atol + rtol * |expected|`` elementwise, a NaN only where a NaN is
   expected, an infinity only where the same infinity is expected (bfloat16 compared in float32
   with rtol at least 2**-6, as ONNX does).

``compare`` returns None for a pass, else what differs, as a JSON-able dict naming the first
mismatching element.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def compare(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> dict[str, Any] | None:
    if tuple(got.shape) != tuple(expected.shape):
        return {"reason": "shape", "message": f"shape {list(got.shape)}, expected {list(expected.shape)}"}
    if expected.dtype == object:
        if np.array_equal(got, expected):
            return None
        return {"reason": "values", "message": "the strings differ"}
    if got.dtype != expected.dtype:
        return {"reason": "dtype", "message": f"dtype {got.dtype}, expected {expected.dtype}"}
    if got.dtype.name == "bfloat16":
        rtol = max(rtol, 2 ** -6)
        got, expected = got.astype(np.float32), expected.astype(np.float32)
    try:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    except AssertionError:
        return _describe(got, expected, rtol, atol)
    return None


def _describe(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> dict[str, Any]:
    with np.errstate(all="ignore"):
        close = np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
        bad = np.argwhere(~close)  # (mismatches, ndim); a 0-d mismatch is one row of no indices
        g = got.astype(np.float64) if got.dtype.kind in "fiub" else got
        e = expected.astype(np.float64) if expected.dtype.kind in "fiub" else expected
        diff = np.abs(g - e)
        finite = np.isfinite(diff)
        worst_abs = float(diff[finite].max()) if finite.any() else None
        rel = diff / np.abs(e)
        rel_finite = np.isfinite(rel)
        worst_rel = float(rel[rel_finite].max()) if rel_finite.any() else None
    first = tuple(int(i) for i in bad[0]) if len(bad) else ()
    got_v, exp_v = got[first], expected[first]
    return {"reason": "values",
            "message": (f"{len(bad)} of {got.size} elements differ beyond rtol={rtol:g}, atol={atol:g}; "
                        f"first at {list(first)}: got {_num(got_v)}, expected {_num(exp_v)}"),
            "mismatched": int(len(bad)), "elements": int(got.size), "first_index": list(first),
            "got": _num(got_v), "expected": _num(exp_v), "max_abs_error": worst_abs, "max_rel_error": worst_rel,
            "rtol": rtol, "atol": atol}


def _num(v: Any) -> Any:
    """An element as JSON: a float (repr, so nan and inf survive), an int or a bool."""
    v = np.asarray(v).item()
    return repr(v) if isinstance(v, float) else v
