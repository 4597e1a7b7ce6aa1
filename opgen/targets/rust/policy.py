"""Static policy for Rust candidates, and the audit of the library they build into.

The kernel module is compiled under ``#[forbid(unsafe_code)]``, so the compiler itself
guarantees memory safety of the kernel (the runtime's views are the only unsafe code).
The source rules reject, before anything is built, what safe Rust can still do that a
kernel must not: the file system, the network, processes, the environment, clocks,
printing, threads where the spec allows none (and unscoped threads where it does),
state kept between calls, linker and FFI attributes, and compile-time file inclusion.
Each rule says why and what to do instead; rule ids match the C++ policy's where the
concern is the same, so a cheat is named alike in either language.

The library audit compares the built library with a baseline: the same generated shim
and runtime around a kernel that computes nothing (``shim_rust.trivial_kernel``). Rust's
std is linked in statically and imports open, write, getenv, abort, mmap, ... of its own;
what the kernel adds beyond the baseline is audited with the C++ import rules, its
exports must be exactly the shim's, and it may add no load-time code.
"""

from __future__ import annotations

import re
from opgen.build.rust import LibraryInfo
from opgen.targets.cpp.policy import THREAD_IMPORTS, ImportViolation, Violation, audit_object

# Module names under std (or core/alloc) a kernel may not touch, with the rule and the why.
_FORBIDDEN_MODULES = {
    "fs": ("file", "file access (std::fs) is not allowed; kernels compute from their arguments only"),
    "net": ("network", "network access (std::net) is not allowed"),
    "process": ("process", "std::process (exit, abort, Command) is not allowed; return Err(Error::...) to report "
                           "an error"),
    "env": ("environment", "reading the environment or the command line (std::env) is not allowed"),
    "os": ("os", "std::os (raw file descriptors, Unix extensions) is not allowed"),
    "io": ("output", "std::io (stdout, stderr, stdin, files) is not allowed; kernels return results only"),
    "time": ("clock", "reading clocks (std::time) is not allowed; results must depend only on the inputs"),
}


def _module_path(names: str) -> str:
    """``std::NAME``, ``std::{.., NAME, ..}`` or a bare ``NAME::`` path segment (after a glob or alias)."""
    return rf"\b(?:std|core|alloc)\s*::\s*(?:\{{[^}}]*?\b)?(?:{names})\b|(?<![\w:])(?:{names})\s*::"


GLOBAL_STATE_WHY = ("state kept between calls (static mut, thread_local!, statics of anything but plain constant "
                    "data) is not allowed: results must not depend on call history; keep scratch buffers local to "
                    "the call (const items and statics of numbers, bools, chars, strs and arrays of them are fine)")

# (rule id, pattern, why) over the source with comments and literals blanked.
RULES: tuple[tuple[str, str, str], ...] = (
    ("unsafe", r"\bunsafe\b",
     "unsafe code is not allowed: the kernel module is compiled under #![forbid(unsafe_code)]; use the safe views "
     "of opgen's runtime (TensorRef::as_slice, lanes, get; TensorMut::as_mut_slice) and slice methods such as "
     "chunks_exact, which the compiler vectorises"),
    ("extern", r"\bextern\s+crate\b|\bextern\s*(?:\"[^\"]*\"\s*)?(?:\{|fn\b)",
     "extern blocks, extern functions and extern crate are not allowed: only std is available, and opgen "
     "generates the C-ABI shim itself"),
    ("linker-attribute", r"#\s*!?\s*\[\s*(?:unsafe\s*\(\s*)?(?:no_mangle|export_name|link_section|link_name|link|used|"
                         r"linkage|global_allocator|panic_handler|naked)\b",
     "linker and export attributes (#[no_mangle], #[export_name], #[link], #[link_section], #[used], "
     "#[global_allocator], ...) are not allowed: opgen generates the exported C function"),
    ("asm", r"\b(?:asm|global_asm|naked_asm|llvm_asm)\s*!",
     "inline assembly is not allowed; write plain Rust (slices and chunks_exact loops are vectorised by LLVM)"),
    ("include", r"\binclude(?:_str|_bytes)?\s*!|#\s*\[\s*path\b|\bmod\s+\w+\s*;",
     "the kernel is one self-contained file: no include!/include_str!/include_bytes!, no #[path], no out-of-line "
     "`mod name;` (write `mod name { ... }` inline)"),
    ("environment", r"\b(?:env|option_env)\s*!",
     "reading the build environment (env!, option_env!) is not allowed; results must depend only on the inputs"),
    *((rule, _module_path(name), why) for name, (rule, why) in _FORBIDDEN_MODULES.items()),
    ("std-alias", r"\b(?:std|core|alloc)\s*::\s*\*|\buse\s+(?:::)?(?:std|core|alloc)\s+as\b|\bself\s+as\b"
                  r"|\b(?:std|core|alloc)\s*::\s*\$",
     "name std items by their full path (no `use std::*`, no `use std as ...`, no `self as`, no paths built by "
     "macros), so the rules above can read them"),
    ("output", r"\b(?:print|println|eprint|eprintln|dbg)\s*!",
     "printing is not allowed; kernels return results only"),
    ("exit", r"\b(?:abort|exit)\s*\(",
     "a kernel may not end the process; return Err(Error::...) to report an error"),
    ("panic-hook", r"\b(?:set_hook|take_hook|always_abort|update_hook|resume_unwind)\b",
     "the panic hook belongs to opgen's runtime (it turns a panic into an Internal error with its message); "
     "leave it alone"),
    ("global-state", r"\bthread_local\s*!|\bstatic\s+mut\b", GLOBAL_STATE_WHY),
)
THREADS_RULE = ("threads", r"\bthread\s*::|\bstd\s*::\s*\{[^}]*\bthread\b|\bspawn\s*\(",
                "this operator's spec does not allow threads; remove std::thread")
UNSCOPED_THREADS_RULE = (
    "threads", r"\bthread\s*::\s*(?:\{[^}]*?\b)?(?:spawn|Builder|sleep|sleep_ms|sleep_until|park|park_timeout|"
               r"yield_now|current)\b",
    "only scoped threads are allowed (std::thread::scope(|s| { s.spawn(...); })): a thread that outlives the call, "
    "or a sleeping or parked one, is not")


# String literals (plain, byte, C, raw with any number of #), char literals and comments
# (line, nested block). Literals are blanked too: a Rust kernel has no use for a string
# that looks like code, and a rule must not fire on an error message's prose.
_TOKEN = re.compile(
    r"(?P<raw>(?<!\w)[bc]?r(?P<hashes>#*)\"(?:.|\n)*?\"(?P=hashes))"
    r"|(?P<str>(?:(?<!\w)[bc])?\"(?:\\.|[^\"\\])*\")"
    r"|(?P<char>(?:(?<!\w)b)?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.)|[^'\\\n])')"
    r"|(?P<line>//[^\n]*)"
    r"|(?P<block>/\*)",
    re.S,
)


def strip_comments_and_literals(source: str) -> str:
    """Blank comments (nested /* */ included) and the contents of string and char literals,
    keeping line numbers, so prose and messages cannot trip the rules and quotes cannot hide code."""
    out, i = [], 0
    while True:
        m = _TOKEN.search(source, i)
        if m is None:
            out.append(source[i:])
            break
        out.append(source[i:m.start()])
        if m.group("block"):
            end, depth, j = len(source), 1, m.end()
            while j < len(source) and depth:
                if source.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif source.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            end = j
            out.append(_blank(source[m.start():end]))
            i = end
        elif m.group("line"):
            out.append(_blank(m.group(0)))
            i = m.end()
        else:
            text = m.group(0)
            q = text.index("'") if m.group("char") else text.index('"')
            close = text[q]
            body = text[q + 1: text.rindex(close)]
            out.append(text[: q + 1] + _blank(body) + text[text.rindex(close):])
            i = m.end()
    return "".join(out)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def check(source: str, *, threads_allowed: bool) -> list[Violation]:
    code = strip_comments_and_literals(source)
    lines = code.splitlines() or [""]
    rules = RULES + ((UNSCOPED_THREADS_RULE,) if threads_allowed else (THREADS_RULE,))
    found: list[Violation] = []
    seen: set[tuple[str, int]] = set()
    for rule, pattern, why in rules:
        for m in re.finditer(pattern, code):
            line_no = code.count("\n", 0, m.start()) + 1
            if (rule, line_no) in seen:
                continue
            seen.add((rule, line_no))
            found.append(Violation(rule, line_no, source.splitlines()[line_no - 1] if source.splitlines() else "", why))
    for m in _STATIC.finditer(code):
        if re.search(r"\bmut\b", m.group(1)):
            continue  # static mut: the rule above
        typ = re.sub(r";[^\]]*\]", "]", m.group(3))  # [T; LEN]: the length may name a const
        if set(re.findall(r"[A-Za-z_]\w*", typ)) - _PLAIN_STATIC_WORDS:
            line_no = code.count("\n", 0, m.start()) + 1
            found.append(Violation("global-state", line_no, source.splitlines()[line_no - 1], GLOBAL_STATE_WHY))
    return sorted(found, key=lambda v: (v.line, v.rule))


# A static item: `static NAME: TYPE =` (the type may only name plain data).
_STATIC = re.compile(r"\bstatic\s+((?:mut\s+)?)(\w+)\s*:\s*([^=;]+)=")
_PLAIN_STATIC_WORDS = {"f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128",
                       "usize", "bool", "char", "str", "static"}


# --- the built library against its baseline -------------------------------------------

# Rust-specific advice for imports a safe kernel can only have pulled in through std.
_RUST_HINTS = {
    "getrandom": "std's HashMap and HashSet seed their default hasher (RandomState) from the OS; use BTreeMap, "
                 "a sorted Vec, or HashMap::with_hasher(BuildHasherDefault::<DefaultHasher>::default())",
    "getentropy": "std's HashMap and HashSet seed their default hasher from the OS; use BTreeMap or a fixed hasher",
}


# --- What the library defines beyond its baseline: std code that reaches the OS ----------
#
# The source rules read paths (std::env, std::fs, ...) and can be dodged: a macro that builds
# the path, a type alias, a `use` rename. The compiled library cannot: std is linked in
# statically, so whatever the kernel calls in std that is not inlined away is a function the
# library defines and the baseline (the same shim and runtime around an empty kernel) does
# not; and anything that reaches the operating system ends in such an out-of-line function
# (std::env::_var, std::fs::..., std::sys::...). Each new symbol's std paths (in its name and
# its generic arguments, e.g. drop_in_place<std::fs::File>) must be on this allow-list.

# std modules that compute (or synchronise the kernel's own scoped threads) and do not reach
# the OS on their own. core:: and alloc:: are always fine: neither can reach the OS.
ALLOWED_STD_MODULES = {
    "f32", "f64", "num", "ascii", "char", "primitive", "hint", "ops", "iter", "cmp", "convert", "mem", "ptr",
    "slice", "str", "string", "vec", "boxed", "rc", "borrow", "clone", "default", "marker", "option", "result",
    "array", "cell", "fmt", "error", "any", "hash", "collections",
    # The panic machinery: a panic becomes an Internal error through opgen's hook (the baseline has it).
    "panicking", "panic", "rt",
    # Locks, once-cells, barriers and atomics between the kernel's own scoped threads.
    "sync",
}
# Crates std links in that compute: hash tables, byte search, CPU feature detection (cpuid).
# compiler_builtins: the 128-bit arithmetic and mem* fallbacks rustc calls for plain operators.
ALLOWED_CRATES = {"core", "alloc", "hashbrown", "memchr", "std_detect", "compiler_builtins", "opgen_kernel", "__rustc"}
# std's lock implementations under std::sys (futex waits and wakes behind std::sync): synchronisation only.
ALLOWED_STD_SYS = r"std::sys::(?:sync|futex|pal::\w+::futex)::"
# Where threads are allowed: scoped threads only (the baseline holds a scoped spawn).
UNSCOPED_THREAD_ITEMS = r"std::thread::(?:sleep\w*|park\w*|yield_now|spawn\b|Builder::spawn\b|current\b)"

# The source rules' ids for a std module, so a cheat is named alike whichever layer catches it.
_MODULE_RULES = {"env": "environment", "path": "file", "fs": "file", "io": "output", "net": "network",
                 "process": "process", "time": "clock", "os": "os", "thread": "threads", "sys": "syscall",
                 "sys_common": "syscall", "backtrace": "not-allowed", "backtrace_rs": "not-allowed"}
STD_REACHES_OS_WHY = ("it is std code that reaches the operating system (or the process around the kernel), which "
                      "a kernel may not use whatever path, alias or macro names it; compute from the arguments")


def audit_std_use(defined: tuple[str, ...] | list[str], baseline: tuple[str, ...] | list[str], *,
                  threads_allowed: bool) -> list[str]:
    """Symbols the library defines beyond the baseline that come from std modules (or crates)
    off the allow-list, one violation per offending module, naming a symbol."""
    base = set(baseline)
    offending: dict[str, str] = {}
    for name in sorted(set(defined) - base):
        for crate, module in re.findall(r"(?<![\w:])([A-Za-z_]\w*)::(\w+)", name):
            if crate == "std":
                if module == "thread" and threads_allowed:
                    bad = re.search(UNSCOPED_THREAD_ITEMS, name) is not None
                elif module == "sys" and re.search(ALLOWED_STD_SYS, name) and \
                        not re.search(r"std::sys::(?!sync|futex|pal::\w+::futex)", name):
                    bad = False
                else:
                    bad = module not in ALLOWED_STD_MODULES
                where = f"std::{module}"
            else:
                bad, where = crate not in ALLOWED_CRATES and module != "{{closure}}" and _crate_like(crate), crate
            if bad:
                offending.setdefault(where, name)
    found = []
    for where, name in offending.items():
        module = where.split("::")[1] if where.startswith("std::") else ""
        rule = _MODULE_RULES.get(module, "not-allowed")
        if rule == "threads":
            why = ("only scoped threads are allowed (std::thread::scope), and only where the spec allows threads"
                   if threads_allowed else "this operator's spec does not allow threads; remove std::thread")
        else:
            why = STD_REACHES_OS_WHY
        found.append(f"the library defines `{name}` (from {where}) beyond the baseline: {why} [rule {rule}]")
    return found


def _crate_like(word: str) -> bool:
    """A path's first segment that names a crate (not a type parameter or a keyword-ish segment)."""
    return word.islower() or "_" in word


def audit_library_state(data: tuple | list, baseline: tuple | list) -> list[str]:
    """Writable or thread-local data symbols beyond the baseline: a static (atomics behind any
    alias, statics a macro expands to, OnceLock, Mutex), a thread_local!, whatever the source said."""
    base = {name for _, name in baseline}
    return [f"the library has writable data `{name}` ({section}) that its baseline has not: state kept between "
            f"calls is not allowed, whatever declares it (a static of an atomic, a Mutex or a OnceLock, a static a "
            f"macro expands to, thread_local!); results must depend only on the arguments: keep scratch space "
            f"local to the call and constants in const items [rule global-state]"
            for section, name in data if name not in base]


def audit_library_code(system_calls: tuple | list) -> list[str]:
    """System-call instructions in functions the baseline does not have (``build_rust.added_system_calls``)."""
    return [f"the library's function `{function}` executes `{text}`, and its baseline has no such function: a "
            f"kernel's machine code is what rustc generates from safe Rust; it makes no system calls "
            f"[rule machine-code]" for function, text in system_calls]


def audit_library(info: LibraryInfo, baseline: LibraryInfo, *, expected_exports: set[str],
                  threads_allowed: bool, system_calls: tuple | list = ()) -> list[ImportViolation | str]:
    """What the kernel adds to the library beyond the baseline: imports off the allow-list,
    std code that reaches the OS, writable data, system calls, exports other than the shim's,
    load-time code, indirect functions."""
    added = sorted(set(info.imports) - set(baseline.imports))
    found: list[ImportViolation | str] = []
    for v in audit_object([(name, name) for name in added], threads_allowed=threads_allowed,
                          thread_imports=THREAD_IMPORTS):
        if isinstance(v, ImportViolation) and v.rule == "threads":
            v = ImportViolation("threads", v.symbol, "this operator's spec does not allow threads; remove std::thread")
        elif isinstance(v, ImportViolation) and v.symbol in _RUST_HINTS:
            v = ImportViolation(v.rule, v.symbol, f"{v.why}; {_RUST_HINTS[v.symbol]}")
        found.append(v)
    found += audit_std_use(info.defined, baseline.defined, threads_allowed=threads_allowed)
    found += audit_library_state(info.data, baseline.data)
    found += audit_library_code(system_calls)
    extra = sorted(set(info.exports) - expected_exports)
    if extra:
        found.append(f"the library exports {', '.join(extra)} besides the generated shim's functions; kernels "
                     "export nothing [rule linker-attribute]")
    base = dict(baseline.load_time_sections)
    for name, size in info.load_time_sections:
        if size > base.get(name, 0):
            found.append(f"the library's {name} section grew by {size - base.get(name, 0)} bytes over the baseline: "
                         "code that runs when the library loads [rule load-time-code]")
    for name in sorted(set(info.ifuncs) - set(baseline.ifuncs)):
        found.append(f"the library defines the indirect function `{name}`: its resolver runs at load time "
                     "[rule load-time-code]")
    return found
