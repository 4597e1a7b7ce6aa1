"""ONNX Runtime as its users run an embedding model: the standard export, graph optimizations
on, and its int8 form by dynamic quantization. `opgen bench embeddings` measures opgen against it.

The recipe is the one sentence-transformers' ONNX backend and optimum's CLI follow
(`export_optimized_onnx_model(..., "O2")`, `export_dynamic_quantized_onnx_model(...,
"avx512_vnni")`):

1. **export**: torch.onnx's TorchScript exporter (optimum's path) over the eager-attention
   transformer, opset 17, inputs ``input_ids``, ``attention_mask`` and ``token_type_ids`` with
   dynamic batch and sequence axes, ``last_hidden_state`` out;
2. **optimize**: ONNX Runtime's transformer optimizer (`onnxruntime.transformers.optimizer`,
   what optimum's O2 level runs) fuses the embeddings and LayerNorm, attention, bias+GELU and
   residual+LayerNorm into ORT's contrib kernels; the fused operators are recorded so a report
   shows the baseline really is the fused graph;
3. **quantize** (int8 only): `onnxruntime.quantization.quantize_dynamic` with int8 weights per
   output channel and uint8 activations quantized per call, what optimum's ``avx512_vnni``
   dynamic configuration asks for, over the fused graph (its Attention nodes become QAttention).

optimum itself is not used: its ONNX package pins transformers below 5, and opgen needs 5 for
EmbeddingGemma. The steps above are what it would run. Models whose architecture the
transformer optimizer has no fusions for (anything but BERT-like encoders here) keep the plain
export; ONNX Runtime's own graph optimizations (``ORT_ENABLE_ALL``) apply to every session.

Everything is built once and cached under ``.opgen-cache/onnx/`` by the model files'
identity and the recipe's version, written to a temporary name first so that an interrupted
export leaves nothing half-written behind.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from opgen.build.cpp import cache_root
from opgen.errors import OpgenError
from opgen.pipelines.models import max_seq_length, resolve

# Bumped whenever the recipe changes, so an older cached export is never measured as the new one.
RECIPE = 2

# Transformer optimizer model types by config.json's model_type (the encoders it has fusions for).
_FUSIONS = {"bert": "bert", "roberta": "bert", "distilbert": "bert", "xlm-roberta": "bert"}


@dataclass(frozen=True)
class Baseline:
    path: Path
    precision: str  # "float32" or "int8"
    fused: dict[str, int]  # fused operator -> count, empty when the graph was not fused

    def describe(self) -> str:
        fused = ", ".join(f"{k} x{v}" for k, v in sorted(self.fused.items())) or "no transformer fusions"
        return f"TorchScript export, ORT transformer optimizer ({fused})" + (
            ", dynamic int8 quantization (per-channel int8 weights)" if self.precision == "int8" else "")


def _config(model_dir: Path) -> dict:
    c = json.loads((model_dir / "config.json").read_text())
    return c.get("text_config", c)


def _key(model: str, model_dir: Path) -> str:
    weights = model_dir / "model.safetensors"
    st = weights.stat()
    return f"{resolve(model).name}-{st.st_size}-{int(st.st_mtime)}-r{RECIPE}"


def _export(model_dir: Path, path: Path) -> None:
    # torch takes seconds to import, transformers more; only the baseline's first build needs them
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    # BERT-like encoders take token_type_ids, others (Gemma) do not: export what forward() takes.
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids")
             if n in inspect.signature(model.forward).parameters]

    class LastHidden(torch.nn.Module):
        def __init__(self, m: torch.nn.Module):
            super().__init__()
            self.m = m

        def forward(self, *inputs):  # noqa: D102
            return self.m(**dict(zip(names, inputs))).last_hidden_state

    dims = {0: "batch", 1: "sequence"}
    example = tuple(torch.ones(2, 16, dtype=torch.int64) for _ in names)
    with warnings.catch_warnings():  # the TorchScript exporter warns on every traced Python branch
        warnings.simplefilter("ignore")
        torch.onnx.export(LastHidden(model), example, str(path), input_names=names,
                          output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                          dynamic_axes={**{n: dims for n in names}, "last_hidden_state": dims})


def _optimize(model_dir: Path, exported: Path, path: Path) -> dict[str, int]:
    # the dev extra's onnxruntime: only the baseline needs it
    from onnxruntime.transformers.optimizer import optimize_model

    c = _config(model_dir)
    kind = _FUSIONS.get(str(c.get("model_type", "")))
    if kind is None:
        path.write_bytes(exported.read_bytes())
        return {}
    optimized = optimize_model(str(exported), model_type=kind, num_heads=int(c["num_attention_heads"]),
                               hidden_size=int(c["hidden_size"]), opt_level=1)
    optimized.save_model_to_file(str(path))
    return {k: v for k, v in optimized.get_fused_operator_statistics().items() if v}


def _quantize(optimized: Path, path: Path) -> None:
    # the dev extra's onnx and onnxruntime: only the int8 baseline needs them
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # DefaultTensorType: the fused contrib ops' outputs have no inferred type for the quantizer.
    # Its one warning (run ORT's pre-processing first) is advice for static, calibrated quantization.
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(str(optimized), str(path), weight_type=QuantType.QInt8, per_channel=True,
                         reduce_range=False,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        logging.disable(logging.NOTSET)


def build(model: str, precision: str = "float32") -> Baseline:
    """The model's ONNX baseline at `precision` ("float32" or "int8"), built once and cached."""
    if precision not in ("float32", "int8"):
        raise OpgenError(f"unknown ONNX Runtime precision {precision!r}", hint="float32 or int8")
    model_dir = resolve(model).locate()
    folder = cache_root() / "onnx" / _key(model, model_dir)
    folder.mkdir(parents=True, exist_ok=True)
    exported, optimized, quantized = folder / "model.onnx", folder / "model_O2.onnx", folder / "model_int8.onnx"
    fused_record = folder / "fused.json"
    steps: list[tuple[Path, Callable[[Path], None]]] = [
        (exported, lambda tmp: _export(model_dir, tmp)),
        (optimized, lambda tmp: fused_record.write_text(json.dumps(_optimize(model_dir, exported, tmp)))),
    ]
    if precision == "int8":
        steps.append((quantized, lambda tmp: _quantize(optimized, tmp)))
    for target, make in steps:
        if target.exists():
            continue
        tmp = target.with_name(f".{target.stem}.{os.getpid()}.tmp.onnx")
        try:
            make(tmp)
            tmp.replace(target)
        finally:
            tmp.unlink(missing_ok=True)
    fused = json.loads(fused_record.read_text()) if fused_record.exists() else {}
    return Baseline(quantized if precision == "int8" else optimized, precision, fused)


def session(baseline: Baseline, threads: int):
    """An ONNX Runtime CPU session over the baseline: every graph optimization, `threads` threads."""
    # the dev extra's onnxruntime: only the baseline needs it
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(baseline.path), options, providers=["CPUExecutionProvider"])


def embedder(model: str, precision: str, threads: int) -> Callable[[list[str]], np.ndarray]:
    """texts -> L2-normalised mean-pooled embeddings through ONNX Runtime, tokenized by Hugging Face
    `tokenizers` and pooled in NumPy, as sentence-transformers' ONNX backend serves them."""
    # the dev extra's tokenizers: only the baseline needs it
    from tokenizers import Tokenizer

    model_dir = resolve(model).locate()
    modules = json.loads((model_dir / "modules.json").read_text()) if (model_dir / "modules.json").exists() else []
    heads = [m["path"] for m in modules if m.get("type", "").rsplit(".", 1)[-1] == "Dense"]
    if heads:
        raise OpgenError(f"the ONNX Runtime baseline runs the encoder and mean pooling only; {model} adds "
                         f"Dense modules ({', '.join(heads)}) that it would leave out",
                         hint="compare this model with --engine opgen --engine sentence-transformers")
    run = session(build(model, precision), threads)
    feeds = {i.name for i in run.get_inputs()}
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_seq_length(model_dir, _config(model_dir)))
    tok.enable_padding()

    def embed(texts: list[str]) -> np.ndarray:
        enc = tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in feeds:
            feed["token_type_ids"] = np.zeros_like(ids)
        (h,) = run.run(None, feed)
        m = mask[:, :, None].astype(np.float32)
        pooled = (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    return embed
