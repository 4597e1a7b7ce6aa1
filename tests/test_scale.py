"""The scale stage's cases (opgen.verify.scale): large, model-shaped, within the domain and the budget.

The gate runs them (stage ``scale``) and the corpus's threshold entries pin that they catch
what small draws cannot; these tests pin the cases themselves, for every shipped overload.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from opgen.spec.dtypes import floating
from opgen.spec.model import Domain, load_all, load_spec
from opgen.spec.shapes import CREATION
from opgen.verify.scale import (CPU_BUDGET, EMULATED_BUDGET, REDUCTION_LENGTH, STRING_BYTES, TABLE_ROWS, Budget,
                                arrays_nbytes, scale_cases)

ROOT = Path(__file__).resolve().parents[1]
SPECS = load_all(ROOT / "specs")
OVERLOADS = [(op, o.name) for op, s in sorted(SPECS.items()) for o in s.overloads]


def _cases(op: str, overload: str, seed: int = 7, budget: Budget = CPU_BUDGET):
    spec = SPECS[op]
    return spec, spec.overload(overload), list(scale_cases(spec, spec.overload(overload), seed, budget))


def _has_size_inputs(overload) -> bool:
    sig = overload.sig
    texts = [p for p in sig.params if p.type.name == "str" or (p.type.kind == "list" and p.type.elem.name == "str")]
    grows = [p for p in texts if overload.domain.get(p.name, Domain()).choices is None]
    creates = overload.rule is not None and overload.rule.kind in CREATION  # np.zeros(shape): sizes from scalars
    return bool(sig.tensor_params) or bool(sig.tensor_list_params) or bool(grows) or creates


def _grown_sizes(overload) -> set[str]:
    """The scalars a derived case grows past their domain, as it grows tensors past the drawn shapes:
    an arange's bounds (its length); its step stays in the domain."""
    rule = overload.rule
    return set(rule.bounds[:2]) if rule is not None and rule.kind == "arange" else set()


@pytest.mark.parametrize("op,overload", OVERLOADS)
def test_cases_fit_the_domain_the_rule_and_the_budget(op: str, overload: str) -> None:
    spec, o, cases = _cases(op, overload)
    bpe = any(d.strings == "bpe_vocab" for d in o.domain.values())
    if not _has_size_inputs(o) or bpe:
        # no sizes to grow: only the cases the spec itself declares (``scale:``, e.g. truediv's hard quotients)
        assert all(c.origin == "spec" for c in cases) or bpe
        return
    assert len(cases) >= 2, f"{op} {overload}: only {len(cases)} scale cases"
    assert len(cases) <= CPU_BUDGET.max_cases
    tensors = [p.name for p in o.sig.tensor_params]
    for case in cases:
        if o.rule is not None:
            o.rule.output_shape(case.args, tensors)  # a valid call: raises on inconsistent shapes
            assert arrays_nbytes(case.args) <= CPU_BUDGET.max_bytes, case.name
        for p, v in [(p, e) for p in o.sig.params  # a list of tensors: each element
                     for e in (case.args[p.name] if p.type.is_tensor_list else [case.args[p.name]])]:
            dom = o.domain.get(p.name, Domain())
            if isinstance(v, np.ndarray) and floating(v.dtype):
                finite = v[np.isfinite(v)]
                # the bounds as the tensor's dtype rounds them (float32, float16, bfloat16)
                if dom.min is not None and finite.size:
                    assert finite.min() >= np.asarray(dom.min).astype(v.dtype)
                if dom.max is not None and finite.size:
                    assert finite.max() <= np.asarray(dom.max).astype(v.dtype)
                if not dom.special:
                    assert np.isfinite(v).all(), f"{case.name}: {p.name} has special values its domain does not admit"
            elif isinstance(v, np.ndarray) and dom.index_into is not None and v.size:
                rows = case.args[dom.index_into].shape[0]
                assert 0 <= v.min() and v.max() < rows
                assert v.max() >= rows - 4, f"{case.name}: the indices never reach the table's last rows"
            elif isinstance(v, np.ndarray) and v.size and dom.min is not None:
                assert dom.min <= v.min() and v.max() <= dom.max
            elif dom.choices is not None:
                assert v in dom.choices
            elif p.type.name in ("int", "float") and dom.min is not None and case.origin == "derived" \
                    and p.name not in _grown_sizes(o):
                # (a bench or spec case's scalars are the spec author's: gemma's window of 512)
                assert dom.min <= v <= dom.max, f"{case.name}: {p.name}={v} outside its domain"
        for name, dom in o.domain.items():
            for dim, of in (dom.multiple_of or {}).items():
                core = o.rule.inputs_core[tensors.index(name)]
                shape = case.args[name].shape
                size = shape[len(shape) - len(core) + core.index(dim)]
                base = of if isinstance(of, int) else next(
                    case.args[t].shape[len(case.args[t].shape) - len(c) + c.index(of)]
                    for t, c in zip(tensors, o.rule.inputs_core) if of in c)
                assert size % base == 0, f"{case.name}: {dim}={size} is not a multiple of {of}={base}"


@pytest.mark.parametrize("op,overload", [("numpy.sum", "f32"), ("torch.nn.functional.softmax", "f64"),
                                         ("torch.nn.functional.normalize", "f32")])
def test_an_axis_op_reduces_over_100k_elements_along_its_axis(op: str, overload: str) -> None:
    spec, o, cases = _cases(op, overload)
    axis_param = o.rule.axis or next(p.name for p in o.sig.params if o.domain.get(p.name, Domain()).axis_of)
    source = o.rule.source
    lengths = [case.args[source].shape[case.args[axis_param]] for case in cases]
    assert max(lengths) >= REDUCTION_LENGTH


def test_matmul_meets_long_inner_dims_model_sizes_and_its_bench_shapes() -> None:
    spec, o, cases = _cases("operator.matmul", "f32")
    ks = [c.args["a"].shape[-1] for c in cases]
    assert max(ks) >= 4095  # a blocked k loop's remainder, far past the drawn 48
    assert any(c.origin == "bench" and c.args["a"].shape == (1024, 1024) for c in cases)
    assert any("model sizes" in c.name for c in cases) and any("multiples of 128" in c.name for c in cases)


def test_an_embedding_table_has_more_than_65536_rows_and_is_indexed_above_them() -> None:
    spec, o, cases = _cases("torch.nn.functional.embedding", "f32")
    big = [c for c in cases if c.args["weight"].shape[0] > TABLE_ROWS]
    assert big and all(c.args["input"].max() >= TABLE_ROWS for c in big)


@pytest.mark.parametrize("op,overload", [("operator.add", "str"), ("operator.mul", "str_repeat")])
def test_string_ops_meet_strings_of_64_kb_and_more(op: str, overload: str) -> None:
    spec, o, cases = _cases(op, overload)
    first = o.sig.params[0].name
    sizes = [len(c.args[first].encode()) for c in cases]
    assert max(sizes) >= STRING_BYTES
    assert any(len(c.args[first].encode()) > len(c.args[first]) for c in cases)  # multi-byte UTF-8


def test_wordpiece_meets_a_vocabulary_of_more_than_65536_pieces() -> None:
    spec, o, cases = _cases("opgen.text.wordpiece_encode", "bert_uncased")
    assert all(len(c.args["vocab"]) > TABLE_ROWS and len(set(c.args["vocab"])) == len(c.args["vocab"]) for c in cases)
    assert max(len(t.encode()) for c in cases for t in c.args["texts"]) >= STRING_BYTES


def test_the_cases_draw_realistic_and_hostile_distributions() -> None:
    seen = {c.distribution for s in ("operator.matmul", "torch.nn.functional.layer_norm", "torch.nn.functional.softmax")
            for c in _cases(s, SPECS[s].overloads[0].name)[2]}
    assert {"offset_rows", "wide_range", "logits"} <= seen
    spec, o, cases = _cases("torch.nn.functional.layer_norm", "f32", seed=3)
    offset = next(c for c in cases if c.distribution == "offset_rows")
    rows = offset.args["input"].reshape(-1, offset.args["input"].shape[-1]).astype(np.float64)
    assert (np.abs(rows.mean(axis=1)) > 100 * rows.std(axis=1)).all()  # mean >> spread
    logits = next(c for s in range(10) for c in _cases("torch.nn.functional.softmax", "f32", seed=s)[2]
                  if c.distribution == "logits" and c.args["x"].size > 1000)
    assert np.nanstd(np.where(np.isfinite(logits.args["x"]), logits.args["x"], np.nan)) >= 30


def test_same_seed_same_cases_other_seed_other_values() -> None:
    a = _cases("torch.nn.functional.softmax", "f32", seed=11)[2]
    b = _cases("torch.nn.functional.softmax", "f32", seed=11)[2]
    c = _cases("torch.nn.functional.softmax", "f32", seed=12)[2]
    assert [x.name for x in a] == [x.name for x in b]
    assert all(np.array_equal(x.args["x"], y.args["x"], equal_nan=True) for x, y in zip(a, b))
    assert [x.name for x in a] != [x.name for x in c] or not all(
        np.array_equal(x.args["x"], y.args["x"], equal_nan=True) for x, y in zip(a, c))


@pytest.mark.parametrize("op", ["operator.matmul", "opgen.nn.scaled_dot_product_attention",
                                "torch.nn.functional.max_pool2d", "opgen.nn.masked_mean_pool"])
def test_the_emulated_gpu_budget_is_smaller_and_respected(op: str) -> None:
    spec, o, cases = _cases(op, SPECS[op].overloads[0].name, budget=EMULATED_BUDGET)
    assert 2 <= len(cases) <= EMULATED_BUDGET.max_cases
    for c in cases:
        assert sum(v.nbytes for v in c.args.values() if isinstance(v, np.ndarray)) <= EMULATED_BUDGET.max_bytes


def test_a_spec_states_its_own_scale_cases_and_they_run_first(tmp_path: Path) -> None:
    text = (ROOT / "specs/numpy/exp.yaml").read_text().replace(
        "      x: {min: -100", "      x: {min: -100", 1)
    text = text.replace("  - name: f32\n", "  - name: f32\n    scale:\n      - name: odd-long-vector\n"
                        "        why: a length no vector width divides\n        args:\n"
                        "          x: {shape: [123457]}\n", 1)
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    spec = load_spec(path)
    first = next(iter(scale_cases(spec, spec.overload("f32"), 1)))
    assert first.origin == "spec" and first.args["x"].shape == (123457,)
    assert spec.overload_hash(spec.overload("f32")) != SPECS["numpy.exp"].overload_hash(SPECS["numpy.exp"].overload("f32"))


def test_a_bad_scale_case_is_a_spec_error_naming_the_line(tmp_path: Path) -> None:
    from opgen.errors import SpecError

    text = (ROOT / "specs/numpy/exp.yaml").read_text().replace(
        "  - name: f32\n", "  - name: f32\n    scale:\n      - name: x\n        shapes: {x: [3]}\n", 1)
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    with pytest.raises(SpecError, match=r"exp.yaml:\d+: unknown key 'shapes'"):
        load_spec(path)


@pytest.mark.parametrize("budget", ["cpu", "corpus"])
def test_a_float32_accumulator_is_out_of_tolerance_on_every_seed(budget: str) -> None:
    # The class "a precision downgrade that only long reductions show" must be caught on every
    # seed, not by luck: the aimed cases (offset rows at 100k+ elements) plant no special values,
    # which made a reduced row nonfinite on both sides and hid it on about one seed in ten.
    from opgen.gate.corpus import SETTINGS

    chosen = CPU_BUDGET if budget == "cpu" else SETTINGS.scale_budget
    spec = SPECS["numpy.sum"]
    o = spec.overload("f32")
    missed = []
    for seed in range(60):  # before the fix, 10 seeds in 200 passed (3 of these 60)
        worst = 0.0
        for case in scale_cases(spec, o, seed, chosen):
            a, axis = case.args["a"], case.args["axis"]
            if a.size == 0:
                continue
            tol = spec.tolerance_at(o, o.sig.returns.dtype, case.args)
            with np.errstate(all="ignore"):
                naive = np.take(np.add.accumulate(a, axis=axis, dtype=np.float32), -1, axis=axis)  # in order
                exact = np.sum(a.astype(np.float64), axis=axis)
                bound = tol.atol + tol.rtol * np.sum(np.abs(a.astype(np.float64)), axis=axis)
                ratio = np.where(np.isfinite(exact), np.abs(naive - exact) / bound, 0.0)
            worst = max(worst, float(np.max(ratio, initial=0.0)))
        if worst <= 1.0:
            missed.append(seed)
    assert not missed, f"a sequential float32 sum passes every scale case on seeds {missed}"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_choices_parameter_takes_every_choice_across_the_cases(seed: int) -> None:
    """Drawn at random per case, a choice met in one case in a few: a kernel wrong for one choice
    (a norm wrong only for ord = inf) passed the stage on some seeds. In turn, every one is met."""
    for op, overload, name in (("torch.linalg.vector_norm", "f32", "ord"), ("torch.addmm", "f32", "beta"),
                               ("torch.nn.functional.gelu", "f32", "approximate")):
        spec = SPECS[op]
        o = spec.overload(overload)
        derived = [c.args[name] for c in scale_cases(spec, o, seed) if c.origin == "derived"]
        wanted = {float(c) if isinstance(c, (int, float)) else c for c in o.domain[name].choices}
        assert set(derived) <= wanted and len(set(derived)) == min(len(derived), len(wanted)), (op, derived)
