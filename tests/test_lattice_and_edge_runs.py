"""Two domain options that put inputs where quantized kernels go wrong, which independent random
draws almost never reach:

* ``lattice: {of: scale, step: 0.5, multiples: N}`` (float tensors): in about half the draws the
  values are k * step * of for integers k, so x / of lands exactly on half-integers (ties of a
  rounding) and on integers; e.g. opgen.nn.quantize_int8, where a kernel rounding ties away from
  zero (std::lround) is right on every other input.
* ``edge_runs: true`` (integer tensors): in about half the draws long runs of the dtype's extremes,
  where a sum or pair of products held in a narrower accumulator (int16, vpmaddubsw) saturates.

Validation pins its messages; the draws are the verifier's own (Hypothesis and the scale stage)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from opgen.spec.dtypes import DTYPES
from opgen.spec.model import load_all
from opgen.verify.scale import scale_cases
from opgen.verify.strategies import edge_runs, snap_to_lattice
from tests.test_domain_options import error_of
from tests.test_integer_draws import _draws

ROOT = Path(__file__).resolve().parents[1]
SPECS = load_all(ROOT / "specs")

QUANT = """\
op: test.quant
summary: a test op
reference: opgen.quant_references.quantize_int8
overloads:
  - name: f32
    signature: "(input: tensor[float32], scale: tensor[float32], q: tensor[int8]) -> tensor[int8]"
    shape: "(k),(),(k)->(k)"
    domain:
"""


# ---------------------------------------------------------------- validation


def test_lattice_is_for_float_tensors(tmp_path):
    path, msg = error_of(tmp_path, QUANT + "      q: {lattice: {of: scale, step: 0.5}}\n")
    assert "domain.q.lattice is for float tensors; q is tensor[int8]" in msg


def test_lattice_of_names_another_float_tensor(tmp_path):
    path, msg = error_of(tmp_path, QUANT + "      input: {lattice: {of: q, step: 0.5}}\n")
    assert "domain.input.lattice.of names 'q', which is not another float tensor parameter (have: ['scale'])" in msg
    path, msg = error_of(tmp_path, QUANT + "      input: {lattice: {of: input, step: 0.5}}\n")
    assert "domain.input.lattice.of names 'input'" in msg


def test_lattice_of_a_lattice_is_refused(tmp_path):
    text = QUANT + "      input: {lattice: {of: scale, step: 0.5}}\n      scale: {lattice: {of: input, step: 1}}\n"
    path, msg = error_of(tmp_path, text)
    assert "which is on a lattice itself" in msg


def test_lattice_needs_the_core_dims_to_align(tmp_path):
    text = QUANT.replace('"(k),(),(k)->(k)"', '"(k),(m),(k)->(k)"') + "      input: {lattice: {of: scale, step: 0.5}}\n"
    path, msg = error_of(tmp_path, text)
    assert "the core dims of scale ['m'] must appear, in order, among those of input ['k']" in msg


def test_lattice_step_and_multiples_are_positive(tmp_path):
    path, msg = error_of(tmp_path, QUANT + "      input: {lattice: {of: scale, step: 0}}\n")
    assert "step" in msg and "greater than 0" in msg
    path, msg = error_of(tmp_path, QUANT + "      input: {lattice: {of: scale, step: 0.5, multiples: 0}}\n")
    assert "multiples" in msg


def test_edge_runs_are_for_integer_tensors(tmp_path):
    path, msg = error_of(tmp_path, QUANT + "      input: {edge_runs: true}\n")
    assert "domain.input.edge_runs is for integer tensors; input is tensor[float32]" in msg


def test_defaults_leave_the_hash_alone():
    # new optional fields: specs that do not use them keep their entries current
    spec = SPECS["numpy.clip"]
    assert "lattice" not in str(spec.overload("f32").model_dump(exclude_defaults=True))


# ---------------------------------------------------------------- what is drawn


def test_snap_to_lattice_aligns_a_row_scale_and_keeps_the_dtype():
    x = np.zeros((3, 40), np.float32)
    s = np.array([0.25, 10.720679, 1e-37], np.float32)
    assert snap_to_lattice(x, s, 0.5, ("k",), (), -1e4, 1e4, 300, np.random.default_rng(0))
    q = x / s[:, None]
    assert np.array_equal(q[0] * 2, np.round(q[0] * 2))  # a power-of-two scale: every quotient exact
    assert np.abs(q).max() <= 150
    ties = np.abs(q - np.trunc(q)) == 0.5
    assert ties[0].sum() >= 10 and ties[1].sum() >= 10 and ties[2].sum() >= 10
    # snapping (no multiples) moves each value to its nearest multiple
    y = np.array([[1.2, -0.74, 3.0]], np.float32)
    snap_to_lattice(y, np.array([1.0], np.float32), 0.5, ("k",), (), -10, 10)
    assert y.tolist() == [[1.0, -0.5, 3.0]]


def test_snap_to_lattice_leaves_what_it_cannot_align():
    x = np.ones((2, 5), np.float32)
    assert not snap_to_lattice(x, np.ones((3,), np.float32), 0.5, ("k",), (), -10, 10)  # loop 2 against 3
    assert (x == 1).all()
    z = np.array([[2.2, 3.3]], np.float32)  # a zero scale: no lattice there
    snap_to_lattice(z, np.array([0.0], np.float32), 0.5, ("k",), (), -10, 10)
    assert np.allclose(z, [[2.2, 3.3]])


def test_quantize_draws_hold_ties_and_saturation():
    draws = _draws("opgen.nn.quantize_int8", "f32", 200)
    ties = sat = 0
    for d in draws:
        with np.errstate(all="ignore"):
            q = d["input"] / d["scale"][..., None]
            ties += bool(((np.abs(q - np.trunc(q)) == 0.5) & (np.abs(q) < 128)).any())
            sat += bool((np.abs(q) > 128).any())
    assert ties >= len(draws) // 4, ties  # measured 45% of the non-empty examples
    assert sat >= len(draws) // 2, sat


def test_quantize_scale_cases_hold_ties():
    spec = SPECS["opgen.nn.quantize_int8"]
    cases = [c for seed in (1, 2) for c in scale_cases(spec, spec.overload("f32"), seed=seed)]
    lattice = [c for c in cases if any("lattice" in n for n in c.notes)]
    assert lattice
    for c in lattice:
        with np.errstate(all="ignore"):
            q = c.args["input"] / c.args["scale"][..., None]
            assert ((np.abs(q - np.trunc(q)) == 0.5) & (np.abs(q) < 128)).any(), c.name


def test_edge_runs_plants_long_runs_of_extremes():
    dt = DTYPES["int8"]
    rng = np.random.default_rng(3)
    for _ in range(20):
        v = np.zeros(1000, np.int8)
        edge_runs(rng, v, dt, -128, 127)
        assert np.isin(v, [-128, 127, -127, 126]).sum() >= 250
    v = np.zeros(100, np.int8)
    edge_runs(rng, v, dt, -5, 5)  # no extreme inside the domain: nothing planted
    assert (v == 0).all()


def test_int8_matmul_draws_hold_aligned_runs_of_extremes():
    draws = _draws("opgen.nn.int8_matmul", "i8", 150)
    both = 0
    for d in draws:
        a, w = d["input"], d["weight"]
        if a.size and w.size and a.shape[-1] >= 4:
            prod = np.abs(a.astype(np.int32)[..., None, :] * w.astype(np.int32))
            both += bool((prod >= 126 * 126).sum(axis=-1).max() >= a.shape[-1] // 2)
    assert both >= 10, both  # rows where half the products or more are extreme
    spec = SPECS["opgen.nn.int8_matmul"]
    cases = list(scale_cases(spec, spec.overload("i8"), seed=5))
    assert any("runs of extremes" in n for c in cases for n in c.notes)
