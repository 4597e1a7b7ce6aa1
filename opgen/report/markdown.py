"""The report as Markdown: for CI logs, ``$GITHUB_STEP_SUMMARY`` and pull-request comments."""

from __future__ import annotations

from typing import Any

MAX_ROWS = 40  # a PR comment stays readable; the site has everything


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(data: dict[str, Any]) -> str:
    latest, c = data["latest"], data["latest_counts"]
    lines: list[str] = []
    if latest is None:
        lines.append("## opgen report: no nightly run recorded yet")
        lines.append("")
        lines.append("Run `opgen nightly` to re-verify the registry; the coverage below is the registry's own status.")
    else:
        cmp = latest.get("comparison") or {}
        verdict = "passed" if cmp.get("ok") else "FAILED"
        lines.append(f"## opgen nightly `{latest['run_id']}`: {verdict}")
        lines.append("")
        prev = cmp.get("previous_run")
        lines.append(f"Budget `{latest['budget']['name']}` ({latest['budget']['admission_runs']} x "
                     f"{latest['budget']['admission_examples']} fresh-seed examples + {latest['budget']['dev_examples']} "
                     f"development + {latest['budget']['sanitizer_examples']} under ASan+UBSan per entry), "
                     f"{len(latest.get('shards', []))} shard(s), {latest.get('seconds', 0):.0f} s; "
                     + (f"compared with `{prev}`" if prev else "no previous run to compare with")
                     + f"; benchmark noise band {cmp.get('noise_band', 0):.0%}.")
        lines.append("")
        lines.append(f"- entries: {c['passed']} passed, {c['failed']} failed, {c['stale']} stale, "
                     f"{c['no_hardware']} without hardware (of {c['entries']})")
        corpus = latest.get("corpus") or {}
        if corpus.get("ran"):
            lines.append(f"- adversarial corpus: {c['corpus_expected']} of {c['corpus']} rejected as expected")
        else:
            lines.append(f"- adversarial corpus: not run ({corpus.get('error') or corpus.get('reason', '')})")
        bench = latest.get("bench") or {}
        lines.append(f"- benchmarks: {c['benchmarks']} measured" if bench.get("ran")
                     else f"- benchmarks: not run ({bench.get('error') or bench.get('reason', '')})")
        for title, key in (("Regressions", "regressions"), ("Failures", "failures"), ("Improvements", "improvements")):
            found = cmp.get(key) or []
            if key == "failures":
                found = [f for f in found if not f.get("new")]  # the new ones are listed as regressions
                title = "Still failing"
            if not found:
                continue
            lines.append("")
            lines.append(f"### {title} ({len(found)})")
            for f in found[:MAX_ROWS]:
                detail = f" — {f['detail']}" if f.get("detail") else ""
                lines.append(f"- {f['summary']}{detail}")
            if len(found) > MAX_ROWS:
                lines.append(f"- ... and {len(found) - MAX_ROWS} more (see the report)")
        results = bench.get("results") or []
        if results:
            prev_ratio = {f["id"]: f.get("previous_ratio") for f in (cmp.get("regressions", []) + cmp.get("improvements", []))
                          if f["kind"] == "bench"}
            lines.append("")
            lines.append("### Benchmarks (ratio = reference time / kernel time; > 1: the kernel is faster)")
            lines.append("")
            lines.append("| op | overload | target | variant | case | kernel | reference | ratio | note |")
            lines.append("|---|---|---|---|---|---|---|---|---|")
            for b in results[:MAX_ROWS]:
                note = f"was {prev_ratio[b['key']]:.2f}x" if b["key"] in prev_ratio else ""
                lines.append("| " + " | ".join(_cell(x) for x in (
                    b["op"], b["overload"], b["target"], b.get("variant") or "plain", b["case"],
                    _secs(b.get("kernel_s")), f"{b.get('reference')} {_secs(b.get('reference_s'))}",
                    f"{b['ratio']:.2f}x" if b.get("ratio") is not None else "", note)) + " |")
    conf = data.get("conformance") or {}
    if conf.get("rows"):
        t = conf["totals"]
        lines.append("")
        lines.append(f"### ONNX conformance (ONNX {conf.get('onnx') or '?'} backend node cases): {t['pass']} pass, "
                     f"{t['wrong']} wrong, {t['error']} error, {t['inexpressible']} inexpressible of {t['cases']}")
        lines.append("")
        lines.append("| ONNX op | opgen op | target | cases | pass | wrong | error | inexpressible | most common reason |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for r in conf["rows"][:MAX_ROWS]:
            top = (r.get("reasons") or [{}])[0]
            reason = f"{top['count']}x {', '.join(top['subjects'][:2])}: {top['why']}" if top else ""
            lines.append("| " + " | ".join(_cell(x) for x in (
                r["onnx_op"], r.get("opgen_op"), r["target"], r.get("cases"), r.get("pass"), r.get("wrong"),
                r.get("error"), r.get("inexpressible"), reason)) + " |")
        if len(conf["rows"]) > MAX_ROWS:
            lines.append(f"| ... and {len(conf['rows']) - MAX_ROWS} more (see the report) |||||||||")
    lines.append("")
    lines.append("### Coverage (op overloads per target)")
    lines.append("")
    statuses = data["statuses"]
    lines.append("| target | " + " | ".join(statuses) + " |")
    lines.append("|---|" + "---|" * len(statuses))
    for t in data["targets"]:
        lines.append(f"| {t} | " + " | ".join(str(data["counts"][t].get(s, 0)) for s in statuses) + " |")
    lines.append("")
    return "\n".join(lines)


def _secs(v: float | None) -> str:
    if v is None:
        return ""
    return f"{v * 1e3:.3g} ms" if v < 1 else f"{v:.3g} s"
