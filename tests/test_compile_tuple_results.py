"""Compiled calls of tuple-returning ops (tests/data/compile_tuple_results.py): unpacking
(`values, indices = torch.topk(x, k)`, `v, i = x.max(dim=1)`, native_layer_norm's three results), the
named fields (`.values`, `.indices`), constant items (`r[0]`, `r[-1]`) and a tuple returned whole,
each compared with Python (torch) on ties, nans and errors; then the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from opgen.compiler import CompileError, compile_function
from opgen.host import load_compiled
from opgen.project import Project
from tests.compile_support import CHECKOUT, assert_same, compile_data_functions, data_function, outcome

SOURCE = CHECKOUT / "tests" / "data" / "compile_tuple_results.py"
RNG = np.random.default_rng(5)
X = torch.from_numpy(RNG.integers(-3, 4, (4, 6)).astype(np.float32))  # small integers: ties
XN = X.clone()
XN[1, 2] = float("nan")
XN[2, 0] = -0.0
# torch.topk orders ties as it likes (opgen fixes the lower index first): its cases have distinct values.
XD = torch.from_numpy(RNG.permutation(24).reshape(4, 6).astype(np.float32) - 11.5)
XDN = XD.clone()
XDN[1, 2] = float("nan")
W, B = (torch.from_numpy(RNG.standard_normal(6).astype(np.float32)) for _ in range(2))

CASES: dict[str, list[tuple]] = {
    "topk_unpacked": [(XD, 2), (XDN, 3), (XD, 0), (XD.T, 1)],
    "topk_fields": [(XD,), (XDN,)],
    "topk_values_method": [(XD,), (XDN.T,)],
    "topk_item": [(XD,), (XDN,)],
    "topk_returned": [(XD, 3), (XDN, 6)],
    "max_along": [(X,), (XN,), (X[:, :1],)],
    "min_kept": [(X,), (XN,), (torch.zeros(3, 0),)],  # an empty dim: torch's IndexError
    "max_then_item": [(X,), (XN,)],
    "max_method_positional": [(X,), (XN,)],
    "numpy_max_axis": [(X.numpy(),), (XN.numpy(),)],
    "layer_norm_statistics": [(X, W, B), (XN, W, B)],
}
# native_layer_norm computes in float32 in another order than torch: its spec's tolerance.
TOLERANCE = {"layer_norm_statistics": 1e-5}


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, Path]:
    return compile_data_functions(tmp_path_factory, SOURCE, CASES, "tuple-results")


@pytest.mark.parametrize("name", sorted(CASES))
def test_tuple_results_match_python(name, libraries):
    fn, native = data_function(SOURCE, name), load_compiled(libraries[name])
    for args in CASES[name]:
        want = outcome(fn, list(args))
        if want[0] == "ok" and isinstance(want[1], tuple):  # torch's named tuple: its items
            want = ("ok", tuple(want[1]))
        tol = TOLERANCE.get(name, 0.0)
        assert_same(want, outcome(native, list(args)), rtol=tol, atol=tol, context=name)


def test_a_k_torch_rejects_is_index_error(libraries):
    """torch raises RuntimeError for k > n; opgen's error kinds have IndexError (specs/torch/topk.yaml)."""
    with pytest.raises(IndexError, match="selected index k out of range"):
        load_compiled(libraries["topk_unpacked"])(XD, 7)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        data_function(SOURCE, "topk_unpacked")(XD, 7)


PRELUDE = ("from typing import Annotated\n\nimport torch\n\nT32 = Annotated[torch.Tensor, torch.float32]\n\n\n")
REFUSED = [
    ("no such field", "def f(x: T32) -> T32:\n    return torch.topk(x, 2).value\n",
     "has no value in opgen compile", "its fields: values, indices"),
    ("item out of range", "def f(x: T32) -> T32:\n    return torch.topk(x, 2)[2]\n",
     "indexed with 2 (Python raises IndexError)", "[-2, 2)"),
    ("variable item", "def f(x: T32, i: int) -> T32:\n    return torch.topk(x, 2)[i]\n",
     "a value known only when it runs", ""),
    ("unpacking into too many names", "def f(x: T32) -> T32:\n    a, b, c = torch.topk(x, 2)\n    return a\n",
     "not enough values to unpack (expected 3, got 2)", ""),
]


@pytest.mark.parametrize("what,body,message,hint", REFUSED, ids=[r[0] for r in REFUSED])
def test_what_the_compiler_refuses_says_why(tmp_path, what, body, message, hint):
    source = tmp_path / "f.py"
    source.write_text(PRELUDE + body)
    with pytest.raises(CompileError) as info:
        compile_function(Project(CHECKOUT), source, "f", tmp_path / "out")
    text = str(info.value.message) + " " + str(getattr(info.value, "hint", ""))
    assert message in text and hint in text, text
