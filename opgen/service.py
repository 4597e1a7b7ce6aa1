"""Registry-wide operations the CLI forwards to: status of every spec, re-verification."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import re

from opgen.spec.abi import kernel_name
from opgen.gate.admission import GateSettings, build_job, run_gate
from opgen.build.cpp import BuildJob
from opgen.errors import OpgenError
from opgen.project import Project
from opgen.registry import Entry, Registry
from opgen.spec.model import TARGET_IDS, Overload, Spec, load_all
from opgen.targets import backend, build_any, target_of_file


@dataclass
class Row:
    op: str
    overload: str
    target: str
    status: str  # verified | emulated (GPU, CPU execution layer only) | stale | missing | n/a (target cannot express it)
    reasons: list[str]
    entry: Entry | None
    variant: str = "plain"
    served: bool = False  # the variant the registry hands to the compiler for this overload

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "overload": self.overload, "target": self.target, "variant": self.variant,
                "status": self.status, "served": self.served, "reasons": self.reasons,
                "entry": str(self.entry.path) if self.entry else None}


def status_rows(project: Project, specs: dict[str, Spec] | None = None) -> list[Row]:
    specs = specs if specs is not None else load_all(project.specs)
    registry = Registry(project.generated)
    rows = []
    seen = set()
    for spec in specs.values():
        for overload in spec.overloads:
            for t in spec.targets:
                target = TARGET_IDS[t]
                if (why := backend(t).unsupported(spec, overload)) is not None:
                    rows.append(Row(spec.op, overload.name, target, "n/a", [why], None))
                    continue
                variants = registry.variants(spec.op, overload.name, target)
                seen.update((spec.op, overload.name, target, e.variant) for e in variants)
                if not variants:
                    rows.append(Row(spec.op, overload.name, target, "missing", [], None))
                    continue
                served, _ = registry.serve(spec.op, overload.name, target, spec)
                for entry in variants:
                    status, reasons = entry.status(spec)
                    rows.append(Row(spec.op, overload.name, target, status, reasons, entry, entry.variant,
                                    served is not None and served.path == entry.path))
    for entry in registry.entries():  # entries whose spec or target is gone
        if (entry.op, entry.overload, entry.target, entry.variant) not in seen:
            status, reasons = entry.status(specs.get(entry.op))
            rows.append(Row(entry.op, entry.overload, entry.target, "stale", reasons or ["not in any spec's targets"],
                            entry, entry.variant))
    return rows


def build_job_for(entry: Entry, spec: Spec, overload: Overload) -> BuildJob:
    """How an admitted entry's committed kernel is rebuilt (re-verification, benchmarks); build it with
    ``targets.build_any`` (a Rust entry gives a Rust job)."""
    return build_job(spec, overload, entry.file("kernel").read_text(), backend(entry.target).target)


@dataclass
class Reverified:
    row: Row
    ok: bool
    stage: str
    message: str
    evidence: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {**self.row.as_dict(), "ok": self.ok, "stage": self.stage, "message": self.message,
                "examples": self.evidence.get("examples"), "seeds": [r["seed"] for r in self.evidence.get("runs", [])],
                "worst_abs_error": self.evidence.get("worst_abs_error"),
                "worst_rel_error": self.evidence.get("worst_rel_error")}


def reverify(project: Project, rows: list[Row], settings: GateSettings = GateSettings(),
             progress: Callable[[Row], None] = lambda r: None,
             specs: dict[str, Spec] | None = None) -> list[Reverified]:
    """Rebuild every entry's committed source (one parallel ninja run) and re-verify on fresh seeds."""
    specs = specs if specs is not None else load_all(project.specs)
    out: list[Reverified] = []
    todo = []
    for row in rows:
        if row.status == "n/a":  # the target cannot express this overload: nothing to verify
            continue
        if row.entry is None:
            out.append(Reverified(row, False, "missing", "no registry entry; run opgen synthesize", {}))
            continue
        if row.status == "stale":
            out.append(Reverified(row, False, "stale", "; ".join(row.reasons), {}))
            continue
        spec = specs[row.op]
        overload = spec.overload(row.overload)
        shim = row.entry.file("shim").read_text()
        if shim != backend(row.target).shim(spec, overload):
            out.append(Reverified(row, False, "stale", "the committed shim differs from what opgen generates now", {}))
            continue
        todo.append((row, spec, overload, row.entry.file("kernel").read_text()))
    built = build_any([build_job_for(row.entry, spec, overload) for row, spec, overload, _ in todo])
    for (row, spec, overload, source), b in zip(todo, built):
        gate = run_gate(spec, overload, source, settings, built=b, target=backend(row.target).target)
        out.append(Reverified(row, gate.ok, gate.stage, gate.feedback, gate.evidence))
        progress(row)
    return out


def verify_source(project: Project, op: str, overload_name: str | None, source_path: Path,
                  settings: GateSettings = GateSettings()) -> list[tuple[str, Any]]:
    """Put a hand-written file through the admission gate, for one overload or all of an op's
    (a .rs file as a Rust kernel, anything else as C++)."""
    specs = load_all(project.specs)
    if op not in specs:
        raise OpgenError(f"no spec for {op}", hint=f"known ops: {', '.join(sorted(specs))}")
    spec = specs[op]
    source = source_path.read_text()
    target = target_of_file(source_path)
    if overload_name:
        overloads = [spec.overload(overload_name)]
    else:  # the overloads whose kernel function the file defines
        overloads = [o for o in spec.overloads if re.search(rf"\b{kernel_name(op, o.name)}\s*\(", source)]
        if not overloads:
            names = ", ".join(kernel_name(op, o.name) for o in spec.overloads)
            raise OpgenError(f"{source_path} defines none of {op}'s kernel functions ({names})",
                             hint="define one of them (inside namespace opgen::kernels in C++, as a pub fn in "
                                  "Rust), or pass --overload")
    return [(o.name, run_gate(spec, o, source, settings, target=target)) for o in overloads]
