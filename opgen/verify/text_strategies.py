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

import math
from decimal import Context, Decimal

from hypothesis import strategies as st

from opgen.references import wordpiece_slot_hash


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


@st.composite
def wordpiece_table_vocab(draw: st.DrawFn, max_len: int = 53) -> list[str]:
    """A wordpiece_vocab with 2 or 3 more pieces whose home slot in opgen.text.wordpiece_vocab_table's
    layout (the spec's hash, C slots for this many pieces) is the last one, so that the second and
    third probe past the end and wrap to slot 0: pieces a lookup must find there. Independent
    draws almost never fill the end of the slots (4 vocabularies in 300 had a wrapped piece)."""
    extra = draw(st.integers(2, 3), label="pieces colliding at the last slot")
    vocab = draw(wordpiece_vocab(max(max_len - extra, len(BERT_SPECIAL_TOKENS))))

    def candidate(i: int) -> str:
        word = "".join(VOCAB_LETTERS[(i // len(VOCAB_LETTERS) ** d) % len(VOCAB_LETTERS)] for d in range(5))
        return "##" + word if i % 2 else word

    return draw(with_colliders(vocab, extra, candidate))


@st.composite
def with_colliders(draw: st.DrawFn, vocab: list[str], extra: int, candidate) -> list[str]:
    """``vocab`` with ``extra`` more pieces (``candidate(i)`` for i from a drawn start) whose home is the last
    of the C slots a table of the spec's layout has for that many pieces (FNV-1a, C the smallest power of
    two >= 16 and >= 2n: opgen.text.wordpiece_vocab_table and bpe_tokenizer_table), at drawn positions,
    so that linear probing for the second and third wraps to slot 0."""
    slots = 16
    while slots < 2 * (len(vocab) + extra):
        slots *= 2
    vocab, taken, colliders = list(vocab), set(vocab), []
    start = draw(st.integers(0, 10**6), label="where the search for colliding pieces starts")
    for i in range(start, start + 400 * slots):  # about one candidate in `slots` qualifies
        piece = candidate(i)
        if piece not in taken and wordpiece_slot_hash(piece.encode()) & (slots - 1) == slots - 1:
            colliders.append(piece)
            taken.add(piece)
            if len(colliders) == extra:
                break
    for piece in colliders:
        vocab.insert(draw(st.integers(0, len(vocab)), label="position of a colliding piece"), piece)
    return vocab


@st.composite
def vocabulary_texts(draw: st.DrawFn, vocabulary: list[str], max_len: int | None = None) -> list[str]:
    """Texts spelled from a WordPiece vocabulary's own pieces (a domain's ``words_of``): words of
    one piece and a few continuations ("##" dropped), specials among them, and now and then one
    text that spells every piece once, so that a lookup meets each piece the table stores (the one
    whose hash slot wrapped around the table's end included), not only pieces it lacks."""
    starts = [p for p in vocabulary if not p.startswith("##") and p not in BERT_SPECIAL_TOKENS and p]
    conts = [p[2:] for p in vocabulary if p.startswith("##") and len(p) > 2]
    specials = [p for p in vocabulary if p in BERT_SPECIAL_TOKENS]
    if not starts:
        return draw(st.lists(mixed_text(), max_size=max_len if max_len is not None else 8))
    word = st.tuples(st.sampled_from(starts), st.lists(st.sampled_from(conts), max_size=3) if conts else st.just([]))
    text = st.lists(st.one_of(word.map(lambda w: w[0] + "".join(w[1])),
                              st.sampled_from(specials) if specials else st.nothing()), max_size=12).map(" ".join)
    texts = draw(st.lists(text, max_size=max_len if max_len is not None else 8), label="texts of the vocabulary")
    if texts and draw(st.integers(0, 3), label="one text spelling every piece") == 0:
        texts[0] = " ".join(starts) + " " + " ".join(starts[i % len(starts)] + c for i, c in enumerate(conts))
    return texts


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


# What int(s) and float(s) meet: numeric literals as Python's own parsers read them, and the near
# misses they refuse. Digits of several scripts (any Unicode decimal digit, category Nd, counts:
# Arabic-Indic, Devanagari, Thai, fullwidth, mathematical bold and monospace, Adlam; alone or mixed
# in one literal); whitespace of every kind around them (the non-ASCII ones Python strips, and the
# traps it does not: U+001C-U+001F, which str.isspace() counts, U+200B, U+FEFF, U+180E, NUL);
# signs, underscores in every position (between digits, doubled, leading, trailing, beside the
# point, the sign or the exponent); the point and exponents of every form (1e5, .5, 5., 1E-3,
# +.5e+2, e400, e-400, e99999999999999999999); inf, infinity and nan in any case and their near
# misses; hex and other prefixes; integers around int64's edges (2**63 - 1, 2**63, -2**63 - 1)
# and past them; zero padding around CPython's 4300-digit limit; float reprs, long fixed
# expansions and the exact midpoints between adjacent doubles (and a hair either side), where
# only a correctly rounded conversion is right; digit-like characters that are not decimal
# digits ('²', '①', 'Ⅳ', '零', the Arabic decimal separator); and short junk over all of these.
NUMBER_DIGIT_ZEROS = (0x30, 0x660, 0x6F0, 0x966, 0xE50, 0xFF10, 0x104A0, 0x11066, 0x1D7CE, 0x1D7F6, 0x1E950)
NUMBER_SPACES = " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000"
NUMBER_NOT_SPACES = "\x1c\x1d\x1e\x1f\u200b\ufeff\u180e\x00"
NUMBER_NOT_DIGITS = "²³¹⁰₀①⑩⅓Ⅳ〇零一٫٬"
NUMBER_WORDS = ("inf", "infinity", "nan")
NUMBER_NEAR_WORDS = ("in", "infinit", "infinityy", "infs", "na", "nann", "nan0", "nan(1)", "inf_inity", "infinity_")
NUMBER_JUNK = ("0x", "0X1F", "0b1", "0o7", "1p3", "0x1p3", "x", "e", "E", ".", "..", "+", "-", "_", "__", "j", "1j",
               "1.2.3", "--", "+-", "é", "?")
_NUMBER_ALPHABET = ("0123456789" + "٠١٢٣" + "०९" + "０９" + "𝟎𝟗" + "+-_.eE" + "infatyINFATY" + " \t\n\x0b\x85\xa0\u3000"
                    + "\x1c\x1f\u200b\x00" + "²①x")
_INT64_EDGES = (2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1, 2**64, 10**18, 10**19, 9999999999999999999, 99999999999999999999)


def _random_case(draw: st.DrawFn, word: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)), label="letter cases")
    return "".join(c.upper() if up else c for c, up in zip(word, flips))


@st.composite
def _digit_string(draw: st.DrawFn) -> str:
    """The ASCII digits of an integer: small, wide, at and past int64's edges, or long."""
    return draw(st.one_of(
        st.integers(0, 999).map(str),
        st.integers(0, 2**70).map(str),
        st.tuples(st.sampled_from(_INT64_EDGES), st.integers(-3, 3)).map(lambda t: str(max(t[0] + t[1], 0))),
        st.text(st.sampled_from("0123456789"), min_size=1, max_size=40),
    ), label="digits")


@st.composite
def _midpoint(draw: st.DrawFn) -> str:
    """The exact decimal expansion of the midpoint between a double and the next one up, or a hair
    above or below it: ties go to the even significand, and only a correctly rounded conversion
    gets every one of them right."""
    x = draw(st.floats(min_value=0.0, max_value=1.7976931348623155e308), label="double below the midpoint")
    ctx = Context(prec=1200)
    mid = ctx.divide(ctx.add(Decimal(x), Decimal(math.nextafter(x, math.inf))), 2)
    nudge = draw(st.sampled_from((0, 0, 1, -1)), label="midpoint nudge")
    if nudge:
        mid = ctx.add(mid, ctx.multiply(Decimal((0, (1,), mid.as_tuple().exponent - 30)), nudge))
    return str(mid)


def _float_literal() -> st.SearchStrategy[str]:
    """A decimal float literal in ASCII, of every form Python's float() reads."""
    floats = st.floats(allow_nan=False, allow_infinity=False, min_value=0.0)
    integer = st.text(st.sampled_from("0123456789"), min_size=0, max_size=25)
    exponent = st.one_of(
        st.just(""),
        st.tuples(st.sampled_from("eE"), st.sampled_from(("", "+", "-")),
                  st.one_of(st.integers(0, 30), st.integers(280, 340), st.integers(0, 10**22)).map(str)).map("".join),
    )
    built = st.tuples(integer, st.sampled_from((".", ".", "")), integer, exponent).map("".join)
    return st.one_of(
        floats.map(repr),
        floats.map(lambda v: f"{v:.17e}"),
        floats.map(lambda v: f"{v:.25g}"),
        st.floats(min_value=0.0, max_value=1e300, allow_nan=False).map(lambda v: f"{v:f}"),  # up to 301 digits
        _midpoint(),
        built,
    )


@st.composite
def _number_literal(draw: st.DrawFn) -> str:
    # Half the literals are clean (what Python reads: the sign, the whitespace and the underscores
    # all legal), so that values are compared and not only errors; the rest may be spoiled anywhere.
    clean = draw(st.booleans(), label="clean literal")
    kind = draw(st.sampled_from(("int", "int", "int", "float", "float", "float", "word")), label="literal kind")
    if kind == "word":
        words = st.sampled_from(NUMBER_WORDS) if clean else st.one_of(st.sampled_from(NUMBER_WORDS),
                                                                      st.sampled_from(NUMBER_NEAR_WORDS))
        body = _random_case(draw, draw(words, label="word"))
    else:
        body = draw(_digit_string() if kind == "int" else _float_literal(), label="literal")
        # zero padding around CPython's 4300-digit limit for int(), now and then
        if draw(st.integers(0, 15), label="pad around 4300 digits?") == 0:
            body = "0" * draw(st.integers(4290, 4310), label="zeros") + body
        # underscores: between digits (allowed), or, spoiled, anywhere (doubled, leading, trailing,
        # beside the point or the exponent)
        for _ in range(draw(st.sampled_from((0, 0, 1, 1, 2, 3)), label="underscores")):
            if clean:
                between = [i for i in range(1, len(body)) if body[i - 1].isdigit() and body[i].isdigit()]
                if not between:
                    break
                at = between[draw(st.integers(0, len(between) - 1), label="underscore between digits")]
                body = body[:at] + "_" + body[at:]
            else:
                at = draw(st.integers(0, len(body)), label="underscore position")
                body = body[:at] + draw(st.sampled_from(("_", "_", "__")), label="underscore") + body[at:]
        # digits of other scripts: the whole literal in one, or (short ones) digit by digit
        script = draw(st.sampled_from(("ascii", "ascii", "one", "mixed")), label="digit script")
        if script == "one":
            zero = draw(st.sampled_from(NUMBER_DIGIT_ZEROS), label="script's zero")
            body = "".join(chr(zero + ord(c) - 48) if "0" <= c <= "9" else c for c in body)
        elif script == "mixed" and len(body) <= 40:
            body = "".join(chr(draw(st.sampled_from(NUMBER_DIGIT_ZEROS), label="digit's script") + ord(c) - 48)
                           if "0" <= c <= "9" else c for c in body)
    signs = ("", "", "-", "+") if clean else ("", "-", "+", "+-", "--", "- ", "-_", "+ ")
    sign = draw(st.sampled_from(signs), label="sign")
    spaces = st.one_of(st.just(""), _one_of_chars(NUMBER_SPACES, 1, 3))
    if not clean:
        spaces = st.one_of(spaces, _one_of_chars(NUMBER_NOT_SPACES), _one_of_chars(NUMBER_SPACES + NUMBER_NOT_SPACES, 1, 3))
    text = draw(spaces, label="leading space") + sign + body + draw(spaces, label="trailing space")
    # spoiled: now and then a piece that spoils it (or, after the whitespace, a prefix Python refuses)
    if not clean and draw(st.booleans(), label="spoil?"):
        junk = draw(st.one_of(st.sampled_from(NUMBER_JUNK), st.sampled_from(NUMBER_NOT_DIGITS),
                              st.sampled_from(NUMBER_NOT_SPACES)), label="junk")
        at = draw(st.integers(0, len(text)), label="junk position")
        text = text[:at] + junk + text[at:]
    return text


def number_text() -> st.SearchStrategy[str]:
    return st.one_of(
        _number_literal(), _number_literal(), _number_literal(), _number_literal(),
        st.text(st.sampled_from(_NUMBER_ALPHABET), max_size=12),
        text_pieces(),
    )


def long_number_text(size: int, tail: bool) -> tuple[str, str]:
    """A numeric literal of at least ``size`` bytes as UTF-8, and what it is: the scale stage's
    ``number_text`` cases. Without ``tail``, ideographic and ASCII space around -0...012345678901234567
    with the zeros fullwidth (int(): the 4300-digit limit; float(): the digits after the zeros).
    With it, the exact midpoint between 1.0 and the next double, 1.00000000000000011102230246251565404236316680908203125,
    then zeros and a final 1 (float(): a hair above the tie, so 1.0000000000000002, where a
    converter that reads only the first few hundred digits sees a tie and rounds to even, 1.0)."""
    if not tail:
        zeros = "\uff10" * (size // 3 + 1)
        return "\u3000 -" + zeros + "12345678901234567 \t", "fullwidth zeros before 17 digits"
    mid = "1.00000000000000011102230246251565404236316680908203125"
    return mid + "0" * max(size - len(mid), 0) + "1", "a hair above the midpoint between 1.0 and the next double"
