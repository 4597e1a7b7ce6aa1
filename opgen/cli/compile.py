"""``opgen compile FILE.py:FUNCTION -o OUT``: a thin typer command over opgen.compiler.driver.
Registered by ``opgen.cli``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from opgen.gate.admission import GateSettings
from opgen.errors import OpgenError
from opgen.llm.providers import choose_provider
from opgen.llm.recordings import Recordings
from opgen.project import Project
from opgen.spec.model import TARGET_IDS
from opgen.compiler.driver import compile_function, parse_target_spec, synthesizer


def _cli():
    from opgen import cli  # the shared consoles and error printing (imported late: cli imports this module)
    return cli


def compile_command(
    function: str = typer.Argument(..., help="FILE.py:FUNCTION, the annotated function to compile."),
    out_dir: Path = typer.Option(..., "-o", "--out", help="Directory for lib<function>.so, <function>.cpp and "
                                                          "<function>.manifest.json."),
    target: str = typer.Option("cpp", "--target", help="Kernel target: cpp (kernels linked in) or rust (each kernel "
                               "a cdylib in OUT/kernels/, loaded on first use)."),
    synthesize_missing: bool = typer.Option(False, "--synthesize-missing", help="Synthesize ops without a verified "
                                            "kernel (through the configured provider) and go on."),
    provider: Optional[str] = typer.Option(None, "--provider", help="With --synthesize-missing: auto (default), "
                                           "openai, file or replay."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name (default: $OPGEN_MODEL)."),
    exchange_dir: Optional[Path] = typer.Option(None, "--exchange-dir", help="Where --provider file exchanges prompts."),
    answered_by: Optional[str] = typer.Option(None, "--answered-by", help="Who answers a file exchange."),
    max_attempts: int = typer.Option(3, "--max-attempts", min=1, help="Attempts per synthesized overload."),
    examples: Optional[int] = typer.Option(None, "--examples", help="Hypothesis examples per verification run."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest on stdout."),
    root: Optional[Path] = typer.Option(None, "--root", help="Project root holding specs/ and generated/."),
) -> None:
    """Compile an annotated Python function into a native library built from verified registry kernels."""
    cli = _cli()
    try:
        project = Project.locate(root)
        source, name = parse_target_spec(function)
        if target not in TARGET_IDS:
            raise OpgenError(f"unknown target {target!r}", hint=f"choose one of {', '.join(TARGET_IDS)}")
        synth = None
        if synthesize_missing:
            llm = choose_provider(provider, model=model, recordings=Recordings(project.recordings),
                                  exchange_dir=exchange_dir or project.root / "exchange", mode=None,
                                  answered_by=answered_by, max_tokens=None, timeout=None)
            settings = GateSettings() if examples is None else GateSettings(dev_examples=examples,
                                                                             admission_examples=examples)
            synth = synthesizer(project, llm, TARGET_IDS[target], max_attempts=max_attempts, settings=settings,
                                report=lambda msg: cli.console.print(f"  {escape(msg)}", highlight=False))
        compiled = compile_function(project, source, name, out_dir, target=TARGET_IDS[target], synthesize=synth)
    except OpgenError as exc:
        cli._fail(exc)
    m = compiled.manifest
    if as_json:
        cli.out.print_json(json.dumps(m))
        return
    plain = lambda text: cli.out.print(text, markup=False, highlight=False)  # noqa: E731
    params = ", ".join(f"{p['name']}: {p['type']}" + (f" = {p['default']!r}" if "default" in p else "")
                       for p in m["params"])
    plain(f"compiled {function} ({params}) -> {m['returns']['type']}")
    table = Table("op", "overload", "target", "variant", "entry hash", "provider", "entry")
    for k in m["kernels"]:
        pv = k["provenance"]
        provider = pv["provider"] + (f" ({pv['model']})" if pv["model"] else "")
        entry = k["entry"] + (" [synthesized now]" if k["synthesized_by_this_compile"] else "")
        table.add_row(k["op"], k["overload"], k["target"], k["variant"], k["entry_hash"][:12], escape(provider),
                      escape(entry))
    cli.out.print(table)
    for pipe in m.get("pipelines", []):
        plain(f"pipeline  {pipe['model']} ({pipe['architecture']}, glue {pipe['glue']}, sha256 "
              f"{pipe['glue_sha256'][:12]}), model files {pipe['model_dir']}")
        kernels = Table("role", "op", "overload", "target", "variant", "entry hash", "provider", "entry")
        for k in pipe["kernels"]:
            pv = k["provenance"]
            provider = pv["provider"] + (f" ({pv['model']})" if pv["model"] else "")
            entry = k["entry"] + (" [linked once, shared with the function]" if k["shared_with_function"] else "")
            kernels.add_row(k["role"], k["op"], k["overload"], k["target"], k["variant"], k["entry_hash"][:12],
                            escape(provider), escape(entry))
        cli.out.print(kernels)
    plain(f"library   {compiled.library}" + (" (cached build)" if compiled.build.cached else ""))
    plain(f"C++       {compiled.cpp_path}")
    plain(f"manifest  {compiled.manifest_path}")
    plain(f"entry     {m['c_declaration']}")
