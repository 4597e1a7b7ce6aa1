"""What the compiler does by the array's library (NumPy's or torch's rules, tracked through every op
result) and integer-array indexing: negative steps (NumPy reverses, torch raises ValueError),
``emb[ids]`` / ``x[:, idx]`` / ``x[[0, 2]]`` as numpy.take (IndexError out of range, as both
libraries), and Python numbers meeting half arrays (integer arrays: tests/test_compile_promotion.py). Compiled once from
tests/data/compile_indexing.py and compared with Python; then the refusals, each naming its line."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from opgen.compiler import CompileError, compile_function
from opgen.host import load_compiled
from opgen.project import Project
from tests.compile_support import CHECKOUT, assert_same, compile_data_functions, data_function, outcome

SOURCE = CHECKOUT / "tests" / "data" / "compile_indexing.py"
X = np.arange(30, dtype=np.float32).reshape(5, 6) - 7.5
X3 = X.reshape(5, 2, 3)
XI = np.arange(12, dtype=np.int64).reshape(4, 3) * 7
IDS = np.array([[0, 4, -1], [2, 2, -5]], dtype=np.int64)
U8 = np.array([0, 1, 200, 255], dtype=np.uint8)
H = np.linspace(-3, 3, 101).astype(np.float16)


def t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


CASES: dict[str, list[tuple]] = {
    "reversed_rows": [(X,), (X[:, 1:],), (X.T,), (np.zeros((0, 3), np.float32),)],
    "reversed_every_other_column": [(X,), (X[::2],)],
    "stepped": [(X, a, b, k) for a in (-9, -1, 0, 2, 9) for b in (-9, -2, 0, 3, 9) for k in (-3, -1, 0, 1, 2)],
    "reversed_into_op": [(X,)],
    "torch_stepped": [(t(X), k) for k in (1, 2, 7, 0, -1)],
    "rows": [(X, IDS), (X, np.array([4, 0], np.int64)), (X, np.array(3, np.int64)), (X, np.zeros(0, np.int64)),
             (X, np.array([5], np.int64)), (X, np.array([-6], np.int64)), (X[::-1], IDS)],
    "torch_rows": [(t(X), t(IDS)), (t(X), t(np.array([9], np.int64)))],
    "columns": [(X, np.array([5, 0, -6], np.int64)), (X3, np.array([1, 0], np.int64)), (X, np.array([6], np.int64))],
    "last_axis": [(X3, np.array([2, -1], np.int64)), (X, np.array([[0], [5]], np.int64)),
                  (X3, np.array([3], np.int64))],
    "listed": [(X,), (X3,), (X[:2],)],
    "row_then_gather": [(X, i, np.array([1, -1], np.int64)) for i in (0, -5, 4, 5)],
    "gather_of_view": [(X, np.array([0, 5], np.int64)), (X3, np.array([1], np.int64))],
    "int_rows": [(XI, np.array([3, 0, 3], np.int64))],
    "torch_apart": [(t(X3), t(np.array([2, 0, 1], np.int64))), (t(X3), t(np.array([3], np.int64)))],
    "wraps_or_raises": [(U8, k) for k in (0, 1, 55, 56, 255, 256, -1)],
    "torch_wraps": [(t(U8), k) for k in (0, 1, 56, 256, 300, -1, -300)],
    "half_scaled": [(H, s) for s in (0.5, 0.1, 1 / 3, 1e5, -2.0)],
    "torch_half_scaled": [(t(H),)],
    "sum_method_numpy": [(X,)],
    "rows_by_int32": [(X, IDS.astype(np.int32)), (X, np.array([5], np.int32)), (X, np.array([-6], np.int32)),
                      (X, np.array(-1, np.int32)), (X, np.array([[2**31 - 1]], np.int32)),
                      (X, np.array([-2**31], np.int32)), (X, np.zeros((2, 0), np.int32)), (X[::-1], IDS.astype(np.int32)),
                      (X, IDS.astype(np.int32)[:, ::2])],
    "columns_by_int32": [(X, np.array([5, 0, -6], np.int32)), (X, np.array([6], np.int32)), (X, np.array([-7], np.int32))],
    **{f"rows_by_{d.__name__}": [(X, np.array([4, 0, 4], d)), (X, np.array([5], d)), (X, np.array([[1], [2]], d)[::-1]),
                                 (X, np.array([np.iinfo(d).max], d))] for d in (np.int16, np.uint16, np.uint32)},
    "rows_by_int8": [(X, np.array([-5, -1, 4], np.int8)), (X, np.array([-6], np.int8)), (X, np.array([127], np.int8))],
    "columns_by_uint8": [(X, np.array([5, 0], np.uint8)), (X, np.array([200], np.uint8)), (X, np.zeros(0, np.uint8))],
    "torch_rows_by_int32": [(t(X), t(IDS.astype(np.int32))), (t(X), t(np.array([5], np.int32))),
                            (t(X), t(np.array([-5, 4], np.int32)))],
}
ROW_MASK = np.array([True, False, True, True, False])
GRID_MASK = (X > 0) & (np.arange(6) % 2 == 0)
MASKS = [(X, ROW_MASK), (X, GRID_MASK), (X, np.zeros(5, bool)), (X, np.ones(5, bool)), (X, np.array(True)),
         (X, np.array(False)), (X, ROW_MASK[::-1]), (X, GRID_MASK.T.copy().T), (X[:, ::2], ROW_MASK),
         (X, np.ones(4, bool)), (X, np.ones((5, 7), bool)), (X, np.ones((5, 6, 1), bool)),
         (X[:1], np.zeros(0, bool)), (np.zeros((0, 3), np.float32), np.zeros(0, bool))]
CASES.update({
    "masked": MASKS,
    "masked_rows_then_slice": [(X, ROW_MASK), (X, np.ones(3, bool)), (X3, np.array([True, False]))],
    "positive": [(X,), (X3,), (X.T,), (np.zeros((0, 2), np.float32),), (np.full((), -1.0, np.float32),),
                 (np.full((), 2.0, np.float32),)],
    "positive_total": [(X,), (-np.abs(X),), (X3,)],
    "masked_int": [(XI, np.array([False, True, True, False])), (XI, XI % 2 == 0), (XI, np.ones(3, bool))],
    "masked_f64": [(X.astype(np.float64), ROW_MASK), (X.astype(np.float64), GRID_MASK)],
    "masked_bools": [(X > 0, ROW_MASK), (X > 0, X < 3)],
    "masked_view": [(X, np.array([True, False] * 3)), (X, X[::-1].T > 0), (X, ROW_MASK)],
    "torch_masked": [(t(X), t(ROW_MASK)), (t(X), t(GRID_MASK)), (t(X), t(np.ones(4, bool)))],
    "torch_positive": [(t(X),), (t(X3),)],
})
ROUNDED = {"reversed_into_op": 1e-6, "sum_method_numpy": 1e-6, "positive_total": 1e-6}


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return compile_data_functions(tmp_path_factory, SOURCE, CASES, "indexing")


@pytest.mark.parametrize("name", sorted(CASES))
def test_indexing_matches_python(name: str, libraries: dict[str, Path]) -> None:
    fn, native = data_function(SOURCE, name), load_compiled(libraries[name])
    for args in CASES[name]:
        want, got = outcome(fn, list(args)), outcome(native, list(args))
        if want[0] == "ok" and isinstance(want[1], np.generic):
            want = ("ok", np.asarray(want[1]))
        assert_same(want, got, rtol=ROUNDED.get(name, 0.0), atol=ROUNDED.get(name, 0.0),
                    context=f"{name}{tuple(getattr(a, 'shape', a) for a in args)}")


def test_the_libraries_differ_where_the_cases_say() -> None:
    """The cases above are worth having: NumPy and torch really disagree on these inputs."""
    assert outcome(data_function(SOURCE, "wraps_or_raises"), [U8, 256])[0] == "error"
    assert outcome(data_function(SOURCE, "torch_wraps"), [t(U8), 256])[0] == "ok"
    assert outcome(data_function(SOURCE, "torch_stepped"), [t(X), -1])[0] == "error"
    assert outcome(data_function(SOURCE, "stepped"), [X, 0, 9, -1])[0] == "ok"
    assert data_function(SOURCE, "torch_apart")(t(X3), t(np.array([2, 0, 1]))).shape != X3[0, :, [2, 0, 1]].shape


PRELUDE = """\
from typing import Annotated

import numpy as np
import numpy.typing as npt
import torch

F32 = npt.NDArray[np.float32]
F16 = npt.NDArray[np.float16]
I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
U64 = npt.NDArray[np.uint64]
TI16 = Annotated[torch.Tensor, torch.int16]
TU8 = Annotated[torch.Tensor, torch.uint8]
T32 = Annotated[torch.Tensor, torch.float32]
T16 = Annotated[torch.Tensor, torch.float16]
TI64 = Annotated[torch.Tensor, torch.int64]
"""

REFUSED = [
    ("torch negative step", "def f(x: T32) -> T32:\n    return x[::-1]\n",
     "torch raises ValueError: step must be greater than zero", "torch.flip"),
    ("mixed libraries", "def f(x: F32, y: T32) -> F32:\n    return x + y\n",
     "a NumPy array and a torch tensor meet here", "convert one of them"),
    ("torch half with a computed float", "def f(x: T16, s: float) -> T16:\n    return x * s\n",
     "torch computes in float32", "constant float16 holds exactly"),
    ("torch half with an inexact constant", "def f(x: T16) -> T16:\n    return x * 0.1\n",
     "torch computes in float32", "constant float16 holds exactly"),
    ("mask after a slice", "def f(x: F32) -> F32:\n    return x[:, x[0] > 0]\n",
     "a boolean mask after other indices", "two steps"),
    ("assignment through an index array among slices", "def f(x: F32) -> F32:\n    y = np.copy(x * 2.0)\n"
     "    y[:, [0, 2]] = 0.0  # <-\n    return y\n", "assigning through integer-array indices", "bool mask"),
    ("a list of bools", "def f(x: F32) -> F32:\n    return x[[True, False]]\n", "a list of bools is a mask",
     "list of ints"),
    ("uint64 indices", "def f(x: F32, i: U64) -> F32:\n    return x[i]\n", "takes int64, int32, int16",
     "int64 array"),
    ("torch int16 indices", "def f(x: T32, i: TI16) -> T32:\n    return x[i]\n", "torch takes int64 and int32",
     "int64 array"),
    ("torch uint8 indices (a mask)", "def f(x: T32, i: TU8) -> T32:\n    return x[i]\n", "reads uint8 as a mask",
     "int64 array"),
    # x[i, j] of a NumPy array compiles (tests/test_compile_realistic.py: chosen_token_probs); others do not
    ("two index arrays apart", "def f(x: F32, i: I64) -> F32:\n    return x[i, :, i]\n", "several arrays at once",
     "one axis at a time"),
    ("two index arrays of a tensor", "def f(x: T32, i: TI64) -> T32:\n    return x[i, i]\n",
     "only as x[i, j] of a NumPy array", "one axis at a time"),
    ("NumPy int and array apart", "def f(x: F32, i: I64) -> F32:\n    return x[0, :, i]\n",
     "NumPy puts the gathered dims first", "two steps"),
    ("a library kept per name", "def f(x: F32, y: T32) -> F32:\n    z = x\n    z = y  # <-\n    return x\n",
     "a compiled variable keeps one library", "another name"),
]


@pytest.mark.parametrize("what,body,message,hint", REFUSED, ids=[r[0] for r in REFUSED])
def test_what_stays_refused_says_why_and_where(tmp_path: Path, what: str, body: str, message: str, hint: str) -> None:
    source = tmp_path / "f.py"
    source.write_text(PRELUDE + "\n\n" + textwrap.dedent(body))
    with pytest.raises(CompileError) as info:
        compile_function(Project(CHECKOUT), source, "f", tmp_path / "out")
    err = info.value
    assert message in err.message, err.render()
    assert hint in (err.hint or ""), err.render()
    lines = body.splitlines()
    line = next((i for i, text in enumerate(lines, 1) if text.endswith("# <-")), len(lines))  # else the last
    assert err.where == f"{source}:{PRELUDE.count(chr(10)) + 2 + line}", err.render()
