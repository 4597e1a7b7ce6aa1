"""``opgen list`` (every overload's registry status) and ``opgen show`` (one op's entries)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from opgen.cli.output import JsonOpt, RootOpt, emit_json, fail, json_output, out, plain
from opgen.errors import OpgenError
from opgen.targets.catalog import target_for
from opgen.project import Project
from opgen.service import show_entries, status_rows


def list_(
    ops: Optional[list[str]] = typer.Argument(None, help="Only these ops (any of their names: numpy.matmul lists operator.matmul)."),
    as_json: bool = JsonOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """Every spec overload and its registry status per target: verified, emulated (GPU kernels verified on the
    CPU execution layer only), stale, missing, n/a (the target cannot express the overload)."""
    try:
        with json_output(as_json):
            rows = status_rows(Project.locate(root), ops=ops)
    except OpgenError as exc:
        fail(exc)
    if as_json:
        emit_json([r.as_dict() for r in rows])
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


def _has_siblings(rows: list, r) -> bool:
    return sum((x.op, x.overload, x.target) == (r.op, r.overload, r.target) for x in rows) > 1


def show(
    op: str = typer.Argument(..., help="Op name."),
    overload: Optional[str] = typer.Option(None, "--overload"),
    target: str = typer.Option("cpp", "--target"),
    as_json: bool = JsonOpt,
    root: Optional[Path] = RootOpt,
) -> None:
    """An op's entries: native signature, status, evidence, provenance, transcript path."""
    try:
        with json_output(as_json):
            shown = show_entries(Project.locate(root), op, overload, target)
    except OpgenError as exc:
        fail(exc)
    if as_json:
        emit_json(shown)
        return
    for e in shown:
        out.rule(escape(f"{e['op']} [{e['overload']}] {e['target']}: {e['status']}"))
        if e["status"] == "n/a":
            plain(f"the target cannot express this overload: {e['reason']}")
            continue
        if e["status"] == "not listed":
            plain(e["reason"])
            continue
        if e["status"] == "missing":
            plain(f"signature  {e['signature']['python']}")
            plain(f"kernel     the {e['language']} function to write:")
            for line in e["declaration"].splitlines():
                plain(f"  {line}")
            plain(f"C symbol   {e['signature']['c_symbol']} (generated around it)")
            plain(f"no entry; run: opgen synthesize {op} --overload {e['overload']} --target {target_for(target).name}")
            continue
        ev, pv = e["evidence"], e["provenance"]
        plain(f"signature  {e['signature']['python']}")
        if e.get("names", [e["op"]]) != [e["op"]]:
            plain(f"names      {', '.join(e['names'])}")
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
