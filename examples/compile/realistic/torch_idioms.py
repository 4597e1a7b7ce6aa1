"""torch idioms of model code that are compositions of other ops (compiled from their Python definitions
in opgen/compiler/lowerings): squeeze with and without a dim, flatten from a start dim, expand (-1 keeps
a size), clamp with either bound or both, F.cosine_similarity, and a dtype test that is known when the
function compiles."""

import torch
import torch.nn.functional as F


def mean_pooling(token_embeddings: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """sentence-transformers' mean pooling: the mask expanded over the hidden size, sums over a clamped count."""
    mask = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).float()
    return torch.sum(token_embeddings * mask, 1) / torch.clamp(mask.sum(1), min=1e-9)


def regression_head(logits: torch.Tensor) -> torch.Tensor:
    """A one-output head's (batch, 1) scores as a (batch,) vector: squeeze(-1), which keeps a dim that is not 1."""
    return logits.squeeze(-1)


def drop_unit_dims(x: torch.Tensor) -> torch.Tensor:
    """Every dim of size 1 removed (torch.squeeze without a dim)."""
    return torch.squeeze(x)


def squeeze_pooled(x: torch.Tensor) -> torch.Tensor:
    """A pooled (batch, channels, 1, 1) map as (batch, channels): squeeze with a tuple of dims (torch 2),
    which keeps a named dim that is not 1 and refuses one out of range."""
    return x.squeeze((2, 3))


def squeeze_named_dims(x: torch.Tensor) -> torch.Tensor:
    """torch.squeeze over dims counted from the end and the start, (-1, 0), as a list."""
    return torch.squeeze(x, [-1, 0])


def flatten_batch(x: torch.Tensor) -> torch.Tensor:
    """A conv net's features flattened per batch item before the classifier: torch.flatten(x, 1)."""
    return torch.flatten(x, 1)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(batch, seq, heads, head_dim) to (batch, seq, heads * head_dim): flatten(start_dim=2) as a method."""
    return x.flatten(start_dim=2)


def relu6(x: torch.Tensor) -> torch.Tensor:
    """MobileNet's activation: x.clamp(0, 6), int bounds on a float tensor."""
    return x.clamp(0, 6)


def safe_log(p: torch.Tensor, eps: float = 1e-7) -> torch.Tensor:
    """log of probabilities kept off 0 and 1: torch.clamp(p, eps, 1 - eps), float bounds."""
    return torch.log(torch.clamp(p, eps, 1 - eps))


def clip_gradient_like(x: torch.Tensor, limit: float) -> torch.Tensor:
    """Values clipped from above only (max=), then from below with the method spelling clip(min=)."""
    return x.clamp(max=limit).clip(min=-limit)


def tile_rows(row: torch.Tensor, n: int) -> torch.Tensor:
    """A (d,) vector repeated as n rows: row.unsqueeze(0).expand(n, -1)."""
    return row.unsqueeze(0).expand(n, -1)


def as_float32(x: torch.Tensor) -> torch.Tensor:
    """Converted to float32 unless it already is: the dtype test folds where the function compiles."""
    if x.dtype != torch.float32:
        x = x.float()
    return x * 2.0


def retrieval_scores(query: torch.Tensor, docs: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of one query embedding against every document row (broadcast over the rows)."""
    return F.cosine_similarity(query.unsqueeze(0), docs, dim=-1)


def pair_similarity(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Row-wise similarity of two batches with torch's defaults (dim=1, eps=1e-8)."""
    return F.cosine_similarity(a, b)


def extended_attention_mask(mask: torch.Tensor) -> torch.Tensor:
    """BERT's additive mask: (batch, seq) to (batch, 1, 1, seq), 0 where kept, the dtype's minimum where not."""
    extended = mask[:, None, None, :]
    return (1.0 - extended) * torch.finfo(extended.dtype).min
