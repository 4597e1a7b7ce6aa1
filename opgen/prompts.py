"""Rendering prompts from specs with the jinja2 templates in ``prompts/``.

Pure functions: a spec and an overload in, message text out. The templates carry the
wording; this module only assembles the facts they need.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from opgen.spec.abi import kernel_name
from opgen.errors import SpecError
from opgen.spec.model import PLAIN_VARIANT, Domain, Overload, Spec
from opgen.targets.catalog import target_for



def environment(prompts_dir: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(prompts_dir)),
        undefined=jinja2.StrictUndefined,  # a template naming a missing fact is a bug, not a blank
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def facts(spec: Spec, overload: Overload, target: str) -> dict[str, Any]:
    sig = overload.sig
    tolerances = []
    for t in dict.fromkeys(t for _, t in sig.results):  # each float result dtype once
        if t.dtype is not None and t.dtype.is_float:
            tol = spec.tolerance_for(overload, t.dtype)
            tolerances.append({"dtype": t.dtype.name, "rtol": tol.rtol, "atol": tol.atol, "basis": tol.basis,
                               "why": " ".join(tol.why.split())})
    return {
        "spec": spec,
        "overload": overload,
        "target": target,
        # The kernel takes every argument: defaults are the compiler's business, not the prompt's
        # (adding one to a spec leaves its prompts, and so its recordings, unchanged).
        "signature": str(sig.bare()),
        "kernel_name": kernel_name(spec.op, overload.name),
        "returns_tensor": sig.returns.is_tensor,
        "shape_rule": overload.rule.describe() if overload.rule else None,
        # A tuple result: each out tensor's name, type and shape rule.
        "results": [{"name": n, "type": str(t), "shape_rule": overload.rules[n].describe()} for n, t in sig.results]
        if sig.returns.is_tuple else [],
        "params": [{"name": p.name, "type": str(p.type), "domain": _domain_text(overload.domain.get(p.name))}
                   for p in sig.params],
        "tensor_lists": [p.name for p in sig.tensor_list_params],  # list-of-tensors parameters (np.concatenate's)
        "raises": overload.raises,
        "reference": spec.reference_for(overload),
        "tolerances": tolerances,
        "threads": spec.threads_allowed(overload),
        **target_for(target).prompt_facts(spec, overload),  # the declaration, and what else differs
    }


# What a domain's ``strings`` kind draws, in the words the prompt uses.
STRING_KINDS_TEXT = {
    "mixed_text": "texts mixing words in any case with accents, other scripts, CJK, digits, ASCII and Unicode "
                  "punctuation, control and zero-width characters, combining marks, whitespace runs of every kind, "
                  "words over 100 characters, special-token literals, arbitrary Unicode, and empty strings",
    "text_pieces": "short strings (separators, affixes, characters to strip: ' ', ',', 'a', 'ab', tab, newline, "
                   "ideographic space, U+001F, a combining mark, 'ß', and the empty string) that occur in the texts",
    "format_specs": "Python format specs, [[fill]align][sign][z][#][0][width][grouping][.precision][type], every "
                    "field present or absent: valid ones, ones Python refuses for this type, malformed ones (',_', "
                    "'.' without digits, two type codes, unknown codes), fills of any code point, and the empty spec",
    "cased_text": "texts mixing everything mixed_text draws with words of cased letters of every script (titlecase "
                  "letters, letters beyond the BMP), letters whose case mapping is several code points ('ß', 'İ', "
                  "'ﬁ', 'ŉ', 'ΐ'), and capital sigmas before, after and between letters, apostrophes, combining "
                  "marks and other case-ignorable code points; one large case holds every code point in order",
    "repr_text": "texts mixing everything mixed_text draws with single and double quotes (alone, together, "
                 "repeated), backslashes, tab, newline, carriage return, other C0 and C1 controls, DEL, U+00A0, "
                 "U+00AD, the non-printable code points of every kind (separators, format characters, private use, "
                 "unassigned, beyond the BMP too) and printable non-ASCII; one large case holds every code point",
    "number_text": "numeric literals as int() and float() read them and near misses: digits of several scripts "
                   "(ASCII, Arabic-Indic, Devanagari, fullwidth, mathematical, alone or mixed), signs, underscores "
                   "between digits and in every wrong place, whitespace of every kind (and U+001C-U+001F, U+200B, "
                   "NUL, which are not stripped), points and exponents of every form, inf, infinity and nan in any "
                   "case, hex prefixes, integers around int64's edges, zero padding around 4300 digits, exact "
                   "midpoints between adjacent doubles, junk; large cases are literals of 64 KB and more",
    "wordpiece_vocab": "a WordPiece vocabulary: [PAD] [UNK] [CLS] [SEP] [MASK] and unique pieces ('##' continuations "
                       "among them), in any order (ids are positions)",
    "wordpiece_table_vocab": "a WordPiece vocabulary ([PAD] [UNK] [CLS] [SEP] [MASK] and unique pieces, '##' "
                             "continuations among them, in any order) with pieces whose hash slots collide at the "
                             "last slot of the table, so that probing wraps to slot 0",
    "bpe_table_vocab": "a BPE vocabulary of Gemma's kind (specials, byte-fallback pieces, characters, joined "
                       "pieces) with character pieces whose hash slots collide at the last slot of the table, "
                       "so that probing wraps to slot 0",
    "bpe_vocab": "a BPE vocabulary of Gemma's kind: <pad> <eos> <bos> <unk>, the 256 byte-fallback pieces <0xNN> "
                 "(sometimes some or all missing), characters (ASCII, ▁, accented, combining mark, CJK, emoji, "
                 "newline, tab), pieces joined from others and added-token literals, in any order (ids are positions)",
    "bpe_text": "texts mixing words over the vocabulary's alphabet, spaces, literal ▁, added-token literals and near "
                "misses, runs of hundreds of code points without an added token, and everything mixed_text draws "
                "(any Unicode, whitespace runs, control characters, empty strings)",
}
# What a domain's ``ids`` kind draws (list[int] ids into a vocabulary parameter).
ID_KINDS_TEXT = {
    "bpe_merges": "(left, right, merged) id triples of pieces with vocab[left] + vocab[right] == vocab[merged], "
                  "repeats allowed, in any rank order",
    "added_tokens": "ids of pieces to match literally, repeats allowed",
}


def _domain_text(dom: Domain | None) -> str:
    if dom is None:
        return "any value of the type"
    if dom.prepared_by is not None:
        return (f"exactly what {dom.prepared_by} returns (for arguments from its own domain), prepared once by "
                "the caller; rely on everything its spec promises, and stay inside it on any other value")
    parts = []
    if dom.min is not None or dom.max is not None:
        parts.append(f"values in [{dom.min if dom.min is not None else '-inf'}, {dom.max if dom.max is not None else 'inf'}]")
    if dom.special:
        parts.append("special values: " + ", ".join(dom.special))
    if dom.axis_of:
        parts.append(f"an axis of {dom.axis_of} (may be negative)")
    if dom.choices is not None:
        parts.append("one of " + ", ".join(repr(c) for c in dom.choices))
    if dom.index_into:
        parts.append(f"indices into the first dim of {dom.index_into} (out-of-range ones where an error is declared)")
    if dom.index_of:
        parts.append(f"indices along axis {dom.axis} of {dom.index_of}, in [-n, n) with n its length there "
                     "(out-of-range ones where an error is declared)")
    if dom.min_len is not None:
        parts.append(f"length at least {dom.min_len}")
    if dom.max_len is not None:
        parts.append(f"length up to {dom.max_len}")
    if dom.strings != "unicode":
        parts.append(STRING_KINDS_TEXT[dom.strings])
    if dom.ids is not None:
        parts.append(f"{ID_KINDS_TEXT[dom.ids]}, into {dom.ids_of}")
    if dom.min_dims is not None or dom.max_dims is not None:
        parts.append(f"rank {dom.min_dims or 0} to {dom.max_dims if dom.max_dims is not None else 'any'}")
    return "; ".join(parts) or "any value of the type"


def render_request(prompts_dir: Path, spec: Spec, overload: Overload, target: str = "cpp",
                   variant: str = PLAIN_VARIANT) -> list[dict[str, str]]:
    """The first two messages of a synthesis conversation: system and task.

    A variant other than plain appends what that variant must do differently
    (prompts/variant.md.j2), so the plain request stays exactly as it was.
    """
    env = environment(prompts_dir)
    f = facts(spec, overload, target)
    task = env.get_template(f"{target}/kernel.md.j2").render(**f)
    if variant != PLAIN_VARIANT:
        if variant not in spec.variants:
            raise SpecError(f"{spec.op} declares no variant {variant!r}",
                            hint=f"add it under 'variants:' in the spec, or choose one of: {', '.join(spec.variant_names())}")
        task += "\n" + env.get_template("variant.md.j2").render(variant=variant, description=spec.variants[variant], **f)
    return [
        {"role": "system", "content": env.get_template(f"{target}/system.md.j2").render(**f)},
        {"role": "user", "content": task},
    ]


def render_repair(prompts_dir: Path, spec: Spec, overload: Overload, target: str, stage: str, feedback: str) -> str:
    """The follow-up after a failed attempt: what failed (compile, policy, verify) and the evidence."""
    env = environment(prompts_dir)
    return env.get_template("repair.md.j2").render(stage=stage, feedback=feedback, **facts(spec, overload, target))
