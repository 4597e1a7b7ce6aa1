"""The pooling ops with torch's options (max_pool1d/3d and max_pool2d's f32_options: dilation,
ceil_mode; avg_pool1d/3d and avg_pool2d's f32_options: ceil_mode, count_include_pad) where the gate
cannot look: the ``pool`` shape rule
against torch's own output sizes and errors over every small (L, k, s, p, d, ceil) (the ceil
overhang rule, dilated windows wholly in the padding, invalid arguments), the compiled runtime's
shape_pool against the rule, and the admitted C++ and Rust kernels against torch on the edges the
gate draws rarely: ceil-mode windows hanging past the padding, dilation, count_include_pad, nan in
windows, strided and transposed inputs, empty leading dims, the shims' errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import yaml
from pydantic import ValidationError

from opgen.project import PACKAGE_ROOT
from opgen.spec.model import Spec
from opgen.spec.shapes import parse_shape_rule, pool_error, pool_shape
from tests.registry_kernels import verified_kernels

OPS = [("torch.nn.functional.max_pool1d", "f32"), ("torch.nn.functional.max_pool3d", "f32"),
       ("torch.nn.functional.avg_pool1d", "f32"), ("torch.nn.functional.avg_pool3d", "f32"),
       ("torch.nn.functional.max_pool2d", "f32_options"), ("torch.nn.functional.avg_pool2d", "f32_options")]
TARGETS = ("cpu-cpp", "cpu-rust")


def _torch_shape(fn, x, **kw):
    try:
        return tuple(fn(x, **kw).shape)
    except RuntimeError:
        return None


def test_rule_matches_torch_1d():
    """Every (L, k, s, p, d, ceil) up to small sizes: the rule's shape where torch accepts, an error
    exactly where torch raises, for max_pool1d (dilation) and avg_pool1d (count_include_pad either way)."""
    checked = 0
    for L, k, s, p, d, ceil in itertools.product(range(1, 9), range(1, 6), range(1, 5), range(0, 4), range(1, 4),
                                                 (False, True)):
        x = torch.zeros(2, 1, L, dtype=torch.float64)
        why = pool_error((2, 1, L), [k], [s], [p], [d], ceil)
        ref = _torch_shape(F.max_pool1d, x, kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=ceil)
        assert (why is None) == (ref is not None), (L, k, s, p, d, ceil, why, ref)
        if ref is not None:
            assert pool_shape((2, 1, L), [k], [s], [p], [d], ceil) == ref
        else:
            assert pool_shape((2, 1, L), [k], [s], [p], [d], ceil) == (2, 1, 0)
        if d == 1:
            for cip in (False, True):
                ref = _torch_shape(F.avg_pool1d, x, kernel_size=k, stride=s, padding=p, ceil_mode=ceil,
                                   count_include_pad=cip)
                assert (why is None) == (ref is not None), (L, k, s, p, ceil, cip)
                if ref is not None:
                    assert pool_shape((2, 1, L), [k], [s], [p], None, ceil) == ref
        checked += 1
    assert checked > 3000


# rank, draws, the largest pooled size, and the (low, high) of kernel, stride, padding, dilation
RANKS = [(3, 400, 7, ((1, 4), (1, 4), (0, 2), (1, 3))), (2, 600, 9, ((1, 5), (1, 4), (0, 3), (1, 4)))]


@pytest.mark.parametrize("nd,draws,size,ranges", RANKS, ids=["3d", "2d"])
def test_rule_matches_torch_nd(nd, draws, size, ranges):
    """Drawn per-dim 2-D and 3-D arguments, valid and not: max_pool2d/3d with dilation, and
    avg_pool2d/3d with count_include_pad either way (avg_pool3d's extra check that the unpadded
    input is at least the kernel, which avg_pool2d does not make)."""
    max_pool, avg_pool = getattr(F, f"max_pool{nd}d"), getattr(F, f"avg_pool{nd}d")
    check = nd == 3
    rng = np.random.default_rng(nd - 2)
    rejected = 0
    for _ in range(draws):
        shape = (1, 1) + tuple(int(v) for v in rng.integers(1, size, nd))
        k, s, p, d = ([int(v) for v in rng.integers(lo, hi, nd)] for lo, hi in ranges)
        ceil = bool(rng.integers(0, 2))
        x = torch.zeros(shape, dtype=torch.float64)
        ref = _torch_shape(max_pool, x, kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=ceil)
        assert (pool_error(shape, k, s, p, d, ceil) is None) == (ref is not None), (shape, k, s, p, d, ceil)
        assert ref is None or pool_shape(shape, k, s, p, d, ceil) == ref
        why = pool_error(shape, k, s, p, None, ceil, check_input_size=check)
        for cip in (False, True):
            ref = _torch_shape(avg_pool, x, kernel_size=k, stride=s, padding=p, ceil_mode=ceil, count_include_pad=cip)
            assert (why is None) == (ref is not None), (shape, k, s, p, ceil, why)
            assert ref is None or pool_shape(shape, k, s, p, None, ceil, check) == ref
        rejected += ref is None
    assert draws // 20 < rejected < draws * 19 // 20


def test_rule_parses_and_describes():
    rule = parse_shape_rule({"pool": "x", "kernel": ["k"], "stride": ["s"], "padding": ["p"], "dilation": ["d"],
                             "ceil_mode": "c"}, ["x"], ["k", "s", "p", "d"], ["c"])
    assert rule.kind == "pool" and rule.pool_ndim == 1 and rule.dilation == ("d",) and rule.ceil_mode == "c"
    args = {"x": np.zeros((3, 10)), "k": 3, "s": 2, "p": 1, "d": 1, "c": True}
    assert rule.output_shape(args, ["x"]) == (3, 6)  # ceil: a last window hanging past the right padding
    assert rule.output_shape({**args, "c": False}, ["x"]) == (3, 5)
    # L=5: ceil would give 4, but the 4th window starts at 6 - 1 = 5 >= L (in the right padding): dropped
    assert rule.output_shape({**args, "x": np.zeros((3, 5))}, ["x"]) == (3, 3)
    assert "ceil" in rule.describe()
    with pytest.raises(ValueError, match="give 1 int parameters"):
        parse_shape_rule({"pool": "x", "kernel": ["k"], "stride": ["s", "s"], "padding": ["p"]}, ["x"], ["k", "s", "p"])
    with pytest.raises(ValueError, match="not a bool parameter"):
        parse_shape_rule({"pool": "x", "kernel": ["k"], "stride": ["s"], "padding": ["p"], "ceil_mode": "k"},
                         ["x"], ["k", "s", "p"], [])
    # the 2-D rule is untouched
    old = parse_shape_rule({"pool2d": "x", "kernel": ["a", "b"], "stride": ["a", "b"], "padding": ["a", "b"]},
                           ["x"], ["a", "b"])
    assert old.kind == "pool2d" and old.dilation == () and old.ceil_mode is None


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels(OPS, TARGETS)


def _torch(op: str, x: np.ndarray, *args):
    """torch's own function in float64 on (N*C, 1, ...) planes, the native arguments unpacked."""
    n = int(op[-2])  # max_pool1d .. avg_pool3d
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64)).reshape((-1, 1) + x.shape[x.ndim - n:])
    a = list(args)
    k, s, p = a[:n], a[n:2 * n], a[2 * n:3 * n]
    if op.startswith("torch.nn.functional.max"):
        d, ceil = a[3 * n:4 * n], a[4 * n]
        r = getattr(F, op.rsplit(".", 1)[1])(t, k, s, p, d, ceil_mode=ceil)
    else:
        ceil, cip = a[3 * n], a[3 * n + 1]
        r = getattr(F, op.rsplit(".", 1)[1])(t, k, s, p, ceil_mode=ceil, count_include_pad=cip)
    return r.reshape(x.shape[:x.ndim - n] + tuple(r.shape[-n:])).numpy()


def _layouts(x: np.ndarray):
    yield x
    yield np.ascontiguousarray(x[..., ::-1])[..., ::-1]  # reversed strides
    buf = np.zeros((2,) + x.shape, x.dtype)
    buf[1] = x
    yield buf[1].swapaxes(0, -1).copy().swapaxes(0, -1)  # transposed storage
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    yield wide[..., ::2]  # an inner stride of 2


def _check(kernels, target, op, x, args, overload="f32"):
    spec, o, kernel = kernels[(op, overload, target)]
    ref = _torch(op, x, *args).astype(np.float32)
    for xv in _layouts(x):
        got = kernel([xv, *args], out=np.empty(ref.shape, np.float32))
        if op.startswith("torch.nn.functional.max"):
            np.testing.assert_array_equal(got, ref, err_msg=f"{op} {target} {x.shape} {args}")
        else:
            np.testing.assert_allclose(got, ref, rtol=2e-6, atol=1e-6, err_msg=f"{op} {target} {x.shape} {args}")


# (L, kernel, stride, padding, dilation, ceil_mode): ceil overhang, dilated windows wholly in the
# padding (-inf), the last window dropped by the overhang rule, stride past the kernel
CASES_1D = [(5, 3, 2, 1, 1, True), (6, 4, 3, 0, 1, True), (10, 3, 3, 1, 1, True), (2, 2, 1, 1, 3, False),
            (7, 2, 2, 1, 3, True), (9, 3, 4, 1, 2, True), (1, 1, 1, 0, 1, True), (4, 5, 1, 2, 1, False),
            (13, 2, 5, 1, 1, True), (8, 3, 2, 0, 2, True)]


@pytest.mark.parametrize("target", TARGETS)
def test_1d_kernels_on_torchs_edges(kernels, target):
    rng = np.random.default_rng(2)
    for L, k, s, p, d, ceil in CASES_1D:
        x = rng.standard_normal((2, 3, L)).astype(np.float32)
        x[0, 1, rng.integers(0, L)] = np.nan
        x[1, 0, rng.integers(0, L)] = np.inf
        _check(kernels, target, "torch.nn.functional.max_pool1d", x, (k, s, p, d, ceil))
        if d == 1:
            y = np.where(np.isnan(x) | np.isinf(x), 1.5, x).astype(np.float32)
            for cip in (True, False):
                _check(kernels, target, "torch.nn.functional.avg_pool1d", y, (k, s, p, ceil, cip))
                _check(kernels, target, "torch.nn.functional.avg_pool1d", x, (k, s, p, ceil, cip))


CASES_3D = [((3, 5, 7), (3, 2, 3), (2, 2, 2), (1, 1, 1), (1, 2, 1), True),
            ((4, 6, 5), (2, 3, 2), (2, 1, 3), (1, 1, 1), (2, 1, 2), True),
            ((2, 4, 9), (2, 2, 2), (1, 3, 2), (1, 0, 1), (1, 1, 3), False),
            ((5, 5, 5), (3, 3, 3), (2, 2, 2), (0, 1, 0), (1, 1, 1), True),
            ((1, 3, 3), (1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), True)]


@pytest.mark.parametrize("target", TARGETS)
def test_3d_kernels_on_torchs_edges(kernels, target):
    rng = np.random.default_rng(3)
    for shape, k, s, p, d, ceil in CASES_3D:
        x = rng.standard_normal((2, 2) + shape).astype(np.float32)
        x.reshape(-1)[rng.integers(0, x.size, 2)] = np.nan
        _check(kernels, target, "torch.nn.functional.max_pool3d", x, (*k, *s, *p, *d, ceil))
        if all(L >= kk for L, kk in zip(shape, k)):
            for cip in (True, False):
                _check(kernels, target, "torch.nn.functional.avg_pool3d", x, (*k, *s, *p, ceil, cip))
                y = np.nan_to_num(x, nan=0.25).astype(np.float32)
                _check(kernels, target, "torch.nn.functional.avg_pool3d", y, (*k, *s, *p, ceil, cip))


# ((H, W), kernel, stride, padding, dilation, ceil_mode): ceil overhang in one dim or both, dilated
# windows wholly in the padding (-inf), the overhang rule, stride past the kernel, one row / column
CASES_2D = [((5, 7), (3, 2), (2, 2), (1, 1), (1, 1), True), ((6, 5), (4, 3), (3, 2), (0, 1), (1, 2), True),
            ((2, 9), (2, 2), (1, 3), (1, 1), (3, 1), False), ((7, 7), (2, 3), (2, 4), (1, 1), (3, 2), True),
            ((1, 6), (1, 3), (1, 2), (0, 1), (1, 1), True), ((8, 1), (3, 1), (2, 1), (1, 0), (2, 1), True),
            ((9, 8), (3, 3), (2, 2), (1, 1), (1, 1), False), ((4, 4), (4, 4), (1, 1), (2, 2), (1, 1), True)]


@pytest.mark.parametrize("target", TARGETS)
def test_2d_options_kernels_on_torchs_edges(kernels, target):
    rng = np.random.default_rng(6)
    for shape, k, s, p, d, ceil in CASES_2D:
        x = rng.standard_normal((2, 3) + shape).astype(np.float32)
        x.reshape(-1)[rng.integers(0, x.size, 2)] = np.nan
        x.reshape(-1)[rng.integers(0, x.size)] = -np.inf
        _check(kernels, target, "torch.nn.functional.max_pool2d", x, (*k, *s, *p, *d, ceil), "f32_options")
        for cip in (True, False):
            _check(kernels, target, "torch.nn.functional.avg_pool2d", x, (*k, *s, *p, ceil, cip), "f32_options")
            y = np.nan_to_num(x, nan=0.25, neginf=-3.0).astype(np.float32)
            _check(kernels, target, "torch.nn.functional.avg_pool2d", y, (*k, *s, *p, ceil, cip), "f32_options")
    _, _, mp2 = kernels[("torch.nn.functional.max_pool2d", "f32_options", target)]
    empty = mp2([np.zeros((3, 0, 5, 6), np.float32), 2, 2, 2, 2, 1, 1, 1, 1, True], out=np.empty((3, 0, 3, 4), np.float32))
    assert empty.shape == (3, 0, 3, 4)
    with pytest.raises(ValueError, match="dilation"):
        mp2([np.zeros((1, 5, 5), np.float32), 2, 2, 1, 1, 0, 0, 0, 1, False], out=np.empty((1, 0, 0), np.float32))


@pytest.mark.parametrize("target", TARGETS)
def test_max_pool_nan_wins_and_inf_is_ordinary(kernels, target):
    _, _, kernel = kernels[("torch.nn.functional.max_pool1d", "f32", target)]
    x = np.array([[1.0, np.nan, 3.0, -np.inf, np.inf, 2.0, -np.inf, -np.inf]], np.float32)
    got = kernel([x, 2, 1, 0, 1, False], out=np.empty((1, 7), np.float32))
    ref = F.max_pool1d(torch.from_numpy(x)[None], 2, 1, 0)[0].numpy()
    np.testing.assert_array_equal(got, ref)
    assert np.isnan(got[0, :2]).all() and got[0, 3] == np.inf and got[0, 6] == -np.inf


@pytest.mark.parametrize("target", TARGETS)
def test_empty_planes_and_shim_errors(kernels, target):
    _, _, mp1 = kernels[("torch.nn.functional.max_pool1d", "f32", target)]
    _, _, ap3 = kernels[("torch.nn.functional.avg_pool3d", "f32", target)]
    got = mp1([np.zeros((0, 4, 9), np.float32), 3, 2, 1, 1, True], out=np.empty((0, 4, 5), np.float32))
    assert got.shape == (0, 4, 5)
    x = np.zeros((2, 7), np.float32)
    for args, words in (((3, 1, 2, 1, False), "half of the kernel"), ((0, 1, 0, 1, False), "kernel size"),
                        ((2, 0, 0, 1, False), "stride"), ((2, 1, -1, 1, False), "negative"),
                        ((2, 1, 0, 0, False), "dilation"), ((3, 1, 0, 4, False), "output size is too small")):
        with pytest.raises(ValueError, match=words):
            mp1([x, *args], out=np.empty((2, 0), np.float32))
    v = np.zeros((1, 2, 3, 3), np.float32)  # padded it fits (3x3x3, padding 1), unpadded D=2 < 3: torch rejects
    with pytest.raises(ValueError, match="smaller than the kernel"):
        ap3([v, 3, 3, 3, 1, 1, 1, 1, 1, 1, False, True], out=np.empty((1, 0, 0, 0), np.float32))


def test_the_compiler_allocates_the_pooled_result(tmp_path):
    """The compiled runtime's shape_pool (opgen_compiled.hpp) sizes out as the rule does: ceil mode
    with the overhang rule, a dilation, and ValueError for arguments torch rejects."""
    from opgen.compiler import compile_many
    from opgen.host import load_compiled
    from opgen.project import PACKAGE_ROOT, Project

    src = tmp_path / "pooled.py"
    src.write_text(
        "import numpy as np\nimport numpy.typing as npt\nimport torch\n\n\n"
        "def pooled(x: npt.NDArray[np.float32], k: int, d: int) -> npt.NDArray[np.float32]:\n"
        "    return torch.nn.functional.max_pool1d(x, k, 2, 1, d, True)\n")
    compile_many(Project(PACKAGE_ROOT), [(src, "pooled", tmp_path / "out")])
    fn = load_compiled(tmp_path / "out")
    x = np.random.default_rng(4).standard_normal((3, 2, 10)).astype(np.float32)
    for k, d in ((3, 1), (2, 3), (3, 2)):
        ref = F.max_pool1d(torch.from_numpy(x), k, 2, 1, d, ceil_mode=True).numpy()
        np.testing.assert_array_equal(fn(x, k, d), ref)
    with pytest.raises(ValueError):
        fn(x, 1, 1)  # padding 1 over half a kernel of 1


@pytest.mark.parametrize("call,overload", [
    ("F.max_pool2d(x, 2)", "f32"), ("F.max_pool2d(x, (2, 3), stride=1, padding=(1, 0))", "f32"),
    ("F.max_pool2d(x, 2, ceil_mode=True)", "f32_options"), ("F.max_pool2d(x, 3, 1, 1, 2)", "f32_options"),
    ("F.max_pool2d(x, (2, 3), dilation=(1, 2))", "f32_options"), ("F.max_pool2d(x, 2, dilation=1)", "f32_options"),
    ("F.avg_pool2d(x, 2)", "f32"), ("F.avg_pool2d(x, 3, 2, 1, True, False)", "f32_options"),
    ("F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)", "f32_options")])
def test_a_2d_call_passing_an_option_compiles_to_the_options_overload(tmp_path, call, overload):
    """A call that passes dilation, ceil_mode or count_include_pad binds to f32_options; one that
    omits them all to the plain f32 (the compiler leaves an omitted dilation to the defaults), and
    either gives torch's result."""
    from opgen.compiler import compile_function
    from opgen.host import load_compiled
    from opgen.project import Project

    src = tmp_path / "pooled.py"
    src.write_text("import torch\nfrom torch.nn import functional as F\nfrom typing import Annotated\n\n"
                   "T32 = Annotated[torch.Tensor, torch.float32]\n\n\n"
                   f"def pooled(x: T32) -> T32:\n    return {call}\n")
    compiled = compile_function(Project(PACKAGE_ROOT), src, "pooled", tmp_path / "out")
    assert [(k["op"].rsplit(".", 1)[1], k["overload"]) for k in compiled.manifest["kernels"]] == \
        [(call[2:12], overload)]
    x = torch.from_numpy(np.random.default_rng(8).standard_normal((2, 3, 9, 10)).astype(np.float32))
    ref = eval(call, {"F": F, "x": x})
    np.testing.assert_allclose(np.asarray(load_compiled(tmp_path / "out")(x)), ref.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op,overload", OPS)
def test_drawn_and_scale_parameters(op, overload):
    """The verifier's draws: valid parameters for the drawn shape in most examples, a rejected one
    now and then (the declared ValueError); the scale stage's cases all valid, derived ones too."""
    from opgen.spec.model import load_spec
    from opgen.project import PACKAGE_ROOT
    from opgen.verify.scale import EMULATED_BUDGET, drawn_examples, scale_cases

    spec = load_spec(PACKAGE_ROOT / "specs" / (op.replace(".", "/") + ".yaml"))
    o = spec.overload(overload)
    rule = o.rule
    drawn = drawn_examples(o, 5, 64)
    bad = sum(pool_error(a["input"].shape, *rule.pool_args(a), rule.check_input_size) is not None for a in drawn)
    assert 0 < bad < len(drawn) // 3, bad
    cases = list(scale_cases(spec, o, 1, EMULATED_BUDGET))  # (the smaller budget: the same rules, quicker)
    assert any(c.origin == "derived" for c in cases)
    for c in cases:
        assert pool_error(c.args["input"].shape, *rule.pool_args(c.args), rule.check_input_size) is None, c.name


def test_a_spread_is_all_or_none_of_an_overloads_parameters():
    """python_params: an overload takes every parameter a spread names or none of them (max_pool2d's
    f32 has no dilation_h, dilation_w), and some overload takes them."""
    data = yaml.safe_load((PACKAGE_ROOT / "specs/torch/nn/functional/max_pool2d.yaml").read_text())
    Spec.model_validate(data)
    partly = {**data, "python_params": {**data["python_params"], "dilation": {"spread": ["dilation_h", "pad_w"]}}}
    with pytest.raises(ValidationError, match="'dilation_h', which is not a parameter of overload f32"):
        Spec.model_validate(partly)
    nobody = {**data, "overloads": data["overloads"][:1]}
    with pytest.raises(ValidationError, match="'dilation_h', which is not a parameter of overload f32"):
        Spec.model_validate(nobody)
