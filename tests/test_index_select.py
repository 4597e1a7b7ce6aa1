"""torch.index_select (issue 14, gathers) and its shape rule (index_select in opgen/spec/shapes.py):
the rule's shapes and errors against torch's on every small case (all IndexError), the indices the
verifier and the scale stage draw (in [0, n), never negative where valid; sometimes out of range),
the admitted C++ and Rust kernels bit for bit against torch in strided layouts (repeated, empty and
0-d indices, a 0-d input) with torch's errors, and the compiled runtime's shape_index_select."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from opgen.compiler import compile_many
from opgen.host import load_compiled
from opgen.project import PACKAGE_ROOT, Project
from opgen.references import call_reference
from opgen.spec.model import load_all
from opgen.spec.shapes import gather_index_error, gather_shape, parse_shape_rule
from opgen.verify.scale import drawn_examples, scale_cases
from opgen.verify.strategies import axis_length
from tests.layouts import bits, layouts, shape_probe
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
SPECS = load_all(ROOT / "specs")
SPEC = SPECS["torch.index_select"]
RULE = parse_shape_rule({"index_select": "input", "indices": "index", "axis": "dim"}, ["input", "index"], ["dim"])
SHAPES = [(), (0,), (1,), (3,), (2, 0), (0, 3), (2, 3), (3, 1, 2)]
INDEX_SHAPES = [(), (0,), (1,), (3,), (2, 2)]


def _torch(x, dim, index):
    """torch's result shape, or the error type (RuntimeError counted as IndexError, as the reference does)."""
    try:
        return tuple(torch.index_select(torch.from_numpy(x), dim, torch.from_numpy(index)).shape)
    except (IndexError, RuntimeError):
        return "IndexError"


@pytest.mark.parametrize("shape", SHAPES)
def test_rule_shapes_errors_and_index_checks_are_torchs(shape):
    x = np.zeros(shape, np.float32)
    nd = max(len(shape), 1)
    for ishape, dim in itertools.product(INDEX_SHAPES, range(-nd - 1, nd + 1)):
        for fill in (0, 1, -1):
            index = np.full(ishape, fill, np.int64)
            want = _torch(x, dim, index)
            got, why = gather_shape(RULE, shape, ishape, dim)
            if why is None:
                why = gather_index_error(RULE, shape, index, dim)
                why = None if why is None else ("IndexError", why)
            if want == "IndexError":
                assert why is not None and why[0] == "IndexError", (shape, ishape, dim, fill, got)
            else:
                assert why is None and got == want, (shape, ishape, dim, fill, got, want, why)
    assert "torch.index_select" in RULE.describe()


def test_drawn_indices_are_in_range_and_sometimes_rejected():
    o = SPEC.overload("f32")
    valid = rejected = nonempty = 0
    for args in drawn_examples(o, seed=5, n=120):
        x, dim, idx = args["input"], args["dim"], args["index"]
        try:
            ref = call_reference(SPEC.reference_for(o), [x, dim, idx])
        except IndexError:
            rejected += 1
            continue
        valid += 1
        n = axis_length(x.shape, dim)
        assert ((idx >= 0) & (idx < n)).all() and ref.shape == o.rule.output_shape(args, ["input", "index"])
        nonempty += ref.size > 0
    assert valid >= 70 and rejected >= 3 and nonempty >= 40, (valid, rejected, nonempty)


def test_scale_cases_have_valid_indices_and_long_tables():
    o = SPEC.overload("f32")
    n_cases = big = 0
    for case in scale_cases(SPEC, o, seed=2):
        x, dim, idx = case.args["input"], case.args["dim"], case.args["index"]
        ref = call_reference(SPEC.reference_for(o), [x, dim, idx])  # raises on an invalid index
        assert ref.shape == o.rule.output_shape(case.args, ["input", "index"]) and (idx >= 0).all(), case.name
        big += axis_length(x.shape, dim) > 65536 and bool((idx > 65536).any())
        n_cases += 1
    assert n_cases >= 5 and big >= 1, (n_cases, big)


TARGETS = ("cpu-cpp", "cpu-rust")
OVERLOADS = ("f32", "f64", "i64")


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([("torch.index_select", ov) for ov in OVERLOADS], TARGETS)


CASES = [((5, 7), 0, [4, 0, 4, 2]), ((5, 7), -1, [6]), ((3, 40, 33), 1, [39, 0, 17, 17]), ((2, 3, 4, 5), 2, []),
         ((4,), 0, 3), ((), 0, [0]), ((), -1, 0), ((0, 3), 1, [2, 1]), ((8, 12, 16, 8), 0, [7, 3, 3, 0, 1, 2, 5, 6])]


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_select_bit_for_bit_in_every_layout(kernels, target):
    rng = np.random.default_rng(3)
    for ov in OVERLOADS:
        spec, o, kernel = kernels[("torch.index_select", ov, target)]
        dt = o.sig.returns.dtype.np
        for shape, dim, index in CASES:
            x = (rng.standard_normal(shape) * 100).astype(dt)
            if dt.kind == "f" and x.size:
                x.reshape(-1)[0] = -0.0
            index = np.array(index, np.int64)
            for xl, il in itertools.product(list(layouts(x)), list(layouts(index))):
                ref = np.asarray(call_reference(spec.reference_for(o), [xl.copy(), dim, il.copy()]))
                got = kernel([xl, dim, il], out=np.empty(ref.shape, dt))
                assert got.shape == ref.shape and np.array_equal(bits(got), bits(ref)), (ov, shape, dim, index)


ERRORS = [((5, 7), 2, [0]), ((5, 7), 0, [-1]), ((5, 7), 0, [5]), ((5, 7), 1, [[0, 1]]), ((), 0, [0, 0]), ((), 0, [1]),
          ((0, 3), 0, [0]), ((0, 3), 1, [3]), ((5, 7), 0, [2**63 - 1]), ((5, 7), 0, [-(2**63)])]


@pytest.mark.parametrize("target", TARGETS)
def test_shims_raise_torchs_errors_as_index_error(kernels, target):
    spec, o, kernel = kernels[("torch.index_select", "f32", target)]
    for shape, dim, index in ERRORS:
        x, index = np.zeros(shape, np.float32), np.array(index, np.int64)
        with pytest.raises(IndexError):
            call_reference(spec.reference_for(o), [x, dim, index])
        with pytest.raises(IndexError):
            kernel([x, dim, index], out=np.empty((0,), np.float32))


def test_the_compiled_runtime_allocates_what_the_rule_gives(tmp_path):
    cases = []
    for shape in SHAPES:
        nd = max(len(shape), 1)
        for ishape, dim in itertools.product(INDEX_SHAPES, range(-nd - 1, nd + 1)):
            cases.append((shape, ishape, dim, gather_shape(RULE, shape, ishape, dim)[0]))
    main = r"""int main() {
  opgen_dtype f{2, 32, 1}, l{0, 64, 1};
  int64_t dim;
  while (std::cin >> dim) {
    Array a = Array::empty(f, read_list()), i = Array::empty(l, read_list());
    print_shape(opgen::compiled::shape_index_select(a, i, dim));
  }
  return 0;
}
"""
    stdin = "".join(f"{d} {len(s)} {' '.join(map(str, s))} {len(i)} {' '.join(map(str, i))}\n" for s, i, d, _ in cases)
    got = shape_probe(tmp_path, main, stdin)
    assert len(got) == len(cases)
    for g, (s, i, d, want) in zip(got, cases):
        assert g == tuple(want), (s, i, d, g, want)


def test_the_compiler_reaches_index_select_by_its_torch_spelling(tmp_path):
    src = tmp_path / "rows.py"
    src.write_text(
        "import numpy as np\nimport numpy.typing as npt\nimport torch\n\n\n"
        "def rows(x: npt.NDArray[np.float32], ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:\n"
        "    return torch.index_select(x, 1, ids)\n")
    compile_many(Project(ROOT), [(src, "rows", tmp_path / "out")])
    fn = load_compiled(tmp_path / "out")
    x = np.random.default_rng(0).standard_normal((3, 10)).astype(np.float32)[:, ::2]
    ids = np.array([4, 0, 0, 2], np.int64)
    assert np.array_equal(fn(x, ids), x[:, ids])
    with pytest.raises(IndexError):
        fn(x, np.array([-1], np.int64))  # torch has no negative indices
