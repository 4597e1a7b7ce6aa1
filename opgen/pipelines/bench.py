"""``opgen bench embeddings``: the native pipeline beside sentence-transformers (PyTorch)
and ONNX Runtime in float32 and int8, on the same sentences, machine and thread count, in one run.

Throughput (sentences per second) at batch 1 and batch 32, the engines interleaved round
by round so that load from elsewhere hits all of them alike; cold start (a fresh Python
process, from its launch to its first embedding) and peak memory (that process's maximum
resident set after embedding a batch of 32), each measured in its own subprocess. The
engines' embeddings are compared with sentence-transformers' (the reference): a fast wrong
answer is not a result. For opgen, the time per sentence in each stage (tokenize, encoder,
pooling, and what the host adds around them) at each batch size.

ONNX Runtime runs the model as its users do (opgen.pipelines.onnx_baseline: the standard
export, fused by ONNX Runtime's transformer optimizer, and its dynamic int8 quantization),
with tokenization by Hugging Face `tokenizers` and mean pooling and normalisation in NumPy.
A batch is padded to its longest sentence there, as sentence-transformers pads it; opgen
packs a batch's sentences without padding.
"""

from __future__ import annotations

import json
import os
import shutil
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
from opgen.pipelines import onnx_baseline
from opgen.pipelines.client import Client
from opgen.pipelines.models import resolve

ENGINES = ("opgen", "opgen-int8", "sentence-transformers", "onnxruntime", "onnxruntime-int8")
REFERENCE = "sentence-transformers"
STAGES = ("tokenize", "encoder", "pooling")
# A cold-start-only row: the Node client over the exported pipeline (no Python in the process).
NODE_HOST = "opgen (Node host)"
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
    # batch size -> stage -> milliseconds per sentence (opgen only: its glue times its stages)
    stages_ms: dict[int, dict[str, float]] = field(default_factory=dict)
    note: str = ""


def _threads() -> int:
    return os.cpu_count() or 1


# ---------------------------------------------------------------------- the engines, in-process

class OpgenEngine:
    """texts -> embeddings through the native pipeline; ``stage_seconds`` reads its glue's clocks."""

    def __init__(self, model: str, root: Path | None):
        client = Client(root=root)
        self.pipeline = client._pipeline(client._model(model))

    def __call__(self, texts: list[str]) -> np.ndarray:
        return self.pipeline.embed(texts)[0]

    def stage_seconds(self) -> tuple[float, ...] | None:
        return self.pipeline.stage_seconds()


def st_engine(model: str) -> Callable[[list[str]], np.ndarray]:
    # torch takes seconds to import; only this path needs it
    import torch
    # heavy (the dev extra; loads torch and transformers); only this comparison needs it
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(_threads())
    st = SentenceTransformer(str(resolve(model).locate()), device="cpu")
    return lambda texts: st.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)


def make_engine(name: str, model: str, root: Path | None) -> Callable[[list[str]], np.ndarray]:
    if name == "opgen":
        return OpgenEngine(model, root)
    if name == "opgen-int8":  # the model's `:int8` pipeline (opgen.pipelines.models)
        return OpgenEngine(f"{resolve(model).name}:int8", root)
    if name == REFERENCE:
        return st_engine(model)
    if name == "onnxruntime":
        return onnx_baseline.embedder(model, "float32", _threads())
    if name == "onnxruntime-int8":
        return onnx_baseline.embedder(model, "int8", _threads())
    raise OpgenError(f"unknown engine {name!r}", hint=f"choose from {', '.join(ENGINES)}")


# ---------------------------------------------------------------------- measurements

def _batches(texts: list[str], batch: int) -> list[list[str]]:
    return [texts[i:i + batch] for i in range(0, len(texts), batch)]


def throughput(engines: dict[str, Callable[[list[str]], np.ndarray]], texts: list[str], batch: int,
               rounds: int) -> dict[str, float]:
    """Sentences per second for each engine, median over interleaved rounds of the whole set."""
    times: dict[str, list[float]] = {name: [] for name in engines}
    batches = _batches(texts, batch)
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


def stage_breakdown(engine: OpgenEngine, texts: list[str], batch: int, rounds: int) -> dict[str, float] | None:
    """Milliseconds per sentence in each of opgen's stages, and ``host`` for the rest of a call
    (ctypes, packing the batch, copying out), medians over `rounds` passes; None for a pipeline
    library that keeps no clocks."""
    if engine.stage_seconds() is None:
        return None
    passes: list[dict[str, float]] = []
    for _ in range(rounds):
        before, start = engine.stage_seconds(), time.perf_counter()
        for b in _batches(texts, batch):
            engine(b)
        wall, after = time.perf_counter() - start, engine.stage_seconds()
        spent = {stage: a - b for stage, a, b in zip(STAGES, after, before)}
        spent["host"] = max(wall - sum(spent.values()), 0.0)
        passes.append({k: v * 1e3 / len(texts) for k, v in spent.items()})
    return {k: statistics.median(p[k] for p in passes) for k in passes[0]}


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
    """(seconds from process launch to the first embedding, peak RSS in MiB) in a fresh process.
    Whatever the engine builds once (the pipeline library, the ONNX export) is built before, in
    this process: a cold start is a user's second launch, not the first build."""
    script = _COLD_SCRIPT.format(engine=engine, model=model, project=str(project) if project else None)
    launched = time.time()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise OpgenError(f"the {engine} cold-start process failed", hint=proc.stderr.strip()[-1500:])
    first, rss_kib = eval(proc.stdout.strip().splitlines()[-1], {})  # noqa: S307 (our own child's repr of floats)
    return first - launched, rss_kib / 1024


# The Node client (clients/node) over an exported pipeline: the native host, no Python at all.
_NODE_COLD_SCRIPT = """
const {{ Client }} = require({client!r});
const fs = require('node:fs');
const client = new Client({{ pipelines: {pipelines!r} }});
client.embeddings.create({{ model: {model!r}, input: {first!r} }}).then(async () => {{
  const first = Date.now() / 1000;
  await client.embeddings.create({{ model: {model!r}, input: {batch} }});
  const hwm = Number(/VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
  console.log(JSON.stringify([first, hwm]));
}});
"""


def node_cold_start(model: str, project: Path) -> tuple[float, float]:
    """(seconds from launching `node` to its first embedding, peak RSS in MiB) for the Node client
    over the model's exported pipeline (exported first, outside the measurement)."""
    # the export needs the project's registry; imported here so the in-process engines do not
    from opgen.pipelines.export import export
    from opgen.project import Project

    client = project / "clients" / "node"
    node = shutil.which("node")
    if node is None or not (client / "node_modules" / "koffi").is_dir():
        raise OpgenError("the Node host's cold start needs node and the Node client's dependency",
                         hint="install Node.js 18 or newer, then `npm ci` in clients/node "
                              "(or leave out --engine opgen-node)")
    pipelines = cache_root() / "bench-pipelines"
    export(Project(project), model, pipelines)
    script = _NODE_COLD_SCRIPT.format(client=str(client), pipelines=str(pipelines), model=resolve(model).name,
                                      first=sentences(1)[0], batch=json.dumps(sentences(32)))
    launched = time.time()
    proc = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise OpgenError("the Node host's cold-start process failed", hint=proc.stderr.strip()[-1500:])
    first, rss_kib = json.loads(proc.stdout.strip().splitlines()[-1])
    return first - launched, rss_kib / 1024


def agreement(outputs: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Each engine's cosine similarity to sentence-transformers' embeddings: min and mean over the sentences."""
    ref = outputs.get(REFERENCE)
    if ref is None:
        return {}
    result = {}
    for name, v in outputs.items():
        if name == REFERENCE:
            continue
        cos = np.sum(v * ref, axis=1) / (np.linalg.norm(v, axis=1) * np.linalg.norm(ref, axis=1))
        result[name] = {"min": float(np.min(cos)), "mean": float(np.mean(cos))}
    return result


def run(model: str = "all-minilm-l6-v2", *, engines: tuple[str, ...] = ENGINES, rounds: int = 5, n: int = 64,
        project: Path | None = None, cold: bool = True,
        progress: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        raise OpgenError(f"unknown engine {unknown[0]!r}", hint=f"choose from {', '.join(ENGINES)}")
    texts = sentences(n)
    loaded = {}
    for name in engines:
        progress(f"loading {name}")
        loaded[name] = make_engine(name, model, project)
    outputs = {name: np.asarray(embed(texts)) for name, embed in loaded.items()}
    figures = {name: EngineFigures(name) for name in engines}
    for batch in BATCH_SIZES:
        progress(f"throughput at batch {batch}")
        for name, value in throughput(loaded, texts, batch, rounds).items():
            figures[name].per_second[batch] = value
        for name, embed in loaded.items():
            if isinstance(embed, OpgenEngine) and (stages := stage_breakdown(embed, texts, batch, rounds)):
                figures[name].stages_ms[batch] = stages
    if cold:
        for name in engines:
            progress(f"cold start and peak memory: {name}")
            figures[name].cold_start_s, figures[name].peak_rss_mib = cold_start(name, model, project)
        if "opgen" in engines and project is not None:
            progress("cold start and peak memory: opgen's Node host")
            node = figures[NODE_HOST] = EngineFigures(NODE_HOST)
            try:
                node.cold_start_s, node.peak_rss_mib = node_cold_start(model, project)
            except OpgenError as exc:  # a missing Node.js costs this row, not the run
                node.note = f"not measured: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
    baselines = {name: onnx_baseline.build(model, precision).describe()
                 for name, precision in (("onnxruntime", "float32"), ("onnxruntime-int8", "int8")) if name in engines}
    return {
        "model": model,
        "sentences": n,
        "threads": _threads(),
        "rounds": rounds,
        "engines": {name: {"per_second": {str(b): v for b, v in f.per_second.items()}, "cold_start_s": f.cold_start_s,
                           "peak_rss_mib": f.peak_rss_mib,
                           **({"stages_ms_per_sentence": {str(b): v for b, v in f.stages_ms.items()}}
                              if f.stages_ms else {}),
                           **({"how": baselines[name]} if name in baselines else {}),
                           **({"note": f.note} if f.note else {})}
                    for name, f in figures.items()},
        "cosine_to_sentence_transformers": agreement(outputs),
    }


def save(result: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
