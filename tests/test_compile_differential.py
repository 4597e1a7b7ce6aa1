"""Differential tests of `opgen compile`: every function of the collection (examples/compile/),
compiled once, must give what the Python function gives on Hypothesis-generated inputs,
called in-process from Python (opgen.host) and from Node.js (clients/node, through koffi).

The oracle is the Python function itself; ints are held to int64 (tests/compile_support.Int64),
since the int kernels raise OverflowError where Python's unbounded ints would go on. Errors
must match in kind (a NumPy AxisError is a ValueError, as the compiled function reports it).
Floats are exact where the kernels are single IEEE operations, and within a small bound where
a kernel is a verified approximation (exp, softmax, matmul, pow).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.compile_support import (COLLECTION, INT64, RUST_COLLECTION, BothHosts, as_int64, assert_same, compiled,  # noqa: F401
                                   compiled_rust, node_outcomes, outcome, python_function)

NODE_CASES = 25  # per function: the first inputs Hypothesis drew, replayed through the Node host

text = st.text(max_size=10)
any_float = st.floats(allow_nan=True, allow_infinity=True)
int64 = st.one_of(st.integers(-1000, 1000), st.integers(*INT64))
TASKS = ["query", "document", "classification", "clustering", "similarity"]
FACTORS = ["none", "member", "staff"]


def f32_tensor(shape: tuple[int, ...], bound: float) -> st.SearchStrategy:
    return hnp.arrays(np.float32, shape, elements=st.floats(-bound, bound, width=32)).map(torch.from_numpy)


@st.composite
def attention_args(draw) -> tuple[Any, Any]:
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    m, k, n = (draw(st.integers(1, 6)) for _ in range(3))
    values_batch = batch[draw(st.integers(0, len(batch))):]  # values may broadcast over leading dims
    return draw(f32_tensor((*batch, m, k), 20.0)), draw(f32_tensor((*values_batch, k, n), 10.0))


@st.composite
def embedding_args(draw) -> tuple[Any, ...]:
    """Ids of any rank up to 2 (now and then one outside the table: IndexError), a table, a position row.

    Rows stay in [0.5, 3.5] before GELU: GELU's spec allows an absolute error of 3e-6, which is
    most of a tiny result in its negative tail, and normalising a row made only of such results
    scales that error up to the row's size. This test checks the composition, not GELU's tail."""
    vocab, d = draw(st.integers(1, 6)), draw(st.integers(1, 8))
    ids = draw(hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
                          elements=st.integers(0, vocab - 1) | st.sampled_from([-1, vocab])))
    table = draw(hnp.arrays(np.float32, (vocab, d), elements=st.floats(0.0, 2.0, width=32)))
    position = draw(hnp.arrays(np.float32, (d,), elements=st.floats(0.5, 1.5, width=32)))
    return torch.from_numpy(ids), torch.from_numpy(table), torch.from_numpy(position)


@st.composite
def lookup_args(draw) -> tuple[Any, ...]:
    weights = draw(st.dictionaries(text, st.floats(-1e3, 1e3), max_size=4))
    keys = draw(st.lists(st.sampled_from(sorted(weights)) | text if weights else text, max_size=5))
    return weights, keys, draw(st.integers(-3, 8))


@st.composite
def basket_args(draw) -> tuple[Any, ...]:
    n = draw(st.integers(0, 5))
    items = draw(st.lists(text, min_size=n, max_size=n))
    quantities = draw(st.lists(st.integers(0, 10**6), min_size=max(n - 1, 0), max_size=n + 1))  # sometimes short
    return items, quantities, draw(st.sampled_from(FACTORS) | text)


@st.composite
def reduction_args(draw) -> tuple[Any, ...]:
    """Arrays of 1 to 3 dims and fewer axes than dims (out-of-range axes included). Not 0-d
    results: NumPy hands back a scalar there, and its scalars accept axis=0, where an array
    (and so the compiled function, which keeps arrays) raises AxisError."""
    x = draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                        elements=st.floats(-30, 30)))
    return x, draw(st.lists(st.integers(-4, 3), max_size=x.ndim - 1))


@dataclass(frozen=True)
class Case:
    args: st.SearchStrategy
    rtol: float = 0.0
    atol: float = 0.0
    examples: int = 60


CASES: dict[str, Case] = {
    "prefix_queries": Case(st.tuples(st.lists(text, max_size=6), st.sampled_from(TASKS) | text)),
    "prefix_for_search": Case(st.tuples(st.lists(text, max_size=6))),
    "label_matches": Case(st.lists(st.sampled_from(["", "a", "é", "query"]) | text, max_size=6).flatmap(
        lambda labels: st.tuples(st.just(labels), st.sampled_from(labels) | text if labels else text))),
    "horner": Case(st.tuples(st.lists(any_float, max_size=5), st.lists(any_float, max_size=5))),
    "affine_counts": Case(st.tuples(st.lists(int64, max_size=6), int64, int64)),
    "basket_total": Case(basket_args()),
    # pow is within 1 ulp of CPython's (its spec), then one correctly rounded multiply.
    "pick_scaled": Case(st.tuples(st.lists(any_float, max_size=4), st.lists(any_float, max_size=4),
                                  st.integers(-6, 6), st.booleans(), any_float), rtol=1e-15),
    "sum_exp_over_axes": Case(reduction_args(), rtol=1e-12),
    "weighted_lookup": Case(lookup_args(), rtol=1e-15),
    "clipped": Case(st.tuples(st.lists(any_float, max_size=6), any_float, any_float)),
    "count_positive_above": Case(st.tuples(st.lists(any_float, max_size=6), st.lists(int64, max_size=6), int64)),
    # softmax and matmul in float32 (each within its spec's tolerance of torch/NumPy).
    "attend": Case(attention_args(), rtol=1e-4, atol=1e-5, examples=40),
    # embedding (exact), add, GELU (tanh) and L2 normalisation in float32.
    "embed_tokens": Case(embedding_args(), rtol=1e-4, atol=1e-6, examples=40),
}


def test_every_function_of_the_collection_has_a_case() -> None:
    assert sorted(CASES) == sorted(name for _, name in COLLECTION)


TARGETS = [("cpp", f, n) for f, n in COLLECTION] + [("rust", f, n) for f, n in RUST_COLLECTION]


@pytest.mark.parametrize("target,file,name", TARGETS, ids=[f"{t}-{n}" for t, _, n in TARGETS])
def test_compiled_function_matches_python(target: str, file: str, name: str, request: pytest.FixtureRequest,
                                          tmp_path: Path) -> None:
    case = CASES[name]
    python = python_function(file, name)
    compiled = request.getfixturevalue("compiled" if target == "cpp" else "compiled_rust")
    native = BothHosts(compiled[name])
    assert {k["target"] for k in native.manifest["kernels"]} == {f"cpu-{target}"}
    replay: list[tuple[tuple, tuple[str, Any]]] = []

    @settings(max_examples=case.examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(args=case.args)
    def from_python(args: tuple) -> None:
        expected = outcome(python, as_int64(list(args)))
        got = outcome(native, list(args))
        assert_same(expected, got, rtol=case.rtol, atol=case.atol, context=f"python host {name}{args!r}")
        if len(replay) < NODE_CASES:
            replay.append((args, expected))

    from_python()
    results = node_outcomes([(compiled[name], list(args)) for args, _ in replay], tmp_path)
    for (args, expected), got in zip(replay, results, strict=True):
        assert_same(expected, got, rtol=case.rtol, atol=case.atol, context=f"node host {name}{args!r}")
