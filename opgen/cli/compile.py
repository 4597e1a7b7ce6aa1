"""``opgen compile FILE.py:FUNCTION -o OUT``: a thin typer command over opgen.compiler.driver.
Registered by ``opgen.cli``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from opgen.cli.output import RootOpt, console, emit_json, fail, json_output, out, plain
from opgen.errors import OpgenError
from opgen.llm.providers import choose_provider
from opgen.llm.recordings import Recordings
from opgen.project import Project
from opgen.spec.dtypes import DTYPES
from opgen.spec.model import TARGET_IDS
from opgen.compiler.driver import compile_function, parse_target_spec, synthesizer
from opgen.service import gate_settings


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
    dtype: Optional[list[str]] = typer.Option(None, "--dtype", metavar="NAME=DTYPE", help="The dtype of an array "
                                              "parameter annotated without one (torch.Tensor means float32, "
                                              "np.ndarray float64 otherwise), e.g. --dtype mask=int64. Repeatable."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest on stdout (only JSON: everything else goes to stderr)."),
    root: Optional[Path] = RootOpt,
) -> None:
    """Compile an annotated Python function into a native library built from verified registry kernels."""
    try:
        with json_output(as_json):
            compiled = _compile(function, out_dir, target, synthesize_missing, provider, model, exchange_dir,
                                answered_by, max_attempts, examples, root, _dtype_overrides(dtype or []))
    except OpgenError as exc:
        fail(exc)
    m = compiled.manifest
    if as_json:
        emit_json(m)
        return
    _print_compiled(function, compiled)


def _compile(function: str, out_dir: Path, target: str, synthesize_missing: bool, provider: Optional[str],
             model: Optional[str], exchange_dir: Optional[Path], answered_by: Optional[str], max_attempts: int,
             examples: Optional[int], root: Optional[Path], dtypes: dict[str, str]):
    project = Project.locate(root)
    source, name = parse_target_spec(function)
    if target not in TARGET_IDS:
        raise OpgenError(f"unknown target {target!r}", hint=f"choose one of {', '.join(TARGET_IDS)}")
    synth = None
    if synthesize_missing:
        llm = choose_provider(provider, model=model, recordings=Recordings(project.recordings),
                              exchange_dir=exchange_dir or project.root / "exchange", mode=None,
                              answered_by=answered_by, max_tokens=None, timeout=None)
        synth = synthesizer(project, llm, TARGET_IDS[target], max_attempts=max_attempts,
                            settings=gate_settings(examples),
                            report=lambda msg: console.print(f"  {escape(msg)}", highlight=False))
    return compile_function(project, source, name, out_dir, target=TARGET_IDS[target], synthesize=synth,
                            dtypes=dtypes)


def _dtype_overrides(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, dt = item.partition("=")
        name, dt = name.strip(), dt.strip().removeprefix("torch.").removeprefix("np.").removeprefix("numpy.")
        if not sep or not name or dt not in DTYPES:
            raise OpgenError(f"--dtype {item!r} is not NAME=DTYPE with a dtype opgen knows",
                             hint=f"e.g. --dtype mask=int64; dtypes: {', '.join(DTYPES)}")
        out[name] = dt
    return out


def _print_compiled(function: str, compiled) -> None:
    m = compiled.manifest
    params = ", ".join(f"{p['name']}: {p['type']}" + (" | None" if p.get("optional") else "")
                       + (f" = {p['default']!r}" if "default" in p else "")
                       for p in m["params"])
    plain(f"compiled {function} ({params}) -> {m['returns']['type']}")
    table = Table("op", "overload", "target", "variant", "entry hash", "provider", "entry")
    for k in m["kernels"]:
        pv = k["provenance"]
        provider = pv["provider"] + (f" ({pv['model']})" if pv["model"] else "")
        entry = k["entry"] + (" [synthesized now]" if k["synthesized_by_this_compile"] else "")
        table.add_row(k["op"], k["overload"], k["target"], k["variant"], k["entry_hash"][:12], escape(provider),
                      escape(entry))
    out.print(table)
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
        out.print(kernels)
    plain(f"library   {compiled.library}" + (" (cached build)" if compiled.build.cached else ""))
    plain(f"C++       {compiled.cpp_path}")
    plain(f"manifest  {compiled.manifest_path}")
    python = m["python_entry"]
    plain(f"python    {compiled.out_dir / python['file']} (native CPython entry)" if "file" in python
          else f"python    no native entry ({python['absent']}); Python calls go through ctypes")
    plain(f"entry     {m['c_declaration']}")
