"""Implicit type promotion (opgen.compiler.promotion): the tables checked against NumPy 2's
``result_type`` and torch's ``promote_types`` / ``result_type`` for every pair of the dtypes opgen knows,
then functions where dtypes meet (tests/data/compile_promotion.py) compiled for cpu-cpp and cpu-rust and
compared with Python on Hypothesis-drawn arrays: value and dtype. torch's weak 0-d tensors, which the
compiled code cannot follow (the dtype would depend on the run), raise TypeError when they would matter."""

from __future__ import annotations

import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from opgen.compiler import CompileError, compile_function, compile_many, promotion
from opgen.compiler.flavor import NUMPY, TORCH
from opgen.host import load_compiled
from opgen.project import Project
from opgen.spec.dtypes import DTYPES
from tests.compile_support import CHECKOUT, assert_same, data_function, outcome

SOURCE = CHECKOUT / "tests" / "data" / "compile_promotion.py"
SCALARS = {"bool": True, "int": 3, "float": 0.5}


def _np(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _name(dt) -> str:
    return "bfloat16" if dt == np.dtype(ml_dtypes.bfloat16) else str(dt).removeprefix("torch.")


def _torch_or_refused(call) -> str:
    try:
        return _name(call())
    except RuntimeError:
        return "refused"


def _ours_or_refused(call) -> str:
    try:
        return call()
    except promotion.NoPromotion:
        return "refused"


@pytest.mark.parametrize("a", list(DTYPES))
def test_numpy_table_is_numpy_result_type(a: str) -> None:
    for b in DTYPES:
        assert promotion.numpy_pair(a, b) == _name(np.result_type(_np(a), _np(b))), (a, b)
        for kind, value in SCALARS.items():
            assert promotion.numpy_result([a], [kind]) == _name(np.result_type(np.zeros(2, _np(a)), value)), (a, kind)
            if "bfloat16" in (a, b) and a != b:
                continue  # NumPy's result_type of ml_dtypes' bfloat16 with two more operands depends on their order
            assert promotion.numpy_result([a, b], [kind]) == \
                _name(np.result_type(np.zeros(2, _np(a)), np.zeros(2, _np(b)), value)), (a, b, kind)


@pytest.mark.parametrize("a", list(DTYPES))
def test_torch_table_is_torch_promote_types(a: str) -> None:
    ta = getattr(torch, a)
    for b in DTYPES:
        tb = getattr(torch, b)
        assert _ours_or_refused(lambda: promotion.torch_pair(a, b)) == \
            _torch_or_refused(lambda: torch.promote_types(ta, tb)), (a, b)
        # a 0-d tensor counts only above the dimensioned tensors' category
        assert _ours_or_refused(lambda: promotion.torch_result([a], [b], [])) == \
            _torch_or_refused(lambda: torch.result_type(torch.zeros(2, dtype=ta), torch.zeros((), dtype=tb))), (a, b)
        for kind, value in SCALARS.items():
            assert _ours_or_refused(lambda: promotion.torch_result([a, b], [], [kind])) == _torch_or_refused(
                lambda: torch.result_type(torch.zeros(2, dtype=torch.promote_types(ta, tb)), value)), (a, b, kind)


def test_true_division_of_ints_computes_in_each_librarys_float() -> None:
    for a in ("bool", "int8", "int32", "int64", "uint8"):
        assert promotion.computing(NUMPY, "operator.truediv", a) == (np.ones(1, _np(a)) / np.ones(1, _np(a))).dtype
        t = torch.ones(1, dtype=getattr(torch, a))
        assert promotion.computing(TORCH, "operator.truediv", a) == _name((t / t).dtype)


def test_zero_dim_patterns_are_torchs() -> None:
    """Each pattern of 0-d operands zero_dim_results names gives torch that dtype; the others its static one."""
    for a in ("float32", "int32", "bool", "float16"):
        for b in ("float64", "int64", "float32", "int8"):
            static = promotion.torch_result([a, b], [], [])
            differ = promotion.zero_dim_results([a, b], [])
            for zero_a, zero_b in ((True, False), (False, True)):
                ta = torch.zeros(() if zero_a else (2,), dtype=getattr(torch, a))
                tb = torch.zeros(() if zero_b else (2,), dtype=getattr(torch, b))
                got = _name(torch.result_type(ta, tb))
                assert differ.get((zero_a, zero_b), static) == got, (a, b, zero_a, zero_b)


# ---------------------------------------------------------------- compiled, against Python

NUMPY_FUNCTIONS = {  # name: the dtypes of its array parameters
    "float_times_ints": ["int64"], "ints_plus_floats": ["int64", "float32"],
    "single_with_double": ["float32", "float64"], "mask_arithmetic": ["bool", "float32"], "mask_count": ["bool"],
    "widths": ["int32", "int64"], "ratios": ["int64", "int64"], "half_with_single": ["float16", "float32"],
    "where_mixed": ["bool", "int64", "float32"], "compare_mixed": ["int32", "float64"],
    "scaled_gelu_constant": ["float32"], "matmul_mixed": ["float32", "float64"], "int_rows_scaled": ["int32"],
}
TORCH_FUNCTIONS = {
    "torch_float_times_ints": ["int64"], "torch_ints_plus_floats": ["int64", "float32"],
    "torch_single_with_double": ["float32", "float64"], "torch_mask_count": ["bool"],
    "torch_widths": ["int32", "int64"], "torch_ratios": ["int64", "int64"],
    "torch_half_with_single": ["float16", "float32"], "bool_tensor_sum": ["bool", "float32"],
}
FUNCTIONS = {**NUMPY_FUNCTIONS, **TORCH_FUNCTIONS}
# Half precision kernels are C++ only (README, "The op library").
RUST = [n for n, dtypes in FUNCTIONS.items() if "float16" not in dtypes]
TOLERANCE = {"matmul_mixed": 1e-12}


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    out = tmp_path_factory.mktemp("promotion")
    jobs = {"cpu-cpp": list(FUNCTIONS), "cpu-rust": RUST}
    for target, names in jobs.items():
        compile_many(Project(CHECKOUT), [(SOURCE, n, out / target / n) for n in names], target=target)
    return {(target, n): out / target / n for target, names in jobs.items() for n in names}


def _values(dtype: str):
    if dtype == "bool":
        return st.booleans()
    if dtype.startswith("int"):
        return st.integers(-1000, 1000)
    return st.floats(-1e3, 1e3, width=16 if dtype == "float16" else 32)


@st.composite
def _arguments(draw, name: str) -> list:
    dtypes = FUNCTIONS[name]
    if name == "matmul_mixed":
        m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
        shapes = [(m, k), (k, n)]
    else:
        shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=len(dtypes), min_dims=1, max_dims=3, max_side=4)
                      ).input_shapes
    arrays = [draw(hnp.arrays(_np(d), s, elements=_values(d))) for d, s in zip(dtypes, shapes)]
    return [torch.from_numpy(a) for a in arrays] if name in TORCH_FUNCTIONS else arrays


@pytest.mark.parametrize("target", ["cpu-cpp", "cpu-rust"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_promoted_result_is_pythons(name: str, target: str, libraries: dict) -> None:
    if (target, name) not in libraries:
        pytest.skip("a half-precision kernel: C++ only")
    fn, native = data_function(SOURCE, name), load_compiled(libraries[(target, name)])
    tol = TOLERANCE.get(name, 0.0)

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(args=_arguments(name))
    def check(args: list) -> None:
        with np.errstate(all="ignore"):
            want = outcome(fn, list(args))
        assert_same(want, outcome(native, list(args)), rtol=tol, atol=tol,
                    context=f"{name}{tuple(tuple(a.shape) for a in args)}")

    check()


def test_a_zero_dim_torch_operand_that_would_change_the_dtype_raises(libraries: dict) -> None:
    """torch: float32 with a 0-d float64 tensor stays float32 (the 0-d one is weak); the compiled function,
    typed float64, says so instead of returning another dtype than Python."""
    native = load_compiled(libraries[("cpu-cpp", "torch_single_with_double")])
    a, b = torch.ones(3, dtype=torch.float32), torch.tensor(2.0, dtype=torch.float64)
    assert data_function(SOURCE, "torch_single_with_double")(a, b).dtype == torch.float32
    with pytest.raises(TypeError, match="0-d tensor is weak"):
        native(a, b)
    # both 0-d, or the narrower one 0-d: torch's dtype is the compiled one
    for x, y in ((a[0], b), (a, torch.ones(3, dtype=torch.float64)), (torch.tensor(1.0), torch.ones(3, dtype=torch.float64))):
        assert_same(outcome(data_function(SOURCE, "torch_single_with_double"), [x, y]), outcome(native, [x, y]))


PRELUDE = """\
from typing import Annotated

import numpy as np
import numpy.typing as npt
import torch

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I8 = npt.NDArray[np.int8]
F16 = npt.NDArray[np.float16]
T32 = Annotated[torch.Tensor, torch.float32]
T64 = Annotated[torch.Tensor, torch.float64]
TU16 = Annotated[torch.Tensor, torch.uint16]
TI8 = Annotated[torch.Tensor, torch.int8]
"""

REFUSED = [
    ("torch matmul of two dtypes", "def f(a: T32, b: T64) -> T64:\n    return a @ b\n",
     "takes arrays of one dtype in torch (it does not promote)", "cast them to one dtype"),
    ("torch uint16 with int8", "def f(a: TU16, b: TI8) -> TU16:\n    return a + b\n",
     "torch does not promote uint16 with int8", "cast the arrays"),
    ("a promotion with no cast kernel", "def f(a: I8, b: F16) -> F16:\n    return a + b\n",
     "a + b computes in float16 (NumPy's promotion), which needs a cast: opgen.cast has no overload taking (tensor[int8]", "opgen synthesize opgen.cast"),
]


@pytest.mark.parametrize("what,body,message,hint", REFUSED, ids=[r[0] for r in REFUSED])
def test_what_stays_refused_says_why(tmp_path: Path, what: str, body: str, message: str, hint: str) -> None:
    source = tmp_path / "f.py"
    source.write_text(PRELUDE + "\n\n" + textwrap.dedent(body))
    with pytest.raises(CompileError) as info:
        compile_function(Project(CHECKOUT), source, "f", tmp_path / "out")
    assert message in info.value.message, info.value.render()
    assert hint in (info.value.hint or ""), info.value.render()
    assert info.value.where.endswith(f"f.py:{PRELUDE.count(chr(10)) + 4}"), info.value.render()
