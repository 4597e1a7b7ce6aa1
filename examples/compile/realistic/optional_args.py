"""Optional arguments as library code takes them: `mask: Optional[torch.Tensor] = None`, `x: T | None`,
`limit: int = None`; the body tests `is None` / `is not None` (if, conditional expressions, and/or, an
early return, assert) or gives the parameter a value before it reads it."""

from typing import Optional, Union

import numpy as np
import torch


def mean_pool(hidden: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Sentence embedding: token states averaged over the sequence, under the attention mask when one is given."""
    if attention_mask is None:
        return hidden.mean(dim=1)
    m = attention_mask.unsqueeze(-1)
    return (hidden * m).sum(1) / m.sum(1)


def attention_weights(q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None = None,
                      scale: float | None = None) -> torch.Tensor:
    """Scaled dot-product attention weights: an additive bias when given, 1/sqrt(d) unless a scale is passed."""
    if scale is None:
        scale = q.shape[-1] ** -0.5
    scores = q @ k.transpose(-2, -1) * scale
    if bias is not None:
        scores = scores + bias
    return torch.softmax(scores, dim=-1)


def clip_range(x: np.ndarray, lo: Optional[float] = None, hi: Optional[float] = None) -> np.ndarray:
    """np.clip with either bound left open: each applied only where the caller gave it."""
    out = x
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    return out


def take_tokens(words: list[str], limit: Optional[int] = None) -> list[str]:
    """Lower-cased words up to an optional limit (the loop's test narrows limit before comparing)."""
    out = []
    for w in words:
        if limit is not None and len(out) >= limit:
            break
        out.append(w.lower())
    return out


def with_prefix(text: str, prefix: Union[str, None] = None) -> str:
    """A task prefix applied when given: the conditional expression reads prefix only on its tested side."""
    body = text.strip()
    return body if prefix is None else prefix + ": " + body


def weighted_sum(values: list[float], weights: list[float] = None) -> float:
    """A sum, weighted when weights are given (PEP 484's implicit Optional of a None default)."""
    if weights is None:
        weights = [1.0] * len(values)
    total = 0.0
    for v, w in zip(values, weights):
        total += v * w
    return total


def tempered_scores(scores: np.ndarray, temperature: float | None = None, use_temperature: bool = False) -> np.ndarray:
    """Scores divided by a temperature the caller must give when it asks for one (assert narrows it)."""
    if not use_temperature:
        return scores
    assert temperature is not None, "use_temperature needs a temperature"
    return scores / temperature


def lookup_id(vocab: dict[str, int], token: str, unknown: Optional[int] = None) -> int:
    """A token's id, else the unknown id when there is one (an early raise narrows unknown)."""
    if token in vocab:
        return vocab[token]
    if unknown is None:
        raise ValueError(f"{token} is not in the vocabulary and no unknown id was given")
    return unknown
