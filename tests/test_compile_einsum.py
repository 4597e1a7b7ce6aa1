"""np.einsum / torch.einsum with a constant equation, lowered to views and one matmul
(opgen.compiler.einsum), compared with NumPy's and torch's einsum within operator.matmul's float32
tolerance (the kernel that computes it); rank and size mismatches raise as NumPy's; what does not
lower is refused at compile time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from opgen.compiler import CompileError, compile_function
from opgen.compiler.einsum import parse
from opgen.host import load_compiled
from opgen.project import Project
from opgen.spec.model import load_all
from tests.compile_support import CHECKOUT, compile_data_functions, data_function

SOURCE = CHECKOUT / "tests" / "data" / "compile_einsum.py"
RNG = np.random.default_rng(11)


def f32(*shape: int) -> np.ndarray:
    return (RNG.standard_t(3, shape) * 2).astype(np.float32)


def t32(*shape: int) -> torch.Tensor:
    return torch.from_numpy(f32(*shape))


EQUATIONS = {"attention_scores": "bhqd,bhkd->bhqk", "attention_values": "bhqk,bhkd->bhqd",
             "batched_matmul": "bij,bjk->bik", "matmul": "ij,jk->ik", "row_dots": "bi,bi->b", "dot": "i,i->",
             "implicit_transposed_product": "ji,jk", "heads_last": "bqhd,bkhd->bhqk", "outer": "i,j->ij"}
CASES: dict[str, list[tuple]] = {
    "attention_scores": [(t32(2, 3, 5, 8), t32(2, 3, 7, 8)), (t32(1, 12, 1, 64), t32(1, 12, 24, 64)),
                         (t32(2, 3, 5, 8).transpose(1, 2).contiguous().transpose(1, 2), t32(2, 3, 0, 8))],
    "attention_values": [(t32(2, 3, 5, 7), t32(2, 3, 7, 8)), (t32(1, 2, 4, 0), t32(1, 2, 0, 3))],
    "batched_matmul": [(f32(4, 3, 5), f32(4, 5, 2)), (f32(1, 3, 5), f32(4, 5, 2))],  # batch 1 broadcasts
    "matmul": [(f32(3, 300), f32(300, 4)), (f32(0, 3), f32(3, 2)), (f32(5, 4)[::2], f32(4, 3).T.copy().T)],
    "row_dots": [(f32(6, 23), f32(6, 23)), (f32(3, 0), f32(3, 0))],
    "dot": [(f32(812), f32(812)), (f32(0), f32(0))],
    "implicit_transposed_product": [(f32(5, 3), f32(5, 4))],
    "heads_last": [(t32(2, 5, 3, 8), t32(2, 7, 3, 8))],
    "outer": [(f32(3), f32(4))],
}


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, Path]:
    return compile_data_functions(tmp_path_factory, SOURCE, CASES, "einsum")


def _as_f64(x) -> np.ndarray:
    return (x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x)).astype(np.float64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_einsum_matches_python_within_matmuls_tolerance(name, libraries):
    tol = load_all(Project(CHECKOUT).specs)["operator.matmul"].tolerance["float32"]
    fn, native = data_function(SOURCE, name), load_compiled(libraries[name])
    for args in CASES[name]:
        want, got = _as_f64(fn(*args)), _as_f64(native(*args))
        assert got.shape == want.shape, (name, got.shape, want.shape)
        a, b = (_as_f64(x) for x in args)
        ins, out = parse(EQUATIONS[name])
        k = int(np.prod([a.shape[ins[0].index(c)] for c in ins[0] if c in ins[1] and c not in out]))
        # basis abs_inputs: the bound scales with the same contraction of |a| and |b|
        bound = tol.atol + (tol.rtol + tol.rtol_per_term * k) * np.einsum(EQUATIONS[name], np.abs(a), np.abs(b))
        assert (np.abs(got - want) <= bound).all(), (name, float(np.max(np.abs(got - want) - bound)))


def test_an_operand_of_the_wrong_rank_or_size_raises_value_error_as_numpy(libraries):
    native = load_compiled(libraries["batched_matmul"])
    for a, b in ((f32(3, 5), f32(4, 5, 2)), (f32(4, 3, 5), f32(4, 6, 2))):
        with pytest.raises(ValueError):
            np.einsum("bij,bjk->bik", a, b)
        with pytest.raises(ValueError):
            native(a, b)


PRELUDE = "import numpy as np\nimport numpy.typing as npt\n\nF32 = npt.NDArray[np.float32]\n\n\n"
REFUSED = [
    ("three operands", 'def f(a: F32, b: F32) -> F32:\n    return np.einsum("ij,jk,kl->il", a, b, b)\n',
     "einsum of 3 operands"),
    ("trace", 'def f(a: F32, b: F32) -> F32:\n    return np.einsum("ii,ij->j", a, b)\n', "a label repeated"),
    ("sum over one operand", 'def f(a: F32, b: F32) -> F32:\n    return np.einsum("ij,k->k", a, b)\n',
     "summed over one operand only"),
    ("two contracted labels", 'def f(a: F32, b: F32) -> F32:\n    return np.einsum("bij,bij->b", a, b)\n',
     "several row, column or contracted labels"),
    ("ellipsis", 'def f(a: F32, b: F32) -> F32:\n    return np.einsum("...ij,...jk->...ik", a, b)\n', "an ellipsis"),
    ("variable equation", 'def f(a: F32, b: F32, eq: str) -> F32:\n    return np.einsum(eq, a, b)\n',
     "a constant equation"),
]


@pytest.mark.parametrize("what,body,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_einsums_that_do_not_lower_are_refused(tmp_path, what, body, message):
    source = tmp_path / "f.py"
    source.write_text(PRELUDE + body)
    with pytest.raises(CompileError) as info:
        compile_function(Project(CHECKOUT), source, "f", tmp_path / "out")
    assert message in str(info.value.message), str(info.value.message)
