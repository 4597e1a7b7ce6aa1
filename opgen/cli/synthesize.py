"""``opgen synthesize OP``: ask an LLM for a kernel, gate it, admit it (``opgen.service``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from opgen.cli.output import EXIT_FAILED, RootOpt, console, fail, progress
from opgen.errors import OpgenError
from opgen.llm.providers import TokenBudget, choose_provider, parse_budget, parse_timeout
from opgen.llm.recordings import Recordings
from opgen.project import Project
from opgen.service import gate_settings, plan_synthesis, synthesize_plan
from opgen.spec.model import TARGET_IDS, TARGETS


def synthesize(
    op: str = typer.Argument(..., help="Op name as the compiler sees it, e.g. operator.matmul."),
    target: str = typer.Option("cpp", "--target", help=f"One of {', '.join(TARGETS)}."),
    overload: Optional[list[str]] = typer.Option(None, "--overload", help="Only these overloads (default: all)."),
    variant: str = typer.Option("plain", "--variant", help="Which implementation: plain, or one the spec declares under variants:."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name (default: $OPGEN_MODEL)."),
    max_attempts: int = typer.Option(3, "--max-attempts", min=1, help="Attempts per overload, repairs included."),
    provider: Optional[str] = typer.Option(None, "--provider", help="auto (default), openai, file or replay."),
    mode: Optional[str] = typer.Option(None, "--mode", help="instructor mode: tools (default), json, md_json, json_schema."),
    exchange_dir: Optional[Path] = typer.Option(None, "--exchange-dir", help="Where --provider file writes prompts and reads answers (default: exchange/)."),
    answered_by: Optional[str] = typer.Option(None, "--answered-by", help="Who answers a file exchange (recorded in provenance)."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="Completion token limit per request."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds to wait for one HTTP response (default: $OPGEN_HTTP_TIMEOUT or 300)."),
    token_budget: Optional[int] = typer.Option(None, "--token-budget", help="Stop before any further request once this many tokens (prompt + completion, as the server reports them) are spent (default: $OPGEN_TOKEN_BUDGET, else no limit)."),
    examples: Optional[int] = typer.Option(None, "--examples", help="Hypothesis examples per verification run."),
    force: bool = typer.Option(False, "--force", help="Synthesize and admit again even where the registry's entry is current."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Ask an LLM for a kernel, build it, verify it, and admit it to the registry."""
    try:
        project = Project.locate(root)
        plan = plan_synthesis(project, op, target, overload, variant, force=force)
        for o, why in plan.skipped:
            console.print(f"  {op} [{o.name}]: n/a for {target}: {escape(why)}", highlight=False)
        for o, entry in plan.current:
            console.print(f"up to date: {op} {o.name if variant == 'plain' else o.name + '@' + variant} "
                          f"({TARGET_IDS[target]}) is {entry.data.get('status', 'verified')} under gate version "
                          f"{entry.data['evidence']['gate_version']} for this spec; nothing changed (--force "
                          f"synthesizes it again; opgen verify {op} re-verifies it)", highlight=False)
        if not plan.overloads:
            raise typer.Exit(0)
        budget = TokenBudget(parse_budget(token_budget if token_budget is not None else os.environ.get("OPGEN_TOKEN_BUDGET")))
        llm = choose_provider(provider, model=model, recordings=Recordings(project.recordings),
                              exchange_dir=exchange_dir or project.root / "exchange", mode=mode,
                              answered_by=answered_by, max_tokens=max_tokens,
                              timeout=parse_timeout(timeout) if timeout is not None else None, budget=budget)
        shown = lambda o: o.name if variant == "plain" else f"{o.name}@{variant}"  # noqa: E731
        with progress("synthesize", len(plan.overloads)) as tracker:
            def starting(o) -> None:
                console.rule(escape(f"{op} [{shown(o)}] -> {TARGET_IDS[target]}"))
                tracker.describe(f"{op} {o.name}")

            def report(o, msg: str) -> None:
                tracker.describe(f"{op} {o.name}: {msg}")
                console.print(f"  {escape(msg)}", highlight=False)

            def finished(o, result, seconds: float) -> None:
                _print_outcome(op, shown(o), o.name, target, result)
                tracker.done(f"{op} {shown(o)} ({TARGET_IDS[target]})",
                             "admitted" if result.admitted else "not admitted", seconds)

            results = synthesize_plan(project, plan, llm, max_attempts=max_attempts, settings=gate_settings(examples),
                                      starting=starting, report=report, finished=finished)
        if budget.used or budget.limit is not None:
            console.print(f"tokens: {escape(budget.report())}", highlight=False)
        raise typer.Exit(EXIT_FAILED if any(not r.admitted for r in results) else 0)
    except OpgenError as exc:
        fail(exc)


def _print_outcome(op: str, shown: str, name: str, target: str, result) -> None:
    if result.admitted:
        ev = result.entry.data["evidence"]
        console.print(f"[green]admitted[/] {op} {shown} ({TARGET_IDS[target]}) after {len(result.attempts)} "
                      f"attempt(s): {ev['examples']} examples, worst error {ev.get('worst_tolerance_used', 0):.2f} of the tolerance; "
                      f"entry {escape(str(result.entry.path))}", highlight=False)
        return
    console.print(f"[red]not admitted[/] {op} {name}: {escape(result.error or '')}", highlight=False)
    for a in result.attempts:
        console.print(f"  attempt {a.number}: {a.stage}: {escape(a.feedback.splitlines()[0][:200])}", highlight=False)
    console.print(f"  transcript: {escape(str(result.transcript_path))}", highlight=False)
