"""``opgen synthesize --missing`` / ``--all`` / ``--jobs N`` / ``--shard I/N`` / ``--json``: many items
at once (``opgen.synthesize_many``), with a line per finished item and a summary table."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any, Optional

from rich.markup import escape
from rich.table import Table

from opgen.cli.output import EXIT_AWAITING, EXIT_FAILED, EXIT_OK, console, emit_json, json_output, out, progress
from opgen.errors import OpgenError
from opgen.llm.providers import TokenBudget, choose_provider, parse_budget, parse_timeout
from opgen.llm.recordings import Recordings
from opgen.nightly.shards import WHOLE, Shard
from opgen.project import Project
from opgen.service import gate_settings, spec_sound
from opgen.synthesize_many import ItemResult, ManyPlan, ManyResult, plan_many, run_many

# 128 + the signal's number, as shells report a process a signal ended.
EXIT_SIGNALLED = {signal.SIGINT: 130, signal.SIGTERM: 143}
COLOURS = {"admitted": "green", "not admitted": "red", "error": "red", "awaiting": "yellow",
           "interrupted": "yellow", "not started": "yellow"}


def synthesize_many_command(*, ops: Optional[list[str]], targets: Optional[list[str]],
                            overloads: Optional[list[str]], variant: str, everything: bool, jobs: int,
                            gate_jobs: Optional[int], shard: Optional[str], as_json: bool, model: Optional[str],
                            max_attempts: int, provider: Optional[str], mode: Optional[str],
                            exchange_dir: Optional[Path], answered_by: Optional[str], max_tokens: Optional[int],
                            timeout: Optional[float], token_budget: Optional[int], examples: Optional[int],
                            root: Optional[Path]) -> int:
    """Plan, run and summarise; returns the exit code."""
    with json_output(as_json):
        try:
            project = Project.locate(root)
            the_shard = Shard.parse(shard) if shard is not None else WHOLE
            plan = plan_many(project, ops, targets, overloads=overloads, everything=everything, variant=variant,
                             shard=the_shard, spec_check=spec_sound)
            gates = gate_jobs or max(1, min(jobs, os.cpu_count() or 1))
            _print_plan(plan, jobs, gates)
            budget = TokenBudget(parse_budget(token_budget if token_budget is not None
                                              else os.environ.get("OPGEN_TOKEN_BUDGET")))
            # only a run that asks an endpoint needs the limiter's HTTP transport
            from opgen.llm.ratelimit import RateLimiter

            limiter = RateLimiter(jobs)
            stop = threading.Event()
            http_timeout = parse_timeout(timeout) if timeout is not None else None
            recordings = Recordings(project.recordings)

            def make_provider():
                return choose_provider(provider, model=model, recordings=recordings,
                                       exchange_dir=exchange_dir or project.root / "exchange", mode=mode,
                                       answered_by=answered_by, max_tokens=max_tokens, timeout=http_timeout,
                                       budget=budget, limiter=limiter, stop=stop)

            make_provider()  # a configuration error (no model, bad mode) is reported once, before any work
            result, signalled = _run(project, plan, make_provider, jobs, gates, max_attempts, examples, stop, limiter)
        except OpgenError as exc:
            console.print("[bold red]error:[/]", escape(exc.render()), highlight=False)
            if as_json:
                emit_json({"error": exc.render()})
            return EXIT_FAILED
        if budget.used or budget.limit is not None:
            console.print(f"tokens: {escape(budget.report())}", highlight=False)
    summary = _summary(project, plan, result, jobs, gates, budget)
    if as_json:
        emit_json(summary)
    else:
        _print_table(plan, result, summary)
    if signalled is not None:
        return EXIT_SIGNALLED[signalled]
    if plan.spec_problems or any(r.result in ("not admitted", "error", "not started") for r in result.results):
        return EXIT_FAILED
    if any(r.result == "awaiting" for r in result.results):
        return EXIT_AWAITING
    return EXIT_OK


def _run(project: Project, plan: ManyPlan, make_provider, jobs: int, gates: int, max_attempts: int,
         examples: Optional[int], stop: threading.Event, limiter) -> tuple[ManyResult, Optional[int]]:
    """run_many with Ctrl-C and SIGTERM both stopping it; says which signal did."""
    signalled: list[int] = []

    def on_signal(signum, frame):
        signalled.append(signum)
        raise KeyboardInterrupt  # the main thread is waiting in run_many, which stops the run on it

    previous = signal.signal(signal.SIGTERM, on_signal)
    previous_int = signal.signal(signal.SIGINT, on_signal)
    try:
        with progress("synthesize", len(plan.items)) as tracker:
            def on_event(kind: str, item, data: Any) -> None:
                if kind == "start":
                    tracker.describe(item.label)
                elif kind == "report":
                    console.print(f"  {escape(item.label)}: {escape(data)}", highlight=False)
                elif kind == "finish":
                    tracker.done(item.label, _said(data), data.seconds)

            result = run_many(project, plan, make_provider, jobs=jobs, gate_jobs=gates, max_attempts=max_attempts,
                              settings=gate_settings(examples), on_event=on_event, stop=stop, limiter=limiter)
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
    if result.interrupted:
        name = signal.Signals(signalled[0]).name if signalled else "a stop"
        console.print(f"[yellow]interrupted by {name}[/]: {result.count('admitted')} admitted before it (whole); "
                      f"nothing else was admitted", highlight=False)
    return result, (signalled[0] if signalled else (signal.SIGINT if result.interrupted else None))


def _said(r: ItemResult) -> str:
    if r.result == "admitted" and r.outcome is not None:
        return f"admitted after {len(r.outcome.attempts)} attempt(s)"
    if r.result == "not admitted" and r.outcome is not None:
        return f"not admitted ({', '.join(a.stage for a in r.outcome.attempts)})"
    return f"{r.result}: {r.message.splitlines()[0][:160]}" if r.message else r.result


def _print_plan(plan: ManyPlan, jobs: int, gates: int) -> None:
    shard = f", shard {plan.shard.label}" if plan.shard.count > 1 else ""
    console.print(f"synthesize: {len(plan.items)} to do, {len(plan.current)} already current, "
                  f"{len(plan.skipped)} n/a for their target, {len(plan.spec_problems)} refused (spec problems)"
                  f"{shard}; {jobs} worker(s), {gates} gate process(es)", highlight=False)
    shown: set[str] = set()
    for item, problem in plan.spec_problems:
        if item.spec.op not in shown:
            shown.add(item.spec.op)
            console.print(f"[red]spec problem[/] {escape(item.spec.op)}: {escape(problem)}", highlight=False)


def _summary(project: Project, plan: ManyPlan, result: ManyResult, jobs: int, gates: int,
             budget: TokenBudget) -> dict[str, Any]:
    """The run as data (``--json``, and what ``scripts/synthesis_shards.py`` bundles): paths are
    relative to the project root."""
    root = project.root.resolve()
    items = [r.as_dict(root) for r in result.results]
    items += [{**i.as_dict(), "result": "current", "entry": str(e.path.resolve().relative_to(root))}
              for i, e in plan.current]
    items += [{**i.as_dict(), "result": "n/a", "message": why} for i, why in plan.skipped]
    items += [{**i.as_dict(), "result": "spec problem", "message": why} for i, why in plan.spec_problems]
    totals: dict[str, int] = {}
    for i in items:
        totals[i["result"]] = totals.get(i["result"], 0) + 1
    return {"root": str(root), "shard": plan.shard.label, "jobs": jobs, "gate_jobs": gates, "interrupted": result.interrupted,
            "seconds": round(result.seconds, 3), "totals": totals, "rate_limit": result.rate_limit,
            "tokens": {"prompt": budget.prompt, "completion": budget.completion, "limit": budget.limit},
            "items": items}


def _print_table(plan: ManyPlan, result: ManyResult, summary: dict[str, Any]) -> None:
    table = Table(title="synthesis", title_justify="left", show_lines=False)
    for name in ("op", "overload", "target", "result", "attempts", "seconds", "tokens"):
        table.add_column(name, justify="right" if name in ("attempts", "seconds", "tokens") else "left")
    for r in result.results:
        d = r.as_dict()
        name = d["overload"] if d["variant"] == "plain" else f"{d['overload']}@{d['variant']}"
        table.add_row(d["op"], name, d["target"], f"[{COLOURS[r.result]}]{r.result}[/]", str(d["attempts"]),
                      f"{d['seconds']:.1f}", str(d["tokens"]["prompt"] + d["tokens"]["completion"]))
    out.print(table)
    totals = ", ".join(f"{n} {k}" for k, n in sorted(summary["totals"].items()))
    limited = summary["rate_limit"]
    pauses = (f"; the endpoint rate-limited {limited['rate_limited']} time(s), every worker paused "
              f"{limited['paused_s']:.1f} s in all" if limited.get("rate_limited") else "")
    out.print(f"{totals or 'nothing to do'}; {result.seconds:.1f} s{pauses}", highlight=False)
    for r in result.results:
        if r.result in ("not admitted", "error") and r.message:
            where = f" (transcript {r.outcome.transcript_path})" if r.outcome and r.outcome.transcript_path else ""
            out.print(f"{r.item.label}: {escape(r.message.splitlines()[0][:300])}{escape(where)}", highlight=False)
