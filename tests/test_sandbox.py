"""The sandbox around a candidate kernel, proven with kernels that try to break out.

Runtime layers (the executor process with its seccomp filter, Landlock and dropped
capabilities; the network namespace; the output cap; resource limits; signal deaths;
a verdict the candidate cannot write) are exercised by calling the harness directly,
bypassing the static source policy that would otherwise reject these kernels before
they were built. The link-time import audit and the sanitizer run are exercised
through the gate (``admission.run_gate`` / ``admission.audit``). Every test here
fails if its layer is removed: without the filter the forking kernel computes the right
answer and passes; without the output cap the flooding kernel runs into the wall-clock
limit; without the runner/executor split the forged verdict is believed; without
``-z defs`` the BLAS call links; without the sanitizer run the over-reading kernel is
admitted.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from opgen.gate import admission
from opgen.spec.abi import c_symbol
from opgen.gate.admission import GateSettings, audit, build_job, run_gate
from opgen.build.cpp import build, inspect_object, sanitizer_job, sanitizer_runtime
from opgen.targets.cpp.policy import audit_object
from opgen.spec.model import load_all
from opgen.verify import sandbox
from opgen.verify.harness import Limits, Verdict, verify_library

ROOT = Path(__file__).resolve().parents[1]
SPECS = load_all(ROOT / "specs")
EXAMPLES = 20
SEED = 4242
EXP = SPECS["numpy.exp"]
EXP_F64 = EXP.overload("f64")
ADD = SPECS["operator.add"]
ADD_INT = ADD.overload("int")
QUICK = GateSettings(dev_examples=EXAMPLES, admission_examples=EXAMPLES, admission_runs=1, sanitizer_examples=EXAMPLES)
TINY = GateSettings(dev_examples=10, admission_examples=10, admission_runs=1, sanitizer_examples=10)

# numpy.exp f64 over a strided view. {head} goes at namespace scope (includes, declarations),
# {pre} runs first in the kernel, {post} after each element.
EXP_TEMPLATE = """
#include "opgen_kernel.hpp"
#include <cmath>
{head}
namespace opgen::kernels {{
void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {{
  const int nd = x.ndim();
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  {pre}
  for (int64_t i = 0; i < n; ++i) {{
    int64_t rest = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {{
      off += (rest % x.size(d)) * x.stride(d);
      rest /= x.size(d);
    }}
    o[i] = std::exp(xp[off]);
  }}
}}
}}  // namespace opgen::kernels
"""


def exp_kernel(pre: str = "", head: str = "") -> str:
    return EXP_TEMPLATE.format(pre=pre, head=head)


ADD_UB = """
#include "opgen_kernel.hpp"

namespace opgen::kernels {
int64_t operator_add__int(int64_t a, int64_t b) {
  volatile int32_t mix = static_cast<int32_t>(a) * static_cast<int32_t>(b);  // overflows: UB, never used
  (void)mix;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw opgen::Error(opgen::ErrorKind::Overflow, "int too large");
  return r;
}
}  // namespace opgen::kernels
"""

# Runtime escapes (run with the harness directly; the static policy would stop them earlier).
RUNTIME = {
    "forks": exp_kernel(head="#include <unistd.h>", pre="if (n > 3) { if (fork() == 0) _exit(0); }"),
    "execs_via_syscall": exp_kernel(
        head="#include <unistd.h>\n#include <sys/syscall.h>",
        pre='if (n > 3) { char* argv[] = {(char*)"true", nullptr}; syscall(SYS_execve, "/bin/true", argv, nullptr); }'),
    "opens_socket": exp_kernel(
        head="#include <sys/socket.h>\n#include <netinet/in.h>\n#include <unistd.h>",
        pre="if (n > 3) { int s = socket(AF_INET, SOCK_STREAM, 0); if (s >= 0) { sockaddr_in a{}; a.sin_family = AF_INET; "
            "a.sin_port = htons(80); a.sin_addr.s_addr = htonl(0x01010101); connect(s, (sockaddr*)&a, sizeof a); close(s); } }"),
    "forks_at_load_time": exp_kernel(
        head="#include <unistd.h>\n__attribute__((constructor)) static void escape() { if (fork() == 0) _exit(0); }"),
    "floods_stdout": exp_kernel(
        head="#include <cstdio>",
        pre='if (n > 3) { for (;;) std::fputs("spam spam spam spam spam spam spam spam spam spam spam spam\\n", stdout); }'),
    "memory_bomb": exp_kernel(
        head="#include <cstring>\n#include <vector>",
        pre="if (n > 3) { static std::vector<char*> keep; for (;;) { char* p = new char[64 << 20]; "
            "std::memset(p, 1, 64 << 20); keep.push_back(p); } }"),
    "reads_past_the_end": exp_kernel(pre="if (x.is_contiguous()) { volatile double sink = xp[n]; (void)sink; }"),
    "divides_by_zero": exp_kernel(pre="if (n > 3) { volatile int64_t zero = 0; volatile int64_t q = n / zero; (void)q; }"),
    "traps": exp_kernel(pre="if (n > 3) __builtin_trap();"),
    "aborts": exp_kernel(head="#include <cstdlib>", pre="if (n > 3) std::abort();"),
    "raises_sigbus": exp_kernel(head="#include <csignal>", pre="if (n > 3) std::raise(SIGBUS);"),
    "writes_outside": exp_kernel(
        head="#include <cstdio>",
        pre='if (n > 3) { std::FILE* f = std::fopen("/tmp/opgen-landlock-probe.txt", "w"); '
            'if (f) { std::fputs("escaped", f); std::fclose(f); } }'),
    # Forge a passing verdict where the runner keeps it (and where it would be, in its own
    # directory), then end the process before any comparison.
    "forges_verdict": exp_kernel(
        head="#include <cstdio>\n#include <unistd.h>",
        pre='static const char* v = "{\\"ok\\": true, \\"examples\\": 20, \\"worst_abs_error\\": 0.0, '
            '\\"worst_rel_error\\": 0.0}"; '
            'for (const char* p : {"result.json", "../result.json"}) { std::FILE* f = std::fopen(p, "w"); '
            'if (f) { std::fputs(v, f); std::fclose(f); } } _exit(0);'),
    "lifts_its_memory_limit": exp_kernel(
        head="#include <sys/resource.h>",
        pre="static bool once = false; if (!once) { once = true; rlimit r{RLIM_INFINITY, RLIM_INFINITY}; "
            "setrlimit(RLIMIT_AS, &r); }"),
    "garbles_the_reply_pipe": exp_kernel(
        head="#include <unistd.h>",
        pre='if (n > 3) { for (int fd = 3; fd < 64; ++fd) { if (write(fd, "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x7f", 8)) {} } }'),
}
PROBE = Path("/tmp/opgen-landlock-probe.txt")


@pytest.fixture(scope="module")
def libraries() -> dict[str, Path]:
    results = build([build_job(EXP, EXP_F64, src) for src in RUNTIME.values()])
    for name, r in zip(RUNTIME, results):
        assert r.ok, f"{name}: {r.diagnostics}"
    return {name: r.library for name, r in zip(RUNTIME, results)}


def run(libraries, name: str, limits: Limits = Limits(cpu_seconds=20, wall_seconds=60), **kw) -> Verdict:
    return verify_library(libraries[name], c_symbol(EXP.op, "f64"), EXP.path, "f64", seed=SEED,
                          max_examples=EXAMPLES, limits=limits, **kw)


def numel(arg: dict) -> int:
    n = 1
    for s in arg["shape"]:
        n *= s
    return n


def netns_works() -> bool:
    probe = subprocess.run(["readlink", "/proc/self/ns/net"], preexec_fn=sandbox.enter_network_namespace,
                           capture_output=True, text=True)
    return probe.stdout.strip() not in ("", sandbox.network_namespace())


# --- seccomp: process creation and networking kill the process -----------------------------

@pytest.mark.parametrize("name", ["forks", "execs_via_syscall", "opens_socket"])
def test_forbidden_system_calls_kill_the_candidate_with_sigsys(libraries, name):
    v = run(libraries, name)
    assert (v.ok, v.kind) == (False, "forbidden_syscall"), v.as_feedback()
    assert v.message.startswith("the kernel process died with SIGSYS: forbidden system call")
    assert v.message.endswith("on the input shown")
    assert numel(v.details["args"]["x"]) > 3  # the input that made the call
    assert v.sandbox["seccomp"]["installed"] is True
    assert v.sandbox["seccomp"]["action"] == "SECCOMP_RET_KILL_PROCESS"


def test_static_initializers_already_run_inside_the_filter(libraries):
    v = run(libraries, "forks_at_load_time")
    assert (v.ok, v.kind) == (False, "forbidden_syscall"), v.as_feedback()
    assert "args" not in v.details  # it died while loading, before any example
    assert not v.message.endswith("on the input shown")


def test_a_socket_never_reaches_the_network(libraries):
    v = run(libraries, "opens_socket")
    assert v.kind == "forbidden_syscall"
    network = v.sandbox["network"]
    if netns_works():
        assert network == "namespace + seccomp socket block"
    else:
        assert network.startswith("seccomp socket block")


def test_the_network_namespace_has_no_route_even_without_the_filter():
    if not netns_works():
        pytest.skip("unshare(CLONE_NEWNET) is refused here; the seccomp socket block is the fallback")
    code = ("import socket, sys\ns = socket.socket()\ns.settimeout(3)\n"
            "try:\n    s.connect(('1.1.1.1', 80))\nexcept OSError as e:\n    print(e.errno)\n    sys.exit(0)\nsys.exit(1)")
    probe = subprocess.run([sys.executable, "-c", code], preexec_fn=sandbox.enter_network_namespace,
                           capture_output=True, text=True, timeout=30)
    assert probe.returncode == 0, probe.stdout + probe.stderr
    assert int(probe.stdout) == 101  # ENETUNREACH: only a downed loopback exists


def test_threads_survive_the_filter_and_clone3_falls_back():
    code = ("import threading, numpy as np\nfrom opgen.verify import sandbox\n"
            "assert sandbox.install_seccomp()['installed']\n"
            "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
            "a = np.random.rand(200, 200); print(float((a @ a).sum()) > 0)\n"
            "import os; os.fork()\nprint('forked')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.stdout.strip() == "True", p.stderr
    assert p.returncode == -31  # SIGSYS at the fork, after threads and BLAS worked


def test_the_filter_checks_the_architecture_first():
    prog = sandbox.filter_program(1234)
    ins = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    assert ins[0] == (sandbox.BPF_LD_W_ABS, 0, 0, sandbox.OFF_ARCH)
    assert ins[1][0] == sandbox.BPF_JEQ_K and ins[1][3] == sandbox.AUDIT_ARCH_X86_64
    assert ins[-1] == (sandbox.BPF_RET_K, 0, 0, sandbox.SECCOMP_RET_KILL_PROCESS)
    assert any(op == sandbox.BPF_JEQ_K and k == 1234 for op, _, _, k in ins)  # signals: to itself only


def test_other_architectures_run_without_a_filter_and_say_so(monkeypatch):
    monkeypatch.setattr(sandbox.platform, "machine", lambda: "aarch64")
    state = sandbox.install_seccomp()
    assert state["installed"] is False
    assert "x86-64" in state["note"] and "aarch64" in state["note"]


def test_a_forged_verdict_is_never_believed(libraries):
    v = run(libraries, "forges_verdict")
    assert not v.ok, "a verdict written by the candidate was believed"
    assert v.kind == "forbidden_syscall", v.as_feedback()  # opening a file for writing
    assert "args" in v.details  # the runner, not the candidate, says which input it was


def test_a_kernel_may_not_change_its_own_limits(libraries):
    v = run(libraries, "lifts_its_memory_limit")
    assert (v.ok, v.kind) == (False, "forbidden_syscall"), v.as_feedback()
    assert v.message.startswith("the kernel process died with SIGSYS: forbidden system call")


def test_garbage_on_the_reply_pipe_is_a_rejection_not_a_pass(libraries):
    v = run(libraries, "garbles_the_reply_pipe")
    assert not v.ok
    assert v.kind == "tampering", v.as_feedback()
    assert "did it tamper with the executor?" in v.message


def test_opening_a_file_for_writing_kills_the_candidate(libraries):
    PROBE.unlink(missing_ok=True)
    v = run(libraries, "writes_outside")
    assert (v.ok, v.kind) == (False, "forbidden_syscall"), v.as_feedback()
    assert not PROBE.exists(), "the kernel wrote outside its working directory"
    assert numel(v.details["args"]["x"]) > 3


def test_landlock_confines_writes_to_the_working_directory(tmp_path):
    """Behind the filter: even a write the filter missed lands only in the executor's directory."""
    if sandbox.landlock_abi() < 1:
        pytest.skip("this kernel has no Landlock; the seccomp filter alone stops writes")
    inside, outside = tmp_path / "inside", tmp_path / "outside.txt"
    inside.mkdir()
    code = (f"from pathlib import Path\nfrom opgen.verify import sandbox\n"
            f"print(sandbox.install_landlock(Path({str(inside)!r}))['installed'])\n"
            f"open({str(inside / 'ok.txt')!r}, 'w').write('x')\n"
            f"try:\n    open({str(outside)!r}, 'w')\nexcept PermissionError:\n    print('denied')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.stdout.split() == ["True", "denied"], p.stderr
    assert (inside / "ok.txt").exists() and not outside.exists()


def test_the_executor_reports_every_layer_it_installed(libraries):
    v = run(libraries, "reads_past_the_end")  # an otherwise passing kernel
    assert v.ok
    box = v.sandbox
    assert box["seccomp"]["installed"] is True and "writing files" in box["seccomp"]["denied_groups"]
    assert box["capabilities"]["dropped"] is True
    assert box["landlock"]["installed"] is (sandbox.landlock_abi() >= 1)


# --- output, memory, signals -------------------------------------------------------------

def test_flooding_stdout_is_stopped_by_the_file_size_limit(libraries):
    v = run(libraries, "floods_stdout", limits=Limits(cpu_seconds=20, wall_seconds=60, file_size_bytes=1 << 20))
    assert (v.ok, v.kind) == (False, "output_flood"), v.as_feedback()
    assert v.message == (f"the kernel flooded its output past {1 << 20} bytes (kernels must not print); "
                         "the file-size limit stopped it with SIGXFSZ on the input shown")
    assert "spam spam" in v.details["output_tail"]
    assert numel(v.details["args"]["x"]) > 3
    assert v.seconds < 30


def test_a_memory_bomb_is_stopped_by_the_address_space_limit(libraries):
    limit = 3 << 29  # 1.5 GiB: room for Python and NumPy, not for the bomb
    v = run(libraries, "memory_bomb", limits=Limits(cpu_seconds=20, wall_seconds=60, address_space_bytes=limit))
    assert not v.ok
    if v.kind == "error":  # the usual way: operator new throws, the shim reports it
        assert v.message.endswith(f"std::bad_alloc (it ran out of memory under the sandbox's {limit}-byte "
                                  "address-space limit)"), v.message
        assert numel(v.details["args"]["x"]) > 3
    else:  # or Python itself found no memory left, or a limit killed the process
        assert v.kind in {"crash", "harness"}, v.as_feedback()
        assert any(w in v.message for w in ("MemoryError", "SIGKILL", "SIGSEGV", "without a verdict")), v.message


@pytest.mark.parametrize("name, signal_name, meaning", [
    ("divides_by_zero", "SIGFPE", "arithmetic exception"),
    ("traps", "SIGILL", "illegal instruction"),
    ("aborts", "SIGABRT", "it aborted"),
    ("raises_sigbus", "SIGBUS", "bus error"),
])
def test_every_signal_death_names_the_signal_its_meaning_and_the_input(libraries, name, signal_name, meaning):
    v = run(libraries, name)
    assert (v.ok, v.kind) == (False, "crash"), v.as_feedback()
    assert v.message.startswith(f"the kernel process died with {signal_name}: {meaning}")
    assert v.message.endswith("on the input shown")
    assert numel(v.details["args"]["x"]) > 3


def test_limits_say_what_binds_and_what_does_not():
    d = Limits().as_dict()
    assert d["processes"] == Limits().processes and d["core_dumps"] == 0
    assert d["output_bytes"] == d["file_size_bytes"]
    if os.geteuid() == 0:
        assert "does not bind root" in d["processes_note"] and "seccomp" in d["processes_note"]
    san = Limits().for_sanitizer()
    assert san.address_space_bytes is None and san.heap_bytes == Limits().address_space_bytes
    assert san.cpu_seconds == Limits().cpu_seconds and san.wall_seconds == Limits().wall_seconds


# --- sanitizer run -------------------------------------------------------------------------

needs_asan = pytest.mark.skipif(sanitizer_runtime() is None, reason="no libasan for this compiler")


@needs_asan
def test_a_heap_overread_the_normal_run_misses_is_caught_by_asan(libraries):
    plain = run(libraries, "reads_past_the_end")
    assert plain.ok, plain.as_feedback()  # reading one element past the buffer goes unnoticed
    gate = run_gate(EXP, EXP_F64, RUNTIME["reads_past_the_end"], QUICK, fresh_seeds=[1])
    assert (gate.ok, gate.stage) == (False, "sanitizer"), gate.feedback
    assert gate.sanitizer.kind == "sanitizer"
    assert gate.sanitizer.message.startswith("AddressSanitizer: heap-buffer-overflow, READ of size 8 (")
    assert "0 bytes to the right of" in gate.feedback
    assert "first frame in the kernel: opgen::kernels::numpy_exp__f64" in gate.feedback
    assert gate.sanitizer.details["args"]["x"]["contiguous"] is True


@needs_asan
def test_the_sanitizer_run_caps_memory_without_an_address_space_limit(libraries):
    (asan,) = build([sanitizer_job(build_job(EXP, EXP_F64, RUNTIME["memory_bomb"]))])
    limits = Limits(cpu_seconds=20, wall_seconds=60, heap_bytes=3 << 29)
    v = verify_library(asan.library, c_symbol(EXP.op, "f64"), EXP.path, "f64", seed=SEED, max_examples=EXAMPLES,
                       limits=limits, sanitizer_runtime=sanitizer_runtime())
    assert (v.ok, v.kind) == (False, "crash"), v.as_feedback()  # the runner watches the executor's resident memory
    assert v.message.startswith("the kernel process was killed: it used ")
    assert v.message.endswith("MiB of resident memory, over the 1536 MiB limit (a memory bomb) on the input shown")
    assert numel(v.details["args"]["x"]) > 3


@needs_asan
def test_signed_overflow_is_caught_by_ubsan():
    (plain,) = build([build_job(ADD, ADD_INT, ADD_UB)])
    v = verify_library(plain.library, c_symbol(ADD.op, "int"), ADD.path, "int", seed=SEED, max_examples=EXAMPLES)
    assert v.ok, v.as_feedback()  # the overflowed sum is never returned
    gate = run_gate(ADD, ADD_INT, ADD_UB, QUICK, fresh_seeds=[1])
    assert (gate.ok, gate.stage) == (False, "sanitizer"), gate.feedback
    assert gate.sanitizer.kind == "sanitizer"
    assert "signed integer overflow" in gate.sanitizer.message
    assert "at kernel.cpp:6:" in gate.sanitizer.message  # file:line of the product, build paths removed
    assert ".opgen-cache" not in gate.feedback


# --- link-time import audit and load-time code ----------------------------------------------

def audited(source: str, spec=EXP, overload=EXP_F64) -> tuple[object, str]:
    (result,) = build([build_job(spec, overload, source)])
    rejected, _ = audit(spec, overload, result)
    return result, rejected.feedback if rejected else ""


def test_a_static_initializer_is_rejected_as_load_time_code():
    source = exp_kernel(head="#include <vector>\nstatic const std::vector<double> kTable(16, 1.0);")
    gate = run_gate(EXP, EXP_F64, source, QUICK)
    assert (gate.ok, gate.stage) == (False, "policy"), gate.feedback
    assert "non-empty .init_array section" in gate.feedback
    assert "code that runs at load time" in gate.feedback
    assert "[rule load-time-code]" in gate.feedback


def test_an_extern_python_api_call_is_rejected_by_the_import_audit():
    source = exp_kernel(head='extern "C" int PyRun_SimpleString(const char*);',
                        pre='if (n == 12345) PyRun_SimpleString("import os");')
    result, feedback = audited(source)
    assert "the compiled kernel imports `PyRun_SimpleString`: calling into Python" in feedback
    assert "[rule python]" in feedback
    assert not result.ok  # and -z defs refused to link it anyway
    gate = run_gate(EXP, EXP_F64, source, QUICK)
    assert (gate.ok, gate.stage) == (False, "policy")


def test_an_extern_blas_call_is_an_unresolved_symbol():
    source = exp_kernel(head='extern "C" void cblas_dscal(int, double, double*, int);',
                        pre="if (n == 12345) cblas_dscal(0, 1.0, o, 1);")
    result, feedback = audited(source)
    assert not result.ok and "undefined reference" in result.diagnostics  # -z defs
    assert "the kernel uses `cblas_dscal`, which no library it may link against provides" in feedback
    assert "[rule unresolved-symbol]" in feedback


def test_an_obfuscated_fork_passes_the_source_scan_but_not_the_import_audit():
    source = exp_kernel(head='#define JOIN(a, b) a##b\nextern "C" int JOIN(fo, rk)(void);',
                        pre="if (n == 12345) JOIN(fo, rk)();")
    assert admission.check_policy(EXP, EXP_F64, source) is None  # the regexes see no fork(
    gate = run_gate(EXP, EXP_F64, source, QUICK)
    assert (gate.ok, gate.stage) == (False, "policy"), gate.feedback
    assert "the compiled kernel imports `fork`: starting or waiting for processes is not allowed [rule process]" in gate.feedback


def test_openmp_imports_need_a_spec_that_allows_threads():
    imports = [("GOMP_parallel", "GOMP_parallel"), ("omp_get_thread_num", "omp_get_thread_num"), ("exp", "exp")]
    assert audit_object(imports, threads_allowed=True) == []
    assert [v.rule for v in audit_object(imports, threads_allowed=False)] == ["threads", "threads"]


# --- no false rejections ---------------------------------------------------------------------

def shipped_sources() -> list[tuple[str, str, str, Path]]:
    out = []
    for path in sorted((ROOT / "generated" / "cpp").glob("*/*/kernel.cpp")):
        overload = path.parts[-2].partition("@")[0]  # <overload>@<variant> holds a variant
        out.append((path.parts[-3], overload, "generated", path))
    for path in sorted((ROOT / "answers" / "cpp").glob("*.cpp")):
        op, overload = path.stem.split("__")
        out.append((op, overload.partition("@")[0], "answers", path))
    return [s for s in out if s[0] in SPECS]


def audit_sample() -> list[tuple[str, str, str, Path]]:
    """One shipped C++ kernel per op and variant (a variant, @threaded or @dpbf16, is where a kernel's
    imports differ: OpenMP, intrinsics' helpers): 135 of the 485 distinct sources. Every shipped kernel
    met the audit at admission, and ``opgen nightly`` (its gate re-run on every registry entry) audits
    them all again; here the point is that the audit in force does not reject honest kernels of any
    kind, at a quarter of the builds a fresh clone would otherwise compile."""
    picked: dict[tuple[str, str], tuple[str, str, str, Path]] = {}
    for op, o, where, path in shipped_sources():
        variant = (path.parent.name if where == "generated" else path.stem).partition("@")[2]
        picked.setdefault((op, variant), (op, o, where, path))
    return list(picked.values())


def test_the_shipped_kernels_of_every_op_and_variant_pass_the_import_audit():
    sources = audit_sample()
    assert {op for op, *_ in sources} == {op for op, *_ in shipped_sources()}
    jobs = [build_job(SPECS[op], SPECS[op].overload(o), path.read_text()) for op, o, _, path in sources]
    for (op, o, where, path), result, job in zip(sources, build(jobs), jobs):
        assert result.ok, f"{where} {op} {o}: {result.diagnostics}"  # links with -z defs
        info = inspect_object(result.object())
        assert audit_object(info.imports, info.load_time_sections, info.ifuncs, threads_allowed=job.threads) == [], path
        assert info.load_time_sections == () and info.ifuncs == ()


# One kernel of each kind: scalar with declared errors, vectorised tensor, threaded variant,
# strings and lists. Every registry kernel goes through the same gate in tests/test_corpus.py
# (honest kernels admitted) and in the nightly job; here the point is the gate's evidence.
GATE_SAMPLE = {("operator.pow", "int"), ("numpy.exp", "f32"), ("torch.nn.functional.softmax@threaded", "f32"),
               ("opgen.text.wordpiece_encode", "bert_uncased")}


def test_sampled_registry_kernels_pass_the_full_gate():
    """Policy, import audit, sandboxed development and admission runs, and the sanitizer run."""
    sources = [s for s in shipped_sources() if s[2] == "generated"
               and (s[0] + ("@" + s[3].parent.name.partition("@")[2] if "@" in s[3].parent.name else ""), s[1]) in GATE_SAMPLE]
    assert len(sources) == len(GATE_SAMPLE)

    def gate(item):
        op, o, _, path = item
        return item, run_gate(SPECS[op], SPECS[op].overload(o), path.read_text(), TINY, fresh_seeds=[7])

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(gate, sources))
    rejected = [f"{op} {o}: {g.stage}: {g.feedback[:300]}" for (op, o, _, _), g in results if not g.ok]
    assert not rejected, "\n".join(rejected)
    for (op, o, _, _), g in results:
        ev = g.evidence
        assert ev["sanitizer"]["ran"] is (sanitizer_runtime() is not None)
        if ev["sanitizer"]["ran"]:
            assert ev["sanitizer"]["passed"] is True and ev["sanitizer"]["examples"] > 0
            assert ev["sanitizer"]["seed"] == admission.sanitizer_seed(SPECS[op], SPECS[op].overload(o))
        assert ev["sandbox"]["seccomp"]["installed"] is True
        assert ev["import_audit"]["load_time_sections"] == []
