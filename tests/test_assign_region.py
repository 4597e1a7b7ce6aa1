"""opgen.assign_region (x[region] = value, NumPy's basic-index item assignment as a functional update):
the reference on hand cases against NumPy's own setitem (a negative step, a 0-d x, a count of 0, a
broadcast value), the arguments the verifier and the scale stage draw (valid regions of every kind,
stride-0 values, one in eight rejected), and the admitted C++ and Rust kernels bit for bit in strided
layouts, with the shims' ValueErrors in the words of opgen.spec.shapes.assign_region_shape."""

from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from opgen.gather_references import assign_region
from opgen.project import PACKAGE_ROOT
from opgen.spec.model import load_all
from opgen.spec.shapes import assign_region_shape
from opgen.verify.scale import scale_cases
from opgen.verify.strategies import examples
from tests.layouts import bits, layouts
from tests.registry_kernels import verified_kernels

SPEC = load_all(PACKAGE_ROOT / "specs")["opgen.assign_region"]
OVERLOADS = ("f32", "f64", "i64", "bool")


def _values(shape, dt, rng):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "i":
        return rng.integers(-(2**62), 2**62, size=shape, dtype=np.int64)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).smallest_subnormal], dt)
    v = rng.standard_normal(shape).astype(dt)
    return np.where(rng.random(shape) < 0.3, rng.choice(special, size=shape), v).astype(dt)


# (x's shape, starts, steps, value's shape) and the same region as NumPy's basic index
CASES = [((5,), [1], [1], (3,), np.s_[1:4]),
         ((5,), [4], [-2], (3,), np.s_[4::-2]),
         ((3, 4), [2, 3], [1, -2], (1, 2), np.s_[2:3, 3::-2]),
         ((3, 4), [0, 0], [1, 1], (3, 4), np.s_[:, :]),
         ((3, 4), [1, 0], [1, 1], (1, 4), np.s_[1:2]),
         ((3, 4), [0, 1], [2, 2], (2, 2), np.s_[::2, 1::2]),
         ((3, 4), [2, 0], [-1, 3], (3, 2), np.s_[::-1, ::3]),
         ((2, 3, 5), [1, 2, 4], [-1, -1, -4], (2, 3, 2), np.s_[::-1, ::-1, ::-4]),
         ((3, 4), [7, 0], [1, 1], (0, 4), np.s_[3:3]),
         ((0, 4), [0, 0], [1, 1], (0, 4), np.s_[:]),
         ((), [], [], (), np.s_[()])]


@pytest.mark.parametrize("shape, starts, steps, vshape, index", CASES)
def test_the_reference_is_numpys_setitem_on_a_copy(shape, starts, steps, vshape, index):
    rng = np.random.default_rng(1)
    x, v = _values(shape, np.float32, rng), _values(vshape, np.float32, rng)
    want = x.copy()
    want[index] = v
    got = assign_region(x[...], v, starts, steps)
    assert got.flags.c_contiguous and np.array_equal(bits(got), bits(want))
    if vshape:  # a value broadcast along its first dim (stride 0), as x[index] = row lowers
        row = np.broadcast_to(v[:1], vshape)
        want[index] = row
        assert np.array_equal(bits(assign_region(x, row, starts, steps)), bits(want))


def test_the_reference_raises_the_shape_checks_value_error():
    with pytest.raises(ValueError, match=r"along dim 1 \(start 3, step 2, count 2\) reaches outside x's length 4"):
        assign_region(np.zeros((3, 4)), np.zeros((1, 2)), [0, 3], [1, 2])
    with pytest.raises(ValueError, match="the step along dim 0 is 0"):
        assign_region(np.zeros(3), np.zeros(0), [0], [0])


def _drawn(overload, n):
    found = []

    @settings(max_examples=n, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(examples(overload))
    def draw(args):
        found.append(args)

    draw()
    return found


def test_drawn_regions_are_mostly_valid_of_every_kind_and_sometimes_rejected():
    o = SPEC.overload("f32")
    seen = collections.Counter()
    for a in _drawn(o, 300):
        x, v, starts, steps = a["x"], a["value"], a["starts"], a["steps"]
        assert isinstance(starts, list) and isinstance(steps, list)
        _, err = assign_region_shape(x.shape, v.shape, starts, steps)
        if err is not None:
            seen["rejected"] += 1
            continue
        seen["valid"] += 1
        seen["0-d"] += x.ndim == 0
        seen["negative step"] += any(t < 0 for t in steps)
        seen["count 0"] += v.size == 0 and x.ndim > 0
        seen["stride 0"] += any(s == 0 and n > 1 for s, n in zip(v.strides, v.shape))
        seen["special"] += bool(np.isnan(v).any() or np.isinf(v).any())
    total = seen["valid"] + seen["rejected"]
    assert 0.04 * total <= seen["rejected"] <= 0.3 * total, seen
    assert min(seen[k] for k in ("0-d", "negative step", "count 0", "stride 0", "special")) >= 3, seen


def test_scale_cases_are_valid_regions_of_model_sized_and_long_tensors():
    o = SPEC.overload("f32")
    cases = list(scale_cases(SPEC, o, seed=2))
    assert len(cases) >= 5
    for case in cases:
        a = case.args
        assert assign_region_shape(a["x"].shape, a["value"].shape, a["starts"], a["steps"])[1] is None, case.name
    assert any(a.args["x"].size > 100_000 for a in cases)
    assert any(min(a.args["steps"]) < 0 for a in cases)
    assert any(0 in a.args["value"].strides for a in cases)


TARGETS = ("cpu-cpp", "cpu-rust")


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([("opgen.assign_region", ov) for ov in OVERLOADS], TARGETS)


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_write_the_region_bit_for_bit_in_every_layout(kernels, target):
    rng = np.random.default_rng(3)
    for ov in OVERLOADS:
        spec, o, kernel = kernels[("opgen.assign_region", ov, target)]
        dt = o.sig.returns.dtype.np
        for shape, starts, steps, vshape, _ in CASES:
            x, v = _values(shape, dt, rng), _values(vshape, dt, rng)
            values = list(layouts(v)) + ([np.broadcast_to(v[:1], vshape)] if vshape else [])
            for xl, vl in itertools.product(list(layouts(x)), values):
                ref = assign_region(xl, vl, starts, steps)
                got = kernel([xl, vl, starts, steps], out=np.empty(ref.shape, dt))
                assert got.shape == ref.shape and np.array_equal(bits(got), bits(ref)), (ov, shape, starts, steps)


ERRORS = [((3, 4), (2,), [0, 0], [1, 1]), ((3, 4), (1, 2), [0], [1, 1]), ((3, 4), (1, 2), [0, 0], [1, 1, 1]),
          ((3, 4), (0, 2), [0, 0], [0, 1]), ((3, 4), (1, 2), [0, 3], [1, 2]), ((3, 4), (1, 2), [0, 1], [1, -2]),
          ((3, 4), (1, 1), [-1, 0], [1, 1]), ((0, 4), (1, 1), [0, 0], [1, 1]), ((3, 4), (3, 1), [2, 0], [2**62, 1]),
          ((3, 4), (2, 1), [2**63 - 1, 0], [1, 1]), ((), (1,), [], [])]


@pytest.mark.parametrize("target", TARGETS)
def test_shims_raise_the_value_error_in_the_rules_words(kernels, target):
    for ov in ("f32", "bool"):
        spec, o, kernel = kernels[("opgen.assign_region", ov, target)]
        dt = o.sig.returns.dtype.np
        for shape, vshape, starts, steps in ERRORS:
            x, v = np.zeros(shape, dt), np.zeros(vshape, dt)
            _, message = assign_region_shape(shape, vshape, starts, steps)
            with pytest.raises(ValueError) as info:
                kernel([x, v, starts, steps], out=np.empty(shape, dt))
            assert type(info.value) is ValueError and message in str(info.value), (target, shape, starts, steps)
