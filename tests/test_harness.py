"""The differential harness against hand-written kernels, correct and cheating.

Each kernel is built with the shipped spec's generated shim (admission.build_job) and
verified by opgen.verify.harness.verify_library in its limited child process. The
policy scan lives in admission.run_gate, so kernels here may do what policy forbids
(exit, crash, spin) to prove the sandbox, not the scan, catches them.
"""

from __future__ import annotations

import re

from pathlib import Path

import pytest

from opgen.spec.abi import c_symbol
from opgen.gate.admission import build_job
from opgen.build.cpp import build
from opgen.spec.model import load_all
from opgen.verify.harness import Limits, Verdict, verify_library

ROOT = Path(__file__).resolve().parents[1]
SPECS = load_all(ROOT / "specs")
EXAMPLES = 30
SEED = 12345

EXP = SPECS["numpy.exp"]
EXP_F64 = EXP.overload("f64")
ADD = SPECS["operator.add"]
ADD_INT = ADD.overload("int")

# numpy.exp f64 over a strided view; {pre} runs first, {body} computes element i, {post} follows.
EXP_TEMPLATE = """
#include "opgen_kernel.hpp"
#include <cmath>
#include <cstdlib>

namespace opgen::kernels {{
void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {{
  const int nd = x.ndim();
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  {pre}
  for (int64_t i = 0; i < {count}; ++i) {{
    int64_t rest = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {{
      off += (rest % x.size(d)) * x.stride(d);
      rest /= x.size(d);
    }}
    o[i] = {body};
    {post}
  }}
}}
}}  // namespace opgen::kernels
"""


def exp_kernel(pre: str = "", body: str = "std::exp(xp[off])", post: str = "", count: str = "n") -> str:
    return EXP_TEMPLATE.format(pre=pre, body=body, post=post, count=count)


ADD_TEMPLATE = """
#include "opgen_kernel.hpp"

namespace opgen::kernels {{
int64_t operator_add__int(int64_t a, int64_t b) {{
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {{ {on_overflow} }}
  return r;
}}
}}  // namespace opgen::kernels
"""

CANDIDATES = {
    "exp_ok": (EXP, EXP_F64, exp_kernel()),
    "exp_wrong": (EXP, EXP_F64, exp_kernel(body="std::exp(xp[off]) * (1.0 + 1e-9)")),
    "exp_writes_input": (EXP, EXP_F64, exp_kernel(post="const_cast<double*>(xp)[off] = o[i] + 1.0;")),
    "exp_leaves_last_unwritten": (EXP, EXP_F64, exp_kernel(count="n - 1")),
    "exp_segfaults": (EXP, EXP_F64, exp_kernel(pre="if (n > 3) { volatile double* volatile p = nullptr; *p = 1.0; }")),
    "exp_spins": (EXP, EXP_F64, exp_kernel(pre="if (n > 3) { volatile int64_t spin = 0; for (;;) spin = spin + 1; }")),
    "exp_exits": (EXP, EXP_F64, exp_kernel(pre="if (n > 3) std::exit(0);")),
    "exp_call_counter": (EXP, EXP_F64, exp_kernel(
        pre="static int64_t calls = 0; ++calls;", body="std::exp(xp[off]) + (calls % 2 == 0 ? 1.0 : 0.0)")),
    "add_ok": (ADD, ADD_INT, ADD_TEMPLATE.format(
        on_overflow='throw opgen::Error(opgen::ErrorKind::Overflow, "int too large to add");')),
    "add_wrong_error": (ADD, ADD_INT, ADD_TEMPLATE.format(
        on_overflow='throw opgen::Error(opgen::ErrorKind::Value, "sum out of range");')),
    "add_wraps": (ADD, ADD_INT, ADD_TEMPLATE.format(on_overflow="")),
    # Writes the harness could not see before: into a stride gap, just before or just past the view,
    # and into the input only when the output does not arrive NaN-filled (production-like).
    "exp_writes_stride_gap": (EXP, EXP_F64, exp_kernel(
        post="if (nd > 0 && x.stride(nd - 1) > 1) const_cast<double*>(xp)[off + 1] = o[i];")),
    "exp_writes_before_view": (EXP, EXP_F64, exp_kernel(
        pre="if (n > 0 && x.is_contiguous()) const_cast<double*>(xp)[-1] = 0.5;")),
    "exp_writes_past_view": (EXP, EXP_F64, exp_kernel(
        pre="if (n > 0 && x.is_contiguous()) const_cast<double*>(xp)[n] = 0.5;")),
    "exp_writes_input_unless_nan_out": (EXP, EXP_F64, exp_kernel(
        pre="const bool verifier = n == 0 || std::isnan(o[0]);",
        post="if (!verifier) const_cast<double*>(xp)[off] = o[i];")),
    # Right only when the output arrives all-NaN (the old harness's tell).
    "exp_right_only_into_nan": (EXP, EXP_F64, exp_kernel(
        pre="bool all_nan = true; for (int64_t j = 0; j < n; ++j) all_nan = all_nan && std::isnan(o[j]);",
        body="all_nan ? std::exp(xp[off]) : std::exp(xp[off]) * (1.0 + 1e-6)")),
    # Leaves the elements whose answer is NaN as it found them (right under a NaN prefill only).
    "exp_skips_nan_answers": (EXP, EXP_F64, exp_kernel(body="std::isnan(xp[off]) ? o[i] : std::exp(xp[off])")),
    # Ignores strides: the counterexample must say the input was not contiguous.
    "exp_ignores_strides": (EXP, EXP_F64, exp_kernel(body="std::exp(xp[i])")),
    # Stateless but for the heap: finds its previous call's tag in a chunk malloc hands out again.
    "exp_heap_stash": (EXP, EXP_F64, exp_kernel(
        pre="volatile unsigned long* stash = new unsigned long[125]; "
            "const bool seen = stash[5] == 0x5eedc0ffeeUL; stash[5] = 0x5eedc0ffeeUL; "
            "delete[] const_cast<unsigned long*>(stash);",
        body="seen ? 0.0 : std::exp(xp[off])")),
    # A time bomb: right for its first 3000 calls (the gate's runs make a few hundred), then off.
    "exp_time_bomb": (EXP, EXP_F64, exp_kernel(
        pre="static long calls = 0; const bool late = ++calls > 3000;",
        body="late ? std::exp(xp[off]) * (1.0 + 1e-3) : std::exp(xp[off])")),
    # The thread count it runs with, as its result.
    "add_reports_threads": (ADD, ADD.overload("tensor_f32"), """
#include "opgen_kernel.hpp"
#include <omp.h>
namespace opgen::kernels {
void operator_add__tensor_f32(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  float* o = out.data<float>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = static_cast<float>(omp_get_max_threads());
}
}  // namespace opgen::kernels
"""),
}

RUST_THREADS = """use opgen::{Result, TensorMut, TensorRef};
pub fn operator_add__tensor_f32(_a: &TensorRef<f32>, _b: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let n = opgen::max_threads() as f32;
    out.fill(n);
    Ok(())
}
"""


@pytest.fixture(scope="module")
def libraries() -> dict[str, Path]:
    names = list(CANDIDATES)
    results = build([build_job(spec, overload, source) for spec, overload, source in CANDIDATES.values()])
    for name, result in zip(names, results):
        assert result.ok, f"{name}: {result.diagnostics}"
    return {name: result.library for name, result in zip(names, results)}


def verify(libraries, name: str, *, examples: int = EXAMPLES, limits: Limits = Limits(), seed: int = SEED,
           **kw) -> Verdict:
    spec, overload, _ = CANDIDATES[name]
    return verify_library(libraries[name], c_symbol(spec.op, overload.name), spec.path, overload.name,
                          seed=seed, max_examples=examples, limits=limits, **kw)


def numel(arg: dict) -> int:
    n = 1
    for s in arg["shape"]:
        n *= s
    return n


def test_correct_elementwise_kernel_passes(libraries):
    v = verify(libraries, "exp_ok")
    assert (v.ok, v.kind) == (True, "pass"), v.as_feedback()
    assert 0 < v.examples <= EXAMPLES
    assert v.message == f"{v.examples} examples passed"
    assert v.seed == SEED
    assert v.worst_rel_error <= 5e-16
    assert v.details == {}


def test_correct_int_kernel_passes(libraries):
    v = verify(libraries, "add_ok")
    assert (v.ok, v.kind) == (True, "pass"), v.as_feedback()
    assert v.examples > 0
    assert (v.worst_abs_error, v.worst_rel_error) == (0.0, 0.0)


def test_wrong_values_are_rejected_with_a_counterexample(libraries):
    v = verify(libraries, "exp_wrong")
    assert (v.ok, v.kind) == (False, "value")
    assert "first mismatch at index" in v.message
    assert "exceeds the allowed" in v.message
    args = v.details["args"]
    assert set(args) == {"x"}
    assert args["x"]["dtype"] == "float64"
    assert numel(args["x"]) >= 1
    assert {"index", "expected", "got"} <= set(v.details)
    feedback = v.as_feedback()
    assert feedback.startswith("Verification failed (value): first mismatch at index")
    assert "Counterexample (after shrinking), argument by argument:\n  x: {" in feedback


def test_writing_into_an_input_is_rejected(libraries):
    v = verify(libraries, "exp_writes_input")
    assert (v.ok, v.kind) == (False, "input_modified")
    # Shrunk to the first element: (0, ...), or () where the counterexample is a 0-d array
    assert v.message.startswith("the kernel wrote into its input 'x' (inputs are const): inside the view, element (")
    assert v.message.endswith(" bytes differ in all")
    element = v.details["written"]["element"]
    assert v.details["written"]["where"] == "view" and (len(element) == 0 or element[0] == 0)
    assert numel(v.details["args"]["x"]) >= 1


@pytest.mark.parametrize("name, where, words", [
    ("exp_writes_stride_gap", "gap", "outside the view, in a gap between its elements (strides ("),
    ("exp_writes_before_view", "margin_before", "outside the view, in the margin before it (8 bytes before its lowest element; byte "),
    ("exp_writes_past_view", "margin_after", "outside the view, in the margin after it (right after its highest element; byte "),
    ("exp_writes_input_unless_nan_out", "view", "inside the view, element ("),
])
def test_a_write_anywhere_in_an_inputs_buffer_is_named(libraries, name, where, words):
    v = verify(libraries, name)
    assert (v.ok, v.kind) == (False, "input_modified"), v.as_feedback()
    assert v.message.startswith(f"the kernel wrote into its input 'x' (inputs are const): {words}"), v.message
    assert v.details["written"]["input"] == "x" and v.details["written"]["where"] == where
    if where == "gap":  # the counterexample is the strided view the kernel saw, not a contiguous copy
        assert v.details["args"]["x"]["contiguous"] is False
    if name == "exp_writes_input_unless_nan_out":  # caught on a call whose output was not NaN-filled
        assert v.details["output_prefill"] != "nan"


def test_a_kernel_right_only_into_a_nan_output_is_rejected(libraries):
    v = verify(libraries, "exp_right_only_into_nan")
    assert (v.ok, v.kind) == (False, "value")
    assert v.details["output_prefill"] in {"garbage", "zeros", "earlier", "bits"}
    assert v.message.endswith("(the output arrived prefilled with " + {
        "garbage": "finite garbage of the result's magnitude", "zeros": "zeros", "earlier": "another example's result",
        "bits": "random bits"}[v.details["output_prefill"]] + "; into a NaN-prefilled output the same input gave the "
        "right answer: the result depends on what the output held before the call)")


def test_an_element_whose_answer_is_nan_cannot_be_left_to_a_nan_prefill(libraries):
    v = verify(libraries, "exp_skips_nan_answers")
    assert (v.ok, v.kind) == (False, "value")
    assert v.details["expected"] == "nan" and v.details["got"] != "nan"
    assert "; that element still holds what the output held before the call (prefilled with " in v.message
    assert "): the kernel did not write it" in v.message


def test_a_counterexample_shows_the_layout_the_kernel_saw(libraries):
    v = verify(libraries, "exp_ignores_strides")
    assert (v.ok, v.kind) == (False, "value")
    x = v.details["args"]["x"]
    assert x["contiguous"] is False
    assert {"offset_elems", "buffer_elems", "address_mod_64", "strides_elems"} <= set(x)
    assert x["buffer_elems"] > numel(x)  # the view inside its larger buffer, margins included
    assert v.details["call"].split(" of ")[0] in {"1", "2", "3"}


def test_the_heap_is_perturbed_so_no_call_finds_the_last_ones_data(libraries, monkeypatch):
    v = verify(libraries, "exp_heap_stash")
    assert (v.ok, v.kind) == (True, "pass"), v.as_feedback()
    # Without the perturbation the same kernel finds its tag in a reused chunk: the check is real.
    from opgen.verify import harness
    monkeypatch.setattr(harness, "malloc_perturb", lambda seed: 0)
    v = verify(libraries, "exp_heap_stash")
    assert (v.ok, v.kind) == (False, "value"), v.as_feedback()
    assert "got 0.0" in v.message


def test_threads_sets_the_kernels_thread_count_for_openmp_and_rust(libraries):
    spec, overload, _ = CANDIDATES["add_reports_threads"]
    from opgen.targets.catalog import build_any
    (rust,) = build_any([build_job(spec, overload, RUST_THREADS, "rust")])
    assert rust.ok, rust.diagnostics
    for library in (libraries["add_reports_threads"], rust.library):
        for threads in (1, 11):
            v = verify_library(library, c_symbol(spec.op, overload.name), spec.path, overload.name, seed=SEED,
                               max_examples=5, threads=threads)
            assert (v.ok, v.kind) == (False, "value")
            assert f", got {threads}.0;" in v.message, v.message


def test_unwritten_output_is_caught_by_the_nan_poison(libraries):
    v = verify(libraries, "exp_leaves_last_unwritten")
    assert (v.ok, v.kind) == (False, "value")
    assert "got nan" in v.message
    assert v.details["got"] == "nan"
    # The element left unwritten is the last one.
    shape = v.details["args"]["x"]["shape"]
    assert list(v.details["index"]) == [s - 1 for s in shape]


def test_a_segfault_is_a_crash_naming_the_signal_and_the_input(libraries):
    v = verify(libraries, "exp_segfaults")
    assert (v.ok, v.kind) == (False, "crash")
    assert v.message == ("the kernel process died with SIGSEGV: invalid memory access (segmentation fault: "
                         "an out-of-bounds or null pointer access) on the input shown")
    assert numel(v.details["args"]["x"]) > 3  # the triggering input, not a later or earlier one
    assert "Counterexample" in v.as_feedback()


def test_an_infinite_loop_is_stopped(libraries):
    limits = Limits(wall_seconds=5, cpu_seconds=3)
    v = verify(libraries, "exp_spins", limits=limits)
    assert not v.ok
    assert (v.kind, v.message) in {
        ("crash", "the kernel process died with SIGXCPU: it used more than 3 s of CPU time on the input shown"),
        ("timeout", "the kernel ran past the 5 s wall-clock limit (an infinite loop, or far too slow)"),
    }
    assert numel(v.details["args"]["x"]) > 3
    assert v.seconds < 15


def test_exit_from_the_kernel_leaves_no_verdict_and_is_a_crash(libraries):
    v = verify(libraries, "exp_exits")
    assert (v.ok, v.kind) == (False, "crash")
    assert v.message == ("the verification process exited with status 0 without a verdict "
                         "(the kernel called exit/abort, or ran out of memory)")
    assert numel(v.details["args"]["x"]) > 3


def test_results_that_depend_on_call_history_are_rejected(libraries):
    v = verify(libraries, "exp_call_counter")
    assert not v.ok
    assert v.kind in {"value", "nondeterministic"}
    if v.kind == "value":  # the second call, on fresh copies, disagreed with the reference
        assert "first mismatch at index" in v.message
    assert numel(v.details["args"]["x"]) >= 1


def test_the_long_run_check_catches_a_kernel_that_goes_wrong_after_thousands_of_calls(libraries):
    assert verify(libraries, "exp_time_bomb").ok  # a development-sized run never gets there
    v = verify(libraries, "exp_time_bomb", examples=0, mode="soak", options={"calls": 4000})
    assert (v.ok, v.kind) == (False, "value")
    first = re.match(r"call (\d+) of a sequence of 4000 \(the long-run check\): first mismatch at index", v.message)
    assert first and 3000 < int(first.group(1)) <= 3010, v.message  # the 3001st call of the kernel, give or take
    ok = verify(libraries, "exp_ok", examples=0, mode="soak", options={"calls": 2000})
    assert ok.ok and ok.examples == 2000


def test_wrong_error_kind_is_rejected(libraries):
    v = verify(libraries, "add_wrong_error")
    assert (v.ok, v.kind) == (False, "error")
    assert v.message == ("expected OverflowError (declared by the spec) but the kernel raised "
                         "ValueError: sum out of range")
    assert (v.details["expected"], v.details["got"]) == ("OverflowError", "ValueError")
    a, b = int(v.details["args"]["a"]), int(v.details["args"]["b"])
    assert not -(2**63) <= a + b < 2**63  # the counterexample really overflows


def test_wrapping_instead_of_raising_is_rejected(libraries):
    v = verify(libraries, "add_wraps")
    assert (v.ok, v.kind) == (False, "error")
    assert v.message.startswith("expected OverflowError (declared by the spec) but the kernel returned ")


def test_a_missing_symbol_is_a_load_failure(libraries):
    v = verify_library(libraries["exp_ok"], "opgen_no_such_symbol", EXP.path, "f64", seed=1, max_examples=5)
    assert (v.ok, v.kind) == (False, "load")
    assert "the library does not load or lacks its symbol" in v.message
    assert "opgen_no_such_symbol" in v.message
