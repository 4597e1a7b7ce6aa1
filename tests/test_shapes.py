"""Shape rules: parsing and the output shape the caller allocates, checked against NumPy."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp

from opgen.spec.shapes import ShapeRuleError, normalize_axis, parse_shape_rule

MATMUL = "(m,k),(k,n)->(m,n)"


def arrays(**shapes: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {name: np.empty(shape) for name, shape in shapes.items()}


def test_parse_gufunc():
    rule = parse_shape_rule(MATMUL, ["a", "b"], [])
    assert rule.kind == "gufunc"
    assert rule.inputs_core == (("m", "k"), ("k", "n"))
    assert rule.output_core == ("m", "n")
    assert rule.describe() == "gufunc (m,k),(k,n)->(m,n) (loop dims broadcast, NumPy rules)"


def test_gufunc_matmul_broadcasts_batch_dims():
    rule = parse_shape_rule(MATMUL, ["a", "b"], [])
    assert rule.output_shape(arrays(a=(2, 1, 3, 4), b=(5, 4, 6)), ["a", "b"]) == (2, 5, 3, 6)
    assert rule.output_shape(arrays(a=(3, 4), b=(4, 6)), ["a", "b"]) == (3, 6)
    assert rule.output_shape(arrays(a=(3, 0), b=(0, 6)), ["a", "b"]) == (3, 6)
    assert rule.output_shape(arrays(a=(0, 3, 4), b=(1, 4, 2)), ["a", "b"]) == (0, 3, 2)


def test_gufunc_core_dims_must_agree():
    rule = parse_shape_rule(MATMUL, ["a", "b"], [])
    with pytest.raises(ValueError, match="core dim k is 4 in one input and 5 in another"):
        rule.output_shape(arrays(a=(3, 4), b=(5, 6)), ["a", "b"])


def test_gufunc_input_needs_its_core_dims():
    rule = parse_shape_rule(MATMUL, ["a", "b"], [])
    with pytest.raises(ValueError, match=r"input of shape \(4,\) has fewer dims than core \('m', 'k'\)"):
        rule.output_shape(arrays(a=(4,), b=(4, 6)), ["a", "b"])


def test_gufunc_loop_dims_must_broadcast():
    rule = parse_shape_rule(MATMUL, ["a", "b"], [])
    with pytest.raises(ValueError, match="shape mismatch"):
        rule.output_shape(arrays(a=(2, 3, 4), b=(3, 4, 6)), ["a", "b"])


def test_elementwise_broadcasts_like_numpy():
    rule = parse_shape_rule("elementwise", ["a", "b"], [])
    assert rule.output_shape(arrays(a=(3, 1), b=(4,)), ["a", "b"]) == (3, 4)
    assert rule.output_shape(arrays(a=(), b=(2, 0)), ["a", "b"]) == (2, 0)
    with pytest.raises(ValueError):
        rule.output_shape(arrays(a=(3,), b=(4,)), ["a", "b"])


def test_reduce_with_negative_axis():
    rule = parse_shape_rule({"reduce": "a", "axis": "axis"}, ["a"], ["axis"])
    a = np.empty((2, 3, 4))
    assert rule.output_shape({"a": a, "axis": -1}, ["a"]) == (2, 3)
    assert rule.output_shape({"a": a, "axis": -3}, ["a"]) == (3, 4)
    assert rule.output_shape({"a": a, "axis": 1}, ["a"]) == (2, 4)
    for axis in range(-3, 3):
        assert rule.output_shape({"a": a, "axis": axis}, ["a"]) == np.sum(a, axis=axis).shape


def test_reduce_axis_out_of_bounds():
    rule = parse_shape_rule({"reduce": "a", "axis": "axis"}, ["a"], ["axis"])
    with pytest.raises(ValueError, match="axis -4 is out of bounds for 3 dims"):
        rule.output_shape({"a": np.empty((2, 3, 4)), "axis": -4}, ["a"])


def test_same_as():
    rule = parse_shape_rule({"same_as": "x"}, ["x"], ["dim"])
    assert rule.output_shape({"x": np.empty((5, 0, 2)), "dim": 1}, ["x"]) == (5, 0, 2)
    assert rule.output_shape({"x": np.empty(())}, ["x"]) == ()
    assert rule.describe() == "same shape as x"


def test_normalize_axis():
    assert [normalize_axis(a, 3) for a in (-3, -1, 0, 2)] == [0, 2, 0, 2]
    with pytest.raises(ValueError, match="axis 3 is out of bounds for 3 dims"):
        normalize_axis(3, 3)


@pytest.mark.parametrize(
    ("raw", "tensors", "ints", "message"),
    [
        ("(m,k),(k,n)->(m,n)", ["a"], [], "names 2 inputs but the signature has 1 tensor parameters"),
        ("(m,3)->(m)", ["a"], [], "core dimension '3' must be a name (fixed sizes are not supported)"),
        ("(m)->(q)", ["a"], [], "output dims ['q'] of '(m)->(q)' appear in no input"),
        ("m,k -> m", ["a"], [], "is neither 'elementwise' nor a gufunc signature"),
        ({"same_as": "n"}, ["a"], ["n"], "same_as: 'n' is not a tensor parameter of the signature (have: ['a'])"),
        ({"reduce": "a", "axis": "b"}, ["a", "b"], [], "axis: 'b' is not a int parameter of the signature (have: [])"),
        ({"reduce": "a"}, ["a"], ["axis"], "shape must be 'elementwise', a gufunc string"),
        (3, ["a"], [], "shape must be 'elementwise', a gufunc string"),
    ],
)
def test_parse_errors(raw, tensors, ints, message):
    with pytest.raises(ShapeRuleError) as info:
        parse_shape_rule(raw, tensors, ints)
    assert message in str(info.value)


@settings(max_examples=200, deadline=None)
@given(hnp.mutually_broadcastable_shapes(signature=MATMUL, max_dims=3, max_side=4))
def test_gufunc_output_shape_matches_numpy_matmul(shapes):
    a_shape, b_shape = shapes.input_shapes
    rule = parse_shape_rule(MATMUL, ["a", "b"], [])
    got = rule.output_shape(arrays(a=a_shape, b=b_shape), ["a", "b"])
    assert got == np.matmul(np.zeros(a_shape), np.zeros(b_shape)).shape
    assert got == shapes.result_shape


@settings(max_examples=100, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=3))
def test_elementwise_output_shape_matches_numpy(shapes):
    rule = parse_shape_rule("elementwise", ["a", "b", "c"], [])
    a, b, c = shapes.input_shapes
    assert rule.output_shape(arrays(a=a, b=b, c=c), ["a", "b", "c"]) == np.broadcast_shapes(a, b, c)


# --------------------------------------------------------------- creation rules (sized, arange)

@pytest.mark.parametrize("raw, kwargs, message", [
    ({"sized": "n"}, {"int_params": ["n"]}, "sized: 'n' is not a list[int] parameter"),
    ({"sized": "shape"}, {"tensor_params": ["a"], "int_list_params": ["shape"]}, "takes no tensor"),
    ({"arange": ["start", "stop"]}, {"int_params": ["start", "stop"]}, "give the three parameters"),
    ({"arange": "start"}, {"int_params": ["start"]}, "give the three parameters"),
    ({"arange": ["start", "stop", "step"]}, {"int_params": ["start", "stop"], "float_params": ["step"]},
     "must all be int parameters or all float parameters"),
])
def test_creation_rule_parse_errors(raw, kwargs, message):
    args = {"tensor_params": [], "int_params": [], **kwargs}
    with pytest.raises(ShapeRuleError, match=re.escape(message)):
        parse_shape_rule(raw, args.pop("tensor_params"), args.pop("int_params"), **args)


def test_sized_is_the_list_with_numpys_errors():
    from opgen.spec.shapes import creation_shape
    rule = parse_shape_rule({"sized": "shape"}, [], [], int_list_params=["shape"])
    assert rule.output_shape({"shape": [2, 0, 3]}, []) == (2, 0, 3) == np.zeros((2, 0, 3)).shape
    assert rule.output_shape({"shape": []}, []) == ()
    assert creation_shape(rule, {"shape": [2, -1]}) == ((0,), ("ValueError", "negative dimensions are not allowed"))
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        np.zeros((2, -1))


@pytest.mark.parametrize("bounds", [(0, 5, 1), (5, 0, 1), (5, 0, -2), (-7, 7, 3), (0.0, 1.0, 0.1), (1.0, 9.0, 0.1),
                                    (2.5, -2.5, -0.3), (0.0, 0.0, 1.0), (3, 4, 7)])
def test_arange_length_is_numpys(bounds):
    rule = parse_shape_rule({"arange": ["start", "stop", "step"]}, [], ["start", "stop", "step"])
    assert rule.output_shape(dict(zip(["start", "stop", "step"], bounds)), []) == np.arange(*bounds).shape


def test_arange_step_zero_is_zero_division():
    from opgen.spec.shapes import arange_length
    assert arange_length(0, 5, 0) == (0, ("ZeroDivisionError", "division by zero"))
    with pytest.raises(ZeroDivisionError):
        np.arange(0, 5, 0)
    assert arange_length(0.0, float("inf"), 1.0)[1] == ("ValueError", "arange: cannot compute length")


# --------------------------------------------------------------- assign_region (x[region] = value)

REGION_PARAMS = {"tensor_params": ["x", "value"], "int_params": [], "int_list_params": ["starts", "steps"]}
REGION_RULE = {"assign_region": "x", "value": "value", "starts": "starts", "steps": "steps"}


@pytest.mark.parametrize("raw, message", [
    ({**REGION_RULE, "assign_region": "y"}, "assign_region: 'y' is not a tensor parameter"),
    ({**REGION_RULE, "value": "x"}, "assign_region: value must be another tensor parameter than 'x'"),
    ({**REGION_RULE, "starts": "x"}, "starts: 'x' is not a list[int] parameter"),
    ({**REGION_RULE, "steps": "starts"}, "assign_region: steps must be another list[int] parameter than 'starts'"),
    ({k: v for k, v in REGION_RULE.items() if k != "steps"}, "shape must be 'elementwise', a gufunc string"),
])
def test_assign_region_rule_parse_errors(raw, message):
    args = dict(REGION_PARAMS)
    with pytest.raises(ShapeRuleError, match=re.escape(message)):
        parse_shape_rule(raw, args.pop("tensor_params"), args.pop("int_params"), **args)


def test_assign_region_rule_is_x_shape_and_says_what_the_shim_checked():
    rule = parse_shape_rule(REGION_RULE, ["x", "value"], [], int_list_params=["starts", "steps"])
    assert (rule.kind, rule.source, rule.indices, rule.region) == ("assign_region", "x", "value", ("starts", "steps"))
    args = {"x": np.empty((3, 4)), "value": np.empty((1, 2)), "starts": [2, 3], "steps": [1, -2]}
    assert rule.output_shape(args, ["x", "value"]) == (3, 4)
    text = rule.describe()
    assert "out has x's shape" in text and "never 0" in text and "already raised ValueError" in text


@pytest.mark.parametrize("shape, value, starts, steps, message", [
    ((3, 4), (1, 2), [2, 3], [1, -2], None),  # positions 3, 1 along dim 1
    ((3, 4), (0, 2), [9, 0], [1, 1], None),  # a count of 0: any start
    ((), (), [], [], None),
    ((3, 4), (2,), [0, 0], [1, 1], "assign_region: value has 1 dims but x has 2 (a region of x has x's rank)"),
    ((3, 4), (1, 2), [0], [1, 1], "assign_region: starts has 1 entries but x has 2 dims"),
    ((3, 4), (1, 2), [0, 0], [1, 1, 1], "assign_region: steps has 3 entries but x has 2 dims"),
    ((3, 4), (0, 2), [0, 0], [0, 1], "assign_region: the step along dim 0 is 0"),
    ((3, 4), (1, 2), [0, 3], [1, 2],
     "assign_region: the region along dim 1 (start 3, step 2, count 2) reaches outside x's length 4"),
    ((3, 4), (1, 2), [0, 1], [1, -2],
     "assign_region: the region along dim 1 (start 1, step -2, count 2) reaches outside x's length 4"),
    ((3, 4), (1, 1), [-1, 0], [1, 1],
     "assign_region: the region along dim 0 (start -1, step 1, count 1) reaches outside x's length 3"),
    ((0, 4), (1, 1), [0, 0], [1, 1],
     "assign_region: the region along dim 0 (start 0, step 1, count 1) reaches outside x's length 0"),
    ((3, 4), (3, 1), [2, 0], [2**62, 1],  # the last position past int64: outside, not wrapped
     "assign_region: the region along dim 0 (start 2, step 4611686018427387904, count 3) reaches outside x's length 3"),
])
def test_assign_region_shape_checks_the_region(shape, value, starts, steps, message):
    from opgen.spec.shapes import assign_region_shape
    assert assign_region_shape(shape, value, starts, steps) == (shape, message)
