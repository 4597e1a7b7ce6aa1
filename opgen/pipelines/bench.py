"""``opgen bench embeddings``: the native pipeline beside sentence-transformers (PyTorch)
and ONNX Runtime, on the same sentences, machine and thread count, in one run.

Throughput (sentences per second) at batch 1 and batch 32, the engines interleaved round
by round so that load from elsewhere hits all of them alike; cold start (a fresh Python
process, from its launch to its first embedding) and peak memory (that process's maximum
resident set after embedding a batch of 32), each measured in its own subprocess. The
engines' embeddings are compared too: a fast wrong answer is not a result.

ONNX Runtime runs the model exported by torch.onnx (dynamo exporter) once and cached in
.opgen-cache/onnx/, with tokenization by Hugging Face `tokenizers` and mean pooling and
normalisation in NumPy: the usual way to serve this model with ORT.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from opgen.bench import SETTLE_SECONDS
from opgen.build.cpp import cache_root
from opgen.errors import OpgenError
from opgen.pipelines.client import Client
from opgen.pipelines.models import resolve

ENGINES = ("opgen", "sentence-transformers", "onnxruntime")
BATCH_SIZES = (1, 32)

# A varied, fixed set: short and long, punctuation, accents, numbers, non-Latin scripts.
SENTENCES = [
    "The capital of France is Paris.",
    "What is the capital of France?",
    "Berlin is the capital and largest city of Germany by both area and population.",
    "A man is eating food.",
    "A man is riding a white horse on an enclosed ground.",
    "Machine learning models need careful evaluation before deployment!",
    "Café, naïve, façade, résumé: accents are stripped by the uncased tokenizer.",
    "東京は日本の首都です。",
    "Москва — столица России.",
    "¿Dónde está la biblioteca? Está cerca de la estación.",
    "The quick brown fox jumps over the lazy dog; the dog does not react.",
    "In 2024, the company reported revenue of $3.2 billion, up 12% year over year.",
    "def add(a, b): return a + b  # a tiny Python function",
    "Rain is expected tomorrow afternoon in most parts of the country, with heavy showers "
    "in the north and strong winds along the coast; temperatures will stay below average "
    "for the rest of the week before a warmer spell arrives on Sunday.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "She sells sea shells by the sea shore.",
]


def sentences(n: int = 64) -> list[str]:
    """n sentences cycling through SENTENCES with a numbered suffix (distinct texts)."""
    return [f"{SENTENCES[i % len(SENTENCES)]} ({i})" for i in range(n)]


@dataclass
class EngineFigures:
    engine: str
    per_second: dict[int, float] = field(default_factory=dict)  # batch size -> sentences per second
    cold_start_s: float | None = None
    peak_rss_mib: float | None = None
    note: str = ""


def _threads() -> int:
    return os.cpu_count() or 1


# ---------------------------------------------------------------------- the engines, in-process

def opgen_engine(model: str, root: Path | None) -> Callable[[list[str]], np.ndarray]:

    client = Client(root=root)
    info = client._model(model)
    pipeline = client._pipeline(info)
    return lambda texts: pipeline.embed(texts)[0]


def st_engine(model: str) -> Callable[[list[str]], np.ndarray]:
    # torch takes seconds to import; only this path needs it
    import torch
    # heavy (the dev extra; loads torch and transformers); only this comparison needs it
    from sentence_transformers import SentenceTransformer


    torch.set_num_threads(_threads())
    st = SentenceTransformer(str(resolve(model).locate()), device="cpu")
    return lambda texts: st.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)


def onnx_path(model: str) -> Path:
    """The model exported to ONNX once (dynamo exporter), cached by the model files' identity."""

    model_dir = resolve(model).locate()
    weights = model_dir / "model.safetensors"
    key = f"{resolve(model).name}-{weights.stat().st_size}-{int(weights.stat().st_mtime)}"
    path = cache_root() / "onnx" / f"{key}.onnx"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # torch takes seconds to import; only this path needs it
        import torch
        # heavy (the dev extra; loads torch); only this comparison needs it
        from transformers import AutoModel

        class LastHidden(torch.nn.Module):
            def __init__(self, m: torch.nn.Module):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask):  # noqa: D102
                return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

        m = AutoModel.from_pretrained(str(model_dir)).eval()
        example = (torch.ones(2, 16, dtype=torch.int64), torch.ones(2, 16, dtype=torch.int64))
        dims = {0: "batch", 1: "sequence"}
        tmp = path.with_suffix(".tmp.onnx")
        torch.onnx.export(LastHidden(m), example, str(tmp), input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], dynamo=True,
                          dynamic_axes={"input_ids": dims, "attention_mask": dims, "last_hidden_state": dims})
        tmp.replace(path)
    return path


def ort_engine(model: str) -> Callable[[list[str]], np.ndarray]:
    # heavy (the dev extra); only the ONNX Runtime comparison needs it
    import onnxruntime as ort
    # the dev extra's tokenizers: only this reference needs it
    from tokenizers import Tokenizer


    model_dir = resolve(model).locate()
    options = ort.SessionOptions()
    options.intra_op_num_threads = _threads()
    session = ort.InferenceSession(str(onnx_path(model)), options, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(256)
    tok.enable_padding()

    def embed(texts: list[str]) -> np.ndarray:
        enc = tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        (h,) = session.run(None, {"input_ids": ids, "attention_mask": mask})
        m = mask[:, :, None].astype(np.float32)
        pooled = (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    return embed


def make_engine(name: str, model: str, root: Path | None) -> Callable[[list[str]], np.ndarray]:
    if name == "opgen":
        return opgen_engine(model, root)
    if name == "sentence-transformers":
        return st_engine(model)
    if name == "onnxruntime":
        return ort_engine(model)
    raise OpgenError(f"unknown engine {name!r}", hint=f"choose from {', '.join(ENGINES)}")


# ---------------------------------------------------------------------- measurements

def throughput(engines: dict[str, Callable[[list[str]], np.ndarray]], texts: list[str], batch: int,
               rounds: int) -> dict[str, float]:
    """Sentences per second for each engine, median over interleaved rounds of the whole set."""
    times: dict[str, list[float]] = {name: [] for name in engines}
    batches = [texts[i:i + batch] for i in range(0, len(texts), batch)]
    for name, embed in engines.items():
        embed(batches[0])  # warm-up: first-call allocations, lazy initialisation
    for _ in range(rounds):
        for name, embed in engines.items():
            start = time.perf_counter()
            for b in batches:
                embed(b)
            times[name].append(time.perf_counter() - start)
            time.sleep(SETTLE_SECONDS)  # idle worker threads of the engine just run stop spinning
    return {name: len(texts) / statistics.median(t) for name, t in times.items()}


# Peak memory is VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork+exec, so a child
# of a large parent would report the parent's size.
_COLD_SCRIPT = """
import re, time
from opgen.pipelines.bench import make_engine, sentences
embed = make_engine({engine!r}, {model!r}, {project!r})
embed([sentences(1)[0]])
first = time.time()
embed(sentences(32))
hwm = int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1))
print(repr((first, hwm)))
"""


def cold_start(engine: str, model: str, project: Path | None) -> tuple[float, float]:
    """(seconds from process launch to the first embedding, peak RSS in MiB) in a fresh process."""
    script = _COLD_SCRIPT.format(engine=engine, model=model, project=str(project) if project else None)
    launched = time.time()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise OpgenError(f"the {engine} cold-start process failed", hint=proc.stderr.strip()[-1500:])
    first, rss_kib = eval(proc.stdout.strip().splitlines()[-1], {})  # noqa: S307 (our own child's repr of floats)
    return first - launched, rss_kib / 1024


def agreement(outputs: dict[str, np.ndarray]) -> dict[str, float]:
    """Minimum cosine similarity of each engine's embeddings to sentence-transformers'."""
    ref = outputs.get("sentence-transformers")
    if ref is None:
        return {}
    return {name: float(np.min(np.sum(v * ref, axis=1) / (np.linalg.norm(v, axis=1) * np.linalg.norm(ref, axis=1))))
            for name, v in outputs.items() if name != "sentence-transformers"}


def run(model: str = "all-minilm-l6-v2", *, engines: tuple[str, ...] = ENGINES, rounds: int = 5, n: int = 64,
        project: Path | None = None, cold: bool = True,
        progress: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    texts = sentences(n)
    progress("loading engines")
    loaded = {name: make_engine(name, model, project) for name in engines}
    outputs = {name: np.asarray(embed(texts)) for name, embed in loaded.items()}
    figures = {name: EngineFigures(name) for name in engines}
    for batch in BATCH_SIZES:
        progress(f"throughput at batch {batch}")
        for name, value in throughput(loaded, texts, batch, rounds).items():
            figures[name].per_second[batch] = value
    if cold:
        for name in engines:
            progress(f"cold start and peak memory: {name}")
            figures[name].cold_start_s, figures[name].peak_rss_mib = cold_start(name, model, project)
    return {
        "model": model,
        "sentences": n,
        "threads": _threads(),
        "rounds": rounds,
        "engines": {name: {"per_second": {str(b): v for b, v in f.per_second.items()}, "cold_start_s": f.cold_start_s,
                           "peak_rss_mib": f.peak_rss_mib} for name, f in figures.items()},
        "min_cosine_to_sentence_transformers": agreement(outputs),
    }


def save(result: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
