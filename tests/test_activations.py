"""The activations of issue 14 (softplus, elu, hardswish, mish, and gelu's float64 overload) where
the gate cannot look: the gate compares by a tolerance and draws scalars from a spec's domain,
so here the admitted C++ and Rust kernels are checked against PyTorch itself: bit for bit on
-0.0, nan, +-inf, subnormals and the saturated tails; within a few ulps on dense grids; the
softplus branch at its threshold, decided with PyTorch's float32 beta, threshold and product
(betas that float32 cannot represent, which the spec's domain leaves out); and every layout
giving the contiguous layout's bits."""

from __future__ import annotations


import numpy as np
import pytest
import torch
import torch.nn.functional as F

from opgen.project import PACKAGE_ROOT
from tests.registry_kernels import LazyKernels

ROOT = PACKAGE_ROOT
OPS = [("torch.nn.functional.hardswish", "f32"), ("torch.nn.functional.hardswish", "f64"),
       ("torch.nn.functional.elu", "f32"), ("torch.nn.functional.elu", "f64"),
       ("torch.nn.functional.softplus", "f32"), ("torch.nn.functional.softplus", "f64"),
       ("torch.nn.functional.mish", "f32"), ("torch.nn.functional.mish", "f64"),
       ("torch.nn.functional.gelu", "f64")]
TARGETS = ("cpu-cpp", "cpu-rust")
DT = {"f32": np.float32, "f64": np.float64}


class _Kernels:
    """The admitted entries' kernels, each built on first use (a test needs only its own op's)."""

    def __init__(self):
        self.loaded = LazyKernels()

    def __getitem__(self, key):
        return self.loaded[key][2]


@pytest.fixture(scope="module")
def kernels():
    return _Kernels()


def _call(kernel, x, *scalars):
    return kernel([x, *scalars], out=np.empty(x.shape, x.dtype))


def _layouts(x: np.ndarray):
    """Contiguous, reversed, every other element of a buffer, and a transposed 2-d view."""
    yield x
    yield np.ascontiguousarray(x[::-1])[::-1]
    buf = np.zeros(2 * x.size, x.dtype)
    strided = buf[::2]
    strided[...] = x
    yield strided
    if x.size % 4 == 0:
        t = np.ascontiguousarray(x.reshape(4, -1).T).T  # (4, n/4) with strides (1, 4)
        yield t


def _torch(fn, x, *args, **kw):
    with torch.no_grad():
        return fn(torch.from_numpy(np.ascontiguousarray(x)), *args, **kw).numpy()


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place (nan meets nan as 0, nan against a number as huge)."""
    it = np.int64 if a.dtype == np.float64 else np.int32
    def key(v):
        i = v.view(it).astype(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(it).min) - i, i)
    d = np.abs(key(a) - key(b)).astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    d[both_nan] = 0
    d[np.isnan(a) ^ np.isnan(b)] = np.inf
    return d


def _same_bits(got, ref):
    return (got.view(np.uint8).reshape(got.size, -1) == ref.view(np.uint8).reshape(ref.size, -1)).all(axis=1) | (
        np.isnan(got) & np.isnan(ref))


def _specials(dt):
    fi = np.finfo(dt)
    return np.array([0.0, -0.0, np.nan, np.inf, -np.inf, fi.smallest_subnormal, -fi.smallest_subnormal,
                     3 * fi.smallest_subnormal, -3 * fi.smallest_subnormal, fi.tiny, -fi.tiny, fi.max, -fi.max,
                     1.0, -1.0, 1e-30, -1e-30], dt)


def _grid(dt, lo, hi, n=40000, seed=0):
    rng = np.random.default_rng(seed)
    x = np.concatenate([np.linspace(lo, hi, n), rng.uniform(lo, hi, n // 4),
                        rng.standard_normal(n // 4) * 3]).astype(dt)
    return np.concatenate([x, _specials(dt)])


def _assert_all_layouts(call, x, ref_fn, check):
    """`check(got, ref)` on every layout of x; every layout's bits must be the contiguous one's."""
    ref = ref_fn(x)
    first = None
    for xv in _layouts(x):
        got = call(xv)
        check(got, ref)
        if first is None:
            first = got
        else:
            assert _same_bits(got, first).all(), "a strided layout changed the bits"


# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", ["f32", "f64"])
def test_hardswish_is_torchs_bit_for_bit(kernels, overload, target):
    """(x * relu6(x + 3)) / 6 in PyTorch's order: every bit, -0.0 and the -inf -> nan included,
    near the clamp edges -3 and 3 and where x * 6 / 6 is not x."""
    dt = DT[overload]
    k = kernels[("torch.nn.functional.hardswish", overload, target)]
    x = np.concatenate([_grid(dt, -8, 8), np.nextafter(dt(-3), dt(-4)) + np.arange(-50, 50, dtype=dt) * np.finfo(dt).eps * 4,
                        np.geomspace(3, 1e30, 2000).astype(dt), -np.geomspace(3, 1e30, 2000).astype(dt)]).astype(dt)
    call = lambda v: _call(k, v)  # noqa: E731

    def check(got, ref):
        same = _same_bits(got, ref)
        assert same.all(), f"x = {x[~same][:3]!r}: got {got[~same][:3]!r}, torch {ref[~same][:3]!r}"
    _assert_all_layouts(call, x, lambda v: _torch(F.hardswish, v), check)
    got = _call(k, np.array([-np.inf, -0.0, -5.0], dt))
    assert np.isnan(got[0]) and np.signbit(got[1]) and got[1] == 0 and np.signbit(got[2]) and got[2] == 0


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", ["f32", "f64"])
def test_elu_edges_and_ulps(kernels, overload, target):
    """x > 0 is x exactly; -0.0 gives -0.0; -inf and very negative x give exactly -(T)alpha;
    subnormal x give x * alpha (expm1, not exp - 1); within 3 ulps of PyTorch elsewhere, for
    alphas float32 cannot represent (PyTorch rounds alpha to float32 for a float32 tensor)."""
    dt = DT[overload]
    k = kernels[("torch.nn.functional.elu", overload, target)]
    for alpha in (1.0, 1.1, 0.3, 2.5):
        call = lambda v: _call(k, v, alpha)  # noqa: E731
        x = _grid(dt, -30, 10)

        def check(got, ref):
            d = _ulps(got, ref)
            assert d.max() <= 3, f"alpha {alpha}: x = {x[d > 3][:3]!r}: got {got[d > 3][:3]!r}, torch {ref[d > 3][:3]!r}"
            pos = x > 0
            assert _same_bits(got[pos], x[pos]).all()
        _assert_all_layouts(call, x, lambda v: _torch(F.elu, v, alpha), check)
        a = dt(alpha)
        tiny = np.finfo(dt).smallest_subnormal
        e = np.array([-0.0, -np.inf, -1e4, -200.0, np.nan, np.inf, -3 * tiny, -np.finfo(dt).tiny], dt)
        got = _call(k, e, alpha)
        ref = _torch(F.elu, e, alpha)
        assert _same_bits(got, ref).all(), (alpha, got, ref)
        assert np.signbit(got[0]) and got[1] == -a and got[2] == -a and got[3] == -a


SOFTPLUS_BETAS = [1.0, 1.5, 1.1, 1.25000001, 0.7, 3.3]
SOFTPLUS_THRESHOLDS = [20.0, 5.0, 5.0000003, 20.1, 7.77]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", ["f32", "f64"])
def test_softplus_threshold_branch_is_torchs(kernels, overload, target):
    """At t = x * b near the threshold the two branches differ by log1p(exp(-h)) / b: the kernel
    must take PyTorch's branch for every x, with b, h and the product in the tensor's dtype
    (threshold 5.0000003 acts as 5.00000048 in float32, beta 1.25000001 as 1.25). Elsewhere within
    4 ulps of PyTorch; the linear branch is x bit for bit."""
    dt = DT[overload]
    k = kernels[("torch.nn.functional.softplus", overload, target)]
    for beta in SOFTPLUS_BETAS:
        for thr in SOFTPLUS_THRESHOLDS:
            edge = dt(thr) / dt(beta)
            near = edge + np.arange(-64, 65, dtype=np.float64) * float(np.spacing(edge))
            x = np.concatenate([near.astype(dt), _grid(dt, -40, 40, n=4000)]).astype(dt)
            call = lambda v: _call(k, v, beta, thr)  # noqa: E731

            def check(got, ref):
                with np.errstate(over="ignore"):
                    linear = np.asarray(x * dt(beta), dt) > dt(thr)
                assert _same_bits(got[linear], x[linear]).all(), (beta, thr)
                d = _ulps(got, ref)
                d[np.abs(ref) < (1e-40 if dt == np.float32 else 1e-300)] = 0  # the subnormal band: atol
                bad = d > 4
                assert not bad.any(), f"beta {beta} thr {thr}: x = {x[bad][:3]!r}: got {got[bad][:3]!r}, torch {ref[bad][:3]!r}"
            _assert_all_layouts(call, x, lambda v: _torch(F.softplus, v, beta, thr), check)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", ["f32", "f64"])
def test_softplus_specials(kernels, overload, target):
    dt = DT[overload]
    k = kernels[("torch.nn.functional.softplus", overload, target)]
    for beta in (1.0, 2.0, 1.1):
        x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -1e4, 1e4, np.finfo(dt).smallest_subnormal], dt)
        got, ref = _call(k, x, beta, 20.0), _torch(F.softplus, x, beta, 20.0)
        assert np.isnan(got[0]) and got[1] == np.inf and got[2] == 0 and got[5] == 0 and got[6] == dt(1e4)
        assert _ulps(got[3:5], ref[3:5]).max() <= 2 and _ulps(got[7:], ref[7:]).max() <= 2
    # Very negative x: exp(t) underflows; the result stays within a few subnormal steps of PyTorch's.
    x = np.linspace(-110 if dt == np.float32 else -760, -60 if dt == np.float32 else -690, 5001).astype(dt)
    got, ref = _call(k, x, 1.0, 20.0), _torch(F.softplus, x, 1.0, 20.0)
    tiny = np.finfo(dt).smallest_subnormal
    assert (np.abs(got.astype(np.float64) - ref) <= np.maximum(8 * tiny, 4 * np.finfo(dt).eps * np.abs(ref))).all()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("overload", ["f32", "f64"])
def test_mish_edges_and_ulps(kernels, overload, target):
    """Large positive x give x bit for bit (and +inf gives +inf: no inf / inf); -inf gives nan;
    -0.0 gives -0.0; very negative x stay within the subnormal band PyTorch itself has; within 4
    ulps elsewhere."""
    dt = DT[overload]
    k = kernels[("torch.nn.functional.mish", overload, target)]
    call = lambda v: _call(k, v)  # noqa: E731
    x = _grid(dt, -20, 20)

    def check(got, ref):
        d = _ulps(got, ref)
        small = np.abs(ref) < (1e-36 if dt == np.float32 else 1e-300)
        d[small] = 0
        assert d.max() <= 4, f"x = {x[d > 4][:3]!r}: got {got[d > 4][:3]!r}, torch {ref[d > 4][:3]!r}"
    _assert_all_layouts(call, x, lambda v: _torch(F.mish, v), check)
    big = np.geomspace(25, np.finfo(dt).max / 4, 500).astype(dt)
    assert _same_bits(_call(k, big), big).all()
    e = np.array([np.inf, -np.inf, np.nan, -0.0], dt)
    got = _call(k, e)
    assert got[0] == np.inf and np.isnan(got[1]) and np.isnan(got[2]) and got[3] == 0 and np.signbit(got[3])
    lo = -120 if dt == np.float32 else -800
    x = np.linspace(lo, lo / 1.5, 4001).astype(dt)
    got, ref = _call(k, x), _torch(F.mish, x)
    atol = 2.5e-43 if dt == np.float32 else 5e-321
    assert (np.abs(got.astype(np.float64) - ref) <= atol + 6 * np.finfo(dt).eps * np.abs(ref)).all()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_f64_against_torch(kernels, approximate, target):
    """float64 GELU: within 4 ulps of PyTorch for x >= 0, within 2.2e-16 * |x| absolute for x < 0
    (PyTorch's 1 + erf / 1 + tanh cancels there, to about 1.5 ulps of 1 times |x| / 2); -0.0, nan,
    -inf (nan), +inf and subnormals as PyTorch; an unknown `approximate` raises ValueError."""
    k = kernels[("torch.nn.functional.gelu", "f64", target)]
    call = lambda v: _call(k, v, approximate)  # noqa: E731
    x = _grid(np.float64, -12, 12)

    def check(got, ref):
        pos = ~(x < 0)
        d = _ulps(got[pos], ref[pos])
        assert d.max() <= 4, f"x = {x[pos][d > 4][:3]!r}: got {got[pos][d > 4][:3]!r}, torch {ref[pos][d > 4][:3]!r}"
        neg = (x < 0) & np.isfinite(x)  # -inf gives nan on both sides (checked below)
        assert np.isnan(got[x == -np.inf]).all()
        err = np.abs(got[neg] - ref[neg])
        assert (err <= 2.2e-16 * np.abs(x[neg])).all(), f"x = {x[neg][np.argmax(err / np.abs(x[neg]))]!r}"
    _assert_all_layouts(call, x, lambda v: _torch(F.gelu, v, approximate=approximate), check)
    e = np.array([-0.0, np.nan, -np.inf, np.inf, 5e-324, -5e-324, 1e300, -1e300], np.float64)
    got, ref = _call(k, e, approximate), _torch(F.gelu, e, approximate=approximate)
    assert _same_bits(got, ref).all(), (got, ref)
    with pytest.raises(ValueError):
        _call(k, np.ones(3), "erf")
