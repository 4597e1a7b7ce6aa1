"""Recorded exchanges: answers kept by request hash so a run can be replayed offline.

A recording is made whenever a provider (file exchange or an HTTP endpoint) answers a
request. Replaying one re-uses the answer only; building and verification run afresh.
Provenance travels with the recording and is never rewritten: a replay says who
originally answered, and that it is a replay.

A run never replaces a recording that is already there (the shipped ones are what a fresh
clone replays): its own answer to the same request is kept beside it, under a timestamped
name replay does not read. ``scripts/record_answers.py`` is the one way to replace a shipped
recording (it sets ``OPGEN_REPLACE_RECORDINGS=1`` for the runs it makes).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from opgen.llm.response import KernelAnswer
from opgen.targets.catalog import target_for


def request_hash(messages: list[dict[str, str]], target: str = "cpp") -> str:
    """What a recording is found by: the conversation and the answer schema (the target's)."""
    blob = {"messages": messages, "schema": target_for(target).answer_model.model_json_schema()}
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


REPLACE_ENV = "OPGEN_REPLACE_RECORDINGS"


class Recordings:
    def __init__(self, root: Path, replace: bool | None = None):
        self.root = Path(root)
        # None: as $OPGEN_REPLACE_RECORDINGS says (scripts/record_answers.py sets it to 1).
        self.replace = os.environ.get(REPLACE_ENV) == "1" if replace is None else replace

    def path_for(self, op: str, overload: str, target: str, digest: str) -> Path:
        return self.root / op / f"{overload}.{target}.{digest[:16]}.json"

    def find(self, digest: str) -> dict[str, Any] | None:
        for p in sorted(self.root.glob(f"*/*.{digest[:16]}.json")):
            data = json.loads(p.read_text())
            if data.get("request_hash") == digest:
                data["_path"] = str(p)
                return data
        return None

    def save(self, op: str, overload: str, target: str, messages: list[dict[str, str]], answer: KernelAnswer,
             provenance: dict[str, Any]) -> Path:
        digest = request_hash(messages, target)
        path = self.path_for(op, overload, target, digest)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and not self.replace:  # beside it: replay keeps finding the one already there
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%f")
            path = path.with_name(f"{path.stem}.{stamp}.json")
        data = {
            "request_hash": digest,
            "op": op,
            "overload": overload,
            "target": target,
            "messages": messages,
            "answer": answer.model_dump(),
            "provenance": provenance,
        }
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".rec-")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
        return path
