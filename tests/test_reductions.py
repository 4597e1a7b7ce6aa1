"""The one-axis reductions (numpy.mean, max, min, argmax, argmin, prod, var, std, cumsum, any, all
and torch.logsumexp) and the reduce shape rule's keepdims, where the gate does not look: the
admitted C++ and Rust kernels against NumPy (torch for logsumexp) on hand-picked rows (ties,
nan and inf in every position, -0.0, empty axes, ddof >= n; for any and all a lone deciding
element at either end or past a block, and int64 values whose low 32 bits are 0), with keepdims
on and off, every axis negative and positive, in contiguous, reversed and strided layouts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from opgen.compiler.emit_cpp import _shape_rule as emit_shape_rule
from opgen.project import PACKAGE_ROOT
from opgen.registry import Registry
from opgen.spec.model import load_all
from opgen.spec.shapes import ShapeRuleError, parse_shape_rule
from opgen.targets.cpp.shim import render_shim as render_cpp_shim
from opgen.targets.rust.shim import render_rust_shim
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
KEEPDIMS_OPS = ["numpy.mean", "numpy.max", "numpy.min", "numpy.argmax", "numpy.argmin", "numpy.prod", "numpy.var",
                "numpy.std", "torch.logsumexp"]
OPS = KEEPDIMS_OPS + ["numpy.cumsum"]
OVERLOADS = ("f32", "f64")
TARGETS = ("cpu-cpp", "cpu-rust")


# -- the shape rule ---------------------------------------------------------------------------

def test_reduce_rule_keepdims_keeps_the_axis_as_size_one():
    rule = parse_shape_rule({"reduce": "a", "axis": "axis", "keepdims": "keepdims"}, ["a"], ["axis"], ["keepdims"])
    assert rule.kind == "reduce" and rule.keepdims == "keepdims"
    a = np.empty((2, 0, 3, 4))
    for axis in range(-4, 4):
        for keep in (False, True):
            want = np.sum(a, axis=axis, keepdims=keep).shape
            assert rule.output_shape({"a": a, "axis": axis, "keepdims": keep}, ["a"]) == want
    assert "kept as size 1 when keepdims is true" in rule.describe()
    with pytest.raises(ValueError, match="axis 4 is out of bounds for 4 dims"):
        rule.output_shape({"a": a, "axis": 4, "keepdims": True}, ["a"])


def test_reduce_rule_without_keepdims_is_unchanged():
    old = parse_shape_rule({"reduce": "a", "axis": "axis"}, ["a"], ["axis"])
    assert old.keepdims is None
    assert old.describe() == "reduce: shape of a with axis axis removed (negative axes count from the end)"
    assert old.output_shape({"a": np.empty((2, 3)), "axis": -1}, ["a"]) == (2,)


@pytest.mark.parametrize(
    ("raw", "bools", "message"),
    [
        ({"reduce": "a", "axis": "axis", "keepdims": "axis"}, [], "keepdims: 'axis' is not a bool parameter"),
        ({"reduce": "a", "axis": "axis", "keepdims": "k"}, ["keep"], "keepdims: 'k' is not a bool parameter"),
        ({"reduce": "a", "axis": "axis", "keepdim": "keep"}, ["keep"], "shape must be 'elementwise'"),
    ],
)
def test_reduce_rule_keepdims_errors(raw, bools, message):
    with pytest.raises(ShapeRuleError, match=message):
        parse_shape_rule(raw, ["a"], ["axis"], bools)


def test_shims_and_compiler_follow_keepdims():
    specs = load_all(ROOT / "specs")
    spec = specs["numpy.mean"]
    o = spec.overload("f32")
    assert "if (keepdims != 0) opgen_s[opgen_ax] = 1; else opgen_s.erase" in render_cpp_shim(spec, o, "kernel.cpp")
    assert "if keepdims != 0 { opgen_s[opgen_ax] = 1; } else { opgen_s.remove(opgen_ax); }" in render_rust_shim(spec, o)
    assert emit_shape_rule(o) == "opgen::compiled::shape_reduce(a, axis, keepdims)"
    lse = specs["torch.logsumexp"].overload("f64")
    assert emit_shape_rule(lse) == "opgen::compiled::shape_reduce(input, dim, keepdim)"
    # numpy.sum keeps its rule, its shims and so its admitted entries.
    s = specs["numpy.sum"]
    assert s.overload("f32").rule.keepdims is None
    assert emit_shape_rule(s.overload("f32")) == "opgen::compiled::shape_reduce(a, axis)"
    registry = Registry(ROOT / "generated")
    for ov in OVERLOADS:
        for target in TARGETS:
            entry = registry.get("numpy.sum", ov, target)
            assert entry is not None and entry.status(s)[0] == "verified"


# -- the kernels ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def kernels():
    loaded = verified_kernels([(op, ov) for op in OPS for ov in OVERLOADS], TARGETS)
    return {key: (o, kernel) for key, (_, o, kernel) in loaded.items()}


def _layouts(x: np.ndarray):
    yield x
    if x.ndim and x.size:
        yield np.ascontiguousarray(x[..., ::-1])[..., ::-1]  # reversed last dim
        buf = np.zeros(2 * x.size, x.dtype)
        strided = buf[::2].reshape(x.shape)
        strided[...] = x
        yield strided
        if x.ndim >= 2:
            yield np.asfortranarray(x)


def _call(kernels, op, ov, target, args, out_dtype=None):
    o, k = kernels[(op, ov, target)]
    a = args[0]
    rule = o.rule
    names = [p.name for p in o.sig.params]
    shape = rule.output_shape(dict(zip(names, args)), [names[0]])
    return k(args, out=np.empty(shape, out_dtype or o.sig.returns.dtype.np)) if a is not None else None


def _same(got, want, signed_zeros=True):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    eq = (got == want) | (np.isnan(got) & np.isnan(want)) if got.dtype.kind == "f" else got == want
    if signed_zeros and got.dtype.kind == "f":
        eq &= (np.signbit(got) == np.signbit(want)) | np.isnan(got)
    return bool(np.all(eq))


def _close(got, want, rtol, signed_zeros=True):
    """nan, inf and (if asked) the sign of zero exactly; finite values within rtol."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    fin = np.isfinite(want) & np.isfinite(got) & (want != 0)
    if not _same(np.where(fin, 0, got).astype(got.dtype), np.where(fin, 0, want).astype(want.dtype), signed_zeros):
        return False
    return bool(np.all(np.abs(got[fin] - want[fin]) <= rtol * np.abs(want[fin])))


def _rows(dt):
    """A (6, 7) block of rows full of ties, specials and signed zeros, and a wider random one."""
    n, i = np.nan, np.inf
    rows = np.array([
        [1, 3, 3, 2, 3, -1, 0],          # ties: the first 3
        [0.0, -0.0, 0.0, -0.0, -1, -2, -3],  # 0.0 and -0.0 tie
        [2, n, 5, n, 7, -i, 1],          # nan after a value, nan twice
        [-i, -i, -i, -i, -i, -i, -i],    # all -inf
        [i, 1, -i, 2, i, 0, 5],          # inf twice, -inf
        [n, 1, 2, 3, 4, 5, 6],           # nan first
    ], dt)
    rng = np.random.default_rng(3)
    wide = rng.integers(-4, 5, size=(5, 6, 37)).astype(dt)
    wide[1, 2, 30] = np.nan
    wide[3, :, 5] = np.inf
    return [rows, rows.T.copy(), wide]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
@pytest.mark.parametrize("op", ["numpy.max", "numpy.min", "numpy.argmax", "numpy.argmin"])
def test_extremes_and_their_indices_are_numpys(kernels, op, ov, target):
    dt = np.float32 if ov == "f32" else np.float64
    fn = getattr(np, op.split(".")[1])
    for base in _rows(dt):
        for x in _layouts(base):
            for axis in range(-x.ndim, x.ndim):
                for keep in (False, True):
                    want = np.asarray(fn(x, axis=axis, keepdims=keep))
                    if want.dtype.kind == "i":
                        want = want.astype(np.int64)
                    got = _call(kernels, op, ov, target, [x, axis, keep])
                    # 0.0 against -0.0: NumPy's max/min return either (the spec does not compare it)
                    assert _same(got, want, signed_zeros=False), (op, x.shape, x.strides, axis, keep, got, want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["numpy.max", "numpy.min", "numpy.argmax", "numpy.argmin"])
def test_an_empty_axis_raises_valueerror_as_numpy(kernels, op, target):
    fn = getattr(np, op.split(".")[1])
    for shape, axis in (((3, 0), 1), ((0, 0), 0), ((0, 4), 0), ((2, 0, 3), -2)):
        x = np.empty(shape, np.float32)
        with pytest.raises(ValueError):
            fn(x, axis=axis)
        for keep in (False, True):
            with pytest.raises(ValueError):
                _call(kernels, op, "f32", target, [x, axis, keep])
    # a zero-size tensor over an axis of nonzero length: an empty out and no error
    x = np.empty((0, 4), np.float64)
    assert _call(kernels, op, "f64", target, [x, 1, True]).shape == (0, 1)


def test_keepdims_out_of_the_wrong_shape_is_refused(kernels):
    for target in TARGETS:
        _, k = kernels[("numpy.mean", "f32", target)]
        x = np.ones((3, 4), np.float32)
        with pytest.raises(ValueError):
            k([x, 1, True], out=np.empty((3,), np.float32))
        with pytest.raises(ValueError):
            k([x, 1, False], out=np.empty((3, 1), np.float32))
        assert k([x, 1, True], out=np.empty((3, 1), np.float32)).shape == (3, 1)


def _wide_values(dt, shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10 + 3).astype(dt)
    return x


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_mean_prod_var_std_against_wide_numpy(kernels, ov, target):
    dt = np.float32 if ov == "f32" else np.float64
    ulp = np.finfo(dt).eps
    x0 = _wide_values(dt, (4, 5, 33), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x in _layouts(x0):
            xl = x.astype(np.longdouble)
            for axis in range(-3, 3):
                for keep in (False, True):
                    got = _call(kernels, "numpy.mean", ov, target, [x, axis, keep])
                    want = np.mean(xl, axis=axis, keepdims=keep)
                    assert got.shape == want.shape
                    np.testing.assert_allclose(got, want.astype(dt), rtol=0, atol=4 * ulp * float(np.abs(x).mean()))
                    small = (x / 8).astype(dt)
                    got = _call(kernels, "numpy.prod", ov, target, [small, axis, keep])
                    want = np.prod(small.astype(np.longdouble), axis=axis, keepdims=keep).astype(dt)
                    np.testing.assert_allclose(got, want, rtol=2 * ulp, atol=0)
                    for ddof in (0, 1, 2):
                        for op, fn in (("numpy.var", np.var), ("numpy.std", np.std)):
                            got = _call(kernels, op, ov, target, [x, axis, ddof, keep])
                            want = fn(xl, axis=axis, ddof=ddof, keepdims=keep).astype(dt)
                            np.testing.assert_allclose(got, want, rtol=4 * ulp, atol=0)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_short_and_special_rows(kernels, ov, target):
    """Empty axes, ddof >= n (inf or nan, as NumPy), nan and inf, -0.0 products, offset rows."""
    dt = np.float32 if ov == "f32" else np.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with np.errstate(all="ignore"):
            for n in range(0, 4):
                x = (np.arange(2 * n, dtype=dt).reshape(2, n) * 1.5 + 1)
                x[1] = 7  # a constant row
                for ddof in range(0, 5):
                    for op, fn in (("numpy.var", np.var), ("numpy.std", np.std)):
                        got = _call(kernels, op, ov, target, [x, 1, ddof, False])
                        want = fn(x.astype(np.float64), axis=1, ddof=ddof).astype(dt)
                        assert _close(got, want, 4 * float(np.finfo(dt).eps)), (op, n, ddof, got, want)
                mean = _call(kernels, "numpy.mean", ov, target, [x, -1, True])
                assert _same(mean, np.mean(x, axis=-1, keepdims=True).astype(dt), signed_zeros=False), (n, mean)
                prod = _call(kernels, "numpy.prod", ov, target, [x, 1, False])
                assert _close(prod, np.prod(x.astype(np.longdouble), axis=1).astype(dt), 2 * float(np.finfo(dt).eps)), (n, prod)
            specials = np.array([[np.nan, 1, 2], [np.inf, 1, 2], [np.inf, -np.inf, 1], [0.0, np.inf, 2],
                                 [-0.0, 3, 2], [-0.0, -0.0, -0.0], [-0.0, 0.0, -0.0], [-1e30, 1e30, 1e30]], dt)
            ulp = float(np.finfo(dt).eps)
            for op, fn in (("numpy.mean", np.mean), ("numpy.prod", np.prod)):
                got = _call(kernels, op, ov, target, [specials, 1, False])
                want = fn(specials.astype(np.longdouble), axis=1).astype(dt)
                assert _close(got, want, 2 * ulp, signed_zeros=op == "numpy.prod"), (op, got, want)
            for op, fn in (("numpy.var", np.var), ("numpy.std", np.std)):
                got = _call(kernels, op, ov, target, [specials[:5], 1, 0, False])
                want = fn(specials[:5].astype(np.longdouble), axis=1).astype(dt)
                assert _close(got, want, 4 * ulp), (op, got, want)
            # offset rows: mean 1e4 and spread 1e-2, where E[x^2] - E[x]^2 would lose every digit
            rng = np.random.default_rng(5)
            off = (1e4 + rng.standard_normal((3, 4001)) * 1e-2).astype(dt)
            for x in _layouts(off):
                got = _call(kernels, "numpy.var", ov, target, [x, 1, 1, False])
                want = np.var(x.astype(np.longdouble), axis=1, ddof=1).astype(dt)
                np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_logsumexp_is_torchs(kernels, ov, target):
    import torch

    dt = np.float32 if ov == "f32" else np.float64
    n, i = np.nan, np.inf
    rows = np.array([[-i, -i, -i], [i, 1, -i], [i, i, 2], [n, 1, i], [1e4, 1e4, -1e4], [-1e4, -1e4, -1e4],
                     [-0.0, -0.0, -0.0], [0, 0, 0], [-i, 3, -i]], dt)
    rng = np.random.default_rng(2)
    wide = (rng.standard_normal((3, 4, 50)) * 30).astype(dt)
    for base in (rows, rows.T.copy(), wide, np.empty((3, 0), dt)):
        for x in _layouts(base):
            for dim in range(-x.ndim, x.ndim):
                for keep in (False, True):
                    want = torch.logsumexp(torch.from_numpy(np.array(x, copy=True)), dim, keep).numpy()
                    got = _call(kernels, "torch.logsumexp", ov, target, [x, dim, keep])
                    assert got.shape == want.shape
                    special = ~np.isfinite(want)
                    assert _same(got[special], want[special]), (x, dim, got, want)
                    np.testing.assert_allclose(got[~special], want[~special], rtol=1e-6 if ov == "f32" else 1e-14,
                                               atol=1e-6 if ov == "f32" else 1e-14)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_cumsum_prefixes(kernels, ov, target):
    dt = np.float32 if ov == "f32" else np.float64
    rows = np.array([[-0.0, -0.0, 0.0, -0.0], [1, np.nan, 2, 3], [np.inf, 1, -np.inf, 2], [1e8, 1, -1e8, 1]], dt)
    rng = np.random.default_rng(4)
    wide = rng.standard_normal((3, 5, 40)).astype(dt)
    for base in (rows, wide, np.empty((2, 0, 3), dt)):
        for x in _layouts(base):
            for axis in range(-x.ndim, x.ndim):
                got = _call(kernels, "numpy.cumsum", ov, target, [x, axis])
                with np.errstate(invalid="ignore"):
                    want = np.cumsum(x.astype(np.longdouble), axis=axis).astype(dt)
                assert got.shape == x.shape and got.flags.c_contiguous
                if ov == "f32":  # double accumulation of float32 terms, rounded once: NumPy's long double result
                    assert _same(got, want), (x.shape, x.strides, axis, got, want)
                    continue
                # float64 accumulates in float64: within n * eps * (the prefix sum of |x|); specials exact
                with np.errstate(invalid="ignore"):
                    bound = x.shape[axis] * np.finfo(dt).eps * np.cumsum(np.abs(x.astype(np.longdouble)), axis=axis)
                fin = np.isfinite(want)
                assert _same(np.where(fin, 0, got), np.where(fin, 0, want)), (x.shape, axis, got, want)
                assert np.all(np.abs(got[fin] - want[fin]) <= bound[fin].astype(dt)), (x.shape, axis)
                zero = want == 0
                assert np.array_equal(np.signbit(got[zero]), np.signbit(want[zero])), (x.shape, axis)


# -- numpy.any and numpy.all ------------------------------------------------------------------

BOOL_OPS = ("numpy.any", "numpy.all")
BOOL_OVERLOADS = {"bool": np.bool_, "f32": np.float32, "f64": np.float64, "i64": np.int64}


@pytest.fixture(scope="module")
def truth_kernels():
    loaded = verified_kernels([(op, ov) for op in BOOL_OPS for ov in BOOL_OVERLOADS], TARGETS)
    return {key: (o, kernel) for key, (_, o, kernel) in loaded.items()}


def _truth_rows(ov):
    """Rows where only one element decides (first, last, between, past a 64-element block), rows
    of zeros only, and the values a careless test of nonzero gets wrong: nan, -0.0, subnormals,
    -inf; in int64 2**32 and int64's min, whose low 32 bits are 0."""
    dt = BOOL_OVERLOADS[ov]
    if ov == "bool":
        rows = np.zeros((6, 70), dt)
        rows[1, 0] = rows[2, 69] = rows[3, 64] = True
        rows[4] = True
        rows[5] = True
        rows[5, 33] = False
    else:
        if ov == "i64":
            lone = [2**32, np.iinfo(np.int64).min, -1, 1, np.iinfo(np.int64).max]
        else:
            lone = [np.nan, -np.inf, np.inf, np.finfo(dt).smallest_subnormal, -1.0]
        zero = -0.0 if ov != "i64" else 0
        rows = np.zeros((4 + 2 * len(lone), 70), dt)
        rows[1] = zero  # -0.0 only: still all zeros
        for j, v in enumerate(lone):
            rows[2 + j, (0, 69, 64, 31, 5)[j]] = v  # one nonzero among zeros, at either end or past a block
            rows[2 + len(lone) + j] = v  # no zero
        rows[1 + 2 * len(lone), 40] = zero  # one zero among nonzeros
        rows[2 + 2 * len(lone)] = np.array(lone * 14, dt)  # every special, no zero
        rows[3 + 2 * len(lone)] = np.array(lone * 14, dt)
        rows[3 + 2 * len(lone), 67] = zero  # one zero, late
    rng = np.random.default_rng(6)
    wide = (rng.integers(0, 2, size=(5, 6, 37)) * rng.integers(1, 4, size=(5, 6, 37))).astype(dt)
    wide[0] = 0
    wide[1] = 1
    wide[2, :, 0] = 0
    return [rows, rows.T.copy(), wide]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", list(BOOL_OVERLOADS))
@pytest.mark.parametrize("op", BOOL_OPS)
def test_any_and_all_are_numpys(truth_kernels, op, ov, target):
    fn = getattr(np, op.split(".")[1])
    for base in _truth_rows(ov):
        for x in _layouts(base):
            for axis in range(-x.ndim, x.ndim):
                for keep in (False, True):
                    want = np.asarray(fn(x, axis=axis, keepdims=keep))
                    o, k = truth_kernels[(op, ov, target)]
                    got = k([x, axis, keep], out=np.empty(want.shape, np.bool_))
                    assert got.dtype == np.bool_ and np.array_equal(got.view(np.uint8), want.view(np.uint8)), (
                        op, x.shape, x.strides, axis, keep, got, want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", BOOL_OPS)
def test_any_and_all_of_an_empty_axis_are_the_identity(truth_kernels, op, target):
    fn = getattr(np, op.split(".")[1])
    for ov, dt in BOOL_OVERLOADS.items():
        _, k = truth_kernels[(op, ov, target)]
        for shape, axis in (((3, 0), 1), ((0, 0), 0), ((0, 4), 0), ((2, 0, 3), -2), ((0, 4), 1)):
            x = np.empty(shape, dt)
            for keep in (False, True):
                want = np.asarray(fn(x, axis=axis, keepdims=keep))
                got = k([x, axis, keep], out=np.empty(want.shape, np.bool_))
                assert got.shape == want.shape and np.array_equal(got, want), (op, ov, shape, axis, keep, got)
