"""What an ELF file holds, read with binutils: sections, symbols, and the machine code of
its executable sections.

The admission audit decides on the compiled object, not on the source text, because the
source can be dodged (macros, token pasting, weak declarations, a byte array placed in
``.text``) and the object cannot: whatever the kernel keeps between calls is a symbol in a
writable section, whatever it calls outside itself is an undefined symbol, and whatever it
executes is bytes in a section with the execute flag. This module only reads; what is
allowed is ``opgen.targets.cpp.policy``'s and ``opgen.targets.rust.policy``'s business.

One ``readelf -S -s`` pair and (on demand) one ``objdump -d`` per file version; answers are
cached by (path, mtime, size), so the gate pays for them once per candidate build.
"""

from __future__ import annotations

import bisect
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from opgen.errors import OpgenError


@dataclass(frozen=True)
class Section:
    index: int
    name: str
    type: str  # PROGBITS, NOBITS, ...
    flags: str  # readelf's letters: W write, A alloc, X execute, T TLS, G group, ...
    address: int
    offset: int  # in the file
    size: int

    @property
    def writable(self) -> bool:
        return "W" in self.flags and "A" in self.flags

    @property
    def executable(self) -> bool:
        return "X" in self.flags

    @property
    def relro(self) -> bool:
        """Read-only once relocated (vtables, typeinfo, pointer tables): written by the loader only."""
        return self.name == ".data.rel.ro" or self.name.startswith(".data.rel.ro.")


@dataclass(frozen=True)
class Symbol:
    name: str  # as linked
    demangled: str
    type: str  # FUNC, OBJECT, TLS, NOTYPE, SECTION, FILE, IFUNC, COMMON
    bind: str  # LOCAL, GLOBAL, WEAK, UNIQUE
    section: int | None  # None: undefined, absolute or common
    common: bool
    value: int
    size: int


@dataclass(frozen=True)
class Instruction:
    section: int
    address: int
    hex: str  # the instruction's bytes, space separated
    text: str  # mnemonic and operands as objdump prints them

    @property
    def mnemonic(self) -> str:
        words = self.text.split()
        # Prefixes objdump prints as words of their own ("rep stos", "lock add", "cs nopw", "notrack jmp").
        while len(words) > 1 and words[0] in _PREFIX_WORDS:
            words = words[1:]
        return words[0] if words else ""


_PREFIX_WORDS = {"rep", "repz", "repnz", "repe", "repne", "lock", "cs", "ds", "es", "ss", "fs", "gs", "data16",
                 "data32", "addr32", "notrack", "bnd", "xacquire", "xrelease", "rex", "rex.W", "rex.B", "rex.WB"}


@dataclass(frozen=True)
class ElfImage:
    path: Path
    sections: tuple[Section, ...]
    symbols: tuple[Symbol, ...]

    def section(self, index: int | None) -> Section | None:
        return next((s for s in self.sections if s.index == index), None)


def read_elf(path: Path) -> ElfImage:
    """Sections and the full symbol table (``readelf -S -s -W``, mangled and demangled), cached."""
    key = _key(path)
    if key in _IMAGES:
        return _IMAGES[key]
    cmds = [["readelf", "-S", "-s", "-W", str(path)], ["readelf", "-s", "-W", "-C", str(path)]]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    (raw, err), (dem, _) = [p.communicate() for p in procs]
    if procs[0].returncode != 0:
        raise OpgenError(f"readelf could not read {Path(path).name}: {err.strip()}", hint="install binutils")
    sections = tuple(_sections(raw))
    raw_syms, dem_syms = _symbols(raw), _symbols(dem)
    if len(raw_syms) != len(dem_syms):
        dem_syms = raw_syms
    symbols = tuple(Symbol(name=r[7], demangled=d[7], type=r[3], bind=r[4],
                           section=int(r[6]) if r[6].isdigit() else None, common=r[6] == "COM",
                           value=int(r[1], 16), size=int(r[2], 0) if r[2].startswith("0x") else int(r[2]))
                    for r, d in zip(raw_syms, dem_syms))
    image = ElfImage(Path(path), sections, symbols)
    _IMAGES[key] = image
    return image


# Bytes that begin a system-call instruction (syscall, sysenter, sysret, sysexit, int imm8,
# int1, into, far call/jump with an immediate pointer): a function without any of them cannot
# hold one, so only functions that have one are disassembled.
_SYSTEM_CALL_BYTES = re.compile(rb"\x0f[\x05\x07\x34\x35]|[\xcd\xce\xf1\x9a\xea]")


def system_calls_in(path: Path, names: set[str] | frozenset[str]) -> tuple[tuple[str, str], ...]:
    """(function, instruction) for each system-call instruction in the named functions of a
    linked library (names as linked). Cheap where there is none: the functions' bytes are
    scanned first, and only a function whose bytes could hold one is disassembled."""
    image = read_elf(path)
    sections = {s.index: s for s in image.sections if s.executable and s.type != "NOBITS"}
    data = Path(path).read_bytes()
    suspects = []
    for sym in image.symbols:
        if sym.name in names and sym.type in ("FUNC", "IFUNC") and sym.section in sections and sym.size:
            s = sections[sym.section]
            start = sym.value - s.address + s.offset
            if _SYSTEM_CALL_BYTES.search(data, start, start + sym.size):
                suspects.append(sym)
    found = []
    for sym in suspects:
        out = subprocess.run(["objdump", "-d", "-w", "-z", f"--start-address={sym.value:#x}",
                              f"--stop-address={sym.value + sym.size:#x}", str(path)], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            m = _INSTRUCTION.match(line)
            if m and Instruction(0, 0, m.group(2), (m.group(3) or "").strip()).mnemonic in SYSTEM_CALL_MNEMONICS:
                found.append((sym.demangled, (m.group(3) or "").strip()))
    return tuple(sorted(set(found)))


def disassemble(path: Path) -> tuple[Instruction, ...]:
    """Every instruction of every section with the execute flag, whatever it is called (``objdump -d``,
    zeros included so that nothing is skipped), cached."""
    key = _key(path)
    if key in _CODE:
        return _CODE[key]
    image = read_elf(path)
    out = subprocess.run(["objdump", "-d", "-w", "-z", str(path)], capture_output=True, text=True)
    if out.returncode != 0:
        raise OpgenError(f"objdump could not read {Path(path).name}: {out.stderr.strip()}", hint="install binutils")
    # objdump names each section it disassembles, in section-index order; several sections may
    # share a name (COMDAT groups), so they are matched in that order.
    pending: dict[str, list[int]] = {}
    for s in image.sections:
        if s.executable and s.type != "NOBITS" and s.size:
            pending.setdefault(s.name, []).append(s.index)
    found: list[Instruction] = []
    current: int | None = None
    for line in out.stdout.splitlines():
        if line.startswith("Disassembly of section "):
            name = line[len("Disassembly of section "):].rstrip(":")
            queue = pending.get(name) or []
            current = queue.pop(0) if queue else None
            continue
        m = _INSTRUCTION.match(line)
        if m and current is not None:
            found.append(Instruction(current, int(m.group(1), 16), m.group(2).strip(), (m.group(3) or "").strip()))
    _CODE[key] = code = tuple(found)
    return code


_INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*(?:\t(.*))?$")


def _key(path: Path) -> tuple[str, int, int]:
    stat = Path(path).stat()
    return str(path), stat.st_mtime_ns, stat.st_size


_SECTION = re.compile(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([A-Za-z]*)\s+\d+\s+\d+\s+\d+")


def _sections(text: str) -> list[Section]:
    out = []
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m and m.group(2) != "NULL":
            out.append(Section(int(m.group(1)), m.group(2), m.group(3), m.group(7), int(m.group(4), 16),
                               int(m.group(5), 16), int(m.group(6), 16)))
    return out


def _symbols(text: str) -> list[list[str]]:
    """The rows of readelf's symbol tables (``.symtab``; ``.dynsym`` where there is no ``.symtab``)."""
    tables: list[list[list[str]]] = []
    for line in text.splitlines():
        if line.startswith("Symbol table "):
            tables.append([])
            continue
        parts = line.split(None, 7)
        if tables and len(parts) >= 7 and parts[0].endswith(":") and parts[0][:-1].isdigit():
            tables[-1].append(parts + [""] * (8 - len(parts)))
    # A linked library has .dynsym then .symtab: the last is the complete one.
    return tables[-1] if tables else []


_IMAGES: dict[tuple[str, int, int], ElfImage] = {}
_CODE: dict[tuple[str, int, int], tuple[Instruction, ...]] = {}


# --- Facts the audits decide on ---------------------------------------------------------

# Instructions that enter the operating system's kernel (or switch code segment, the way
# 64-bit code reaches the 32-bit int 0x80 gate). int3 (a breakpoint, and padding) is not one.
SYSTEM_CALL_MNEMONICS = frozenset({"syscall", "sysenter", "sysexit", "sysret", "sysretq", "sysexitl", "sysexitq",
                                   "sysretl", "int", "int1", "icebp", "into", "lcall", "ljmp", "lcallq", "ljmpq",
                                   "lcalll", "ljmpl"})
_PADDING = frozenset({"nop", "nopw", "nopl", "int3", "xchg   %ax,%ax"})


@dataclass(frozen=True)
class DataSymbol:
    section: str
    name: str
    demangled: str
    bind: str
    size: int


def writable_data(image: ElfImage) -> tuple[tuple[DataSymbol, ...], tuple[tuple[str, int], ...]]:
    """Symbols in allocated sections with the write flag (TLS included, read-only-after-relocation
    ``.data.rel.ro*`` left out: only the loader writes it) and common symbols; and, per such
    section, how many of its bytes no symbol covers."""
    by_index = {s.index: s for s in image.sections if s.writable and not s.relro}
    found: list[DataSymbol] = []
    covered: dict[int, list[tuple[int, int]]] = {i: [] for i in by_index}
    for sym in image.symbols:
        if sym.type in ("SECTION", "FILE"):
            continue
        if sym.common:
            found.append(DataSymbol("COMMON", sym.name, sym.demangled, sym.bind, sym.size))
        elif sym.section in by_index and sym.type not in ("FUNC", "IFUNC"):
            found.append(DataSymbol(by_index[sym.section].name, sym.name, sym.demangled, sym.bind, sym.size))
            covered[sym.section].append((sym.value, sym.value + max(sym.size, 0)))
    anonymous = []
    for index, section in by_index.items():
        if section.size and _uncovered(covered[index], section.address, section.size):
            anonymous.append((section.name, _uncovered(covered[index], section.address, section.size)))
    return tuple(found), tuple(anonymous)


def _uncovered(ranges: list[tuple[int, int]], start: int, size: int) -> int:
    end, at, gap = start + size, start, 0
    for lo, hi in sorted(ranges):
        if lo > at:
            gap += min(lo, end) - at
        at = max(at, hi)
        if at >= end:
            break
    return gap + max(0, end - at)


@dataclass(frozen=True)
class CodeFacts:
    system_calls: tuple[tuple[str, str, int, str], ...]  # (function, section, offset, instruction)
    stray: tuple[tuple[str, int, int, str], ...]  # (section, offset, bytes, first instruction) outside functions
    data_in_code: tuple[tuple[str, str, str], ...]  # (section, symbol, type) of non-functions in code


def machine_code(image: ElfImage, code: tuple[Instruction, ...], *,
                 only_functions: frozenset[str] | None = None) -> CodeFacts:
    """System-call instructions inside functions, executable bytes outside every function that
    are not alignment padding (nop, int3, zeros), and non-function symbols in executable sections.

    ``only_functions``: look only at these functions (by name as linked) and leave stray bytes
    and data symbols out: a linked library's own start-up code, PLT and std are not the kernel's."""
    executable = {s.index: s for s in image.sections if s.executable}
    functions: dict[int, list[tuple[int, int, str]]] = {i: [] for i in executable}
    data_in_code = []
    for sym in image.symbols:
        if sym.section not in executable or sym.type in ("SECTION", "FILE"):
            continue
        if sym.type in ("FUNC", "IFUNC"):
            functions[sym.section].append((sym.value, sym.value + sym.size, sym.name if only_functions is not None
                                           else sym.demangled))
        elif only_functions is None and not _local_label(sym):
            data_in_code.append((executable[sym.section].name, sym.demangled, sym.type))
    for ranges in functions.values():
        ranges.sort()
    names = {sym.name: sym.demangled for sym in image.symbols}
    calls, stray = [], []
    run: list[Instruction] = []

    def close_run() -> None:
        if run:
            size = run[-1].address + len(run[-1].hex.split()) - run[0].address
            stray.append((executable[run[0].section].name, run[0].address - executable[run[0].section].address,
                          size, run[0].text or run[0].hex))
            run.clear()

    for ins in code:
        owner = _owner(functions.get(ins.section, ()), ins.address)
        if owner is None:
            if only_functions is None and not _padding(ins):
                if run and (run[-1].section != ins.section):
                    close_run()
                run.append(ins)
            else:
                close_run()
            continue
        close_run()
        if only_functions is not None and owner not in only_functions:
            continue
        if ins.mnemonic in SYSTEM_CALL_MNEMONICS:
            section = executable[ins.section]
            calls.append((names.get(owner, owner), section.name, ins.address - section.address, ins.text))
    close_run()
    return CodeFacts(tuple(calls), tuple(stray), tuple(data_in_code))


def _owner(ranges, address: int) -> str | None:
    """The function whose [start, end) holds the address (ranges sorted by start)."""
    i = bisect.bisect_right(ranges, (address, float("inf"), "")) - 1
    while i >= 0:
        lo, hi, name = ranges[i]
        if lo <= address < hi:
            return name
        if hi <= address and (i == 0 or ranges[i - 1][1] <= lo):
            return None  # no earlier, overlapping function reaches this far
        i -= 1
    return None


def _padding(ins: Instruction) -> bool:
    return ins.mnemonic in _PADDING or ins.text.startswith("xchg   %ax,%ax") or set(ins.hex.split()) == {"00"}


def _local_label(sym: Symbol) -> bool:
    """Assembler-local labels (.L*, $x) and linker markers that a linked library keeps: not data."""
    return sym.type == "NOTYPE" and (sym.name.startswith((".L", "$")) or sym.name in (
        "_init", "_fini", "__bss_start", "_edata", "_end", "__GNU_EH_FRAME_HDR"))
