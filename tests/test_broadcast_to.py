"""numpy.broadcast_to and its shape rule (broadcast_to in opgen/spec/shapes.py): the rule's shapes
and errors against NumPy's on every small case, the targets the verifier and the scale stage draw,
the shims' errors, the admitted C++ and Rust kernels bit for bit against NumPy in strided layouts
(the shim hands them a view with stride 0 along the broadcast dims), and the compiler's allocation."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from opgen.project import PACKAGE_ROOT
from opgen.references import call_reference
from opgen.spec.model import load_all
from opgen.spec.shapes import movement_shape, parse_shape_rule
from opgen.verify.scale import drawn_examples, scale_cases
from tests.layouts import bits, layouts
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
SPEC = load_all(ROOT / "specs")["numpy.broadcast_to"]
OVERLOADS = ("f32", "f64", "i64", "bool")
TARGETS = ("cpu-cpp", "cpu-rust")
RULE = parse_shape_rule({"broadcast_to": "array", "shape": "shape"}, ["array"], [], [], int_list_params=["shape"])


def _numpy(x, shape):
    try:
        return np.broadcast_to(x, shape).shape
    except ValueError:
        return None


@pytest.mark.parametrize("shape", [(), (1,), (3,), (0,), (2, 1), (1, 1), (1, 3), (0, 1), (2, 1, 3)])
def test_rule_shapes_and_errors_are_numpys(shape):
    x = np.zeros(shape)
    for n in range(4):
        for target in itertools.product([-1, 0, 1, 2, 3], repeat=n):
            want = _numpy(x, target)
            got, why = movement_shape(RULE, shape, {"array": x, "shape": list(target)})
            if want is None:
                assert why is not None and got == (0,), (shape, target, got)
                with pytest.raises(ValueError, match=re.escape(why)):
                    np.broadcast_to(x, target)  # the same words as NumPy's
            else:
                assert why is None and got == want, (shape, target, got, want)


def test_the_rule_parses_describes_and_is_data_movement():
    from opgen.spec.model import zero_sign_defined
    assert RULE.kind == "broadcast_to" and RULE.dims == "shape" and "stride 0" in RULE.describe()
    assert all(zero_sign_defined(o) for o in SPEC.overloads)


def test_drawn_targets_broadcast_and_are_sometimes_rejected():
    o = SPEC.overload("f32")
    valid = rejected = grown = 0
    for args in drawn_examples(o, seed=5, n=120):  # the invalid draws (1 in 8) come after the first 60 of this seed
        shape, why = movement_shape(o.rule, args["array"].shape, args)
        try:
            ref = call_reference(SPEC.reference_for(o), [args["array"], args["shape"]])
        except ValueError:
            assert why is not None, args
            rejected += 1
            continue
        assert why is None and shape == ref.shape
        valid += 1
        grown += ref.size > args["array"].size
    assert valid >= 70 and rejected >= 1 and grown >= 20, (valid, rejected, grown)


def test_scale_cases_broadcast_valid_targets():
    o = SPEC.overload("f32")
    n = broadcast = 0
    for case in scale_cases(SPEC, o, seed=1):
        args = case.args
        assert movement_shape(o.rule, args["array"].shape, args)[1] is None, case.name
        ref = call_reference(SPEC.reference_for(o), [args["array"], args["shape"]])
        broadcast += ref.size > args["array"].size
        n += 1
    assert n >= 5 and broadcast >= n // 2


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([("numpy.broadcast_to", ov) for ov in OVERLOADS], TARGETS)


def _values(shape, dt, rng):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "i":
        return rng.integers(-(2**62), 2**62, size=shape, dtype=np.int64)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dt).smallest_subnormal], dt)
    v = rng.standard_normal(shape).astype(dt)
    return np.where(rng.random(shape) < 0.3, rng.choice(special, size=shape), v).astype(dt)


CASES = [((384,), [8, 16, 384]), ((8, 1, 1, 128), [8, 12, 16, 128]), ((5, 1), [5, 300]), ((1, 7), [3, 7]),
         ((), [4, 2]), ((), []), ((3,), [3]), ((2, 1, 3), [4, 2, 5, 3]), ((1,), [0]), ((2, 1), [2, 0]),
         ((0, 1), [3, 0, 4]), ((1, 1), [70, 70])]
ERRORS = [((3,), [2, 2]), ((3, 1), [3]), ((3,), [-1, 3]), ((2, 3), [2, -3]), ((2,), [])]


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_copy_bit_for_bit_in_every_layout(kernels, target):
    rng = np.random.default_rng(11)
    for ov in OVERLOADS:
        spec, o, kernel = kernels[("numpy.broadcast_to", ov, target)]
        dt = o.sig.returns.dtype.np
        for shape, target_shape in CASES:
            x = _values(shape, dt, rng)
            for xl in layouts(x):
                ref = np.asarray(call_reference(spec.reference_for(o), [xl.copy(), target_shape]))
                got = kernel([xl, target_shape], out=np.empty(ref.shape, dt))
                assert got.shape == ref.shape and np.array_equal(bits(got), bits(ref)), (ov, shape, target_shape)


@pytest.mark.parametrize("target", TARGETS)
def test_shims_raise_numpys_errors_as_value_error(kernels, target):
    _, o, kernel = kernels[("numpy.broadcast_to", "f64", target)]
    for shape, target_shape in ERRORS:
        x = np.zeros(shape)
        with pytest.raises(ValueError):
            np.broadcast_to(x, target_shape)
        with pytest.raises(ValueError):
            kernel([x, target_shape], out=np.empty((0,)))


def test_the_compiler_allocates_the_broadcast_result(tmp_path):
    from opgen.compiler import compile_many
    from opgen.host import load_compiled
    from opgen.project import Project

    src = tmp_path / "bias.py"
    src.write_text(
        "import numpy as np\nimport numpy.typing as npt\n\n\n"
        "def tiled(b: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n"
        "    return np.negative(np.broadcast_to(b, [4, 3, 5]))\n")
    compile_many(Project(ROOT), [(src, "tiled", tmp_path / "out")])
    fn = load_compiled(tmp_path / "out")
    b = np.arange(10, dtype=np.float32)[::2]
    assert np.array_equal(fn(b), -np.broadcast_to(b, (4, 3, 5)))
    with pytest.raises(ValueError):
        fn(np.zeros(4, np.float32))
