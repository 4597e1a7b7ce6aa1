"""A more precise evaluation of a spec's reference: what a correct kernel's result is measured against.

``spec check`` and ``spec new`` need, for a drawn input, the value the op really has, to tell the
reference's own rounding error apart from the tolerance a kernel is given. No general arbitrary-
precision oracle exists for every reference, so the reference itself is evaluated on wider inputs
and the result rounded once to the overload's result dtype:

* float32 (and float16) results: every float tensor argument promoted to float64 (NumPy ufuncs,
  PyTorch ops and opgen's own references all follow their inputs' dtype);
* float64 results: promoted to ``np.longdouble`` where it is wider than float64 (x86's 80-bit
  format); NumPy references accept it, PyTorch ones do not (then there is no wider route);
* Python ``float`` results (``operator.add``, ``opgen.references.float_pow``): the arguments as
  ``mpmath`` numbers at 256 bits, where mpmath is installed.

A route that raises, or that returns no wider dtype (a reference that rounds to float32 inside, such as
``opgen.references.layer_norm``), is reported as unavailable for that input: nothing is guessed. Integer,
bool and string results have no rounding, so no route. The wider evaluation only measures rounding:
where it and the reference disagree about special values (nan, infinities), ``combine`` keeps the
reference's.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

import numpy as np

from opgen.spec.dtypes import floating, numpy_dtype
from opgen.references import call_reference
from opgen.spec.model import Overload, Spec
from opgen.verify.compare import is_array_list

MPMATH_BITS = 256
# A kernel within this many ulps of the largest finite value may round to infinity (and the other way
# round): the comparison's "an infinity must meet the same infinity" is not a rounding question there.
OVERFLOW_EDGE_ULPS = 8


class Unavailable(Exception):
    """The wider evaluation cannot be done for this input (the reason is the message)."""


def _longdouble_is_wider() -> bool:
    return np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant


@dataclass(frozen=True)
class WideRoute:
    """How one overload's reference is evaluated more precisely (``name`` None: it cannot be)."""

    name: str | None  # "float64" | "longdouble" | "mpmath" | None
    why: str  # what the route is, or why there is none
    reference: str = ""
    result_dtype: str | None = None  # the overload's result dtype (float results only)

    @property
    def available(self) -> bool:
        return self.name is not None

    def evaluate(self, overload: Overload, args: dict[str, Any]) -> Any:
        """The reference on wider copies of ``args``: an array of the wider dtype, or an mpf."""
        if self.name is None:
            raise Unavailable(self.why)
        values = [_widen(self.name, p.type, args[p.name]) for p in overload.sig.params]
        try:
            with np.errstate(all="ignore"):
                if self.name == "mpmath":
                    # mpmath is optional (a dependency of sympy, itself torch's): only this route needs it
                    from mpmath import mp

                    with mp.workprec(MPMATH_BITS):
                        result = call_reference(self.reference, values)
                        return _mp_value(result)
                result = call_reference(self.reference, values)
        except Unavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of the wider route means "no wider value here"
            raise Unavailable(f"the reference on {self.name} inputs raised {type(exc).__name__}: {exc}") from None
        wide = np.asarray(result)
        narrow = numpy_dtype(self.result_dtype)
        if wide.dtype.kind != "f" or wide.dtype.itemsize <= narrow.itemsize:
            raise Unavailable(f"the reference returns {wide.dtype} on {self.name} inputs, no wider than {narrow}")
        return wide

    def rounded(self, wide: Any, ref: Any = None) -> Any:
        """The wider value rounded once to the result dtype (a Python float for scalar results).

        Long double is only 11 bits wider than float64, so the wider value is itself rounded: where
        it lands exactly halfway between two doubles the exact value may lie on either side (a - b
        of doubles 17 binades apart needs 70 bits), and rounding the tie would round twice. There,
        given the reference's ``ref``, either neighbour is a correct rounding: ``ref`` is kept if it
        is one of them."""
        if self.name == "mpmath":
            return float(wide)
        with np.errstate(over="ignore", invalid="ignore"):  # beyond the result dtype's range: inf, as it should
            r = np.asarray(wide).astype(numpy_dtype(self.result_dtype))
        if self.name != "longdouble" or ref is None:
            return r
        return _settle_ties(np.asarray(wide), r, np.asarray(ref))

    def inexact(self, wide: Any, rounded: Any) -> Any:
        """Where the result dtype cannot hold the wider value (a correct kernel rounds there)."""
        if self.name == "mpmath":
            # mpmath is optional (see evaluate): only this route needs it
            from mpmath import mpf

            return bool(np.isfinite(rounded)) and mpf(rounded) != wide
        w = np.asarray(wide)
        with np.errstate(invalid="ignore", over="ignore"):
            return np.isfinite(w) & (np.asarray(rounded).astype(w.dtype) != w)

    def near_overflow(self, wide: Any) -> Any:
        """Where the wider value sits within a few ulps of the result dtype's largest finite value."""
        info = np.finfo(numpy_dtype(self.result_dtype) if self.name != "mpmath" else np.float64)
        edge = float(info.max) * (1 - OVERFLOW_EDGE_ULPS * float(info.eps))
        if self.name == "mpmath":
            return abs(float(wide)) >= edge if _finite_mp(wide) else False
        with np.errstate(invalid="ignore", over="ignore"):
            return np.abs(np.asarray(wide, dtype=np.longdouble)) >= edge


def _settle_ties(wide: np.ndarray, rounded: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``rounded``, with ``ref`` kept where ``wide`` is exactly the midpoint of ``rounded`` and a
    neighbour and ``ref`` is one of the two (see ``WideRoute.rounded``)."""
    if ref.shape != rounded.shape or ref.dtype != rounded.dtype:
        return rounded
    with np.errstate(over="ignore", invalid="ignore"):
        up = wide > rounded.astype(wide.dtype)
        other = np.nextafter(rounded, np.where(up, np.inf, -np.inf).astype(rounded.dtype))
        # exact in long double: two adjacent doubles' sum needs 54 bits
        mid = (rounded.astype(wide.dtype) + other.astype(wide.dtype)) / 2
        tie = np.isfinite(wide) & np.isfinite(other) & (wide == mid) & (wide != rounded.astype(wide.dtype))
        keep = tie & ((ref == other) | (ref == rounded))
    return np.where(keep, ref, rounded).astype(rounded.dtype) if keep.any() else rounded


def route_for(spec: Spec, overload: Overload) -> WideRoute:
    """The wider route for this overload's float result, or why there is none."""
    r = overload.sig.returns
    reference = spec.reference_for(overload)
    if r.is_tuple:
        return WideRoute(None, f"a tuple result ({r}): each result is checked against the reference's own, "
                         "with no wider evaluation", reference)
    if r.dtype is None or not r.dtype.is_float:
        kind = str(r)
        return WideRoute(None, f"the result ({kind}) is compared exactly: no rounding to measure", reference)
    if r.is_tensor:
        floats = [p for p in overload.sig.params if p.type.is_tensor and p.type.dtype.is_float]
        if r.dtype.bits < 64:
            if not floats:
                return WideRoute(None, "no float tensor argument to evaluate in float64", reference)
            return WideRoute("float64", f"the reference on float64 copies of the inputs, rounded once to {r.dtype.name}",
                             reference, r.dtype.numpy)
        if not _longdouble_is_wider():
            return WideRoute(None, "np.longdouble is no wider than float64 on this machine", reference)
        if not floats:
            return WideRoute(None, "no float tensor argument to evaluate in long double", reference)
        if reference.startswith("torch."):
            return WideRoute(None, "PyTorch has no dtype wider than float64", reference)
        return WideRoute("longdouble", "the reference on long-double copies of the inputs, rounded once to float64",
                         reference, r.dtype.numpy)
    # A Python float result. mpmath is optional (a dependency of sympy, itself torch's).
    if importlib.util.find_spec("mpmath") is None:
        return WideRoute(None, "mpmath is not installed (it evaluates Python float references more precisely)", reference)
    return WideRoute("mpmath", f"the reference on {MPMATH_BITS}-bit mpmath numbers, rounded once to a Python float",
                     reference, "float64")


def combine(route: WideRoute, ref: Any, rounded: Any) -> Any:
    """What a correct kernel returns: the correctly rounded value where both it and the reference are
    finite, and the reference's own value elsewhere (special values are semantics, not rounding) and
    wherever the two are equal (keeping the sign of a zero and the reference's exact bits)."""
    if route.name == "mpmath":
        if not (isinstance(ref, float) and np.isfinite(ref) and np.isfinite(rounded)) or rounded == ref:
            return ref
        return rounded
    ref_a = np.asarray(ref, dtype=numpy_dtype(route.result_dtype))
    r = np.asarray(rounded, dtype=ref_a.dtype)
    if r.shape != ref_a.shape:
        return ref_a
    with np.errstate(invalid="ignore"):
        use = np.isfinite(r) & np.isfinite(ref_a) & (r != ref_a)
    return np.where(use, r, ref_a).astype(ref_a.dtype)


def _widen(route: str, t: Any, v: Any) -> Any:
    if route == "mpmath":
        # mpmath is optional (see evaluate): only this route needs it
        from mpmath import mpf

        return mpf(v) if isinstance(v, float) else v
    if is_array_list(v):  # a list of tensors
        return [_widen(route, t, e) for e in v]
    if isinstance(v, np.ndarray) and floating(v.dtype):
        target = np.float64 if route == "float64" else np.longdouble
        if v.dtype.itemsize < numpy_dtype(target).itemsize:
            return v.astype(target)
    return v


def _finite_mp(v: Any) -> bool:
    # mpmath is optional (see evaluate): only this route needs it
    from mpmath import isfinite, mpf

    return isinstance(v, mpf) and bool(isfinite(v))


def _mp_value(result: Any) -> Any:
    # mpmath is optional (see evaluate): only this route needs it
    from mpmath import mpf

    if isinstance(result, mpf):
        return result
    if isinstance(result, float):
        # The reference computed in float (a math function mpmath numbers were converted for): not wider.
        raise Unavailable("the reference returned a float on mpmath inputs: it does not compute in mpmath")
    raise Unavailable(f"the reference returned {type(result).__name__} on mpmath inputs")
