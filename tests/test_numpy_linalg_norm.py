"""numpy.linalg.norm (ord=None: the 2-norm along one axis) where the gate does not look: the
long-double reference against NumPy itself; the admitted C++ and Rust kernels against the reference
on hand-picked rows (nan, inf, -0.0, subnormals, empty axes, an axis of size 1), every axis negative
and positive, keepdims on and off, in contiguous, reversed, strided and Fortran layouts, and on long
offset rows and columns, tighter than the spec's tolerance; NumPy's float32 evaluation, which the
spec's tolerance rejects along a long strided axis; and how the compiler binds NumPy's signature
(ord refused, an omitted axis lowered to the flattened tensor)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from opgen.norm_references import norm as reference
from opgen.norm_references import numpy_norm
from opgen.project import PACKAGE_ROOT
from opgen.spec.library_signature import library_signatures
from opgen.spec.model import load_all
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
OP = "numpy.linalg.norm"
OVERLOADS = ("f32", "f64")
TARGETS = ("cpu-cpp", "cpu-rust")
DTYPES = {"f32": np.float32, "f64": np.float64}
# What the kernels (squares summed pairwise in double, one rounding) reach: about an ulp.
TIGHT = {"f32": 2.0**-23, "f64": 4 * 2.0**-52}
# float64 squares of subnormals underflow in double (the spec's atol); float32 ones do not.
ATOL = {"f32": 0.0, "f64": 1e-321}


@pytest.fixture(scope="module")
def kernels():
    loaded = verified_kernels([(OP, ov) for ov in OVERLOADS], TARGETS)
    return {key: (o, kernel) for key, (_, o, kernel) in loaded.items()}


def _layouts(x: np.ndarray):
    yield x
    if x.ndim and x.size:
        yield np.ascontiguousarray(x[..., ::-1])[..., ::-1]  # reversed last dim
        buf = np.zeros(2 * x.size + 1, x.dtype)
        strided = buf[1::2].reshape(x.shape)  # every other element, offset by one
        strided[...] = x
        yield strided
        if x.ndim >= 2:
            yield np.asfortranarray(x)


def _call(kernels, ov, target, x, axis, keepdims):
    o, k = kernels[(OP, ov, target)]
    shape = o.rule.output_shape({"x": x, "axis": axis, "keepdims": keepdims}, ["x"])
    return k([x, axis, keepdims], out=np.empty(shape, o.sig.returns.dtype.np))


def _close(got, want, rtol, atol=0.0):
    """nan and inf exactly (and the same shape and dtype); finite values within atol + rtol."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)]), (got, want)
    assert np.all(np.isfinite(got[fin])) and np.all(got[fin] >= 0), got
    err = np.abs(got[fin].astype(np.float64) - want[fin].astype(np.float64))
    assert np.all(err <= atol + rtol * np.abs(want[fin].astype(np.float64))), (err.max(initial=0), got, want)


def _blocks(dt):
    n, i = np.nan, np.inf
    rows = np.array([
        [3, 4, 0, 0, 0, 0, 0],              # 5
        [0.0, -0.0, 0.0, -0.0, 0, 0, 0],    # 0 (+0)
        [1, n, 2, 3, 4, 5, 6],              # nan
        [i, 1, 2, 3, 4, 5, 6],              # inf
        [-i, 1, n, 3, 4, 5, 6],             # nan (inf and nan)
        [-1, -2, -3, -4, -5, -6, -7],
    ], dt)
    rng = np.random.default_rng(11)
    wide = (rng.standard_normal((5, 6, 37)) * 100).astype(dt)
    wide[1, 2, 30] = np.nan
    wide[3, :, 5] = np.inf
    tiny = np.full((3, 4), np.finfo(dt).smallest_subnormal * 3, dt)
    tiny[1, 2] = 1e-8
    return [rows, rows.T.copy(), wide, tiny]


# -- the reference ---------------------------------------------------------------------------

@pytest.mark.parametrize("ov", OVERLOADS)
def test_the_reference_is_numpys_norm_along_one_axis(ov):
    dt = DTYPES[ov]
    rng = np.random.default_rng(2)
    cases = [rng.standard_normal(s).astype(dt) * 10 for s in [(7,), (3, 5), (2, 0, 4), (2, 3, 4, 5), (1,), (0,)]]
    for x in cases + _blocks(dt)[:3]:
        for axis in range(-x.ndim, x.ndim):
            for keep in (False, True):
                want = np.asarray(np.linalg.norm(x, axis=axis, keepdims=keep))
                got = reference(x, axis, keep)
                assert np.asarray(numpy_norm(x, axis, keep)).dtype == want.dtype
                # NumPy squares and sums in x's dtype: a few of its ulps off the long-double norm
                _close(got, want, 1e-6 if ov == "f32" else 1e-15)
    # ord=None over the flattened tensor (what the compiler lowers an omitted axis to) is NumPy's
    # Frobenius norm of a matrix and its 2-norm of any shape
    x = rng.standard_normal((4, 6)).astype(dt)
    _close(reference(x.reshape(-1), 0, False), np.asarray(np.linalg.norm(x)).astype(dt), 1e-6)
    _close(reference(x.reshape(-1), 0, False), np.asarray(np.linalg.norm(x, "fro")).astype(dt), 1e-6)


def test_the_reference_raises_numpys_axis_error():
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        reference(np.ones((2, 3), np.float32), 2, False)
    with pytest.raises(ValueError, match="axis -3 is out of bounds"):
        reference(np.ones((2, 3), np.float32), -3, False)
    with pytest.raises(ValueError):  # NumPy has no axis 0 in a 0-d array either
        np.linalg.norm(np.float32(2.0), axis=0)
    with pytest.raises(ValueError):
        reference(np.asarray(np.float32(2.0)), 0, False)


def test_the_reference_is_exact_where_numpys_float32_is_not():
    """NumPy squares float32 in float32: [1e20] overflows, a subnormal underflows; the reference does not."""
    with np.errstate(all="ignore"):
        assert np.linalg.norm(np.array([1e20], np.float32), axis=0) == np.inf
        assert np.linalg.norm(np.array([1e-30, 1e-30], np.float32), axis=0) == 0
    assert reference(np.array([1e20], np.float32), 0, False) == np.float32(1e20)
    assert reference(np.array([3e-30, 4e-30], np.float32), 0, False) == np.float32(5e-30)


def test_numpys_float32_along_a_long_strided_axis_is_outside_the_tolerance():
    """What the spec's float32 tolerance says it rejects: one running float32 sum (NumPy's along a
    strided axis) over 100k offset terms; and what it admits: NumPy's pairwise sum along a contiguous one."""
    rtol = load_all(ROOT / "specs")[OP].tolerance["float32"].rtol
    rng = np.random.default_rng(4)
    x = (rng.choice([-1.0, 1.0], size=(4, 1)) * rng.uniform(3e3, 5e3, size=(4, 1))
         + rng.standard_normal((4, 100_003))).astype(np.float32)
    ref = reference(x, -1, False).astype(np.float64)
    rows = np.asarray(np.linalg.norm(x, axis=-1), np.float64)
    cols = np.asarray(np.linalg.norm(np.ascontiguousarray(x.T), axis=0), np.float64)
    assert np.max(np.abs(rows - ref) / ref) < rtol / 10
    assert np.max(np.abs(cols - ref) / ref) > 10 * rtol


# -- the spec and the compiler ----------------------------------------------------------------

def test_the_spec_is_found_by_numpys_name_and_binds_numpys_signature():
    spec = load_all(ROOT / "specs")[OP]
    assert spec.path.relative_to(ROOT).as_posix() == "specs/numpy/linalg/norm.yaml"
    (sig,) = library_signatures(OP)
    assert [p.name for p in sig.params] == ["x", "ord", "axis", "keepdims"]
    assert sig.param("keepdims").default is False and sig.param("ord").default is None
    for o in spec.overloads:
        assert [p.name for p in o.sig.params] == ["x", "axis", "keepdims"]
        assert o.sig.param("keepdims").has_default


def test_compiled_calls_bind_as_numpy_and_refuse_ord(tmp_path: Path):
    from opgen.compiler import CompileError, compile_function, compile_many
    from opgen.host import load_compiled
    from opgen.project import Project

    source = tmp_path / "f.py"
    source.write_text(textwrap.dedent("""\
        import numpy as np
        import numpy.typing as npt

        F32 = npt.NDArray[np.float32]
        F64 = npt.NDArray[np.float64]


        def rows(x: F32) -> F32:
            return np.linalg.norm(x, axis=-1, keepdims=True)


        def whole(x: F64) -> F64:
            return np.linalg.norm(x)


        def by_position(x: F32) -> F32:
            return np.linalg.norm(x, None, 0)


        def with_ord(x: F32) -> F32:
            return np.linalg.norm(x, 2, axis=0)
        """))
    project = Project(ROOT)
    names = ("rows", "whole", "by_position")
    compile_many(project, [(source, n, tmp_path / n) for n in names])
    rng = np.random.default_rng(8)
    args = {"rows": rng.standard_normal((3, 5)).astype(np.float32), "whole": rng.standard_normal((4, 3, 2)),
            "by_position": rng.standard_normal((6, 2)).astype(np.float32)}
    python = {"rows": lambda x: np.linalg.norm(x, axis=-1, keepdims=True), "whole": np.linalg.norm,
              "by_position": lambda x: np.linalg.norm(x, None, 0)}
    for n in names:
        got, want = np.asarray(load_compiled(tmp_path / n)(args[n])), np.asarray(python[n](args[n]))
        assert got.shape == want.shape and got.dtype == want.dtype, n
        np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-14)
    with pytest.raises(CompileError) as info:
        compile_function(project, source, "with_ord", tmp_path / "with_ord")
    assert "numpy.linalg.norm's argument ord has no counterpart in the native kernel" in info.value.message
    assert "specs/numpy/linalg/norm.yaml" in info.value.message


# -- the kernels ------------------------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_kernels_are_the_reference_on_special_rows_in_every_layout(kernels, ov, target):
    dt = DTYPES[ov]
    for base in _blocks(dt):
        for x in _layouts(base):
            for axis in range(-x.ndim, x.ndim):
                for keep in (False, True):
                    want = reference(x, axis, keep)
                    got = _call(kernels, ov, target, x, axis, keep)
                    _close(got, want, TIGHT[ov], ATOL[ov])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_kernels_on_empty_axes_size_one_axes_and_out_of_range(kernels, ov, target):
    dt = DTYPES[ov]
    for shape, axis in (((3, 0), 1), ((0, 0), 0), ((2, 0, 3), -2), ((0,), 0)):
        x = np.empty(shape, dt)
        for keep in (False, True):
            got = _call(kernels, ov, target, x, axis, keep)
            want = np.asarray(np.linalg.norm(x, axis=axis, keepdims=keep))
            assert got.shape == want.shape and np.array_equal(got, want) and not np.signbit(got).any()
    x = np.empty((0, 4), dt)  # a zero-size tensor over an axis of nonzero length: an empty out
    assert _call(kernels, ov, target, x, 1, True).shape == (0, 1)
    x = np.array([[-3.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-8]], dt)  # size-1 axis: |x| exactly
    got = _call(kernels, ov, target, x, 0, False)
    assert np.array_equal(got, np.abs(x[0]), equal_nan=True) and not np.signbit(got[~np.isnan(got)]).any()
    o, k = kernels[(OP, ov, target)]
    for axis in (2, -3):
        with pytest.raises(ValueError):
            k([np.ones((2, 3), dt), axis, False], out=np.empty((2,), dt))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ov", OVERLOADS)
def test_kernels_on_long_offset_rows_and_columns(kernels, ov, target):
    """100k offset terms along a contiguous, a strided and a column axis, and a million along a flat
    tensor (the compiler's lowering of an omitted axis): within a few ulps of the long-double norm."""
    dt = DTYPES[ov]
    rng = np.random.default_rng(6)
    x = (rng.choice([-1.0, 1.0], size=(3, 1)) * rng.uniform(3e3, 5e3, size=(3, 1))
         + rng.standard_normal((3, 100_003))).astype(dt)
    rtol = 2 * TIGHT[ov] if ov == "f32" else 16 * TIGHT[ov]
    for xx, axis in ((x, -1), (np.ascontiguousarray(x.T), 0), (np.asfortranarray(x), 1), (x[:, ::-2], 1)):
        _close(_call(kernels, ov, target, xx, axis, False), reference(xx, axis, False), rtol)
    flat = (rng.standard_normal(1_000_003) + 2.0).astype(dt)
    _close(_call(kernels, ov, target, flat, 0, False), reference(flat, 0, False), rtol)
