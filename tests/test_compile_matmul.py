"""NumPy's and torch's 1-D rules for `@`, np.matmul and torch.matmul, compiled from
tests/data/compile_matmul.py and compared with Python: the spec's gufunc marks m and n flexible
("(m?,k),(k,n?)->(m?,n?)", NumPy's own notation), so the compiled adapter gives a 1-D operand the
size-1 dim the kernel expects and removes it from the result; shapes NumPy refuses raise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from opgen.host import load_compiled
from opgen.spec.shapes import ShapeRuleError, parse_shape_rule
from tests.compile_support import CHECKOUT, compile_data_functions, data_function, assert_same, outcome

SOURCE = CHECKOUT / "tests" / "data" / "compile_matmul.py"
RNG = np.random.default_rng(7)


def r(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# (a, b) shape pairs: 1-D on either side or both, batched against a vector, k = 0, and NumPy's refusals.
PAIRS = [((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((2, 2, 3), (3,)), ((3,), (2, 3, 4)), ((2, 3), (3, 4)),
         ((0,), (0, 4)), ((5,), (5, 1)), ((1, 5), (5,))]
REFUSED = [((3,), (4,)), ((3,), (4, 5)), ((2, 3), (4,)), ((), (3, 4)), ((3, 4), ())]
CASES: dict[str, list[tuple]] = {
    "at": [(r(*a), r(*b)) for a, b in PAIRS + REFUSED],
    "np_matmul": [(r(*a, dtype=np.float64), r(*b, dtype=np.float64)) for a, b in PAIRS + REFUSED],
    # torch raises RuntimeError where NumPy raises ValueError: only the shapes both accept
    "torch_matmul": [(torch.from_numpy(r(*a)), torch.from_numpy(r(*b))) for a, b in PAIRS],
    "tensor_at": [(torch.from_numpy(r(*a)), torch.from_numpy(r(*b))) for a, b in PAIRS],
    "affine": [(r(8), r(8, 3), r(3)), (r(2, 8), r(8, 3), r(3)), (r(8), r(8, 3), r(2, 3))],
}


def python(name: str) -> Any:
    return data_function(SOURCE, name)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return compile_data_functions(tmp_path_factory, SOURCE, CASES, "matmul")


@pytest.mark.parametrize("name", sorted(CASES))
def test_matmul_follows_numpys_1d_rules(name: str, libraries: dict[str, Path]) -> None:
    fn, native = python(name), load_compiled(libraries[name])
    for args in CASES[name]:
        want = outcome(fn, list(args))
        if want[0] == "ok" and isinstance(want[1], np.generic):  # 1-D @ 1-D: NumPy's scalar, a 0-d array compiled
            want = ("ok", np.asarray(want[1]))
        got = outcome(native, list(args))
        assert_same(want, got, rtol=1e-5, atol=1e-6, context=f"{name}{tuple(tuple(a.shape) for a in args)}")


def test_the_vector_result_is_compact_and_owned(libraries: dict[str, Path]) -> None:
    """The removed dim leaves a compact result (no copy needed to hand it over) of the caller's shape."""
    a, b = r(2, 2, 3), r(3)
    got = load_compiled(libraries["at"])(a, b)
    assert got.shape == (2, 2) and got.flags.c_contiguous
    np.testing.assert_allclose(got, a @ b, rtol=1e-5)


@pytest.mark.parametrize("shape,message", [
    ("(m?,k),(k,n)->(m,n)", "mark it so everywhere"),
    ("(m?),(k,n)->(m?,n)", "beside a fixed one"),
    ("(m,j?,k),(k,n)->(m,j?,n)", "first or last"),
    ("(m?,k),(k,m?)->(m?)", "exactly one input"),
    ("(m?,k),(k,n)->(n)", "must appear in the output"),
])
def test_flexible_dims_are_checked_as_numpy_defines_them(shape: str, message: str) -> None:
    with pytest.raises(ShapeRuleError, match=message.replace("?", r"\?")):
        parse_shape_rule(shape, ["a", "b"], [])


def test_flexible_dims_leave_the_kernels_rule_and_entries_as_they_were() -> None:
    rule = parse_shape_rule("(m?,k),(k,n?)->(m?,n?)", ["a", "b"], [])
    assert rule.gufunc == "(m,k),(k,n)->(m,n)" and rule.flexible == ("m", "n")
    assert rule.inputs_core == (("m", "k"), ("k", "n")) and rule.output_core == ("m", "n")
