"""The verifier's integer tensors meet the values where integer kernels go wrong: 0 (a divisor),
-1 (min // -1), the dtype's extremes (wrap-around, abs(min)), equal pairs at the same index of two
operands, and uint64's upper half. Uniform draws over a 64-bit range meet none of them, which
let a floor division that traps on x // 0 through the whole gate (the corpus entry
floordiv_i64_traps_on_zero_divisor). Both the Hypothesis examples and the scale stage's cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from opgen.spec.dtypes import DTYPES
from opgen.spec.model import Domain, load_all
from opgen.verify.scale import CPU_BUDGET, int_values, scale_cases
from opgen.verify.strategies import examples, integer_edges

ROOT = Path(__file__).resolve().parents[1]
SPECS = load_all(ROOT / "specs")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _draws(op: str, overload: str, n: int = 150) -> list[dict]:
    o = SPECS[op].overload(overload)
    seen: list[dict] = []

    @settings(max_examples=n, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(examples(o))
    def collect(args):
        seen.append(args)

    collect()
    return seen


@pytest.mark.parametrize("overload", ["tensor_i64", "tensor_i8"])
def test_examples_hold_zero_divisors_minus_one_and_the_extremes(overload):
    draws = _draws("operator.floordiv", overload)
    dt = np.dtype(SPECS["operator.floordiv"].overload(overload).sig.returns.dtype.np)
    info = np.iinfo(dt)
    b_zero = sum(bool((d["b"] == 0).any()) for d in draws)
    a_min = sum(bool((d["a"] == info.min).any()) for d in draws)
    a_max = sum(bool((d["a"] == info.max).any()) for d in draws)
    # min // -1 at one index (after broadcasting): the pair that wraps
    pair = sum(bool(((a := np.broadcast_arrays(d["a"], d["b"]))[0] == info.min)[a[1] == -1].any()) for d in draws)
    assert b_zero >= 20 and a_min >= 20 and a_max >= 20, (b_zero, a_min, a_max)
    assert pair >= 1, "no example holds min // -1"


def test_edges_stay_inside_the_domain():
    assert integer_edges(DTYPES["int64"], 0, 5) == [0, 1, 2]
    assert integer_edges(DTYPES["uint8"], 0, 255) == [0, 1, 2, 254, 255]
    assert integer_edges(DTYPES["int8"], -128, 127) == [-128, -127, -2, -1, 0, 1, 2, 126, 127]
    # an index-like domain never gets a negative or huge value
    for d in _draws("numpy.where", "i64", 60):
        assert d["x"].dtype == np.int64  # (full range: edges are fine there)
    for d in _draws("opgen.nn.scaled_dot_product_attention", "f32", 40):
        assert d["key_mask"].min(initial=0) >= 0 and d["key_mask"].max(initial=0) <= 2


@pytest.mark.parametrize("name", INTS)
def test_scale_values_plant_edges_and_small_values(name):
    dt = DTYPES[name]
    info = np.iinfo(dt.np)
    v = int_values(np.random.default_rng(3), (100_000,), dt, Domain())
    assert v.dtype == dt.np
    for edge in (0, 1, int(info.min), int(info.max)):
        assert (v == edge).any(), (name, edge)
    if info.min < 0:
        assert (v == -1).any()
    assert (np.abs(v.astype(np.float64)) <= 8).mean() > 0.05  # small values at a tenth of the places


def test_uint64_draws_reach_the_upper_half():
    big = 2**63
    v = int_values(np.random.default_rng(5), (10_000,), DTYPES["uint64"], Domain())
    assert (v >= np.uint64(big)).mean() > 0.3
    drawn = _draws("operator.add", "tensor_u64", 40)  # the int64 draw used to fail: "high is out of bounds"
    assert drawn and all(d["a"].dtype == np.uint64 for d in drawn)


def test_scale_cases_of_an_integer_op_hold_zero_divisors():
    o = SPECS["operator.floordiv"].overload("tensor_i64")
    cases = list(scale_cases(SPECS["operator.floordiv"], o, 1, CPU_BUDGET))
    assert cases and all((c.args["b"] == 0).any() for c in cases if c.args["b"].size >= 1000)
