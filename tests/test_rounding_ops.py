"""The exact unary ops numpy.floor, numpy.ceil, numpy.rint, numpy.sign, numpy.reciprocal and
numpy.clip (scalar bounds) where the gate cannot look: the gate compares float tensors by value,
so -0.0 passes for 0.0; here every element's bits must be NumPy's (nan aside: any nan meets nan),
for the admitted C++ and Rust kernels, on signed zeros, ties (+-0.5, 1.5, 2.5), the last
non-integers below 2^23 / 2^52 and the integers above, nan, +-inf, subnormals, in contiguous,
reversed, strided and transposed layouts and through the large streaming-store path. clip also on
nan bounds, a_min > a_max, ties of signed zeros and float32 bounds that round or overflow. And
the alias claims in the specs: torch.floor / ceil / round / reciprocal agree with NumPy bit for
bit, torch.sign does not (nan)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from opgen.project import PACKAGE_ROOT
from opgen.references import call_reference
from tests.registry_kernels import LazyKernels

ROOT = PACKAGE_ROOT
UNARY = ["numpy.floor", "numpy.ceil", "numpy.rint", "numpy.sign", "numpy.reciprocal"]
FLOAT_OVERLOADS = ["f32", "f64"]
TARGETS = ("cpu-cpp", "cpu-rust")
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


@pytest.fixture(scope="module")
def kernels():
    return LazyKernels()  # (op, overload, target) -> (spec, overload, kernel), built on first use


def _edge_values(dt) -> np.ndarray:
    """Signed zeros, ties, the neighbours of 0.5, the last non-integers and first integers at 2^p."""
    p = 23 if dt == np.float32 else 52
    fi = np.finfo(dt)
    big = dt(2.0**p)
    half = dt(0.5)
    pos = [0.0, 0.5, 1.5, 2.5, 3.5, 0.4, 0.6, 1.0, 2.0, 7.0,
           np.nextafter(half, dt(0)), np.nextafter(half, dt(1)), np.nextafter(dt(1.5), dt(0)), np.nextafter(dt(2.5), dt(3)),
           big - dt(0.5), big - dt(1.5), np.nextafter(big, dt(0)), big, big + dt(1), big * dt(2) + dt(2), dt(2.0**(p - 1)) + dt(0.5),
           1e30, fi.max, fi.tiny, fi.smallest_subnormal, fi.smallest_subnormal * 3, fi.tiny / dt(2), 1e-10, 0.1,
           np.inf, 1 / fi.max, fi.max / dt(4)]
    vals = np.array(pos, dt)
    return np.concatenate([vals, -vals, np.array([np.nan, -np.nan], dt)])


def _pool(dt, rng) -> np.ndarray:
    uint = np.uint32 if dt == np.float32 else np.uint64
    edges = _edge_values(dt)
    rand_bits = rng.integers(0, np.iinfo(uint).max, size=500, dtype=uint, endpoint=True).view(dt)
    normal = (rng.standard_normal(500) * 10).astype(dt)
    halves = (np.round(rng.standard_normal(500) * 20) / 2).astype(dt)
    return np.concatenate([edges, rand_bits, normal, halves])


def _layouts(x: np.ndarray):
    yield x
    if x.ndim and x.size:
        yield np.ascontiguousarray(x[..., ::-1])[..., ::-1]  # reversed
        buf = np.zeros(2 * x.size, x.dtype)
        strided = buf[::2].reshape(x.shape)
        strided[...] = x
        yield strided
        if x.ndim >= 2:
            yield np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)  # transposed


SHAPES = [(), (1,), (7,), (16,), (33,), (1000,), (8, 65), (3, 5, 7), (2, 1, 40)]


def _reference(spec, o, args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call_reference(spec.reference_for(o), args)


def _assert_same_bits(got: np.ndarray, ref: np.ndarray, what: str):
    ref = np.asarray(ref, dtype=got.dtype)
    assert got.shape == ref.shape, what
    if got.dtype.kind == "f":
        uint = np.uint64 if got.dtype == np.float64 else np.uint32
        same = (got.view(uint) == ref.view(uint)) | (np.isnan(got) & np.isnan(ref))
    else:
        same = got == ref
    if not same.all():
        at = tuple(np.argwhere(~same)[0])
        raise AssertionError(f"{what}: at {at} got {got[at]!r}, NumPy {ref[at]!r}")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", FLOAT_OVERLOADS)
@pytest.mark.parametrize("op", UNARY)
def test_unary_float_results_are_numpys_bit_for_bit(kernels, op, overload, target):
    spec, o, kernel = kernels[(op, overload, target)]
    dt = np.dtype(o.sig.returns.dtype.np).type
    rng = np.random.default_rng(1)
    pool = _pool(dt, rng)
    # every edge value once, in every layout, then random draws from the pool in each shape
    cases = [_edge_values(dt), pool] + [rng.choice(pool, size=shape).astype(dt) for shape in SHAPES]
    for x in cases:
        for xl in _layouts(x):
            got = kernel([xl], out=np.empty(x.shape, dt))
            _assert_same_bits(got, _reference(spec, o, [xl]), f"{op} {overload} {target} shape {x.shape}")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["numpy.floor", "numpy.rint", "numpy.sign", "numpy.reciprocal"])
def test_large_contiguous_streaming_path(kernels, op, target):
    """8 MiB and more of output takes the non-temporal store path in C++ (odd length, odd offset)."""
    spec, o, kernel = kernels[(op, "f32", target)]
    rng = np.random.default_rng(2)
    pool = _pool(np.float32, rng)
    x = rng.choice(pool, size=(1 << 21) + 37 + 1).astype(np.float32)[1:]  # not 64-byte aligned
    got = kernel([x], out=np.empty(x.shape, np.float32))
    _assert_same_bits(got, _reference(spec, o, [x]), f"{op} f32 {target} large")


def test_the_spec_claims_hold_in_numpy():
    """What the specs' semantics say, on NumPy itself: -0.0 kept by floor/ceil/rint, ties to even,
    sign(-0.0) = +0.0 and sign(nan) = nan."""
    for dt in (np.float32, np.float64):
        x = np.array([-0.5, -0.4, -0.0, 0.5, 1.5, 2.5, -2.5], dt)
        assert np.signbit(np.floor(x)).tolist() == [True, True, True, False, False, False, True]
        assert np.signbit(np.ceil(x)).tolist() == [True, True, True, False, False, False, True]
        assert np.rint(x).tolist() == [-0.0, -0.0, -0.0, 0.0, 2.0, 2.0, -2.0]
        assert np.signbit(np.rint(x)[:3]).all()
        s = np.sign(np.array([-0.0, 0.0, np.nan, -1e-300, np.inf], dt))
        assert not np.signbit(s[:2]).any() and np.isnan(s[2]) and s[3] == (-1 if dt == np.float64 else 0)


@pytest.mark.parametrize("target", TARGETS)
def test_sign_int64_edges(kernels, target):
    spec, o, kernel = kernels[("numpy.sign", "i64", target)]
    x = np.array([I64_MIN, I64_MIN + 1, -(2**62), -2, -1, 0, 1, 2, 2**62, I64_MAX - 1, I64_MAX], np.int64)
    for xl in _layouts(np.tile(x, 5).reshape(5, -1)):
        _assert_same_bits(kernel([xl], out=np.empty(xl.shape, np.int64)), _reference(spec, o, [xl]), f"sign i64 {target}")


FLOAT_BOUNDS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, 0.1, float("inf"), float("-inf"), float("nan"),
                1e300, -1e300, 3.4028235677973366e38, 3.402823669209385e38, 1e-320, -1e-46, 1e-45]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", FLOAT_OVERLOADS)
def test_clip_float_is_numpys_bit_for_bit(kernels, overload, target):
    """Every pair of bounds (nan, +-inf, signed zeros, lo > hi, bounds that round to float32 or
    overflow its range) on the edge values, in every layout."""
    spec, o, kernel = kernels[("numpy.clip", overload, target)]
    dt = np.dtype(o.sig.returns.dtype.np).type
    rng = np.random.default_rng(3)
    edges = _edge_values(dt)
    mixed = rng.choice(_pool(dt, rng), size=(8, 65)).astype(dt)
    for lo, hi in itertools.product(FLOAT_BOUNDS, FLOAT_BOUNDS):
        for x in (edges, mixed):
            for xl in _layouts(x):
                got = kernel([xl, lo, hi], out=np.empty(x.shape, dt))
                _assert_same_bits(got, _reference(spec, o, [xl, lo, hi]), f"clip {overload} {target} [{lo!r}, {hi!r}]")


@pytest.mark.parametrize("target", TARGETS)
def test_clip_int64_edges(kernels, target):
    spec, o, kernel = kernels[("numpy.clip", "i64", target)]
    edges = [I64_MIN, I64_MIN + 1, -1000, -1, 0, 1, 7, 1000, I64_MAX - 1, I64_MAX]
    x = np.array(edges * 3, np.int64).reshape(3, -1)
    for lo, hi in itertools.product(edges, edges):
        for xl in _layouts(x):
            got = kernel([xl, lo, hi], out=np.empty(x.shape, np.int64))
            _assert_same_bits(got, _reference(spec, o, [xl, lo, hi]), f"clip i64 {target} [{lo}, {hi}]")


def test_torch_aliases_agree_and_torch_sign_does_not():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    for dt in (np.float32, np.float64):
        uint = np.uint32 if dt == np.float32 else np.uint64
        x = _pool(dt, rng)
        for f, t in ((np.floor, torch.floor), (np.ceil, torch.ceil), (np.rint, torch.round), (np.reciprocal, torch.reciprocal)):
            with np.errstate(all="ignore"):
                a = f(x)
            b = t(torch.from_numpy(x)).numpy()
            assert np.array_equal(np.isnan(a), np.isnan(b)), f.__name__
            assert np.array_equal(a.view(uint)[~np.isnan(a)], b.view(uint)[~np.isnan(b)]), f.__name__
        assert torch.sign(torch.tensor([float("nan")], dtype=torch.float32)).item() == 0.0  # NumPy: nan
