"""References of ``opgen.text.bpe_tokenizer_table`` and ``opgen.text.bpe_encode_table``: Gemma's BPE
tokenizer (vocabulary, merges, added tokens) laid out once as one flat int64 table, in exactly the layout
specs/opgen/text/bpe_tokenizer_table.yaml gives, and the tokenizer reading it. A pipeline builds the table
when it loads (Gemma 3's 262144 pieces: hashing them, its merges and its added tokens took tens of
milliseconds a call when every call did it); ``bpe_encode_table`` is ``bpe_encode`` over what the table
holds, so the two ops are checked against the same Hugging Face tokenizer."""

from __future__ import annotations

from typing import Any

import numpy as np

from opgen.references import GEMMA_SPECIAL_TOKENS, bpe_encode, bpe_merge_pairs, packed_pieces, wordpiece_slot_hash

HEADER = 12
MASK64 = 0xFFFFFFFFFFFFFFFF


def mix64(key: int) -> int:
    """splitmix64's finalizer: the home slot of an int key is mix64(key) & (C - 1)."""
    h = key & MASK64
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & MASK64
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & MASK64
    return h ^ (h >> 31)


def slot_count(entries: int) -> int:
    """The smallest power of two that is at least 16 and at least 2 * entries."""
    c = 16
    while c < 2 * entries:
        c *= 2
    return c


def _probe(occupied, home: int, count: int, same) -> int:
    """The slot a key takes: its home, else the next (mod count) that is empty or holds the same key."""
    s = home
    while occupied(s) and not same(s):
        s = (s + 1) & (count - 1)
    return s


def bpe_tokenizer_table(vocab: list[str], merges: list[int], added: list[int]) -> list[int]:
    """``opgen.text.bpe_tokenizer_table``: the tokenizer as one table (see the spec for the layout);
    ValueError for what ``bpe_encode`` refuses in its tokenizer."""
    pieces = [p.encode() for p in vocab]
    ids: dict[bytes, int] = {}
    for i, p in enumerate(pieces):
        if p in ids:
            raise ValueError(f"the vocabulary repeats the piece {vocab[i]!r}")
        ids[p] = i
    if missing := [t for t in GEMMA_SPECIAL_TOKENS if t.encode() not in ids]:
        raise ValueError(f"the vocabulary lacks the special tokens {missing}")
    bpe_merge_pairs(vocab, merges)  # the merges' checks and messages
    if bad := [i for i in added if not 0 <= i < len(vocab)]:
        raise ValueError(f"added names id {bad[0]}, outside the vocabulary of {len(vocab)} pieces")
    n = len(pieces)
    cv = slot_count(n)
    vslots = [-1] * cv
    for i, p in enumerate(pieces):
        s = _probe(lambda s: vslots[s] >= 0, wordpiece_slot_hash(p) & (cv - 1), cv, lambda s: False)
        vslots[s] = i
    fallback = [ids.get(f"<0x{b:02X}>".encode(), -1) for b in range(256)]
    r_count = len(merges) // 3
    cm = slot_count(r_count)
    mslots = [-1, -1, -1] * cm
    for r in range(r_count):
        left, right, merged = merges[3 * r:3 * r + 3]
        key = left * 2**31 + right
        s = _probe(lambda s: mslots[3 * s] >= 0, mix64(key) & (cm - 1), cm, lambda s: mslots[3 * s] == key)
        mslots[3 * s:3 * s + 3] = [key, r, merged]
    added_bytes = sum(len(pieces[i]) for i in added)
    ce = slot_count(added_bytes)
    eslots = [-1, -1] * ce
    terminal = [-1]
    first = [0] * 256
    longest = 0
    for i in added:
        p = pieces[i]
        if not p:
            continue  # an empty added token never matches
        first[p[0]] = 1
        longest = max(longest, len(p))
        node = 0
        for b in p:
            key = node * 256 + b
            s = _probe(lambda s: eslots[2 * s] >= 0, mix64(key) & (ce - 1), ce, lambda s: eslots[2 * s] == key)
            if eslots[2 * s] < 0:
                eslots[2 * s:2 * s + 2] = [key, len(terminal)]
                terminal.append(-1)
            node = eslots[2 * s + 1]
        terminal[node] = i
    offsets, words = packed_pieces(pieces)
    header = [n, cv, r_count, cm, len(terminal), ce, longest, offsets[-1],
              *(ids[t.encode()] for t in GEMMA_SPECIAL_TOKENS)]
    return header + vslots + fallback + mslots + eslots + terminal + first + offsets + words


def bpe_table_tokenizer(table: Any) -> tuple[list[str], list[int], list[int]]:
    """(vocab, merges, added) that a table of ``bpe_tokenizer_table`` holds: the merges one triple per
    distinct pair in rank order (a repeated pair's last rank is its rank), the added ids in node order."""
    t = [int(v) for v in np.asarray(table, dtype=np.int64).reshape(-1)]
    n, cv, _, cm, nodes, ce, _, total = t[:8]
    at = HEADER + cv + 256
    mslots = t[at:at + 3 * cm]
    at += 3 * cm + 2 * ce
    terminal = t[at:at + nodes]
    at += nodes + 256
    offsets = t[at:at + n + 1]
    blob = b"".join(w.to_bytes(8, "little", signed=True) for w in t[at + n + 1:])[:total]
    vocab = [blob[offsets[i]:offsets[i + 1]].decode() for i in range(n)]
    found = sorted((mslots[3 * s + 1], mslots[3 * s], mslots[3 * s + 2]) for s in range(cm) if mslots[3 * s] >= 0)
    merges = [v for rank, key, merged in found for v in (key // 2**31, key % 2**31, merged)]
    return vocab, merges, [i for i in terminal if i >= 0]


def bpe_encode_table(table: Any, texts: list[str], add_bos: bool, add_eos: bool, max_length: int) -> list[int]:
    """``opgen.text.bpe_encode_table``: ``bpe_encode`` over the tokenizer ``table`` holds."""
    vocab, merges, added = bpe_table_tokenizer(table)
    return bpe_encode(vocab, merges, added, texts, add_bos, add_eos, max_length)
