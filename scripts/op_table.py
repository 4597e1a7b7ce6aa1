"""Rewrite the table in README.md's "## The op library" section from specs/.

Usage: python scripts/op_table.py [--check]

``--check`` only says whether the table is current (exit 1 if not); tests/test_readme.py checks
the same thing row by row, with the difference in its message.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opgen.spec.model import load_all  # noqa: E402


def table() -> str:
    rows = ["| op | also reachable as | overloads | targets |", "|---|---|---|---|"]
    for op, spec in sorted(load_all(ROOT / "specs").items()):
        names = ", ".join(f"`{n}`" for n in (*spec.aliases, *(m.name for m in spec.methods)))
        rows.append(f"| `{op}` | {names} | {', '.join(o.name for o in spec.overloads)} | {', '.join(spec.targets)} |")
    return "\n".join(rows) + "\n"


def rewrite(text: str) -> str:
    start = text.index("## The op library")
    end = text.index("\n## ", start + 1)
    section = text[start:end]
    first = section.index("| op |")
    last = max(i for i in range(len(section)) if section.startswith("|", i) and (i == 0 or section[i - 1] == "\n"))
    last = section.index("\n", last) + 1
    return text[:start] + section[:first] + table() + section[last:] + text[end:]


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text()
    new = rewrite(text)
    if "--check" in sys.argv[1:]:
        if new != text:
            print("README.md's op table is out of date: run python scripts/op_table.py", file=sys.stderr)
            return 1
        return 0
    readme.write_text(new)
    print("README.md's op table rewritten from specs/" if new != text else "README.md's op table is current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
