"""Reference callables: resolving a spec's dotted name, and the few Python-semantics
refinements a native signature needs.

A reference is called with the example's arguments in signature order. NumPy arrays
go to NumPy references as they are and to PyTorch references as tensors sharing
their memory (copied first: a reference must never see the candidate's buffers).
"""

from __future__ import annotations

import builtins
import importlib
import math
import operator
from typing import Any, Callable

import numpy as np

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def resolve(dotted: str) -> Callable[..., Any]:
    """Import ``package.module.attr`` (the longest importable module prefix wins), or a builtin type's
    method (``str.strip``)."""
    parts = dotted.split(".")
    if len(parts) == 2 and isinstance(getattr(builtins, parts[0], None), type):  # str.strip: a builtin type's method
        obj = getattr(getattr(builtins, parts[0]), parts[1], None)
        if callable(obj):
            return obj
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        if callable(obj):
            return obj
    raise LookupError(f"reference {dotted!r} cannot be imported; name an importable callable such as 'numpy.exp'")


def error_scale(dotted: str) -> Callable[..., Any]:
    """The ``error_scale`` attribute of a reference (tolerance basis ``error_scale``): called with
    the reference's own arguments, it gives the per-element magnitude the rtol term scales with."""
    fn = getattr(resolve(dotted), "error_scale", None)
    if not callable(fn):
        raise LookupError(f"reference {dotted!r} has no error_scale attribute, which tolerance basis 'error_scale' "
                          "needs; give the reference one, or use basis 'reference' or 'abs_inputs'")
    return fn


def call_reference(dotted: str, args: list[Any]) -> Any:
    fn = resolve(dotted)
    if dotted.startswith("torch."):
        # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
        import torch

        def to_torch(a: Any) -> Any:
            if isinstance(a, np.ndarray):
                return torch.from_numpy(np.array(a, copy=True))
            if isinstance(a, list) and a and all(isinstance(x, np.ndarray) for x in a):  # a list of tensors
                return [to_torch(x) for x in a]
            return a

        targs = [to_torch(a) for a in args]
        result = fn(*targs)
        if isinstance(result, tuple):  # several results (torch's named tuples: topk's values, indices)
            return tuple(r.numpy() if isinstance(r, torch.Tensor) else r for r in result)
        return result.numpy() if isinstance(result, torch.Tensor) else result
    return fn(*args)


# The errors a reference raises for arguments its overload may declare as errors (`raises:`).
DECLARABLE = (OverflowError, ZeroDivisionError, ValueError, IndexError, KeyError, TypeError)


class DeclaredError(Exception):
    """The reference raised an error its overload declares: the arguments have no result, by contract."""


def call_declaring(dotted: str, args: list[Any], declared: set[str]) -> Any:
    """call_reference, with an error of a type named in ``declared`` (the overload's ``raises:``) turned
    into DeclaredError; any other error propagates as itself (a reference or spec bug)."""
    try:
        return call_reference(dotted, args)
    except DECLARABLE as exc:
        if type(exc).__name__ in declared:
            raise DeclaredError(str(exc)) from None
        raise


def int_pow(a: int, b: int) -> int:
    """``a ** b`` for the int overload: Python's result, except that a negative
    exponent (a float in Python) is a ValueError because the native return type is int."""
    if b < 0:
        raise ValueError("negative exponent in the int overload of pow")
    return operator.pow(a, b)


def float_pow(a: float, b: float) -> float:
    """``a ** b`` on floats with Python's errors; a complex result becomes ValueError."""
    result = operator.pow(a, b)
    if isinstance(result, complex):
        raise ValueError("negative base with a non-integer exponent")
    if math.isinf(result) and math.isfinite(a) and math.isfinite(b):
        raise OverflowError("result out of range")
    return result


# ---------------------------------------------------------------- attention and rotary embedding
# opgen's own ops (op names opgen.nn.*): what BERT and Gemma 3 compute, in one call each.


def _loop_flat(arrays: list[tuple[np.ndarray, int]]) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """Broadcast the loop dims of (array, core ndim) pairs as a gufunc does and flatten them into
    one leading batch dim: (loop shape, [(batch, *core) arrays, contiguous])."""
    loop = tuple(np.broadcast_shapes(*(a.shape[: a.ndim - core] for a, core in arrays)))
    batch = math.prod(loop)
    flat = [np.array(np.broadcast_to(a, loop + a.shape[a.ndim - core:]), order="C")
            .reshape((batch,) + a.shape[a.ndim - core:]) for a, core in arrays]
    return loop, flat


def visible_keys(key_mask: np.ndarray, queries: int, window: int) -> np.ndarray:
    """(..., S, T) bool: key j is visible from query i iff key_mask[..., j] != 0 and, when
    window > 0, |i - j| < window (Gemma 3's bidirectional sliding window; window <= 0: none)."""
    keys = key_mask.shape[-1]
    visible = np.repeat((key_mask != 0)[..., None, :], queries, axis=-2)
    if window > 0:
        i, j = np.arange(queries)[:, None], np.arange(keys)[None, :]
        visible = visible & (np.abs(i - j) < window)
    return visible


def _attention_args(q, k, v, key_mask):
    q, k, v, key_mask = (np.asarray(a) for a in (q, k, v, key_mask))
    hq, hkv = q.shape[-3], k.shape[-3]
    if hkv == 0 or hq % hkv:
        raise ValueError(f"grouped-query attention needs the query heads ({hq}) to be a multiple of the "
                         f"key/value heads ({hkv}), and at least one key/value head")
    return _loop_flat([(q, 3), (k, 3), (v, 3), (key_mask, 1)])


def scaled_dot_product_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, key_mask: np.ndarray,
                                 window: int, scale: float) -> np.ndarray:
    """Reference of ``opgen.nn.scaled_dot_product_attention``: torch's SDPA with the boolean
    attn_mask built from the key padding mask and the sliding window, grouped-query heads
    (enable_gqa) and the given scale; a query that sees no key gives zeros."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    loop, (q, k, v, key_mask) = _attention_args(q, k, v, key_mask)
    hq, s, e = q.shape[1], q.shape[2], v.shape[-1]
    visible = visible_keys(key_mask, s, int(window))  # (B, S, T)
    out = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v),
        attn_mask=torch.from_numpy(np.ascontiguousarray(visible))[:, None], scale=float(scale), enable_gqa=True)
    # torch's CPU kernel already gives 0 where every key is masked; other backends give nan.
    blind = torch.from_numpy(~visible.any(-1))[:, None, :, None]
    return out.masked_fill(blind, 0.0).numpy().reshape(loop + (hq, s, e))


def torch_sdpa_masked(q: np.ndarray, k: np.ndarray, v: np.ndarray, key_mask: np.ndarray, window: int,
                      scale: float) -> np.ndarray:
    """What ``opgen bench`` times the attention kernel against: torch's SDPA on (B, H, S, D)
    tensors sharing the inputs' memory, with the (B, 1, S, T) boolean mask built from the padding
    mask and the window, as transformers builds it (once per forward pass) for its SDPA path."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    mask = torch.from_numpy(np.ascontiguousarray(visible_keys(key_mask, q.shape[-2], int(window))[:, None]))
    t = [torch.from_numpy(np.ascontiguousarray(a)) for a in (q, k, v)]
    return torch.nn.functional.scaled_dot_product_attention(*t, attn_mask=mask, scale=float(scale),
                                                            enable_gqa=True).numpy()


def _attention_error_scale(q, k, v, key_mask, window, scale):
    """The magnitude the float32 forward error of attention is proportional to, per output
    element: (sum_j p_ij |v_j|) * (1 + max_j |scale| sum_d |q_id k_jd|) over the visible keys j
    (in float64). The first factor bounds the weighted sum, the second the score errors the
    softmax passes on (a score error ds changes p_ij by p_ij * ds)."""
    loop, (q, k, v, key_mask) = _attention_args(q, k, v, key_mask)
    group = q.shape[1] // k.shape[1]
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    visible = visible_keys(key_mask, q.shape[2], int(window))[:, None]  # (B, 1, S, T)
    scores = np.where(visible, scale * (q @ np.swapaxes(k, -1, -2)), -np.inf)
    top = np.max(scores, axis=-1, keepdims=True, initial=-np.inf)
    weights = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = weights.sum(-1, keepdims=True)
    p = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
    spread = np.where(visible, abs(scale) * (np.abs(q) @ np.swapaxes(np.abs(k), -1, -2)), 0.0)
    bound = (p @ np.abs(v)) * (1.0 + spread.max(-1, keepdims=True, initial=0.0))
    return bound.reshape(loop + bound.shape[1:])


scaled_dot_product_attention.error_scale = _attention_error_scale


def rotate_half(x):
    """transformers' rotate_half: (x1, x2) -> (-x2, x1) over the halves of the last dim."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rotary_args(x, positions):
    x, positions = np.asarray(x), np.asarray(positions)
    if x.shape[-1] % 2:
        raise ValueError(f"rotary embedding needs an even head dim, got {x.shape[-1]}")
    return _loop_flat([(x, 3), (positions, 1)])


def rotary_inv_freq(dim: int, theta: float):
    """transformers' default RoPE inverse frequencies, in float32 as it computes them."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    return 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))


def rotary_embedding(x: np.ndarray, positions: np.ndarray, theta: float) -> np.ndarray:
    """Reference of ``opgen.nn.rotary_embedding``: transformers' default rotary embedding
    (Gemma3RotaryEmbedding.forward, then apply_rotary_pos_emb on one tensor) in float32."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    loop, (x, positions) = _rotary_args(x, positions)
    inv_freq = rotary_inv_freq(x.shape[-1], float(theta))
    # As Gemma3RotaryEmbedding.forward: one float32 product per (position, frequency) (older
    # transformers wrote it as a (dim/2, 1) @ (1, S) matmul, which rounds the same product).
    freqs = torch.from_numpy(positions)[..., None].float() * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None], emb.sin()[:, None]  # unsqueeze over the heads
    t = torch.from_numpy(x)
    out = (t * cos) + (rotate_half(t) * sin)
    return out.numpy().reshape(loop + x.shape[1:])


def _rotary_error_scale(x, positions, theta):
    """Per output element: (|x_j| + |x_partner|) * (1 + |angle|). The first factor bounds the
    rounding of x*cos + rotate_half(x)*sin; the second the angle: a float32 angle
    position * inv_freq is off by up to |angle| * 2**-22 (inv_freq itself is off by up to an
    ulp between float32 pow implementations), and cos and sin pass that on unchanged."""
    loop, (x, positions) = _rotary_args(x, positions)
    dim = x.shape[-1]
    inv_freq = 1.0 / np.power(float(theta), np.arange(0, dim, 2, dtype=np.float64) / dim)
    angle = np.abs(positions.astype(np.float64)[:, None, :, None] * np.concatenate([inv_freq, inv_freq]))
    ax = np.abs(x.astype(np.float64))
    pair = ax + np.concatenate([ax[..., dim // 2:], ax[..., : dim // 2]], axis=-1)
    bound = pair * (1.0 + angle)
    return bound.reshape(loop + x.shape[1:])


rotary_embedding.error_scale = _rotary_error_scale


BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def bert_wordpiece_tokenizer(vocab: list[str], max_length: int) -> Any:
    """A Hugging Face ``tokenizers`` Tokenizer configured as all-MiniLM-L6-v2's tokenizer.json
    (BertNormalizer with lower-casing and accent stripping, BertPreTokenizer, WordPiece with
    [UNK], ``##`` and 100 characters a word, the five special tokens matched in the raw text,
    [CLS] $A [SEP]) over ``vocab`` (id = position), truncating to ``max_length`` tokens and
    padding with [PAD] to the longest sequence of a batch."""
    # the dev extra's tokenizers: only this reference needs it
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers, processors

    ids = {token: i for i, token in enumerate(vocab)}
    if len(ids) != len(vocab):
        raise ValueError("the vocabulary repeats a token")
    if missing := [t for t in BERT_SPECIAL_TOKENS if t not in ids]:
        raise ValueError(f"the vocabulary lacks the special tokens {missing}")
    if max_length < 2:
        raise ValueError(f"max_length {max_length} leaves no room for [CLS] and [SEP]; it must be at least 2")
    tok = Tokenizer(models.WordPiece(ids, unk_token="[UNK]", continuing_subword_prefix="##",
                                     max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                                lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in BERT_SPECIAL_TOKENS])
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=ids["[PAD]"], pad_token="[PAD]")
    return tok


def flatten_encodings(encodings: list[Any]) -> list[int]:
    """The ids of every row, then the attention mask of every row: 2 x batch x length, row-major."""
    return [i for e in encodings for i in e.ids] + [m for e in encodings for m in e.attention_mask]


def wordpiece_encode(vocab: list[str], texts: list[str], max_length: int) -> list[int]:
    """``opgen.text.wordpiece_encode``: Hugging Face ``tokenizers``' encode_batch of ``texts``
    with the BERT uncased pipeline over ``vocab``, flattened (see ``flatten_encodings``)."""
    tok = bert_wordpiece_tokenizer(vocab, max_length)
    return flatten_encodings(tok.encode_batch(list(texts))) if texts else []


# The prepared vocabulary of ``opgen.text.wordpiece_encode_table``: what a pipeline builds once,
# at load, so that a call does not hash 30522 pieces before its first token (see the spec).
WORDPIECE_TABLE_HEADER = 10


def wordpiece_slot_hash(data: bytes) -> int:
    """The hash that places a piece in wordpiece_vocab_table's slots (home = hash & (C - 1))."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h ^ (h >> 29)


def packed_pieces(pieces: list[bytes]) -> tuple[list[int], list[int]]:
    """A prepared vocabulary's last two parts: the n + 1 byte offsets and the pieces' bytes 8 to a
    little-endian int64 word, the last word's unused bytes 0."""
    offsets = [0]
    for piece in pieces:
        offsets.append(offsets[-1] + len(piece))
    blob = b"".join(pieces)
    blob += bytes(-len(blob) % 8)
    return offsets, [int.from_bytes(blob[k:k + 8], "little", signed=True) for k in range(0, len(blob), 8)]


def wordpiece_vocab_table(vocab: list[str]) -> list[int]:
    """``opgen.text.wordpiece_vocab_table``: the vocabulary as one flat int64 table (header, an
    open-addressing hash table of ids, byte offsets, the pieces' UTF-8 bytes 8 to a word), laid
    out exactly as specs/opgen/text/wordpiece_vocab_table.yaml says."""
    pieces = [piece.encode() for piece in vocab]
    ids: dict[bytes, int] = {}
    for i, piece in enumerate(pieces):
        if piece in ids:
            raise ValueError(f"the vocabulary repeats the piece {vocab[i]!r}")
        ids[piece] = i
    missing = [t for t in BERT_SPECIAL_TOKENS if t.encode() not in ids]
    if missing:
        raise ValueError(f"the vocabulary lacks the special token {missing[0]}")
    n, slots = len(pieces), 16
    while slots < 2 * n:
        slots *= 2
    table = [-1] * slots
    for i, piece in enumerate(pieces):
        s = wordpiece_slot_hash(piece) & (slots - 1)
        while table[s] >= 0:
            s = (s + 1) & (slots - 1)
        table[s] = i
    offsets, words = packed_pieces(pieces)
    max_plain = max(len(p) for p in pieces)
    max_cont = max((len(p) - 2 for p in pieces if p.startswith(b"##")), default=0)
    header = [n, slots, *(ids[t.encode()] for t in BERT_SPECIAL_TOKENS), max_plain, max_cont, offsets[-1]]
    return header + table + offsets + words


def wordpiece_table_vocab(table: Any) -> list[str]:
    """The vocabulary a table of ``wordpiece_vocab_table`` holds, in id order."""
    t = [int(v) for v in np.asarray(table, dtype=np.int64).reshape(-1)]
    n, slots, total = t[0], t[1], t[9]
    start = WORDPIECE_TABLE_HEADER + slots
    offsets = t[start:start + n + 1]
    blob = b"".join(w.to_bytes(8, "little", signed=True) for w in t[start + n + 1:])[:total]
    return [blob[offsets[i]:offsets[i + 1]].decode() for i in range(n)]


def wordpiece_encode_table(table: Any, texts: list[str], max_length: int) -> list[int]:
    """``opgen.text.wordpiece_encode_table``: ``wordpiece_encode`` over the vocabulary ``table``
    holds (a table ``wordpiece_vocab_table`` built)."""
    if max_length < 2:
        raise ValueError(f"max_length {max_length} leaves no room for [CLS] and [SEP]; it must be at least 2")
    return wordpiece_encode(wordpiece_table_vocab(table), texts, max_length)


# --- Embedding-model ops computed by a module rather than one torch function ------------
# Each is written with torch ops exactly as the model's module computes it (the class is
# named), so the kernels are checked against what the model really does.

def _torch_copy(a: Any) -> Any:
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    return torch.from_numpy(np.array(a, copy=True))


def embedding(input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``torch.nn.functional.embedding``, with IndexError for every out-of-range id: PyTorch
    raises IndexError too, except for an empty table or empty rows (RuntimeError there)."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch.nn.functional as F

    ids = np.asarray(input)
    if ids.size and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return F.embedding(_torch_copy(input), _torch_copy(weight)).numpy()


def sum(a: np.ndarray, axis: int) -> np.ndarray:  # noqa: A001 - the op's own name
    """``numpy.sum(a, axis=axis)`` summed in extended precision (x86's 80-bit long double) and
    rounded once to a's dtype. NumPy sums pairwise only along a contiguous axis; along a strided
    one it adds one after another in a's dtype, which over the scale stage's 100k-element offset
    rows errs by 5e-4 relative in float32 (measured), more than the tolerance a pairwise or
    double-accumulating kernel needs (see specs/numpy/sum.yaml)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(np.sum(np.asarray(a, dtype=np.longdouble), axis=axis)).astype(a.dtype)


def layer_norm(input: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """``torch.nn.functional.layer_norm`` over the last dim, normalized_shape implied by
    weight's length (the native signature leaves it out), evaluated in float64 on the float32
    inputs and rounded once to float32. PyTorch's own float32 evaluation errs by about
    eps * |mean| / std relative, unboundedly for rows of small spread around a large mean
    (see specs/torch/nn/functional/layer_norm.yaml); the float64 evaluation is the layer norm
    of the given float32 values, which a stable kernel can match."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch.nn.functional as F

    w = _torch_copy(weight).double()
    out = F.layer_norm(_torch_copy(input).double(), (w.shape[0],), w, _torch_copy(bias).double(), eps)
    return out.float().numpy()


def native_layer_norm(input: np.ndarray, weight: np.ndarray, bias: np.ndarray,
                      eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``torch.native_layer_norm`` over the last dim (normalized_shape implied by weight's length, as
    in ``layer_norm``): (output, mean, rstd), mean and rstd of shape (*, 1), evaluated in float64 on
    the float32 inputs and each rounded once to float32, for the reason ``layer_norm`` gives. The
    output is ``layer_norm``'s. The statistics are NumPy's in float64: torch's own mean of a row
    holding an infinity is inf on some of its code paths and nan on others (its vectorised and
    Welford moments differ), so the contract is the plain one: the mean is the sum over n (+-inf
    where the row holds infinities of one sign, nan with a nan or both), the variance the mean of
    squared deviations (nan with any nan or inf), rstd = 1 / sqrt(var + eps); a row of d == 0 has
    mean 0 and rstd nan, as torch."""
    x = np.asarray(input, dtype=np.float64)
    n = x.shape[-1]
    with np.errstate(all="ignore"):
        mean = x.sum(axis=-1, keepdims=True) / n if n else np.zeros(x.shape[:-1] + (1,))
        var = np.mean((x - mean) ** 2, axis=-1, keepdims=True) if n else np.full(x.shape[:-1] + (1,), np.nan)
        rstd = 1.0 / np.sqrt(var + eps)
    return layer_norm(input, weight, bias, eps), mean.astype(np.float32), rstd.astype(np.float32)


def normalize(input: np.ndarray, p: float, dim: int, eps: float) -> np.ndarray:
    """``torch.nn.functional.normalize`` evaluated in float64 on the float32 input and rounded once
    to float32. PyTorch's float32 evaluation sums the squares in float32: at the long slices the
    gate's scale stage draws (a million elements) that alone errs by ~2e-5 relative, more than any
    tolerance a float64-summing kernel needs (see specs/torch/nn/functional/normalize.yaml)."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch.nn.functional as F

    return F.normalize(_torch_copy(input).double(), p, dim, eps).float().numpy()


def gemma_rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """transformers' Gemma3RMSNorm.forward: in float32, x * rsqrt(mean(x**2) + eps) * (1 + weight)."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    t = _torch_copy(x)
    out = t.float()
    out = out * torch.rsqrt(out.pow(2).mean(-1, keepdim=True) + eps)
    out = out * (1.0 + _torch_copy(weight).float())
    return out.type_as(t).numpy()


def gelu(input: np.ndarray, approximate: str) -> np.ndarray:
    """``torch.nn.functional.gelu``, whose ``approximate`` is keyword-only."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch.nn.functional as F

    return F.gelu(_torch_copy(input), approximate=approximate).numpy()


def masked_mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' Pooling(pooling_mode="mean") (``Pooling._forward_padded``): the
    mask times the token embeddings summed over the sequence dim, divided by the mask's sum
    clamped to at least 1e-9. Leading dims beyond (batch,) broadcast as a gufunc's loop dims."""
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    h = _torch_copy(hidden)
    m = _torch_copy(mask).unsqueeze(-1).to(h.dtype)
    total = (h * m).sum(dim=-2, dtype=h.dtype)
    count = torch.clamp(m.sum(dim=-2, dtype=h.dtype), min=1e-9)
    return (total / count).numpy()


def linear_numpy(input: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """``input @ weight.T + bias`` with NumPy's BLAS: the baseline linear is benchmarked against."""
    out = np.matmul(input, weight.T)
    return out if bias is None else np.add(out, bias, out=out)


# --- Gemma's tokenizer: SentencePiece-style BPE with byte fallback ------------------------

GEMMA_SPECIAL_TOKENS = ("<pad>", "<eos>", "<bos>", "<unk>")


def bpe_merge_pairs(vocab: list[str], merges: list[int]) -> list[tuple[str, str]]:
    """The (left, right) piece pairs of ``merges``, flat (left, right, merged) id triples in rank
    order, after checking each triple as ``tokenizers``' BPE builder checks a merge: its ids are
    in the vocabulary and the merged piece is the two pieces joined."""
    if len(merges) % 3:
        raise ValueError(f"merges holds {len(merges)} ints; it must be (left, right, merged) id triples")
    pairs = []
    for k in range(0, len(merges), 3):
        left, right, merged = merges[k:k + 3]
        if not all(0 <= i < len(vocab) for i in (left, right, merged)):
            raise ValueError(f"merge {k // 3} ({left}, {right}, {merged}) names an id outside the vocabulary "
                             f"of {len(vocab)} pieces")
        if vocab[left] + vocab[right] != vocab[merged]:
            raise ValueError(f"merge {k // 3}: piece {merged} {vocab[merged]!r} is not {vocab[left]!r} + "
                             f"{vocab[right]!r}")
        pairs.append((vocab[left], vocab[right]))
    return pairs


def gemma_bpe_tokenizer(vocab: list[str], merges: list[int], added: list[int], add_bos: bool, add_eos: bool,
                        max_length: int) -> Any:
    """A Hugging Face ``tokenizers`` Tokenizer configured as Gemma's tokenizer.json: BPE with
    byte fallback, fused <unk> and the given merges over ``vocab`` (id = position), the
    normalizer Replace(" ", "▁"), the pre-tokenizer Split(" ", merged_with_previous) (which
    finds no space left after the normalizer), the pieces ``added`` names as added tokens
    matched in the raw text (normalized=False), "<bos> $A <eos>" as asked, truncation to
    ``max_length`` tokens and padding with <pad> to the longest sequence of a batch."""
    # the dev extra's tokenizers: only this reference needs it
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers, processors

    ids = {token: i for i, token in enumerate(vocab)}
    if len(ids) != len(vocab):
        raise ValueError("the vocabulary repeats a piece")
    if missing := [t for t in GEMMA_SPECIAL_TOKENS if t not in ids]:
        raise ValueError(f"the vocabulary lacks the special tokens {missing}")
    specials = int(bool(add_bos)) + int(bool(add_eos))
    if max_length < specials:
        raise ValueError(f"max_length {max_length} leaves no room for the {specials} special tokens asked for")
    if bad := [i for i in added if not 0 <= i < len(vocab)]:
        raise ValueError(f"added names id {bad[0]}, outside the vocabulary of {len(vocab)} pieces")
    tok = Tokenizer(models.BPE(ids, bpe_merge_pairs(vocab, merges), unk_token="<unk>", fuse_unk=True,
                               byte_fallback=True, dropout=None))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous", invert=False)
    single = " ".join(["<bos>"] * bool(add_bos) + ["$A"] + ["<eos>"] * bool(add_eos))
    tok.post_processor = processors.TemplateProcessing(
        single=single, special_tokens=[(t, ids[t]) for t in ("<bos>", "<eos>") if t in single.split()])
    tok.add_tokens([AddedToken(vocab[i], normalized=False, special=False) for i in added])
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=ids["<pad>"], pad_token="<pad>")
    return tok


def bpe_encode(vocab: list[str], merges: list[int], added: list[int], texts: list[str], add_bos: bool,
               add_eos: bool, max_length: int) -> list[int]:
    """``opgen.text.bpe_encode``: Hugging Face ``tokenizers``' encode_batch of ``texts`` with
    Gemma's pipeline over ``vocab``, ``merges`` and ``added`` (see ``gemma_bpe_tokenizer``),
    flattened as ``wordpiece_encode``'s result: ids, then attention masks."""
    tok = gemma_bpe_tokenizer(vocab, merges, added, add_bos, add_eos, max_length)
    return flatten_encodings(tok.encode_batch(list(texts))) if texts else []


def split_whitespace(s: str, maxsplit: int = -1) -> list[str]:
    """``s.split()`` / ``s.split(None, maxsplit)``: the native overload has no sep parameter (None
    is not a str), so the reference passes the None itself."""
    return s.split(None, maxsplit)


def format_int(value: int, format_spec: str = "") -> str:
    """``format(value, format_spec)`` on an int, where the native result is UTF-8: type ``c`` of a
    surrogate code point (U+D800-U+DFFF) is a str Python can hold and UTF-8 cannot, so the native
    kernels raise ValueError for it, and so does this reference."""
    out = format(value, format_spec)
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in out):
        raise ValueError(f"format({value}, {format_spec!r}) is a surrogate code point, which UTF-8 cannot hold")
    return out
