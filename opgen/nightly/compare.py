"""What changed since the previous nightly run: failures, regressions, improvements.

Pure functions over result dicts (``opgen-nightly/1``), so the rules are tested without
running anything. The rules:

- an entry that does not verify (``fail``) or is stale is a failure; it is a regression
  when the previous run did not fail it (or there is no previous run);
- a corpus entry not rejected as its manifest expects (admitted, or rejected for another
  reason) is a failure; a regression when the previous run rejected it as expected;
- a benchmark whose ratio (reference time / kernel time) fell more than the noise band
  below its baseline is a regression; rising more than the band is an improvement. The
  baseline is the median ratio of the same key over the last three recorded runs (the
  previous run alone when there is no history), so one noisy night does not flap;
- a benchmark whose kernel output disagrees with the reference on the bench inputs is a
  failure (a benchmark of a wrong answer is no benchmark);
- an ONNX conformance case (``opgen conformance onnx``) that is wrong or an error is a failure;
  a regression when the previous run did not have that case wrong or an error (an inexpressible
  case is coverage, not a failure);
- benchmarks, the corpus or the conformance suite failing to run at all is a failure.

A run is ok when it has no failures and no regressions; ``opgen nightly`` exits 1 otherwise.
"""

from __future__ import annotations

import statistics
from typing import Any

FAILING = ("fail", "stale")


def _finding(kind: str, ident: str, op: str | None, summary: str, detail: str = "", new: bool = True,
             **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "id": ident, "op": op, "summary": summary, "detail": detail, "new": new, **extra}


def _by(items: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {item[key]: item for item in items if key in item}


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""


def bench_baseline(runs: list[dict[str, Any]], keep: int = 3) -> dict[str, float]:
    """Per benchmark key, the median ratio over the newest ``keep`` runs that measured it.

    ``runs`` are history index lines, oldest first. One noisy night (a busy CI runner) then
    neither raises a false alarm the next night nor hides a real drop for long.
    """
    seen: dict[str, list[float]] = {}
    for run in reversed(runs):
        for key, ratio in (run.get("bench") or {}).items():
            if ratio is not None and len(seen.setdefault(key, [])) < keep:
                seen[key].append(float(ratio))
    return {key: statistics.median(values) for key, values in seen.items() if values}


def compare(current: dict[str, Any], previous: dict[str, Any] | None, noise_band: float,
            baseline: dict[str, float] | None = None) -> dict[str, Any]:
    """``baseline``: benchmark ratio per key to compare against (``bench_baseline``); by
    default the previous run's ratios."""
    if not 0 <= noise_band < 1:
        raise ValueError(f"noise band {noise_band} must be in [0, 1)")
    prev_entries = _by(previous.get("entries", []), "id") if previous else {}
    prev_corpus = _by((previous or {}).get("corpus", {}).get("results", []), "name")
    prev_bench = _by((previous or {}).get("bench", {}).get("results", []), "key")
    failures, regressions, improvements, notes = [], [], [], []
    if gaps := current.get("missing_shards"):
        failures.append(_finding("run", "shards", None, f"shard results missing: {', '.join(gaps)}",
                                 "merged with --allow-partial; the entries of those shards were not re-verified"))
        regressions.append(failures[-1])

    for e in current.get("entries", []):
        before = prev_entries.get(e["id"])
        was_failing = before is not None and before.get("result") in FAILING
        if e.get("result") in FAILING:
            new = not was_failing
            what = "is stale" if e["result"] == "stale" else f"no longer verifies (stage {e.get('stage')})"
            f = _finding("entry", e["id"], e["op"], f"{e['id']} {what}" + ("" if new else ", as in the previous run"),
                         _first_line(e.get("message")), new, seeds=e.get("seeds"))
            failures.append(f)
            if new:
                regressions.append(f)
        elif e.get("result") == "pass" and was_failing:
            improvements.append(_finding("entry", e["id"], e["op"], f"{e['id']} verifies again"))
        elif e.get("result") == "no_hardware" and before is not None and before.get("result") == "pass":
            notes.append(_finding("entry", e["id"], e["op"], f"{e['id']} not re-verified: {e.get('message')}"))

    corpus = current.get("corpus", {})
    if corpus.get("error"):
        failures.append(_finding("corpus", "corpus", None, "the corpus did not run", corpus["error"]))
        regressions.append(failures[-1])
    for r in corpus.get("results", []):
        before = prev_corpus.get(r["name"])
        if r.get("outcome") == "expected":
            if before is not None and before.get("outcome") != "expected":
                improvements.append(_finding("corpus", r["name"], r["op"], f"corpus entry {r['name']} is rejected as expected again"))
            continue
        new = before is None or before.get("outcome") == "expected"
        got = r.get("got", {})
        how = "admitted (a hole in the gate)" if r.get("outcome") == "admitted" else \
            f"rejected for another reason ({got.get('stage')}/{'+'.join(got.get('kinds', []))})"
        exp = r.get("expected", {})
        f = _finding("corpus", r["name"], r["op"],
                     f"corpus entry {r['name']} ({r['op']} {r['overload']}, {r.get('cheat')}) was {how}"
                     + ("" if new else ", as in the previous run"),
                     f"expected {'|'.join(exp.get('stage', []))}" + (f"/{exp['kind']}" if exp.get("kind") else "")
                     + (f"; got: {_first_line(got.get('message'))}" if got.get("message") else ""), new)
        failures.append(f)
        if new:
            regressions.append(f)

    _conformance(current, previous, failures, regressions, improvements)

    bench = current.get("bench", {})
    if bench.get("error"):
        failures.append(_finding("bench", "bench", None, "the benchmarks did not run", bench["error"]))
        regressions.append(failures[-1])
    for b in bench.get("results", []):
        before = prev_bench.get(b["key"])
        if b.get("agrees") is False:  # timing a wrong answer: the kernel is broken on the bench shape
            new = before is None or before.get("agrees") is not False
            f = _finding("bench", b["key"], b["op"], f"{b['key']}: the kernel's output disagrees with "
                         f"{b.get('reference')} on the benchmark inputs" + ("" if new else ", as in the previous run"),
                         b.get("note") or "", new)
            failures.append(f)
            if new:
                regressions.append(f)
            continue
        ratio = b.get("ratio")
        old = baseline.get(b["key"]) if baseline is not None else (before or {}).get("ratio")
        if ratio is None or old is None or old <= 0:
            continue
        change = ratio / old - 1
        text = f"{b['key']}: ratio {old:.3g}{' (recent median)' if baseline is not None else ''} -> {ratio:.3g} ({change:+.0%}"
        if ratio < old * (1 - noise_band):
            regressions.append(_finding("bench", b["key"], b["op"], text + f", beyond the {noise_band:.0%} noise band)",
                                        new=True, ratio=ratio, previous_ratio=old))
        elif ratio > old * (1 + noise_band):
            improvements.append(_finding("bench", b["key"], b["op"], text + ")", ratio=ratio, previous_ratio=old))

    return {"previous_run": previous.get("run_id") if previous else None, "noise_band": noise_band,
            "failures": failures, "regressions": regressions, "improvements": improvements, "notes": notes,
            "ok": not failures and not regressions}


CONFORMANCE_FAILING = ("wrong", "error")


def _failing_cases(row: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    return {r["case"]: r for r in (row or {}).get("results", []) if r.get("status") in CONFORMANCE_FAILING}


def _conformance(current: dict[str, Any], previous: dict[str, Any] | None, failures: list, regressions: list,
                 improvements: list) -> None:
    """Findings of the ONNX conformance phase: per ONNX op and target, its wrong and error cases."""
    conf = current.get("conformance") or {}
    if conf.get("error"):
        failures.append(_finding("conformance", "conformance", None, "the ONNX conformance suite did not run",
                                 conf["error"]))
        regressions.append(failures[-1])
    before_rows = _by(((previous or {}).get("conformance") or {}).get("results", []), "key")
    for row in conf.get("results", []):
        bad, before = _failing_cases(row), _failing_cases(before_rows.get(row["key"]))
        if not bad:
            if before:
                improvements.append(_finding("conformance", row["key"], row.get("opgen_op"),
                                             f"ONNX conformance {row['key']}: no case wrong or an error any more"))
            continue
        fresh = sorted(set(bad) - set(before))
        new = bool(fresh)
        counted = ", ".join(f"{row.get(s, 0)} {s}" for s in CONFORMANCE_FAILING if row.get(s))
        f = _finding("conformance", row["key"], row.get("opgen_op"),
                     f"ONNX conformance {row['key']} ({row.get('opgen_op')}): {counted} of {row.get('cases')} cases"
                     + ("" if new else ", as in the previous run"),
                     "; ".join(f"{name} ({bad[name]['status']}): {_first_line(bad[name].get('message'))[:160]}"
                               for name in (fresh or sorted(bad))[:3]), new, cases=sorted(bad))
        failures.append(f)
        if new:
            regressions.append(f)


def counts(result: dict[str, Any]) -> dict[str, int]:
    """Headline numbers of a run, for the history index and summaries."""
    entries = result.get("entries", [])
    corpus = result.get("corpus", {}).get("results", [])
    cmp = result.get("comparison", {})
    return {
        "entries": len(entries),
        "passed": sum(e.get("result") == "pass" for e in entries),
        "failed": sum(e.get("result") == "fail" for e in entries),
        "stale": sum(e.get("result") == "stale" for e in entries),
        "no_hardware": sum(e.get("result") == "no_hardware" for e in entries),
        "corpus": len(corpus),
        "corpus_expected": sum(r.get("outcome") == "expected" for r in corpus),
        "benchmarks": len(result.get("bench", {}).get("results", [])),
        **{f"conformance_{k}": sum(int(row.get(k) or 0) for row in (result.get("conformance") or {}).get("results", []))
           for k in ("cases", "pass", "wrong", "error", "inexpressible")},
        "failures": len(cmp.get("failures", [])),
        "regressions": len(cmp.get("regressions", [])),
        "improvements": len(cmp.get("improvements", [])),
    }
