"""The adversarial corpus: every known-bad kernel in verification/corpus/ is rejected by the
admission gate for its stated reason, and every shipped kernel is still admitted.

One test per corpus entry and per registry kernel (builds are cached in .opgen-cache, so a
second run only verifies). ``pytest -s tests/test_corpus.py`` (without xdist) prints the
tally at the end; ``opgen corpus`` prints it in any case. Entries marked ``layer: sandbox``
whose layer is not in force yet are reported as xfail, not hidden.

Also here: the manifest's strict parsing, the ``opgen corpus`` command, and negative tests
for the static-policy rules the corpus made necessary.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.gate.corpus import (CORPUS_DIR, SETTINGS, EntryResult, HonestResult, corpus_dir, fill_table, honest_kernels,
                          load_manifest, render_tally, run_entry, run_honest, tally, unusual_honest_kernels)
from opgen.errors import OpgenError
from opgen.targets.cpp.policy import check
from opgen.project import PACKAGE_ROOT, Project
from opgen.spec.model import load_all

ROOT = PACKAGE_ROOT
SPECS = load_all(ROOT / "specs")
ENTRIES = load_manifest(corpus_dir(Project(ROOT)), SPECS)
# The first ops' C++ kernels (their first overloads, the ones the corpus's cheats imitate) and a Rust
# sample, with one kernel of each kind the later overloads added (a broadcasting tensor kernel, a
# float16 one, bfloat16 matmuls plain and dpbf16): enough to show honest kernels of every kind pass
# the corpus settings. `opgen corpus` and the nightly job run every C++ and Rust entry; the other
# tensor overloads of add, mul and pow are these kernels' code with another element type.
LATER_KINDS = {("operator.add", "tensor_f32", "cpu-cpp"), ("torch.nn.functional.softmax", "f16", "cpu-cpp"),
               ("operator.matmul", "bf16", "cpu-cpp")}
SHIPPED_OPS = {"operator.add", "operator.mul", "operator.pow", "operator.matmul", "numpy.exp", "numpy.sum",
               "torch.nn.functional.softmax"}

# Overloads added after the corpus was written (the embedding-model tensor ops); the corpus
# cheats against them are the same as against matmul's and exp's elementwise/tensor kernels.
# The int64/float64/int32 tensor overloads of add and mul (issue 14) likewise: their kernels are the
# tensor_f32 ones' with another element type.
LATER_OVERLOADS = {"tensor_f32", "tensor_f64", "tensor_i64", "tensor_i32", "tensor_i8", "tensor_i16", "tensor_u8",
                   "tensor_u16", "tensor_u32", "tensor_u64",
                   # half precision (issue 14 point 6): add's bf16 has an entry of its own (truncation)
                   "tensor_f16", "tensor_bf16", "f16", "bf16"}
HONEST = [k for k in honest_kernels(Project(ROOT))
          if k.op in SHIPPED_OPS and (k.target == "cpu-cpp" or k.op in {"numpy.exp", "operator.add"})
          and (k.overload not in LATER_OVERLOADS or (k.op, k.overload, k.target) in LATER_KINDS)]

# What this process ran, for the tally (under xdist each worker sees its share).
RESULTS: dict[str, EntryResult] = {}
HONEST_RESULTS: dict[str, HonestResult] = {}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_corpus_entry_is_rejected_for_its_reason(entry):
    r = run_entry(entry, SPECS)
    RESULTS[entry.name] = r
    if r.outcome == "expected":
        return
    what = (f"{entry.name} ({entry.op} {entry.overload}, cheat {entry.cheat}): expected "
            f"{entry.expect.describe()}, got {r.got.summary()}" + (f" [{entry.note}]" if entry.note else ""))
    if r.pending:
        pytest.xfail(f"pending the sandbox layer: {what}")
    if r.outcome == "admitted":
        pytest.fail(f"ADMITTED, a hole in the gate: {what}")
    pytest.fail(f"rejected for another reason: {what}\n{r.got.message[:3000]}")


UNUSUAL = unusual_honest_kernels(Project(ROOT))


@pytest.mark.parametrize("kernel", UNUSUAL, ids=[k.name for k in UNUSUAL])
def test_an_unusual_but_right_kernel_is_admitted(kernel):
    """verification/honest/: compensated and pairwise sums, online softmaxes, Welford statistics, a
    packed OpenMP matmul, a block-stride CUDA reduction. A new stage must not reject honest work."""
    r = run_honest(kernel, SPECS)
    HONEST_RESULTS[kernel.name] = r
    assert r.ok, f"false rejection of {kernel.name} ({kernel.op} {kernel.overload}): {r.got.message[:3000]}"


@pytest.mark.parametrize("kernel", HONEST, ids=[f"{k.op}-{k.overload}-{k.target}" for k in HONEST])
def test_shipped_kernel_is_admitted(kernel):
    r = run_honest(kernel, SPECS)
    HONEST_RESULTS[f"{kernel.op} {kernel.overload}"] = r
    assert r.ok, f"false rejection of the shipped {kernel.op} {kernel.overload}: {r.got.message[:3000]}"


def test_print_tally():
    """Runs last in this module: the tally of what this process ran (all of it without xdist)."""
    ran = [RESULTS[e.name] for e in ENTRIES if e.name in RESULTS]
    t = tally(ran, list(HONEST_RESULTS.values()), SETTINGS)
    print(f"\n{render_tally(t)}" + ("" if len(ran) == len(ENTRIES) else
                                   f"\n(this process ran {len(ran)} of {len(ENTRIES)} entries; `opgen corpus` runs all)"))
    assert t["entries"] == t["rejected_as_expected"] + t["rejected_for_another_reason"] + t["admitted"]


# --- the corpus itself ------------------------------------------------------------------


def test_corpus_is_large_and_spread_over_the_shipped_ops():
    assert len(ENTRIES) >= 30
    assert SHIPPED_OPS <= {e.op for e in ENTRIES} <= set(SPECS)  # the first ops, each overload; others may join
    overloads = {(e.op, e.overload) for e in ENTRIES}
    for op in SHIPPED_OPS:  # each overload the first ops shipped with (later overloads may join)
        for o in SPECS[op].overloads:
            if o.name not in LATER_OVERLOADS:
                assert (op, o.name) in overloads, f"no corpus entry for {op} {o.name}"


def test_corpus_covers_every_cheat_the_issue_lists():
    cheats = {e.cheat for e in ENTRIES}
    required = {
        "output-unwritten", "output-reused", "constant-output", "zero-output-under-atol", "inputs-modified",
        "partial-computation", "strided-subsample", "closed-form-shortcut", "hard-coded-answers", "cache-by-pointer",
        "cache-by-value", "nondeterminism", "out-of-bounds-write", "out-of-bounds-read", "infinite-loop",
        "memory-bomb", "process-spawn", "threads", "file-access", "network-access", "environment", "clock",
        "exit-abort", "signal-handler", "stdout-flood", "python-c-api", "dynamic-loading", "load-time-code",
        "precision-downgrade", "noncontiguous-only", "zero-size-only", "nan-propagation-only",
    }
    assert required <= cheats, f"missing: {sorted(required - cheats)}"


def test_some_entries_get_past_the_source_rules_so_the_deeper_layers_are_shown_to_work():
    def deeper(e) -> bool:
        x = e.expect
        return ("sanitizer" in x.stage or x.kind in {"forbidden_syscall", "output_flood", "crash"}
                or any(m.startswith("imports `") or m == ".init_array" for m in x.message))
    names = {e.name for e in ENTRIES if deeper(e)}
    assert len(names) >= 15, sorted(names)
    for e in ENTRIES:
        if e.name in names and e.expect.stage == ["policy"]:
            assert check(e.source, threads_allowed=False) == [], f"{e.name} should get past the source rules"


def test_every_entry_describes_its_cheat_and_expectation_in_its_header():
    for e in ENTRIES:
        head = e.source.split("#include", 1)[0]
        assert head.startswith("// ") and len(head.splitlines()) >= 3, e.name
        assert "Expected:" in head, f"{e.name}: the header comment should state the expected rejection"


# --- the manifest parses strictly --------------------------------------------------------


def _corpus(tmp_path: Path, manifest: str, files: dict[str, str]) -> Path:
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "manifest.yaml").write_text(manifest)
    for name, text in files.items():
        (d / name).write_text(text)
    return d


GOOD = """entries:
  - name: x
    op: operator.add
    overload: int
    cheat: exit-abort
    expect: {stage: policy, kind: exit, message: "may not end"}
"""


def test_manifest_loads_a_good_entry(tmp_path):
    d = _corpus(tmp_path, GOOD, {"x.cpp": "// cheat\n"})
    [e] = load_manifest(d, SPECS)
    assert (e.name, e.expect.stage, e.expect.kind, e.expect.message, e.layer) == ("x", ["policy"], "exit", ["may not end"], "gate")


@pytest.mark.parametrize(("manifest", "files", "error"), [
    (GOOD.replace("cheat:", "cheet:"), {"x.cpp": "// c\n"}, "manifest.yaml:5: unknown key cheet; did you mean 'cheat'?"),
    (GOOD.replace("stage: policy", "stage: later"), {"x.cpp": "// c\n"}, "manifest.yaml:6: expect.stage: unknown stage 'later'"),
    (GOOD, {}, "manifest.yaml:2: x: no source file x.cpp next to the manifest"),
    (GOOD, {"x.cpp": "int f();\n"}, "x.cpp must open with a comment describing the cheat"),
    (GOOD, {"x.cpp": "// c\n", "y.cpp": "// c\n"}, "y.cpp is not in the manifest"),
    (GOOD.replace("overload: int", "overload: i32"), {"x.cpp": "// c\n"}, "operator.add has no overload 'i32'"),
    (GOOD + GOOD.replace("entries:\n", ""), {"x.cpp": "// c\n"}, "manifest.yaml:7: entry 'x' appears twice"),
    ("- x\n", {}, "manifest.yaml:1: the manifest is a mapping with one key, entries"),
    (GOOD + "    memorize: true\n", {"x.cpp": "// c\n"}, "x: memorize needs a table between '// @memorized-begin'"),
])
def test_manifest_errors_name_the_line_and_the_fix(tmp_path, manifest, files, error):
    d = _corpus(tmp_path, manifest, files)
    with pytest.raises(OpgenError) as exc:
        load_manifest(d, SPECS)
    assert error in str(exc.value)


def test_memorized_table_is_refilled_between_the_markers():
    source = "// c\nconst int t[] = {\n    // @memorized-begin\n    {1},\n    // @memorized-end\n};\n"
    assert fill_table(source, ["    {7},", "    {8},"]) == (
        "// c\nconst int t[] = {\n    // @memorized-begin\n    {7},\n    {8},\n    // @memorized-end\n};\n")


# --- opgen corpus ----------------------------------------------------------------------

runner = CliRunner()


def test_cli_corpus_json_for_chosen_entries():
    chosen = ["add_int_abort_on_overflow", "add_str_system_call"]
    result = runner.invoke(app, ["corpus", *chosen, "--no-honest", "--json", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["entries"], data["rejected_as_expected"], data["admitted"], data["false_rejections"]) == (2, 2, 0, 0)
    assert data["by_reason"] == {"policy/exit": 1, "policy/process": 1}
    assert data["limits"]["cpu_seconds"] == SETTINGS.limits.cpu_seconds
    assert [r["outcome"] for r in data["results"]] == ["expected", "expected"]


def test_cli_corpus_exits_1_on_a_hole_and_names_it(tmp_path):
    """An honest kernel filed as a cheat is admitted: that is what a hole looks like."""
    root = tmp_path / "project"
    shutil.copytree(ROOT / "specs", root / "specs")
    (root / "generated").mkdir()
    honest = (ROOT / CORPUS_DIR / "add_int_abort_on_overflow.cpp").read_text().replace("std::abort();", "throw "
             "opgen::Error(opgen::ErrorKind::Overflow, \"int addition overflows int64\");").replace("#include <cstdlib>\n", "")
    (root / "verification").mkdir()
    assert _corpus(root / "verification", GOOD.replace("name: x", "name: honest_add"), {"honest_add.cpp": honest}) \
        == root / CORPUS_DIR
    result = runner.invoke(app, ["corpus", "--root", str(root)])
    assert result.exit_code == 1, result.output
    assert "admitted  honest_add" in result.stdout
    assert "got      admitted" in result.stdout
    assert "1 admitted" in result.stdout


def test_cli_corpus_unknown_entry_is_a_clean_error():
    result = runner.invoke(app, ["corpus", "no_such_entry", "--no-honest", "--root", str(ROOT)])
    assert result.exit_code == 1
    assert "no corpus entry named no_such_entry" in result.output


# --- static-policy rules the corpus made necessary (each pins its rule) -----------------------

HEAD = '#include "opgen_kernel.hpp"\n#include <immintrin.h>\n\nnamespace opgen::kernels {\nvoid f() {\n'
TAIL = "}\n}  // namespace opgen::kernels\n"


@pytest.mark.parametrize(("rule", "statement"), [
    ("asm", '__asm volatile("syscall");'),                       # the third spelling GCC accepts
    ("python", "int g = PyGILState_Ensure();"),                   # C-API names beyond Py_* and PyImport_*
    ("python", 'PyRun_SimpleString("import numpy");'),
    ("python", "_PyObject_New(t);"),
    ("clock", "unsigned long long t = _rdtsc();"),                # immintrin.h spellings of the cycle counter
    ("clock", "unsigned long long t = __rdtscp(&aux);"),
    ("clock", "unsigned long long t = __builtin_ia32_rdtsc();"),
    ("clock", "unsigned long long r; _rdrand64_step(&r);"),
    ("clock", "auto c = __builtin_readcyclecounter();"),
    ("exit", "__builtin_exit(0);"),                               # builtins that are libc calls in disguise
    ("exit", "__builtin_trap();"),
    ("exit", "__builtin_abort();"),
    ("output", '__builtin_printf("%d", 1);'),
    ("output", '__builtin_puts("x");'),
    ("fp-environment", "_mm_setcsr(_mm_getcsr() | 0x8040);"),     # changes the reference's arithmetic too
    ("fp-environment", "_MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);"),
    ("fp-environment", "__builtin_ia32_ldmxcsr(0x9fc0);"),
    ("fp-environment", "fesetround(0x400);"),
])
def test_policy_catches_spellings_the_corpus_found(rule, statement):
    assert rule in {v.rule for v in check(HEAD + statement + "\n" + TAIL, threads_allowed=True)}


def test_policy_fp_environment_message():
    [v] = check(HEAD + "_mm_setcsr(0x9fc0);\n" + TAIL, threads_allowed=False)
    assert v.rule == "fp-environment" and v.line == 6
    assert "floating-point environment" in v.why and "the reference's too" in v.why


@pytest.mark.parametrize("statement", [
    "double y = std::exp(x);  // PyTorch computes the same",       # prose about PyTorch is not a call
    "const char* s = \"PyTorch\";",
    "int rdtsc_free = 1;",
    "unsigned int csr = _mm_getcsr();",                             # reading MXCSR changes nothing
    "__builtin_unreachable();",
    "int n = __builtin_popcount(7);",
])
def test_policy_new_spellings_do_not_reject_honest_code(statement):
    assert check(HEAD + statement + "\n" + TAIL, threads_allowed=False) == []
