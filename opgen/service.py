"""Registry-wide operations the CLI forwards to: status of every spec, re-verification, gating a
hand-written file, choosing and synthesizing an op's overloads, showing and linting entries.

Everything here is plain Python (no typer, no printing): a script or a test calls it directly;
``opgen.cli`` only parses arguments and prints what these return."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import re
import time

from opgen.spec.abi import kernel_name
from opgen.gate.admission import GATE_VERSION, GateSettings, build_job, run_gate
from opgen.build.cpp import BuildJob
from opgen.errors import OpgenError
from opgen.project import Project
from opgen.registry import Entry, Registry
from opgen.spec.lint import lint_spec
from opgen.spec.names import find_spec, spec_named
from opgen.spec.model import TARGET_IDS, TARGETS, Overload, Spec, load_all
from opgen.synthesize import synthesize_overload
from opgen.targets.catalog import build_any, target_for, target_of_file


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


def status_rows(project: Project, specs: dict[str, Spec] | None = None, ops: list[str] | None = None) -> list[Row]:
    """Every spec overload's registry status per target (only ``ops``' when given: any of their names),
    and entries whose spec or target is gone."""
    specs = specs if specs is not None else load_all(project.specs)
    if ops:
        chosen = {find_spec(specs, name).op for name in ops}
        return [r for r in status_rows(project, specs) if r.op in chosen]
    registry = Registry(project.generated)
    rows = []
    seen = set()
    for spec in specs.values():
        for overload in spec.overloads:
            for t in spec.targets:
                target = TARGET_IDS[t]
                if (why := target_for(t).unsupported(spec, overload)) is not None:
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
    return build_job(spec, overload, entry.file("kernel").read_text(), target_for(entry.target).name)


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
             specs: dict[str, Spec] | None = None,
             on_result: Callable[[Reverified], None] | None = None) -> list[Reverified]:
    """Rebuild every entry's committed source (one parallel ninja run) and re-verify on fresh seeds.

    ``progress(row)`` is called after each gated row; ``on_result(verdict)`` (if given) for every
    verdict as it is reached, the missing and stale rows (decided without a run) included."""
    specs = specs if specs is not None else load_all(project.specs)
    out = _Verdicts(on_result)
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
        if shim != target_for(row.target).shim(spec, overload):
            out.append(Reverified(row, False, "stale", "the committed shim differs from what opgen generates now", {}))
            continue
        todo.append((row, spec, overload, row.entry.file("kernel").read_text()))
    built = build_any([build_job_for(row.entry, spec, overload) for row, spec, overload, _ in todo])
    for (row, spec, overload, source), b in zip(todo, built):
        gate = run_gate(spec, overload, source, settings, built=b, target=target_for(row.target).name)
        out.append(Reverified(row, gate.ok, gate.stage, gate.feedback, gate.evidence))
        progress(row)
    return list(out)


class _Verdicts(list):
    """A list that tells ``on_result`` of each verdict appended to it."""

    def __init__(self, on_result: Callable[[Reverified], None] | None):
        super().__init__()
        self.on_result = on_result

    def append(self, verdict: Reverified) -> None:  # type: ignore[override]
        super().append(verdict)
        if self.on_result is not None:
            self.on_result(verdict)


def verify_source(project: Project, op: str, overload_name: str | None, source_path: Path,
                  settings: GateSettings = GateSettings()) -> list[tuple[str, Any]]:
    """Put a hand-written file through the admission gate, for one overload or all of an op's
    (a .rs file as a Rust kernel, anything else as C++)."""
    specs = load_all(project.specs)
    spec = find_spec(specs, op)
    op = spec.op
    source = source_path.read_text()
    target = target_of_file(source_path).name
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


def gate_settings(examples: int | None = None) -> GateSettings:
    """The gate's default settings, or with ``examples`` Hypothesis examples per run."""
    if examples is None:
        return GateSettings()
    return GateSettings(dev_examples=examples, admission_examples=examples)


def select_rows(project: Project, specs: dict[str, Spec], ops: list[str] | None = None,
                all_: bool = False, targets: list[str] | None = None,
                overloads: list[str] | None = None) -> list[Row]:
    """The status rows ``opgen verify`` re-verifies: every row with ``all_``, else those of ``ops``;
    only those of ``targets`` (spec names or registry ids) and of ``overloads`` (names) when given."""
    if not ops and not all_:
        raise OpgenError("nothing to verify", hint="name ops, or pass --all, or --source FILE --op OP")
    wanted = {target_for(t).target_id for t in targets} if targets else None
    ops = [spec_named(specs, o).op if spec_named(specs, o) else o for o in ops or []]  # aliases name their op
    rows = [r for r in status_rows(project, specs) if all_ or r.op in ops]
    if ops and (unknown := set(ops) - {r.op for r in rows}):
        raise OpgenError(f"no spec or entry for {', '.join(sorted(unknown))}")
    if overloads:
        known = {r.overload for r in rows}
        if unknown := [o for o in overloads if o not in known]:
            raise OpgenError(f"no overload {', '.join(unknown)} among the selected ops",
                             hint="their overloads: " + ", ".join(sorted(known)))
        rows = [r for r in rows if r.overload in overloads]
    return [r for r in rows if wanted is None or r.target in wanted]


@dataclass
class SynthesisPlan:
    spec: Spec
    target: str  # the short name: cpp, rust, cuda, metal
    variant: str
    overloads: list[Overload]
    skipped: list[tuple[Overload, str]]  # overloads the target cannot express, and why
    # Overloads whose entry is already current (verified under this gate, for this spec, with the
    # shim opgen generates now): left alone unless forced, so re-running a job changes nothing.
    current: list[tuple[Overload, Entry]] = field(default_factory=list)


def current_entry(registry: Registry, spec: Spec, overload: Overload, target: str, variant: str) -> Entry | None:
    """The entry that already answers this request, or None: present, not stale (spec hash, files),
    admitted under the current gate version, its committed shim the one opgen generates now."""
    t = target_for(target)
    entry = registry.get(spec.op, overload.name, t.target_id, variant)
    if entry is None or entry.status(spec)[0] == "stale":
        return None
    if entry.data.get("evidence", {}).get("gate_version") != GATE_VERSION:
        return None
    try:
        if entry.file("shim").read_text() != t.shim(spec, overload):
            return None
    except (OSError, KeyError):
        return None
    return entry


def spec_sound(spec: Spec, overloads: list[Overload]) -> None:
    """Raise an OpgenError when ``opgen spec check`` finds the spec itself wrong for these overloads
    (a tolerance a correct kernel cannot meet, a domain the reference misbehaves on): nothing is
    asked of an LLM for a spec that would reject every honest answer."""
    # spec check evaluates references at higher precision (mpmath, long double): only synthesis needs it
    from opgen.spec.check import require_spec_sound

    require_spec_sound(spec, overloads)


def plan_synthesis(project: Project, op: str, target: str = "cpp", overloads: list[str] | None = None,
                   variant: str = "plain", force: bool = False) -> SynthesisPlan:
    """Check the op, target and variant, and choose the overloads to synthesize: the named ones, or
    every overload the target can express (Metal has no float64; the others are ``skipped``, with why),
    less those whose entry is already current (``current``) unless ``force``.
    A spec a constant kernel could pass is refused here, before anything is asked."""
    specs = load_all(project.specs)
    spec = find_spec(specs, op)
    op = spec.op
    if target not in TARGETS:
        raise OpgenError(f"unknown target {target!r}", hint=f"choose one of {', '.join(TARGETS)}")
    if target not in spec.targets:
        raise OpgenError(f"{op} does not list target {target}", hint=f"its targets are {', '.join(spec.targets)}")
    chosen = [spec.overload(n) for n in overloads] if overloads else list(spec.overloads)
    skipped: list[tuple[Overload, str]] = []
    if not overloads:  # overloads the target cannot express are left out, saying so
        for o in [o for o in chosen if target_for(target).unsupported(spec, o)]:
            skipped.append((o, target_for(target).unsupported(spec, o)))
            chosen.remove(o)
    if variant not in spec.variant_names():
        raise OpgenError(f"{op} declares no variant {variant!r}",
                         hint=f"choose one of {', '.join(spec.variant_names())}, or add it under 'variants:' in its spec")
    if chosen:  # a spec a constant kernel could pass, or whose tolerance or domain a correct kernel fails
        spec_sound(spec, chosen)  # (opgen spec check, the lint its first step), is fixed first; nothing is asked
    current: list[tuple[Overload, Entry]] = []
    if not force:
        registry = Registry(project.generated)
        for o in list(chosen):
            if (entry := current_entry(registry, spec, o, target, variant)) is not None:
                current.append((o, entry))
                chosen.remove(o)
    return SynthesisPlan(spec, target, variant, chosen, skipped, current)


def synthesize_plan(project: Project, plan: SynthesisPlan, llm: Any, *, max_attempts: int = 3,
                    settings: GateSettings = GateSettings(),
                    starting: Callable[[Overload], None] = lambda o: None,
                    report: Callable[[Overload, str], None] = lambda o, msg: None,
                    finished: Callable[[Overload, Any, float], None] = lambda o, result, seconds: None) -> list[Any]:
    """Synthesize each overload of ``plan`` in turn (ask, gate, repair, admit); returns the outcomes.
    ``starting(overload)``, ``report(overload, message)`` and ``finished(overload, outcome, seconds)``
    tell a caller how it goes."""
    results = []
    for o in plan.overloads:
        starting(o)
        started = time.monotonic()
        result = synthesize_overload(project, plan.spec, o, llm, target=plan.target, max_attempts=max_attempts,
                                     settings=settings, report=lambda msg, o=o: report(o, msg), lint=False,
                                     variant=plan.variant)
        finished(o, result, time.monotonic() - started)
        results.append(result)
    return results


def show_entries(project: Project, op: str, overload: str | None = None, target: str = "cpp") -> list[dict[str, Any]]:
    """``opgen show``'s data: each overload's entry for ``target`` (its entry.json, status, stale reasons,
    paths); for a missing one, the declaration its kernel must implement; for one the target cannot
    express, why."""
    specs = load_all(project.specs)
    spec = find_spec(specs, op)
    op = spec.op
    registry = Registry(project.generated)
    overloads = [spec.overload(overload)] if overload else spec.overloads
    t = target_for(target)
    target_id = t.target_id
    shown: list[dict[str, Any]] = []
    for o in overloads:
        if t.name not in spec.targets:
            shown.append({"op": op, "overload": o.name, "target": target_id, "status": "not listed",
                          "reason": f"{op} does not list target {t.name} (its targets: {', '.join(spec.targets)}); "
                                    "add it to the spec's targets to synthesize one"})
            continue
        if (why := t.unsupported(spec, o)) is not None:
            shown.append({"op": op, "overload": o.name, "target": target_id, "status": "n/a", "reason": why})
            continue
        entry = registry.get(op, o.name, target_id)
        if entry is None:  # what a kernel for it must implement, exactly as the prompt will ask for it
            shown.append({"op": op, "overload": o.name, "target": target_id, "status": "missing",
                          "language": t.language, "declaration": t.declaration(spec, o),
                          "signature": t.signature(spec, o)})
            continue
        status, reasons = entry.status(spec)
        shown.append({**entry.data, "status": status, "stale_reasons": reasons, "path": str(entry.path),
                      "names": [spec.op, *spec.aliases, *(m.name for m in spec.methods)],
                      "transcript_path": str(entry.file("transcript"))})
    return shown


def lint_ops(project: Project, ops: list[str] | None = None) -> list[Any]:
    """``opgen lint``: every overload of ``ops`` (default: every spec) through the spec linter."""
    specs = load_all(project.specs)
    chosen = [find_spec(specs, name) for name in ops] if ops else [specs[name] for name in sorted(specs)]
    return [r for spec in chosen for r in lint_spec(spec)]


def shard_failed(result: dict[str, Any]) -> bool:
    """Whether a nightly shard result holds a failure (an entry, a corpus outcome, a wrong or failing
    ONNX conformance case, a crashed phase)."""
    conformance = result.get("conformance") or {}
    return (any(e.get("result") in ("fail", "stale") for e in result["entries"])
            or any(r.get("outcome") != "expected" for r in (result.get("corpus") or {}).get("results", []))
            or bool((result.get("corpus") or {}).get("error")) or bool((result.get("bench") or {}).get("error"))
            or bool(conformance.get("error"))
            or any(c.get("status") in ("wrong", "error") for row in conformance.get("results", [])
                   for c in row.get("results", [])))
