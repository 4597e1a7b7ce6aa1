"""torch.linalg.vector_norm where the gate does not look: the admitted C++ and Rust kernels against
torch itself on hand-picked rows (nan, inf, -0.0, zeros under negative ords, subnormals) for the
special ords and for ords the spec does not draw, every dim, keepdim on and off, in contiguous,
reversed, strided and Fortran layouts; torch's over- and underflow for float32 (which the domain
keeps out of the gate's draws); empty dims (0, or ValueError where torch raises); long offset rows
against the long-double reference, tighter than the spec's tolerance; and how the compiler binds
the signature (positional in torch's order, or by torch's keyword names)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from opgen.compiler.resolve import _choose
from opgen.compiler.types import parse
from opgen.norm_references import vector_norm as reference
from opgen.project import PACKAGE_ROOT
from opgen.spec.model import load_all
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
OP = "torch.linalg.vector_norm"
OVERLOADS = ("f32", "f64")
TARGETS = ("cpu-cpp", "cpu-rust")
INF = math.inf
ORDS = (2.0, 1.0, INF, -INF, 0.0, 0.5, 1.5, 3.0, 4.0, -0.5, -1.0, -2.0, 2.5, -3.0, 0.25, 7.0)


@pytest.fixture(scope="module")
def kernels():
    loaded = verified_kernels([(OP, ov) for ov in OVERLOADS], TARGETS)
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


def _call(kernels, ov, target, x, ord, dim, keepdim):
    o, k = kernels[(OP, ov, target)]
    shape = o.rule.output_shape({"x": x, "ord": ord, "dim": dim, "keepdim": keepdim}, ["x"])
    return k([x, ord, dim, keepdim], out=np.empty(shape, o.sig.returns.dtype.np))


def _torch(x, ord, dim, keepdim):
    import torch

    return torch.linalg.vector_norm(torch.from_numpy(np.array(x, copy=True)), ord, dim, keepdim).numpy()


def _agree(got, want, rtol):
    """Shapes equal; nan, inf and zero exactly; the rest within rtol."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    fin = np.isfinite(want) & (want != 0)
    exact = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        near = np.abs(got - want) <= rtol * np.abs(want)
    return bool(np.all(np.where(fin, near, exact)))


def _rows(dt):
    n, i = np.nan, np.inf
    s = float(np.finfo(dt).smallest_subnormal) * 3
    rows = np.array([
        [1, -2, 3, -4, 0, 5, 0.5],
        [0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0],  # all zeros: 0 for p > 0, 0 for p < 0 (|0|^p = inf)
        [1, n, 2, 3, 0, 4, 5],                   # nan: nan except ord 0 (nan != 0 counts)
        [i, 1, 2, -i, 3, 4, 5],                  # inf: inf for p > 0, ignored for p < 0
        [i, i, i, -i, i, i, -i],                 # all inf: inf, and (sum 0)^(1/p) = inf for p < 0
        [0, 3, 4, 0, 0, 0, 0],                   # zeros with a negative ord: 0
        [n, i, 0, 1, 2, 3, 4],                   # nan with inf and zero
        [s, 1e-3, 2e-3, 4, 8, 16, 1e3],          # a subnormal among normal values
        [-7.25, -7.25, -7.25, -7.25, -7.25, -7.25, -7.25],
    ], dt)
    rng = np.random.default_rng(4)
    wide = rng.integers(-4, 5, size=(3, 5, 37)).astype(dt) * 0.75
    wide[1, 2, 30] = np.nan
    wide[2, :, 5] = np.inf
    wide[0, 3, :] = 0.0
    return [rows, rows.T.copy(), wide, rows[:, :1].copy()]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_rows_are_torchs(kernels, ov, target):
    dt = np.float32 if ov == "f32" else np.float64
    # torch raises to the p and sums in the dtype, and its root multiplies those errors by up to 4
    # (ord 0.25): 32 ulps leaves room for that; the special values are compared exactly.
    rtol = 32 * float(np.finfo(dt).eps)
    for base in _rows(dt):
        for x in _layouts(base):
            for dim in range(-x.ndim, x.ndim):
                for keep in (False, True):
                    for ord in ORDS:
                        want = _torch(x, ord, dim, keep)
                        got = _call(kernels, ov, target, x, ord, dim, keep)
                        assert _agree(got, want, rtol), (x.shape, x.strides, ord, dim, keep, got, want)


@pytest.mark.parametrize("target", TARGETS)
def test_float32_overflows_and_underflows_as_torch(kernels, target):
    """torch forms |x|^p and the sum in float32 without rescaling: inf where the sum exceeds
    FLT_MAX (though the norm may not), 0 where the terms underflow; |x| itself for a one-element
    dim (torch does not square it there)."""
    f = np.float32
    cases = [
        (np.array([1e30, 1e30, 3e30], f), (2.0, 3.0, 4.0, 1.5)),
        (np.full(1000, 1e19, f), (2.0,)),
        (np.array([1e-30, 1e-30, 3e-30], f), (2.0, 3.0, 4.0)),
        (np.array([1e-22, 0.0], f), (2.0,)),     # a subnormal square: torch's precision loss
        (np.array([1e30], f), (2.0, 3.0, -1.0, 0.5)),
        (np.array([1e-30], f), (3.0, -1.0)),
        (np.array([1e30, 1e30], f), (1.0, INF, -INF, 0.0, 0.5)),  # no overflow at these ords
    ]
    for row, ords in cases:
        for base in (row, row.reshape(-1, 1), np.stack([row, row])):
            dim = 0 if base.ndim == 1 or base.shape[1] == 1 else 1
            for x in _layouts(base):
                for ord in ords:
                    want = _torch(x, ord, dim, False)
                    got = _call(kernels, "f32", target, x, ord, dim, False)
                    assert _agree(got, want, 2e-6), (row[:3], x.shape, ord, got, want)
    assert np.isinf(_call(kernels, "f32", target, np.array([1e30, 1e30, 3e30], f), 2.0, 0, False))
    # float64 has room: the same values are finite there
    got = _call(kernels, "f64", target, np.array([1e30, 1e30, 3e30]), 2.0, 0, False)
    assert abs(float(got) - math.sqrt(11) * 1e30) <= 1e-15 * float(got)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_empty_dims(kernels, ov, target):
    dt = np.float32 if ov == "f32" else np.float64
    for shape, dim in (((3, 0), 1), ((0, 0), 0), ((0, 4), 0), ((2, 0, 3), -2)):
        x = np.empty(shape, dt)
        for ord in ORDS:
            for keep in (False, True):
                if ord < 0 or ord == INF:
                    with pytest.raises(ValueError):
                        reference(x, ord, dim, keep)
                    with pytest.raises(RuntimeError):
                        _torch(x, ord, dim, keep)
                    with pytest.raises(ValueError):
                        _call(kernels, ov, target, x, ord, dim, keep)
                else:
                    got = _call(kernels, ov, target, x, ord, dim, keep)
                    assert _agree(got, _torch(x, ord, dim, keep), 0), (shape, dim, ord)
                    assert not np.signbit(got).any()
    # a zero-size tensor over a dim of nonzero length: an empty out and no error, at any ord
    x = np.empty((0, 4), dt)
    for ord in (INF, -1.0, 2.0):
        assert _call(kernels, ov, target, x, ord, 1, True).shape == (0, 1)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_long_offset_rows_are_summed_accurately(kernels, ov, target):
    """100k-term rows of offset data (mean >> spread), along the last dim and along a strided
    first dim: within 1e-6 (float32) of the long-double norm, where a running float32 sum (and
    torch's own float32 evaluation for ord != 2) is off by 1e-4 and more."""
    dt = np.float32 if ov == "f32" else np.float64
    rtol = 1e-6 if ov == "f32" else 1e-14
    rng = np.random.default_rng(7)
    rows = (4000.0 + rng.standard_normal((2, 100_003))).astype(dt)
    for x, dim in ((rows, 1), (np.ascontiguousarray(rows.T), 0), (rows.T, 0)):
        for ord in (1.0, 2.0, 0.5, 3.0, -1.0, 2.5):
            want = reference(x, ord, dim, False)
            got = _call(kernels, ov, target, x, ord, dim, False)
            np.testing.assert_allclose(got, want, rtol=rtol, err_msg=f"{x.strides} dim {dim} ord {ord}")


def test_signature_binds_as_torch_where_it_can():
    """ord has no default (the signature model puts defaults last, and dim has none): positional
    calls bind in torch's order (x, ord, dim, keepdim), keyword calls by torch's names; a call that
    leaves ord out is refused rather than bound to something else."""
    spec = load_all(ROOT / "specs")[OP]
    t32, t64, i, fl, b = (parse(s) for s in ("tensor[float32]", "tensor[float64]", "int", "float", "bool"))
    m = _choose(spec, [t32, fl, i], {})
    assert m is not None and m[0].name == "f32" and m[1] == ["x", "ord", "dim", "keepdim"]
    m = _choose(spec, [t64], {"ord": fl, "dim": i, "keepdim": b})
    assert m is not None and m[0].name == "f64"
    m = _choose(spec, [t32, i, i], {})  # vector_norm(x, 2, -1): the int 2 widens to ord = 2.0
    assert m is not None and m[0].name == "f32" and m[2][1]
    assert _choose(spec, [t32], {"dim": i}) is None  # vector_norm(x, dim=-1): ord must be written
    assert _choose(spec, [t32, fl], {}) is None  # vector_norm(x, 1.0): all dims at once, not supported
