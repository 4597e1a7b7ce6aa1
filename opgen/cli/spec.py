"""``opgen spec new`` (draft a spec from its reference) and ``opgen spec check`` (would the spec reject a correct
kernel?): thin commands over ``opgen.spec.draft`` and ``opgen.spec.check``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from opgen.cli.output import EXIT_FAILED, JsonOpt, RootOpt, console, emit_json, fail, json_output, plain, progress
from opgen.errors import OpgenError
from opgen.project import Project
from opgen.spec.check import OverloadCheck, SpecCheckReport, check_spec
from opgen.spec.draft import Draft, check_target, draft_spec, spec_path
from opgen.spec.model import Spec, load_all, load_spec
from opgen.spec.names import find_spec

spec_app = typer.Typer(no_args_is_help=True, help="Draft a spec from its reference, and check a spec before any LLM call.")


@spec_app.command("new")
def new(
    name: str = typer.Argument(..., help="The reference's dotted import path: a NumPy ufunc (numpy.tanh) or a PyTorch op "
                                         "(torch.nn.functional.silu)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the draft here (default: "
                                          "specs/<op with dots as directories>.yaml)."),
    stdout: bool = typer.Option(False, "--stdout", help="Print the draft on stdout instead of writing it."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
    check: bool = typer.Option(True, "--check/--no-check", help="Lint and spec-check the draft once written."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Draft a spec from its reference for a person to review: overloads from the NumPy ufunc's loops or the torch
    signature, domains from the reference's edges, the errors it raises, tolerances measured against a wider
    evaluation, bench shapes. Every guess is printed and marked '# guessed:' in the YAML."""
    try:
        project = Project.locate(root)
        path = None if stdout else (output or spec_path(project.specs, name))
        if path is not None:
            check_target(project.specs, name, path, force)
        console.print(f"drafting {name} from its reference ...", highlight=False)
        d = draft_spec(name)
        _say(d)
        if path is None:
            plain(d.text.rstrip("\n"))
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(d.text, encoding="utf-8")
        console.print(f"wrote {path}: review every '# guessed:' line", highlight=False)
        if check:
            report = check_spec(load_spec(path))
            _print_report(report, console_only=True)
            if not report.ok:
                console.print(f"the draft has spec problems: fix them in {path}, then run `opgen spec check {name}`",
                              highlight=False)
                raise typer.Exit(EXIT_FAILED)
    except OpgenError as exc:
        fail(exc)


def _say(d: Draft) -> None:
    for line in d.guessed:
        console.print(f"guessed: {line}", highlight=False, markup=False)
    for line in d.measured:
        console.print(f"measured: {line}", highlight=False, markup=False)
    for line in d.notes:
        console.print(f"note: {line}", highlight=False, markup=False)


@spec_app.command("check")
def check(
    ops: Optional[list[str]] = typer.Argument(None, help="Ops to check (default: every spec)."),
    overload: Optional[str] = typer.Option(None, "--overload", help="Only this overload."),
    file: Optional[Path] = typer.Option(None, "--file", help="Check this spec file instead of one under specs/."),
    as_json: bool = JsonOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Would the spec reject a correct kernel? Before any LLM call: the lint; the tolerance against a wider
    evaluation of the reference and against one-ulp moves; the domain (undeclared errors, wrong or unexplained
    nan and infinities); and a trivially honest, reference-backed kernel through the gate's own runner. A problem
    names the field to change and the failing input. Exit 1 on any problem."""
    try:
        with json_output(as_json):
            chosen = _chosen(Project.locate(root), ops, file)
            reports = []
            with progress("spec check", len(chosen)) as tracker:
                for spec in chosen:
                    picked = [spec.overload(overload)] if overload else None
                    report = check_spec(spec, picked)
                    reports.append(report)
                    tracker.done(spec.op, "ok" if report.ok else f"{len(report.problems)} problem(s)", report.seconds)
    except OpgenError as exc:
        fail(exc)
    problems = sum(len(r.problems) for r in reports)
    if as_json:
        emit_json({"reports": [r.as_dict() for r in reports], "problems": problems})
    else:
        for r in reports:
            _print_report(r)
        plain(f"{sum(len(r.overloads) for r in reports)} overloads checked, {problems} spec problem(s)")
    raise typer.Exit(EXIT_FAILED if problems else 0)


def _chosen(project: Project, ops: list[str] | None, file: Path | None) -> list[Spec]:
    if file is not None:
        if not file.exists():
            raise OpgenError(f"{file} does not exist")
        spec = load_spec(file)
        if ops and any(name not in (spec.op, *spec.aliases) for name in ops):
            raise OpgenError(f"{file} is the spec of {spec.op}, not of {', '.join(ops)}")
        return [spec]
    specs = load_all(project.specs)
    return [find_spec(specs, name) for name in ops] if ops else [specs[n] for n in sorted(specs)]


def _print_report(report: SpecCheckReport, console_only: bool = False) -> None:
    show = (lambda text: console.print(text, highlight=False, markup=False)) if console_only else plain
    for o in report.overloads:
        if o.ok:
            show(f"ok   {report.op} [{o.overload}]: {_figures(o)}")
        for p in o.problems:
            show(f"FAIL {p.render()}")
        for n in o.notes:
            show(f"     note: {n}")


def _figures(o: OverloadCheck) -> str:
    parts = [f"{o.examples} inputs measured", f"{o.gate_examples} through the gate's runner"]
    if o.worst_tolerance_used is not None:
        parts.append(f"the reference uses {o.worst_tolerance_used:.2f} of the tolerance against a wider evaluation "
                     f"({o.route})")
    parts.append(f"{o.seconds:.1f} s")
    return ", ".join(parts)

