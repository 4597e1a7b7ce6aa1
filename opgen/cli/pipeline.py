"""``opgen pipeline MODEL -o DIR``: link a model's native embedding pipeline from registry kernels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from opgen.cli.output import RootOpt, fail, out, plain
from opgen.errors import OpgenError
from opgen.pipelines.export import export
from opgen.project import Project


def pipeline_export(
    model: str = typer.Argument(..., help="Model name, e.g. all-minilm-l6-v2 or embeddinggemma-300m."),
    out_dir: Path = typer.Option(..., "-o", "--out", help="Directory to write <model>/ into."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir", help="The model's files (default: where opgen finds them)."),
    target: str = typer.Option("cpu-cpp", "--target", help="Registry target whose kernels are linked."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Link a model's native embedding pipeline from registry kernels, for hosts without Python (Node.js)."""
    try:
        manifest = export(Project.locate(root), model, out_dir, model_dir=model_dir, target=target)
    except OpgenError as exc:
        fail(exc)
    data = json.loads(manifest.read_text())
    out.print(f"wrote {escape(str(manifest.parent))}: {data['model']} ({data['architecture']}), "
              f"{len(data['kernels'])} registry kernels linked", highlight=False)
    for k in data["kernels"]:
        plain(f"  {k['role']:<14} {k['op']} [{k['overload']}] {k['target']} {k['variant']} "
              f"(kernel sha256 {k['kernel_sha256'][:12]}, provider {k['provider']})")
