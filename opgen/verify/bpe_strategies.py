"""Hypothesis strategies for Gemma-style BPE tokenizers (``opgen.text.bpe_encode``).

A tokenizer is drawn in three parameters, vocabulary first: ``bpe_vocab`` draws the pieces,
and ``bpe_merges`` and ``added_tokens`` (domain ``ids``) draw ids into that vocabulary.

``bpe_vocab`` holds Gemma's special tokens, the byte-fallback pieces (all 256, all but a few
the text needs, or none, so that byte fallback and the fused <unk> both happen), single
characters of a small alphabet (ASCII letters, ▁, an accented letter, a combining mark, CJK,
an emoji, newline, tab, angle brackets), pieces built by joining two earlier ones (as BPE
training builds them, some from byte-fallback pieces or <unk>) and added-token literals, in
a drawn order: ids are positions, and the specials need not come first.

``bpe_merges`` draws (left, right, merged) triples among the vocabulary's pieces with
vocab[left] + vocab[right] == vocab[merged], mostly with shorter merged pieces first (the order
training gives), some listed again later (a repeated pair takes the rank of its last
occurrence, so the order of competing merges changes). ``added_tokens`` draws ids of pieces to match
literally, mostly the added-token literals. Where the overload declares ValueError, one draw
in sixteen is malformed (an id outside the vocabulary, a merge whose pieces do not join, a
merges list that is not triples).

``bpe_text`` mixes the WordPiece strategy's segments (``mixed_text``: Unicode of every kind,
whitespace runs, control characters, long words) with words over the vocabulary's alphabet,
spaces, literal ▁, added-token literals and their near misses, and long runs that make one
BPE word of hundreds of code points.
"""

from __future__ import annotations

from hypothesis import strategies as st

from opgen.verify.text_strategies import SEGMENTS, with_colliders

GEMMA_SPECIAL_TOKENS = ("<pad>", "<eos>", "<bos>", "<unk>")
BYTE_PIECES = tuple(f"<0x{b:02X}>" for b in range(256))
CORE_CHARS = "abc▁"
ALPHABET = "abcde▁é\u0301中文😀\n\t<>"
ADDED_LITERALS = ("<start_of_turn>", "<end_of_turn>", "<unused0>", "<unused01>", "\n\n", "<b>", "▁▁", "ab")
# Bytes of characters the text holds that may lack a piece: 'A', 'é', U+0301, '中', '😀', '\n', 'z'.
TEXT_BYTES = (0x41, 0xC3, 0xA9, 0xCC, 0x81, 0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x98, 0x80, 0x0A, 0x7A)
# Pieces that are not characters but may still be joined into longer pieces.
JOINABLE_EXTRAS = ("<unk>", "<0x41>", "<0xC3>", "<0xA9>")
NEAR_MISSES = ("<start_of_turn", "start_of_turn>", "<Start_of_turn>", "<unused>", "<unused00>", "<b", "<bos>",
               "<eos>", "<unk>", "<0x41>", "\n", "▁")
TEXT_LETTERS = "abcdeAzé\u0301中😀"
# True about one draw in sixteen (shrinking goes to False). Not sampled_from([False] * 15 + [True]):
# Hypothesis draws the last element of a list far more often than one time in sixteen.
ONE_IN_SIXTEEN = st.integers(0, 15).map(lambda i: i == 9)


@st.composite
def bpe_vocab(draw: st.DrawFn, max_len: int = 320) -> list[str]:
    """Gemma's specials, byte-fallback pieces and other pieces, ``max_len`` at most in all (the
    256 byte pieces leave room only for what they do not take), in a drawn order."""
    byte_kind = draw(st.sampled_from(["all", "all", "all", "all but some", "none"]), label="byte pieces")
    if byte_kind == "all":
        byte_pieces = list(BYTE_PIECES)
    elif byte_kind == "none":
        byte_pieces = []
    else:
        missing = draw(st.sets(st.sampled_from(TEXT_BYTES), min_size=1), label="missing bytes")
        byte_pieces = [p for b, p in enumerate(BYTE_PIECES) if b not in missing]
    room = max(max_len - len(GEMMA_SPECIAL_TOKENS) - len(byte_pieces), 0)
    byte_pieces = byte_pieces[:max(max_len - len(GEMMA_SPECIAL_TOKENS), 0)]
    # "a", "b", "c" and "▁" always (the text's words are mostly made of them), other characters drawn.
    chars = list(CORE_CHARS) + draw(st.lists(st.sampled_from(ALPHABET), unique=True, max_size=len(ALPHABET)),
                                    label="characters")
    pieces = list(dict.fromkeys(chars))[:room]
    # Pieces grow as BPE training grows them: a short piece joined with a character or another
    # short piece, now and then with a byte piece or <unk>.
    extras = draw(st.lists(st.sampled_from(JOINABLE_EXTRAS), unique=True, max_size=2), label="joinable extras")
    for _ in range(draw(st.integers(0, room), label="joins")):
        short = [q for q in pieces if len(q) <= 3] + extras
        joined = draw(st.sampled_from(short), label="left") + draw(st.sampled_from(short), label="right")
        if len(pieces) < room and joined not in pieces:
            pieces.append(joined)
    for literal in draw(st.lists(st.sampled_from(ADDED_LITERALS), unique=True, max_size=4), label="added literals"):
        if len(pieces) < room and literal not in pieces:
            pieces.append(literal)
    vocab = list(dict.fromkeys([*GEMMA_SPECIAL_TOKENS, *pieces, *byte_pieces]))
    return draw(st.permutations(vocab), label="vocabulary order")


def _splits(vocab: list[str]) -> list[tuple[int, int, int]]:
    """Every (left, right, merged) id triple with vocab[left] + vocab[right] == vocab[merged]."""
    ids = {p: i for i, p in enumerate(vocab)}
    return [(ids[p[:k]], ids[p[k:]], i) for i, p in enumerate(vocab) for k in range(1, len(p))
            if p[:k] in ids and p[k:] in ids]


@st.composite
def bpe_merges(draw: st.DrawFn, vocab: list[str], max_len: int = 40, malformed: bool = False) -> list[int]:
    """Flat (left, right, merged) triples in a drawn rank order, repeats allowed."""
    splits = _splits(vocab)
    # Mostly the order training gives (and Gemma's converter, by score): shorter merged pieces
    # first, ties in a drawn order; now and then any order. Some are dropped, and some listed
    # again later: the last occurrence gives a pair its rank, so competing merges swap order.
    chosen = draw(st.permutations(splits), label="merges") if splits else []
    if draw(st.sampled_from([True, True, True, False]), label="shorter merges first"):
        chosen.sort(key=lambda t: len(vocab[t[2]]))
    if chosen:
        dropped = set(draw(st.lists(st.integers(0, len(chosen) - 1), max_size=len(chosen) // 3), label="dropped"))
        again = draw(st.lists(st.integers(0, len(chosen) - 1), max_size=4), label="merges listed again")
        kept = [t for i, t in enumerate(chosen) if i not in dropped][:max(max_len - len(again), 0)]
        chosen = (kept + [chosen[i] for i in again])[:max_len]
    flat = [i for triple in chosen for i in triple]
    if malformed and draw(ONE_IN_SIXTEEN, label="malformed merges"):
        n = len(vocab)
        bad = draw(st.sampled_from(["outside", "negative", "not joined", "not triples"]), label="how malformed")
        at = 3 * draw(st.integers(0, len(chosen)), label="where")
        if bad == "not triples":
            flat.insert(at, 0)
        elif bad == "not joined":
            # pieces 0 and 0 joined are twice piece 0: never piece 0 itself (no piece is empty here)
            flat[at:at] = [0, 0, 0]
        else:
            flat[at:at] = [0, n if bad == "outside" else -1, 0]
    return flat


@st.composite
def added_tokens(draw: st.DrawFn, vocab: list[str], max_len: int = 6, malformed: bool = False) -> list[int]:
    """Ids of pieces matched literally: mostly the added-token literals, sometimes any piece."""
    literal_ids = [i for i, p in enumerate(vocab) if p in ADDED_LITERALS]
    some = st.sampled_from(literal_ids) if literal_ids else st.nothing()
    chosen = draw(st.lists(st.one_of(some, some, st.integers(0, len(vocab) - 1)), max_size=max_len),
                  label="added tokens")
    if malformed and draw(ONE_IN_SIXTEEN, label="malformed added"):
        chosen.insert(draw(st.integers(0, len(chosen))), draw(st.sampled_from([len(vocab), -1])))
    return chosen


BPE_SEGMENTS = st.one_of(
    st.text(st.sampled_from(TEXT_LETTERS), min_size=1, max_size=10),  # a word over the alphabet
    st.text(st.sampled_from("abc▁"), min_size=2, max_size=12),  # where merges compete for the same symbols
    st.text(st.sampled_from(" "), min_size=1, max_size=3),  # spaces, which become ▁
    st.sampled_from(ADDED_LITERALS + NEAR_MISSES),
    st.text(st.sampled_from("ab ▁"), min_size=150, max_size=400),  # one long BPE word
    SEGMENTS,  # the WordPiece strategy's: Unicode of every kind, whitespace, controls, long words
)


def bpe_text(max_segments: int = 16) -> st.SearchStrategy[str]:
    text = st.lists(BPE_SEGMENTS, min_size=1, max_size=max_segments).map("".join)
    return ONE_IN_SIXTEEN.flatmap(lambda empty: st.just("") if empty else text)  # "" now and then


def ids_strategy(kind: str, vocab: list[str], max_len: int | None, malformed: bool) -> st.SearchStrategy[list[int]]:
    """A list[int] parameter whose domain names an ``ids`` kind, for the vocabulary drawn before it."""
    if kind == "bpe_merges":
        return bpe_merges(vocab, 40 if max_len is None else max_len, malformed)
    if kind == "added_tokens":
        return added_tokens(vocab, 6 if max_len is None else max_len, malformed)
    raise ValueError(f"ids kind {kind!r} has no strategy")


BPE_STRING_KINDS = ("bpe_vocab", "bpe_table_vocab", "bpe_text")


def string_strategy(kind: str) -> st.SearchStrategy[str]:
    """One string of a ``str`` parameter whose domain names one of BPE_STRING_KINDS."""
    if kind == "bpe_text":
        return bpe_text()
    raise ValueError(f"strings kind {kind!r} does not draw single strings")


@st.composite
def bpe_table_vocab(draw: st.DrawFn, max_len: int = 320) -> list[str]:
    """A bpe_vocab with 2 or 3 more single-character pieces (CJK ideographs) whose home is the last slot
    of opgen.text.bpe_tokenizer_table's vocabulary slots, so that probing for them wraps to slot 0: BPE
    looks pieces up a character at a time, so only a character piece that wrapped is ever probed for."""
    extra = draw(st.integers(2, 3), label="characters colliding at the last slot")
    vocab = draw(bpe_vocab(max(max_len - extra, 4)))
    return draw(with_colliders(vocab, extra, lambda i: chr(0x4E00 + i % 0x5000)))


def string_list_strategy(kind: str, max_len: int | None) -> st.SearchStrategy[list[str]]:
    """A ``list[str]`` parameter whose domain names one of BPE_STRING_KINDS (max_len: items at most)."""
    if kind == "bpe_vocab":
        return bpe_vocab(320 if max_len is None else max_len)
    if kind == "bpe_table_vocab":
        return bpe_table_vocab(320 if max_len is None else max_len)
    texts = st.lists(bpe_text(), min_size=1, max_size=8 if max_len is None else max(max_len, 1))
    # the empty batch one draw in sixteen (an empty list is where Hypothesis would otherwise go often)
    return ONE_IN_SIXTEEN.flatmap(lambda empty: st.just([]) if empty else texts)
