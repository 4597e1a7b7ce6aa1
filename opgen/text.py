"""Text operations a Python function may call and the compiler maps to native kernels.

``wordpiece_encode(vocab, texts, max_length)`` is BERT uncased tokenization (all-MiniLM-L6-v2's
tokenizer) as one pure function: the vocabulary comes in with every call (``vocab[i]`` is the
piece with id i, e.g. the lines of the model's vocab.txt), nothing is cached. It returns the
token ids of every text, padded with [PAD] to the longest in the batch and truncated to
``max_length`` tokens ([CLS] and [SEP] included), followed by the attention masks, as one flat
list of ``2 * len(texts) * length`` ints: ``ids = out[:n].reshape(b, -1)``,
``mask = out[n:].reshape(b, -1)`` with ``n = len(out) // 2``. In Python it runs Hugging Face
``tokenizers``; the registry's kernels (spec ``specs/opgen/text/wordpiece_encode.yaml``) match it.

``bpe_encode(vocab, merges, added, texts, add_bos, add_eos, max_length)`` is Gemma's tokenization
(SentencePiece-style BPE with byte fallback) in the same form and with the same flat result,
padded with <pad>. ``load_bpe_tokenizer(path)`` reads its first three arguments and the two flags
from a model's tokenizer.json (``.arguments(texts, max_length)`` gives them all, in order); spec
``specs/opgen/text/bpe_encode.yaml``.
"""

from __future__ import annotations

from pathlib import Path

from opgen.bpe_tokenizer import BpeTokenizer, load_bpe_tokenizer
from opgen.references import bpe_encode, wordpiece_encode

__all__ = ["BpeTokenizer", "bpe_encode", "load_bpe_tokenizer", "load_vocab", "wordpiece_encode"]


def load_vocab(path: str | Path) -> list[str]:
    """A WordPiece vocab.txt as the list ``wordpiece_encode`` takes: line i is the piece with id i
    (trailing whitespace trimmed, as ``tokenizers``' WordPiece.read_file does)."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip() for line in lines]
