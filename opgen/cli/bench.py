"""``opgen bench``: verified kernels' speed beside their references; ``opgen bench embeddings``: the
native embedding pipeline against sentence-transformers and ONNX Runtime."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from opgen.cli.output import EXIT_FAILED, JsonOpt, RootOpt, emit_json, fail, json_output, out, progress
from opgen.bench import benchmark
from opgen.errors import OpgenError
from opgen.pipelines import bench as embeddings_bench  # torch, sentence-transformers, onnxruntime load only when run
from opgen.project import Project


def bench(
    ops: Optional[list[str]] = typer.Argument(None, help="Ops to benchmark (default: every op with bench cases), or `embeddings` for the native embedding pipeline against sentence-transformers and ONNX Runtime."),
    model: str = typer.Option("all-minilm-l6-v2", "--model", help="With `embeddings`: the model."),
    engine: Optional[list[str]] = typer.Option(None, "--engine", help="With `embeddings`: only these engines (opgen, opgen-int8, sentence-transformers, onnxruntime, onnxruntime-int8)."),
    sentences: int = typer.Option(64, "--sentences", min=1, help="With `embeddings`: how many of the varied sentences to embed."),
    cold_start: bool = typer.Option(True, "--cold-start/--no-cold-start", help="With `embeddings`: also measure cold start and peak memory in fresh processes."),
    target: Optional[list[str]] = typer.Option(None, "--target", help="Only these targets (cpp, rust, ...)."),
    overload: Optional[list[str]] = typer.Option(None, "--overload", help="Only these overloads (repeatable: --overload f32 --overload tensor_f32)."),
    select: bool = typer.Option(False, "--select", help="Record the figures in each entry; the registry then serves the fastest verified variant."),
    rounds: int = typer.Option(7, "--rounds", min=1, help="Interleaved kernel/reference rounds per case (the median is reported)."),
    as_json: bool = JsonOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Each verified kernel's speed beside its reference (NumPy/PyTorch) on the spec's bench shapes."""
    if ops == ["embeddings"]:
        _bench_embeddings(model, tuple(engine or ()), rounds, cold_start, sentences, as_json, root)
        return
    try:
        with json_output(as_json), progress("bench", None) as tracker:
            project = Project.locate(root)
            results = benchmark(project, ops or None, targets=target, overloads=overload, rounds=rounds, select=select,
                                progress=tracker.step)  # told as each case starts: the previous one is done
    except OpgenError as exc:
        fail(exc)
    if as_json:
        emit_json([r.as_dict() for r in results])
        raise typer.Exit(EXIT_FAILED if any(not r.agrees for r in results) else 0)
    table = Table("kernel", "case", "kernel ms", "reference", "ref ms", "ratio")
    for r in results:
        d = r.as_dict()
        kernel = _ms(r.kernel_s) + (f" ({d['kernel_gflops']:.0f} GFLOP/s)" if "kernel_gflops" in d else "")
        ref = _ms(r.reference_s) + (f" ({d['reference_gflops']:.0f} GFLOP/s)" if "reference_gflops" in d else "")
        ratio = "-" if r.ratio is None else f"[{'green' if r.ratio >= 1 else 'yellow'}]{r.ratio:.2f}x[/]"
        if not r.agrees:
            ratio = "[red]wrong[/]"
        name = f"{r.op} [{r.overload}] {r.target}" + ("" if r.variant == "plain" else f" @{r.variant}")
        table.add_row(escape(name), r.case, kernel, escape(r.reference), ref, ratio)
    out.print(table)
    for r in results:
        if not r.agrees:
            out.print(f"[red]{escape(f'{r.op} [{r.overload}] {r.target} {r.variant} {r.case}')}:[/] "
                      f"{escape(r.note or 'disagrees with the reference')}")
    out.print(f"ratio = reference time / kernel time (above 1: the kernel is faster); {os.cpu_count()} CPUs; "
              "kernel and reference interleaved, median of the rounds", highlight=False)
    if select:
        out.print("figures recorded in the entries; `opgen list` shows which variant is served", highlight=False)
    raise typer.Exit(EXIT_FAILED if any(not r.agrees for r in results) else 0)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _bench_embeddings(model: str, engines: tuple[str, ...], rounds: int, cold_start: bool, n: int, as_json: bool,
                      root: Optional[Path]) -> None:
    try:
        with json_output(as_json), progress("bench embeddings", None) as tracker:
            project = Project.locate(root)
            result = embeddings_bench.run(model, engines=engines or embeddings_bench.ENGINES, rounds=rounds, n=n,
                                          project=project.root, cold=cold_start, progress=tracker.step)
    except OpgenError as exc:
        fail(exc)
    if as_json:
        emit_json(result)
        return
    fmt = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
    table = Table("engine", "batch 1 (sentences/s)", "batch 32 (sentences/s)", "cold start (s)", "peak memory (MiB)",
                  "cosine to sentence-transformers (min / mean)")
    cos = result["cosine_to_sentence_transformers"]
    for name, f in result["engines"].items():
        c = cos.get(name)
        table.add_row(name, fmt(f["per_second"].get("1"), ".1f"), fmt(f["per_second"].get("32"), ".1f"),
                      fmt(f["cold_start_s"], ".2f"), fmt(f["peak_rss_mib"], ".0f"),
                      "reference" if name == embeddings_bench.REFERENCE else
                      "-" if c is None else f"{c['min']:.4f} / {c['mean']:.4f}")
    out.print(table)
    for name, f in result["engines"].items():
        if "stages_ms_per_sentence" in f:
            stages = Table(f"{name}: ms per sentence", *f["stages_ms_per_sentence"]["1"])
            for batch, row in f["stages_ms_per_sentence"].items():
                stages.add_row(f"batch {batch}", *(f"{v:.3f}" for v in row.values()))
            out.print(stages)
    engines_run = result["engines"]
    for mine, theirs in (("opgen", "onnxruntime"), ("opgen-int8", "onnxruntime-int8"), ("opgen-int8", "opgen"),
                         ("opgen", "sentence-transformers")):
        if mine in engines_run and theirs in engines_run:
            ratios = ", ".join(f"batch {b}: {engines_run[mine]['per_second'][b] / engines_run[theirs]['per_second'][b]:.2f}x"
                               for b in engines_run[mine]["per_second"])
            out.print(f"{mine} / {theirs}: {ratios}", highlight=False)
    for name, f in engines_run.items():
        for key in ("how", "note"):
            if key in f:
                out.print(f"{name}: {f[key]}", highlight=False)
    out.print(f"{result['sentences']} sentences, {result['threads']} threads for every engine, "
              f"median of {result['rounds']} interleaved rounds", highlight=False)
