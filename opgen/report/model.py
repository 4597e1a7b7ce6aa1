"""What the report shows, gathered once: specs, registry status, nightly results, history, corpus.

Plain dicts and lists (no rendering here), shared by the HTML site and the Markdown
summary, so the two never disagree.

Cell status of one (op, overload, target), worst first:

    failed      the latest nightly run re-verified this very kernel (same sha256) and it failed
    stale       the spec or a file changed since admission; not served
    missing     the spec lists the target, nothing was admitted
    unverified  admitted without a device run and not re-verified for lack of hardware
    emulated    verified on the CPU execution layer only (GPU targets, no device at admission)
    verified    admitted, and not failed since
    n/a         the spec does not list this target
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opgen.errors import OpgenError
from opgen.service import status_rows
from opgen.nightly.compare import counts
from opgen.nightly.history import History
from opgen.project import Project
from opgen.spec.model import TARGET_IDS, load_all
from opgen.gate.corpus import corpus_dir, load_manifest
from opgen.conformance.mapping import MAPPINGS

TARGETS = list(TARGET_IDS.values())
STATUS_ORDER = ["failed", "stale", "missing", "unverified", "emulated", "verified"]
STATUS_HELP = {
    "verified": "admitted through the gate and not failed since",
    "emulated": "GPU kernel verified on the CPU execution layer only (no device run yet)",
    "unverified": "admitted without a run on its hardware or an emulator (lack of hardware)",
    "missing": "the spec lists this target; nothing admitted yet",
    "stale": "spec or files changed since admission; not served",
    "failed": "the latest nightly run re-verified this kernel and it failed",
    "n/a": "the spec does not list this target",
}


def worst(statuses: list[str]) -> str:
    known = [s for s in statuses if s in STATUS_ORDER]
    if known:
        return min(known, key=STATUS_ORDER.index)
    return statuses[0] if statuses else "n/a"


def entry_status(registry_status: str, nightly: dict[str, Any] | None, kernel_sha: str | None) -> str:
    """One variant's cell status from the registry's status and the latest nightly result.

    A nightly ``no_hardware`` leaves the registry's word standing (verified on a device at
    admission, or emulated); ``unverified`` is what the registry itself says of an entry
    that no device or emulator has run.
    """
    if registry_status in ("stale", "missing"):
        return registry_status
    # A nightly failure counts only for the kernel it ran: a re-admitted kernel starts clean.
    if nightly is not None and nightly.get("kernel_sha256") == kernel_sha and nightly.get("result") in ("fail", "stale"):
        return "failed"
    return registry_status


def collect(project: Project, reports_dir: Path | None = None) -> dict[str, Any]:
    reports_dir = Path(reports_dir) if reports_dir else project.reports
    specs = load_all(project.specs)
    rows = status_rows(project, specs)
    history = History(reports_dir / "nightly")
    latest = history.latest()
    index = history.index()
    nightly_entries = {e["id"]: e for e in (latest or {}).get("entries", [])}
    corpus_results = {r["name"]: r for r in (latest or {}).get("corpus", {}).get("results", [])}
    bench_now = (latest or {}).get("bench", {}).get("results", [])
    corpus, corpus_problem = _corpus_entries(project, specs)

    ops: dict[str, dict[str, Any]] = {}
    for name, spec in sorted(specs.items()):
        ops[name] = {"op": name, "summary": spec.summary, "reference": spec.reference, "tags": list(spec.tags),
                     "targets": [TARGET_IDS[t] for t in spec.targets], "edge_cases": list(spec.edge_cases),
                     "semantics": spec.semantics, "spec_path": _rel(project, spec.path),
                     "spec_text": Path(spec.path).read_text() if spec.path else "",
                     "overloads": {o.name: {"name": o.name, "signature": o.signature, "shape": _shape_text(o.shape),
                                            "entries": [], "cells": {}} for o in spec.overloads},
                     "corpus": [], "bench": [], "conformance": [], "orphan": False}
    for row in rows:
        op = ops.setdefault(row.op, {"op": row.op, "summary": "(no spec: this entry's spec is gone)", "reference": "",
                                     "tags": [], "targets": [], "edge_cases": [], "semantics": "", "spec_path": None,
                                     "spec_text": "", "overloads": {}, "corpus": [], "bench": [], "conformance": [],
                                     "orphan": True})
        ov = op["overloads"].setdefault(row.overload, {"name": row.overload, "signature": "", "shape": "",
                                                       "entries": [], "cells": {}})
        variant = getattr(row, "variant", None) or (row.entry.data.get("variant") if row.entry else None) or "plain"
        ident = f"{row.target}/{row.op}/{row.overload}/{variant}"
        kernel_sha = (row.entry.data.get("files", {}).get("kernel") or {}).get("sha256") if row.entry else None
        nightly = nightly_entries.get(ident)
        status = entry_status(row.status, nightly, kernel_sha)
        item = {"id": ident, "target": row.target, "variant": variant, "status": status,
                "registry_status": row.status, "reasons": list(row.reasons), "served": getattr(row, "served", None),
                "nightly": nightly, "entry": row.entry, "kernel_sha256": kernel_sha}
        if row.entry is not None:
            ov["entries"].append(item)
        ov["cells"].setdefault(row.target, []).append(status)
    for op in ops.values():
        for ov in op["overloads"].values():
            ov["matrix"] = {t: worst(ov["cells"][t]) if t in ov["cells"] else "n/a" for t in TARGETS}
            ov["entries"].sort(key=lambda e: (TARGETS.index(e["target"]) if e["target"] in TARGETS else 99,
                                              e["variant"] != "plain", e["variant"]))
        op["statuses"] = sorted({s for ov in op["overloads"].values() for s in ov["matrix"].values()})

    for entry in corpus:
        if entry["op"] in ops:
            ops[entry["op"]]["corpus"].append({**entry, "latest": corpus_results.get(entry["name"])})
    series = bench_series(index)
    for b in bench_now:
        if b.get("op") in ops:
            ops[b["op"]]["bench"].append({**b, "history": series.get(b["key"], [])})

    conformance = conformance_view(latest)
    for row in conformance["rows"]:
        if row.get("opgen_op") in ops:
            ops[row["opgen_op"]]["conformance"].append(row)
    for op in ops.values():
        op["conformance_cell"] = conformance_cell(op["conformance"])

    matrix_counts = {t: {s: 0 for s in STATUS_ORDER + ["n/a"]} for t in TARGETS}
    for op in ops.values():
        for ov in op["overloads"].values():
            for t, s in ov["matrix"].items():
                matrix_counts[t][s] = matrix_counts[t].get(s, 0) + 1
    totals = {s: sum(c.get(s, 0) for c in matrix_counts.values()) for s in STATUS_ORDER}

    return {
        "ops": ops, "targets": TARGETS, "statuses": STATUS_ORDER, "status_help": STATUS_HELP,
        "counts": matrix_counts, "totals": totals,
        "latest": latest, "latest_counts": counts(latest) if latest else None,
        "history": index, "corpus_problem": corpus_problem,
        "corpus_total": len(corpus), "conformance": conformance,
    }


CONFORMANCE_STATUSES = ("pass", "wrong", "error", "inexpressible")


def conformance_view(latest: dict[str, Any] | None) -> dict[str, Any]:
    """The latest nightly run's ONNX conformance rows (one per ONNX op and target) in the mapping
    table's order, with their totals; ``ran`` False (and why) when there are none."""
    part = (latest or {}).get("conformance") or {}
    order = {m.onnx_op: i for i, m in enumerate(MAPPINGS)}
    rows = sorted(part.get("results", []), key=lambda r: (order.get(r.get("onnx_op"), len(order)),
                                                          TARGETS.index(r["target"]) if r.get("target") in TARGETS
                                                          else len(TARGETS)))
    for row in rows:
        row["failing"] = [c for c in row.get("results", []) if c.get("status") in ("wrong", "error")]
    totals = {k: sum(int(r.get(k) or 0) for r in rows) for k in ("cases", *CONFORMANCE_STATUSES, "partial")}
    if latest is None:
        why = "no nightly run is recorded yet"
    else:
        why = part.get("error") or part.get("reason") or (None if rows else "the latest nightly run has no conformance results")
    return {"ran": bool(rows), "rows": rows, "totals": totals, "error": part.get("error"), "reason": why,
            "onnx": part.get("onnx") or next((r.get("onnx") for r in rows if r.get("onnx")), None)}


def conformance_cell(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The coverage matrix's conformance cell of one op: its ONNX ops' tallies, per target."""
    if not rows:
        return None
    bad = any(r.get("wrong") or r.get("error") for r in rows)
    lines = [f"{r['onnx_op']} {r['target']}: {r.get('pass', 0)}/{r.get('cases', 0)} pass"
             + "".join(f", {r[k]} {k}" for k in ("wrong", "error", "inexpressible") if r.get(k)) for r in rows]
    first = rows[0]["target"]
    shown = [r for r in rows if r["target"] == first]
    text = ", ".join(f"{r['onnx_op']} {r.get('pass', 0)}/{r.get('cases', 0)}" for r in shown)
    return {"status": "failed" if bad else "verified", "text": text, "target": first, "title": "; ".join(lines),
            "anchor": f"conformance-{rows[0]['target']}-{rows[0]['onnx_op']}"}


def bench_series(index: list[dict[str, Any]]) -> dict[str, list[tuple[str, float]]]:
    """Benchmark ratio per key over the recorded runs, oldest first."""
    series: dict[str, list[tuple[str, float]]] = {}
    for run in index:
        for key, ratio in (run.get("bench") or {}).items():
            if ratio is not None:
                series.setdefault(key, []).append((run["run_id"], float(ratio)))
    return series


def _corpus_entries(project: Project, specs: dict) -> tuple[list[dict[str, Any]], str | None]:

    directory = corpus_dir(project)
    if not (directory / "manifest.yaml").exists():
        return [], None
    try:
        entries = load_manifest(directory, specs)
    except OpgenError as exc:
        return [], exc.render()
    return [{"name": e.name, "op": e.op, "overload": e.overload, "cheat": e.cheat, "layer": e.layer,
             "expected": e.expect.describe(), "source": e.source, "note": e.note} for e in entries], None


def _shape_text(shape: Any) -> str:
    if shape is None:
        return ""
    if isinstance(shape, dict):
        return ", ".join(f"{k}: {v}" for k, v in shape.items())
    return str(shape)


def _rel(project: Project, path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return str(Path(path).resolve().relative_to(project.root))
    except ValueError:
        return str(path)
