"""The README against the repository: its two set-up commands are what CI runs (and all a fresh clone
needs), and every path it names exists."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"

# Directories the README's paths may start with: the repository's own (tracked) ones.
SOURCE_DIRS = {"opgen", "specs", "prompts", "scripts", "tests", "clients", "examples", "verification",
               "generated", "answers", "benchmarks", ".ci", ".github"}
# Inline code that looks like a path but names no file of the repository: what commands write
# (`opgen report`, `opgen nightly`, `opgen compile --out OUT`), a file named where its directory is
# already given, and values.
NOT_REPOSITORY_PATHS = {"index.json", "latest.json", "opgen_abi.h", "n/a", "dimensions=512/256/128"}
OUTPUT_PREFIXES = ("reports/", "OUT/")
FILE_SUFFIX = re.compile(r"\.(py|md|ya?ml|json|h|hpp|c|cpp|cu|metal|rs|sh|js|toml|txt|html)$")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, re.S)]


def setup_commands() -> tuple[str, str]:
    """The README's first two commands: set up and run the main job; run the tests."""
    blocks = bash_blocks(readme())
    assert len(blocks) >= 2, "README.md should start with two ```bash blocks (set up, run the tests)"
    first, second = blocks[:2]
    assert "\n" not in first and "\n" not in second, f"each set-up command is one line: {blocks[:2]}"
    return first, second


def without_quiet(command: str) -> str:
    return " ".join(w for w in command.split() if w not in ("-q", "-qq"))


def ci_commands() -> list[str]:
    return [line.strip() for line in CI.read_text().splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_the_readme_commands():
    ci = [without_quiet(line) for line in ci_commands()]
    for command in setup_commands():
        assert without_quiet(command) in ci, f".ci/run does not run the README's command `{command}`"


def test_the_test_command_prepares_the_node_client_itself():
    """A fresh clone needs only the README's two commands: the test command installs the Node
    client's dependency (koffi) itself, so CI must not be what does it."""
    _, tests = setup_commands()
    assert tests.split()[0] == "scripts/test.sh", f"the README's test command is `{tests}`"
    script = ROOT / "scripts" / "test.sh"
    assert os.access(script, os.X_OK), "scripts/test.sh must be executable (chmod +x)"
    assert "npm ci" in script.read_text(), "scripts/test.sh no longer installs the Node client's dependency"
    npm_in_ci = [line for line in ci_commands() if re.search(r"\bnpm\s+(ci|install|i)\b", line)]
    assert not npm_in_ci, (f".ci/run installs Node packages itself ({npm_in_ci}): then CI would pass where a fresh "
                           "clone following the README fails; leave it to the README's test command")


def mentioned_paths(text: str) -> list[tuple[int, str]]:
    """(line, path) for every path the README names: inline code that looks like a path, link
    targets, and paths under the repository's directories inside code blocks."""
    found: list[tuple[int, str]] = []
    in_block = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_block = not in_block
            continue
        if in_block:
            for token in re.findall(r"[\w.<>/-]+", line):
                if "/" in token and token.split("/")[0] in SOURCE_DIRS:
                    found.append((n, token))
            continue
        for span in re.findall(r"`([^`\n]+)`", line):
            if " " not in span and ("/" in span or FILE_SUFFIX.search(span)):
                found.append((n, span))
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if "://" not in target and not target.startswith("#"):
                found.append((n, target.split("#")[0]))
    return found


def test_readme_paths_exist():
    found = mentioned_paths(readme())
    assert len(found) > 40, f"only {len(found)} paths found in README.md: the scan is broken"
    missing = [f"- README.md:{n}: `{path}`" for n, path in found
               if path not in NOT_REPOSITORY_PATHS and not path.startswith(OUTPUT_PREFIXES) and "<" not in path
               and not (ROOT / path.rstrip("/")).exists()]
    assert not missing, ("paths named in README.md that do not exist (write them from the repository root; "
                         "a command's output goes in NOT_REPOSITORY_PATHS / OUTPUT_PREFIXES here):\n"
                         + "\n".join(missing))


def library_section() -> str:
    text = readme()
    start = text.index("## The op library")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def test_the_op_list_matches_the_specs():
    """The README's table of ops names every spec once, with its aliases, overloads and targets, and
    nothing else (``python scripts/op_table.py`` rewrites it from specs/)."""
    # The spec model: only this test reads the specs.
    from opgen.spec.model import load_all

    specs = load_all(ROOT / "specs")
    rows = [line for line in library_section().splitlines() if line.startswith("| `")]
    listed, overloads, targets = {}, {}, {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        op = cells[0].strip("`")
        listed[op] = set(re.findall(r"`([^`]+)`", cells[1]))
        overloads[op] = [o.strip() for o in cells[2].split(",")]
        targets[op] = [t.strip() for t in cells[3].split(",")]
    assert set(listed) == set(specs), (f"README.md's op list differs from specs/: missing {sorted(set(specs) - set(listed))}, "
                                       f"not a spec {sorted(set(listed) - set(specs))}")
    for op, spec in specs.items():
        names = {*spec.aliases, *(m.name for m in spec.methods)}
        assert listed[op] == names, f"README.md lists {sorted(listed[op])} for {op}; its spec names {sorted(names)}"
        assert overloads[op] == [o.name for o in spec.overloads], (
            f"README.md lists the overloads {overloads[op]} for {op}; its spec has {[o.name for o in spec.overloads]}")
        assert targets[op] == list(spec.targets), f"README.md lists the targets {targets[op]} for {op}; its spec {spec.targets}"
