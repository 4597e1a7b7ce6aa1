"""Admit the hand-written answers in answers/<target>/ through the file-exchange provider.

This is exactly the air-gapped user's path (``opgen synthesize --provider file``):
run once to get the prompt, save the answer beside it, run again. The exchange is
recorded under generated/recordings/, which is what lets ``opgen synthesize`` replay it
offline, and the registry entry's provenance says provider "file", no model, and who
answered. Usage:

    python scripts/record_answers.py [--answered-by WHO] [--target cpp|rust|cuda|metal] [--force] [OP__OVERLOAD[@VARIANT] ...]

CUDA (.cu) and Metal (.metal) answers go through the same gate on the CPU execution layer
(nvcc compiles the CUDA ones too) and are admitted as ``emulated``.
    python scripts/record_answers.py --prune     # delete recordings no entry asks for any more
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def record(answer: Path, answered_by: str, examples: int | None, force: bool = False) -> int:
    op, overload = answer.stem.split("__")
    overload, _, variant = overload.partition("@")  # op__overload@variant.cpp holds a variant
    target = answer.parent.name
    with tempfile.TemporaryDirectory(prefix="opgen-exchange-") as tmp:
        cmd = ["opgen", "synthesize", op, "--overload", overload, "--variant", variant or "plain",
               "--target", target, "--provider", "file",
               "--exchange-dir", tmp, "--answered-by", answered_by, "--max-attempts", "1", "--root", str(ROOT)]
        if examples:
            cmd += ["--examples", str(examples)]
        if force:  # the entry is current, but its prompt changed (or its answer): admit the answer again
            cmd += ["--force"]
        first = subprocess.run(cmd, capture_output=True, text=True)
        if first.returncode != 3:
            print(first.stdout, first.stderr, file=sys.stderr)
            return first.returncode or 1
        prompt = next(Path(tmp).glob("*.prompt.md"))
        shutil.copy(answer, prompt.with_name(prompt.name.replace(".prompt.md", f".answer.{answer.suffix[1:]}")))
        # The one way a shipped recording is replaced: a run of synthesize otherwise keeps its own beside it.
        return subprocess.run(cmd, env={**os.environ, "OPGEN_REPLACE_RECORDINGS": "1"}).returncode


def prune() -> int:
    """Delete recordings that no registry entry's current first request matches."""
    from opgen.llm.recordings import request_hash
    from opgen.project import Project
    from opgen.prompts import render_request
    from opgen.registry import Registry
    from opgen.spec.model import TARGET_IDS, load_all

    project = Project(ROOT)
    specs = load_all(project.specs)
    cli_target = {v: k for k, v in TARGET_IDS.items()}
    keep = set()
    for e in Registry(project.generated).entries():
        if e.op in specs:
            spec = specs[e.op]
            messages = render_request(project.prompts, spec, spec.overload(e.overload), cli_target[e.target], e.variant)
            keep.add(request_hash(messages, cli_target[e.target])[:16])
    removed = [p for p in sorted(project.recordings.glob("*/*.json")) if p.stem.rsplit(".", 1)[-1] not in keep]
    for p in removed:
        p.unlink()
        print(f"removed {p.relative_to(ROOT)}")
    print(f"{len(removed)} recordings removed")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*",
                        help="answer file stems, e.g. operator.matmul__f32 or operator.matmul__f32@blocked (default: all)")
    parser.add_argument("--answered-by", default="opgen developers (hand-written answers in answers/)")
    parser.add_argument("--examples", type=int, default=None)
    parser.add_argument("--target", choices=("cpp", "rust", "cuda", "metal"), default=None,
                        help="only answers/<target>/ (default: every target; a name may match one in each)")
    parser.add_argument("--force", action="store_true",
                        help="admit again even where the entry is current (its recording is then replaced)")
    parser.add_argument("--prune", action="store_true", help="only delete recordings no entry asks for any more")
    args = parser.parse_args()
    if args.prune:
        return prune()
    answers = sorted(p for p in (ROOT / "answers").glob("*/*") if p.suffix in (".cpp", ".rs", ".cu", ".metal"))
    if args.target:
        answers = [a for a in answers if a.parent.name == args.target]
    if args.names:
        answers = [a for a in answers if a.stem in args.names]
    failed = [a.stem for a in answers if record(a, args.answered_by, args.examples, args.force) != 0]
    print(f"{len(answers) - len(failed)} admitted, {len(failed)} failed {failed or ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
