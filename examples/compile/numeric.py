"""Numeric functions mixing scalars, lists and arrays."""

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float64]

UNIT_PRICE = 2.5
PRICE_FACTORS = {"none": 1.0, "member": 0.9, "staff": 0.75}


def horner(xs: list[float], coeffs: list[float]) -> list[float]:
    """Evaluate the polynomial with these coefficients (highest power first) at each x."""
    out: list[float] = []
    for x in xs:
        acc = 0.0
        for c in coeffs:
            acc = acc * x + c
        out.append(acc)
    return out


def affine_counts(counts: list[int], factor: int, offset: int) -> list[int]:
    """Exact int64 arithmetic; a result outside int64 is an OverflowError."""
    return [c * factor + offset for c in counts]


def basket_total(items: list[str], quantities: list[int], discount: str) -> float:
    """Module constants (a scalar folded in, a dict as a table), list indexing, int -> float widening."""
    total = 0.0
    i = 0
    for item in items:
        total += quantities[i] * UNIT_PRICE * PRICE_FACTORS[discount]
        i += 1
    return total


def pick_scaled(xs: list[float], ys: list[float], i: int, first: bool, scale: float) -> float:
    """A conditional expression; negative indices; IndexError past the end."""
    v = xs[i] if first else ys[i]
    return v * scale ** 2


def sum_exp_over_axes(x: Matrix, axes: list[int]) -> Matrix:
    """An array reduced over each axis of a list in turn (np.exp, np.sum with a variable axis)."""
    y = np.exp(x)
    for axis in axes:
        y = np.sum(y, axis=axis)
    return y


def weighted_lookup(weights: dict[str, float], keys: list[str], power: int) -> list[float]:
    """A dict parameter (KeyError for a missing key) and float ** int."""
    return [weights[k] ** power for k in keys]


def clipped(scores: list[float], low: float, high: float) -> list[float]:
    """Comparisons (operator.lt / operator.gt) in nested conditional expressions."""
    return [low if s < low else high if s > high else s for s in scores]


def count_positive_above(xs: list[float], counts: list[int], threshold: int) -> int:
    """An if statement; a float compared with the int constant 0 (exact, as Python compares)."""
    n = 0
    i = 0
    for x in xs:
        if x > 0:
            if counts[i] >= threshold:
                n += 1
        i += 1
    return n
