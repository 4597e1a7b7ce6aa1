"""A token-embedding head from the embedding-model ops: lookup, position, GELU, L2 normalisation."""

from typing import Annotated

import torch
import torch.nn.functional as F

Tensor32 = Annotated[torch.Tensor, torch.float32]
TokenIds = Annotated[torch.Tensor, torch.int64]


def embed_tokens(ids: TokenIds, table: Tensor32, position: Tensor32) -> Tensor32:
    """Each id's row of the table, plus a position vector (broadcast), GELU (tanh), unit length."""
    h = F.embedding(ids, table) + position
    h = F.gelu(h, approximate="tanh")
    return F.normalize(h, p=2.0, dim=-1, eps=1e-12)
