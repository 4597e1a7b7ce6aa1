"""Static policy: what a candidate source may contain, checked before it is compiled.

The sandbox is the real guarantee; this check rejects the obvious escapes early with a
reason the LLM can act on (and keeps such code from ever being built on a developer's
machine). Each rule is a regular expression over the source with comments removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The standard headers a kernel may include (the prompt lists them; omp.h too where threads are allowed).
ALLOWED_CPP_HEADERS = (
    "algorithm", "array", "cfloat", "climits", "cmath", "cstddef", "cstdint", "cstdlib", "cstring", "limits",
    "numeric", "string", "type_traits", "utility", "vector", "immintrin.h",
)
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


# --- The compiled kernel object: what it imports, keeps, and executes --------------------
#
# The source rules above can be dodged (macros, token pasting, an ``extern`` or weak
# declaration under another spelling, bytes placed in ``.text``); the object file cannot:
# every function the kernel calls outside itself is an undefined symbol there, everything it
# keeps between calls is a symbol in a writable section, and everything it executes is bytes
# in a section with the execute flag. The compiled libraries, the pipelines, ``opgen bench``
# and ``opgen.host`` load admitted kernels into ordinary processes with no sandbox, so this
# audit is what protects users from code that behaves only while it is watched.
#
# Imports are checked against an ALLOW-LIST of what computing needs, not a list of what is
# known to be dangerous: a deny-list is always one symbol short (getrlimit, getcwd,
# setmntent, program_invocation_name, malloc_usable_size, a weak __asan_init, ...). The list
# was derived from what every shipped answer imports (answers/cpp, answers/cuda,
# answers/metal, built through the gate's own jobs) plus the neighbours of those symbols that
# honest code of the same kind pulls in (another libm function, another std exception type).

_C = lambda *names: r"^(?:" + "|".join(names) + r")(?:@.*)?$"  # noqa: E731 - exact C names (and versions)

_MATH = (r"a?sin|a?cos|a?tan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|exp|exp2|expm1|exp10|log|log2|log10|log1p"
         r"|logb|ilogb|pow|pow10|sqrt|cbrt|hypot|erf|erfc|tgamma|lgamma|lgamma_r|j0|j1|jn|y0|y1|yn|ceil|floor|trunc"
         r"|round|lround|llround|roundeven|rint|lrint|llrint|nearbyint|fmod|remainder|remquo|drem|frexp|ldexp|scalbn"
         r"|scalbln|scalb|modf|fabs|fmin|fmax|fminimum|fmaximum|fdim|fma|copysign|nextafter|nexttoward|nextup"
         r"|nextdown|nan|sincos|significand|gamma")
_STD_EXCEPTIONS = (r"exception|bad_alloc|bad_array_new_length|bad_cast|bad_typeid|bad_optional_access"
                   r"|bad_variant_access|bad_function_call|logic_error|domain_error|invalid_argument|length_error"
                   r"|out_of_range|runtime_error|range_error|overflow_error|underflow_error")

# (group, pattern over the symbol as linked, pattern over its demangled name). Why each is here:
ALLOWED_IMPORTS: tuple[tuple[str, str | None, str | None], ...] = (
    # libm, in every precision (f, l), and glibc's internal names for classification macros
    # and the old -ffinite-math entry points. Pure functions of their arguments.
    ("math", _C(rf"(?:{_MATH})[fl]?", rf"__(?:{_MATH})[fl]?_finite", r"__(?:isnan|isinf|finite|fpclassify|signbit"
                r"|issignaling|iseqsig)[fl]?", r"abs|labs|llabs|div|ldiv|lldiv"), None),
    # Allocation: scratch buffers and results (the shim frees results with free). Sizing an
    # allocation after the fact (malloc_usable_size) is not computing, and is not here.
    ("memory", _C("malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc", "posix_memalign",
                  "memalign"), r"^operator (?:new|delete)(?:\[\])?\("),
    ("memory", r"^_ZSt7nothrow$", None),  # the std::nothrow tag object of new (std::nothrow)
    # Byte and string routines (string kernels, copies the compiler emits for struct moves).
    ("strings", _C(r"mem(?:cpy|move|set|cmp|chr|rchr|mem|pcpy)", "bcmp", "bzero",
                   r"str(?:len|nlen|cmp|ncmp|chr|rchr|chrnul|str|cpy|ncpy|cat|ncat|spn|cspn|pbrk|coll|xfrm|tok_r"
                   r"|dup|ndup|casecmp|ncasecmp|tol|toul|toll|toull|tod|tof|told|toimax|toumax)",
                   r"__isoc23_strto(?:l|ul|ll|ull|imax|umax)", "stpcpy", "stpncpy", "qsort", "bsearch",
                   r"__ctype_(?:b|tolower|toupper)_loc", r"to(?:upper|lower)", r"is(?:alnum|alpha|blank|cntrl|digit"
                   r"|graph|lower|print|punct|space|upper|xdigit)"), None),
    # What the hardening flags add (-fstack-protector-strong, -D_FORTIFY_SOURCE=3): the canary
    # check and the bounds-checked variants of the byte and string routines above.
    ("hardening", _C("__stack_chk_fail", r"__(?:memcpy|memmove|mempcpy|memset|strcpy|stpcpy|strncpy|stpncpy|strcat"
                     r"|strncat|wmemcpy|wmemmove|wmempcpy|wmemset)_chk"), None),
    # The C++ runtime for exceptions (opgen::Error derives from std::runtime_error; a Rust panic
    # unwinds through the same _Unwind_* entry points and is deleted at the shim), RTTI of the
    # std exception types, libstdc++'s throw helpers and the out-of-line members of std::string
    # (string kernels), std::map/set (red-black tree) and unordered containers (hashing).
    ("c++ runtime", _C("_Unwind_Resume", r"_Unwind_(?:DeleteException|RaiseException|Resume_or_Rethrow"
                       r"|GetLanguageSpecificData|GetRegionStart|GetIPInfo|GetIP|SetGR|SetIP|GetDataRelBase"
                       r"|GetTextRelBase|GetCFA)", "__gxx_personality_v0", r"__cxa_(?:allocate_exception|free_exception|throw"
                       r"|rethrow|begin_catch|end_catch|get_exception_ptr|current_exception_type|throw_bad_array_new"
                       r"_length|bad_cast|bad_typeid|pure_virtual|deleted_virtual)", "_GLOBAL_OFFSET_TABLE_"),
     rf"^(?:typeinfo|typeinfo name|vtable) for (?:std::(?:{_STD_EXCEPTIONS})|__cxxabiv1::__\w+_type_info)$"
     rf"|^std::(?:{_STD_EXCEPTIONS})::(?:~?\w+)\(|^std::__throw_\w+\("
     r"|^std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::(?:~?\w+)\("
     r"|^std::_Rb_tree_(?:increment|decrement|insert_and_rebalance|rebalance_for_erase)\("
     r"|^std::__detail::_Prime_rehash_policy::_M_(?:next_bkt|need_rehash)\(|^std::_Hash_bytes\("
     r"|^std::_List_node_base::_M_\w+\("),
)
# OpenMP's runtime, only where the spec allows threads (the emitter links libgomp then).
OPENMP_IMPORTS = r"^(?:GOMP_\w+|omp_\w+)(?:@.*)?$"
# Everything a Rust kernel's scoped threads bring in (std::thread::scope, through libc).
THREAD_IMPORTS = r"^(?:GOMP_\w+|omp_\w+|pthread_\w+|thrd_\w+|__kmpc_\w+)(?:@.*)?$"

NOT_ALLOWED_WHY = ("a kernel may import only what computing needs (libm, memory allocation, mem*/str* routines, "
                   "the C++ exception runtime, OpenMP where the spec allows threads); compute from the arguments "
                   "and leave the process, the machine and the harness alone")

# A refused import is named by the category it belongs to, with the ids the source rules use,
# so a cheat is named the same whichever layer catches it; the rest is `not-allowed`.
# (rule id, pattern over the symbol as linked, pattern over its demangled name, why.)
REFUSED_CATEGORIES: tuple[tuple[str, str | None, str | None, str], ...] = (
    ("clock", _C("omp_get_wtime", "omp_get_wtick"), None,
     "reading clocks (omp_get_wtime) is not allowed; results must depend only on the inputs"),
    ("process", _C("fork", "vfork", r"execv\w*", r"execl\w*", "execve", "execveat", "fexecve", "system", "popen",
                   "pclose", r"posix_spawn\w*", "clone", "clone3", "daemon", "wait", "waitpid", "wait3", "wait4"),
     None, "starting or waiting for processes is not allowed"),
    ("process", _C("kill", "killpg", "raise", "tgkill", "tkill", "pthread_kill", "sigqueue"), None,
     "sending signals is not allowed"),
    ("exit", _C("exit", "_exit", "_Exit", "quick_exit", "abort", "__assert_fail", "__assert_perror_fail",
                r"at_quick_exit", "atexit", "__cxa_atexit", "__cxa_thread_atexit", "__cxa_thread_atexit_impl",
                "on_exit") + r"|^_ZSt9terminatev$", None,
     "a kernel may not end the process or run code at its exit; throw opgen::Error to report an error"),
    ("signal", _C("signal", "sigaction", "sigset", "bsd_signal", "sysv_signal", "__sysv_signal", "sigprocmask",
                  "pthread_sigmask", "setjmp", "_setjmp", "__sigsetjmp", "longjmp", "_longjmp", "siglongjmp",
                  "__longjmp_chk", "sigaltstack"), None,
     "installing signal handlers or non-local jumps is not allowed"),
    ("file", _C(r"f?open(?:64)?", r"__open\w*", r"openat(?:64)?", r"__openat\w*", r"creat(?:64)?", r"freopen(?:64)?",
                "fdopen", "tmpfile", r"mkstemp\w*", "unlink", "unlinkat", "remove", "rename", "renameat", "mkdir",
                "rmdir", "opendir", "fdopendir", "readdir", "readdir64", r"truncate(?:64)?", r"ftruncate(?:64)?",
                "read", "pread", "pread64", "readv", "fread", "fgets", "getline", "getdelim", r"__isoc\d*_f?scanf",
                "fscanf", "scanf", "getchar", "fgetc", "getc", "readlink", "realpath", r"l?stat(?:64)?",
                r"fstat(?:at)?(?:64)?", "statx", "access", "faccessat", "chmod", "chown", "link", "symlink", "dup",
                "dup2", "dup3", "close", "pipe", "pipe2", "getcwd", "get_current_dir_name", "chdir", "fchdir",
                r"setmntent", r"getmntent\w*", "endmntent", r"statv?fs(?:64)?", r"fstatv?fs(?:64)?", "fcntl",
                r"fcntl64", "lseek", "lseek64"),
     r"std::basic_(?:i|o)?fstream|std::basic_filebuf|std::filesystem::",
     "file access (files, directories, the working directory, the mount table) is not allowed"),
    ("network", _C("socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "send", "sendto",
                   "sendmsg", "recv", "recvfrom", "recvmsg", "getaddrinfo", r"gethostbyname\w*", r"gethostbyaddr\w*",
                   r"inet_\w+", "shutdown", "setsockopt", "getsockopt"), None,
     "network access is not allowed"),
    ("dynamic-loading", _C("dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr", "dladdr1", "dlinfo", "dl_iterate_phdr",
                           r"__libc_dl\w*", "_dl_find_object"), None,
     "loading libraries or looking up symbols at run time is not allowed"),
    ("python", r"^_?Py[A-Z_]\w*$|^PyInit_|^_import_array$|^PyArray_API$|^_?Npy\w*$|^npy_\w+$", None,
     "calling into Python or NumPy is not allowed; compute the result yourself"),
    ("environment", _C("getenv", "secure_getenv", "__secure_getenv", "setenv", "putenv", "unsetenv", "clearenv",
                       "environ", "__environ", "_environ", "getauxval", "getpid", "getppid", "gettid", "getuid",
                       "geteuid", "getgid", "getegid", "gethostname", "uname", "sysinfo", "sysconf", "getpagesize",
                       r"getrlimit(?:64)?", r"program_invocation(?:_short)?_name", "__progname",
                       r"__libc_\w+", "get_nprocs", "get_nprocs_conf", "getlogin", r"getpw\w+", "confstr"), None,
     "reading or changing the environment (variables, process ids, limits, the program's name, host facts) is "
     "not allowed: a kernel that can tell the harness from a user's process can behave only while it is watched"),
    ("clock", _C("time", "clock", r"clock_gettime(?:64)?", r"__clock_gettime\w*", "gettimeofday", "times", "ftime",
                 "getrandom", "getentropy", "rand", "rand_r", "srand", "random", "srandom", "drand48",
                 "lrand48", "srand48", "arc4random", "sleep", "usleep", "nanosleep", "clock_nanosleep", "sched_yield"),
     r"std::chrono::.*::now\(\)|std::random_device|std::this_thread::",
     "reading clocks or entropy (or sleeping) is not allowed; results must depend only on the inputs"),
    ("syscall", _C("syscall", "ioctl", "prctl", "ptrace", "seccomp", "personality", "unshare", "setns", "mount",
                   "umount", "umount2", "chroot", r"set[re]*[ug]id", "setgroups", r"mmap(?:64)?", "munmap",
                   "mprotect", "mremap", "madvise", "brk", "sbrk", "process_vm_readv", "process_vm_writev",
                   r"setrlimit(?:64)?", "prlimit", "prlimit64", "setsid", "setpgid", "landlock_\\w+"), None,
     "raw system calls are not allowed"),
    ("output", _C(r"\w*printf\w*", "puts", "fputs", "fputc", "putc", "putchar", r"fputs_unlocked", r"fputc_unlocked",
                  r"putc_unlocked", r"putchar_unlocked", "_IO_putc", "fwrite", "fwrite_unlocked", "write", "writev",
                  "pwrite", "pwrite64", "perror", "psignal", "fflush", "stdout", "stderr", "stdin", "syslog",
                  r"__syslog_chk", "vsyslog", "err", "errx", "warn", "warnx", "error"),
     r"^std::(?:w?cout|w?cerr|w?clog|w?cin)$|std::ios_base::Init",
     "printing is not allowed; kernels return results only"),
    ("threads", _C(r"pthread_\w+", r"thrd_\w+", r"__kmpc_\w+"), r"^std::thread::|^std::jthread|std::__future_base"
     r"|^std::async",
     "threads are not allowed; where the spec allows parallelism, use OpenMP pragmas"),
    ("sanitizer-evasion", r"^__(?:asan|ubsan|lsan|msan|tsan|hwasan|sanitizer)_\w+$", None,
     "code may not detect or switch off the sanitizers (admission runs an ASan+UBSan build): a kernel that "
     "behaves only under them is a kernel that misbehaves for users"),
)


@dataclass(frozen=True)
class ImportViolation:
    rule: str
    symbol: str  # demangled where it was a C++ name
    why: str

    def __str__(self) -> str:
        return f"the compiled kernel imports `{self.symbol}`: {self.why} [rule {self.rule}]"


def import_allowed(raw: str, demangled: str) -> bool:
    """Whether an import is on the allow-list (OpenMP aside: that depends on the spec)."""
    base = raw.split("@")[0]
    return any((c and re.match(c, base)) or (cxx and re.search(cxx, demangled)) for _, c, cxx in ALLOWED_IMPORTS)


def refused_import(raw: str, demangled: str) -> ImportViolation:
    """The violation for an import that is not allowed: its category's rule, or `not-allowed`."""
    base = raw.split("@")[0]
    for rule, c_pattern, cxx_pattern, why in REFUSED_CATEGORIES:
        if (c_pattern and re.match(c_pattern, base)) or (cxx_pattern and re.search(cxx_pattern, demangled)):
            return ImportViolation(rule, demangled, why)
    return ImportViolation("not-allowed", demangled, NOT_ALLOWED_WHY)


def audit_object(imports: list[tuple[str, str]] | tuple, load_time_sections: list | tuple = (),
                 ifuncs: list | tuple = (), *, threads_allowed: bool, thread_imports: str = OPENMP_IMPORTS,
                 provided: frozenset[str] | set[str] = frozenset()) -> list[ImportViolation | str]:
    """Violations in a compiled kernel object: imports off the allow-list, code that runs at load time.

    ``thread_imports``: what threads bring in where the spec allows them (OpenMP's runtime for
    C++; a Rust library's scoped threads bring pthread_*). ``provided``: symbols the trusted
    generated code of the same build defines (the GPU execution layer's barrier), which the
    kernel may call."""
    found: list[ImportViolation | str] = []
    for raw, demangled in imports:
        base = raw.split("@")[0]
        if base in provided:
            continue
        if re.match(REFUSED_CATEGORIES[0][1], base):  # omp_get_wtime: a clock, threads or not
            found.append(refused_import(raw, demangled))
        elif re.match(thread_imports, base):
            if not threads_allowed:
                found.append(ImportViolation("threads", demangled, "this operator's spec does not allow threads; "
                                             "remove OpenMP and thread calls"))
        elif not import_allowed(raw, demangled):
            found.append(refused_import(raw, demangled))
    for name, size in load_time_sections:
        found.append(f"the compiled kernel has a non-empty {name} section ({size} bytes): code that runs at load "
                     "time (a namespace-scope object with a dynamic initializer, e.g. a global std::vector or a "
                     "variable initialized by a function call, or a constructor attribute); compute such tables "
                     "inside the kernel or make them constexpr [rule load-time-code]")
    for name in ifuncs:
        found.append(f"the compiled kernel defines the indirect function `{name}` (ifunc or target_clones): its "
                     "resolver runs at load time; use one code path [rule load-time-code]")
    return found


# --- State kept between calls: writable data the kernel's own code owns ------------------

GLOBAL_STATE_WHY = ("a kernel may keep nothing between calls (no globals, statics, function-local statics, "
                    "thread_locals or inline variables that are written or initialized at run time): results must "
                    "depend only on the arguments; use locals for scratch space, and constexpr (or const, constant-"
                    "initialized) tables for constants")


def audit_state(writable: list | tuple, anonymous: list | tuple = (), *, baseline: frozenset[str] | set[str] = frozenset(),
                shared_section: str | None = None) -> list[str]:
    """Writable data the kernel owns: every symbol in a section with the write flag (``.data``,
    ``.bss``, TLS, COMDAT ``.bss.*``/``.data.*`` of inline and function-local statics, guard
    variables, custom-named writable sections), bar what the trusted runtime of the same build
    owns (``baseline``: non-local writable symbols the generated code around the kernel defines,
    which the linker merges into one object) and, for GPU targets, the ``shared_section`` the
    execution layer resets before every block. ``writable``: (section, symbol, demangled, bind, size);
    ``anonymous``: (section, bytes) not covered by any symbol."""
    found = []
    for section, name, shown, bind, size in writable:
        if shared_section is not None and section == shared_section:
            continue
        if bind != "LOCAL" and name in baseline:
            continue
        if _eh_reference(section, name, bind, size):
            continue
        found.append(f"the compiled kernel owns writable data `{shown}` ({size} bytes in {section}): {GLOBAL_STATE_WHY} "
                     "[rule global-state]")
    for section, size in anonymous:
        if shared_section is not None and section == shared_section:
            continue
        found.append(f"the compiled kernel has {size} bytes of writable data in {section} that no symbol names: "
                     f"{GLOBAL_STATE_WHY} [rule global-state]")
    return found


def _eh_reference(section: str, name: str, bind: str, size: int) -> bool:
    """The cell the compiler emits for each personality routine and caught type (``DW.ref.X``,
    one pointer in its own COMDAT section ``.data.rel.local.DW.ref.X``): the loader writes it
    once, and no C++ name can reach it."""
    return (name.startswith("DW.ref.") and bind == "WEAK" and size == 8
            and section == f".data.rel.local.{name}")


# --- Machine code: system calls, and bytes no compiler-generated function covers ---------

MACHINE_CODE_WHY = ("a kernel's machine code is what the compiler generates from its source: no system-call "
                    "instructions, no bytes placed in an executable section by hand (a byte array in .text, a "
                    "custom section with the execute flag); a kernel computes, it does not talk to the kernel of "
                    "the operating system")
SYSCALL_MNEMONICS = ("syscall", "sysenter", "sysexit", "sysret", "sysretq", "sysexitq", "int", "int1", "into",
                     "lcall", "ljmp")


def audit_machine_code(system_calls: list | tuple, stray: list | tuple = (), data_in_code: list | tuple = ()) -> list[str]:
    """``system_calls``: (function, section, offset, instruction) inside a function;
    ``stray``: (section, offset, bytes, first instruction) of executable bytes outside every
    function that are not alignment padding; ``data_in_code``: (section, symbol, type) of
    symbols in executable sections that are not functions."""
    found = []
    for function, section, offset, text in system_calls:
        found.append(f"the compiled kernel's function `{function}` executes `{text}` ({section}+{offset:#x}): "
                     f"{MACHINE_CODE_WHY} [rule machine-code]")
    for section, name, kind in data_in_code:
        found.append(f"the compiled kernel places `{name}` ({kind}, not a function) in the executable section "
                     f"{section}: {MACHINE_CODE_WHY} [rule machine-code]")
    for section, offset, size, text in stray:
        found.append(f"the compiled kernel has {size} executable bytes in {section} at {offset:#x} outside every "
                     f"function (starting `{text}`): {MACHINE_CODE_WHY} [rule machine-code]")
    return found


# The GPU execution layer's __shared__ / threadgroup arrays: statics in this section, which
# the runtime resets before every block (opgen/targets/gpu/runtime/opgen_emu_runtime.hpp), so nothing
# written there outlives a block. Allowed for GPU targets only.
GPU_SHARED_SECTION = "opgen_shared"
