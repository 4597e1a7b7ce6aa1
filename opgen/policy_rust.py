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
from .build_rust import LibraryInfo
from .policy import ImportViolation, Violation, audit_object

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


def audit_library(info: LibraryInfo, baseline: LibraryInfo, *, expected_exports: set[str],
                  threads_allowed: bool) -> list[ImportViolation | str]:
    """What the kernel adds to the library beyond the baseline: denied imports, exports
    other than the shim's, load-time code, indirect functions."""
    added = sorted(set(info.imports) - set(baseline.imports))
    found: list[ImportViolation | str] = []
    for v in audit_object([(name, name) for name in added], threads_allowed=threads_allowed):
        if isinstance(v, ImportViolation) and v.rule == "threads":
            v = ImportViolation("threads", v.symbol, "this operator's spec does not allow threads; remove std::thread")
        elif isinstance(v, ImportViolation) and v.symbol in _RUST_HINTS:
            v = ImportViolation(v.rule, v.symbol, f"{v.why}; {_RUST_HINTS[v.symbol]}")
        found.append(v)
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
