"""The static policy scan: every rule has a sample that trips it; honest kernels pass."""

from __future__ import annotations

import pytest

from opgen.targets.cpp.policy import OPENMP_RULE, RULES, check, strip_comments

HEAD = '#include "opgen_kernel.hpp"\n#include <cmath>\n\nnamespace opgen::kernels {\nvoid f() {\n'
TAIL = "}\n}  // namespace opgen::kernels\n"
SAMPLE_LINE = 6  # the line a sample lands on inside HEAD + sample + TAIL

# One statement per rule that a cheating or escaping kernel might contain.
SAMPLES = {
    "asm": '__asm__ volatile("nop");',
    "process": 'system("rm -rf /");',
    "exit": "exit(0);",
    "signal": "signal(11, nullptr);",
    "file": 'FILE* fp = fopen("/etc/passwd", "r");',
    "network": "int s = socket(2, 1, 0);",
    "dynamic-loading": 'void* h = dlopen("libm.so.6", 1);',
    "python": "PyObject* o = nullptr;",
    "environment": 'const char* home = getenv("HOME");',
    "clock": "auto t0 = std::chrono::steady_clock::now();",
    "syscall": "syscall(39);",
    "output": 'printf("%d", 1);',
    "load-time-code": "__attribute__((constructor)) static void init() {}",
    "threads": "std::thread t([] {});",
    "fp-environment": "_mm_setcsr(_mm_getcsr() | 0x8040);",
    "sanitizer-evasion": "bool under_asan = __has_feature(address_sanitizer);",
}

# More spellings of the same escapes: each must still be caught by its rule.
VARIANTS = [
    ("asm", 'asm("int3");'),
    ("process", 'popen("ls", "r");'),
    ("process", "fork();"),
    ("process", "execvp(argv[0], argv);"),
    ("process", "raise(9);"),
    ("exit", "std::abort();"),
    ("sanitizer-evasion", "#if defined(__SANITIZE_ADDRESS__)"),
    ("sanitizer-evasion", '__attribute__((no_sanitize("address"))) void peek();'),
    ("exit", "_Exit(1);"),
    ("exit", "std::terminate();"),
    ("signal", "longjmp(env, 1);"),
    ("file", 'std::ofstream out_file("x.txt");'),
    ("file", 'int fd = open("x", 0);'),
    ("network", "connect(s, addr, len);"),
    ("dynamic-loading", 'dlsym(h, "exp");'),
    ("python", "Py_Initialize();"),
    ("environment", 'setenv("A", "1", 1);'),
    ("clock", "auto t = time(nullptr);"),
    ("clock", "std::random_device rd;"),
    ("clock", "unsigned long long c = __rdtsc();"),
    ("syscall", "mmap(nullptr, 4096, 3, 34, -1, 0);"),
    ("syscall", "mprotect(p, 4096, 7);"),
    ("output", 'std::cout << "hi";'),
    ("output", 'write(1, "x", 1);'),
    ("load-time-code", "__attribute__ ((destructor)) static void fini() {}"),
    ("threads", "pthread_create(&t, nullptr, run, nullptr);"),
    ("threads", "auto fut = std::async([] { return 1; });"),
]

REALISTIC = r"""
#include "opgen_kernel.hpp"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>
#include <immintrin.h>

// Computes exp elementwise. Never call system(), exit() or printf() here; the
// sandbox would reject it. /* nested-looking */ comments are fine too.
namespace opgen::kernels {
namespace {
/* A helper: offset of element i in a strided view (no fopen, no getenv, no time()). */
int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}
}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  int64_t runtime_steps = 0;  // identifiers that merely contain rule words are fine
  double write_value = 0.0, opened = 0.0, timestamp = 0.0;
  if (x.is_contiguous()) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      __m256d v = _mm256_loadu_pd(xp + i);
      alignas(32) double tmp[4];
      _mm256_store_pd(tmp, v);
      for (int j = 0; j < 4; ++j) o[i + j] = std::exp(tmp[j]);
      ++runtime_steps;
    }
    for (; i < n; ++i) o[i] = std::exp(xp[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = std::exp(xp[offset_of(x, i)]);
  }
  (void)write_value; (void)opened; (void)timestamp;
}

int64_t operator_add__int(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw opgen::Error(opgen::ErrorKind::Overflow, "int too large to add");
  return r;
}

std::string operator_add__str(const std::string& a, const std::string& b) {
  std::string r;
  r.reserve(a.size() + b.size());
  r += a;
  r += b;
  return r;
}
}  // namespace opgen::kernels
"""

MATMUL_OMP = r"""
#include "opgen_kernel.hpp"
#include <omp.h>

namespace opgen::kernels {
void operator_matmul__f64(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  double* o = out.data<double>();
  #pragma omp parallel for collapse(2)
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += a.data<double>()[i * a.stride(-2) + p * a.stride(-1)] * b.data<double>()[p * b.stride(-2) + j * b.stride(-1)];
      o[i * n + j] = s;
    }
}
}  // namespace opgen::kernels
"""


def wrap(statement: str) -> str:
    return HEAD + statement + "\n" + TAIL


def test_every_rule_has_a_sample():
    assert set(SAMPLES) == {rule for rule, _, _ in RULES}


@pytest.mark.parametrize("rule", [r for r, _, _ in RULES])
def test_each_rule_rejects_its_sample(rule):
    violations = check(wrap(SAMPLES[rule]), threads_allowed=False)
    assert [v.rule for v in violations] == [rule]
    v = violations[0]
    why = dict((r, w) for r, _, w in RULES)[rule]
    assert (v.line, v.why) == (SAMPLE_LINE, why)
    assert str(v) == f"line {SAMPLE_LINE}: `{SAMPLES[rule]}`: {why} [rule {rule}]"


@pytest.mark.parametrize(("rule", "statement"), VARIANTS, ids=[f"{r}:{s[:20]}" for r, s in VARIANTS])
def test_variants_are_caught_by_their_rule(rule, statement):
    rules = {v.rule for v in check(wrap(statement), threads_allowed=True)}
    assert rule in rules


def test_a_realistic_kernel_passes():
    assert check(REALISTIC, threads_allowed=False) == []


def test_comments_do_not_trip_rules():
    source = wrap('// system("ls"); exit(1); printf("x");\n/* fopen("f");\n   getenv("HOME"); */')
    assert check(source, threads_allowed=False) == []


def test_code_after_a_block_comment_is_still_checked():
    source = wrap('/* harmless */ system("ls");')
    assert [(v.rule, v.line) for v in check(source, threads_allowed=False)] == [("process", SAMPLE_LINE)]


def test_strip_comments_keeps_line_numbers():
    source = "a\n/* x\ny */ b // z\nc"
    assert strip_comments(source).splitlines() == ["a", "    ", "     b     ", "c"]


def test_openmp_is_rejected_without_threads():
    violations = check(MATMUL_OMP, threads_allowed=False)
    rules = [(v.rule, v.line) for v in violations]
    assert ("include", 3) in rules  # <omp.h> is only on the list when threads are allowed
    assert ("openmp", 9) in rules
    openmp = next(v for v in violations if v.rule == "openmp")
    assert openmp.why == OPENMP_RULE[2] == "this operator's spec does not allow threads; remove OpenMP"


def test_openmp_is_accepted_with_threads():
    assert check(MATMUL_OMP, threads_allowed=True) == []


def test_openmp_runtime_calls_are_rejected_without_threads():
    assert [v.rule for v in check(wrap("int t = omp_get_num_threads();"), threads_allowed=False)] == ["openmp"]


def test_threads_other_than_openmp_stay_rejected_when_threads_are_allowed():
    assert [v.rule for v in check(wrap("std::thread t([] {});"), threads_allowed=True)] == ["threads"]


@pytest.mark.parametrize("header", ["fstream", "thread", "cstdio", "iostream", "dlfcn.h", "Python.h", "omp.h"])
def test_a_disallowed_include_is_named(header):
    source = f'#include "opgen_kernel.hpp"\n#include <{header}>\n'
    violations = [v for v in check(source, threads_allowed=False) if v.rule == "include"]
    assert len(violations) == 1
    v = violations[0]
    assert v.line == 2
    assert v.why.startswith(f"header <{header}> is not on the allow-list (")
    assert "cmath" in v.why and "vector" in v.why


def test_quoted_includes_are_checked_too():
    violations = check('#include "opgen_kernel.hpp"\n#include "../../secrets.h"\n', threads_allowed=False)
    assert [(v.rule, v.line) for v in violations] == [("include", 2)]
    assert "<../../secrets.h>" in violations[0].why


def test_violations_are_sorted_by_line():
    source = wrap('printf("a");\nexit(1);\nasm("nop");')
    assert [(v.line, v.rule) for v in check(source, threads_allowed=False)] == [
        (SAMPLE_LINE, "output"), (SAMPLE_LINE + 1, "exit"), (SAMPLE_LINE + 2, "asm")]


@pytest.mark.parametrize(
    "statement",
    [
        'auto url = "http://example.com"; system("ls");',
        'auto s = "/*"; system("ls"); auto t = "*/";',
        "char q = '\"'; auto s = \"//\"; system(\"x\");",
        "int x = 1'000; const char* s = \"'//\"; system(\"ls\");",
    ],
    ids=["url-in-string", "block-opener-in-string", "quote-char", "digit-separator"],
)
def test_comment_markers_inside_literals_do_not_hide_code(statement):
    assert "process" in {v.rule for v in check(wrap(statement), threads_allowed=False)}


def test_string_literals_are_not_comments():
    assert 'auto url = "http://example.com";' in strip_comments('auto url = "http://example.com"; // note')


def test_comment_markers_inside_raw_strings_do_not_hide_code():
    assert "process" in {v.rule for v in check(wrap('auto s = R"(" // )"; system("ls");'), threads_allowed=False)}


# --- the compiled object: imports on an allow-list, no state, no hand-placed machine code ----

from opgen.targets.cpp.policy import audit_machine_code, audit_object, audit_state  # noqa: E402


def imports(*names):
    return [(n, n) for n in names]


def test_what_computing_needs_is_imported_freely():
    honest = imports("expf", "sincos", "__exp_finite", "malloc", "free", "posix_memalign", "memcpy", "strlen",
                     "__stack_chk_fail", "__memcpy_chk", "_Unwind_Resume", "__cxa_throw", "__gxx_personality_v0")
    honest += [("_Znwm", "operator new(unsigned long)"), ("_ZdlPvSt11align_val_t", "operator delete(void*, std::align_val_t)"),
               ("_ZNSt13runtime_errorC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
                "std::runtime_error::runtime_error(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)"),
               ("_ZSt20__throw_length_errorPKc", "std::__throw_length_error(char const*)")]
    assert audit_object(honest, threads_allowed=False) == []


@pytest.mark.parametrize("symbol, rule, message", [
    ("getrlimit", "environment", "reading or changing the environment (variables, process ids, limits"),
    ("program_invocation_name", "environment", "the program's name"),
    ("__libc_start_main", "environment", "host facts"),
    ("getcwd", "file", "the working directory, the mount table"),
    ("setmntent", "file", "file access"),
    ("__asan_init", "sanitizer-evasion", "may not detect or switch off the sanitizers"),
    ("malloc_usable_size", "not-allowed", "a kernel may import only what computing needs"),
    ("qsort_r_unheard_of", "not-allowed", "a kernel may import only what computing needs"),
])
def test_anything_else_is_refused_naming_the_symbol(symbol, rule, message):
    (v,) = audit_object(imports(symbol), threads_allowed=True)
    assert (v.rule, v.symbol) == (rule, symbol)
    assert f"imports `{symbol}`" in str(v) and message in str(v) and f"[rule {rule}]" in str(v)


def test_openmp_is_allowed_only_with_threads_and_its_clock_never():
    assert audit_object(imports("GOMP_parallel", "omp_get_thread_num"), threads_allowed=True) == []
    assert [v.rule for v in audit_object(imports("GOMP_parallel"), threads_allowed=False)] == ["threads"]
    assert [v.rule for v in audit_object(imports("omp_get_wtime"), threads_allowed=True)] == ["clock"]
    # OpenMP is the only threading runtime a C++ kernel gets, even where threads are allowed.
    assert [v.rule for v in audit_object(imports("pthread_create"), threads_allowed=True)] == ["threads"]


def test_writable_data_the_kernel_owns_is_refused_naming_it():
    (v,) = audit_state([(".bss", "_ZN12_GLOBAL__N_15callsE", "(anonymous namespace)::calls", "LOCAL", 8)])
    assert "owns writable data `(anonymous namespace)::calls` (8 bytes in .bss)" in v
    assert "use locals for scratch space, and constexpr" in v and v.endswith("[rule global-state]")
    (anon,) = audit_state([], [(".data", 16)])
    assert "16 bytes of writable data in .data that no symbol names" in anon and "[rule global-state]" in anon


def test_the_runtimes_own_data_the_eh_cells_and_gpu_shared_memory_are_not_the_kernels():
    runtime = (".bss._ZN9opgen_emu9schedulerE", "_ZN9opgen_emu9schedulerE", "opgen_emu::scheduler", "UNIQUE", 8)
    shared = ("opgen_shared", "_ZZ1kvE4tile", "k()::tile", "LOCAL", 1024)
    eh = (".data.rel.local.DW.ref.__gxx_personality_v0", "DW.ref.__gxx_personality_v0", "DW.ref.__gxx_personality_v0",
          "WEAK", 8)
    assert audit_state([runtime, shared, eh], baseline={"_ZN9opgen_emu9schedulerE"}, shared_section="opgen_shared") == []
    # A local symbol is never the runtime's (the linker does not merge it), and the shared
    # section is the GPU execution layer's only: a C++ kernel's statics there are its own.
    local_namesake = runtime[:3] + ("LOCAL", 8)
    assert len(audit_state([local_namesake], baseline={"_ZN9opgen_emu9schedulerE"})) == 1
    assert len(audit_state([shared])) == 1


def test_system_calls_and_bytes_outside_functions_are_refused():
    found = audit_machine_code([("f()", ".text", 0x10, "syscall")], [(".fastpath", 0, 6, "mov    %rdi,%rax")],
                               [(".text", "kRaw", "OBJECT")])
    assert any("function `f()` executes `syscall` (.text+0x10)" in f for f in found)
    assert any("6 executable bytes in .fastpath at 0x0 outside every function" in f for f in found)
    assert any("places `kRaw` (OBJECT, not a function) in the executable section .text" in f for f in found)
    assert all(f.endswith("[rule machine-code]") for f in found)
