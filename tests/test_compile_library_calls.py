"""Calls bind as their libraries define them (opgen.spec.library_signature): defaults omitted, positions
past the native order, keyword-only parameters, None for None defaults, int-or-tuple parameters spread
over the native per-dim ones. Each function of tests/data/compile_library_calls.py is compiled once and
compared with Python; the refusals name the library's signature and say what Python would do."""

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
from tests.compile_support import CHECKOUT, compile_data_functions, data_function, assert_same, outcome

SOURCE = CHECKOUT / "tests" / "data" / "compile_library_calls.py"
RNG = np.random.default_rng(7)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def t32(*shape: int) -> torch.Tensor:
    return torch.from_numpy(f32(*shape))


CASES: dict[str, list[tuple]] = {
    "gelu_default": [(t32(3, 5),)],
    "gelu_tanh": [(t32(7),)],
    # dim=1 of a 1-D tensor is torch's IndexError; the admitted kernels throw ValueError for a dim out of
    # range (the gate draws only dims in range), so that case is not here.
    "normalize_default": [(t32(4, 6),), (t32(2, 3, 5),)],
    "normalize_keywords": [(t32(4, 6),)],
    "var_ddof_by_position": [(f32(5, 3),)],
    "sum_dtype_none": [(f32(4, 3),)],
    "mean_keepdims_method": [(f32(4, 3),)],
    "where_positional": [(torch.from_numpy(f32(3, 4) > 0), t32(3, 4), t32(4))],
    "where_method": [(torch.from_numpy(f32(3, 4) > 0), t32(3, 4), t32(3, 1))],
    "clip_method": [(f32(9),)],
    "argsort_axis_default": [(np.array([[3, 1, 2, 1], [0, 0, -1, 5]], np.float32),)],
    "avg_pool_int": [(t32(2, 6, 7),)],
    "max_pool_tuples": [(t32(1, 5, 7),)],
    "max_pool_1d": [(t32(2, 9),)],
    "sub_alpha_one": [(t32(3), t32(3))],
    "tril_default": [(t32(4, 5),)],
    "reshape_tuple": [(f32(3, 4),)],
    "layer_norm_torch_signature": [(t32(3, 8), t32(8), t32(8))],
    "layer_norm_list_shape": [(t32(2, 3, 6), t32(6), t32(6), 6)],
    # lists (tuples) of arrays: NumPy's errors are ValueError in both (torch's RuntimeError is not compared)
    "concatenate_last_axis": [(f32(2, 3), f32(2, 5)), (f32(3), f32(4)), (f32(2, 3), f32(3, 3))],
    "cat_kv_cache": [(t32(1, 12, 16, 8), t32(1, 12, 1, 8))],
    "stack_default_axis": [(f32(2, 3), f32(2, 3), f32(2, 3)), (f32(2), f32(2), f32(3))],
    "torch_stack_dim": [(t32(4, 5), t32(4, 5))],
}


def python(name: str) -> Any:
    return data_function(SOURCE, name)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return compile_data_functions(tmp_path_factory, SOURCE, CASES, "library_calls")


@pytest.mark.parametrize("name", sorted(CASES))
def test_library_call_matches_python(name: str, libraries: dict[str, Path]) -> None:
    fn, native = python(name), load_compiled(libraries[name])
    for args in CASES[name]:
        # float32 kernels admitted within their specs' tolerances (a few ulps here)
        assert_same(outcome(fn, list(args)), outcome(native, list(args)), rtol=1e-5, atol=1e-6,
                    context=f"{name}{tuple(getattr(a, 'shape', a) for a in args)}")


def test_layer_norms_normalized_shape_is_checked_when_the_call_runs(libraries: dict[str, Path]) -> None:
    """torch raises RuntimeError for a normalized_shape other than weight's shape; the compiled call ValueError."""
    fn, native = python("layer_norm_list_shape"), load_compiled(libraries["layer_norm_list_shape"])
    args = (t32(2, 6), t32(6), t32(6), 5)
    with pytest.raises(RuntimeError):
        fn(*args)
    with pytest.raises(ValueError, match="normalized_shape must equal the shape of weight"):
        native(*args)


PRELUDE = """\
import numpy as np
import numpy.typing as npt
import torch
from torch.nn import functional as F
from typing import Annotated

F32 = npt.NDArray[np.float32]
T32 = Annotated[torch.Tensor, torch.float32]
"""


def error_of(tmp_path: Path, body: str) -> CompileError:
    source = tmp_path / "f.py"
    source.write_text(PRELUDE + "\n\n" + textwrap.dedent(body))
    with pytest.raises(CompileError) as info:
        compile_function(Project(CHECKOUT), source, "f", tmp_path / "out")
    return info.value


# (what, body, message fragments, hint fragment)
REFUSED = [
    ("keyword-only by position", "def f(x: T32) -> T32:\n    return F.gelu(x, 'tanh')\n",
     ["torch.nn.functional.gelu(input, *, approximate='none') does not take these arguments",
      "too many positional arguments (Python raises TypeError)"], "`opgen show torch.nn.functional.gelu`"),
    ("an unknown keyword", "def f(x: F32) -> F32:\n    return np.sum(x, dims=0)\n",
     ["got an unexpected keyword argument 'dims' (Python raises TypeError)"], "library's signature"),
    ("a library-only argument", "def f(x: F32, y: F32) -> F32:\n    return np.sum(x, axis=0, out=y)\n",
     ["numpy.sum's argument out has no counterpart in the native kernel (specs/numpy/sum.yaml takes a, axis)",
      "it can only be left at the default (None)"], "opgen show"),
    ("a keyword through **kwargs", "def f(x: F32) -> F32:\n    return x.sum(axis=0, where=x > 0)\n",
     ["ndarray.sum's keyword where= has no counterpart in the native kernel (specs/numpy/sum.yaml takes a, axis)"],
     "opgen show"),
    ("a library-only argument off its default", "def f(a: T32, b: T32) -> T32:\n    return torch.sub(a, b, alpha=2)\n",
     ["torch.sub's argument alpha has no counterpart", "(1)"], "opgen show"),
    ("a tuple of the wrong length", "def f(x: T32) -> T32:\n    return F.avg_pool2d(x, (2, 2, 2))\n",
     ["torch.nn.functional.avg_pool2d's kernel_size has 3 entries; the native kernel takes 2 (kernel_h, kernel_w)"],
     "opgen show"),
    ("a signature torch rejects", "def f(x: T32, w: T32, b: T32) -> T32:\n"
                                   "    return F.layer_norm(x, w, b, 1e-5)\n",
     ["normalized_shape"], "(d,)"),
    ("an int for normalized_shape", "def f(x: T32, w: T32, b: T32) -> T32:\n    return F.layer_norm(x, 4, w, b)\n",
     ["takes a tuple or list of ints here, not a int (Python raises TypeError)"], "(d,)"),
    ("None where the default is not None", "def f(x: T32) -> T32:\n    return F.gelu(x, approximate=None)\n",
     ["None as an argument is supported only where the library's default is None"], "leave the argument out"),
]


@pytest.mark.parametrize("what,body,messages,hint", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_call_the_library_would_not_take_is_refused_saying_so(tmp_path: Path, what: str, body: str,
                                                                  messages: list[str], hint: str) -> None:
    err = error_of(tmp_path, body)
    for m in messages:
        assert m in err.message, err.message
    assert hint in (err.hint or ""), err.hint
    first = PRELUDE.count("\n") + 3  # the line of `def f` in the written file
    assert err.where == f"{tmp_path / 'f.py'}:{first + 1}", err.render()  # the call's own line
