"""Gemma's BPE tokenizer over a tokenizer prepared once (opgen.text.bpe_tokenizer_table, then
opgen.text.bpe_encode_table), as the EmbeddingGemma pipeline runs it.

The admitted kernels are built from the registry and called through their shims: on a tokenizer of
thousands of pieces and merges (byte fallback, added tokens sharing prefixes) the table kernel lays it
out as the reference does and the encoder over that table tokenizes as Hugging Face ``tokenizers``
does through opgen.text.bpe_encode's reference; a table the encoder did not get from the table op is a
ValueError, never a read outside it.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings

from opgen.bpe_table_references import HEADER, bpe_table_tokenizer, bpe_tokenizer_table
from opgen.project import PACKAGE_ROOT
from opgen.references import bpe_encode, wordpiece_slot_hash
from opgen.spec.model import TARGET_IDS, load_all
from opgen.verify.bpe_strategies import bpe_table_vocab
from opgen.verify.ffi import Kernel
from tests.registry_kernels import verified_kernels

ROOT = PACKAGE_ROOT
TABLE_OP, ENCODE_OP, OVERLOAD = "opgen.text.bpe_tokenizer_table", "opgen.text.bpe_encode_table", "gemma"
SPECS = load_all(ROOT / "specs")
NOT_A_TABLE = "not one opgen.text.bpe_tokenizer_table built"
TEXTS = ["the cat sat on the mat", "", "  two  spaces", "caf\u00e9 \u00fcber \u65e5\u672c", "<start>x<start_of_turn>y",
         "zzzz qqq", "a" * 300, "emoji \U0001f600 and tab\t"]


def _served(op: str, target: str) -> Kernel:
    return verified_kernels([(op, OVERLOAD)], [TARGET_IDS[target]])[(op, OVERLOAD, TARGET_IDS[target])][2]


@pytest.fixture(scope="module", params=SPECS[ENCODE_OP].targets)
def kernels(request) -> tuple[Kernel, Kernel]:
    return _served(TABLE_OP, request.param), _served(ENCODE_OP, request.param)


@pytest.fixture(scope="module")
def tokenizer() -> tuple[list[str], list[int], list[int]]:
    """About 6000 pieces over a-z and ▁ (every piece of up to 2 letters, the 3-letter ones from a to
    f), the byte-fallback pieces but for a few, merges building every piece of 2 and 3 letters (each
    from its first letters and its last), and added tokens sharing prefixes."""
    letters = "abcdefghijklmnopqrstuvwxyz\u2581"
    words = [a + b for a, b in itertools.product(letters, repeat=2)]
    words += ["".join(t) for t in itertools.product("abcdef\u2581", repeat=3)]
    vocab = ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"<0x{b:02X}>" for b in range(256) if b not in (0x80, 0xE6)]
    vocab += list(letters) + words + ["<start>", "<start_of_turn>", "<end>"]
    ids = {p: i for i, p in enumerate(vocab)}
    merges = [v for w in words for v in (ids[w[:-1]], ids[w[-1]], ids[w])]
    merges += merges[:30]  # repeated pairs: the last rank counts
    added = [ids["<start>"], ids["<start_of_turn>"], ids["<end>"], ids["<start>"]]
    return vocab, merges, added


def test_table_kernel_lays_out_the_tokenizer_as_the_reference(kernels, tokenizer):
    make, _ = kernels
    table = make(list(tokenizer))
    assert table == bpe_tokenizer_table(*tokenizer)
    vocab, merges, added = bpe_table_tokenizer(table)
    assert vocab == tokenizer[0] and sorted(set(added)) == sorted(set(tokenizer[2]))


@pytest.mark.parametrize("bos,eos,max_length", [(True, True, 300), (False, True, 5), (True, False, 1), (False, False, 0)])
def test_encoding_through_the_table_matches_tokenizers(kernels, tokenizer, bos, eos, max_length):
    make, encode = kernels
    table = np.asarray(make(list(tokenizer)), dtype=np.int64)
    assert encode([table, TEXTS, bos, eos, max_length]) == bpe_encode(*tokenizer, TEXTS, bos, eos, max_length)


def test_a_strided_table_reads_as_the_contiguous_one(kernels, tokenizer):
    _, encode = kernels
    table = np.asarray(bpe_tokenizer_table(*tokenizer), dtype=np.int64)
    spaced = np.zeros(2 * len(table), dtype=np.int64)
    spaced[::2] = table
    want = encode([table, TEXTS, True, True, 64])
    assert encode([spaced[::2], TEXTS, True, True, 64]) == encode([table[::-1].copy()[::-1], TEXTS, True, True, 64]) == want


def _sections(t: np.ndarray) -> dict[str, int]:
    n, cv, _, cm, nodes, ce = (int(v) for v in t[:6])
    at = {"vocab": HEADER, "fallback": HEADER + cv, "merges": HEADER + cv + 256}
    at["edges"] = at["merges"] + 3 * cm
    at["terminal"] = at["edges"] + 2 * ce
    at["first"] = at["terminal"] + nodes
    at["offsets"] = at["first"] + 256
    return at


def _malformed(table: np.ndarray) -> dict[str, np.ndarray]:
    at, n = _sections(table), int(table[0])
    bad = {"truncated by one": table[:-1], "only the header": table[:HEADER], "empty": table[:0],
           "one value more": np.append(table, 0)}
    for name, index, value in (("more pieces than it holds", 0, n + 1), ("vocabulary slots not a power of two", 1, 17),
                               ("merge slots not a power of two", 3, 24), ("no trie root", 4, 0),
                               ("a special past the vocabulary", 9, n), ("a huge byte count", 7, 2**62)):
        t = table.copy()
        t[index] = value
        bad[name] = t
    for name, section, width, value in (("vocabulary slot ids past it", "vocab", 1, n + 3),
                                        ("merged ids past it", "merges", 3, n + 3)):
        t = table.copy()
        start, count = at[section], (int(table[1]) if section == "vocab" else 3 * int(table[3]))
        part = t[start:start + count].reshape(-1, width)
        used = part[:, 0] >= 0
        part[used, width - 1] = value
        t[start:start + count] = part.reshape(-1)
        bad[name] = t
    t = table.copy()
    t[at["fallback"]:at["fallback"] + 256] = n + 1
    bad["byte-fallback ids past it"] = t
    t = table.copy()
    edges = t[at["edges"]:at["terminal"]].reshape(-1, 2)
    edges[edges[:, 0] >= 0, 1] = 10**9
    t[at["edges"]:at["terminal"]] = edges.reshape(-1)
    bad["trie children past its nodes"] = t
    t = table.copy()
    t[at["offsets"] + 1:at["offsets"] + n] = 2**50
    bad["offsets outside the blob"] = t
    return bad


def test_a_table_the_table_op_did_not_build_is_a_value_error(kernels, tokenizer):
    _, encode = kernels
    table = np.asarray(bpe_tokenizer_table(*tokenizer), dtype=np.int64)
    for name, t in _malformed(table).items():
        with pytest.raises(ValueError, match=NOT_A_TABLE):
            encode([t, ["the cat <start>ab", "\u00e6"], True, True, 64])
            pytest.fail(f"{name}: no error")
    with pytest.raises(ValueError, match=NOT_A_TABLE):
        encode([table.reshape(1, -1), ["a"], True, True, 16])


def test_tokenizer_errors_come_from_the_table_op(kernels, tokenizer):
    make, _ = kernels
    vocab, merges, added = tokenizer
    for args, message in (((vocab[1:], [], []), "lacks the special tokens"),
                          ((vocab + ["ab"], [], []), "repeats the piece 'ab'"),
                          ((vocab, merges[:-1], []), "must be \\(left, right, merged\\) id triples"),
                          ((vocab, [0, 1, 2], []), "is not"),
                          ((vocab, [], [len(vocab)]), "outside the vocabulary")):
        with pytest.raises(ValueError, match=message):
            make(list(args))
        with pytest.raises(ValueError, match=message):
            bpe_tokenizer_table(*args)


def test_the_spec_layout_is_what_the_table_holds(tokenizer):
    """The spec's words and the reference agree on the sections' sizes (a table is exactly as long)."""
    t = np.asarray(bpe_tokenizer_table(*tokenizer), dtype=np.int64)
    n, cv, r, cm, nodes, ce, longest, total = (int(v) for v in t[:8])
    assert (n, r) == (len(tokenizer[0]), len(tokenizer[1]) // 3) and longest == len("<start_of_turn>")
    assert len(t) == HEADER + cv + 256 + 3 * cm + 2 * ce + nodes + 256 + n + 1 + (total + 7) // 8
    text = (ROOT / "specs/opgen/text/bpe_tokenizer_table.yaml").read_text()
    assert re.search(r"header, 12 values", text) and "Cm x 3 values" in text and "Ce x 2 values" in text


def test_drawn_table_vocabularies_hold_characters_that_wrap_around_the_last_slot():
    """The gate's bpe_table_vocab: every drawn vocabulary has a character piece whose probing wraps to
    slot 0 (a lookup that stopped at the last slot passed the gate before)."""
    @settings(max_examples=25, deadline=None, database=None)
    @given(bpe_table_vocab(320))
    def check(vocab):
        slots = 16
        while slots < 2 * len(vocab):
            slots *= 2
        homes = [wordpiece_slot_hash(p.encode()) & (slots - 1) for p in vocab if len(p) == 1]
        assert homes.count(slots - 1) >= 2

    check()
