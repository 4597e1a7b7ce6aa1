"""``opgen pipeline MODEL -o DIR``: a model's native pipeline as files another host can load.

The directory gets the linked library, a manifest (model, architecture, output size,
Matryoshka sizes, the config values the glue takes, the registry entries linked) and, for
models whose tokenizer the host hands over, the tokenizer's tables. The Node.js client
(clients/node) serves ``client.embeddings.create`` from such a directory with no Python.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from opgen.project import Project
from opgen.pipelines.library import build_pipeline
from opgen.pipelines.models import ModelInfo, resolve

MANIFEST = "pipeline.json"


def export(project: Project, model: str, out_dir: Path, *, model_dir: Path | None = None, target: str = "cpu-cpp",
           max_batch: int = 32) -> Path:
    """Write DIR/<model>/ and return its manifest path."""
    info: ModelInfo = resolve(model)
    model_dir = Path(model_dir) if model_dir else info.locate()
    library = build_pipeline(project, info, target)
    tokenizer = info.tokenizer(model_dir) if info.tokenizer else None
    dest = Path(out_dir) / info.name
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(library.path, dest / "lib.so")
    manifest = {
        **library.manifest,
        "library": "lib.so",
        "aliases": list(info.aliases),
        "model_dir": str(Path(model_dir).resolve()),
        "config": info.config(model_dir, max_batch, tokenizer),
        "dimensions": list(info.dimensions),
        "tokenizer": None,
    }
    if tokenizer is not None:
        (dest / "tokenizer_tables.json").write_text(json.dumps(
            {"vocab": tokenizer.vocab, "merges": tokenizer.merges, "added": tokenizer.added}, ensure_ascii=False))
        manifest["tokenizer"] = "tokenizer_tables.json"
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return dest / MANIFEST
