"""Hypothesis strategies for text parameters (a domain's ``strings`` kind).

``mixed_text`` draws what a tokenizer meets: words in mixed case with accents, other
scripts, CJK ideographs, digits, punctuation (ASCII and Unicode), control and format
characters, combining marks (including ones canonical ordering moves), whitespace runs
of every kind, words longer than WordPiece's 100-character limit, literal special tokens
and near misses, arbitrary Unicode, and the empty string. Texts are concatenations of
such segments, so Hypothesis shrinks a failure to the few segments that cause it.

``wordpiece_vocab`` draws a small WordPiece vocabulary: BERT's five special tokens and
unique pieces (``##`` continuations among them) over the letters the text's words fold
to, in a drawn order, so that greedy longest-match really has choices to make on the
drawn text: a fixed real vocabulary almost never exercises backtracking on short pieces.
"""

from __future__ import annotations

from hypothesis import strategies as st


BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

# Word letters in the text, and what lower-casing and accent stripping fold them to: the
# vocabulary is drawn over the folded ones.
TEXT_LETTERS = "abcdABCDàÁäçÇЖжαΆ"
VOCAB_LETTERS = "abcdжα"
WHITESPACE = " \t\n\r\x0b\x0c\x85\xa0\u1680\u2002\u2028\u2029\u202f\u3000"
PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~¡¿«»—…‘’“”、。「」・！？\u037e"
# Removed by the normalizer: NUL, C0/C1 controls, soft hyphen, zero-width and BOM, U+FFFD,
# private use.
CONTROL = "\x00\x01\x1f\x7f\x9f\xad\u200b\u200d\u2060\ufeff\ufffd\ue000\U000f0000"
# Combining marks: stripped accents, and marks that survive stripping with a non-zero
# combining class (canonical ordering reorders runs of them).
MARKS = "\u0301\u0308\u0327\u0f71\u0344\u302e\u1b44\u08d4\U0001d165\U0001d16d"
CJK = "中文字一\u3400\uf900\uf9a1\U00020000\U0002f800"
SCRIPT_WORDS = ("한국어", "ひらがな", "カタカナ", "עברית", "العربية", "हिन्दी", "ไทย", "Ελληνικά", "Straße", "İstanbul")
SPECIAL_LITERALS = BERT_SPECIAL_TOKENS + ("[cls]", "[CLS", "[[SEP]]", "a[MASK]b")
# Pieces of the vocabulary beyond the letter words: folded punctuation, CJK, Hangul jamo,
# kana, digits, marks.
EXTRA_PIECES = (",", ".", "!", ";", "[", "]", "中", "文", "ᄒ", "##ᅡ", "##ᆫ", "ひ", "##ら", "0", "12", "##3", "straße",
                "\U0001d165", "##\U0001d165\U0001d16d", "a\U0001d165")
# The MARKS that survive folding with a non-zero combining class: only pieces holding them
# make their canonical order visible in the ids, so they are continuations like the letters.
SURVIVING_MARKS = "\u08d4\u302e\u1b44\U0001d165\U0001d16d"


def _one_of_chars(alphabet: str, min_size: int = 1, max_size: int = 1) -> st.SearchStrategy[str]:
    return st.text(st.sampled_from(alphabet), min_size=min_size, max_size=max_size)


# Half the segments are words, whitespace runs or punctuation; the other half spread over
# everything else. A segment is followed by a space or by nothing: with nothing it fuses with
# the next one into one word (a letter word after an accent, a control inside a word).
SEGMENTS = st.tuples(
    st.one_of(
        st.one_of(
            _one_of_chars(TEXT_LETTERS, 1, 12),
            _one_of_chars(WHITESPACE, 1, 4),
            _one_of_chars(PUNCTUATION),
        ),
        st.one_of(
            _one_of_chars(CONTROL),
            _one_of_chars(MARKS, 1, 3),
            st.tuples(_one_of_chars(TEXT_LETTERS, 1, 3), _one_of_chars(MARKS, 2, 3)).map("".join),  # marked word
            _one_of_chars(CJK, 1, 3),
            st.sampled_from(SCRIPT_WORDS),
            st.sampled_from(SPECIAL_LITERALS),
            _one_of_chars("0123456789", 1, 6),
            _one_of_chars("ab", 95, 105),  # around WordPiece's 100-character limit
            st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=4),  # anything
        ),
    ),
    st.sampled_from((" ", "")),
).map("".join)


# Separators, affixes and strip sets that occur in mixed_text's texts.
PIECES = (" ", ",", ", ", "a", "ab", "ba", "aa", "\t", "\n", "  ", ".", "ä", "中", "Straße", "ß", "\u3000",
          "\x1f", "\u0301", "[CLS]")


def text_pieces() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(PIECES), _one_of_chars(TEXT_LETTERS[:6] + " ,.\t", 0, 3))


def mixed_text(max_segments: int = 24) -> st.SearchStrategy[str]:
    return st.lists(SEGMENTS, max_size=max_segments).map("".join)


@st.composite
def wordpiece_vocab(draw: st.DrawFn, max_len: int = 53) -> list[str]:
    """The special tokens and up to ``max_len`` - 5 pieces, in a drawn order.

    Most single letters are pieces both at a word's start and as ``##`` continuations (a
    few are left out, so some words cannot be covered and become [UNK]); longer pieces on
    top give greedy longest-match choices that need backtracking to the next shorter one."""
    room = max(max_len - len(BERT_SPECIAL_TOKENS), 0)
    letters = list(VOCAB_LETTERS)
    no_start = draw(st.sets(st.sampled_from(letters), max_size=2), label="letters that start no piece")
    no_cont = draw(st.sets(st.sampled_from(letters), max_size=2), label="letters that continue no piece")
    singles = [c for c in letters if c not in no_start] + ["##" + c for c in letters + list(SURVIVING_MARKS)
                                                           if c not in no_cont]
    word = _one_of_chars(VOCAB_LETTERS, 2, 4)
    longer = draw(st.lists(st.one_of(word, word.map("##".__add__), st.sampled_from(EXTRA_PIECES)),
                           unique=True, max_size=room), label="longer pieces")
    pieces = list(dict.fromkeys(singles + longer))[:room]
    return draw(st.permutations(list(BERT_SPECIAL_TOKENS) + pieces), label="vocabulary order")


# Python's format-spec mini-language, [[fill]align][sign][z][#][0][width][grouping][.precision][type].
# Half the specs are well formed for one value type (str, int or float), fill, alignment and width
# drawn often (what f-strings use most) and the rarer fields now and then; the rest take every
# field present or absent at random, so specs Python refuses for one type but not another (','
# with 'x', a precision on an int, '=' on a str) and malformed ones (',_', a '.' with no digits,
# two type codes, an unknown code) occur too. Fills include multi-byte code points and the
# characters the grammar itself uses.
FORMAT_FILLS = (" ", "*", "0", "_", ",", "=", "<", ".", "#", "z", "é", "中", "\u3000", "\U0001f600")
FORMAT_TYPES = tuple("bcdoxXneEfFgG%s") + ("q", "A", "é", "ss")
FORMAT_FAMILY_TYPES = {"str": ("", "s"), "int": ("", "b", "c", "d", "o", "x", "X", "n"),
                       "float": ("", "e", "E", "f", "F", "g", "G", "n", "%")}
FORMAT_GROUPINGS = (",", "_", ",_", "_,", ",,")


def _optional(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.just(""), strategy)


def _often(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(strategy, strategy, strategy, st.just(""))


def _rarely(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.just(""), st.just(""), st.just(""), strategy)


_FILL_ALIGN = st.one_of(st.sampled_from("<>=^"), st.tuples(st.sampled_from(FORMAT_FILLS), st.sampled_from("<>=^")).map("".join))
_WIDTH = st.one_of(st.integers(0, 12), st.integers(0, 40), st.integers(0, 300)).map(str)
_PRECISION = st.one_of(st.integers(0, 8), st.integers(0, 20), st.integers(0, 60)).map(lambda p: f".{p}")


@st.composite
def _well_formed_spec(draw: st.DrawFn) -> str:
    family = draw(st.sampled_from(sorted(FORMAT_FAMILY_TYPES)))
    numeric = family != "str"
    parts = [
        draw(_often(_FILL_ALIGN if numeric else _FILL_ALIGN.filter(lambda f: not f.endswith("=")))),
        draw(_rarely(st.sampled_from("+- "))) if numeric else "",
        draw(_rarely(st.just("z"))) if family == "float" else "",
        draw(_rarely(st.just("#"))) if numeric else "",
        draw(_rarely(st.just("0"))),
        draw(_often(_WIDTH)),
        draw(_rarely(st.sampled_from(",_"))) if numeric else "",
        draw(_optional(_PRECISION)) if family != "int" else "",
        draw(st.sampled_from(FORMAT_FAMILY_TYPES[family])),
    ]
    return "".join(parts)


def format_specs() -> st.SearchStrategy[str]:
    precision = st.one_of(_PRECISION, st.just("."))
    fields = st.tuples(_optional(_FILL_ALIGN), _optional(st.sampled_from("+- ")), _optional(st.just("z")),
                       _optional(st.just("#")), _optional(st.just("0")), _optional(_WIDTH),
                       _optional(st.sampled_from(FORMAT_GROUPINGS)), _optional(precision),
                       _optional(st.sampled_from(FORMAT_TYPES)))
    return st.one_of(_well_formed_spec(), _well_formed_spec(), _well_formed_spec(), fields.map("".join),
                     st.just(""), text_pieces())


# What case mapping meets (str.lower, str.upper). Letters with one-to-many mappings (SpecialCasing's
# unconditional ones), and code points that are Case_Ignorable (apostrophes, the period, the colon,
# combining marks, modifier letters, format characters, variation selectors), some of them Cased
# too (U+0345, U+02B0): the Final_Sigma rule skips them on both sides of a capital sigma and then
# asks whether a cased letter is there. Cased letters of every script (and beyond the BMP) come
# from Hypothesis's own draw over the letter categories.
ONE_TO_MANY = "ßİŉǰΐΰևẖẗẘẙẚὐὒὔὖᾀᾈᾏᾳᾼῂῄῖῗῢῤῦῧῲῼﬀﬁﬂﬃﬄﬅﬆﬓﬔﬕﬖﬗ"
CASE_IGNORABLE = "'’.:·^`\u0345\u0307\u0301\u0308\u00ad\u200b\u200d\u02b0\u02bc\u1d2c\u2019\ufe00\U000e0100"
CASE_CONTEXT = "ΣσςAaÅåǅǈΪΐ1 -\u3000中\U0001e900\U0001e922\U00010400\U00010428"
_CASED_LETTERS = st.characters(categories=("Lu", "Ll", "Lt"))


def _sigma_context() -> st.SearchStrategy[str]:
    """A capital sigma with up to three case-ignorable code points and a letter, digit or space
    on either side (or nothing), so both scans of the Final_Sigma rule have choices to make."""
    side = st.tuples(_optional(st.one_of(st.sampled_from(CASE_CONTEXT), _CASED_LETTERS)),
                     _one_of_chars(CASE_IGNORABLE, 0, 3)).map("".join)
    return st.tuples(side, st.just("Σ"), side.map(lambda s: s[::-1])).map("".join)


CASED_SEGMENTS = st.one_of(
    SEGMENTS,
    st.text(_CASED_LETTERS, min_size=1, max_size=6),
    _one_of_chars(ONE_TO_MANY + TEXT_LETTERS, 1, 4),
    _sigma_context(),
    _one_of_chars(CASE_IGNORABLE + CASE_CONTEXT + ONE_TO_MANY, 1, 6),
)


def cased_text(max_segments: int = 16) -> st.SearchStrategy[str]:
    return st.lists(CASED_SEGMENTS, max_size=max_segments).map("".join)


def every_code_point() -> str:
    """Every code point UTF-8 can hold, in order (about 4.3 MB as UTF-8): the scale stage's
    ``cased_text`` case, which checks a kernel's case tables whole."""
    return "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))


# What repr() and ascii() meet: both quotes (alone, together, repeated: the quote choice), the
# backslash, the three named escapes, other C0 controls and DEL, C1 controls and U+00A0/U+00AD
# (\\xNN as repr writes them), the non-printable code points of every kind str.isprintable()
# names (space separators other than ' ', line and paragraph separators, format characters,
# private use, unassigned, in the BMP and beyond it), and printable non-ASCII at every UTF-8
# length, among mixed_text's segments.
REPR_SPECIAL = "'\"\\\t\n\r\x00\x07\x1b\x1f\x7f\x80\x9f\xa0\xad\xff"
REPR_NONPRINTABLE = ("\u3000\u1680\u2000\u2028\u2029\u200b\u200e\u2066\ufeff\ufff9\ue000\uf8ff\u0378\ufffe\uffff"
                     "\U000110bd\U0001d173\U000e0001\U000f0000\U0010ffff\U0001fffe\U000e01f0")
REPR_PRINTABLE = " ~é中\u0301\ufffd\U0001f600\U00010000\U0002a6d6\U000e0100"
_REPR_CHARS = st.one_of(st.sampled_from(REPR_SPECIAL), st.sampled_from(REPR_NONPRINTABLE),
                        st.sampled_from(REPR_PRINTABLE), st.characters(exclude_categories=("Cs",)))
REPR_SEGMENTS = st.one_of(SEGMENTS, st.text(_REPR_CHARS, min_size=1, max_size=6),
                          st.sampled_from(("'", '"', "'\"", "''", '""', "it's", 'say "hi"', "\\'")))


def repr_text(max_segments: int = 16) -> st.SearchStrategy[str]:
    return st.lists(REPR_SEGMENTS, max_size=max_segments).map("".join)
