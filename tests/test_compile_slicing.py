"""Slicing of lists and strs (Python's slice.indices, any step, code points) and NumPy's basic
indexing of arrays and tensors (ints, slices, `...`, None; views the kernels read as strided),
compiled once from tests/data/compile_slicing.py and compared with Python on every bound
combination of a small range, out-of-range indices and zero steps included; then the refusals."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from opgen.compiler import CompileError, compile_function
from opgen.host import load_compiled
from opgen.project import Project
from tests.compile_support import CHECKOUT, compile_data_functions, data_function, assert_same, outcome

SOURCE = CHECKOUT / "tests" / "data" / "compile_slicing.py"
BOUNDS = range(-7, 8)  # past both ends of the 5-element list and str below
X = np.arange(30, dtype=np.float32).reshape(5, 6) - 7.5
XI = np.arange(12, dtype=np.int64).reshape(3, 4)
X3 = X.reshape(5, 2, 3)

CASES: dict[str, list[tuple]] = {
    "list_slice": [([10, 11, 12, 13, 14], a, b, c) for a, b, c in itertools.product(BOUNDS, BOUNDS, (-3, -1, 0, 1, 2))]
    + [([], 0, 1, 1), ([], -1, -5, -1)],
    "list_tail": [(["a", "b", "c"],), ([],)],
    "list_reversed_prefix": [([0.5, 1.5, 2.5], k) for k in (-5, -1, 0, 1, 2, 9)],
    "str_slice": [("héllo日", a, b, c) for a, b, c in itertools.product(BOUNDS, BOUNDS, (-2, -1, 0, 1, 3))],
    "str_open_ends": [("日本語テキスト", k) for k in (0, 2, 7, 11)] + [("", 1)],
    "array_rows": [(X, a, b) for a, b in itertools.product((-9, -2, 0, 1, 4, 9), repeat=2)],
    "array_columns": [(X, k) for k in (-7, -1, 0, 3, 6, 20)] + [(X[:, ::-1], 2), (X.T, 2)],
    "array_row": [(XI, i) for i in (-4, -3, -1, 0, 2, 3)],
    "array_element": [(XI, i, j) for i, j in ((0, 0), (-1, -1), (2, 3), (3, 0), (0, -5))],
    "array_strided": [(X,), (X[::-1],), (np.zeros((0, 4), np.float32),)],
    "array_ellipsis_last": [(torch.from_numpy(X.reshape(5, 2, 3)),), (torch.from_numpy(X),)],
    "array_new_axis": [(X[0],)],
    "array_view_into_op": [(torch.from_numpy(X), k) for k in (0, 2, -1, 9)],
    "array_mixed": [(X.reshape(5, 2, 3), i) for i in (0, -1, 1)] + [(X, 0), (X, 6)],
    "t_attr": [(X,), (X3,), (X[0],), (np.array(2.5, dtype=np.float32),), (X[::2, ::-1],)],
    "mt_attr": [(X,), (X3,), (X[0],)],
    "swap_np": [(X3, a, b) for a, b in ((0, 2), (-1, 0), (1, 1), (3, 0), (0, -4))] + [(np.array(2.5, dtype=np.float32), 0, 0)],
    "swap_method": [(X3, 0, -1), (X, 1, 0), (X, 2, 0)],
    "transpose_torch": [(torch.from_numpy(X3),), (torch.from_numpy(X),)],
    "transpose_method_swap": [(torch.from_numpy(X3), a, b) for a, b in ((0, 2), (-2, -1), (1, 1))],
    "transpose_method_reverse": [(X3,), (X,), (X[0],)],
    "transpose_method_axes": [(X3,), (X,)],
    "permute_varargs": [(torch.from_numpy(X3),)],
    "permute_torch": [(torch.from_numpy(X3), d) for d in ([2, 0, 1], [-1, 0, 1], [0, 1, 2])],
    "scores": [(torch.from_numpy(X3), torch.from_numpy(np.linspace(-1, 1, 60, dtype=np.float32).reshape(5, 4, 3))),
               (torch.from_numpy(X3), torch.from_numpy(X3))],
    "transposed_into_op": [(X,), (X3,)],
}
ROUNDED = {"array_view_into_op": 1e-6, "transposed_into_op": 1e-6, "scores": 1e-5}
# permute_torch's refusals are torch's RuntimeError, which compiled code raises as ValueError (NumPy's)
REFUSED_AS = {"permute_torch": [(torch.from_numpy(X3), d) for d in ([0, 1], [0, 0, 1], [0, 1, 5])]}


def python(name: str) -> Any:
    return data_function(SOURCE, name)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return compile_data_functions(tmp_path_factory, SOURCE, CASES, "slicing")


@pytest.mark.parametrize("name", sorted(CASES))
def test_slicing_matches_python(name: str, libraries: dict[str, Path]) -> None:
    fn, native = python(name), load_compiled(libraries[name])
    for args in CASES[name]:
        want = outcome(fn, list(args))
        if want[0] == "ok" and isinstance(want[1], np.generic):  # x[i, j]: NumPy's scalar, a 0-d array compiled
            want = ("ok", np.asarray(want[1]))
        # exp and matmul are admitted within their specs' tolerances; everything else is data movement, exact
        assert_same(want, outcome(native, list(args)), rtol=ROUNDED.get(name, 0.0), atol=ROUNDED.get(name, 0.0),
                    context=f"{name}{tuple(getattr(a, 'shape', a) for a in args)}")


@pytest.mark.parametrize("name", sorted(REFUSED_AS))
def test_a_permutation_torch_refuses_raises(name: str, libraries: dict[str, Path]) -> None:
    fn, native = python(name), load_compiled(libraries[name])
    for args in REFUSED_AS[name]:
        assert outcome(fn, list(args))[0] == "error"
        got = outcome(native, list(args))
        assert got[0] == "error" and isinstance(got[1], (ValueError, IndexError)), (name, args, got)


def test_a_view_is_of_the_callers_memory_and_results_are_copies(libraries: dict[str, Path]) -> None:
    """The result of a slice is handed over compact and owned: changing the input afterwards leaves it."""
    x = X.copy()
    got = load_compiled(libraries["array_strided"])(x)
    x[:] = 0
    assert np.array_equal(got, X[1::2, ::3]) and got.flags.c_contiguous


PRELUDE = """\
import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
"""

REFUSED = [
    # negative and computed steps of arrays compile (a NumPy array's) or are refused (a torch tensor's):
    # tests/test_compile_indexing.py
    # x[mask] over the first dims compiles (tests/test_compile_indexing.py); a mask after a slice does not
    ("mask", "def f(x: F32) -> F32:\n    return x[:, x[0] > 0]\n", "a boolean mask after other indices",
     "two steps"),
    ("bool index", "def f(x: F32) -> F32:\n    return x[True]\n", "an index of an array is a bool", "int"),
    ("float bound", "def f(xs: list[int]) -> list[int]:\n    return xs[0.5:]\n", "a slice's start is a float", "int"),
    ("two parts on a list", "def f(xs: list[int]) -> list[int]:\n    return xs[1:, 0]\n",
     "a list[int] takes one index or one slice", ""),
]


@pytest.mark.parametrize("what,body,message,hint", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_subscript_outside_basic_indexing_is_refused(tmp_path: Path, what: str, body: str, message: str,
                                                       hint: str) -> None:
    source = tmp_path / "f.py"
    source.write_text(PRELUDE + "\n\n" + textwrap.dedent(body))
    with pytest.raises(CompileError) as info:
        compile_function(Project(CHECKOUT), source, "f", tmp_path / "out")
    err = info.value
    assert message in err.message, err.render()
    assert hint in (err.hint or ""), err.render()
    assert err.where == f"{source}:{PRELUDE.count(chr(10)) + 4}", err.render()
