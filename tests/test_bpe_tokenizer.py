"""Gemma's tokenizer as a native op: the admitted kernel of opgen.text.bpe_encode against Hugging
Face ``tokenizers`` on tokenizers of Gemma's kind trained here (BPE with byte fallback, Replace
" " -> "▁", added tokens, "<bos> $A"), read from their own tokenizer.json by
opgen.text.load_bpe_tokenizer. EmbeddingGemma's real tokenizer.json cannot be fetched here."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opgen.gate.admission import build_job
from opgen.bpe_tokenizer import BpeTokenizer, load_bpe_tokenizer
from opgen.build.cpp import build
from opgen.errors import OpgenError
from opgen.verify.ffi import Kernel
from opgen.project import PACKAGE_ROOT
from opgen.references import bpe_encode
from opgen.registry import Registry
from opgen.spec.model import load_all
from opgen.verify.bpe_strategies import bpe_text

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

ROOT = PACKAGE_ROOT
OP, OVERLOAD = "opgen.text.bpe_encode", "gemma"
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Paris is the capital and most populous city of France.",
    "Which city is the capital of France? The capital of France is Paris.",
    "Les élèves étudient à l'école près de la forêt.",
    "Über den Wolken muss die Freiheit wohl grenzenlos sein.",
    "東京は日本の首都です。北京是中国的首都。",
    "Москва — столица России.",
    "def tokenize(text: str) -> list[int]:\n    return [ord(c) for c in text]",
    "Emoji: 😀 🎉 👍🏽 and ❤️ are common in chat.",
    "  indented   text\twith\ttabs\n\nand blank lines",
    "한국어 텍스트와 العربية و हिन्दी",
    "task: search result | query: what is the capital of France?",
]
SENTENCES = [
    "",
    " ",
    "Hello, world!",
    "task: search result | query: Which planet is known as the Red Planet?",
    "Paris is the capital of France.",
    "  leading and trailing spaces  ",
    "Crème brûlée, naïve café, Ångström, façade, jalapeño",
    "e\u0301 (e and a combining acute) vs é (precomposed)",
    "北京是中国的首都。東京は日本の首都です。",
    "Emoji 😀🎉👍🏽❤️ and a rare one 🫩 next to 中文",
    "def f(x):\n\treturn {\"a\": x ** 2}  # code\n\n\nprint(f(3))",
    "<start_of_turn>user\nWhat is BPE?<end_of_turn>\n<start_of_turn>model",
    "near misses: <start_of_turn <end_of_turn> <start_of_turnx> <0x41> <unk> <bos>",
    "a literal ▁ mark and ▁▁ two of them",
    "Ω≈ç√∫˜µ≤≥÷ åß∂ƒ©˙∆˚¬…æ œ∑´®†¥¨ˆøπ“‘ «»",
    "Москва — столица России; 한국어 텍스트; العربية; हिन्दी; ไทย",
    "\x00\x01 control \x7f characters \u200b zero width \ufeff BOM",
    ("The capital of France is Paris. " * 40) + "Ends here.",
    "x" * 3000,
    "ab" * 1500 + " " + "😀" * 200,
]


def _train(vocab_size: int, byte_values: range | list[int], added: tuple[str, ...]) -> Tokenizer:
    """A tokenizer of Gemma's kind trained on CORPUS: specials <pad> <eos> <bos> <unk> at 0..3,
    the added tokens, the byte pieces for ``byte_values``, then BPE pieces (trained on words
    that start with ▁, as SentencePiece's are)."""
    specials = ["<pad>", "<eos>", "<bos>", "<unk>", *added] + [f"<0x{b:02X}>" for b in byte_values]
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never", split=True)
    tok.train_from_iterator(CORPUS * 3, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                                            show_progress=False))
    # Gemma's own pipeline for encoding: no pre-tokenization (Split on " " finds none after the normalizer).
    tok.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous", invert=False)
    tok.add_tokens([AddedToken(a, normalized=False, special=False) for a in added])
    return tok


def _with_template(tok: Tokenizer, add_bos: bool, add_eos: bool) -> Tokenizer:
    single = " ".join(["<bos>"] * add_bos + ["$A"] + ["<eos>"] * add_eos)
    tok.post_processor = processors.TemplateProcessing(
        single=single, special_tokens=[(t, tok.token_to_id(t)) for t in ("<bos>", "<eos>") if t in single.split()])
    return tok


# name -> (vocab size, byte pieces, added tokens, add_bos, add_eos)
KINDS = {
    "all_bytes_bos": (700, range(256), ("<start_of_turn>", "<end_of_turn>", "\n\n", "<start_of_turn>user"), True,
                      False),
    "ascii_bytes_bos_eos": (600, range(128), ("<start_of_turn>", "<end_of_turn>"), True, True),  # unknowns fuse
    "no_bytes_no_specials": (500, [], (), False, False),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    """Each kind of tokenizer written to its own tokenizer.json, as a model ships it."""
    out = {}
    for name, (size, byte_values, added, bos, eos) in KINDS.items():
        path = tmp_path_factory.mktemp(name) / "tokenizer.json"
        _with_template(_train(size, byte_values, added), bos, eos).save(str(path))
        out[name] = path
    return out


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    """The registry's admitted cpu-cpp kernel, built and loaded through its C ABI."""
    entry = Registry(ROOT / "generated").get(OP, OVERLOAD, "cpu-cpp")
    assert entry is not None, f"{OP} {OVERLOAD} is not admitted; run scripts/record_answers.py {OP}__{OVERLOAD}"
    spec = load_all(ROOT / "specs")[OP]
    built = build([build_job(spec, spec.overload(OVERLOAD), entry.file("kernel").read_text())])[0]
    assert built.ok, built.diagnostics
    return Kernel(ctypes.CDLL(str(built.library)), entry.signature["c_symbol"], spec.overload(OVERLOAD).sig)


def _hf(path: Path, texts: list[str], max_length: int) -> list[int]:
    """Hugging Face's own reading of the file: ids of every row, then the masks, as the op returns."""
    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=tok.token_to_id("<pad>"), pad_token="<pad>")
    enc = tok.encode_batch(texts) if texts else []
    return [i for e in enc for i in e.ids] + [m for e in enc for m in e.attention_mask]


def test_the_loader_reads_what_was_saved(saved):
    t = load_bpe_tokenizer(saved["all_bytes_bos"])
    doc = json.loads(saved["all_bytes_bos"].read_text(encoding="utf-8"))
    assert len(t.vocab) == len(doc["model"]["vocab"]) > 256 + 100 and t.vocab[:4] == ["<pad>", "<eos>", "<bos>", "<unk>"]
    assert len(t.merges) == 3 * len(doc["model"]["merges"]) > 0
    assert (t.add_bos, t.add_eos) == (True, False)
    assert {t.vocab[i] for i in t.added} >= {"<start_of_turn>", "\n\n", "<bos>", "<0x41>"}
    left, right, merged = t.merges[:3]
    assert t.vocab[left] + t.vocab[right] == t.vocab[merged]


@pytest.mark.parametrize("name", list(KINDS))
def test_fixed_sentences_match_hugging_face(kernel, saved, name):
    t = load_bpe_tokenizer(saved[name])
    for max_length in (4096, 64, 3):
        want = _hf(saved[name], SENTENCES, max_length)
        assert kernel(t.arguments(SENTENCES, max_length)) == want, (name, max_length)
    for text in SENTENCES:  # one at a time too: no padding, each row's own length
        assert kernel(t.arguments([text], 4096)) == _hf(saved[name], [text], 4096), (name, text)


@pytest.mark.parametrize("name", list(KINDS))
def test_generated_texts_match_hugging_face(kernel, saved, name):
    t = load_bpe_tokenizer(saved[name])
    letters = "".join(sorted({c for line in CORPUS for c in line}))

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(texts=st.lists(st.one_of(bpe_text(), st.text(st.sampled_from(letters), max_size=80)), max_size=4),
           max_length=st.sampled_from([512, 24, 7, 2]))
    def check(texts, max_length):
        assert kernel(t.arguments(texts, max_length)) == _hf(saved[name], texts, max_length)

    check()


def test_the_kernel_raises_where_the_reference_does(kernel, saved):
    t = load_bpe_tokenizer(saved["ascii_bytes_bos_eos"])
    v = t.vocab
    cases = {
        "repeated piece": BpeTokenizer(v + [v[10]], t.merges, t.added, True, True),
        "missing <unk>": BpeTokenizer(["<UNK>" if p == "<unk>" else p for p in v], [], [], True, True),
        "merges not triples": BpeTokenizer(v, t.merges + [1], t.added, True, True),
        "merged is not left + right": BpeTokenizer(v, [t.merges[0], t.merges[1], t.merges[0]], [], True, True),
        "merge id outside": BpeTokenizer(v, [0, len(v), 0], [], True, True),
        "added id outside": BpeTokenizer(v, [], [-1], True, True),
    }
    for why, bad in cases.items():
        for call in (kernel, lambda args: bpe_encode(*args)):
            with pytest.raises(ValueError):
                call(bad.arguments(["abc"], 16))
                pytest.fail(f"no ValueError for a {why}")
    for call in (kernel, lambda args: bpe_encode(*args)):
        with pytest.raises(ValueError):
            call(t.arguments(["abc"], 1))  # <bos> and <eos> need 2
    assert kernel(t.arguments(["abc"], 2)) == bpe_encode(*t.arguments(["abc"], 2)) == [2, 1, 1, 1]
    assert kernel(t.arguments([], 8)) == [] and kernel(load_bpe_tokenizer(saved["no_bytes_no_specials"]).arguments(
        ["abc", ""], 0)) == []


def test_ids_do_not_depend_on_where_the_specials_sit(kernel):
    # A vocabulary with the pieces in another order: ids are positions, whatever they hold.
    vocab = ["b", "ab", "<unk>", "a", "<eos>", "▁", "<bos>", "<pad>", "▁a"] + [f"<0x{b:02X}>" for b in range(256)]
    ix = {p: i for i, p in enumerate(vocab)}
    merges = [ix["a"], ix["b"], ix["ab"], ix["▁"], ix["a"], ix["▁a"]]
    args = [vocab, merges, [], ["ab a", "zab", ""], True, True, 32]
    assert kernel(args) == bpe_encode(*args)


def test_the_loader_refuses_what_the_op_does_not_do(saved, tmp_path):
    doc = json.loads(saved["all_bytes_bos"].read_text(encoding="utf-8"))
    changes = {
        "normalizer": lambda d: d.update(normalizer={"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}),
        "pre_tokenizer": lambda d: d.update(pre_tokenizer={"type": "Whitespace"}),
        "model.byte_fallback": lambda d: d["model"].update(byte_fallback=False),
        "lstrip": lambda d: d["added_tokens"][5].update(lstrip=True),
        "post_processor": lambda d: d.update(post_processor={"type": "BertProcessing"}),
        "model.merges[0]": lambda d: d["model"].update(merges=[["a", "zzz"]]),
    }
    for field, change in changes.items():
        bad = json.loads(json.dumps(doc))
        change(bad)
        path = tmp_path / "tokenizer.json"
        path.write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(OpgenError) as err:
            load_bpe_tokenizer(path)
        assert field in str(err.value) and "fix:" in str(err.value), (field, str(err.value))
