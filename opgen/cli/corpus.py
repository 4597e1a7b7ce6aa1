"""``opgen corpus``: the adversarial corpus and the shipped kernels through the gate."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from opgen.cli.output import EXIT_FAILED, JsonOpt, RootOpt, emit_json, fail, json_output, plain, progress
from opgen.errors import OpgenError
from opgen.gate.corpus import render_tally, run_corpus
from opgen.project import Project


def corpus(
    names: Optional[list[str]] = typer.Argument(None, help="Only these corpus entries (default: all)."),
    honest: bool = typer.Option(True, "--honest/--no-honest", help="Also gate every shipped registry kernel (false rejections)."),
    as_json: bool = JsonOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Reliability figures: every known-bad kernel in verification/corpus/ must be rejected for its
    stated reason, every shipped kernel admitted. Exit 1 on a hole, a wrong reason or a false rejection."""
    try:
        with json_output(as_json), progress("corpus", None) as tracker:
            project = Project.locate(root)
            tracker.note("building the kernels")

            def finished(label: str, result: str, seconds: float, done: int, total: int) -> None:
                tracker.set_total(total)
                tracker.done(label, result, seconds)

            report = run_corpus(project, names=names or None, honest=honest, progress=finished)
    except OpgenError as exc:
        fail(exc)
    if as_json:
        emit_json(report.as_dict())
        raise typer.Exit(0 if report.ok else EXIT_FAILED)
    width = max((len(r.entry.name) for r in report.entries), default=10)
    plain(f"{'outcome':9} {'entry':{width}} {'expected':26} got")
    for r in report.entries:
        got = "admitted" if r.got.stage == "pass" else f"{r.got.stage}/{'+'.join(r.got.kinds)}"
        expected = r.entry.expect.stages + (f"/{r.entry.expect.kind}" if r.entry.expect.kind else "")
        plain(f"{'pending' if r.pending else r.outcome:9} {r.entry.name:{width}} {expected:26} {got}")
    for r in report.entries:
        if r.outcome != "expected":
            plain(f"\n{r.entry.name} ({r.entry.op} {r.entry.overload}, {r.entry.cheat}"
                  + (", pending the sandbox layer" if r.pending else "") + f"):\n  expected {r.entry.expect.describe()}"
                  f"\n  got      {r.got.summary()}" + (f"\n  note     {r.entry.note}" if r.entry.note else ""))
    if report.honest:
        plain("")
        for h in report.honest:
            plain(f"{'admitted' if h.ok else 'REJECTED':9} {h.op} {h.overload} ({h.target}): "
                  + (f"{h.examples} examples" if h.ok else h.got.summary()))
    plain("")
    plain(render_tally(report.tally()))
    raise typer.Exit(0 if report.ok else EXIT_FAILED)
