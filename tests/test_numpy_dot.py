"""numpy.dot (NumPy 2's dot of two arrays of any ranks): the shape rule {dot: [a, b]} and its one check
(opgen.spec.shapes.dot_shape, NumPy's ValueError words) shared by the reference and both shims; the
reference (opgen.gemm_references.dot) against numpy.dot itself over hand cases and the verifier's draws
(every rank pair 0..4, size-0 dims, broadcast and strided views, one in eight not aligned); the scale
cases; and the admitted C++ and Rust kernels over several layouts, with the shims' ValueErrors."""

from __future__ import annotations

import collections
import itertools
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from opgen.gemm_references import dot
from opgen.project import PACKAGE_ROOT
from opgen.spec.model import load_all, term_count
from opgen.spec.shapes import ShapeRuleError, dot_shape, parse_shape_rule
from opgen.verify.scale import scale_cases
from opgen.verify.strategies import examples
from tests.layouts import bits, layouts
from tests.registry_kernels import verified_kernels

SPEC = load_all(PACKAGE_ROOT / "specs")["numpy.dot"]
OVERLOADS = ("f32", "f64", "i64")

# ------------------------------------------------------------------ the rule and its check


@pytest.mark.parametrize("raw, message", [
    ({"dot": ["a", "c"]}, "dot: 'c' is not a tensor parameter"),
    ({"dot": ["a", "a"]}, "dot: b must be another tensor parameter than 'a'"),
    ({"dot": ["a"]}, "dot: give the two tensor parameters [a, b]"),
    ({"dot": "a"}, "dot: give the two tensor parameters [a, b]"),
    ({"dot": ["a", "b"], "axis": "k"}, "shape must be 'elementwise', a gufunc string"),
])
def test_dot_rule_parse_errors(raw, message):
    with pytest.raises(ShapeRuleError, match=re.escape(message)):
        parse_shape_rule(raw, ["a", "b"], ["k"])


def test_dot_rule_takes_two_tensors_only():
    with pytest.raises(ShapeRuleError, match=re.escape("dot: the signature takes the two tensors a and b only")):
        parse_shape_rule({"dot": ["a", "b"]}, ["a", "b", "c"], [])


def test_dot_rule_shape_terms_and_description():
    rule = SPEC.overload("f32").rule
    assert (rule.kind, rule.source, rule.indices) == ("dot", "a", "b")
    args = {"a": np.empty((2, 3, 4)), "b": np.empty((5, 4, 6))}
    assert rule.output_shape(args, ["a", "b"]) == (2, 3, 5, 6)
    assert rule.output_shape({"a": np.empty((2, 3)), "b": np.empty(4)}, ["a", "b"]) == (0,)
    o = SPEC.overload("f32")
    assert term_count(o, "k", args) == 4 and term_count(o, "k", {"a": np.empty(()), "b": np.empty(9)}) == 1
    assert SPEC.tolerance_at(o, o.sig.returns.dtype, args).rtol == pytest.approx(5e-6 + 4 * 6e-8)
    text = rule.describe()
    assert "a.shape[:-1] + b.shape[:-2] + b.shape[-1:]" in text and "already raised NumPy's ValueError" in text


SHAPES = [((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)), ((0,), (0,)), ((2, 3), (3, 4)), ((2, 3), (3,)),
          ((4,), (4, 5)), ((2, 3, 4), (4,)), ((2, 3, 4), (5, 4, 6)), ((3,), (2, 3, 5)), ((2, 0), (0, 3)),
          ((0, 3), (3, 5)), ((2, 3), (4, 3, 0)), ((1, 2, 1, 3), (2, 1, 3, 2))]
BAD = [((1,) * 7 + (2,), (1, 2, 1)), ((2, 3), (4,)), ((2, 3, 4), (5, 6, 7)), ((3,), (4,)), ((3,), (4, 5)), ((2, 0), (3,)), ((2, 3), (2, 3, 4, 5)),
       ((4,), (2, 5, 3)), ((0,), (1, 2))]


@pytest.mark.parametrize("sa, sb", SHAPES)
def test_dot_shape_is_numpys(sa, sb):
    assert dot_shape(sa, sb) == (np.dot(np.zeros(sa), np.zeros(sb)).shape, None)


@pytest.mark.parametrize("sa, sb", BAD[1:])
def test_dot_shape_says_what_numpy_says(sa, sb):
    with pytest.raises(ValueError) as info:
        np.dot(np.zeros(sa), np.zeros(sb))
    assert dot_shape(sa, sb) == ((0,), str(info.value))


def test_dot_shape_refuses_results_of_more_than_8_dims():
    assert dot_shape((1,) * 5 + (2,), (1,) * 5 + (2, 1)) == ((0,), "the result has more dims than an opgen "
                                                               "tensor holds (8)")
    assert dot_shape((1,) * 4 + (2,), (1,) * 3 + (2, 1)) == ((1,) * 8, None)  # 4 + 3 + 1 dims: fits
    assert dot_shape((1,) * 7 + (2,), (1, 2, 1))[1] is not None  # 7 + 1 + 1 dims from operands that fit

# ------------------------------------------------------------------ the reference


def _values(shape, dt, rng):
    dt = np.dtype(dt)
    if dt.kind == "i":
        return np.asarray(rng.integers(-(2**62), 2**62, size=shape, dtype=np.int64))
    return np.asarray(rng.standard_normal(shape) * 10).astype(dt)  # (an array when 0-d, not a NumPy scalar)


def _close(got, want, a, b):
    """Within the spec's bound: |got - want| <= (rtol + rtol_per_term * k) * (|a| . |b|)."""
    if got.dtype.kind == "i":
        return np.array_equal(got, want)
    tol = SPEC.tolerance_at(SPEC.overload({4: "f32", 8: "f64"}[got.dtype.itemsize]), _dt(got), {"a": a, "b": b})
    with np.errstate(invalid="ignore"):
        scale = np.abs(np.asarray(np.dot(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))))
    both_nan = np.isnan(got) & np.isnan(want)
    with np.errstate(invalid="ignore"):
        ok = both_nan | (got == want) | (np.abs(got.astype(np.float64) - want) <= tol.atol + tol.rtol * scale)
    return bool(np.all(ok))


def _dt(x):
    return SPEC.overload({4: "f32", 8: "f64"}[x.dtype.itemsize]).sig.returns.dtype


@pytest.mark.parametrize("sa, sb", SHAPES)
def test_the_reference_is_numpys_dot(sa, sb):
    rng = np.random.default_rng(1)
    for dt in (np.float32, np.float64, np.int64):
        a, b = _values(sa, dt, rng), _values(sb, dt, rng)
        got = dot(a, b)
        with np.errstate(over="ignore"):
            want = np.asarray(np.dot(a, b))
        assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
        if dt is np.int64:  # wrapping modulo 2**64, exactly
            assert np.array_equal(got, want), (sa, sb)
        else:
            assert _close(got, want, a, b), (sa, sb, dt)


def test_a_0d_operand_is_ieee_multiplication():
    a = np.array([np.nan, np.inf, 2.0], np.float32)
    got = dot(a, np.array(0.0, np.float32))
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == 0  # numpy.multiply's nan * 0 = nan
    assert np.array_equal(dot(np.array(3.0), np.array([1.0, 2.0])), [3.0, 6.0])


def test_the_reference_raises_the_shape_checks_value_error():
    with pytest.raises(ValueError, match=re.escape("shapes (2,3) and (4,) not aligned: 3 (dim 1) != 4 (dim 0)")):
        dot(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))


def _drawn(overload, n):
    found = []

    @settings(max_examples=n, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(examples(overload))
    def draw(args):
        found.append(args)

    draw()
    return found


def test_draws_cover_every_rank_pair_and_are_sometimes_not_aligned():
    o = SPEC.overload("f32")
    seen = collections.Counter()
    ranks = set()
    for args in _drawn(o, 400):
        a, b = args["a"], args["b"]
        shape, err = dot_shape(a.shape, b.shape)
        if err is not None:
            seen["rejected"] += 1
            with pytest.raises(ValueError, match=re.escape(err)):
                dot(a, b)
            continue
        seen["valid"] += 1
        ranks.add((a.ndim, b.ndim))
        seen["size 0"] += 0 in a.shape + b.shape
        seen["k 0"] += bool(a.ndim and b.ndim and a.shape[-1] == 0)
        seen["stride 0"] += any(s == 0 and n > 1 for x in (a, b) for s, n in zip(x.strides, x.shape))
        seen["not contiguous"] += not (a.flags.c_contiguous and b.flags.c_contiguous)
        seen["special"] += bool(np.isnan(a).any() or np.isinf(b).any())
        with np.errstate(all="ignore"):
            want = np.asarray(np.dot(a.astype(np.float64), b.astype(np.float64))).astype(np.float32)
            if a.ndim == 0 or b.ndim == 0:
                want = np.multiply(a, b)
        got = dot(a, b)
        assert got.shape == shape == want.shape and _close(got, want, a, b), (a.shape, b.shape)
    total = seen["valid"] + seen["rejected"]
    assert 0.04 * total <= seen["rejected"] <= 0.3 * total, seen
    assert len(ranks) >= 20, sorted(ranks)  # of the 25 pairs of ranks 0..4
    assert min(seen[k] for k in ("size 0", "k 0", "stride 0", "not contiguous", "special")) >= 3, seen


def test_scale_cases_are_valid_long_and_model_sized():
    o = SPEC.overload("f32")
    cases = list(scale_cases(SPEC, o, seed=2))
    assert len(cases) >= 6
    for case in cases:
        assert dot_shape(case.args["a"].shape, case.args["b"].shape)[1] is None, case.name
    assert any(c.args["a"].ndim == 1 and c.args["a"].size > 100_000 for c in cases)  # a long inner product
    assert any(c.args["a"].ndim == 0 for c in cases)
    assert any(c.args["a"].ndim > 2 and c.args["b"].ndim > 2 for c in cases)
    assert any(c.args["a"].ndim == 2 and c.args["b"].ndim == 2 and min(c.args["a"].shape) >= 384 for c in cases)

# ------------------------------------------------------------------ the admitted kernels


TARGETS = ("cpu-cpp", "cpu-rust")


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([("numpy.dot", ov) for ov in OVERLOADS], TARGETS)


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_match_the_reference_in_every_layout(kernels, target):
    rng = np.random.default_rng(3)
    checked = 0
    for ov in OVERLOADS:
        spec, o, kernel = kernels[("numpy.dot", ov, target)]
        dt = o.sig.returns.dtype.np
        for sa, sb in SHAPES + [((7, 23), (23, 812)), ((3, 812), (812,)), ((2, 5, 33), (3, 33, 9))]:
            a, b = _values(sa, dt, rng), _values(sb, dt, rng)
            extra = [np.broadcast_to(b[..., :1], sb)] if sb and sb[-1] else []  # stride 0 along b's last dim
            for al, bl in itertools.product(list(layouts(a)), list(layouts(b)) + extra):
                ref = dot(al, bl)
                got = kernel([al, bl], out=np.empty(ref.shape, dt))
                assert got.shape == ref.shape, (ov, sa, sb)
                if dt == np.int64:
                    assert np.array_equal(bits(got), bits(ref)), (ov, sa, sb)
                else:
                    assert _close(got, ref, al, bl), (ov, sa, sb)
                checked += 1
    assert checked > 400


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_propagate_nan_and_inf(kernels, target):
    spec, o, kernel = kernels[("numpy.dot", "f32", target)]
    a = np.array([[np.nan, 1.0], [np.inf, 0.0], [1.0, 2.0]], np.float32)
    b = np.array([[0.0, 1.0], [0.0, 3.0]], np.float32)
    got = kernel([a, b], out=np.empty((3, 2), np.float32))
    assert np.isnan(got[0]).all() and np.isnan(got[1, 0]) and got[1, 1] == np.inf and np.array_equal(got[2], [0, 7])
    got = kernel([a, np.array(0.0, np.float32)], out=np.empty((3, 2), np.float32))
    assert np.isnan(got[0, 0]) and np.isnan(got[1, 0]) and got[2, 1] == 0


@pytest.mark.parametrize("target", TARGETS)
def test_shims_raise_the_value_error_in_the_rules_words(kernels, target):
    for ov in ("f32", "i64"):
        spec, o, kernel = kernels[("numpy.dot", ov, target)]
        dt = o.sig.returns.dtype.np
        for sa, sb in BAD:
            _, message = dot_shape(sa, sb)
            with pytest.raises(ValueError) as info:
                kernel([np.zeros(sa, dt), np.zeros(sb, dt)], out=np.empty((0,), dt))
            assert type(info.value) is ValueError and message in str(info.value), (target, sa, sb)
