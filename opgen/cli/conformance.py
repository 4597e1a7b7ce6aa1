"""``opgen conformance onnx``: the ONNX backend node cases through the served kernels, per op a
pass / wrong / error / inexpressible tally. A thin command over ``opgen.conformance.run``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from opgen.cli.output import EXIT_FAILED, JsonOpt, RootOpt, emit_json, fail, json_output, out, plain, progress
from opgen.conformance.run import DEFAULT_TIMEOUT, TOP_REASONS, OpResult, Report, run_onnx, select_mappings
from opgen.errors import OpgenError
from opgen.project import Project
from opgen.spec.model import load_all
from opgen.targets.catalog import target_for

conformance_app = typer.Typer(add_completion=False, no_args_is_help=True,
                              help="Run other projects' conformance suites through the registry's served kernels.")


@conformance_app.command("onnx")
def onnx_command(
    ops: Optional[list[str]] = typer.Argument(None, help="ONNX ops (Add, Softmax) or opgen ops and aliases "
                                              "(operator.add, numpy.matmul); default: every mapped ONNX op."),
    target: str = typer.Option("cpp", "--target", help="The registry target whose served kernels run (cpp, rust, ...)."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT, "--timeout", min=0.1, help="Seconds one kernel call may take "
                                  "before it is killed (an error)."),
    cases: bool = typer.Option(False, "--cases", help="List every case's result, not only the failures."),
    as_json: bool = JsonOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Run the ONNX backend node test cases of every ONNX op that maps to an opgen op through the
    served kernels (in a sandboxed child process), with each case's rtol/atol, and report per op:
    pass, wrong, error, inexpressible (naming the dtype, attribute, input, output or op lacking).
    Exit 1 if any case is wrong or an error."""
    try:
        with json_output(as_json):
            project = Project.locate(root)
            target_for(target)  # an unknown target name fails here, before any work
            specs = load_all(project.specs)
            total = len(select_mappings(specs, ops))
            with progress("conformance onnx", total) as tracker:
                tracker.note("collecting the ONNX node cases, building the served kernels")
                report = run_onnx(project, ops, target=target, timeout=timeout, specs=specs,
                                  progress=lambda op: tracker.done(f"{op.onnx_op} ({op.opgen_op})", op.summary(),
                                                                   seconds=op.seconds))
    except OpgenError as exc:
        fail(exc)
    if as_json:
        emit_json(report.as_dict())
    else:
        _print(report, cases)
    raise typer.Exit(0 if report.ok else EXIT_FAILED)


def _reasons(op: OpResult) -> str:
    lines = []
    for r in op.reasons(TOP_REASONS):
        subjects = r["subjects"]
        shown = ", ".join(subjects[:3]) + (f", +{len(subjects) - 3}" if len(subjects) > 3 else "")
        lines.append(f"{r['count']}x {shown}: {r['why']}")
    rest = sum(r["count"] for r in op.reasons()[TOP_REASONS:])
    if rest:
        lines.append(f"(+{rest} for other reasons)")
    return "\n".join(lines)


def _print(report: Report, every_case: bool) -> None:
    table = Table("ONNX op", "opgen op", "cases", "pass", "wrong", "error", "inexpr.", "partly", "why inexpressible",
                  title=f"ONNX {report.onnx} backend node cases through the served {report.target} kernels",
                  show_lines=True)
    for op in report.ops:
        wrong, error = op.count("wrong"), op.count("error")
        table.add_row(op.onnx_op, op.opgen_op, str(len(op.results)), str(op.count("pass")),
                      f"[bold red]{wrong}[/]" if wrong else "0", f"[bold red]{error}[/]" if error else "0",
                      str(op.count("inexpressible")), str(op.partial) if op.partial else "",
                      escape(_reasons(op)))
    t = report.totals()
    table.add_row("total", f"{t['ops']} ops", str(t["cases"]), str(t["pass"]), str(t["wrong"]), str(t["error"]),
                  str(t["inexpressible"]), str(t["partial"]), "")
    out.print(table)
    plain("partly: inexpressible only for an output the opgen op does not compute; the outputs it computes matched.")
    for op in report.ops:
        for r in op.results:
            if every_case or r.status in ("wrong", "error"):
                where = f" [{r.overload}{', ' + r.variant if r.variant and r.variant != 'plain' else ''}]" if r.overload else ""
                plain(f"{r.status.upper():13} {op.onnx_op} {r.case}{where}: {r.message or 'ok'}")
    verdict = "passed" if report.ok else "FAILED"
    plain(f"conformance onnx {verdict}: {t['pass']} pass, {t['wrong']} wrong, {t['error']} error, "
          f"{t['inexpressible']} inexpressible ({t['partial']} of them partly checked) of {t['cases']} cases, "
          f"{report.seconds:.0f} s")
