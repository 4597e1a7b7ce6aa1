"""Native embedding pipelines (models.py, library.py, client.py), and ``embed``: the call a
function compiled by ``opgen compile`` makes to run one (a compiler intrinsic there, see
opgen/compiler/pipeline_intrinsic.py; here, run in Python, the same native pipeline through
opgen.Client)."""

from __future__ import annotations

import threading
from typing import Any

_client: Any = None
_lock = threading.Lock()


def embed(model: str, texts: list[str]) -> Any:
    """The model's L2-normalised embeddings of ``texts``: a float32 array (len(texts), dim)."""
    global _client
    from opgen.pipelines.client import Client  # lazily: importing opgen.pipelines stays cheap
    from opgen.pipelines.models import resolve

    with _lock:
        if _client is None:
            _client = Client()
    array, _tokens = _client._pipeline(resolve(model)).embed(list(texts))
    return array
