"""The CI side of `opgen synthesize --shard I/N` (.github/workflows/synthesize.yml), runnable locally:

    python scripts/synthesis_shards.py pack summary.json --out entries-1.tar.gz   # on a shard
    python scripts/synthesis_shards.py merge entries-*.tar.gz                     # on the merge job
    python scripts/synthesis_shards.py table summary-*.json                       # a Markdown summary

`pack` bundles exactly what that shard's run wrote (its admitted entries, the recordings of the
answers it got, the transcripts of what was not admitted); `merge` checks every entry whole and
places it with the registry's atomic swap, keeps recordings beside any already there, and refuses
(placing nothing) when two bundles disagree. See opgen/entry_bundles.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opgen.entry_bundles import merge, pack  # noqa: E402  (after the path: runnable from a checkout)
from opgen.errors import OpgenError  # noqa: E402


def table(summaries: list[dict]) -> str:
    totals: dict[str, int] = {}
    lines = ["| shard | op | overload | target | result | attempts | seconds |", "|---|---|---|---|---|---|---|"]
    for s in summaries:
        for i in s["items"]:
            totals[i["result"]] = totals.get(i["result"], 0) + 1
            if i["result"] in ("current", "n/a"):
                continue  # nothing happened to it
            lines.append(f"| {s['shard']} | {i['op']} | {i['overload']} | {i['target']} | {i['result']} | "
                         f"{i.get('attempts', 0)} | {i.get('seconds', 0):.0f} |")
    head = ", ".join(f"{n} {k}" for k, n in sorted(totals.items())) or "nothing to do"
    return f"### synthesis: {head}\n\n" + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: the current directory)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="bundle what one shard's run wrote")
    p.add_argument("summary", type=Path, help="that run's `opgen synthesize --json` output")
    p.add_argument("--out", type=Path, required=True)
    m = sub.add_parser("merge", help="unpack shard bundles into the project")
    m.add_argument("bundles", type=Path, nargs="*")
    t = sub.add_parser("table", help="a Markdown table of shard summaries")
    t.add_argument("summaries", type=Path, nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "pack":
            manifest = pack(args.root, json.loads(args.summary.read_text()), args.out)
            print(f"packed {len(manifest['entries'])} entries and {len(manifest['files'])} files into {args.out}")
        elif args.command == "merge":
            done = merge(args.root, args.bundles)
            print(f"merged {len(args.bundles)} bundles: {len(done.placed)} entries placed, {len(done.unchanged)} "
                  f"already there, {len(done.files)} files copied, {len(done.kept_beside)} recordings kept beside "
                  "one already there")
            for rel in done.placed:
                print(f"  placed {rel}")
        else:
            summaries = [json.loads(p.read_text()) for p in args.summaries if p.stat().st_size]
            print(table(summaries))
    except OpgenError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
