"""Indexing as people write it around inference: rows of a table by token id, reversed sequences,
heads picked from a cache, and Python ints meeting uint8 pixels (each by its library's rules); ids
held in the narrower integer dtypes tokenizers, images and codecs hand over (int32, uint8, int16)."""

import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
T32 = Annotated[torch.Tensor, torch.float32]
TI64 = Annotated[torch.Tensor, torch.int64]
TU8 = Annotated[torch.Tensor, torch.uint8]
I32 = npt.NDArray[np.int32]
I16 = npt.NDArray[np.int16]
TI32 = Annotated[torch.Tensor, torch.int32]


def embed_tokens(table: F32, ids: I64) -> F32:
    """Token embeddings: rows of the table by id (emb[ids], integer-array indexing; IndexError for an id
    out of range), scaled by sqrt(d) as Gemma's embedder does."""
    d = table.shape[-1]
    return table[ids] * float(d) ** 0.5


def select_heads(cache: T32, heads: TI64) -> T32:
    """Some heads of a (batch, heads, seq, dim) KV cache: cache[:, heads] on a torch tensor."""
    return cache[:, heads]


def reverse_time(x: F32) -> F32:
    """A sequence read backwards (a backward RNN's input): x[..., ::-1], which NumPy makes a view."""
    return x[..., ::-1]


def first_and_last(x: F32) -> F32:
    """The first and the last row by a list of ints: x[[0, -1]]."""
    return x[[0, -1]]


def brighten(pixels: U8, amount: int) -> U8:
    """uint8 pixels plus a Python int: NumPy 2 keeps uint8 (wrapping), and an amount outside uint8 is its
    OverflowError."""
    return pixels + amount


def brighten_tensor(pixels: TU8, amount: int) -> TU8:
    """The same with a torch tensor: torch keeps uint8 and wraps an amount outside it too."""
    return pixels + amount


def embed_int32_ids(table: F32, ids: I32) -> F32:
    """Token embeddings from the int32 ids an ONNX-exported tokenizer returns: table[ids], no cast written."""
    return table[ids]


def colorize(palette: F32, pixels: U8) -> F32:
    """A colour map applied to a uint8 label image: palette[pixels], (h, w) labels to (h, w, 3) colours."""
    return palette[pixels]


def decode_codes(codebook: F32, codes: I16) -> F32:
    """Vector-quantized audio decoded: int16 codes select codebook vectors along the last axis of a
    (dim, entries) codebook: codebook[:, codes]."""
    return codebook[:, codes]


def position_embeddings(table: T32, positions: TI32) -> T32:
    """Position embeddings by int32 positions in torch, added to themselves scaled (a learned absolute
    position table read the way BERT-style models read it)."""
    rows = table[positions]
    return rows + rows * 0.5


def chosen_token_probs(probs: npt.NDArray[np.float32], token_ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """Each row's probability of its chosen token: probs[np.arange(n), ids] (two index arrays, NumPy)."""
    return probs[np.arange(len(token_ids)), token_ids]
