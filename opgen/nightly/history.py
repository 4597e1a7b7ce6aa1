"""Nightly results on disk: merging shards, the run files, latest.json and the history index.

Layout under ``reports/nightly/`` (beside the report site, not committed):

    <run-id>.json      one complete (merged) run, with its comparison to the previous run
    latest.json        a copy of the newest run
    index.json         one small line per run (counts, entry results, benchmark ratios) for trends
    shards/            shard results waiting to be merged

CI keeps the directory between runs (the workflow caches it); locally it accumulates.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from opgen.errors import OpgenError
from opgen.nightly.compare import bench_baseline, compare, counts
from opgen.nightly.run import SCHEMA

INDEX_SCHEMA = "opgen-nightly-index/1"
KEEP_RUN_FILES = 60  # full run files kept; the index keeps more
KEEP_INDEX = 500


def write_json(path: Path, data: Any) -> Path:
    """Write atomically: a reader (the report, a concurrent merge) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return path


def load_result(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise OpgenError(f"{path} does not exist", hint="pass the shard files that `opgen nightly --shard I/N` wrote") from None
    except json.JSONDecodeError as exc:
        raise OpgenError(f"{path} is not JSON ({exc})", hint="was the shard job cut off? re-run that shard") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise OpgenError(f"{path} is not an opgen nightly result (schema {data.get('schema') if isinstance(data, dict) else None!r})",
                         hint=f"expected schema {SCHEMA!r}, as written by `opgen nightly`")
    return data


def shard_file_name(result: dict[str, Any]) -> str:
    s = result["shards"][0]
    group = "+".join(t.replace("cpu-", "") for t in s["targets"])
    return f"{result['run_id']}.{group}.shard-{s['index']}-of-{s['count']}.json"


def _merge_results(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """One entry verified in two shard groups (e.g. a CPU shard that had no GPU and the GPU job):
    a real result beats ``no_hardware``; between two real results a failure wins."""
    rank = {"no_hardware": 0, "pass": 1, "stale": 2, "fail": 3}
    return a if rank.get(a.get("result"), 0) >= rank.get(b.get("result"), 0) else b


def merge(results: list[dict[str, Any]], *, allow_partial: bool = False) -> dict[str, Any]:
    """Shard results of one run into one result. Every shard of each group (same N, same
    targets) must be present, once, unless ``allow_partial`` (then the gaps are recorded)."""
    if not results:
        raise OpgenError("nothing to merge", hint="pass the shard files, e.g. reports/nightly/shards/*.json")
    run_ids = sorted({r["run_id"] for r in results})
    if len(run_ids) > 1:
        raise OpgenError(f"the shard files come from different runs: {', '.join(run_ids)}",
                         hint="merge the shards of one run; give every shard the same --run-id")
    budgets = {json.dumps(r["budget"], sort_keys=True) for r in results}
    if len(budgets) > 1:
        raise OpgenError("the shards ran with different budgets", hint="run every shard with the same --budget and overrides")
    groups: dict[tuple[int, tuple[str, ...]], dict[int, dict[str, Any]]] = {}
    for r in results:
        for s in r["shards"]:
            key = (s["count"], tuple(s["targets"]))
            if s["index"] in groups.setdefault(key, {}):
                raise OpgenError(f"shard {s['index']}/{s['count']} ({', '.join(s['targets'])}) appears twice",
                                 hint="pass each shard file once")
            groups[key][s["index"]] = s
    gaps = [f"{i}/{count} ({', '.join(targets)})" for (count, targets), seen in groups.items()
            for i in range(1, count + 1) if i not in seen]
    if gaps and not allow_partial:
        raise OpgenError(f"missing shard results: {', '.join(gaps)}",
                         hint="wait for those shards, re-run them, or merge with --allow-partial to report what there is")

    entries: dict[str, dict[str, Any]] = {}
    for r in results:
        for e in r.get("entries", []):
            entries[e["id"]] = _merge_results(entries[e["id"]], e) if e["id"] in entries else e
    corpus_runs = [r.get("corpus", {}) for r in results]
    bench_runs = [r.get("bench", {}) for r in results]
    conformance_runs = [r.get("conformance", {}) for r in results]
    first = results[0]
    merged = {
        "schema": SCHEMA, "run_id": run_ids[0],
        "started": min(r["started"] for r in results), "finished": max(r.get("finished", r["started"]) for r in results),
        "seconds": round(max(r.get("seconds", 0) for r in results), 1),
        "verify_seconds": round(sum(r.get("verify_seconds") or 0 for r in results), 1),
        "budget": first["budget"], "ops": first.get("ops"),
        "targets": sorted({t for r in results for t in r["targets"]}),
        "shards": sorted((s for r in results for s in r["shards"]), key=lambda s: (s["targets"], s["index"])),
        "missing_shards": gaps,
        "machine": first.get("machine"), "libraries": first.get("libraries"), "git_commit": first.get("git_commit"),
        "entries": sorted(entries.values(), key=lambda e: e["id"]),
        "corpus": _merge_part(corpus_runs, "name"),
        "bench": _merge_part(bench_runs, "key"),
        "conformance": _merge_part(conformance_runs, "key"),
    }
    if onnx := next((p.get("onnx") for p in conformance_runs if p.get("onnx")), None):
        merged["conformance"]["onnx"] = onnx
    return merged


def _merge_part(parts: list[dict[str, Any]], key: str) -> dict[str, Any]:
    ran = [p for p in parts if p.get("ran")]
    out: dict[str, Any] = {"ran": bool(ran), "results": sorted((x for p in ran for x in p.get("results", [])),
                                                                key=lambda x: x[key])}
    errors = [p["error"] for p in parts if p.get("error")]
    if errors:
        out["error"] = "\n".join(errors)
    if not ran:
        out["reason"] = "; ".join(sorted({p.get("reason", "") for p in parts if p.get("reason")})) or "not run"
    out["seconds"] = round(sum(p.get("seconds") or 0 for p in ran), 1)
    if any("rounds" in p for p in ran):
        out["rounds"] = max(p.get("rounds", 0) for p in ran)
    return out


class History:
    def __init__(self, directory: Path):
        self.dir = Path(directory)

    @property
    def index_path(self) -> Path:
        return self.dir / "index.json"

    @property
    def shards_dir(self) -> Path:
        return self.dir / "shards"

    def index(self) -> list[dict[str, Any]]:
        """Runs, oldest first."""
        if not self.index_path.exists():
            return []
        try:
            data = json.loads(self.index_path.read_text())
        except json.JSONDecodeError as exc:
            raise OpgenError(f"{self.index_path} is not JSON ({exc})",
                             hint="restore it from a backup or delete it to start a new history") from None
        return sorted(data.get("runs", []), key=lambda r: r["started"])

    def run(self, run_id: str) -> dict[str, Any] | None:
        path = self.dir / f"{run_id}.json"
        return load_result(path) if path.exists() else None

    def latest(self) -> dict[str, Any] | None:
        path = self.dir / "latest.json"
        return load_result(path) if path.exists() else None

    def previous(self, run_id: str) -> dict[str, Any] | None:
        """The newest recorded run other than ``run_id`` whose full result is still on disk."""
        for line in reversed(self.index()):
            if line["run_id"] != run_id and (found := self.run(line["run_id"])) is not None:
                return found
        return None

    def record(self, result: dict[str, Any]) -> Path:
        path = write_json(self.dir / f"{result['run_id']}.json", result)
        runs = [r for r in self.index() if r["run_id"] != result["run_id"]] + [index_line(result)]
        runs.sort(key=lambda r: r["started"])
        runs = runs[-KEEP_INDEX:]
        write_json(self.index_path, {"schema": INDEX_SCHEMA, "runs": runs})
        newest = runs[-1]["run_id"]
        write_json(self.dir / "latest.json", result if newest == result["run_id"] else self.run(newest))
        kept = {r["run_id"] for r in runs[-KEEP_RUN_FILES:]}
        for old in self.dir.glob("*.json"):
            if old.name not in ("index.json", "latest.json") and old.stem not in kept:
                old.unlink()
        return path


def index_line(result: dict[str, Any]) -> dict[str, Any]:
    cmp = result.get("comparison", {})
    return {
        "run_id": result["run_id"], "started": result["started"], "finished": result.get("finished"),
        "ok": cmp.get("ok"), "budget": result["budget"]["name"], "git_commit": result.get("git_commit"),
        "machine": (result.get("machine") or {}).get("cpu"),
        "counts": counts(result),
        "entries": {e["id"]: e.get("result") for e in result.get("entries", [])},
        "bench": {b["key"]: b.get("ratio") for b in result.get("bench", {}).get("results", [])},
        "regressions": [f["summary"] for f in cmp.get("regressions", [])][:50],
    }


def finalize(history: History, result: dict[str, Any], noise_band: float) -> dict[str, Any]:
    """Compare a complete run with the previous one, and record it."""
    result = dict(result)
    result["noise_band"] = noise_band
    earlier = [r for r in history.index() if r["run_id"] != result["run_id"]]
    result["comparison"] = compare(result, history.previous(result["run_id"]), noise_band,
                                   baseline=bench_baseline(earlier) if earlier else None)
    history.record(result)
    return result
