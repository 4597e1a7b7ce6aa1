"""Op specs: strict pydantic models parsed from ``specs/**/*.yaml``.

Every key is checked (``extra="forbid"``), every error names ``file:line`` and says
how to fix it. Specs are named by the Python qualified name the compiler sees.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from opgen.spec.dtypes import DL_INT, DL_UINT, DTYPES, DType
from opgen.errors import SpecError
from opgen.spec.nativetypes import NativeType, Signature, SignatureError, parse_signature
from opgen.spec.shapes import (BOUNDED, CREATION, DOT_TERMS, GATHER, JOIN, MOVEMENT, ShapeRule, ShapeRuleError, dot_terms,
                               parse_shape_rule)
from opgen.spec.source import line_of, load_with_lines

TARGETS = ("cpp", "rust", "cuda", "metal")
# Target names as the registry records them (with the execution platform).
TARGET_IDS = {"cpp": "cpu-cpp", "rust": "cpu-rust", "cuda": "cuda", "metal": "metal"}
PLAIN_VARIANT = "plain"  # every overload's default implementation
Special = Literal["nan", "inf", "-inf", "-0", "subnormal"]
PyError = Literal["OverflowError", "ZeroDivisionError", "ValueError", "IndexError"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Tolerance(Strict):
    rtol: float = Field(ge=0)
    atol: float = Field(ge=0)
    # "reference": |got-ref| <= atol + rtol*|ref|.
    # "abs_inputs": the rtol term scales with the reference applied to |inputs|
    # (sum |x|, |A|@|B|): the classic forward-error bound of sums and dot products,
    # which stays meaningful where cancellation makes |ref| tiny.
    # "error_scale": the rtol term scales with the reference's own ``error_scale``
    # attribute, called with the same arguments: the per-element magnitude its forward-error
    # bound is proportional to, for ops where neither |ref| nor the reference of |inputs| is
    # one (attention: sum_j p_ij |v_j| times the score magnitude).
    basis: Literal["reference", "abs_inputs", "error_scale"] = "reference"
    # For results whose error bound grows with the number of terms a reduction adds (recursive
    # summation of n terms errs by up to (n - 1) * u relative): the rtol used is
    # rtol + rtol_per_term * n, where ``terms`` names the length n: an axis parameter (the length
    # of the axis it names) or a core dim of the gufunc shape rule. The gate's scale stage draws
    # reductions of 100k terms and more, where a constant rtol fit to short rows either rejects
    # every ordinary summation order or admits everything on short ones.
    terms: str | None = None
    rtol_per_term: float = Field(default=0.0, ge=0)
    # Whether, where the reference's result and the kernel's are both zero, their signs must agree:
    # -0.0 and 0.0 are equal by value but not to 1/x, copysign or atan2. Left unset (None) it is
    # decided by the shape rule (Spec.tolerance_for, zero_sign_defined): on for ops that compute each
    # element from the elements at its own index (elementwise, one tensor mapped to the same shape,
    # data movement: tanh(-0.0) is -0.0, floor(-0.5) is -0.0, a transpose keeps every bit); off where
    # a result combines several elements (reductions, rows, contractions, pooling), whose zero's sign
    # depends on the order of the terms (np.max([0., -0.]) is -0.0, a sum of eight -0.0 is -0.0 and of
    # seven 0.0). true or false says it outright, with a why.
    signed_zeros: bool | None = None
    why: str = ""

    def at(self, terms: int) -> "Tolerance":
        """This tolerance for a reduction of ``terms`` terms."""
        if not self.rtol_per_term or terms <= 0:
            return self
        return self.model_copy(update={"rtol": self.rtol + self.rtol_per_term * terms})


class Lattice(Strict):
    """Float tensors: values on a lattice of another tensor's values (``Domain.lattice``)."""

    of: str  # another float tensor parameter, broadcast against this one as the shape rule aligns them
    step: float = Field(gt=0)  # the lattice's spacing, in units of ``of``: 0.5 puts x / of on half-integers
    # The multiples drawn: integers k uniform in [-multiples, multiples], the values k * step * of
    # (with step 0.5 and multiples 300, x / of in [-150, 150], half of them ties). Without it the
    # drawn values are snapped to the nearest multiple, whatever their size.
    multiples: int | None = Field(default=None, ge=1)


class Domain(Strict):
    """Legal values of one parameter. Anything outside is never generated."""

    min: float | None = None
    max: float | None = None
    special: list[Special] = []
    axis_of: str | None = None  # an int parameter that is an axis of this tensor parameter
    max_len: int | None = Field(default=None, ge=0)  # strings and lists
    # Lists of tensors: the fewest elements drawn (0 by default: NumPy refuses an empty list with
    # ValueError, which the overload then declares); max_len the most (4 by default). The other
    # tensor fields (min, max, special, max_side, min_dims, max_dims) apply to every element.
    min_len: int | None = Field(default=None, ge=0)
    max_side: int | None = Field(default=None, ge=1)  # tensors: largest size of one dim
    max_dims: int | None = Field(default=None, ge=0)
    min_dims: int | None = Field(default=None, ge=0)
    # Scalars: the only values drawn (a string mode such as gelu's approximate="tanh").
    choices: list[str | int | float] | None = Field(default=None, min_length=1)
    # Int tensors: indices into the first dim of the named tensor parameter (token ids into
    # an embedding table), drawn inside it; where the overload declares IndexError, some
    # out-of-range ones too.
    index_into: str | None = None
    # Int tensors: NumPy-style indices along an axis of the named tensor parameter, the axis the
    # int parameter ``axis`` names ({index_of: a, axis: axis}: numpy.take, take_along_axis),
    # drawn inside [-n, n), both signs; where the overload declares IndexError, now and then
    # some outside it.
    index_of: str | None = None
    axis: str | None = None  # with index_of: the int parameter naming the axis
    # Tensors under a gufunc shape rule: core dims drawn as a multiple of another core dim or
    # of a number, {h: g} (query heads a multiple of key/value heads) or {d: 2} (an even dim);
    # one draw in eight keeps the drawn size, so the error a mismatch raises is tested too.
    multiple_of: dict[str, str | int] | None = None
    # str and list[str]: which strings are drawn (opgen/verify/text_strategies.py). "unicode":
    # any text; "mixed_text": what a tokenizer meets (accents, CJK, punctuation, control
    # characters, whitespace runs, long words, special-token literals, empty strings);
    # "wordpiece_vocab" (list[str] only): a small WordPiece vocabulary with BERT's special tokens.
    # "bpe_vocab" (list[str] only): a small BPE vocabulary of Gemma's kind (its special tokens,
    # byte-fallback pieces, pieces built by joining others, added-token literals);
    # "bpe_text": what Gemma's tokenizer meets (mixed_text and the vocabulary's alphabet,
    # spaces, literal ▁, added-token literals and near misses). See opgen/verify/bpe_strategies.py.
    # "text_pieces": short strings over mixed_text's commonest characters (separators, affixes,
    # strip sets: " ", ",", "a", "ab", "\t", "ä", ...), the empty string among them, so that they
    # occur in the drawn texts. "format_specs": Python format specs (what follows the colon of an
    # f-string's replacement field), valid, refused and malformed ones. "cased_text": what case
    # mapping meets (mixed_text, words of cased letters of every script, SpecialCasing's one-to-many
    # letters, capital sigmas among case-ignorable code points); its scale case holds every code point.
    # "repr_text": what repr() and ascii() meet (mixed_text, quotes, backslashes, controls, the
    # non-printable code points of every category, astral ones); its scale case holds every code point.
    # "number_text": what int() and float() of a str meet (numeric literals with digits of several
    # scripts, signs, underscores, whitespace of every kind, exponents, inf and nan spellings, int64's
    # edges, exact midpoints between doubles, and the near misses Python refuses); its scale cases
    # are literals of 64 KB and more.
    # "wordpiece_table_vocab" (list[str] only): a wordpiece_vocab with pieces whose hash slots in
    # opgen.text.wordpiece_vocab_table's layout collide at the last slot, so that probing wraps;
    # "bpe_table_vocab" likewise a bpe_vocab with character pieces (opgen.text.bpe_tokenizer_table).
    strings: Literal["unicode", "mixed_text", "text_pieces", "format_specs", "cased_text", "repr_text", "wordpiece_vocab",
                     "wordpiece_table_vocab", "bpe_vocab", "bpe_table_vocab", "bpe_text", "number_text"] = "unicode"
    # list[int]: ids into the vocabulary the list[str] parameter ``ids_of`` names (drawn before
    # it, with strings: bpe_vocab), drawn for that vocabulary: "bpe_merges": (left, right, merged)
    # triples with vocab[left] + vocab[right] == vocab[merged], in a drawn rank order (max_len:
    # triples at most); "added_tokens": ids of pieces matched literally. Where the overload
    # declares ValueError, now and then a malformed one.
    ids: Literal["bpe_merges", "added_tokens"] | None = None
    ids_of: str | None = None
    # Float tensors under an elementwise or gufunc rule: in about half the draws (and half the
    # scale stage's cases) the values are snapped to integer multiples of ``step`` times the
    # values of the float tensor ``of`` at the same loop index ({of: scale, step: 0.5}: x / scale
    # lands on half-integers, so rounding a quotient meets exact ties, and quotients are exact),
    # which independent draws of x and scale almost never give. Then clipped to [min, max].
    lattice: Lattice | None = None
    # Integer tensors: in about half the draws (and half the scale stage's cases) long runs of the
    # dtype's extremes (min, max and their neighbours: one value, alternating, or mixed), up to the
    # whole tensor, where a sum or a pair of products held in a narrower accumulator than the
    # contract's saturates or wraps. Planted edges alone are a few scattered elements.
    edge_runs: bool = False
    # The argument is what another op returns ("opgen.text.wordpiece_vocab_table", an op of one
    # overload), for arguments drawn from that op's own domain: data a caller prepares once (a
    # tokenizer's vocabulary laid out as a table) and hands to every call. The gate computes it
    # with that op's reference, so the kernel may rely on everything that op's spec promises; the
    # other fields do not apply. For a list[int] result, a 1-D int64 tensor parameter or a
    # list[int] one.
    prepared_by: str | None = None
    # list[str] texts: in about half the draws, texts spelled from the pieces of the vocabulary
    # that the named parameter holds (a list[str] parameter, or one prepared_by an op from a
    # list[str] argument): words of one piece and its continuations ("##" dropped, as WordPiece
    # spells them in text), so that a lookup meets every kind of piece the vocabulary stores,
    # where independent text mostly meets pieces it lacks. The other half: the strings kind.
    words_of: str | None = None


class BenchTensor(Strict):
    """A tensor argument of a benchmark case: its shape (values are drawn at run time)."""

    shape: list[int]
    # Inclusive value range; for int tensors used as indices, keep it inside the table.
    min: float = -1.0
    max: float = 1.0


def _tensor_lists(args: dict[str, Any]) -> dict[str, Any]:
    """A list of mappings in a case's args is a list of tensors' elements ({shape: [...]} each):
    pydantic's smart union keeps such a list as list[Any], so it is validated here."""
    return {k: [BenchTensor.model_validate(e) for e in v]
            if isinstance(v, list) and v and all(isinstance(e, dict) for e in v) else v
            for k, v in args.items()}


class BenchCase(Strict):
    """One benchmark shape: ``opgen bench`` times the kernel and a reference on it."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    # A list of BenchTensors for a list-of-tensors parameter (np.concatenate's arrays).
    args: dict[str, BenchTensor | float | int | bool | str | list[BenchTensor] | list[Any]]
    # A reference to time against; the overload's reference when omitted.
    against: str | None = None
    why: str = ""

    @field_validator("args")
    @classmethod
    def _lists(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _tensor_lists(v)


class ScaleCaseSpec(Strict):
    """One large case the scale stage runs besides the ones it derives (``opgen.verify.scale``):
    shapes and scalars as in a benchmark case; values are drawn from the stage's distributions."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    args: dict[str, BenchTensor | float | int | bool | str | list[BenchTensor] | list[Any]]
    why: str = ""

    @field_validator("args")
    @classmethod
    def _lists(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _tensor_lists(v)


class Raises(Strict):
    error: PyError
    when: str = Field(min_length=1)


class Overload(Strict):
    name: str
    signature: str
    # validate_default: a tensor result without a shape is reported at this key too.
    # A tuple result gives one rule per result, keyed by the result's name.
    shape: str | dict[str, str | list[str] | bool | dict[str, str | list[str] | bool]] | None = Field(
        default=None, validate_default=True)
    reference: str | None = None
    domain: dict[str, Domain] = {}
    raises: list[Raises] = []
    tolerance: dict[str, Tolerance] = {}
    threads: bool | None = None
    notes: str = ""
    bench: list[BenchCase] = []  # timed shapes; not part of correctness (not in overload_hash)
    # Large cases for the gate's scale stage beside the derived ones (part of correctness: hashed).
    scale: list[ScaleCaseSpec] = []

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", v):
            raise ValueError("overload names are lower_snake_case identifiers, e.g. 'f32' or 'int'")
        return v

    @field_validator("signature")
    @classmethod
    def _signature(cls, v: str) -> str:
        try:
            parse_signature(v)
        except SignatureError as exc:
            raise ValueError(str(exc)) from None
        return v

    @field_validator("tolerance")
    @classmethod
    def _tolerance_dtypes(cls, v: dict[str, Tolerance]) -> dict[str, Tolerance]:
        _check_dtype_keys(v)
        return v

    # Checks that need the signature are field validators (signature is declared first,
    # so it is in info.data when valid), so errors point at the line of their own key.
    @field_validator("shape")
    @classmethod
    def _shape(cls, v: Any, info: ValidationInfo) -> Any:
        if "signature" in info.data:  # else the signature's own error is reported
            _shape_rule(parse_signature(info.data["signature"]), v)
        return v

    @field_validator("domain")
    @classmethod
    def _domain(cls, v: dict[str, Domain], info: ValidationInfo) -> dict[str, Domain]:
        if "signature" not in info.data:
            return v
        sig = parse_signature(info.data["signature"])
        names = [p.name for p in sig.params]
        for key, dom in v.items():
            if key not in names and key != "return":
                raise ValueError(f"domain names {key!r}, which is not a parameter (have: {names})")
            if dom.axis_of is not None and dom.axis_of not in [p.name for p in sig.tensor_params]:
                raise ValueError(f"domain.{key}.axis_of names {dom.axis_of!r}, which is not a tensor parameter")
            if key != "return":
                _check_list_length(key, dom, sig.param(key).type)
                _check_choices(key, dom, sig.param(key).type)
                _check_index_into(key, dom, sig)
                _check_index_of(key, dom, sig)
                _check_multiple_of(key, dom, sig, info.data.get("shape"))
                _check_strings(key, dom, sig.param(key).type)
                _check_ids(key, dom, sig)
                _check_prepared(key, dom, sig)
                _check_words_of(key, dom, sig, v)
                _check_lattice(key, dom, sig, info.data.get("shape"), v)
                if dom.edge_runs and not (sig.param(key).type.is_tensor and sig.param(key).type.dtype.dl_code
                                          in (DL_INT, DL_UINT)):
                    raise ValueError(f"domain.{key}.edge_runs is for integer tensors; {key} is {sig.param(key).type}")
        for p in sig.params:
            if p.has_default:
                check_default(p.name, p.default, v.get(p.name))
        return v

    @cached_property
    def sig(self) -> Signature:
        return parse_signature(self.signature)

    @cached_property
    def rule(self) -> ShapeRule | None:
        """The shape rule of the (first) tensor result: it also decides how inputs are drawn."""
        return _shape_rule(self.sig, self.shape)

    @cached_property
    def rules(self) -> dict[str, ShapeRule]:
        """Every tensor result's shape rule, keyed by its out argument's name (``Signature.results``)."""
        return _shape_rules(self.sig, self.shape)


def check_default(name: str, default: Any, dom: "Domain | None") -> None:
    """A default is what compiled calls that omit the argument pass: the gate must have drawn it."""
    if dom is None:
        return
    if dom.choices is not None and default not in dom.choices:
        raise ValueError(f"the default {name} = {default!r} is not one of domain.{name}.choices {dom.choices}: "
                         "the gate would never test the value compiled calls pass; add it to the choices")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        if (dom.min is not None and default < dom.min) or (dom.max is not None and default > dom.max):
            raise ValueError(f"the default {name} = {default!r} is outside domain.{name} [{dom.min}, {dom.max}]: "
                             "the gate would never test the value compiled calls pass; widen the domain")


def _check_list_length(key: str, dom: Domain, t: NativeType) -> None:
    if dom.min_len is None:
        return
    if not t.is_tensor_list:
        raise ValueError(f"domain.{key}.min_len is for lists of tensors; {key} is {t}")
    if dom.max_len is not None and dom.max_len < dom.min_len:
        raise ValueError(f"domain.{key}: min_len {dom.min_len} is above max_len {dom.max_len}")


def _check_choices(key: str, dom: Domain, t: NativeType) -> None:
    if dom.choices is None:
        return
    if t.kind != "scalar" or t.name not in ("int", "float", "str"):
        raise ValueError(f"domain.{key}.choices is for int, float and str parameters; {key} is {t}")
    fits = {"str": lambda c: isinstance(c, str), "int": lambda c: isinstance(c, int) and not isinstance(c, bool),
            "float": lambda c: isinstance(c, (int, float)) and not isinstance(c, bool)}[t.name]
    if bad := [c for c in dom.choices if not fits(c)]:
        raise ValueError(f"domain.{key}.choices has {bad[0]!r}, which is not a {t.name}; list values of {key}'s type")
    if dom.min is not None or dom.max is not None or dom.special:
        raise ValueError(f"domain.{key}: choices are the only values drawn; remove min, max and special")


def _check_strings(key: str, dom: Domain, t: NativeType) -> None:
    if dom.strings == "unicode":
        return
    is_list = t.kind == "list" and t.elem.name == "str"
    if not (is_list or (t.kind == "scalar" and t.name == "str")):
        raise ValueError(f"domain.{key}.strings is for str and list[str] parameters; {key} is {t}")
    if dom.strings in ("wordpiece_vocab", "wordpiece_table_vocab") and not is_list:
        raise ValueError(f"domain.{key}.strings: a wordpiece_vocab is a list[str]; {key} is {t}")
    if dom.strings in ("bpe_vocab", "bpe_table_vocab") and not is_list:
        raise ValueError(f"domain.{key}.strings: a bpe_vocab is a list[str]; {key} is {t}")


def _check_ids(key: str, dom: Domain, sig: Signature) -> None:
    if dom.ids is None and dom.ids_of is None:
        return
    t, names = sig.param(key).type, [p.name for p in sig.params]
    if t.kind != "list" or t.elem.name != "int":
        raise ValueError(f"domain.{key}.ids is for list[int] parameters; {key} is {t}")
    if dom.ids is None or dom.ids_of is None:
        raise ValueError(f"domain.{key}: give both ids (what the ids are) and ids_of (the vocabulary parameter)")
    of = sig.param(dom.ids_of).type if dom.ids_of in names else None
    if of is None or of.kind != "list" or of.elem.name != "str" or names.index(dom.ids_of) > names.index(key):
        raise ValueError(f"domain.{key}.ids_of names {dom.ids_of!r}; name a list[str] parameter before {key} "
                         "(the vocabulary the ids index)")


def _check_prepared(key: str, dom: Domain, sig: Signature) -> None:
    if dom.prepared_by is None:
        return
    if set(dom.model_dump(exclude_defaults=True)) != {"prepared_by"}:
        raise ValueError(f"domain.{key}: prepared_by gives the whole argument; remove the other fields")
    t = sig.param(key).type
    if not (t.kind == "list" and t.elem.name == "int") and not (t.is_tensor and t.dtype.name == "int64"):
        raise ValueError(f"domain.{key}.prepared_by is for list[int] or tensor[int64] parameters; {key} is {t}")


def _check_words_of(key: str, dom: Domain, sig: Signature, domains: dict[str, Domain]) -> None:
    if dom.words_of is None:
        return
    t, names = sig.param(key).type, [p.name for p in sig.params]
    if not (t.kind == "list" and t.elem.name == "str"):
        raise ValueError(f"domain.{key}.words_of is for list[str] texts; {key} is {t}")
    of = sig.param(dom.words_of).type if dom.words_of in names else None
    vocabulary = of is not None and ((of.kind == "list" and of.elem.name == "str")
                                     or domains.get(dom.words_of, Domain()).prepared_by is not None)
    if not vocabulary or names.index(dom.words_of) > names.index(key):
        raise ValueError(f"domain.{key}.words_of names {dom.words_of!r}; name a list[str] vocabulary parameter, or "
                         f"one prepared_by an op from one, before {key}")


def _check_index_into(key: str, dom: Domain, sig: Signature) -> None:
    if dom.index_into is None:
        return
    t = sig.param(key).type
    if t.kind != "tensor" or t.dtype.dl_code not in (DL_INT, DL_UINT):
        raise ValueError(f"domain.{key}.index_into is for integer tensors of indices; {key} is {t}")
    if dom.index_into not in [p.name for p in sig.tensor_params] or dom.index_into == key:
        raise ValueError(f"domain.{key}.index_into names {dom.index_into!r}, which is not another tensor parameter")
    if dom.min is not None or dom.max is not None:
        raise ValueError(f"domain.{key}: index_into draws indices from the size of {dom.index_into}; remove min and max")


def _check_index_of(key: str, dom: Domain, sig: Signature) -> None:
    if dom.index_of is None and dom.axis is None:
        return
    t = sig.param(key).type
    if dom.index_of is None:
        raise ValueError(f"domain.{key}.axis goes with index_of: {{index_of: <tensor param>, axis: <int param>}}")
    if t.kind != "tensor" or t.dtype.dl_code not in (DL_INT, DL_UINT):
        raise ValueError(f"domain.{key}.index_of is for integer tensors of indices; {key} is {t}")
    if dom.index_of not in [p.name for p in sig.tensor_params] or dom.index_of == key:
        raise ValueError(f"domain.{key}.index_of names {dom.index_of!r}, which is not another tensor parameter")
    if dom.axis is None or dom.axis not in [p.name for p in sig.params if str(p.type) == "int"]:
        raise ValueError(f"domain.{key}.index_of needs axis: the int parameter naming the axis of "
                         f"{dom.index_of} the indices index (got {dom.axis!r})")
    if dom.index_into is not None or dom.min is not None or dom.max is not None:
        raise ValueError(f"domain.{key}: index_of draws indices from the length of {dom.index_of} along {dom.axis}; "
                         "remove min, max and index_into")


def _check_multiple_of(key: str, dom: Domain, sig: Signature, shape: Any) -> None:
    if dom.multiple_of is None:
        return
    rule = _shape_rule(sig, shape) if sig.tensor_results and shape is not None else None
    if rule is None or rule.kind != "gufunc" or not sig.param(key).type.is_tensor:
        raise ValueError(f"domain.{key}.multiple_of is for tensor parameters under a gufunc shape rule "
                         "(it names their core dims)")
    own = rule.inputs_core[[p.name for p in sig.tensor_params].index(key)]
    every = {d for core in rule.inputs_core for d in core}
    for dim, of in dom.multiple_of.items():
        if dim not in own:
            raise ValueError(f"domain.{key}.multiple_of names {dim!r}, which is not a core dim of {key} "
                             f"(its core dims: {list(own)})")
        if isinstance(of, str) and (of not in every or of == dim):
            raise ValueError(f"domain.{key}.multiple_of.{dim} is {of!r}: name another core dim of the shape rule "
                             f"({sorted(every - {dim})}) or give a positive number")
        if isinstance(of, int) and of < 1:
            raise ValueError(f"domain.{key}.multiple_of.{dim} is {of}: a number must be at least 1")


def lattice_cores(rule: ShapeRule | None, sig: Signature, key: str, of: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The core dims of ``key`` and of ``of`` (empty under an elementwise rule)."""
    if rule is None or rule.kind != "gufunc":
        return (), ()
    names = [p.name for p in sig.tensor_params]
    return rule.inputs_core[names.index(key)], rule.inputs_core[names.index(of)]


def _check_lattice(key: str, dom: Domain, sig: Signature, shape: Any, domains: dict[str, Domain]) -> None:
    if dom.lattice is None:
        return
    t, of = sig.param(key).type, dom.lattice.of
    if not (t.is_tensor and t.dtype.is_float):
        raise ValueError(f"domain.{key}.lattice is for float tensors; {key} is {t}")
    floats = [p.name for p in sig.tensor_params if p.type.dtype.is_float]
    if of not in floats or of == key:
        raise ValueError(f"domain.{key}.lattice.of names {of!r}, which is not another float tensor parameter "
                         f"(have: {[n for n in floats if n != key]})")
    if domains.get(of, Domain()).lattice is not None:
        raise ValueError(f"domain.{key}.lattice.of names {of!r}, which is on a lattice itself; "
                         "a lattice's values must be drawn first")
    rule = _shape_rule(sig, shape) if sig.tensor_results and shape is not None else None
    if rule is None or rule.kind not in ("gufunc", "elementwise"):
        raise ValueError(f"domain.{key}.lattice is for tensors under an elementwise or gufunc shape rule "
                         "(it aligns the two tensors as the rule does)")
    own, other = lattice_cores(rule, sig, key, of)
    it = iter(own)
    if not all(d in it for d in other):
        raise ValueError(f"domain.{key}.lattice.of: the core dims of {of} {list(other)} must appear, in order, "
                         f"among those of {key} {list(own)}, so that {of} broadcasts against it")


def _shape_rule(sig: Signature, shape: Any) -> ShapeRule | None:
    """The rule of the first tensor result (None for a scalar, str or list result)."""
    rules = _shape_rules(sig, shape)
    return next(iter(rules.values()), None)


def _shape_rules(sig: Signature, shape: Any) -> dict[str, ShapeRule]:
    """One rule per tensor result: ``shape`` itself for one tensor, ``shape[<result name>]`` for a tuple."""
    if not sig.returns.is_tuple:
        rule = _one_shape_rule(sig, shape)
        return {} if rule is None else {"out": rule}
    names = [n for n, _ in sig.results]
    if not isinstance(shape, dict) or set(shape) != set(names):
        raise ValueError(f"a tuple result needs one shape rule per result: shape: {{{', '.join(f'{n}: <rule>' for n in names)}}}"
                         + (f" (got rules for {sorted(shape)})" if isinstance(shape, dict) else ""))
    rules = {}
    for name in names:
        try:
            rules[name] = _one_shape_rule(sig, shape[name])
        except ValueError as exc:
            raise ValueError(f"shape.{name}: {exc}") from None
    _check_bounded(sig, rules)
    return rules


def _check_bounded(sig: Signature, rules: dict[str, ShapeRule]) -> None:
    """A bounded result (BOUNDED: a first dim known only when the kernel has run) comes with exactly
    one count result: a 0-d int64 tensor under the matching count rule over the same mask."""
    types = dict(sig.results)
    for name, rule in rules.items():
        count_kind = BOUNDED.get(rule.kind)
        if count_kind is None:
            continue
        counts = [n for n, r in rules.items() if r.kind == count_kind]
        if len(counts) != 1 or rules[counts[0]].source != rule.indices:
            raise ValueError(f"shape.{name}: a {rule.kind} result's length is known only when the kernel has run; "
                             f"add one result under {{{count_kind}: {rule.indices}}} that reports it "
                             f"(-> tuple[{name}: ..., count: tensor[int64]])")
        if types[counts[0]].dtype.name != "int64":
            raise ValueError(f"shape.{counts[0]}: the count of {name}'s rows is a tensor[int64], not {types[counts[0]]}")
    for name, rule in rules.items():
        if rule.kind in BOUNDED.values() and not any(BOUNDED.get(r.kind) == rule.kind for r in rules.values()):
            raise ValueError(f"shape.{name}: a {rule.kind} rule reports the length of a bounded result "
                             f"({', '.join(BOUNDED)}), and this signature has none")


def bounded_results(overload: "Overload") -> dict[str, str]:
    """Each bounded result's name and the name of the result that holds its run-time length."""
    rules = overload.rules
    return {name: next(n for n, r in rules.items() if r.kind == BOUNDED[rule.kind])
            for name, rule in rules.items() if rule.kind in BOUNDED}


def _one_shape_rule(sig: Signature, shape: Any) -> ShapeRule | None:
    tensors = [p.name for p in sig.tensor_params]
    ints = [p.name for p in sig.params if str(p.type) == "int"]
    floats = [p.name for p in sig.params if str(p.type) == "float"]
    bools = [p.name for p in sig.params if str(p.type) == "bool"]
    int_lists = [p.name for p in sig.params if str(p.type) == "list[int]"]
    strs = [p.name for p in sig.params if str(p.type) == "str"]
    tensor_lists = [p.name for p in sig.tensor_list_params]
    if sig.tensor_results:
        if shape is None:
            raise ValueError("a tensor result needs a 'shape' rule (elementwise, a gufunc string, same_as or reduce)")
        if tensor_lists and not (isinstance(shape, dict) and set(shape) & set(JOIN)):
            raise ValueError(f"a signature with a list of tensors ({', '.join(tensor_lists)}) needs a shape rule that "
                             "says how its elements' shapes relate: {concatenate: <list param>, axis: <int param>} "
                             "or {stack: <list param>, axis: <int param>}")
        try:
            return parse_shape_rule(shape, tensors, ints, bools, int_list_params=int_lists, str_params=strs,
                                    tensor_list_params=tensor_lists, float_params=floats)
        except ShapeRuleError as exc:
            raise ValueError(str(exc)) from None
    if tensor_lists:  # the verifier draws a list's elements from the rule that relates their shapes
        raise ValueError(f"a list of tensors ({', '.join(tensor_lists)}) is taken only by an overload that returns a "
                         "tensor under a concatenate or stack shape rule")
    if shape is not None:
        raise ValueError("'shape' is only for overloads that return a tensor; remove it")
    return None


DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+"


class PythonParam(Strict):
    """A library parameter the native signature takes another way. Either

    * ``spread``: over one or several native parameters: torch's int-or-tuple ``kernel_size`` of a 2-D
      pool is the native ``kernel_h, kernel_w``. A call passing an int gives it to each; a tuple or list
      of that length gives one each; omitted (or None) it takes the value of the parameter ``omitted``
      names (torch's stride defaults to kernel_size), else the library's default; or
    * ``shape_of``: implied by a native tensor parameter's shape (layer_norm's normalized_shape is
      weight's): the argument is not passed on; the compiled call checks, when it runs, that it equals
      that shape, raising ValueError where it does not."""

    spread: list[str] = []
    omitted: str | None = None
    shape_of: str | None = None

    @model_validator(mode="after")
    def _one_way(self) -> "PythonParam":
        if bool(self.spread) == (self.shape_of is not None):
            raise ValueError("a python_params entry has either spread (a list of native parameters) or shape_of "
                             "(a native tensor parameter)")
        if self.omitted is not None and not self.spread:
            raise ValueError("omitted goes with spread")
        return self


class Method(Strict):
    """A method or attribute that is this op: ``ndarray.sum`` (``a.sum(axis)``), ``str.lower``,
    ``ndarray.T`` (an attribute: no call). The receiver binds to ``receiver`` (default: each
    overload's first parameter), the call's arguments to the other parameters in order."""

    name: str  # <type>.<method>, the type as Python names it: ndarray, Tensor, str, list
    receiver: str | None = None
    attribute: bool = False

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError("a method is named <type>.<method>, e.g. 'ndarray.sum' or 'str.lower'")
        return v


class Spec(Strict):
    op: str
    # Other dotted names of the same op (numpy.matmul and torch.matmul for operator.matmul): the
    # registry, the CLI and the compiler find this spec by any of them. Only names that mean
    # exactly this spec's semantics on every overload (numpy.add on Python ints wraps; it is
    # not an alias of operator.add).
    aliases: list[str] = []
    methods: list[Method] = []
    summary: str = Field(min_length=1)
    semantics: str = ""
    reference: str
    overloads: list[Overload] = Field(min_length=1)
    tolerance: dict[str, Tolerance] = {}
    edge_cases: list[str] = []
    targets: list[Literal["cpp", "rust", "cuda", "metal"]] = ["cpp"]
    threads: bool = False
    tags: list[str] = []
    # Extra implementations per target besides "plain": name -> what the prompt asks for
    # (e.g. "blocked: cache-blocked, vectorised with AVX2/FMA, threaded"). The registry
    # serves the fastest verified one, chosen by `opgen bench --select`.
    variants: dict[str, str] = {}
    # How the library's Python signature meets the native one where pairing by name and position does
    # not say it (opgen.spec.library_signature): library parameter name -> how it is spread.
    python_params: dict[str, PythonParam] = {}
    # The error kind a library raises where the kernel raises another, for calls through that library's
    # names (aliases, methods): torch raises IndexError for a dim out of range where NumPy, whose
    # semantics the kernel has, raises ValueError. library ("torch", "numpy") -> {kernel's kind: library's}.
    library_errors: dict[str, dict[str, str]] = {}

    @field_validator("library_errors")
    @classmethod
    def _library_errors(cls, v: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        kinds = {"OverflowError", "ZeroDivisionError", "ValueError", "RuntimeError", "IndexError"}
        for library, remap in v.items():
            if library not in ("torch", "numpy"):
                raise ValueError(f"library_errors: {library!r} is not a library (torch or numpy)")
            for a, b in remap.items():
                if a not in kinds or b not in kinds:
                    raise ValueError(f"library_errors.{library}: {a} -> {b}: kinds are {', '.join(sorted(kinds))}")
        return v

    @field_validator("op")
    @classmethod
    def _op(cls, v: str) -> str:
        if not re.fullmatch(DOTTED, v):
            raise ValueError("op is the dotted Python name the compiler sees, e.g. 'operator.matmul'")
        return v

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, v: list[str]) -> list[str]:
        for name in v:
            if not re.fullmatch(DOTTED, name):
                raise ValueError(f"alias {name!r}: an alias is a dotted Python name, e.g. 'numpy.matmul'")
        if len(set(v)) != len(v):
            raise ValueError("aliases must be unique")
        return v

    @model_validator(mode="after")
    def _python_params(self) -> "Spec":
        for name, pp in self.python_params.items():
            # An overload takes all of a spread's parameters or none (max_pool2d's f32 has no
            # dilation_h, dilation_w; its f32_options both), and some overload takes them.
            takers = [o for o in self.overloads if {p.name for p in o.sig.params} >= set(pp.spread)]
            for o in self.overloads:
                names = [p.name for p in o.sig.params]
                bad = [n for n in pp.spread if n not in names]
                if bad and (len(bad) < len(pp.spread) or not takers):
                    raise ValueError(f"python_params.{name}.spread names {bad[0]!r}, which is not a parameter of "
                                     f"overload {o.name} ({o.sig})")
                if pp.shape_of is not None and (pp.shape_of not in names or not o.sig.param(pp.shape_of).type.is_tensor):
                    raise ValueError(f"python_params.{name}.shape_of names {pp.shape_of!r}, which is not a tensor "
                                     f"parameter of overload {o.name} ({o.sig})")
            if pp.omitted is not None and pp.omitted not in self.python_params:
                raise ValueError(f"python_params.{name}.omitted names {pp.omitted!r}; it must be another "
                                 f"python_params entry (have: {sorted(self.python_params)})")
        return self

    @model_validator(mode="after")
    def _method_receivers(self) -> "Spec":
        for m in self.methods:
            if m.receiver is None:
                continue
            for o in self.overloads:
                if m.receiver not in [p.name for p in o.sig.params]:
                    raise ValueError(f"method {m.name}: receiver {m.receiver!r} is not a parameter of overload "
                                     f"{o.name} ({o.sig})")
        return self

    @field_validator("tolerance")
    @classmethod
    def _tolerance_dtypes(cls, v: dict[str, Tolerance]) -> dict[str, Tolerance]:
        _check_dtype_keys(v)
        return v

    @field_validator("variants")
    @classmethod
    def _variant_names(cls, v: dict[str, str]) -> dict[str, str]:
        for name in v:
            if name == PLAIN_VARIANT or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise ValueError(f"variant {name!r}: use a lower-case identifier other than {PLAIN_VARIANT!r} "
                                 "(the plain variant always exists)")
        return v

    @field_validator("overloads")
    @classmethod
    def _unique_overloads(cls, v: list[Overload]) -> list[Overload]:
        seen = [o.name for o in v]
        if dup := {n for n in seen if seen.count(n) > 1}:
            raise ValueError(f"overload names must be unique; repeated: {sorted(dup)}")
        return v

    @model_validator(mode="after")
    def _terms(self) -> "Spec":
        _check_terms(self)
        return self

    # Filled in by load_spec; not part of the YAML.
    path: Path | None = Field(default=None, exclude=True)
    text_hash: str = Field(default="", exclude=True)

    def overload(self, name: str) -> Overload:
        for o in self.overloads:
            if o.name == name:
                return o
        raise SpecError(
            f"{self.op} has no overload {name!r}",
            hint=f"choose one of: {', '.join(o.name for o in self.overloads)}",
        )

    def tolerance_for(self, overload: Overload, dt: DType) -> Tolerance:
        """The tolerance the gate applies, with ``signed_zeros`` decided where the spec leaves it unset."""
        if dt.name in overload.tolerance:
            tol = overload.tolerance[dt.name]
        elif dt.name in self.tolerance:
            tol = self.tolerance[dt.name]
        else:
            tol = Tolerance(rtol=dt.rtol, atol=dt.atol, why=f"default for {dt.name}")
        if tol.signed_zeros is None:
            tol = tol.model_copy(update={"signed_zeros": zero_sign_defined(overload)})
        return tol

    def tolerance_at(self, overload: Overload, dt: DType, args: dict[str, Any]) -> Tolerance:
        """The tolerance for these arguments (a ``terms``-dependent one resolved to their length)."""
        tol = self.tolerance_for(overload, dt)
        if tol.terms is None:
            return tol
        return tol.at(term_count(overload, tol.terms, args))

    def threads_allowed(self, overload: Overload) -> bool:
        return self.threads if overload.threads is None else overload.threads

    def variant_names(self) -> list[str]:
        return [PLAIN_VARIANT, *self.variants]

    def reference_for(self, overload: Overload) -> str:
        return overload.reference or self.reference

    def overload_hash(self, overload: Overload) -> str:
        """Hash of everything in the spec that bears on this overload's correctness.

        A registry entry records it; when it changes the entry is stale.
        """
        # Benchmarks, variant descriptions, targets and tags do not bear on correctness:
        # adding a target or a benchmark must not make every admitted entry stale.
        # Defaults are left out so that a new optional spec field does not change the hash
        # of every spec that does not use it.
        # The names an op goes by (aliases, methods) and how Python calls reach it (python_params) do not
        # bear on correctness either.
        blob = self.model_dump(mode="json", exclude={"overloads", "variants", "targets", "tags", "aliases", "methods",
                                                     "python_params", "library_errors"},
                               exclude_defaults=True)
        blob["overload"] = overload.model_dump(mode="json", exclude={"bench"}, exclude_defaults=True)
        # Parameter defaults are for callers (the compiler); the kernel takes every argument, and a
        # default must lie in the domain the gate draws from, so adding one leaves entries current.
        if any(p.has_default for p in overload.sig.params):
            blob["overload"]["signature"] = str(overload.sig.bare())
        # Flexible gufunc dims ("m?") are the caller's to insert and remove: the kernel's shapes, and
        # so the entry's evidence, are those of the rule without them.
        if overload.rule is not None and overload.rule.flexible and not overload.sig.returns.is_tuple:
            blob["overload"]["shape"] = overload.rule.gufunc
        return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


def zero_sign_defined(overload: Overload) -> bool:
    """Whether the sign of a zero result is the op's to define, not its summation order's: each
    element computed from the elements at its own index (an elementwise rule; one tensor mapped to
    its own shape with no axis to work along, as an activation is), or moved (a transpose, a reshape)."""
    rule = overload.rule
    if rule is None:
        return True
    if rule.kind == "elementwise" or rule.kind in MOVEMENT or rule.kind in GATHER or rule.kind in JOIN \
            or rule.kind in CREATION:  # created: full(-0.0) is all -0.0
        return True
    if rule.kind == "same_as":
        along_axis = any(d.axis_of is not None for d in overload.domain.values())
        return len(overload.sig.tensor_params) == 1 and not along_axis
    return False


def term_count(overload: Overload, terms: str, args: dict[str, Any]) -> int:
    """The length a tolerance's ``terms`` names, for concrete arguments: the axis an axis parameter
    names, or a core dim's size (0 when the arguments do not say)."""
    dom = overload.domain.get(terms)
    if dom is not None and dom.axis_of is not None:
        shape = tuple(getattr(args.get(dom.axis_of), "shape", ()))
        if not shape:
            return 1
        axis = int(args[terms])
        return int(shape[axis % len(shape)]) if -len(shape) <= axis < len(shape) else 0
    rule = overload.rule
    if rule is not None and rule.kind == "dot" and terms == DOT_TERMS:  # the contracted length
        return dot_terms(tuple(getattr(args.get(rule.source), "shape", ())),
                         tuple(getattr(args.get(rule.indices), "shape", ())))
    if rule is not None and rule.kind == "gufunc":
        for p, core in zip(overload.sig.tensor_params, rule.inputs_core):
            if terms in core:
                shape = tuple(getattr(args.get(p.name), "shape", ()))
                at = len(shape) - len(core) + core.index(terms)
                return int(shape[at]) if 0 <= at < len(shape) else 0
    return 0


def _check_terms(spec: "Spec") -> None:
    """A tolerance's ``terms`` must name an axis parameter or a core dim of every overload it serves."""
    for o in spec.overloads:
        for dt_name in {**spec.tolerance, **o.tolerance}:
            tol = o.tolerance.get(dt_name) or spec.tolerance.get(dt_name)
            if tol is None or tol.terms is None:
                if tol is not None and tol.rtol_per_term:
                    raise ValueError(f"tolerance.{dt_name}: rtol_per_term needs terms (the axis parameter or core dim "
                                     "whose length the error grows with)")
                continue
            dom = o.domain.get(tol.terms)
            cores = {d for core in (o.rule.inputs_core if o.rule is not None and o.rule.kind == "gufunc" else ())
                     for d in core}
            if o.rule is not None and o.rule.kind == "dot" and tol.terms == DOT_TERMS:
                continue  # a dot rule's contracted length
            if not ((dom is not None and dom.axis_of is not None) or tol.terms in cores):
                raise ValueError(f"tolerance.{dt_name}.terms is {tol.terms!r}, which is neither an axis parameter "
                                 f"nor a core dim of overload {o.name}; name the axis or dim the reduction runs over")


def _check_dtype_keys(v: dict[str, Any]) -> None:
    for key in v:
        if key not in DTYPES:
            raise ValueError(f"tolerance key {key!r} is not a dtype; known dtypes: {', '.join(DTYPES)}")


def load_spec(path: Path) -> Spec:
    """The spec in ``path``. A file already loaded by this process with the same text gives the same
    (frozen) Spec again: every compile, CLI command and test module loads all 130 specs, and the
    validation is the same work each time."""
    raw = path.read_bytes()
    key = (str(path), raw)
    cached = _LOADED.get(key)
    if cached is not None:
        return cached
    spec = _parse_spec(path, raw)
    if len(_LOADED) >= _LOADED_MAX:
        _LOADED.clear()
    _LOADED[key] = spec
    return spec


_LOADED: dict[tuple[str, bytes], Spec] = {}
_LOADED_MAX = 4096


def _parse_spec(path: Path, raw: bytes) -> Spec:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", where=f"{path}:1",
                        hint="save the spec as UTF-8") from None
    data, lines = load_with_lines(path, text)
    if not isinstance(data, dict):
        raise SpecError("a spec is a mapping of keys (op, summary, reference, overloads, ...)", where=f"{path}:1")
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_explain(exc, lines, path)) from None
    return spec.model_copy(update={"path": path, "text_hash": hashlib.sha256(raw).hexdigest()})


def _explain(exc: ValidationError, lines: dict, path: Path) -> str:
    """Turn pydantic's errors into ``file:line: what; fix`` lines."""
    out = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        where = f"{path}:{line_of(lines, loc)}"
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            key = loc[-1]
            model = _model_at(loc[:-1])
            allowed = sorted(model.model_fields) if model else []
            allowed = [a for a in allowed if a not in ("path", "text_hash")]
            close = difflib.get_close_matches(str(key), allowed, n=1)
            fix = f"did you mean {close[0]!r}?" if close else f"allowed keys here: {', '.join(allowed)}"
            out.append(f"{where}: unknown key {key!r} at {dotted}; {fix}")
        elif err["type"] == "missing":
            out.append(f"{where}: missing required key {dotted}; add it")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            got = repr(err.get("input"))
            out.append(f"{where}: {dotted}: {msg}" + (f" (got {got})" if len(got) <= 120 else ""))
    return "\n".join(out)


def _model_at(loc: tuple) -> type[BaseModel] | None:
    """The pydantic model that lives at a location path inside a Spec."""
    model: type[BaseModel] = Spec
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        if isinstance(part, int):
            continue
        if model is Spec and part == "overloads":
            model = Overload
        elif part == "tolerance":
            model = Tolerance
            if parts:
                parts.pop(0)  # the dtype key
        elif part == "domain":
            model = Domain
            if parts:
                parts.pop(0)  # the parameter name
        elif part == "raises":
            model = Raises
        else:
            return None
    return model


def spec_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.yaml") if p.is_file())


def load_all(root: Path) -> dict[str, Spec]:
    """Every spec under ``root`` keyed by op name; duplicate op names are an error."""
    specs: dict[str, Spec] = {}
    errors = []
    for path in spec_files(root):
        try:
            spec = load_spec(path)
        except SpecError as exc:
            errors.append(exc.render())
            continue
        if spec.op in specs:
            errors.append(f"{path}:1: op {spec.op!r} is also defined in {specs[spec.op].path}; keep one")
            continue
        specs[spec.op] = spec
    # Every name (op, alias, method) names one spec.
    owner: dict[str, Spec] = {}
    for spec in specs.values():
        for name in [spec.op, *spec.aliases, *(m.name for m in spec.methods)]:
            if name in owner and owner[name] is not spec:
                errors.append(f"{spec.path}:1: {name!r} already names {owner[name].op} ({owner[name].path}); "
                              "a name may belong to one spec only")
            owner.setdefault(name, spec)
    errors += _prepared_errors(specs)
    if errors:
        raise SpecError("\n".join(errors), hint="fix the spec files named above")
    return specs


def _prepared_errors(specs: dict[str, Spec]) -> list[str]:
    """A domain's prepared_by names an op of one overload whose result the parameter can take."""
    errors = []
    for spec in specs.values():
        for overload in spec.overloads:
            for key, dom in overload.domain.items():
                if dom.prepared_by is None:
                    continue
                where = f"{spec.path}:1: {spec.op} {overload.name}: domain.{key}.prepared_by"
                source = specs.get(dom.prepared_by)
                if source is None:
                    errors.append(f"{where} names {dom.prepared_by!r}, which no spec defines")
                elif len(source.overloads) != 1:
                    errors.append(f"{where} names {source.op}, which has {len(source.overloads)} overloads; "
                                  "a preparing op has one")
                elif str(source.overloads[0].sig.returns) != "list[int]":
                    errors.append(f"{where} names {source.op}, which returns {source.overloads[0].sig.returns}; "
                                  "a prepared argument is a list[int] result")
    return errors
