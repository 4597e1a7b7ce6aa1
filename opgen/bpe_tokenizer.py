"""A Gemma-style tokenizer.json read into the arguments of ``opgen.text.bpe_encode``.

``load_bpe_tokenizer(path)`` reads a Hugging Face tokenizer.json of Gemma's kind (model BPE
with byte_fallback and fuse_unk, normalizer Replace " " -> "▁", pre-tokenizer none or the
Split on " " that finds nothing after that normalizer, added tokens matched in the raw text,
post-processor "<bos> $A" or "<bos> $A <eos>" or none) and returns a ``BpeTokenizer``: the
vocabulary as a list (piece i has id i), the merges as flat (left, right, merged) id triples
in rank order, the ids of the added tokens, and whether <bos> and <eos> are added.

Everything the op does not do is refused with an error that names the field, rather than
tokenized differently from ``tokenizers``: a prefix "▁", Unicode normalization, another
pre-tokenizer, dropout, subword prefixes or suffixes, ignore_merges, or added tokens matched
after normalization or with lstrip/rstrip/single_word. The file's own truncation and padding
settings are not read: the op's max_length and padding to the longest apply.

Merges are ids rather than "a b" strings: the kernel then needs no string lookups to build its
merge table (it checks that vocab[merged] is vocab[left] + vocab[right]), and pieces that hold
a space cannot be split wrongly (tokenizers 0.20+ writes merges as [a, b] pairs for that reason).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opgen.errors import OpgenError
from opgen.references import bpe_encode

SPACE_MARK = "\u2581"  # "▁", what Gemma's normalizer writes for a space
HINT = ("opgen.text.bpe_encode implements Gemma's tokenizer.json pipeline only; for another tokenizer, "
        "write a spec for its pipeline (see specs/opgen/text/bpe_encode.yaml)")


@dataclass(frozen=True)
class BpeTokenizer:
    vocab: list[str]
    merges: list[int]  # flat (left, right, merged) id triples, in rank order
    added: list[int]  # ids of the added tokens, matched in the raw text
    add_bos: bool
    add_eos: bool

    def arguments(self, texts: list[str], max_length: int) -> list[Any]:
        """The arguments of ``opgen.text.bpe_encode`` for ``texts``, in signature order."""
        return [self.vocab, self.merges, self.added, list(texts), self.add_bos, self.add_eos, max_length]

    def encode(self, texts: list[str], max_length: int) -> list[int]:
        """``opgen.text.bpe_encode`` in Python (Hugging Face ``tokenizers``): ids, then masks."""

        return bpe_encode(*self.arguments(texts, max_length))


def load_bpe_tokenizer(path: str | Path) -> BpeTokenizer:
    """Read a Gemma-style tokenizer.json (see the module docstring for what is accepted)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OpgenError(f"cannot read {path}: {exc}", hint="give the path of a model's tokenizer.json") from None
    try:
        return bpe_tokenizer_from_json(doc)
    except OpgenError as exc:
        raise OpgenError(exc.message, hint=exc.hint, where=str(path)) from None


def bpe_tokenizer_from_json(doc: dict[str, Any]) -> BpeTokenizer:
    """A parsed tokenizer.json as a ``BpeTokenizer``."""
    model = doc.get("model") or {}
    _check_model(model)
    vocab = _vocab_list(model.get("vocab") or {})
    ids = {piece: i for i, piece in enumerate(vocab)}
    _check_normalizer(doc.get("normalizer"))
    _check_pre_tokenizer(doc.get("pre_tokenizer"))
    add_bos, add_eos = _post_processor(doc.get("post_processor"), ids)
    return BpeTokenizer(vocab, _merge_triples(model.get("merges") or [], ids),
                        _added_ids(doc.get("added_tokens") or [], ids), add_bos, add_eos)


def _refuse(message: str) -> OpgenError:
    return OpgenError(message, hint=HINT)


def _check_model(model: dict[str, Any]) -> None:
    expected = {"type": "BPE", "byte_fallback": True, "fuse_unk": True, "unk_token": "<unk>"}
    for key, want in expected.items():
        if model.get(key) != want:
            raise _refuse(f"model.{key} is {model.get(key)!r}; Gemma's tokenizer has {want!r}")
    if model.get("dropout") not in (None, 0, 0.0):
        raise _refuse(f"model.dropout is {model['dropout']!r}; only deterministic BPE (no dropout) is supported")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise _refuse(f"model.{key} is {model[key]!r}; Gemma's BPE has none")
    if model.get("ignore_merges"):
        raise _refuse("model.ignore_merges is true; Gemma's BPE applies merges to every word")


def _vocab_list(vocab: dict[str, int]) -> list[str]:
    pieces: list[str | None] = [None] * len(vocab)
    for piece, i in vocab.items():
        if not isinstance(i, int) or not 0 <= i < len(vocab) or pieces[i] is not None:
            raise _refuse(f"model.vocab gives {piece!r} id {i!r}; ids must be 0 .. {len(vocab) - 1}, each once")
        pieces[i] = piece
    return pieces  # type: ignore[return-value]  (every slot filled: n distinct ids in 0..n-1)


def _is_space_replace(n: Any) -> bool:
    return (isinstance(n, dict) and n.get("type") == "Replace" and n.get("pattern") == {"String": " "}
            and n.get("content") == SPACE_MARK)


def _check_normalizer(normalizer: Any) -> None:
    steps = normalizer.get("normalizers") if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence" \
        else [normalizer]
    if not (isinstance(steps, list) and len(steps) == 1 and _is_space_replace(steps[0])):
        raise _refuse(f"normalizer is {json.dumps(normalizer)[:200]}; Gemma's is Replace(' ', '{SPACE_MARK}') alone")


def _check_pre_tokenizer(pre: Any) -> None:
    # Split on " " after a normalizer that left no " " splits nothing: the same as none.
    if pre is None or (isinstance(pre, dict) and pre.get("type") == "Split" and pre.get("pattern") == {"String": " "}
                       and not pre.get("invert", False)):
        return
    raise _refuse(f"pre_tokenizer is {json.dumps(pre)[:200]}; Gemma's is none or Split(' ', merged_with_previous)")


def _post_processor(post: Any, ids: dict[str, int]) -> tuple[bool, bool]:
    if post is None:
        return False, False
    if not isinstance(post, dict) or post.get("type") != "TemplateProcessing":
        raise _refuse(f"post_processor is {json.dumps(post)[:200]}; Gemma's is a TemplateProcessing '<bos> $A'")
    items = [_template_item(item) for item in post.get("single") or []]
    if "$A" not in items or any(t not in ("<bos>", "<eos>", "$A") for t in items) or \
            items not in (["$A"], ["<bos>", "$A"], ["$A", "<eos>"], ["<bos>", "$A", "<eos>"]):
        raise _refuse(f"post_processor.single is {items}; opgen.text.bpe_encode adds <bos> before and <eos> after "
                      "the text, each or not")
    for token in ("<bos>", "<eos>"):
        spec = (post.get("special_tokens") or {}).get(token)
        if token in items and (spec is None or spec.get("ids") != [ids.get(token)]):
            raise _refuse(f"post_processor.special_tokens gives {token} ids {spec and spec.get('ids')}, but the "
                          f"vocabulary has it at {ids.get(token)}")
    return "<bos>" in items, "<eos>" in items


def _template_item(item: dict[str, Any]) -> str:
    if "Sequence" in item:
        return "$" + item["Sequence"].get("id", "A")
    if "SpecialToken" in item:
        return item["SpecialToken"].get("id", "")
    return repr(item)


def _merge_triples(merges: list[Any], ids: dict[str, int]) -> list[int]:
    triples: list[int] = []
    for rank, merge in enumerate(merges):
        if isinstance(merge, str):
            parts = merge.split(" ")
            if len(parts) != 2:
                raise _refuse(f"model.merges[{rank}] is {merge!r}, not two pieces separated by one space")
        else:
            parts = list(merge)
        left, right = parts
        for piece in (left, right, left + right):
            if piece not in ids:
                raise _refuse(f"model.merges[{rank}] ({left!r}, {right!r}) needs {piece!r}, which is not in the "
                              "vocabulary")
        triples += [ids[left], ids[right], ids[left + right]]
    return triples


def _added_ids(added_tokens: list[dict[str, Any]], ids: dict[str, int]) -> list[int]:
    out = []
    for token in added_tokens:
        content = token.get("content", "")
        for flag in ("normalized", "lstrip", "rstrip", "single_word"):
            if token.get(flag):
                raise _refuse(f"added token {content!r} has {flag}: true; Gemma's added tokens are matched in the raw "
                              "text as they are")
        if ids.get(content) != token.get("id"):
            raise _refuse(f"added token {content!r} has id {token.get('id')!r} but the vocabulary has it at "
                          f"{ids.get(content)!r}; opgen.text.bpe_encode needs added tokens inside the vocabulary")
        out.append(ids[content])
    return out
