"""``opgen nightly`` (run or shard), ``opgen nightly merge`` and ``opgen report``: thin typer
commands over ``opgen.nightly`` and ``opgen.report``. Registered by ``opgen.cli``."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape

from opgen.cli.output import EXIT_FAILED, Tracker, console, emit_json, fail, json_output, out, progress
from opgen.errors import OpgenError
from opgen.project import Project
from opgen.nightly.compare import counts
from opgen.nightly.history import History, finalize, load_result, merge, shard_file_name, write_json
from opgen.nightly.run import BUDGETS, NOISE_BAND, budget, default_run_id, run_nightly
from opgen.nightly.shards import Shard
from opgen.report import build_site
from opgen.report import serve as serving
from opgen.service import shard_failed

nightly_app = typer.Typer(add_completion=False, help="Re-verify the whole registry with a deeper budget, run the "
                          "adversarial corpus and the benchmarks, and compare with the previous run.")

RootOpt = typer.Option(None, "--root", help="Project root (default: $OPGEN_ROOT or the current directory).")
ReportsOpt = typer.Option(None, "--reports-dir", help="Where results and the site go (default: <root>/reports).")
NoiseOpt = typer.Option(None, "--noise-band", min=0.0, max=0.99,
                        help=f"A benchmark ratio may fall this fraction below the previous run's before it counts as a "
                             f"regression (default: $OPGEN_NOISE_BAND or {NOISE_BAND}).")


def _noise_band(value: float | None) -> float:
    if value is not None:
        return value
    raw = os.environ.get("OPGEN_NOISE_BAND")
    if raw is None:
        return NOISE_BAND
    try:
        band = float(raw)
    except ValueError:
        raise OpgenError(f"OPGEN_NOISE_BAND={raw!r} is not a number", hint="e.g. OPGEN_NOISE_BAND=0.25") from None
    if not 0 <= band < 1:
        raise OpgenError(f"OPGEN_NOISE_BAND={raw} is outside [0, 1)", hint="e.g. 0.25 for a 25% band")
    return band


class _Phases:
    """``run_nightly``'s ``progress(phase, label, done, total)`` onto one tracker per phase (verify,
    corpus, bench): a live bar each on a terminal, else a plain line per finished item."""

    def __init__(self, tracker: Tracker):
        self.tracker = tracker

    def __call__(self, phase: str, label: str, done: int, total: int, result: str = "done") -> None:
        t = self.tracker.phase(phase, total or None)
        if phase == "bench":  # told as each benchmark starts (no total): the previous one is done
            t.step(label)
        elif done == 0:  # a phase starting ("building")
            t.set_total(total)
            t.note(label)
        else:
            t.set_total(total)
            t.done(label, result)


def _print_summary(result: dict[str, Any], shard: bool = False) -> None:
    plain = lambda text: console.print(text, markup=False, highlight=False)  # noqa: E731
    c = counts(result)
    head = f"nightly {result['run_id']}" + (f" shard {result['shards'][0]['index']}/{result['shards'][0]['count']}" if shard else "")
    plain(f"{head}: {c['passed']} passed, {c['failed']} failed, {c['stale']} stale, {c['no_hardware']} without "
          f"hardware, of {c['entries']} entries; corpus {c['corpus_expected']}/{c['corpus']} rejected as expected; "
          f"{c['benchmarks']} benchmarks; {result.get('seconds', 0):.0f} s")
    for part in ("corpus", "bench"):
        info = result.get(part) or {}
        if info.get("error"):
            plain(f"{part} FAILED: {info['error']}")
        elif not info.get("ran"):
            plain(f"{part}: not run ({info.get('reason', '')})")
    cmp = result.get("comparison")
    if cmp is None:  # a shard: list what failed in it; the merge decides what is a regression
        bad = [e for e in result["entries"] if e.get("result") in ("fail", "stale")]
        bad_corpus = [r for r in (result.get("corpus") or {}).get("results", []) if r.get("outcome") != "expected"]
        for e in bad:
            plain(f"FAILED {e['id']} ({e.get('stage')}): {(e.get('message') or '').strip().splitlines()[0][:200] if e.get('message') else ''}")
        for r in bad_corpus:
            plain(f"CORPUS {r['name']}: {r['outcome']} (got {r['got']['stage']})")
        return
    plain(f"compared with {cmp['previous_run'] or 'no previous run'}; benchmark noise band {cmp['noise_band']:.0%}")
    # Plain lines, not a table: CI logs and narrow terminals must not wrap an entry id apart.
    for f in cmp["regressions"]:
        plain(f"REGRESSION {f['summary']}" + (f"\n    {f['detail'][:300]}" if f.get("detail") else ""))
    for f in cmp["failures"]:
        if not f.get("new"):  # the new ones are the regressions above
            plain(f"STILL FAILING {f['summary']}" + (f"\n    {f['detail'][:300]}" if f.get("detail") else ""))
    for f in cmp["improvements"]:
        plain(f"improved: {f['summary']}")
    console.print("[green]nightly passed[/]" if cmp["ok"] else "[bold red]nightly FAILED[/]")


def _finish(project: Project, reports: Path, result: dict[str, Any], band: float,
            report: bool) -> tuple[dict[str, Any], int]:
    """Record the run, print its summary (stderr), build the report; the final result and exit code."""
    final = finalize(History(reports / "nightly"), result, band)
    console.print(f"results: {escape(str(reports / 'nightly' / (final['run_id'] + '.json')))}", highlight=False)
    _print_summary(final)
    built = True
    if report:
        try:
            index = build_site(project, reports)
            console.print(f"report: {escape(str(index))}", highlight=False)
        except OpgenError as exc:  # the results are recorded; say why the site is missing, and fail
            built = False
            console.print("[bold red]report not built:[/]", escape(exc.render()), highlight=False)
    return final, 0 if final["comparison"]["ok"] and built else EXIT_FAILED


@nightly_app.callback(invoke_without_command=True)
def nightly(
    ctx: typer.Context,
    budget_name: str = typer.Option("nightly", "--budget", help=f"Preset: {', '.join(f'{b.name} ({b.dev_examples} dev + {b.admission_runs}x{b.admission_examples} fresh + {b.sanitizer_examples} sanitizer examples + {b.soak_calls} long-run calls)' for b in BUDGETS.values())}."),
    examples: Optional[int] = typer.Option(None, "--examples", help="Fresh-seed examples per admission run (overrides the preset)."),
    runs: Optional[int] = typer.Option(None, "--runs", help="Fresh-seed runs per entry (overrides the preset)."),
    dev_examples: Optional[int] = typer.Option(None, "--dev-examples", help="Examples of the fixed-seed development run."),
    sanitizer_examples: Optional[int] = typer.Option(None, "--sanitizer-examples", help="Examples under ASan+UBSan (0: no sanitizer run)."),
    soak_calls: Optional[int] = typer.Option(None, "--soak-calls", help="Calls in each entry's long-run check, every one checked (0: none)."),
    bench_rounds: Optional[int] = typer.Option(None, "--bench-rounds", help="Interleaved timing rounds per benchmark case (the median is kept)."),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="Names the run and salts its seeds (default: $OPGEN_RUN_ID, GitHub's run id, or the UTC time). The same id reproduces the same seeds."),
    shard: Optional[str] = typer.Option(None, "--shard", help="I/N: run only this deterministic slice and write a shard result for `opgen nightly merge`."),
    target: Optional[list[str]] = typer.Option(None, "--target", help="Only these targets (cpp, rust, cuda, metal; repeatable). Default: all; targets without hardware here are recorded as such."),
    op: Optional[list[str]] = typer.Option(None, "--op", help="Only these ops (repeatable): a quick local check."),
    corpus: bool = typer.Option(True, "--corpus/--no-corpus", help="Run the adversarial corpus."),
    bench: bool = typer.Option(True, "--bench/--no-bench", help="Run the benchmarks."),
    conformance: bool = typer.Option(True, "--conformance/--no-conformance", help="Run ONNX's node test cases through the served kernels (opgen conformance onnx)."),
    noise_band: Optional[float] = NoiseOpt,
    out_path: Optional[Path] = typer.Option(None, "--out", help="With --shard: where to write the shard result (default: reports/nightly/shards/)."),
    report: bool = typer.Option(True, "--report/--no-report", help="Build the HTML report after a complete run."),
    as_json: bool = typer.Option(False, "--json", help="Print the result on stdout."),
    reports_dir: Optional[Path] = ReportsOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Re-verify every registry entry on fresh seeds derived from the run id, with a deeper budget
    than admission; run the corpus and the benchmarks; compare with the previous run. Exit 1 on a
    failure or regression."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        with json_output(as_json):
            project = Project.locate(root)
            reports = Path(reports_dir) if reports_dir else project.reports
            chosen = budget(budget_name, dev_examples=dev_examples, admission_examples=examples, admission_runs=runs,
                            sanitizer_examples=sanitizer_examples, bench_rounds=bench_rounds,
                            soak_calls=soak_calls)
            band = _noise_band(noise_band)
            the_shard = Shard.parse(shard) if shard is not None else None
            rid = run_id or default_run_id()
            with progress("nightly", transient=False, own_task=False) as tracker:
                result = run_nightly(project, budget_=chosen, run_id=rid, shard=the_shard or Shard(1, 1),
                                     targets=target, ops=op, corpus=corpus, bench=bench, progress=_Phases(tracker),
                                     conformance=conformance)
            if the_shard is not None:
                path = out_path or reports / "nightly" / "shards" / shard_file_name(result)
                write_json(path, result)
                console.print(f"shard result: {escape(str(path))}", highlight=False)
                _print_summary(result, shard=True)
                final, code = result, EXIT_FAILED if shard_failed(result) else 0
            else:
                final, code = _finish(project, reports, merge([result]), band, report)
    except OpgenError as exc:
        fail(exc)
    if as_json:
        emit_json(final)
    raise typer.Exit(code)


@nightly_app.command("merge")
def merge_command(
    files: list[Path] = typer.Argument(..., help="Shard results written by `opgen nightly --shard I/N`."),
    allow_partial: bool = typer.Option(False, "--allow-partial", help="Merge even if shards are missing (recorded as a failure)."),
    noise_band: Optional[float] = NoiseOpt,
    report: bool = typer.Option(True, "--report/--no-report", help="Build the HTML report."),
    as_json: bool = typer.Option(False, "--json", help="Print the merged result on stdout."),
    reports_dir: Optional[Path] = ReportsOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Combine shard results into one run, compare it with the previous run, record it in the
    history and build the report. Exit 1 on a failure or regression."""
    try:
        with json_output(as_json):
            project = Project.locate(root)
            reports = Path(reports_dir) if reports_dir else project.reports
            merged = merge([load_result(f) for f in files], allow_partial=allow_partial)
            final, code = _finish(project, reports, merged, _noise_band(noise_band), report)
    except OpgenError as exc:
        fail(exc)
    if as_json:
        emit_json(final)
    raise typer.Exit(code)


def report_command(
    markdown: bool = typer.Option(False, "--markdown", help="Print the Markdown summary on stdout (for CI logs and PR comments)."),
    serve: bool = typer.Option(False, "--serve", help="Serve the site on localhost after building it (Ctrl-C stops)."),
    port: int = typer.Option(8000, "--port", help="With --serve: the port (0: any free port)."),
    reports_dir: Optional[Path] = ReportsOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Build the static coverage report into reports/ (index.html, one page per op, nightly.html,
    summary.md) from the registry and the recorded nightly runs."""

    try:
        project = Project.locate(root)
        reports = Path(reports_dir) if reports_dir else project.reports
        index = build_site(project, reports)
    except OpgenError as exc:
        fail(exc)
    console.print(f"report: {escape(str(index))}", highlight=False)
    if markdown:
        out.print((reports / "summary.md").read_text(), markup=False, highlight=False, soft_wrap=True)
    if serve:

        try:
            server = serving.start(reports, port=port)
        except OSError as exc:
            fail(OpgenError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror})",
                                 hint="pick another --port, or --port 0 for any free one"))
        console.print(f"serving {escape(serving.url(server))} (Ctrl-C to stop)", highlight=False)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        finally:
            server.shutdown()
            server.server_close()
