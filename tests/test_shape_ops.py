"""The data-movement ops (numpy.transpose, numpy.reshape, numpy.expand_dims, numpy.squeeze,
torch.tril, torch.triu) and the shape rules they brought (permute, reshape, expand_dims,
squeeze in opgen/spec/shapes.py): the rules' output shapes and errors against NumPy's on every
small case, the parameters the verifier and the scale stage draw for them, the shims' errors,
and the admitted C++ and Rust kernels bit for bit against NumPy/torch in strided layouts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from opgen.project import PACKAGE_ROOT
from opgen.references import call_reference
from opgen.spec.model import load_all
from opgen.spec.shapes import ShapeRuleError, movement_shape, parse_shape_rule
from opgen.verify.scale import drawn_examples, scale_cases
from tests.layouts import bits, layouts
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
SPECS = load_all(ROOT / "specs")
OPS = ["numpy.transpose", "numpy.reshape", "numpy.expand_dims", "numpy.squeeze", "torch.tril", "torch.triu"]
OVERLOADS = ("f32", "f64", "i64")
TARGETS = ("cpu-cpp", "cpu-rust")
MOVEMENT_OPS = OPS[:4]


def _rule(raw, tensors=("a",), ints=("axis",), lists=("axes", "shape")):
    return parse_shape_rule(raw, list(tensors), list(ints), [], int_list_params=list(lists))


def _numpy(kind, x, p):
    """NumPy's result shape, or None where NumPy raises (ValueError; AxisError is one)."""
    fn = {"permute": np.transpose, "reshape": np.reshape, "expand_dims": np.expand_dims, "squeeze": np.squeeze}[kind]
    try:
        return fn(x, p).shape
    except ValueError:
        return None


SMALL_SHAPES = [(), (1,), (3,), (0,), (2, 3), (1, 1), (2, 1, 3), (0, 2), (2, 0, 1), (1, 2, 3, 1)]


@pytest.mark.parametrize("shape", SMALL_SHAPES)
def test_movement_shapes_and_errors_are_numpys(shape):
    x = np.zeros(shape)
    nd = len(shape)
    cases = {
        "permute": [list(p) for n in range(min(nd, 3) + 2) for p in itertools.product(range(-nd - 1, nd + 1), repeat=n)]
        + [list(p) for p in itertools.permutations(range(-2, nd - 2))],
        "reshape": [list(p) for n in range(4) for p in itertools.product([-2, -1, 0, 1, 2, 3, 6], repeat=n)],
        "expand_dims": list(range(-nd - 3, nd + 3)),
        "squeeze": list(range(-nd - 2, nd + 2)),
    }
    for kind, params in cases.items():
        key = {"permute": "axes", "reshape": "shape"}.get(kind, "axis")
        rule = _rule({kind: "a", key: key})
        for p in params:
            want = _numpy(kind, x, p)
            got, why = movement_shape(rule, shape, {"a": x, key: p})
            if want is None:
                assert why is not None and got == (0,), (kind, shape, p, got)
            else:
                assert why is None and got == want, (kind, shape, p, got, want, why)
                assert rule.output_shape({"a": x, key: p}, ["a"]) == want


def test_reshape_rule_guards_against_overflow():
    rule = _rule({"reshape": "a", "shape": "shape"})
    x = np.zeros((4,))
    for new in ([2**62, 2**62, 4], [2**40, 2**40, -1], [-1, 2**63 - 1, 2]):
        assert movement_shape(rule, (4,), {"a": x, "shape": new})[1] is not None
    assert movement_shape(rule, (0,), {"a": x, "shape": [2**62, 0, 2**62]}) == ((2**62, 0, 2**62), None)


def test_shape_rules_parse_and_refuse():
    assert _rule({"permute": "a", "axes": "axes"}).dims == "axes"
    assert _rule({"squeeze": "a", "axis": "axis"}).axis == "axis"
    for bad in ({"permute": "a", "axes": "axis"},  # an int, not a list[int]
                {"reshape": "a", "shape": "nope"}, {"expand_dims": "b", "axis": "axis"},
                {"squeeze": "a", "axis": "axes"}, {"permute": "a"}):
        with pytest.raises(ShapeRuleError):
            _rule(bad)
    for kind, key in (("permute", "axes"), ("reshape", "shape"), ("expand_dims", "axis"), ("squeeze", "axis")):
        assert kind in _rule({kind: "a", key: key}).describe()


@pytest.mark.parametrize("op", MOVEMENT_OPS)
def test_drawn_parameters_are_mostly_valid_and_sometimes_rejected(op):
    """The verifier's strategy: valid parameters for the drawn shape (the rule's shape is the
    reference's), and where ValueError is declared now and then one NumPy rejects."""
    spec = SPECS[op]
    o = spec.overload("f32")
    rule = o.rule
    valid = rejected = 0
    for args in drawn_examples(o, seed=3, n=40):
        shape, why = movement_shape(rule, args["a"].shape, args)
        try:
            ref = call_reference(spec.reference_for(o), [args[p.name] for p in o.sig.params])
        except ValueError:
            assert why is not None, args
            rejected += 1
            continue
        assert why is None and shape == ref.shape
        valid += 1
    assert valid >= 24 and rejected >= 1, (valid, rejected)  # Hypothesis dwells on the rejected draws it finds


@pytest.mark.parametrize("op", MOVEMENT_OPS)
def test_scale_cases_carry_valid_parameters(op):
    spec = SPECS[op]
    o = spec.overload("f32")
    n = 0
    for case in scale_cases(spec, o, seed=1):
        args = case.args
        assert movement_shape(o.rule, args["a"].shape, args)[1] is None, case.name
        ref = call_reference(spec.reference_for(o), [args[p.name] for p in o.sig.params])
        assert ref.shape == o.rule.output_shape(args, ["a"])
        n += 1
    assert n >= 5


# ---------------------------------------------------------------- the admitted kernels


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([(op, ov) for op in OPS for ov in OVERLOADS], TARGETS)


def _values(shape, dt, rng):
    if np.dtype(dt).kind == "i":
        edges = np.array([-(2**63), 2**63 - 1, -1, 0, 1], np.int64)
        return np.where(rng.random(shape) < 0.3, rng.choice(edges, size=shape),
                        rng.integers(-(2**40), 2**40, size=shape)).astype(dt)
    tiny = np.finfo(dt).smallest_subnormal
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, tiny], dt)
    v = rng.standard_normal(shape).astype(dt)
    return np.where(rng.random(shape) < 0.3, rng.choice(special, size=shape), v).astype(dt)


CASES = {
    "numpy.transpose": [((8, 16, 12, 32), [0, 2, 1, 3]), ((96, 70, 33), [0, 2, 1]), ((5, 7), [1, 0]), ((3, 4, 5, 6), [3, 2, 1, 0]),
                        ((2, 3, 4), [-1, 0, -2]), ((), []), ((0, 3), [1, 0]), ((1, 37, 1, 40), [2, 3, 0, 1])],
    "numpy.reshape": [((8, 16, 12, 32), [8, 16, 384]), ((8, 16, 384), [8, 16, 12, -1]), ((6,), [-2, 3]), ((1, 1), []),
                      ((1,), []), ((), [1, 1]), ((0, 4), [2, 0, 3]), ((0, 4), [4, -1]), ((7, 1, 9), [63])],
    "numpy.expand_dims": [((8, 16, 38), 1), ((3, 5), -1), ((3, 5), -3), ((), 0), ((0, 2), 2)],
    "numpy.squeeze": [((8, 1, 16, 38), 1), ((3, 1), -1), ((1,), 0), ((1, 0), 0), ((), 0), ((), -1)],
    "torch.tril": [((5, 7), 0), ((3, 40, 33), 2), ((2, 6, 6), -3), ((4, 4), 2**63 - 1), ((4, 4), -(2**63)), ((0, 3), 0)],
    "torch.triu": [((5, 7), 0), ((3, 40, 33), 2), ((2, 6, 6), -3), ((4, 4), 2**63 - 1), ((4, 4), -(2**63)), ((0, 3), 0)],
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", OPS)
def test_kernels_copy_bit_for_bit_in_every_layout(kernels, op, target):
    rng = np.random.default_rng(7)
    for ov in OVERLOADS:
        spec, o, kernel = kernels[(op, ov, target)]
        dt = o.sig.returns.dtype.np
        for shape, p in CASES[op]:
            x = _values(shape, dt, rng)
            for xl in layouts(x):
                ref = np.asarray(call_reference(spec.reference_for(o), [xl.copy(), p]))
                got = kernel([xl, p], out=np.empty(ref.shape, dt))
                assert got.shape == ref.shape and np.array_equal(bits(got), bits(ref)), (op, ov, shape, p)


ERRORS = {
    "numpy.transpose": [((2, 3), [0]), ((2, 3), [0, 2]), ((2, 3), [1, 1]), ((2, 3), [0, -3]), ((), [0])],
    "numpy.reshape": [((2, 3), [4, -1]), ((2, 3), [-1, -1]), ((0, 3), [-1, 0]), ((2, 3), [7]), ((2, 3), [2**62, 2**62, 4])],
    "numpy.expand_dims": [((2, 3), 3), ((2, 3), -4), ((), 1)],
    "numpy.squeeze": [((2, 3), 0), ((2, 1), 2), ((2, 1), -3), ((), 1)],
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", MOVEMENT_OPS)
def test_shims_raise_numpys_errors_as_value_error(kernels, op, target):
    spec, o, kernel = kernels[(op, "f64", target)]
    for shape, p in ERRORS[op]:
        x = np.zeros(shape)
        with pytest.raises(ValueError):
            call_reference(spec.reference_for(o), [x, p])
        with pytest.raises(ValueError):
            kernel([x, p], out=np.empty((0,)))


@pytest.mark.parametrize("target", TARGETS)
def test_tri_kernels_refuse_a_vector(kernels, target):
    for op in ("torch.tril", "torch.triu"):
        _, _, kernel = kernels[(op, "f32", target)]
        with pytest.raises(ValueError):
            kernel([np.zeros(3, np.float32), 0], out=np.empty(3, np.float32))


def test_the_compiler_allocates_outputs_from_the_movement_rules(tmp_path):
    """opgen compile: the emitter's shape_permute / shape_reshape / shape_expand_dims /
    shape_squeeze allocate out exactly (the shim checks it), and an invalid reshape raises the
    shim's ValueError through the compiled library."""
    from opgen.compiler import compile_many
    from opgen.host import load_compiled
    from opgen.project import Project

    src = tmp_path / "heads.py"
    src.write_text(
        "import numpy as np\nimport numpy.typing as npt\n\n\n"
        "def heads(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n"
        "    h = np.transpose(np.reshape(x, [2, 5, 3, -1]), [0, 2, 1, 3])\n"
        "    return np.squeeze(np.expand_dims(h, 1), 1)\n")
    compile_many(Project(ROOT), [(src, "heads", tmp_path / "out")])
    fn = load_compiled(tmp_path / "out")
    x = np.random.default_rng(0).standard_normal((10, 12)).astype(np.float32)[:, ::2]
    got = fn(x)
    assert np.array_equal(got, np.transpose(np.reshape(x, [2, 5, 3, -1]), [0, 2, 1, 3]))
    with pytest.raises(ValueError):
        fn(np.zeros(7, np.float32))
