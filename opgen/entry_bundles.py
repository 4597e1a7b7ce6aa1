"""Moving what a synthesis shard produced to the machine that merges the shards (CI's matrix).

``pack`` bundles, from one run's ``opgen synthesize --json`` summary, exactly what that run wrote:
each admitted entry's directory, the recordings of the answers it received, and the transcripts of
the items that were not admitted. ``merge`` unpacks bundles into a project: every entry is checked
whole (each file's sha256 as its entry.json records) before it is placed, by the same atomic swap
admission uses; a recording already there is kept and the new one is put beside it (recordings are
never replaced); two bundles that disagree about one entry are a conflict, reported, not resolved.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from opgen.errors import OpgenError
from opgen.registry import Entry, Registry, sha256_file

MANIFEST = "bundle.json"


def pack(root: Path, summary: dict[str, Any], out: Path) -> dict[str, Any]:
    """Write ``out`` (a .tar.gz) holding what the run of ``summary`` wrote under ``root``; returns its manifest."""
    root = Path(root).resolve()
    entries, files = [], []
    for item in summary.get("items", []):
        if item.get("result") == "admitted" and item.get("entry"):
            entries.append(_inside(root, item["entry"]))
        files += [_inside(root, p) for p in item.get("recordings") or []]
        if item.get("result") in ("not admitted", "error") and item.get("transcript"):
            files.append(_inside(root, item["transcript"]))
    manifest = {"shard": summary.get("shard"), "entries": sorted(set(entries)), "files": sorted(set(files)),
                "totals": summary.get("totals", {})}
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:gz") as tar:
        data = (json.dumps(manifest, indent=2) + "\n").encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for rel in manifest["entries"] + manifest["files"]:
            if not (root / rel).exists():
                raise OpgenError(f"{rel} is in the summary but not under {root}",
                                 hint="pack on the machine that ran the synthesis, from the same project root")
            tar.add(root / rel, arcname=rel)
    return manifest


@dataclass
class Merged:
    placed: list[str] = field(default_factory=list)      # entries put into the registry
    unchanged: list[str] = field(default_factory=list)   # already there, identical
    files: list[str] = field(default_factory=list)       # recordings and transcripts copied
    kept_beside: list[str] = field(default_factory=list)  # a recording of that name was there: kept both
    conflicts: list[str] = field(default_factory=list)


def merge(root: Path, bundles: list[Path]) -> Merged:
    """Unpack every bundle into ``root``; raises OpgenError (having placed nothing) on a broken
    entry or a conflict between bundles or with the registry."""
    root = Path(root).resolve()
    merged = Merged()
    with tempfile.TemporaryDirectory(prefix="opgen-merge-") as scratch:
        staged: dict[str, tuple[Path, str]] = {}   # entry rel path -> (unpacked dir, digest)
        extra: dict[str, Path] = {}
        for n, bundle in enumerate(bundles):
            where = Path(scratch) / str(n)
            with tarfile.open(bundle, "r:gz") as tar:
                tar.extractall(where, filter="data")  # the data filter refuses absolute paths, links out, devices
            manifest = json.loads((where / MANIFEST).read_text())
            for rel in manifest["entries"]:
                directory = where / rel
                problems = Entry(directory, json.loads((directory / "entry.json").read_text())).integrity_problems()
                if problems:
                    raise OpgenError(f"{bundle}: entry {rel} is not whole: {'; '.join(problems)}",
                                     hint="re-run that shard; nothing was merged")
                digest = _tree_digest(directory)
                if rel in staged and staged[rel][1] != digest:
                    merged.conflicts.append(f"{rel}: two bundles hold different entries")
                staged[rel] = (directory, digest)
                target = root / rel
                if target.exists() and _tree_digest(target) != digest and rel not in merged.conflicts:
                    # The registry moved on meanwhile (another run admitted it): a person decides.
                    merged.conflicts.append(f"{rel}: the registry already holds a different entry")
            for rel in manifest["files"]:
                extra[rel] = where / rel
        if merged.conflicts:
            raise OpgenError("the bundles conflict: " + "; ".join(merged.conflicts),
                             hint="shards of one run never overlap: were two runs' bundles mixed? Merge them "
                                  "one run at a time; nothing was merged")
        registry = Registry(root / "generated")
        for rel, (directory, digest) in sorted(staged.items()):
            target = root / rel
            if target.exists():
                merged.unchanged.append(rel)
                continue
            data = json.loads((directory / "entry.json").read_text())
            files = {role: (f["path"], (directory / f["path"]).read_text()) for role, f in data["files"].items()}
            placed = registry.admit(data["op"], data["overload"], data["target"], files,
                                    {k: v for k, v in data.items() if k not in ("files", "variant")},
                                    variant=data.get("variant", "plain"))
            if placed.path.resolve() != target:
                raise OpgenError(f"entry {rel} says it is {placed.path.relative_to(root)}",
                                 hint="the bundle was edited by hand; re-run that shard")
            merged.placed.append(rel)
        for rel, source in sorted(extra.items()):
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                if sha256_file(target) == sha256_file(source):
                    continue
                beside = target.with_name(f"{target.stem}.from-{hashlib.sha256(source.read_bytes()).hexdigest()[:8]}"
                                          f"{target.suffix}")
                shutil.copyfile(source, beside)
                merged.kept_beside.append(str(beside.relative_to(root)))
                continue
            shutil.copyfile(source, target)
            merged.files.append(rel)
    return merged


def _inside(root: Path, path: str) -> str:
    p = Path(path)
    p = p if p.is_absolute() else root / p
    rel = p.resolve().relative_to(root)  # ValueError: not under the root
    return str(PurePosixPath(*rel.parts))


def _tree_digest(directory: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(directory.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(directory)).encode() + b"\0" + sha256_file(p).encode())
    return h.hexdigest()
