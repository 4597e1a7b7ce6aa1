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
    ("asm", r"\b(asm|__asm__)\b", "inline assembly is not allowed; use C++ or intrinsics from immintrin.h"),
    ("process", r"\b(system|popen|fork|vfork|execv\w*|execl\w*|posix_spawn\w*|clone|kill|raise)\s*\(",
     "starting or signalling processes is not allowed"),
    ("exit", r"\b(exit|_exit|_Exit|abort|quick_exit|std::terminate|terminate)\s*\(",
     "a kernel may not end the process; throw opgen::Error to report an error"),
    ("signal", r"\b(signal|sigaction|setjmp|longjmp)\s*\(", "installing signal handlers or non-local jumps is not allowed"),
    ("file", r"\b(fopen|freopen|open|openat|creat|unlink|mkdir|std::ifstream|std::ofstream|std::fstream|ifstream|ofstream|fstream)\b\s*[(<{a-zA-Z_]",
     "file access is not allowed"),
    ("network", r"\b(socket|connect|bind|listen|accept|getaddrinfo|gethostbyname|send|recv)\s*\(", "network access is not allowed"),
    ("dynamic-loading", r"\b(dlopen|dlsym|LoadLibrary\w*)\s*\(", "loading libraries at run time is not allowed"),
    ("python", r"\b(Py_\w+|PyObject|PyImport_\w+|_import_array)\b|Python\.h|numpy/", "calling into Python or NumPy is not allowed; compute the result yourself"),
    ("environment", r"\b(getenv|secure_getenv|setenv|putenv|environ)\b", "reading or changing the environment is not allowed"),
    ("clock", r"\b(time|clock|clock_gettime|gettimeofday|rdtsc|__rdtsc)\s*\(|std::chrono|\bstd::random_device\b",
     "reading clocks or entropy is not allowed; results must depend only on the inputs"),
    ("syscall", r"\b(syscall|mmap|munmap|mprotect|ptrace|ioctl|prctl)\s*\(", "raw system calls are not allowed"),
    ("output", r"\b(printf|fprintf|puts|fputs|putchar|write|perror)\s*\(|std::cout|std::cerr|std::clog",
     "printing is not allowed; kernels return results only"),
    ("load-time-code", r"__attribute__\s*\(\(\s*constructor|__attribute__\s*\(\(\s*destructor",
     "code that runs when the library loads or unloads is not allowed"),
    ("threads", r"std::thread|std::async|std::jthread|pthread_\w+|#\s*include\s*<thread>",
     "threads are not allowed; where the spec allows parallelism, use OpenMP pragmas"),
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
