"""Small random-weight EmbeddingGemma-like models, built with transformers and
sentence-transformers, for testing the native pipeline's architecture (the real weights
cannot be downloaded here).

A model directory is laid out exactly as EmbeddingGemma's: the Gemma3TextModel (bidirectional
attention, sliding-window and full layers) with its config.json, model.safetensors and
tokenizer.json (a BPE with byte fallback of Gemma's kind), then sentence-transformers'
modules.json, 1_Pooling (mean), 2_Dense and 3_Dense (no bias, identity) and 4_Normalize.
"""

from __future__ import annotations

import types
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from tests.test_bpe_tokenizer import _train, _with_template

HIDDEN = 64
HEAD_DIM = 16


def tiny_embeddinggemma(out: Path, *, heads: int = 4, kv_heads: int = 1, window: int = 8, layers: int = 6,
                        dense: tuple[int, int] = (3072, 768), max_seq_length: int = 256, seed: int = 0) -> Path:
    from sentence_transformers import SentenceTransformer, models
    from transformers import Gemma3TextConfig, Gemma3TextModel, PreTrainedTokenizerFast

    tok = _with_template(_train(600, range(256), ("<start_of_turn>", "<end_of_turn>")), True, True)
    hf = out.parent / f"{out.name}-hf"
    config = Gemma3TextConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=HIDDEN, intermediate_size=96, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv_heads, head_dim=HEAD_DIM, sliding_window=window,
        layer_types=["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(layers)],
        use_bidirectional_attention=True, max_position_embeddings=512, query_pre_attn_scalar=HEAD_DIM,
        rms_norm_eps=1e-6, pad_token_id=0, eos_token_id=1, bos_token_id=2,
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                         "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}})
    torch.manual_seed(seed)
    model = Gemma3TextModel(config).eval()
    with torch.no_grad():  # random everything, norms included (their default is all zeros: 1 + 0)
        for name, p in model.named_parameters():
            p.normal_(0.0, 0.3 if "norm" in name else 0.15)
    model.save_pretrained(hf)
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                            unk_token="<unk>").save_pretrained(hf)
    transformer = models.Transformer(str(hf), max_seq_length=max_seq_length)
    modules = [transformer, models.Pooling(HIDDEN, "mean"),
               models.Dense(HIDDEN, dense[0], bias=False, activation_function=torch.nn.Identity()),
               models.Dense(dense[0], dense[1], bias=False, activation_function=torch.nn.Identity()),
               models.Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(out))
    return out


@contextmanager
def int8_linears(module: torch.nn.Module) -> Iterator[None]:
    """While active, every nn.Linear inside `module` computes as opgen's `:int8` pipelines do, by
    the int8 ops' own references (opgen.quant_references): weight rows and input rows quantized
    with their own max |.| / 127 scales, the int8 product exact, rescaled in float32 with the bias.
    The quantized reference the `:int8` pipelines are tested against (pass the encoder only: the
    pipelines keep the Dense heads in float32)."""
    from opgen import quant_references as q

    def forward(self: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
        w = self.weight.detach().float().numpy()
        rows = x.detach().float().reshape(-1, x.shape[-1]).numpy()
        ws, xs = q.int8_row_scale(w), q.int8_row_scale(rows)
        acc = q.int8_matmul(q.quantize_int8(rows, xs), q.quantize_int8(w, ws))
        bias = self.bias.detach().float().numpy() if self.bias is not None else np.zeros(w.shape[0], np.float32)
        y = q.int8_dequantize(acc, xs, ws, bias)
        return torch.from_numpy(y).reshape(*x.shape[:-1], w.shape[0]).to(x.dtype)

    linears = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    for m in linears:
        m.forward = types.MethodType(forward, m)
    try:
        yield
    finally:
        for m in linears:
            del m.forward  # back to the class's own
