"""torch.max / torch.min along a dim: the reference (opgen.selection_references.max_dim, min_dim)
against torch itself on ties, nans, signed zeros, negative dims, keepdim and empty lanes, and the
answers as scripts/extreme_dim_kernels.py writes them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from opgen.selection_references import max_dim, min_dim
from opgen.spec.model import load_all
from opgen.verify.scale import drawn_examples
from tests.registry_kernels import LazyKernels

ROOT = Path(__file__).resolve().parents[1]
PAIRS = [(max_dim, torch.max), (min_dim, torch.min)]
KERNELS = LazyKernels()


def _inputs(rng: np.random.Generator):
    for shape in [(7,), (3, 5), (2, 3, 4), (4, 1, 6), (0, 3), (2, 0, 3)]:
        for dtype in (np.float32, np.float64, np.int64):
            x = rng.integers(-3, 4, shape).astype(dtype)  # small integers: many ties
            if dtype != np.int64 and x.size:
                flat = x.reshape(-1)
                flat[rng.integers(0, flat.size, max(1, flat.size // 5))] = np.nan
                flat[rng.integers(0, flat.size, max(1, flat.size // 5))] = -0.0
                flat[rng.integers(0, flat.size, max(1, flat.size // 7))] = np.inf
            yield x


@pytest.mark.parametrize("ours,theirs", PAIRS, ids=["max", "min"])
def test_the_reference_is_torch_on_ties_nans_and_signed_zeros(ours, theirs):
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(20):
        for x in _inputs(rng):
            for dim in range(-x.ndim, x.ndim):
                for keepdim in (False, True):
                    try:
                        want = theirs(torch.from_numpy(x), dim, keepdim)
                    except IndexError as exc:  # an empty lane
                        with pytest.raises(IndexError, match="to have non-zero size"):
                            ours(x, dim, keepdim)
                        assert "non-zero size" in str(exc)
                        continue
                    values, indices = ours(x, dim, keepdim)
                    np.testing.assert_array_equal(indices, want.indices.numpy())
                    np.testing.assert_array_equal(values, want.values.numpy())
                    assert np.array_equal(np.signbit(values), np.signbit(want.values.numpy()))
                    assert values.dtype == x.dtype and indices.dtype == np.int64
                    checked += 1
    assert checked > 500


@pytest.mark.parametrize("ours,theirs", PAIRS, ids=["max", "min"])
def test_a_0d_input_and_a_dim_out_of_range_are_torchs(ours, theirs):
    x = np.array(2.5, np.float32)
    values, indices = ours(x, -1)
    want = theirs(torch.from_numpy(x), -1)
    assert values.shape == () and float(values) == float(want.values) and int(indices) == int(want.indices) == 0
    with pytest.raises(IndexError, match="Dimension out of range"):
        ours(np.zeros((2, 3), np.float32), 2)


def test_the_answers_are_what_the_script_writes():
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "extreme_dim_kernels.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("op", ["torch.max", "torch.min"])
def test_a_vector_reduced_without_keepdim_is_drawn(op):
    """A 1-D input reduced with keepdim=False gives 0-d values and indices: the gate's strategy must
    draw that case (it did 83 times in 300 draws), or a kernel writing 0-d results wrongly goes unseen."""
    overload = load_all(ROOT / "specs")[op].overload("f32_dim")
    drawn = drawn_examples(overload, 1, 200)
    assert sum(a["input"].ndim == 1 and not a["keepdim"] for a in drawn) >= 10


@pytest.mark.parametrize("target", ["cpu-cpp", "cpu-rust"])
@pytest.mark.parametrize("overload, dtype", [("f32_dim", np.float32), ("f64_dim", np.float64), ("int64_dim", np.int64)])
@pytest.mark.parametrize("op, theirs", [("torch.max", torch.max), ("torch.min", torch.min)])
def test_the_kernels_give_torchs_0d_results_for_a_vector(op, theirs, overload, dtype, target):
    _, o, kernel = KERNELS[(op, overload, target)]
    rng = np.random.default_rng(11)
    for n in (1, 7, 33):
        x = rng.integers(-3, 4, n).astype(dtype)  # ties: the first index wins
        for view in (x, x[::-1], x[::2]):
            for dim in (0, -1):
                want = theirs(torch.from_numpy(view.copy()), dim)
                values, indices = np.full((), 9, dtype), np.full((), -1, np.int64)
                kernel([view, dim, False], out=(values, indices))
                assert values.shape == indices.shape == ()
                assert values.item() == want.values.item() and indices.item() == want.indices.item(), (n, dim)
