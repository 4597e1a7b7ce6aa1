"""The static report site: ``reports/index.html``, one page per op, the nightly page.

Everything is rendered here, from ``model.collect``: no server, no CDN, no JavaScript
framework (one small script filters the index). Pages link to each other relatively,
so the folder can be opened from disk, uploaded as a CI artifact, or served.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from opgen.project import Project
from opgen.report.charts import ratio_chart
from opgen.report.highlight import source_html, stylesheet
from opgen.report.markdown import render_markdown
from opgen.report.model import collect

TEMPLATES = Path(__file__).with_name("templates")
STATIC = Path(__file__).with_name("static")


def op_page_name(op: str) -> str:
    """A file name for an op page (op names are dotted Python names: safe as they are)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", op) + ".html"


def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["sci"] = lambda v: "" if v is None else (f"{v:.3g}" if isinstance(v, float) else str(v))
    env.filters["ratio"] = lambda v: "" if v is None else f"{v:.2f}x"
    env.filters["seconds"] = lambda v: "" if v is None else (f"{v * 1e3:.3g} ms" if v < 1 else f"{v:.3g} s")
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=1, sort_keys=True, default=str)
    env.filters["firstline"] = lambda t: (t or "").strip().splitlines()[0] if (t or "").strip() else ""
    env.globals["op_page"] = op_page_name
    return env


def _transcript(entry: Any) -> dict[str, Any] | None:
    try:
        path = entry.file("transcript")
    except KeyError:
        return None
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError:
        return {"error": f"{path.name} is not JSON", "exchanges": []}
    exchanges = []
    for ex in data.get("exchanges", []):
        answer = ex.get("answer") or {}
        gate = ex.get("gate") or {}
        exchanges.append({"attempt": ex.get("attempt"), "messages": ex.get("request") or [],
                          "answer_source": answer.get("source", "") if isinstance(answer, dict) else str(answer),
                          "notes": answer.get("notes", "") if isinstance(answer, dict) else "",
                          "tokens": ex.get("tokens") or {}, "seconds": ex.get("seconds"),
                          "gate": {"stage": gate.get("stage"), "ok": gate.get("ok"), "feedback": gate.get("feedback", "")}})
    return {"started": data.get("started"), "finished": data.get("finished"), "file": path.name, "exchanges": exchanges}


def _entry_view(item: dict[str, Any]) -> dict[str, Any]:
    entry = item["entry"]
    data = entry.data
    files = []
    for role in ("kernel", "shim"):
        if role in data.get("files", {}):
            path = entry.file(role)
            text = path.read_text() if path.exists() else f"({path.name} is missing)"
            files.append({"role": role, "name": path.name, "html": Markup(source_html(text, path.name)),
                          "sha256": data["files"][role]["sha256"], "lines": text.count("\n") + 1})
    pv = data.get("provenance") or {}
    model = pv.get("model") or (pv.get("original") or {}).get("model")
    return {**{k: v for k, v in item.items() if k != "entry"}, "signature": data.get("signature") or {},
            "evidence": data.get("evidence") or {}, "provenance": pv, "model": model,
            "admitted_at": data.get("admitted_at"), "benchmark": data.get("benchmark"),
            "files": files, "transcript": _transcript(entry), "path": str(entry.path)}


def build_site(project: Project, reports_dir: Path | None = None) -> Path:
    """Render the whole site into ``reports_dir`` (default ``<root>/reports``); returns index.html."""
    out = Path(reports_dir) if reports_dir else project.reports
    data = collect(project, out)
    env = _env()
    (out / "assets").mkdir(parents=True, exist_ok=True)
    for name in ("report.css", "report.js"):
        shutil.copyfile(STATIC / name, out / "assets" / name)
    (out / "assets" / "pygments.css").write_text(stylesheet())

    ops_dir = out / "ops"
    if ops_dir.exists():
        shutil.rmtree(ops_dir)  # an op that disappeared must not leave its page behind
    ops_dir.mkdir()
    latest = data["latest"]
    for op in data["ops"].values():
        overloads = []
        for ov in op["overloads"].values():
            overloads.append({**ov, "entries": [_entry_view(e) for e in ov["entries"]]})
        bench = [{**b, "chart": Markup(ratio_chart(b["history"]))} for b in op["bench"]]
        regressions = [f for f in ((latest or {}).get("comparison") or {}).get("regressions", []) if f.get("op") == op["op"]]
        page = env.get_template("op.html").render(
            root="../", data=data, op=op, overloads=overloads, bench=bench, regressions=regressions,
            spec_html=Markup(source_html(op["spec_text"], "spec.yaml")) if op["spec_text"] else "",
            corpus=[{**c, "html": Markup(source_html(c["source"], c["name"] + ".cpp"))} for c in op["corpus"]],
            title=op["op"])
        (ops_dir / op_page_name(op["op"])).write_text(page)

    bench_rows = []
    if latest:
        series = {}
        for b in (latest.get("bench") or {}).get("results", []):
            op = data["ops"].get(b["op"])
            hist = next((x["history"] for x in (op or {}).get("bench", []) if x["key"] == b["key"]), [])
            series[b["key"]] = hist
            bench_rows.append({**b, "chart": Markup(ratio_chart(hist))})
    (out / "nightly.html").write_text(env.get_template("nightly.html").render(
        root="", data=data, latest=latest, bench=bench_rows, title="nightly"))
    (out / "index.html").write_text(env.get_template("index.html").render(root="", data=data, title="coverage"))
    (out / "summary.md").write_text(render_markdown(data))
    return out / "index.html"


