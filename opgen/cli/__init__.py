"""The ``opgen`` command: thin typer commands that forward to plain functions.

Exit codes: 0 success; 1 a failure (nothing admitted, a rejection, a stale or failing
entry, a user error, printed without a traceback); 3 the file exchange is waiting for
an answer.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from opgen.gate.admission import GateSettings
from opgen.errors import AwaitingAnswer, OpgenError
from opgen.service import reverify, status_rows, verify_source
from opgen.llm.providers import TokenBudget, choose_provider, parse_budget, parse_timeout
from opgen.llm.recordings import Recordings
from opgen.project import Project
from opgen.registry import Registry
from opgen.spec.model import TARGET_IDS, TARGETS, load_all
from opgen.spec.lint import lint_spec, require_clean
from opgen.synthesize import synthesize_overload
from opgen.targets import backend

app = typer.Typer(add_completion=False, no_args_is_help=True, help="LLM-written native operator kernels, admitted only when proven.")
console = Console(stderr=True, soft_wrap=True)
# Piped output (CI logs, files) is not cut at 80 columns: op names must stay whole.
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200)

EXIT_FAILED, EXIT_AWAITING = 1, 3
RootOpt = typer.Option(None, "--root", help="Project root holding specs/ and generated/ (default: $OPGEN_ROOT or the current directory).")


def _settings(examples: int | None) -> GateSettings:
    if examples is None:
        return GateSettings()
    return GateSettings(dev_examples=examples, admission_examples=examples)


def _fail(exc: OpgenError) -> None:
    console.print("[bold red]error:[/]", escape(exc.render()), highlight=False)
    raise typer.Exit(EXIT_AWAITING if isinstance(exc, AwaitingAnswer) else EXIT_FAILED)


@app.command()
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
    root: Optional[Path] = RootOpt,
) -> None:
    """Ask an LLM for a kernel, build it, verify it, and admit it to the registry."""
    try:
        project = Project.locate(root)
        specs = load_all(project.specs)
        if op not in specs:
            raise OpgenError(f"no spec for {op}", hint=f"known ops: {', '.join(sorted(specs))}")
        if target not in TARGETS:
            raise OpgenError(f"unknown target {target!r}", hint=f"choose one of {', '.join(TARGETS)}")
        spec = specs[op]
        if target not in spec.targets:
            raise OpgenError(f"{op} does not list target {target}", hint=f"its targets are {', '.join(spec.targets)}")
        chosen = [spec.overload(n) for n in overload] if overload else spec.overloads
        if not overload:  # overloads the target cannot express (Metal has no float64) are left out, saying so
            for o in [o for o in chosen if backend(target).unsupported(spec, o)]:
                console.print(f"  {op} [{o.name}]: n/a for {target}: {escape(backend(target).unsupported(spec, o))}",
                              highlight=False)
                chosen.remove(o)
        if variant not in spec.variant_names():
            raise OpgenError(f"{op} declares no variant {variant!r}",
                             hint=f"choose one of {', '.join(spec.variant_names())}, or add it under 'variants:' in its spec")
        require_clean(spec, chosen)  # a spec a constant kernel could pass is fixed first; nothing is asked
        budget = TokenBudget(parse_budget(token_budget if token_budget is not None else os.environ.get("OPGEN_TOKEN_BUDGET")))
        llm = choose_provider(provider, model=model, recordings=Recordings(project.recordings),
                              exchange_dir=exchange_dir or project.root / "exchange", mode=mode,
                              answered_by=answered_by, max_tokens=max_tokens,
                              timeout=parse_timeout(timeout) if timeout is not None else None, budget=budget)
        failed = 0
        for o in chosen:
            shown = o.name if variant == "plain" else f"{o.name}@{variant}"
            console.rule(escape(f"{op} [{shown}] -> {TARGET_IDS[target]}"))
            with console.status(f"{op} {o.name}") as status:
                def report(msg: str) -> None:
                    status.update(escape(f"{op} {o.name}: {msg}"))
                    console.print(f"  {escape(msg)}", highlight=False)

                result = synthesize_overload(project, spec, o, llm, target=target, max_attempts=max_attempts,
                                             settings=_settings(examples), report=report, lint=False,
                                             variant=variant)
            if result.admitted:
                ev = result.entry.data["evidence"]
                console.print(f"[green]admitted[/] {op} {shown} ({TARGET_IDS[target]}) after {len(result.attempts)} "
                              f"attempt(s): {ev['examples']} examples, worst error {ev.get('worst_tolerance_used', 0):.2f} of the tolerance; "
                              f"entry {escape(str(result.entry.path))}", highlight=False)
            else:
                failed += 1
                console.print(f"[red]not admitted[/] {op} {o.name}: {escape(result.error or '')}", highlight=False)
                for a in result.attempts:
                    console.print(f"  attempt {a.number}: {a.stage}: {escape(a.feedback.splitlines()[0][:200])}", highlight=False)
                console.print(f"  transcript: {escape(str(result.transcript_path))}", highlight=False)
        if budget.used or budget.limit is not None:
            console.print(f"tokens: {escape(budget.report())}", highlight=False)
        raise typer.Exit(EXIT_FAILED if failed else 0)
    except OpgenError as exc:
        _fail(exc)


@app.command()
def verify(
    ops: Optional[list[str]] = typer.Argument(None, help="Ops to re-verify."),
    all_: bool = typer.Option(False, "--all", help="Re-verify every registry entry."),
    source: Optional[Path] = typer.Option(None, "--source", help="A hand-written candidate to put through the admission gate."),
    op: Optional[str] = typer.Option(None, "--op", help="With --source: the op it implements."),
    overload: Optional[str] = typer.Option(None, "--overload", help="With --source: the overload (default: the ones the file defines)."),
    examples: Optional[int] = typer.Option(None, "--examples", help="Hypothesis examples per verification run."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Re-verify registry entries on fresh seeds, or gate a hand-written source file."""
    try:
        project = Project.locate(root)
        if source is not None:
            if not op:
                raise OpgenError("--source needs --op", hint="e.g. opgen verify --source my_matmul.cpp --op operator.matmul")
            if not source.exists():
                raise OpgenError(f"{source} does not exist")
            results = verify_source(project, op, overload, source, _settings(examples))
            if as_json:
                out.print_json(json.dumps([{"op": op, "overload": name, "ok": g.ok, "stage": g.stage,
                                            "message": g.feedback, "evidence": g.evidence} for name, g in results]))
            for name, g in results:
                colour = "green" if g.ok else "red"
                console.print(f"[{colour}]{'admissible' if g.ok else 'rejected'}[/] {op} {name} ({g.stage})", highlight=False)
                if not g.ok:
                    console.print(g.feedback, highlight=False, markup=False)
            raise typer.Exit(0 if all(g.ok for _, g in results) else EXIT_FAILED)
        if not ops and not all_:
            raise OpgenError("nothing to verify", hint="name ops, or pass --all, or --source FILE --op OP")
        specs = load_all(project.specs)
        rows = [r for r in status_rows(project, specs) if all_ or r.op in (ops or [])]
        if ops and (unknown := set(ops) - {r.op for r in rows}):
            raise OpgenError(f"no spec or entry for {', '.join(sorted(unknown))}")
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task("verifying", total=len(rows))
            results = reverify(project, rows, _settings(examples), specs=specs,
                               progress=lambda r: bar.update(task, advance=1, description=f"{r.op} {r.overload}"))
        if as_json:
            out.print_json(json.dumps({"results": [r.as_dict() for r in results],
                                       "passed": sum(r.ok for r in results), "failed": sum(not r.ok for r in results)}))
        else:
            table = Table("op", "overload", "target", "result", "examples", "detail")
            for r in results:
                table.add_row(r.row.op, r.row.overload, r.row.target, "[green]pass[/]" if r.ok else f"[red]{r.stage}[/]",
                              str(r.evidence.get("examples", "")), "" if r.ok else escape(r.message.splitlines()[0][:100]))
            out.print(table)
        raise typer.Exit(0 if results and all(r.ok for r in results) else EXIT_FAILED)
    except OpgenError as exc:
        _fail(exc)


@app.command()
def lint(
    ops: Optional[list[str]] = typer.Argument(None, help="Ops to lint (default: every spec)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Reject specs a constant or all-zero kernel could pass: a reference that ignores its
    inputs, or default inputs whose reference magnitudes sit under the tolerance."""
    try:
        specs = load_all(Project.locate(root).specs)
        if unknown := sorted(set(ops or []) - set(specs)):
            raise OpgenError(f"no spec for {', '.join(unknown)}", hint=f"known ops: {', '.join(sorted(specs))}")
        results = [r for name in (ops or sorted(specs)) for r in lint_spec(specs[name])]
    except OpgenError as exc:
        _fail(exc)
    findings = [f for r in results for f in r.findings]
    if as_json:
        out.print_json(json.dumps({"results": [r.as_dict() for r in results], "findings": len(findings)}))
    else:
        for r in results:
            if r.ok:
                zeros = "" if r.zero_passes is None else f", an all-zero result passes {r.zero_passes} of {r.informative}"
                out.print(f"ok   {r.op} [{r.overload}]: result changes with the inputs in {r.changed} of "
                          f"{r.compared} non-empty examples{zeros}", markup=False, highlight=False)
            for f in r.findings:
                out.print(f"FAIL {f.render()}", markup=False, highlight=False)
        out.print(f"{len(results)} overloads linted, {len(findings)} finding(s)", markup=False, highlight=False)
    raise typer.Exit(EXIT_FAILED if findings else 0)


@app.command()
def corpus(
    names: Optional[list[str]] = typer.Argument(None, help="Only these corpus entries (default: all)."),
    honest: bool = typer.Option(True, "--honest/--no-honest", help="Also gate every shipped registry kernel (false rejections)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Reliability figures: every known-bad kernel in verification/corpus/ must be rejected for its
    stated reason, every shipped kernel admitted. Exit 1 on a hole, a wrong reason or a false rejection."""
    from opgen.gate.corpus import render_tally, run_corpus  # here, so the other commands do not import it

    try:
        project = Project.locate(root)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task("gating", total=None)
            report = run_corpus(project, names=names or None, honest=honest,
                                progress=lambda label, done, total: bar.update(task, completed=done, total=total,
                                                                               description=label))
    except OpgenError as exc:
        _fail(exc)
    if as_json:
        out.print_json(json.dumps(report.as_dict()))
    else:
        plain = lambda text: out.print(text, markup=False, highlight=False)  # noqa: E731
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
        out.print(render_tally(report.tally()), markup=False, highlight=False)
    raise typer.Exit(0 if report.ok else EXIT_FAILED)


@app.command("list")
def list_(
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Every spec overload and its registry status per target: verified, emulated (GPU kernels verified on the
    CPU execution layer only), stale, missing, n/a (the target cannot express the overload)."""
    try:
        rows = status_rows(Project.locate(root))
    except OpgenError as exc:
        _fail(exc)
    if as_json:
        out.print_json(json.dumps([r.as_dict() for r in rows]))
        return
    colours = {"verified": "green", "emulated": "cyan", "stale": "yellow", "missing": "red", "n/a": "dim"}
    table = Table("op", "overload", "target", "variant", "status", "detail")
    for r in rows:
        variant = r.variant + (" (served)" if r.served and _has_siblings(rows, r) else "")
        table.add_row(r.op, r.overload, r.target, variant, f"[{colours.get(r.status, 'white')}]{r.status}[/]",
                      escape("; ".join(r.reasons)))
    out.print(table)
    counts = {s: sum(r.status == s for r in rows) for s in ("verified", "emulated", "stale", "missing", "n/a")}
    out.print(", ".join(f"{n} {s}" for s, n in counts.items() if n or s in ("verified", "stale", "missing")))


@app.command()
def bench(
    ops: Optional[list[str]] = typer.Argument(None, help="Ops to benchmark (default: every op with bench cases), or `embeddings` for the native embedding pipeline against sentence-transformers and ONNX Runtime."),
    model: str = typer.Option("all-minilm-l6-v2", "--model", help="With `embeddings`: the model."),
    engine: Optional[list[str]] = typer.Option(None, "--engine", help="With `embeddings`: only these engines (opgen, sentence-transformers, onnxruntime)."),
    cold_start: bool = typer.Option(True, "--cold-start/--no-cold-start", help="With `embeddings`: also measure cold start and peak memory in fresh processes."),
    target: Optional[list[str]] = typer.Option(None, "--target", help="Only these targets (cpp, rust, ...)."),
    select: bool = typer.Option(False, "--select", help="Record the figures in each entry; the registry then serves the fastest verified variant."),
    rounds: int = typer.Option(7, "--rounds", min=1, help="Interleaved kernel/reference rounds per case (the median is reported)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Each verified kernel's speed beside its reference (NumPy/PyTorch) on the spec's bench shapes."""
    from opgen.bench import benchmark  # numpy/torch timing machinery: only loaded for this command

    if ops == ["embeddings"]:
        _bench_embeddings(model, tuple(engine or ()), rounds, cold_start, as_json, root)
        return
    try:
        project = Project.locate(root)
        with console.status("benchmarking") as status:
            results = benchmark(project, ops or None, targets=target, rounds=rounds, select=select,
                                progress=lambda s: status.update(escape(s)))
    except OpgenError as exc:
        _fail(exc)
    if as_json:
        out.print_json(json.dumps([r.as_dict() for r in results]))
    else:
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


def _bench_embeddings(model: str, engines: tuple[str, ...], rounds: int, cold_start: bool, as_json: bool,
                      root: Optional[Path]) -> None:
    from opgen.pipelines import bench as embeddings_bench

    try:
        project = Project.locate(root)
        with console.status("benchmarking embeddings") as status:
            result = embeddings_bench.run(model, engines=engines or embeddings_bench.ENGINES, rounds=rounds,
                                          project=project.root, cold=cold_start,
                                          progress=lambda s: status.update(escape(s)))
    except OpgenError as exc:
        _fail(exc)
    if as_json:
        out.print_json(json.dumps(result))
        return
    table = Table("engine", "batch 1 (sentences/s)", "batch 32 (sentences/s)", "cold start (s)", "peak memory (MiB)",
                  "min cosine to sentence-transformers")
    cos = result["min_cosine_to_sentence_transformers"]
    for name, f in result["engines"].items():
        fmt = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
        table.add_row(name, fmt(f["per_second"].get("1"), ".1f"), fmt(f["per_second"].get("32"), ".1f"),
                      fmt(f["cold_start_s"], ".2f"), fmt(f["peak_rss_mib"], ".0f"),
                      "reference" if name == "sentence-transformers" else fmt(cos.get(name), ".7f"))
    out.print(table)
    mine = result["engines"].get("opgen")
    others = {k: v for k, v in result["engines"].items() if k != "opgen"}
    if mine and others:
        for batch in ("1", "32"):
            best = max(others.items(), key=lambda kv: kv[1]["per_second"][batch])
            out.print(f"batch {batch}: opgen / fastest other ({best[0]}) = "
                      f"{mine['per_second'][batch] / best[1]['per_second'][batch]:.2f}x", highlight=False)
    out.print(f"{result['sentences']} sentences, {result['threads']} threads for every engine, "
              f"median of {result['rounds']} interleaved rounds", highlight=False)


@app.command("pipeline")
def pipeline_export(
    model: str = typer.Argument(..., help="Model name, e.g. all-minilm-l6-v2 or embeddinggemma-300m."),
    out_dir: Path = typer.Option(..., "-o", "--out", help="Directory to write <model>/ into."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir", help="The model's files (default: where opgen finds them)."),
    target: str = typer.Option("cpu-cpp", "--target", help="Registry target whose kernels are linked."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Link a model's native embedding pipeline from registry kernels, for hosts without Python (Node.js)."""
    from opgen.pipelines.export import export

    try:
        manifest = export(Project.locate(root), model, out_dir, model_dir=model_dir, target=target)
    except OpgenError as exc:
        _fail(exc)
    data = json.loads(manifest.read_text())
    out.print(f"wrote {escape(str(manifest.parent))}: {data['model']} ({data['architecture']}), "
              f"{len(data['kernels'])} registry kernels linked", highlight=False)
    for k in data["kernels"]:
        out.print(f"  {k['role']:<14} {k['op']} [{k['overload']}] {k['target']} {k['variant']} "
                  f"(kernel sha256 {k['kernel_sha256'][:12]}, provider {k['provider']})", markup=False, highlight=False)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _has_siblings(rows: list, r) -> bool:
    return sum((x.op, x.overload, x.target) == (r.op, r.overload, r.target) for x in rows) > 1


@app.command()
def show(
    op: str = typer.Argument(..., help="Op name."),
    overload: Optional[str] = typer.Option(None, "--overload"),
    target: str = typer.Option("cpp", "--target"),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
    root: Optional[Path] = RootOpt,
) -> None:
    """An op's entries: native signature, status, evidence, provenance, transcript path."""
    try:
        project = Project.locate(root)
        specs = load_all(project.specs)
        if op not in specs:
            raise OpgenError(f"no spec for {op}", hint=f"known ops: {', '.join(sorted(specs))}")
        registry = Registry(project.generated)
        overloads = [specs[op].overload(overload)] if overload else specs[op].overloads
        shown = []
        for o in overloads:
            entry = registry.get(op, o.name, TARGET_IDS.get(target, target))
            if entry is None:
                shown.append({"op": op, "overload": o.name, "target": TARGET_IDS.get(target, target), "status": "missing"})
                continue
            status, reasons = entry.status(specs[op])
            shown.append({**entry.data, "status": status, "stale_reasons": reasons, "path": str(entry.path),
                          "transcript_path": str(entry.file("transcript"))})
    except OpgenError as exc:
        _fail(exc)
    if as_json:
        out.print_json(json.dumps(shown))
        return
    for e in shown:
        out.rule(escape(f"{op} [{e['overload']}] {e['target']}: {e['status']}"))
        if e["status"] == "missing":
            out.print(f"no entry; run: opgen synthesize {op} --overload {e['overload']}", markup=False)
            continue
        ev, pv = e["evidence"], e["provenance"]
        plain = lambda text: out.print(text, markup=False, highlight=False)  # noqa: E731 (signatures hold [brackets])
        plain(f"signature  {e['signature']['python']}")
        device = e["signature"].get("cuda") or e["signature"].get("metal")
        if device:  # a GPU kernel: its own declaration; the C++ one is the CPU kernels'
            plain("device     " + " ".join(device.split()).replace("( ", "("))
        else:
            plain(f"C++        {e['signature']['cpp']}")
        if e["signature"].get("rust"):
            plain(f"Rust       {e['signature']['rust']}")
        plain(f"C symbol   {e['signature']['c_symbol']}")
        plain(f"evidence   {ev['examples']} examples, seeds {[r['seed'] for r in ev['runs']]}, "
                  f"worst abs {ev['worst_abs_error']:.3g}, worst rel {ev['worst_rel_error']:.3g}, "
                  f"worst error {ev.get('worst_tolerance_used', 0):.2f} of the tolerance, {ev['date']}")
        plain(f"build      {ev['build']['compiler']} {' '.join(ev['build']['flags'])} (isa {ev['build']['isa']})")
        if "execution" in ev:  # GPU kernels: where they ran, and the device build beside the CPU layer's
            dev = ev.get("device_build", {})
            plain(f"ran on     {ev['execution']['layer']} ({e['status']}; {ev.get('launch', '')})")
            plain("dev build  " + (f"{dev.get('compiler')}, {dev.get('targets')}: {'ok' if dev.get('ok') else 'FAILED'}"
                                   if dev.get("ran") else f"not built: {dev.get('note', '')}"))
            for run in e.get("device_runs", []):
                plain(f"device run {run.get('date')} on {run.get('device')}: {'passed' if run.get('passed') else 'failed'}")
        model = pv.get("model") or (pv.get("original") or {}).get("model")
        plain(f"provenance provider {pv['provider']}, model {model or 'none recorded'}, attempts {pv['attempts']}, "
                  f"tokens {pv['tokens']}" + (f", answered by {pv['answered_by']}" if pv.get("answered_by") else ""))
        plain(f"transcript {e['transcript_path']}")
        for reason in e.get("stale_reasons", []):
            out.print(f"[yellow]stale:[/] {escape(reason)}")


from opgen.cli.nightly import nightly_app, report_command  # noqa: E402 (they print through this module's consoles)

app.add_typer(nightly_app, name="nightly")
app.command("report")(report_command)

from opgen.cli.compile import compile_command  # noqa: E402 (it prints through this module's consoles)

app.command("compile")(compile_command)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
