"""Generate the Unicode tables of the WordPiece kernel (op opgen.text.wordpiece_encode).

Why this script exists: BERT's normalizer and pre-tokenizer need Unicode character data
(control characters, whitespace, CJK ranges, canonical decomposition with accent marks
removed, lower-casing, canonical combining classes, punctuation). Standard-library C++ and
Rust have none of it, and a kernel is one self-contained source file, so the data travels
as constant range tables: in the spec (which the prompt shows the LLM, so an answer can copy
them) and in each shipped answer.

Where the data comes from: the reference itself. ``tokenizers`` (Hugging Face, Rust) carries
Unicode data of several vintages (its category and decomposition crates predate Unicode 14,
its lower-casing is Rust's), so Python's ``unicodedata`` disagrees with it on hundreds of code
points (newer marks it does not strip, newer punctuation it does not split). The script
therefore asks tokenizers' own normalizer and pre-tokenizer about every code point, compresses
the answers into range tables, and then checks a Python model of the kernel's algorithm,
driven only by those tables, against tokenizers on every code point alone, on every pair of
the characters where order matters (combining marks), and on marks separated by every
character the normalizer drops. A table that does not reproduce the reference is never written.

    python scripts/gen_wordpiece_tables.py           # probe, verify, print a summary
    python scripts/gen_wordpiece_tables.py --write   # ... and rewrite the tables in the spec and answers
    python scripts/gen_wordpiece_tables.py --check   # exit 1 if the files hold other tables
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs/opgen/text/wordpiece_encode.yaml"
# Files holding a copy of the tables between the markers, and the syntax each one uses.
TARGETS = {
    SPEC: "prompt",
    ROOT / "answers/cpp/opgen.text.wordpiece_encode__bert_uncased.cpp": "cpp",
    ROOT / "answers/rust/opgen.text.wordpiece_encode__bert_uncased.rs": "rust",
    # the same tokenizer over a vocabulary prepared once (opgen.text.wordpiece_vocab_table)
    ROOT / "specs/opgen/text/wordpiece_encode_table.yaml": "prompt",
    ROOT / "answers/cpp/opgen.text.wordpiece_encode_table__bert_uncased.cpp": "cpp",
    ROOT / "answers/rust/opgen.text.wordpiece_encode_table__bert_uncased.rs": "rust",
}
BEGIN = "BEGIN GENERATED TABLES (scripts/gen_wordpiece_tables.py; do not edit)"
END = "END GENERATED TABLES"

# RAW_CLASS classes: what BERT's clean_text and handle_chinese_chars do to a raw character.
DROP, SPACE, CJK = 1, 2, 3
# FOLD kinds: lower(strip_marks(nfd(c))) for one character c.
F_DROP, F_DELTA, F_ALT_DELTA, F_CONST, F_SEQ, F_HANGUL = 0, 1, 2, 3, 4, 5
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
MAX_CP = 0x110000


def chars():
    """Every Unicode scalar value (surrogates cannot be in a str that crosses the ABI)."""
    return (cp for cp in range(MAX_CP) if not 0xD800 <= cp <= 0xDFFF)


@dataclass
class Probe:
    """What tokenizers does with each code point, asked one at a time."""

    clean: dict[int, str] = field(default_factory=dict)  # clean_text only (where it changes c)
    cjk: set[int] = field(default_factory=set)  # padded with spaces by handle_chinese_chars
    fold: dict[int, str] = field(default_factory=dict)  # strip_accents + lowercase (where it changes c)
    punct: set[int] = field(default_factory=set)  # isolated by BertPreTokenizer
    space: set[int] = field(default_factory=set)  # split on (and dropped) by BertPreTokenizer
    nonstarter: set[int] = field(default_factory=set)  # does not end a run of combining marks


def probe() -> Probe:
    from tokenizers import normalizers, pre_tokenizers

    bert = normalizers.BertNormalizer
    clean = bert(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False).normalize_str
    cjk = bert(clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False).normalize_str
    fold = bert(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=True).normalize_str
    split = pre_tokenizers.BertPreTokenizer().pre_tokenize_str
    p = Probe()
    # Two marks that survive accent stripping and that canonical ordering swaps (classes 226
    # then 216; 224 then 9 for characters that fold to one of the first two): a character
    # placed between them ends the run of marks unless they still swap.
    swapping = [("\U0001D16D", "\U0001D165"), ("\u302E", "\u1B44")]
    for cp in chars():
        c = chr(cp)
        if (out := clean(c)) != c:
            p.clean[cp] = out
        if cjk(c) != c:
            p.cjk.add(cp)
        if (out := fold(c)) != c:
            p.fold[cp] = out
        pieces = len(split("a" + c + "a"))  # a|c|a: punctuation; a|a: whitespace; aca: neither
        if pieces == 3:
            p.punct.add(cp)
        elif pieces == 2:
            p.space.add(cp)
        hi_mark, lo_mark = next((a, b) for a, b in swapping if a not in fold(c) and b not in fold(c))
        out = fold(hi_mark + c + lo_mark)
        if out.index(hi_mark) > out.index(lo_mark):
            p.nonstarter.add(cp)
    return p


@dataclass
class Tables:
    raw_class: list[tuple[int, int, int]]  # (lo, hi, class)
    fold_one: list[tuple[int, int]]  # (code point, the one code point it folds to)
    fold: list[tuple[int, int, int, int]]  # (lo, hi, kind, value): runs and everything else
    fold_seq: list[int]  # pool for F_SEQ: count, then code points
    nonstarter: list[tuple[int, int]]
    mark_ccc: list[tuple[int, int]]  # (code point, canonical combining class)
    punct: list[tuple[int, int]]
    space: list[tuple[int, int]]


def ranges(cps) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for cp in sorted(cps):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [(a, b) for a, b in out]


def hangul(cp: int) -> str:
    s = cp - HANGUL_FIRST
    jamo = [0x1100 + s // 588, 0x1161 + (s % 588) // 28] + ([0x11A7 + s % 28] if s % 28 else [])
    return "".join(map(chr, jamo))


def build(p: Probe) -> Tables:
    raw: dict[int, int] = {}
    for cp, out in p.clean.items():
        if out == "":
            raw[cp] = DROP
        elif out == " ":
            raw[cp] = SPACE
        else:
            raise SystemExit(f"clean_text maps U+{cp:04X} to {out!r}: the table format has no room for that")
    for cp in p.cjk:
        if cp in raw:
            raise SystemExit(f"U+{cp:04X} is both cleaned and CJK")
        raw[cp] = CJK
    raw_class = []
    for lo, hi in ranges(raw):
        start = lo
        for cp in range(lo + 1, hi + 2):
            if cp > hi or raw[cp] != raw[start]:
                raw_class.append((start, cp - 1, raw[start]))
                start = cp
    return Tables(raw_class, *encode_fold(p.fold), ranges(p.nonstarter), mark_classes(p),
                  ranges(p.punct), ranges(p.space))


def encode_fold(fold: dict[int, str]) -> tuple[list[tuple[int, int]], list[tuple[int, int, int, int]], list[int]]:
    """Greedy run-length encoding of the per-character fold map (longest run wins); lone
    one-to-one mappings (most of them: CJK compatibility ideographs, irregular case pairs)
    go to a table of pairs, which is half the size."""
    for cp in range(HANGUL_FIRST, HANGUL_LAST + 1):
        if fold.get(cp) != hangul(cp):
            raise SystemExit(f"U+{cp:04X} does not decompose like a Hangul syllable")
    entries: list[tuple[int, int, int, int]] = [(HANGUL_FIRST, HANGUL_LAST, F_HANGUL, 0)]
    pool: list[int] = []
    seqs: dict[str, int] = {}
    todo = sorted(cp for cp in fold if not HANGUL_FIRST <= cp <= HANGUL_LAST)
    done: set[int] = set()
    for cp in todo:
        if cp in done:
            continue
        m = fold[cp]
        if len(m) == 0:
            hi = cp
            while fold.get(hi + 1) == "":
                hi += 1
            entry = (cp, hi, F_DROP, 0)
            covered = range(cp, hi + 1)
        elif len(m) > 1:
            if m not in seqs:
                seqs[m] = len(pool)
                pool += [len(m), *map(ord, m)]
            entry, covered = (cp, cp, F_SEQ, seqs[m]), [cp]
        else:
            target, delta = ord(m), ord(m) - cp
            runs = []
            hi = cp  # delta: every code point in the run moves by the same amount
            while len(fold.get(hi + 1, "")) == 1 and ord(fold[hi + 1]) - (hi + 1) == delta:
                hi += 1
            runs.append((hi - cp + 1, (cp, hi, F_DELTA, delta), range(cp, hi + 1)))
            hi = cp  # constant: every code point maps to the same one
            while fold.get(hi + 1) == m:
                hi += 1
            runs.append((hi - cp + 1, (cp, hi, F_CONST, target), range(cp, hi + 1)))
            hi = cp  # alternate: upper/lower pairs, every other code point unchanged
            while (hi + 1 not in fold and len(fold.get(hi + 2, "")) == 1
                   and ord(fold[hi + 2]) - (hi + 2) == delta):
                hi += 2
            runs.append(((hi - cp) // 2 + 1, (cp, hi, F_ALT_DELTA, delta), range(cp, hi + 1, 2)))
            _, entry, covered = max(runs, key=lambda r: r[0])  # first wins a tie: delta
        entries.append(entry)
        done.update(covered)
    one = sorted((lo, lo + v if k == F_DELTA else v) for lo, hi, k, v in entries
                 if lo == hi and k in (F_DELTA, F_CONST))
    runs = sorted(e for e in entries if not (e[0] == e[1] and e[2] in (F_DELTA, F_CONST)))
    return one, runs, pool


def mark_classes(p: Probe) -> list[tuple[int, int]]:
    """The canonical combining class of each mark that survives folding with a non-zero class.

    The classes come from unicodedata; verify() checks that they order marks as tokenizers does."""
    import unicodedata

    marks = sorted({ord(ch) for cp in p.nonstarter for ch in p.fold.get(cp, chr(cp))}
                   | {ord(ch) for out in p.fold.values() for ch in out if unicodedata.combining(ch)})
    return [(cp, unicodedata.combining(chr(cp))) for cp in marks if unicodedata.combining(chr(cp))]


class Model:
    """The kernel's normalizer in Python, driven only by the tables."""

    def __init__(self, t: Tables):
        self.t = t
        self.raw = {cp: cls for lo, hi, cls in t.raw_class for cp in range(lo, hi + 1)}
        self.fold: dict[int, list[int]] = {cp: [target] for cp, target in t.fold_one}
        for lo, hi, kind, value in t.fold:
            for cp in range(lo, hi + 1):
                if kind == F_DROP:
                    self.fold[cp] = []
                elif kind == F_DELTA:
                    self.fold[cp] = [cp + value]
                elif kind == F_ALT_DELTA and (cp - lo) % 2 == 0:
                    self.fold[cp] = [cp + value]
                elif kind == F_CONST:
                    self.fold[cp] = [value]
                elif kind == F_SEQ:
                    n = t.fold_seq[value]
                    self.fold[cp] = t.fold_seq[value + 1:value + 1 + n]
                elif kind == F_HANGUL:
                    self.fold[cp] = [ord(x) for x in hangul(cp)]
        self.nonstarter = {cp for lo, hi in t.nonstarter for cp in range(lo, hi + 1)}
        self.ccc = dict(t.mark_ccc)

    def normalize(self, text: str) -> str:
        out: list[int] = []
        run = 0  # where the current run of combining marks starts in out

        def starter(cp: int) -> None:
            nonlocal run
            out.append(cp)
            run = len(out)

        for ch in text:
            cp = ord(ch)
            cls = self.raw.get(cp, 0)
            if cls == DROP:
                continue
            if cls == SPACE:
                starter(0x20)
                continue
            if cls == CJK:
                starter(0x20)
            if cp not in self.nonstarter:
                run = len(out)
            for o in self.fold.get(cp, [cp]):
                k = self.ccc.get(o, 0)
                if k == 0:
                    starter(o)
                    continue
                i = len(out)  # canonical ordering: a stable insertion by class within the run
                out.append(o)
                while i > run and self.ccc.get(out[i - 1], 0) > k:
                    out[i - 1], out[i] = out[i], out[i - 1]
                    i -= 1
            if cls == CJK:
                starter(0x20)
        return "".join(map(chr, out))


def verify(t: Tables, p: Probe) -> int:
    """Check the model against tokenizers; returns the number of strings compared."""
    from tokenizers import normalizers

    hf = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                    lowercase=True).normalize_str
    model = Model(t)
    assert model.fold == {cp: [ord(x) for x in out] for cp, out in p.fold.items()}, "fold table round trip"
    checked = 0
    for cp in chars():
        c = chr(cp)
        if model.normalize(c) != hf(c):
            raise SystemExit(f"model and tokenizers disagree on U+{cp:04X}: {model.normalize(c)!r} vs {hf(c)!r}")
        checked += 1
    # Order matters only around marks with a non-zero class: every pair of characters that
    # yields or passes such a mark, plus a few starters and dropped characters.
    ccc = dict(t.mark_ccc)
    movers = sorted(p.nonstarter | {cp for cp, out in p.fold.items() if any(ord(x) in ccc for x in out)}
                    | set(ccc))
    movers += [ord(x) for x in "aé\u200b \u4e00"]
    for x in movers:
        for y in movers:
            s = chr(x) + chr(y)
            if model.normalize(s) != hf(s):
                raise SystemExit(f"model and tokenizers disagree on {s!r}: {model.normalize(s)!r} vs {hf(s)!r}")
            checked += 1
    # Two marks that swap, separated by each character that vanishes (dropped by clean_text or
    # by folding): a vanished character ends the run of marks only if it is a starter.
    gone = [cp for lo, hi, cls in t.raw_class if cls == DROP for cp in range(lo, min(hi, lo + 64) + 1)]
    gone += [cp for cp, out in p.fold.items() if out == ""]
    for mid in gone:
        for a, b in (("\U0001D16D", "\U0001D165"), ("\u0F72", "\u0F71"), ("\u302E", "\u1B44")):
            s = a + chr(mid) + b
            if model.normalize(s) != hf(s):
                raise SystemExit(f"model and tokenizers disagree on {s!r}: {model.normalize(s)!r} vs {hf(s)!r}")
            checked += 1
    return checked


# --- rendering: the same numbers in the prompt's, C++'s and Rust's syntax --------------------

TABLES_DOC = [
    ("RAW_CLASS", "raw_class", 3, "triples (lo, hi, class), sorted: what clean_text and handle_chinese_chars do "
     "to a raw character in lo..=hi. class 1: removed; 2: becomes one space U+0020; 3: CJK, surrounded by "
     "spaces. Characters in no range are kept."),
    ("FOLD_ONE", "fold_one", 2, "pairs (c, f), sorted: lower(strip_marks(NFD(c))) is the one code point f."),
    ("FOLD", "fold", 4, "quadruples (lo, hi, kind, value), sorted: lower(strip_marks(NFD(c))) for the other "
     "characters c in lo..=hi. kind 0: removed (a nonspacing mark); 1: c + value; 2: c + value where (c - lo) is even, c "
     "itself where it is odd; 3: value; 4: the code points FOLD_SEQ[value+1 .. value+1+FOLD_SEQ[value]]; "
     "5: Hangul syllable, decomposed arithmetically (L = 0x1100 + s/588, V = 0x1161 + (s%588)/28, and "
     "T = 0x11A7 + s%28 when s%28 != 0, with s = c - 0xAC00). Characters in neither FOLD_ONE nor FOLD map "
     "to themselves."),
    ("FOLD_SEQ", "fold_seq", 1, "the pool FOLD kind 4 points into: a count, then that many code points."),
    ("NONSTARTER", "nonstarter", 2, "pairs (lo, hi), sorted: raw characters whose canonical decomposition "
     "consists only of combining marks (non-zero combining class). Every other character ends the current "
     "run of combining marks, even when folding removes it entirely."),
    ("MARK_CCC", "mark_ccc", 2, "pairs (code point, combining class), sorted: the canonical combining class of "
     "every code point that FOLD can output with a non-zero class. Every other output has class 0."),
    ("PUNCT", "punct", 2, "pairs (lo, hi), sorted: punctuation for the pre-tokenizer (each one is a word)."),
    ("SPACE", "space", 2, "pairs (lo, hi), sorted: whitespace for the pre-tokenizer (splits words, is dropped)."),
]


def flat(t: Tables, attr: str) -> list[int]:
    rows = getattr(t, attr)
    return [x for row in rows for x in (row if isinstance(row, tuple) else (row,))]


# Columns that hold code points (written in hex from 0x80 up); the others are classes, kinds,
# deltas and offsets, in decimal. FOLD_SEQ mixes counts and code points: every value >= 0x80 is hex.
CODE_POINT_COLUMNS = {"raw_class": (0, 1), "fold_one": (0, 1), "fold": (0, 1), "fold_seq": (0,),
                      "nonstarter": (0, 1), "mark_ccc": (0,), "punct": (0, 1), "space": (0, 1)}


def numbers(values: list[int], width: int, hex_columns: tuple[int, ...]) -> list[str]:
    per_line = {1: 16, 2: 8, 3: 6, 4: 4}[width] * width
    text = [f"0x{v:04X}" if v >= 0x80 and i % width in hex_columns else str(v) for i, v in enumerate(values)]
    return [", ".join(text[i:i + per_line]) + "," for i in range(0, len(text), per_line)]


def render(t: Tables, syntax: str) -> list[str]:
    """The tables as the prompt shows them (plain numbers under a description), or as C++ or Rust
    constants; the numbers are the same text in all three."""
    lines: list[str] = []
    for name, attr, width, doc in TABLES_DOC:
        values = flat(t, attr)
        rows = numbers(values, width, CODE_POINT_COLUMNS[attr])
        if syntax == "prompt":
            lines += [f"{name} ({len(values)} integers): {doc}", *rows, ""]
        elif syntax == "cpp":
            lines += [f"// {doc}", f"constexpr int32_t {name}[] = {{", *("    " + r for r in rows), "};"]
        else:
            lines += [f"// {doc}", f"static {name}: [i32; {len(values)}] = [", *("    " + r for r in rows), "];"]
    return lines[:-1] if syntax == "prompt" else lines


def splice(path: Path, syntax: str, t: Tables) -> tuple[str, str]:
    """(current text, text with fresh tables) of a file holding the markers."""
    text = path.read_text()
    m = re.search(r"^([ \t]*)(?://[ ]?)?" + re.escape(BEGIN) + r"[^\n]*\n(.*?)^[ \t]*(?://[ ]?)?" + re.escape(END),
                  text, re.S | re.M)
    if not m:
        raise SystemExit(f"{path}: no '{BEGIN}' ... '{END}' markers")
    indent = m.group(1)
    comment = "" if syntax == "prompt" else "// "
    body = "\n".join((indent + line).rstrip() for line in render(t, syntax))
    block = f"{indent}{comment}{BEGIN}\n{body}\n{indent}{comment}{END}"
    return text, text[:m.start()] + block + text[m.end():]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the tables in the spec and the answers")
    parser.add_argument("--check", action="store_true", help="exit 1 if a file holds other tables")
    args = parser.parse_args()
    p = probe()
    t = build(p)
    checked = verify(t, p)
    sizes = ", ".join(f"{name} {len(flat(t, attr))}" for name, attr, _, _ in TABLES_DOC)
    print(f"tables ({sizes} integers) reproduce tokenizers on {checked} strings")
    stale = []
    for path, syntax in TARGETS.items():
        if not path.exists():
            continue
        old, new = splice(path, syntax, t)
        if old != new:
            stale.append(path)
            if args.write:
                path.write_text(new)
    for path in stale:
        print(f"{'rewrote' if args.write else 'out of date'}: {path.relative_to(ROOT)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
