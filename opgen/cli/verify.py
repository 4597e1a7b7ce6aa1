"""``opgen verify`` (re-verify entries, or gate a hand-written file) and ``opgen lint`` (specs a
constant kernel could pass): thin commands over ``opgen.service``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from opgen.cli.output import EXIT_FAILED, JsonOpt, RootOpt, console, emit_json, fail, json_output, out, plain, progress
from opgen.errors import OpgenError
from opgen.project import Project
from opgen.service import gate_settings, lint_ops, reverify, select_rows, verify_source
from opgen.spec.model import load_all


def verify(
    ops: Optional[list[str]] = typer.Argument(None, help="Ops to re-verify."),
    all_: bool = typer.Option(False, "--all", help="Re-verify every registry entry."),
    source: Optional[Path] = typer.Option(None, "--source", help="A hand-written candidate to put through the admission gate."),
    op: Optional[str] = typer.Option(None, "--op", help="With --source: the op it implements."),
    overload: Optional[list[str]] = typer.Option(None, "--overload", help="Only these overloads (repeatable); with --source: the one overload to gate (default: the ones the file defines)."),
    target: Optional[list[str]] = typer.Option(None, "--target", help="Only entries of these targets (cpp, rust, cuda, metal; default: all)."),
    examples: Optional[int] = typer.Option(None, "--examples", help="Hypothesis examples per verification run."),
    as_json: bool = JsonOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Re-verify registry entries on fresh seeds, or gate a hand-written source file."""
    try:
        with json_output(as_json):
            project = Project.locate(root)
            if source is not None:
                if overload and len(overload) > 1:
                    raise OpgenError("--source gates one overload at a time",
                                     hint="pass --overload once, or leave it out to gate the ones the file defines")
                gated = _gate_source(project, source, op, overload[0] if overload else None, examples)
            else:
                specs = load_all(project.specs)
                rows = select_rows(project, specs, ops, all_, target, overload)
                with progress("verify", len([r for r in rows if r.status != "n/a"])) as tracker:
                    tracker.note(f"building {sum(r.entry is not None and r.status not in ('n/a', 'stale') for r in rows)} entries")
                    results = reverify(project, rows, gate_settings(examples), specs=specs,
                                       on_result=lambda r: tracker.done(
                                           f"{r.row.op} {r.row.overload} ({r.row.target}, {r.row.variant})",
                                           "pass" if r.ok else r.stage))
    except OpgenError as exc:
        fail(exc)
    if source is not None:
        for name, g in gated:
            colour = "green" if g.ok else "red"
            console.print(f"[{colour}]{'admissible' if g.ok else 'rejected'}[/] {op} {name} ({g.stage})", highlight=False)
            if not g.ok:
                console.print(g.feedback, highlight=False, markup=False)
        if as_json:
            emit_json([{"op": op, "overload": name, "ok": g.ok, "stage": g.stage, "message": g.feedback,
                        "evidence": g.evidence} for name, g in gated])
        raise typer.Exit(0 if all(g.ok for _, g in gated) else EXIT_FAILED)
    if as_json:
        emit_json({"results": [r.as_dict() for r in results],
                   "passed": sum(r.ok for r in results), "failed": sum(not r.ok for r in results)})
    else:
        table = Table("op", "overload", "target", "result", "examples", "detail")
        for r in results:
            table.add_row(r.row.op, r.row.overload, r.row.target, "[green]pass[/]" if r.ok else f"[red]{r.stage}[/]",
                          str(r.evidence.get("examples", "")), "" if r.ok else escape(r.message.splitlines()[0][:100]))
        out.print(table)
        # The table keeps a line of each failure; the whole message (the counterexample, the stage's
        # reason) follows, so a CI log holds what a rerun would otherwise be needed for.
        for r in results:
            if not r.ok:
                out.print(f"\n{r.row.op} {r.row.overload} ({r.row.target}, {r.row.variant}): {r.stage}",
                          highlight=False, markup=False)
                out.print(r.message, highlight=False, markup=False)
    raise typer.Exit(0 if results and all(r.ok for r in results) else EXIT_FAILED)


def _gate_source(project: Project, source: Path, op: str | None, overload: str | None, examples: int | None) -> list:
    if not op:
        raise OpgenError("--source needs --op", hint="e.g. opgen verify --source my_matmul.cpp --op operator.matmul")
    if not source.exists():
        raise OpgenError(f"{source} does not exist")
    with progress("verify", None) as tracker:
        tracker.note(f"gating {source.name} as {op}")
        gated = verify_source(project, op, overload, source, gate_settings(examples))
        for name, g in gated:
            tracker.done(f"{op} {name} ({source.name})", "admissible" if g.ok else f"rejected ({g.stage})")
    return gated


def lint(
    ops: Optional[list[str]] = typer.Argument(None, help="Ops to lint (default: every spec)."),
    as_json: bool = JsonOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Reject specs a constant or all-zero kernel could pass: a reference that ignores its
    inputs, or default inputs whose reference magnitudes sit under the tolerance."""
    try:
        with json_output(as_json):
            results = lint_ops(Project.locate(root), ops)
    except OpgenError as exc:
        fail(exc)
    findings = [f for r in results for f in r.findings]
    if as_json:
        emit_json({"results": [r.as_dict() for r in results], "findings": len(findings)})
    else:
        for r in results:
            if r.ok:
                zeros = "" if r.zero_passes is None else f", an all-zero result passes {r.zero_passes} of {r.informative}"
                plain(f"ok   {r.op} [{r.overload}]: result changes with the inputs in {r.changed} of "
                      f"{r.compared} non-empty examples{zeros}")
            for f in r.findings:
                plain(f"FAIL {f.render()}")
        plain(f"{len(results)} overloads linted, {len(findings)} finding(s)")
    raise typer.Exit(EXIT_FAILED if findings else 0)
