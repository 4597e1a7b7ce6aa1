"""Deterministic slices of the nightly work for a CI matrix.

Every unit of work (an entry to re-verify, a corpus entry, an op to benchmark) has a
stable key, and its shard is a hash of that key alone: adding or removing an entry never
moves any other entry to another shard, and every machine computes the same slices
without talking to the others.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterable, TypeVar

from opgen.errors import OpgenError

T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as people and CI matrices count
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
        if not m:
            raise OpgenError(f"--shard {text!r} is not of the form I/N",
                             hint="e.g. --shard 2/4 runs the second of four slices (1 <= I <= N)")
        index, count = int(m.group(1)), int(m.group(2))
        if count < 1 or not 1 <= index <= count:
            raise OpgenError(f"--shard {text}: I must be between 1 and N (N >= 1)", hint="e.g. --shard 1/4 ... 4/4")
        return cls(index, count)

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, key: str) -> bool:
        return shard_of(key, self.count) == self.index

    def select(self, items: Iterable[T], key) -> list[T]:
        return [item for item in items if self.owns(key(item))]


WHOLE = Shard(1, 1)


def shard_of(key: str, count: int) -> int:
    """The 1-based shard a key belongs to among ``count``."""
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count + 1
