"""Spec parsing: every shipped spec loads; every validation rule has a negative test
pinning its message and its ``file:line`` (torchgen's habit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen.errors import SpecError
from opgen.spec.model import load_all, load_spec

SPECS = Path(__file__).resolve().parents[1] / "specs"

BASE = """\
op: test.op
summary: a test op
reference: operator.add
overloads:
  - name: int
    signature: "(a: int, b: int) -> int"
"""
# Line numbers in BASE: 1 op, 4 overloads, 5 "- name: int", 6 signature; appended text starts at 7.

DTYPE_LIST = "float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool"


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def error_of(path: Path) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return info.value


def with_signature(sig: str, extra: str = "") -> str:
    return BASE.replace("(a: int, b: int) -> int", sig) + extra


# ---------------------------------------------------------------- shipped specs


def test_every_shipped_spec_loads():
    specs = load_all(SPECS)
    assert {
        "operator.add", "operator.mul", "operator.pow", "operator.matmul",
        "numpy.exp", "numpy.sum", "torch.nn.functional.softmax",
    } <= set(specs)
    for op, spec in specs.items():
        assert spec.op == op
        assert spec.path is not None and spec.path.suffix == ".yaml"
        assert len(spec.text_hash) == 64
        for overload in spec.overloads:
            assert overload.sig.params or overload.sig.returns  # signature parsed
            assert (overload.rule is not None) == overload.sig.tensor_results
            # one rule per tensor result (a tuple's named results, or "out")
            assert set(overload.rules) == ({n for n, _ in overload.sig.results} if overload.sig.tensor_results else set())


def test_shipped_spec_paths_follow_op_names():
    for op, spec in load_all(SPECS).items():
        assert spec.path.relative_to(SPECS).with_suffix("").as_posix() == op.replace(".", "/")


def test_minimal_spec_loads(tmp_path):
    spec = load_spec(write(tmp_path, BASE))
    assert spec.op == "test.op"
    assert [o.name for o in spec.overloads] == ["int"]
    assert str(spec.overloads[0].sig) == "(a: int, b: int) -> int"


# ---------------------------------------------------------------- unknown keys and bad types


def test_unknown_top_level_key_suggests_the_right_one(tmp_path):
    path = write(tmp_path, BASE + "tolerence: {}\n")
    assert error_of(path).message == f"{path}:7: unknown key 'tolerence' at tolerence; did you mean 'tolerance'?"


def test_unknown_overload_key_suggests_the_right_one(tmp_path):
    path = write(tmp_path, BASE + "    raise: []\n")
    assert error_of(path).message == f"{path}:7: unknown key 'raise' at overloads.0.raise; did you mean 'raises'?"


def test_unknown_key_without_a_close_match_lists_the_allowed_keys(tmp_path):
    path = write(tmp_path, BASE + "    zzzz: 1\n")
    msg = error_of(path).message
    assert msg.startswith(f"{path}:7: unknown key 'zzzz' at overloads.0.zzzz; allowed keys here: ")
    assert "domain, name, notes, raises, reference, scale, shape, signature, threads, tolerance" in msg
    assert "path" not in msg and "text_hash" not in msg


def test_unknown_key_inside_a_domain(tmp_path):
    path = write(tmp_path, BASE + "    domain:\n      a: {min: 0, maxx: 3}\n")
    assert error_of(path).message == f"{path}:8: unknown key 'maxx' at overloads.0.domain.a.maxx; did you mean 'max'?"


def test_bad_type_names_the_value_and_line(tmp_path):
    path = write(tmp_path, BASE + "    tolerance:\n      float64: {rtol: abc, atol: 0}\n")
    assert error_of(path).message == (
        f"{path}:8: overloads.0.tolerance.float64.rtol: Input should be a valid number, "
        "unable to parse string as a number (got 'abc')"
    )


def test_missing_required_key(tmp_path):
    path = write(tmp_path, BASE.replace("summary: a test op\n", ""))
    assert error_of(path).message == f"{path}:1: missing required key summary; add it"


# ---------------------------------------------------------------- dtypes


def test_unknown_dtype_in_signature(tmp_path):
    path = write(tmp_path, with_signature("(a: tensor[float31]) -> tensor[float32]", "    shape: elementwise\n"))
    assert error_of(path).message == (
        f"{path}:6: overloads.0.signature: unknown dtype 'float31' in 'tensor[float31]'; known dtypes: {DTYPE_LIST} "
        "(got '(a: tensor[float31]) -> tensor[float32]')"
    )


def test_unknown_dtype_as_top_level_tolerance_key(tmp_path):
    path = write(tmp_path, BASE + "tolerance:\n  float31: {rtol: 0, atol: 0}\n")
    assert error_of(path).message == (
        f"{path}:7: tolerance: tolerance key 'float31' is not a dtype; known dtypes: {DTYPE_LIST} "
        "(got {'float31': {'rtol': 0, 'atol': 0}})"
    )


def test_unknown_dtype_as_overload_tolerance_key(tmp_path):
    path = write(tmp_path, BASE + "    tolerance:\n      double: {rtol: 0, atol: 0}\n")
    msg = error_of(path).message
    assert msg.startswith(f"{path}:7: overloads.0.tolerance: tolerance key 'double' is not a dtype; known dtypes: ")


# ---------------------------------------------------------------- signatures

GRAMMAR = (
    "write it as '(name: type, ...) -> type' where type is int, float, bool, str, "
    f"list[<scalar>], tensor[<dtype>] or (a parameter) list[tensor[<dtype>]] with dtype one of {DTYPE_LIST}"
    "; a scalar parameter may end in a Python default, as in 'negative_slope: float = 0.01'; "
    "several tensor results are a tuple of named tensors, as in "
    "'-> tuple[values: tensor[float32], indices: tensor[int64]]'"
)


def test_signature_without_arrow(tmp_path):
    path = write(tmp_path, with_signature("(a: int, b: int) int"))
    assert error_of(path).message == (
        f"{path}:6: overloads.0.signature: malformed signature '(a: int, b: int) int'; {GRAMMAR} "
        "(got '(a: int, b: int) int')"
    )


def test_parameter_without_type(tmp_path):
    path = write(tmp_path, with_signature("(a, b: int) -> int"))
    assert error_of(path).message == (
        f"{path}:6: overloads.0.signature: parameter 'a' has no type; {GRAMMAR} (got '(a, b: int) -> int')"
    )


def test_reserved_parameter_name(tmp_path):
    path = write(tmp_path, with_signature("(out: int, b: int) -> int"))
    assert error_of(path).message == (
        f"{path}:6: overloads.0.signature: parameter name 'out' is reserved for the generated shim; rename it "
        "(got '(out: int, b: int) -> int')"
    )


def test_duplicate_parameter(tmp_path):
    path = write(tmp_path, with_signature("(a: int, a: int) -> int"))
    assert error_of(path).message == (
        f"{path}:6: overloads.0.signature: parameter 'a' appears twice (got '(a: int, a: int) -> int')"
    )


def test_shim_prefix_is_reserved(tmp_path):
    path = write(tmp_path, with_signature("(opgen_a: int, b: int) -> int"))
    assert error_of(path).message == (
        f"{path}:6: overloads.0.signature: parameter name 'opgen_a' is reserved for the generated shim; rename it "
        "(got '(opgen_a: int, b: int) -> int')"
    )


def test_cpp_keyword_parameter(tmp_path):
    path = write(tmp_path, with_signature("(key: str, default: int) -> int"))
    assert error_of(path).message == (
        f"{path}:6: overloads.0.signature: parameter name 'default' is a C++ keyword; rename it (e.g. 'default_') "
        "(got '(key: str, default: int) -> int')"
    )


def test_parameter_clashing_with_a_length_argument(tmp_path):
    path = write(tmp_path, with_signature("(s: str, s_len: int) -> int"))
    assert error_of(path).message == (
        f"{path}:6: overloads.0.signature: parameter name 's_len' collides with the length argument the C ABI "
        "passes for 's'; rename it (got '(s: str, s_len: int) -> int')"
    )


def test_list_of_tensors_needs_a_join_rule(tmp_path):
    """The verifier draws a list's elements from the rule that relates their shapes (tests/test_list_of_tensors.py)."""
    path = write(tmp_path, with_signature("(a: list[tensor[float32]]) -> int"))
    assert ("a list of tensors (a) is taken only by an overload that returns a tensor under a concatenate or stack "
            "shape rule") in error_of(path).message


# ---------------------------------------------------------------- shape rules


def test_gufunc_with_wrong_input_count(tmp_path):
    path = write(tmp_path, with_signature(
        "(a: tensor[float32], b: tensor[float32]) -> tensor[float32]", '    shape: "(m,k)->(m)"\n'))
    assert error_of(path).message == (
        f"{path}:7: overloads.0.shape: gufunc '(m,k)->(m)' names 1 inputs but the signature has "
        "2 tensor parameters (got '(m,k)->(m)')"
    )


def test_gufunc_output_dim_from_nowhere(tmp_path):
    path = write(tmp_path, with_signature("(a: tensor[float32]) -> tensor[float32]", '    shape: "(m,k)->(m,n)"\n'))
    assert error_of(path).message == (
        f"{path}:7: overloads.0.shape: output dims ['n'] of '(m,k)->(m,n)' appear in no input (got '(m,k)->(m,n)')"
    )


def test_unknown_shape_form(tmp_path):
    path = write(tmp_path, with_signature("(a: tensor[float32]) -> tensor[float32]", "    shape: {like: a}\n"))
    assert error_of(path).message == (
        f"{path}:7: overloads.0.shape: shape must be 'elementwise', a gufunc string like '(m,k),(k,n)->(m,n)', "
        "{same_as: <tensor param>}, {sized: <list[int] param>}, {arange: [<start>, <stop>, <step>]} (int or "
        "float params), {reduce: <tensor param>, axis: <int param>} (optionally with "
        "keepdims: <bool param>), {permute: <tensor param>, axes: <list[int] param>}, "
        "{reshape: <tensor param>, shape: <list[int] param>}, {expand_dims: <tensor param>, axis: <int param>}, "
        "{squeeze: <tensor param>, axis: <int param>}, {topk: <tensor param>, axis: <int param>, k: <int param>}, "
        "{broadcast_to: <tensor param>, shape: <list[int] param>}, "
        "{tile: <tensor param>, reps: <list[int] param>}, {torch_pad: <tensor param>, pad: <list[int] param>}, "
        "{pad: <tensor param>, widths: <list[int] param>, mode: <str param>}, "
        "{concatenate: <list[tensor] param>, axis: <int param>}, {stack: <list[tensor] param>, axis: <int param>}, "
        "{boolean_mask: <tensor param>, mask: <bool tensor param>} with {count_of: <bool tensor param>}, "
        "{masked_fill: <tensor param>, mask: <bool tensor param>}, "
        "{assign_region: <tensor param>, value: <tensor param>, starts: <list[int] param>, steps: <list[int] param>}, "
        "{dot: [<tensor param>, <tensor param>]}, "
        "{pool: <tensor param>, kernel: [<int>...], stride: [<int>...], padding: [<int>...]} (optionally with "
        "dilation: [<int>...] and ceil_mode: <bool param>) or "
        "{pool2d: <tensor param>, kernel: [<int>, <int>], stride: [<int>, <int>], padding: [<int>, <int>]} "
        "(got {'like': 'a'})"
    )


MASK_SIG = "(x: tensor[float32], mask: tensor[bool]) -> tuple[values: tensor[float32], count: tensor[{count}]]"


def test_a_bounded_result_needs_its_count(tmp_path):
    """x[mask]'s length is known only when the kernel has run: the spec must say where it is reported."""
    path = write(tmp_path, with_signature(MASK_SIG.format(count="int64"), "    shape:\n      values: {boolean_mask: x, "
                                          "mask: mask}\n      count: {same_as: mask}\n"))
    message = error_of(path).message
    assert "a boolean_mask result's length is known only when the kernel has run" in message, message
    assert "{count_of: mask}" in message, message


def test_a_bounded_results_count_is_int64(tmp_path):
    path = write(tmp_path, with_signature(MASK_SIG.format(count="int32"), "    shape:\n      values: {boolean_mask: x, "
                                          "mask: mask}\n      count: {count_of: mask}\n"))
    assert "the count of values's rows is a tensor[int64], not tensor[int32]" in error_of(path).message


def test_a_count_without_a_bounded_result(tmp_path):
    path = write(tmp_path, with_signature(MASK_SIG.format(count="int64"), "    shape:\n      values: {same_as: x}\n"
                                          "      count: {count_of: mask}\n"))
    assert "a count_of rule reports the length of a bounded result" in error_of(path).message


def test_unknown_shape_string(tmp_path):
    path = write(tmp_path, with_signature("(a: tensor[float32]) -> tensor[float32]", "    shape: pointwise\n"))
    assert error_of(path).message.startswith(
        f"{path}:7: overloads.0.shape: shape 'pointwise' is neither 'elementwise' nor a gufunc signature")


def test_same_as_naming_a_non_tensor(tmp_path):
    path = write(tmp_path, with_signature(
        "(a: tensor[float32], n: int) -> tensor[float32]", "    shape: {same_as: n}\n"))
    assert error_of(path).message == (
        f"{path}:7: overloads.0.shape: same_as: 'n' is not a tensor parameter of the signature (have: ['a']) "
        "(got {'same_as': 'n'})"
    )


def test_reduce_axis_must_be_an_int_parameter(tmp_path):
    path = write(tmp_path, with_signature(
        "(a: tensor[float32], axis: float) -> tensor[float32]", "    shape: {reduce: a, axis: axis}\n"))
    assert error_of(path).message == (
        f"{path}:7: overloads.0.shape: axis: 'axis' is not a int parameter of the signature (have: []) "
        "(got {'reduce': 'a', 'axis': 'axis'})"
    )


def test_tensor_return_without_shape(tmp_path):
    path = write(tmp_path, with_signature("(a: tensor[float32]) -> tensor[float32]"))
    # No shape key to point at: the error names the overload's first line.
    assert error_of(path).message == (
        f"{path}:5: overloads.0.shape: a tensor result needs a 'shape' rule "
        "(elementwise, a gufunc string, same_as or reduce) (got None)"
    )


def test_shape_on_a_scalar_return(tmp_path):
    path = write(tmp_path, BASE + "    shape: elementwise\n")
    assert error_of(path).message == (
        f"{path}:7: overloads.0.shape: 'shape' is only for overloads that return a tensor; remove it "
        "(got 'elementwise')"
    )


def test_a_bad_signature_is_reported_once_not_again_by_the_shape_check(tmp_path):
    path = write(tmp_path, with_signature("(a: tensor[float32]) tensor[float32]", "    shape: elementwise\n"))
    msg = error_of(path).message
    assert msg.count("\n") == 0, msg
    assert msg.startswith(f"{path}:6: overloads.0.signature: malformed signature")


# ---------------------------------------------------------------- overloads, domains, op names


def test_duplicate_overload_names(tmp_path):
    path = write(tmp_path, BASE + '  - name: int\n    signature: "(a: int) -> int"\n')
    assert error_of(path).message.startswith(
        f"{path}:4: overloads: overload names must be unique; repeated: ['int']")


def test_long_offending_values_are_not_echoed(tmp_path):
    many = "".join(f'  - name: o{i}\n    signature: "(a: int) -> int"\n' for i in range(5))
    path = write(tmp_path, BASE + many + '  - name: o1\n    signature: "(a: int) -> int"\n')
    assert error_of(path).message == f"{path}:4: overloads: overload names must be unique; repeated: ['o1']"


def test_overload_name_must_be_snake_case(tmp_path):
    path = write(tmp_path, BASE.replace("name: int", "name: Int32"))
    assert error_of(path).message == (
        f"{path}:5: overloads.0.name: overload names are lower_snake_case identifiers, e.g. 'f32' or 'int' "
        "(got 'Int32')"
    )


def test_domain_naming_a_missing_parameter(tmp_path):
    path = write(tmp_path, BASE + "    domain:\n      c: {min: 0}\n")
    assert error_of(path).message == (
        f"{path}:7: overloads.0.domain: domain names 'c', which is not a parameter (have: ['a', 'b']) "
        "(got {'c': {'min': 0}})"
    )


def test_domain_axis_of_must_name_a_tensor(tmp_path):
    path = write(tmp_path, BASE + "    domain:\n      a: {axis_of: b}\n")
    assert error_of(path).message == (
        f"{path}:7: overloads.0.domain: domain.a.axis_of names 'b', which is not a tensor parameter "
        "(got {'a': {'axis_of': 'b'}})"
    )


def test_op_name_must_be_dotted(tmp_path):
    path = write(tmp_path, BASE.replace("op: test.op", "op: add"))
    assert error_of(path).message == (
        f"{path}:1: op: op is the dotted Python name the compiler sees, e.g. 'operator.matmul' (got 'add')"
    )


def test_unknown_raises_error_kind(tmp_path):
    path = write(tmp_path, BASE + "    raises:\n      - {error: TypeError, when: always}\n")
    msg = error_of(path).message
    assert msg.startswith(f"{path}:8: overloads.0.raises.0.error: Input should be 'OverflowError', "
                          "'ZeroDivisionError', 'ValueError' or 'IndexError'")


def test_several_errors_are_reported_together(tmp_path):
    path = write(tmp_path, BASE.replace("op: test.op", "op: add") + "tolerence: {}\n")
    assert error_of(path).message.splitlines() == [
        f"{path}:1: op: op is the dotted Python name the compiler sees, e.g. 'operator.matmul' (got 'add')",
        f"{path}:7: unknown key 'tolerence' at tolerence; did you mean 'tolerance'?",
    ]


# ---------------------------------------------------------------- YAML-level errors


def test_duplicate_yaml_keys(tmp_path):
    path = write(tmp_path, BASE + "summary: again\n")
    err = error_of(path)
    assert (err.where, err.message, err.hint) == (f"{path}:7", "key 'summary' appears twice", "keep one of them")


def test_duplicate_keys_inside_an_overload(tmp_path):
    path = write(tmp_path, BASE + '    signature: "(a: int) -> int"\n')
    err = error_of(path)
    assert (err.where, err.message) == (f"{path}:7", "key 'signature' appears twice")


def test_invalid_yaml(tmp_path):
    path = write(tmp_path, BASE + "  - name: [\n")
    err = error_of(path)
    assert err.where == f"{path}:8"
    assert err.message == "not valid YAML: expected the node content, but found '<stream end>'"
    assert "quoted" in err.hint


def test_empty_file(tmp_path):
    path = write(tmp_path, "")
    err = error_of(path)
    assert (err.where, err.message) == (f"{path}:1", "the file is empty")
    assert str(err) == (f"{path}:1: the file is empty\n"
                        "  fix: a spec needs at least op, summary, reference and overloads")


def test_a_spec_must_be_a_mapping(tmp_path):
    path = write(tmp_path, "- op: test.op\n")
    err = error_of(path)
    assert err.where == f"{path}:1"
    assert err.message.startswith("a spec is a mapping of keys")


def test_unquoted_exponent_floats_are_numbers(tmp_path):
    spec = load_spec(write(tmp_path, BASE + "    tolerance:\n      float64: {rtol: 1e-5, atol: 2E-7}\n"))
    tol = spec.overloads[0].tolerance["float64"]
    assert (tol.rtol, tol.atol) == (1e-5, 2e-7)


# ---------------------------------------------------------------- load_all


def test_load_all_rejects_an_op_defined_twice(tmp_path):
    first = write(tmp_path, BASE, "a/one.yaml")
    second = write(tmp_path, BASE, "b/two.yaml")
    with pytest.raises(SpecError) as info:
        load_all(tmp_path)
    assert info.value.message == f"{second}:1: op 'test.op' is also defined in {first}; keep one"
    assert info.value.hint == "fix the spec files named above"


def test_load_all_collects_errors_from_every_file(tmp_path):
    bad1 = write(tmp_path, "", "a.yaml")
    bad2 = write(tmp_path, BASE + "tolerence: {}\n", "b.yaml")
    write(tmp_path, BASE.replace("test.op", "test.fine"), "c.yaml")
    with pytest.raises(SpecError) as info:
        load_all(tmp_path)
    msg = info.value.message
    assert f"{bad1}:1: the file is empty" in msg
    assert f"{bad2}:7: unknown key 'tolerence'" in msg


# ---------------------------------------------------------------- overload_hash

TWO_OVERLOADS = """\
op: test.op
summary: a test op
reference: numpy.exp
overloads:
  - name: f32
    signature: "(x: tensor[float32]) -> tensor[float32]"
    shape: {same_as: x}
    tolerance:
      float32: {rtol: 1.0e-6, atol: 0.0}
  - name: f64
    signature: "(x: tensor[float64]) -> tensor[float64]"
    shape: {same_as: x}
"""


def _hashes(tmp_path: Path, text: str, name: str) -> dict[str, str]:
    spec = load_spec(write(tmp_path, text, name))
    return {o.name: spec.overload_hash(o) for o in spec.overloads}


def test_overload_hash_follows_its_own_tolerance(tmp_path):
    before = _hashes(tmp_path, TWO_OVERLOADS, "before.yaml")
    after = _hashes(tmp_path, TWO_OVERLOADS.replace("rtol: 1.0e-6", "rtol: 2.0e-6"), "after.yaml")
    assert before["f32"] != after["f32"]
    assert before["f64"] == after["f64"]


def test_overload_hash_ignores_unrelated_overloads(tmp_path):
    before = _hashes(tmp_path, TWO_OVERLOADS, "before.yaml")
    changed = TWO_OVERLOADS.replace(
        '    signature: "(x: tensor[float64]) -> tensor[float64]"\n',
        '    signature: "(x: tensor[float64]) -> tensor[float64]"\n    notes: a new note\n',
    ) + '  - name: i64\n    signature: "(x: tensor[int64]) -> tensor[int64]"\n    shape: {same_as: x}\n'
    after = _hashes(tmp_path, changed, "after.yaml")
    assert before["f32"] == after["f32"]
    assert before["f64"] != after["f64"]


def test_overload_hash_follows_spec_level_facts(tmp_path):
    before = _hashes(tmp_path, TWO_OVERLOADS, "before.yaml")
    after = _hashes(tmp_path, TWO_OVERLOADS + "tolerance:\n  float64: {rtol: 1.0e-9, atol: 0.0}\n", "after.yaml")
    # A spec-wide tolerance can change any overload's verdict, so every hash moves.
    assert before["f32"] != after["f32"] and before["f64"] != after["f64"]


def test_overload_hash_ignores_the_file_location(tmp_path):
    assert _hashes(tmp_path, TWO_OVERLOADS, "x/a.yaml") == _hashes(tmp_path, TWO_OVERLOADS, "y/b.yaml")


def test_variant_named_plain_is_rejected(tmp_path):
    path = write(tmp_path, BASE + "variants:\n  plain: the same again\n")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert "variant 'plain': use a lower-case identifier other than 'plain'" in str(info.value)


def test_bench_and_variants_do_not_change_the_overload_hash(tmp_path):
    plain = load_spec(write(tmp_path, BASE))
    extra = BASE + "    bench:\n      - {name: big, args: {a: 3, b: {shape: [1024]}}}\nvariants:\n  fast: vectorised\n"
    benched = load_spec(write(tmp_path, extra, "other.yaml"))
    assert benched.overloads[0].bench[0].args["b"].shape == [1024]
    assert benched.variant_names() == ["plain", "fast"]
    assert plain.overload_hash(plain.overloads[0]) == benched.overload_hash(benched.overloads[0])
