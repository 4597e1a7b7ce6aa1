"""The WordPiece tokenizer over a vocabulary prepared once (opgen.text.wordpiece_vocab_table, then
opgen.text.wordpiece_encode_table), as the MiniLM pipeline runs it, and the gate's ``prepared_by``
domains that test such pairs of ops.

The admitted kernels are built from the registry and called through their shims with the real
30522-piece vocabulary: the table kernel must lay it out exactly as the reference does, and the
encoder over that table must tokenize as Hugging Face ``tokenizers`` does. A table the encoder did
not get from the table op (truncated, a header that lies, an id past the vocabulary) is a
ValueError, never a read outside it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings

from opgen.errors import SpecError
from opgen.project import PACKAGE_ROOT
from opgen.references import WORDPIECE_TABLE_HEADER, wordpiece_slot_hash, wordpiece_table_vocab, wordpiece_vocab_table
from opgen.spec.model import TARGET_IDS, load_all, load_spec
from opgen.verify.ffi import Kernel
from tests.registry_kernels import verified_kernels
from opgen.verify.strategies import examples

from tests.test_wordpiece import VARIED, hf_encode, model_tokenizer, readme_sentences, vocab  # noqa: F401 (fixtures)

ROOT = PACKAGE_ROOT
TABLE_OP, ENCODE_OP, OVERLOAD = "opgen.text.wordpiece_vocab_table", "opgen.text.wordpiece_encode_table", "bert_uncased"
SPECS = load_all(ROOT / "specs")


def _served(op: str, target: str) -> Kernel:
    return verified_kernels([(op, OVERLOAD)], [TARGET_IDS[target]])[(op, OVERLOAD, TARGET_IDS[target])][2]


@pytest.fixture(scope="module", params=SPECS[ENCODE_OP].targets)
def kernels(request) -> tuple[Kernel, Kernel]:
    return _served(TABLE_OP, request.param), _served(ENCODE_OP, request.param)


@pytest.fixture(scope="module")
def table(vocab) -> np.ndarray:
    return np.asarray(wordpiece_vocab_table(vocab), dtype=np.int64)


def test_table_kernel_lays_out_the_real_vocabulary_as_the_reference(kernels, vocab, table):
    make, _ = kernels
    got = make([vocab])
    assert got == table.tolist()
    assert wordpiece_table_vocab(got) == vocab


@pytest.mark.parametrize("max_length", [2, 16, 128, 512])
def test_encoding_through_the_table_matches_tokenizers(kernels, vocab, table, model_tokenizer, max_length):
    _, encode = kernels
    texts = readme_sentences() + VARIED
    assert encode([table, texts, max_length]) == hf_encode(model_tokenizer, texts, max_length)


def test_a_strided_table_reads_as_the_contiguous_one(kernels, table):
    _, encode = kernels
    texts = ["Hello, World!", "naïve façade"]
    spaced = np.zeros(2 * len(table), dtype=np.int64)
    spaced[::2] = table
    reversed_copy = table[::-1].copy()
    assert encode([spaced[::2], texts, 32]) == encode([reversed_copy[::-1], texts, 32]) == encode([table, texts, 32])


def _malformed(table: np.ndarray) -> dict[str, np.ndarray]:
    n, slots = int(table[0]), int(table[1])
    bad = {"truncated by one": table[:-1], "only the header": table[:WORDPIECE_TABLE_HEADER], "empty": table[:0]}
    for name, index, value in (("more pieces than the table holds", 0, n + 1), ("slots not a power of two", 1, slots - 1),
                               ("a special past the vocabulary", 3, n), ("a negative byte count", 9, -8),
                               ("a huge byte count", 9, 2**62)):
        t = table.copy()
        t[index] = value
        bad[name] = t
    first_used = WORDPIECE_TABLE_HEADER + int(np.argmax(table[WORDPIECE_TABLE_HEADER:WORDPIECE_TABLE_HEADER + slots] >= 0))
    for name, value in (("a slot id past the vocabulary", n + 5), ("a slot id far past it", 2**40)):
        t = table.copy()
        t[WORDPIECE_TABLE_HEADER:WORDPIECE_TABLE_HEADER + slots] = np.where(
            table[WORDPIECE_TABLE_HEADER:WORDPIECE_TABLE_HEADER + slots] >= 0, value, -1)
        bad[name] = t
    t = table.copy()
    t[WORDPIECE_TABLE_HEADER + slots + 1:WORDPIECE_TABLE_HEADER + slots + n] = 2**50  # pieces end outside the blob
    bad["offsets outside the blob"] = t
    assert first_used >= WORDPIECE_TABLE_HEADER
    return bad


def test_a_table_the_table_op_did_not_build_is_a_value_error(kernels, vocab, table):
    _, encode = kernels
    small = np.asarray(wordpiece_vocab_table(vocab[:1000]), dtype=np.int64)
    for t in (small, table):
        for name, bad in _malformed(t).items():
            with pytest.raises(ValueError, match="not one opgen.text.wordpiece_vocab_table built"):
                encode([bad, ["the capital of France", "Zürich"], 16])
                pytest.fail(f"{name}: no error")
    with pytest.raises(ValueError, match="not one opgen.text.wordpiece_vocab_table built"):
        encode([table.reshape(1, -1), ["a"], 16])


def test_vocabulary_errors_come_from_the_table_op(kernels):
    make, _ = kernels
    for bad, message in ((["[PAD]", "[UNK]", "[CLS]", "[SEP]"], "lacks the special token \\[MASK\\]"),
                         (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "a"], "repeats the piece 'a'")):
        with pytest.raises(ValueError, match=message):
            make([bad])
        with pytest.raises(ValueError, match=message):
            wordpiece_vocab_table(bad)


# --- the gate's prepared_by domains -------------------------------------------------------------

@settings(max_examples=40, deadline=None, database=None)
@given(examples(SPECS[ENCODE_OP].overload(OVERLOAD)))
def test_the_gate_draws_tables_the_table_op_builds(args):
    table = args["table"]
    assert table.dtype == np.int64 and table.ndim == 1
    assert wordpiece_vocab_table(wordpiece_table_vocab(table)) == table.tolist()


@pytest.mark.parametrize("domain,message", [
    ("{prepared_by: opgen.text.wordpiece_vocab_table, max_len: 3}", "prepared_by gives the whole argument"),
])
def test_prepared_by_is_checked_in_the_spec(tmp_path, domain, message):
    text = (ROOT / "specs/opgen/text/wordpiece_encode_table.yaml").read_text()
    path = tmp_path / "wordpiece_encode_table.yaml"
    path.write_text(text.replace("table: {prepared_by: opgen.text.wordpiece_vocab_table}", f"table: {domain}"))
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(path)


def test_prepared_by_needs_a_list_int_or_int64_tensor_parameter(tmp_path):
    text = (ROOT / "specs/opgen/text/wordpiece_encode_table.yaml").read_text()
    path = tmp_path / "wordpiece_encode_table.yaml"
    path.write_text(text.replace("(table: tensor[int64],", "(table: tensor[float32],"))
    with pytest.raises(SpecError, match=re.escape("prepared_by is for list[int] or tensor[int64] parameters")):
        load_spec(path)


@pytest.mark.parametrize("named,message", [
    ("opgen.text.no_such_op", "names 'opgen.text.no_such_op', which no spec defines"),
    ("opgen.text.wordpiece_encode", "which returns list[int]"),  # never reached: one overload, list[int]
    ("opgen.text.bpe_encode", None),
])
def test_prepared_by_names_an_op_of_one_overload_with_a_list_int_result(tmp_path, named, message):
    specs = tmp_path / "specs"
    (specs / "opgen/text").mkdir(parents=True)
    for name in ("wordpiece_vocab_table", "wordpiece_encode", "bpe_encode"):
        (specs / f"opgen/text/{name}.yaml").write_text((ROOT / f"specs/opgen/text/{name}.yaml").read_text())
    text = (ROOT / "specs/opgen/text/wordpiece_encode_table.yaml").read_text()
    (specs / "opgen/text/wordpiece_encode_table.yaml").write_text(
        text.replace("prepared_by: opgen.text.wordpiece_vocab_table", f"prepared_by: {named}"))
    if named == "opgen.text.no_such_op":
        with pytest.raises(SpecError, match=re.escape(message)):
            load_all(specs)
    else:  # a tokenizer, not a preparing op: one overload, list[int] — the check lets it by, the type is right
        assert named in load_all(specs)


def test_words_of_names_a_vocabulary_before_the_texts(tmp_path):
    text = (ROOT / "specs/opgen/text/wordpiece_encode_table.yaml").read_text()
    path = tmp_path / "wordpiece_encode_table.yaml"
    path.write_text(text.replace("words_of: table", "words_of: max_length"))
    with pytest.raises(SpecError, match=re.escape("words_of names 'max_length'; name a list[str] vocabulary")):
        load_spec(path)


@settings(max_examples=30, deadline=None, database=None)
@given(examples(SPECS[TABLE_OP].overload(OVERLOAD)))
def test_drawn_table_vocabularies_wrap_around_the_last_slot(args):
    """Pieces whose probing wraps to slot 0 are in every drawn vocabulary (independent draws almost
    never had one: a lookup that stops at the last slot passed the gate)."""
    try:
        table = wordpiece_vocab_table(args["vocab"])
    except ValueError:
        return  # a malformed vocabulary: the table op's error
    slots = table[1]
    homes = {table[WORDPIECE_TABLE_HEADER + s]: s for s in range(slots) if table[WORDPIECE_TABLE_HEADER + s] >= 0}
    assert any(s < wordpiece_slot_hash(args["vocab"][i].encode()) & (slots - 1) for i, s in homes.items())
