"""Static policy: what a candidate source may contain, checked before it is compiled.

The sandbox is the real guarantee; this check rejects the obvious escapes early with a
reason the LLM can act on (and keeps such code from ever being built on a developer's
machine). Each rule is a regular expression over the source with comments removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .prompts import ALLOWED_CPP_HEADERS

OPGEN_HEADERS = ("opgen_kernel.hpp", "opgen_abi.h")

# (rule id, pattern, why) - the why is what the LLM reads.
RULES: tuple[tuple[str, str, str], ...] = (
    ("asm", r"\b(asm|__asm|__asm__)\b", "inline assembly is not allowed; use C++ or intrinsics from immintrin.h"),
    ("process", r"\b(system|popen|fork|vfork|execv\w*|execl\w*|posix_spawn\w*|clone|kill|raise)\s*\(",
     "starting or signalling processes is not allowed"),
    ("exit", r"\b(exit|_exit|_Exit|abort|quick_exit|std::terminate|terminate)\s*\(|\b__builtin_(exit|_exit|_Exit|abort|trap)\s*\(",
     "a kernel may not end the process; throw opgen::Error to report an error"),
    ("signal", r"\b(signal|sigaction|setjmp|longjmp)\s*\(", "installing signal handlers or non-local jumps is not allowed"),
    ("file", r"\b(fopen|freopen|open|openat|creat|unlink|mkdir|std::ifstream|std::ofstream|std::fstream|ifstream|ofstream|fstream)\b\s*[(<{a-zA-Z_]",
     "file access is not allowed"),
    ("network", r"\b(socket|connect|bind|listen|accept|getaddrinfo|gethostbyname|send|recv)\s*\(", "network access is not allowed"),
    ("dynamic-loading", r"\b(dlopen|dlsym|LoadLibrary\w*)\s*\(", "loading libraries at run time is not allowed"),
    # Every C-API spelling: Py_*, PyGILState_Ensure, PyRun_SimpleString, PyObject, _Py*.
    ("python", r"\b_?Py(_\w+|[A-Z][A-Za-z]*_\w+|Object|TypeObject)\b|\b_import_array\b|Python\.h|numpy/",
     "calling into Python or NumPy is not allowed; compute the result yourself"),
    ("environment", r"\b(getenv|secure_getenv|setenv|putenv|environ)\b", "reading or changing the environment is not allowed"),
    # The cycle counter and the hardware RNG in every spelling (immintrin.h is allowed):
    # rdtsc, _rdtsc, __rdtsc, __rdtscp, __builtin_ia32_rdtsc, _rdrand64_step, ...
    ("clock", r"\b(time|clock|clock_gettime|gettimeofday)\s*\(|\b_{0,2}rdtscp?\s*\(|__builtin_ia32_rd(tscp?|rand\w*|seed\w*)\b"
     r"|__builtin_readcyclecounter\b|\b_{0,2}rd(rand|seed)\w*|std::chrono|\bstd::random_device\b",
     "reading clocks or entropy is not allowed; results must depend only on the inputs"),
    ("syscall", r"\b(syscall|mmap|munmap|mprotect|ptrace|ioctl|prctl)\s*\(", "raw system calls are not allowed"),
    ("output", r"\b(printf|fprintf|puts|fputs|putchar|write|perror)\s*\(|\b__builtin_(v?f?printf|puts|fputs|f?putc|putchar|fwrite)\w*\s*\("
     r"|std::cout|std::cerr|std::clog",
     "printing is not allowed; kernels return results only"),
    ("load-time-code", r"__attribute__\s*\(\(\s*constructor|__attribute__\s*\(\(\s*destructor",
     "code that runs when the library loads or unloads is not allowed"),
    # MXCSR and <cfenv> state is per thread and outlives the call: a kernel that sets
    # flush-to-zero or a rounding mode changes what the reference computes after it.
    ("fp-environment", r"\b_mm_setcsr\b|\b_MM_SET_(FLUSH_ZERO|DENORMALS_ZERO|ROUNDING|EXCEPTION)_\w*|__builtin_ia32_ldmxcsr\b"
     r"|\bfe(setround|setenv|holdexcept|updateenv|setexceptflag|clearexcept|raiseexcept|enableexcept|disableexcept)\b"
     r"|#\s*pragma\s+STDC\s+FENV_ACCESS",
     "changing the floating-point environment (flush-to-zero, denormals-are-zero, rounding mode, exceptions) is "
     "not allowed: it outlives the call and changes every later computation in the process, the reference's too"),
    ("threads", r"std::thread|std::async|std::jthread|pthread_\w+|#\s*include\s*<thread>",
     "threads are not allowed; where the spec allows parallelism, use OpenMP pragmas"),
    ("sanitizer-evasion", r"__SANITIZE_\w+__|__has_feature\s*\(|\bno_sanitize\w*|\b__(?:asan|ubsan|lsan|msan)_\w+",
     "code may not detect or switch off the sanitizers (admission runs an ASan+UBSan build)"),
)
OPENMP_RULE = ("openmp", r"#\s*pragma\s+omp\b|\bomp_\w+\s*\(", "this operator's spec does not allow threads; remove OpenMP")


@dataclass(frozen=True)
class Violation:
    rule: str
    line: int
    text: str
    why: str

    def __str__(self) -> str:
        return f"line {self.line}: `{self.text.strip()[:80]}`: {self.why} [rule {self.rule}]"


# String, raw-string and character literals are matched first and kept, so "//" or "/*" inside one
# (a URL, say) does not start a comment that would hide the code after it from the rules.
# A quote right after a hex digit is a digit separator (1'000'000), not a literal.
_COMMENT_OR_LITERAL = re.compile(r'(?:\b(?:u8|u|U|L)?R)"([^()\\\s]{0,16})\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|(?<![0-9A-Fa-f])\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)


def strip_comments(source: str) -> str:
    """Remove // and /* */ comments (keeping line numbers) so prose cannot trip the rules."""
    def blank(m: re.Match) -> str:
        text = m.group(0)
        return re.sub(r"[^\n]", " ", text) if text.startswith(("//", "/*")) else text

    return _COMMENT_OR_LITERAL.sub(blank, source)


def check(source: str, *, threads_allowed: bool) -> list[Violation]:
    code = strip_comments(source)
    lines = code.splitlines()
    found: list[Violation] = []
    allowed = set(ALLOWED_CPP_HEADERS) | set(OPGEN_HEADERS) | ({"omp.h"} if threads_allowed else set())
    for i, line in enumerate(lines, 1):
        m = re.match(r"\s*#\s*include\s*[<\"]([^>\"]+)[>\"]", line)
        if m and m.group(1) not in allowed:
            found.append(Violation("include", i, line, f"header <{m.group(1)}> is not on the allow-list "
                                   f"({', '.join(sorted(allowed))})"))
    rules = RULES + (() if threads_allowed else (OPENMP_RULE,))
    for rule, pattern, why in rules:
        for m in re.finditer(pattern, code):
            line_no = code.count("\n", 0, m.start()) + 1
            found.append(Violation(rule, line_no, lines[line_no - 1], why))
    return sorted(found, key=lambda v: v.line)


# --- The compiled kernel object: what it imports, and what it runs at load time --------
#
# The source rules above can be dodged (macros, token pasting, an ``extern`` declaration
# under another spelling); the object file cannot: every function the kernel calls outside
# itself is an undefined symbol there. Each rule is (rule id, pattern over the symbol as
# linked, pattern over its demangled C++ name or None, why). Rule ids match the source
# rules, so a cheat is named the same whichever layer catches it. The shipped honest kernels
# import only libm, allocation, string and exception support (and OpenMP where allowed).

_C = lambda *names: r"^(?:" + "|".join(names) + r")(?:@.*)?$"  # noqa: E731 - exact C names (and versions)

IMPORT_RULES: tuple[tuple[str, str | None, str | None, str], ...] = (
    ("process", _C("fork", "vfork", r"execv\w*", r"execl\w*", "execve", "execveat", "fexecve", "system", "popen",
                   "pclose", r"posix_spawn\w*", "clone", "clone3", "daemon", "wait", "waitpid", "wait3", "wait4"),
     None, "starting or waiting for processes is not allowed"),
    ("process", _C("kill", "killpg", "raise", "tgkill", "tkill", "pthread_kill", "sigqueue"), None,
     "sending signals is not allowed"),
    ("exit", _C("exit", "_exit", "_Exit", "quick_exit", "abort", "__assert_fail", "__assert_perror_fail",
                ) + r"|^_ZSt9terminatev$", None,
     "a kernel may not end the process; throw opgen::Error to report an error"),
    ("signal", _C("signal", "sigaction", "sigset", "bsd_signal", "sysv_signal", "__sysv_signal", "sigprocmask",
                  "pthread_sigmask", "setjmp", "_setjmp", "__sigsetjmp", "longjmp", "_longjmp", "siglongjmp",
                  "__longjmp_chk", "sigaltstack"), None,
     "installing signal handlers or non-local jumps is not allowed"),
    ("file", _C(r"f?open(?:64)?", r"__open\w*", r"openat(?:64)?", r"__openat\w*", r"creat(?:64)?", r"freopen(?:64)?",
                "fdopen", "tmpfile", r"mkstemp\w*", "unlink", "unlinkat", "remove", "rename", "renameat", "mkdir",
                "rmdir", "opendir", "fdopendir", r"truncate(?:64)?", r"ftruncate(?:64)?", "read", "pread", "pread64",
                "readv", "fread", "fgets", "getline", "getdelim", r"__isoc\d*_f?scanf", "fscanf", "scanf", "getchar",
                "fgetc", "getc", "readlink", "stat", "lstat", "fstat", "access", "chmod", "chown", "link", "symlink",
                "dup", "dup2", "dup3", "close", "pipe", "pipe2"),
     r"std::basic_(?:i|o)?fstream|std::basic_filebuf|std::filesystem::",
     "file access is not allowed"),
    ("network", _C("socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "send", "sendto",
                   "sendmsg", "recv", "recvfrom", "recvmsg", "getaddrinfo", r"gethostbyname\w*", r"gethostbyaddr\w*",
                   r"inet_\w+", "shutdown", "setsockopt", "getsockopt"), None,
     "network access is not allowed"),
    ("dynamic-loading", _C("dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr", "dladdr1", "dlinfo", "dl_iterate_phdr",
                           r"__libc_dl\w*"), None,
     "loading libraries or looking up symbols at run time is not allowed"),
    ("python", r"^_?Py[A-Z_]\w*$|^PyInit_|^_import_array$|^PyArray_API$|^_?Npy\w*$|^npy_\w+$", None,
     "calling into Python or NumPy is not allowed; compute the result yourself"),
    ("environment", _C("getenv", "secure_getenv", "__secure_getenv", "setenv", "putenv", "unsetenv", "clearenv",
                       "environ", "__environ", "_environ", "getauxval", "getpid", "getppid", "gettid", "getuid",
                       "geteuid", "gethostname", "uname", "sysinfo"), None,
     "reading or changing the environment (variables, process ids, host facts) is not allowed"),
    ("clock", _C("time", "clock", r"clock_gettime(?:64)?", r"__clock_gettime\w*", "gettimeofday", "times", "ftime",
                 "getrusage", "getrandom", "getentropy", "rand", "rand_r", "srand", "random", "srandom", "drand48",
                 "lrand48", "srand48", "arc4random", "sleep", "usleep", "nanosleep", "clock_nanosleep", "sched_yield"),
     r"std::chrono::.*::now\(\)|std::random_device|std::this_thread::",
     "reading clocks or entropy (or sleeping) is not allowed; results must depend only on the inputs"),
    ("syscall", _C("syscall", "ioctl", "prctl", "ptrace", "seccomp", "personality", "unshare", "setns", "mount",
                   "umount", "umount2", "chroot", r"set[re]*[ug]id", "setgroups", r"mmap(?:64)?", "munmap",
                   "mprotect", "mremap", "madvise", "brk", "sbrk", "process_vm_readv", "process_vm_writev",
                   "setrlimit", "prlimit", "prlimit64", "setsid", "setpgid"), None,
     "raw system calls are not allowed"),
    ("output", _C(r"\w*printf\w*", "puts", "fputs", "fputc", "putc", "putchar", r"fputs_unlocked", r"fputc_unlocked",
                  r"putc_unlocked", r"putchar_unlocked", "_IO_putc", "fwrite", "fwrite_unlocked", "write", "writev",
                  "pwrite", "pwrite64", "perror", "psignal", "fflush", "stdout", "stderr", "stdin", "syslog",
                  r"__syslog_chk", "vsyslog", "err", "errx", "warn", "warnx", "error"),
     r"^std::(?:w?cout|w?cerr|w?clog|w?cin)$|std::ios_base::Init",
     "printing is not allowed; kernels return results only"),
    ("threads", None, r"^std::thread::|^std::jthread|std::__future_base|^std::async",
     "threads are not allowed; where the spec allows parallelism, use OpenMP pragmas"),
)
# Where the spec allows threads these are fine (OpenMP's runtime); elsewhere they are the threads rule.
THREAD_IMPORTS = r"^(?:GOMP_\w+|omp_\w+|pthread_\w+|thrd_\w+|__kmpc_\w+)$"


@dataclass(frozen=True)
class ImportViolation:
    rule: str
    symbol: str  # demangled where it was a C++ name
    why: str

    def __str__(self) -> str:
        return f"the compiled kernel imports `{self.symbol}`: {self.why} [rule {self.rule}]"


def audit_object(imports: list[tuple[str, str]] | tuple, load_time_sections: list | tuple = (),
                 ifuncs: list | tuple = (), *, threads_allowed: bool) -> list[ImportViolation | str]:
    """Violations in a compiled kernel object: denied imports, code that runs at load time."""
    found: list[ImportViolation | str] = []
    for raw, demangled in imports:
        base = raw.split("@")[0]
        if re.match(THREAD_IMPORTS, base):
            if not threads_allowed:
                found.append(ImportViolation("threads", demangled, "this operator's spec does not allow threads; "
                                             "remove OpenMP and thread calls"))
            continue
        for rule, c_pattern, cxx_pattern, why in IMPORT_RULES:
            if (c_pattern and re.match(c_pattern, base)) or (cxx_pattern and re.search(cxx_pattern, demangled)):
                found.append(ImportViolation(rule, demangled, why))
                break
    for name, size in load_time_sections:
        found.append(f"the compiled kernel has a non-empty {name} section ({size} bytes): code that runs at load "
                     "time (a namespace-scope object with a dynamic initializer, e.g. a global std::vector or a "
                     "variable initialized by a function call, or a constructor attribute); compute such tables "
                     "inside the kernel or make them constexpr [rule load-time-code]")
    for name in ifuncs:
        found.append(f"the compiled kernel defines the indirect function `{name}` (ifunc or target_clones): its "
                     "resolver runs at load time; use one code path [rule load-time-code]")
    return found
