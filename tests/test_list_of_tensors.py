"""Lists of tensors (``list[tensor[<dtype>]]`` parameters) through the stack: the signature grammar, the
spec model's domains and shape rules (concatenate, stack), the ABI's spellings, NumPy's shapes and
errors, the verifier's draws, the admitted C++ and Rust kernels against NumPy in every layout through
the generated shims, and the gate rejecting kernels that skip a list element or write one."""

from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest

from opgen.gate.admission import GateSettings, run_gate
from opgen.project import PACKAGE_ROOT
from opgen.spec.abi import c_declaration, cpp_declaration, rust_declaration
from opgen.spec.model import Spec, load_all
from opgen.spec.nativetypes import SignatureError, parse_signature, parse_type
from opgen.spec.shapes import ShapeRuleError, join_shape, parse_shape_rule
from opgen.verify.harness import Limits
from opgen.verify.scale import drawn_examples, scale_cases
from opgen.verify.strategies import lay_out
from tests.registry_kernels import LazyKernels

ROOT = PACKAGE_ROOT
SPECS = load_all(ROOT / "specs")
CONCAT, STACK = SPECS["numpy.concatenate"], SPECS["numpy.stack"]
KERNELS = LazyKernels()


# ------------------------------------------------------------------ grammar and ABI

def test_a_list_of_tensors_parses():
    t = parse_type("list[tensor[float32]]")
    assert t.is_tensor_list and not t.is_tensor and str(t) == "list[tensor[float32]]"
    assert t.elem.dtype.name == "float32" and t.dtype is None
    sig = parse_signature("(xs: list[tensor[int64]], axis: int = 0) -> tensor[int64]")
    assert [p.name for p in sig.tensor_list_params] == ["xs"] and sig.tensor_params == ()
    assert not parse_type("list[int]").is_tensor_list


@pytest.mark.parametrize("text, message", [
    ("(xs: list[list[int]]) -> int", "lists of lists are not supported"),
    ("(x: tensor[float32]) -> list[tensor[float32]]", "a parameter type only"),
    ("(xs: list[tensor[f32]]) -> int", "unknown dtype 'f32'"),
    ("(xs: list[tensor[float32]], xs_len: int) -> int", "collides with the length argument"),
    ("(xs: list[tensor[float32]] = 0) -> int", "only scalar parameters"),
])
def test_malformed_lists_of_tensors_are_refused(text, message):
    with pytest.raises(SignatureError, match=message):
        parse_signature(text)


def test_abi_spellings():
    sig = parse_signature("(xs: list[tensor[float32]], axis: int) -> tensor[float32]")
    assert cpp_declaration("numpy.concatenate", "f32", sig) == (
        "void numpy_concatenate__f32(const std::vector<opgen::Tensor>& xs, int64_t axis, opgen::Tensor& out)")
    assert rust_declaration("numpy.concatenate", "f32", sig) == (
        "pub fn numpy_concatenate__f32(xs: &[TensorRef<f32>], axis: i64, out: &mut TensorMut<f32>) -> Result<()>")
    assert c_declaration("numpy.concatenate", "f32", sig) == (
        "int32_t opgen_numpy_concatenate__f32(const opgen_tensor* xs, int64_t xs_len, int64_t axis, "
        "opgen_tensor* out, opgen_error* err)")


# ------------------------------------------------------------------ the spec model

def _spec(overload: dict) -> Spec:
    return Spec.model_validate({"op": "numpy.concatenate", "summary": "s", "reference": "numpy.concatenate",
                                "overloads": [{"name": "f32", **overload}]})


def test_a_join_rule_and_list_domains_load():
    o = _spec({"signature": "(xs: list[tensor[float32]], axis: int) -> tensor[float32]",
               "shape": {"concatenate": "xs", "axis": "axis"},
               "domain": {"xs": {"min_len": 2, "max_len": 3, "max_dims": 2}}}).overloads[0]
    assert o.rule.kind == "concatenate" and o.rule.source == "xs" and o.rule.axis == "axis"
    assert o.domain["xs"].min_len == 2


@pytest.mark.parametrize("overload, message", [
    ({"signature": "(xs: list[tensor[float32]]) -> tensor[float32]", "shape": "elementwise"},
     "needs a shape rule that says how its elements' shapes relate"),
    ({"signature": "(x: tensor[float32], axis: int) -> tensor[float32]", "shape": {"stack": "x", "axis": "axis"}},
     "is not a list\\[tensor\\[...\\]\\] parameter"),
    ({"signature": "(xs: list[tensor[float32]], axis: int) -> tensor[float32]",
      "shape": {"stack": "xs", "axis": "axis"}, "domain": {"xs": {"min_len": 3, "max_len": 2}}},
     "min_len 3 is above max_len 2"),
    ({"signature": "(x: tensor[float32]) -> tensor[float32]", "shape": {"same_as": "x"},
      "domain": {"x": {"min_len": 1}}}, "min_len is for lists of tensors"),
])
def test_spec_errors_name_the_fix(overload, message):
    with pytest.raises(Exception, match=message):
        _spec(overload)


def test_join_rules_refuse_what_they_cannot_use():
    with pytest.raises(ShapeRuleError, match="not a int parameter"):
        parse_shape_rule({"concatenate": "xs", "axis": "n"}, [], ["axis"], [], tensor_list_params=["xs"])
    with pytest.raises(ShapeRuleError, match="it takes no other tensor"):
        parse_shape_rule({"stack": "xs", "axis": "axis"}, ["w"], ["axis"], [], tensor_list_params=["xs"])


# ------------------------------------------------------------------ NumPy's shapes and errors

ELEMENT_SHAPES = [[], [()], [(), ()], [(3,)], [(2, 3), (2, 5)], [(2, 3), (3, 3)], [(2, 3), (2,)], [(0, 2), (3, 2)],
                  [(2, 0, 1), (2, 4, 1)], [(1, 2, 3)] * 3, [(2, 3), (2, 3, 1)], [(2, 2), (2, 2)], [(4,), (0,), (1,)],
                  [(1,) * 8, (1,) * 8]]


@pytest.mark.parametrize("kind", ["concatenate", "stack"])
def test_join_shapes_and_messages_are_numpys(kind):
    rule = parse_shape_rule({kind: "xs", "axis": "axis"}, [], ["axis"], [], tensor_list_params=["xs"])
    fn = {"concatenate": np.concatenate, "stack": np.stack}[kind]
    for shapes, axis in itertools.product(ELEMENT_SHAPES, range(-10, 10)):
        try:
            want, why = fn([np.zeros(s) for s in shapes], axis=axis).shape, None
        except ValueError as exc:  # AxisError is one
            want, why = (0,), str(exc)
        if want != (0,) and len(want) > 8:  # NumPy holds 9 dims; an opgen tensor 8
            want, why = (0,), "the result has more dims than an opgen tensor holds (8)"
        assert join_shape(rule, shapes, axis) == (want, why), (kind, shapes, axis)


# ------------------------------------------------------------------ what the verifier draws

@pytest.mark.parametrize("spec", [CONCAT, STACK], ids=lambda s: s.op)
def test_drawn_lists_cover_the_edges(spec):
    o = spec.overload("f32")
    lengths, axes, layouts, rejected = set(), set(), set(), 0
    for args in drawn_examples(o, seed=3, n=300):
        xs, axis = args["arrays"], args["axis"]
        lengths.add(min(len(xs), 3))
        axes.add(axis < 0)
        layouts.update(bool(x.flags.c_contiguous) for x in xs if x.ndim and x.size > 1)
        assert all(x.dtype == np.float32 for x in xs)
        assert len({id(x.base if x.base is not None else x) for x in xs}) == len(xs)  # each its own buffer
        try:
            o.rule.output_shape(args, [])
            (np.concatenate if spec is CONCAT else np.stack)(xs, axis=axis)
        except ValueError:
            rejected += 1
    assert lengths == {0, 1, 2, 3} and axes == {True, False} and layouts == {True, False}
    assert 10 < rejected < 150  # NumPy's errors are drawn (ValueError is declared), but not mostly


def test_scale_cases_join_long_lists_and_a_kv_cache():
    names = [c.name for c in scale_cases(CONCAT, CONCAT.overload("f32"), seed=1)]
    assert names[0].startswith("bench kv-cache-append")
    assert any("many elements, 129 x" in n for n in names)
    for case in scale_cases(STACK, STACK.overload("i64"), seed=2):
        assert all(x.dtype == np.int64 for x in case.args["arrays"])
        assert CONCAT is not None and STACK.overload("i64").rule.output_shape(case.args, [])


# ------------------------------------------------------------------ the admitted kernels

LAYOUTS = ("contiguous", "transposed", "strided", "reversed", "offset")
TARGET_DTYPES = [("cpu-cpp", o) for o in ("f32", "f64", "f16", "i64", "i32", "bool")] + \
                [("cpu-rust", o) for o in ("f32", "f64", "i64", "i32", "bool")]  # float16: n/a for Rust


def _values(o, shape, rng):
    dt = o.sig.tensor_list_params[0].type.elem.dtype.np
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return (rng.standard_normal(shape) * 100).astype(dt)


@pytest.mark.parametrize("target, overload", TARGET_DTYPES)
@pytest.mark.parametrize("spec", [CONCAT, STACK], ids=lambda s: s.op)
def test_kernels_match_numpy_in_every_layout(spec, target, overload):
    _, o, kernel = KERNELS[(spec.op, overload, target)]
    fn = np.concatenate if spec is CONCAT else np.stack
    rng = np.random.default_rng(5)
    cases = [([(2, 3), (2, 5), (2, 1)], 1), ([(4, 3), (1, 3), (0, 3)], -2), ([(3,)], 0), ([(2, 3, 4)] * 4, -1),
             ([(1, 12, 9, 8), (1, 12, 1, 8)], 2), ([(0, 2), (0, 2)], 0)]
    if spec is STACK:
        cases = [([s[0]] * len(s), ax) for s, ax in cases] + [([()] * 3, 0)]
    for (shapes, axis), layout in itertools.product(cases, LAYOUTS):
        xs = [lay_out(_values(o, s, rng), LAYOUTS[(LAYOUTS.index(layout) + i) % len(LAYOUTS)])
              for i, s in enumerate(shapes)]
        want = fn(xs, axis=axis)
        out = np.full(want.shape, 1, dtype=want.dtype)
        got = kernel([xs, axis], out=out)
        assert got.tobytes() == want.tobytes(), (spec.op, target, overload, shapes, axis, layout)


@pytest.mark.parametrize("target", ["cpu-cpp", "cpu-rust"])
@pytest.mark.parametrize("spec", [CONCAT, STACK], ids=lambda s: s.op)
def test_shims_raise_numpys_errors(spec, target):
    _, o, kernel = KERNELS[(spec.op, "f32", target)]
    fn = np.concatenate if spec is CONCAT else np.stack
    f = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    for xs, axis in [([], 0), ([f(), f()], 0), ([f(2, 3), f(2, 4)], 5), ([f(2, 3), f(2)], 0), ([f(2, 3), f(3, 4)], -1),
                     ([f(2), f(3)], 0), ([f(2), f(2)], -3)]:
        try:
            fn(xs, axis=axis)
            continue
        except ValueError as exc:
            message = str(exc)
        with pytest.raises(ValueError) as got:
            kernel([xs, axis], out=np.zeros((0,), np.float32))
        assert str(got.value) == message


@pytest.mark.parametrize("target", ["cpu-cpp", "cpu-rust"])
def test_a_bound_call_keeps_its_buffers_and_repeats(target):
    """Kernel.bind marshals once (what opgen bench times): the bound call must hold the ctypes views
    and the arrays they point into after the caller lets go of them, and raise as an unbound call does."""
    _, o, kernel = KERNELS[("numpy.stack", "f32", target)]
    rng = np.random.default_rng(7)
    xs = [lay_out(_values(o, (3, 5), rng), layout) for layout in LAYOUTS]
    want = np.stack(xs, axis=1)
    out = np.full(want.shape, np.nan, np.float32)
    call = kernel.bind([[x.copy() if i % 2 else x for i, x in enumerate(xs)], 1], out=out)
    gc.collect()
    for _ in range(3):
        out.fill(np.nan)
        assert call() is out and out.tobytes() == want.tobytes()
    refused = kernel.bind([[np.zeros(2, np.float32), np.zeros(3, np.float32)], 0], out=np.zeros(0, np.float32))
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        refused()


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_the_rust_shim_refuses_a_bool_byte_other_than_0_or_1(layout):
    """A Rust bool holding 2 is undefined behaviour: the runtime checks every byte of a bool argument
    (a contiguous one by OR-ing its bytes, any other layout element by element), wherever the 2 lies."""
    _, _, kernel = KERNELS[("numpy.stack", "bool", "cpu-rust")]
    for at in (0, 37, 63):
        raw = np.zeros(128 if layout == "strided" else 64, np.uint8)
        raw[at * 2 if layout == "strided" else at] = 2
        bad = raw.view(np.bool_)[::2] if layout == "strided" else raw.view(np.bool_)
        with pytest.raises(ValueError, match="holds a byte other than 0 or 1"):
            kernel([[np.zeros(64, bool), bad], 0], out=np.zeros((2, 64), bool))
    good = [np.ones(64, bool), np.zeros(128, bool)[::2]]
    assert kernel([good, 0], out=np.zeros((2, 64), bool)).tobytes() == np.stack(good).tobytes()


# ------------------------------------------------------------------ the gate

FAST = GateSettings(dev_examples=60, admission_examples=30, admission_runs=1, sanitizer_examples=0, scale=False,
                    limits=Limits(cpu_seconds=60, wall_seconds=120.0))
SOURCE = (ROOT / "generated" / "cpp" / "numpy.concatenate" / "f32" / "kernel.cpp").read_text()
CALL = "  join(arrays, ax, false, out);"


@pytest.mark.parametrize("cheat, replacement, kind, message", [
    ("ignores the last element", "  if (arrays.size() < 2) { join(arrays, ax, false, out); return; }\n"
     "  join(std::vector<opgen::Tensor>(arrays.begin(), arrays.end() - 1), ax, false, out);", "value", "first mismatch"),
    ("writes an input", CALL + "\n  const opgen::Tensor& last = arrays.back();\n"
     "  if (last.numel() > 0) reinterpret_cast<unsigned char*>(last.data<T>())[0] ^= 1;",
     "input_modified", "the kernel wrote into its input 'arrays["),
])
def test_the_gate_rejects_a_kernel_that_skips_or_writes_a_list_element(cheat, replacement, kind, message):
    assert CALL in SOURCE
    o = CONCAT.overload("f32")
    gate = run_gate(CONCAT, o, SOURCE.replace(CALL, replacement), FAST)
    assert not gate.ok and gate.stage == "verify", (cheat, gate.stage, gate.feedback[:500])
    assert gate.verdicts[-1].kind == kind and message in gate.feedback, (cheat, gate.feedback[:800])
