"""A 0-d array stays 0-d on its way to a kernel and in the references it is compared with.

np.ascontiguousarray returns at least one dim, so a 0-d draw laid out with it reached every kernel as
shape (1,), and a reference built with it answered (1,) where NumPy answers (): the gate never saw a
0-d input. These tests fail if either comes back (opgen.arrays.c_order keeps the shape)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, find, settings

from opgen.arrays import c_order
from opgen.cast_references import astype
from opgen.shape_references import tile
from opgen.spec.model import load_spec
from opgen.verify.strategies import LAYOUTS, examples, lay_out

SPECS = Path(__file__).resolve().parents[1] / "specs"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3)])
def test_every_layout_keeps_the_shape_and_the_values(layout: str, shape: tuple[int, ...]) -> None:
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 1.5
    laid = lay_out(values, layout)
    assert laid.shape == shape
    assert np.array_equal(laid, values)


def test_c_order_keeps_a_0d_array_0d_and_copies_only_what_is_not_c_ordered() -> None:
    zero = np.array(2.5, dtype=np.float32)
    assert c_order(zero).shape == ()
    assert c_order(np.float64(1.0)).shape == ()
    compact = np.ones((2, 3))
    assert c_order(compact) is compact
    transposed = c_order(compact.T)
    assert transposed.flags.c_contiguous and transposed.shape == (3, 2)


def test_the_gate_draws_a_genuine_0d_input() -> None:
    overload = load_spec(SPECS / "numpy" / "exp.yaml").overloads[0]
    found = find(examples(overload), lambda args: np.ndim(args["x"]) == 0,
                 settings=settings(max_examples=500, database=None, suppress_health_check=list(HealthCheck)))
    assert found["x"].shape == ()


def test_references_answer_0d_for_0d() -> None:
    assert tile(np.array(5.0, dtype=np.float32), []).shape == np.tile(np.array(5.0), []).shape == ()
    assert astype(np.array(1.5, dtype=np.float32), "float64").shape == ()
