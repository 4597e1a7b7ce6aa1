"""numpy.sort and numpy.argsort (stable), where the gate does not look: the admitted C++ and Rust
kernels against numpy.sort / numpy.argsort(kind="stable") on hand-picked lanes (ties, nan in every
position, -0.0 against 0.0, inf, subnormals, the integer extremes, long lanes that take the radix
path), every axis negative and positive, empty and length-1 axes, contiguous, reversed, strided
and Fortran layouts; the values compared bit for bit (the sign of every zero, every nan's bits),
the indices exactly. Also: the spec's spellings (defaults, the ndarray.argsort method, what is not
aliased), that the gate's comparison tells an unstable order from the stable one, and the corpus
entry that is such a sort."""

from __future__ import annotations

import numpy as np
import pytest

from opgen.gate.corpus import corpus_dir, load_manifest
from opgen.project import PACKAGE_ROOT, Project
from opgen.spec.model import load_all
from opgen.spec.names import method_named, spec_named
from opgen.verify.compare import Mismatch, Outcome, compare_tensor
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
SPECS = load_all(ROOT / "specs")
OPS = ("numpy.sort", "numpy.argsort")
OVERLOADS = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32}
TARGETS = ("cpu-cpp", "cpu-rust")


@pytest.fixture(scope="module")
def kernels():
    loaded = verified_kernels([(op, ov) for op in OPS for ov in OVERLOADS], TARGETS)
    return {key: kernel for key, (_, _, kernel) in loaded.items()}


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


def _run(kernels, op, ov, target, x, axis, kind="stable"):
    out_dtype = np.int64 if op == "numpy.argsort" else x.dtype
    out = np.full(x.shape, 7, out_dtype)  # a prefill the kernel must overwrite everywhere
    got = kernels[(op, ov, target)]([x, axis, kind], out=out)
    assert got.shape == x.shape and got.flags.c_contiguous and got.dtype == out_dtype
    return got


def _bits(a: np.ndarray) -> np.ndarray:
    """Bit patterns: equal means the same values in the same places, zero signs and nan bits too."""
    return a.view({4: np.uint32, 8: np.uint64}[a.itemsize]) if a.dtype.kind == "f" else a


def _check(kernels, ov, target, x):
    for axis in range(-x.ndim, x.ndim):
        for kind in ("stable", "mergesort"):
            got = _run(kernels, "numpy.sort", ov, target, x, axis, kind)
            want = np.sort(x, axis=axis, kind="stable")
            assert np.array_equal(_bits(got), _bits(want)), (ov, target, x.shape, x.strides, axis, got, want)
            idx = _run(kernels, "numpy.argsort", ov, target, x, axis, kind)
            want_idx = np.argsort(x, axis=axis, kind="stable")
            assert np.array_equal(idx, want_idx), (ov, target, x.shape, x.strides, axis, idx, want_idx)


def _float_lanes(dt) -> list[np.ndarray]:
    nan, inf, tiny = np.nan, np.inf, np.finfo(dt).smallest_subnormal
    rows = np.array([
        [0.0, -0.0, 0.0, -0.0, 1.0, -0.0, 0.0, 1.0],        # zeros tie: their input order stays
        [nan, 1.0, nan, -inf, inf, nan, 0.0, -1.0],          # nans last (after +inf), in input order
        [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0],            # all equal: the identity permutation
        [inf, -inf, inf, -inf, tiny, -tiny, -0.0, 0.0],
        [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0],            # reversed
        [-1.0, -0.0, -1.0, 0.0, nan, -1.0, nan, -0.0],
    ], dt)
    rng = np.random.default_rng(14)
    ties = rng.integers(-3, 4, size=(3, 4, 37)).astype(dt)   # lanes longer than the insertion-sort cut
    ties[ties == 0] = np.where(rng.random(int((ties == 0).sum())) < 0.5, -0.0, 0.0)
    ties[0, 1, 5] = ties[2, 3, 30] = nan
    signed = rng.standard_normal((2, 300)).astype(dt)
    signed[:, ::7] = -0.0
    signed[:, 3::11] = 0.0
    signed[:, 5::13] = nan
    return [rows, ties, signed, np.empty((2, 0, 3), dt), np.array([[-0.0], [nan]], dt), rows[:1, :1]]


def _int_lanes(dt) -> list[np.ndarray]:
    info = np.iinfo(dt)
    edges = np.array([info.max, info.min, -1, 0, 1, info.min + 1, info.max - 1, info.min, info.max, 0, -2, 2], dt)
    rng = np.random.default_rng(15)
    rows = np.stack([edges, edges[::-1], rng.permutation(edges), np.full(12, info.min, dt)])
    wide = rng.integers(info.min, info.max, size=(3, 5, 41), dtype=dt, endpoint=True)
    wide[:, :, ::3] = rng.choice(edges, size=wide[:, :, ::3].shape)  # extremes among ties, radix path
    small = rng.integers(-2, 3, size=(4, 200)).astype(dt)
    return [rows, wide, small, np.empty((0, 4), dt), np.array([[info.min], [info.max]], dt)]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_kernels_match_numpy_stable_sort(kernels, ov, target):
    dt = OVERLOADS[ov]
    bases = _float_lanes(dt) if np.dtype(dt).kind == "f" else _int_lanes(dt)
    for base in bases:
        for x in _layouts(base):
            _check(kernels, ov, target, x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", ["f32", "i64"])
def test_long_lanes_with_ties(kernels, ov, target):
    """Lanes of 4099 (every radix pass) and a non-last axis, with heavy ties: only stability fixes them."""
    dt = OVERLOADS[ov]
    rng = np.random.default_rng(16)
    x = rng.integers(-20, 20, size=(2, 4099)).astype(dt)
    if ov == "f32":
        x[x == 0] = -0.0
        x[:, ::97] = 0.0
        x[:, 1::89] = np.nan
    else:
        x[:, ::50] = np.iinfo(dt).min
        x[:, 1::50] = np.iinfo(dt).max
    _check(kernels, ov, target, x)
    _check(kernels, ov, target, np.ascontiguousarray(x.T)[::2])  # axis 0 of a strided (2050, 2) view


@pytest.mark.parametrize("target", TARGETS)
def test_errors(kernels, target):
    x = np.array([[3.0, 1.0], [2.0, 2.0]], np.float32)
    for op in OPS:
        for kind in ("quicksort", "heapsort", "quick", ""):
            with pytest.raises(ValueError, match="sort kind"):  # NumPy's quicksort orders ties otherwise
                _run(kernels, op, "f32", target, x, -1, kind)
        for axis in (2, -3):
            with pytest.raises(ValueError, match="axis"):
                _run(kernels, op, "f32", target, x, axis)
        with pytest.raises(ValueError, match="axis"):
            _run(kernels, op, "f32", target, np.array(1.0, np.float32), -1)  # a 0-d tensor has no axis


def test_spellings():
    sort, argsort = SPECS["numpy.sort"], SPECS["numpy.argsort"]
    for o in sort.overloads:  # np.sort(a) and np.sort(a, axis): NumPy's axis default, the stable kind
        assert [(p.name, p.default) for p in o.sig.params[1:]] == [("axis", -1), ("kind", "stable")]
    for o in argsort.overloads:  # np.argsort(a)'s default kind (quicksort) orders ties otherwise: no defaults
        assert [p.name for p in o.sig.params] == ["a", "axis", "kind"] and not any(p.has_default for p in o.sig.params)
        assert o.sig.returns.dtype.name == "int64"
    spec, method = method_named(SPECS, "ndarray.argsort")
    assert spec.op == "numpy.argsort" and method.receiver is None
    assert spec_named(SPECS, "ndarray.sort") is None  # in place, returns None
    assert spec_named(SPECS, "torch.sort") is None and spec_named(SPECS, "torch.argsort") is None


def test_the_gate_comparison_tells_an_unstable_order_from_the_stable_one():
    x = np.array([1.0, -0.0, 1.0, 0.0, np.nan, np.nan], np.float32)
    for op, unstable in (("numpy.argsort", np.array([3, 1, 2, 0, 5, 4])),       # ties swapped
                         ("numpy.sort", np.array([0.0, -0.0, 1.0, 1.0, np.nan, np.nan], np.float32))):
        spec = SPECS[op]
        o = spec.overload("f32")
        tol = spec.tolerance_for(o, o.sig.returns.dtype)
        want = np.sort(x, kind="stable") if op == "numpy.sort" else np.argsort(x, kind="stable")
        compare_tensor(want, want, tol, None, Outcome())
        with pytest.raises(Mismatch, match="first mismatch"):
            compare_tensor(unstable, want, tol, None, Outcome())


def test_the_corpus_holds_an_unstable_argsort():
    (entry,) = [e for e in load_manifest(corpus_dir(Project(ROOT)), SPECS) if e.name == "argsort_f32_unstable_ties"]
    assert (entry.op, entry.overload, entry.layer) == ("numpy.argsort", "f32", "gate")
    assert "std::sort(" in entry.source and "stable_sort" not in entry.source
