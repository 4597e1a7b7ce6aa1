"""``opgen synthesize OP``: ask an LLM for a kernel, gate it, admit it (``opgen.service``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from opgen.cli.output import EXIT_FAILED, JsonOpt, RootOpt, console, fail, progress
from opgen.cli.synthesize_many import synthesize_many_command
from opgen.errors import OpgenError
from opgen.llm.providers import TokenBudget, choose_provider, parse_budget, parse_timeout
from opgen.llm.recordings import Recordings
from opgen.project import Project
from opgen.service import gate_settings, plan_synthesis, synthesize_plan
from opgen.spec.model import TARGET_IDS, TARGETS


def synthesize(
    ops: Optional[list[str]] = typer.Argument(None, metavar="OP", help="Op names as the compiler sees them, e.g. operator.matmul (any alias). With --missing or --all: only these (default: every spec)."),
    target: Optional[list[str]] = typer.Option(None, "--target", help=f"One of {', '.join(TARGETS)}; repeat for several. Default: cpp for one op; with --missing/--all every target each spec lists."),
    overload: Optional[list[str]] = typer.Option(None, "--overload", help="Only these overloads (default: all)."),
    variant: str = typer.Option("plain", "--variant", help="Which implementation: plain, or one the spec declares under variants:."),
    missing: bool = typer.Option(False, "--missing", help="Every overload x target without a current entry (verified under this gate for this spec)."),
    all_: bool = typer.Option(False, "--all", help="Every overload x target, current entries included (they are synthesized again and replaced when admitted)."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Items synthesized at once; their requests share one rate limiter (a 429 pauses all of them)."),
    gate_jobs: Optional[int] = typer.Option(None, "--gate-jobs", min=1, help="Gates run at once, each in its own process (default: the smaller of --jobs and the CPU count)."),
    shard: Optional[str] = typer.Option(None, "--shard", help="I/N: only this deterministic slice of the items (the nightly job's hashing), for a CI matrix."),
    as_json: bool = JsonOpt,
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
    """Ask an LLM for a kernel, build it, verify it, and admit it to the registry.

    One op: its overloads in turn. --missing, --all, several ops or targets, --jobs, --shard or
    --json: many items at once (opgen.synthesize_many), a summary table at the end. Ctrl-C or
    SIGTERM stops the run (exit 130 or 143); every entry admitted before it is whole."""
    targets = list(target or [])
    for t in targets:
        if t not in TARGETS:
            fail(OpgenError(f"unknown target {t!r}", hint=f"choose one of {', '.join(TARGETS)}"))
    if missing and all_:
        fail(OpgenError("--missing and --all contradict each other",
                        hint="--missing: what has no current entry; --all: everything, current entries too"))
    many = missing or all_ or jobs > 1 or shard is not None or as_json or len(ops or []) > 1 or len(targets) > 1
    if not many and not ops:
        fail(OpgenError("no op named", hint="name an op (opgen synthesize operator.matmul), or pass --missing "
                                            "(everything without a current entry) or --all"))
    if many:
        raise typer.Exit(synthesize_many_command(
            ops=ops or None, targets=targets or None, overloads=overload, variant=variant, everything=all_ or force,
            jobs=jobs, gate_jobs=gate_jobs, shard=shard, as_json=as_json, model=model, max_attempts=max_attempts,
            provider=provider, mode=mode, exchange_dir=exchange_dir, answered_by=answered_by, max_tokens=max_tokens,
            timeout=timeout, token_budget=token_budget, examples=examples, root=root))
    op = ops[0]
    target = targets[0] if targets else "cpp"
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
