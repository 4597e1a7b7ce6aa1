"""One builder per cache key, not per cache.

Builds are cached by key (a hash of the sources, flags and toolchain) under a cache root that
many processes share: pytest's workers, ``synthesize --workers``, a nightly run beside a
developer's ``opgen verify``. Two processes must never compile the same key at once (they would
write the same files), but a process compiling four hundred kernels must not make another one,
which needs one small kernel, wait for all four hundred either (one lock over the whole cache did
exactly that: a test that needed one build waited minutes behind another worker's import audit).

So each key has its own lock (a ``flock``ed file, released by the kernel when its holder dies): a
builder claims the keys nobody holds, builds them, and only then waits for the keys it found
claimed, building itself any whose builder left no library behind (its compile failed, or it was
killed). Locks are taken without blocking while others are held, so two builders that want
overlapping sets cannot deadlock. A long batch is claimed a chunk at a time and each chunk's locks
are released as soon as it is compiled: holding all of a four-hundred-kernel batch's keys until the
last one built made a test that needed one of them wait for the whole batch (minutes in CI).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from filelock import FileLock, Timeout

WAIT_SECONDS = 1800  # the longest another builder's compile of one batch is waited for


def key_lock(root: Path, key: str) -> FileLock:
    """The lock of one cache key under ``root`` (a file in ``root/.locks``)."""
    locks = root / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    return FileLock(str(locks / f"{key}.lock"))


def build_unclaimed(root: Path, keys: Iterable[str], is_built: Callable[[str], bool],
                    compile_keys: Callable[[list[str]], None], wait_seconds: float = WAIT_SECONDS,
                    chunk: int | None = None) -> set[str]:
    """Build the keys that are not built yet, each by exactly one process at a time.

    ``is_built(key)``: whether the key's library exists (checked again once its lock is held).
    ``compile_keys(keys)``: compile these keys (in one parallel run); called with their locks held,
    possibly more than once (a second time for keys another builder gave up on).
    ``chunk``: the most keys claimed (and so held) at once; ``default_chunk()`` by default.
    Returns the keys this call compiled (the others were cached, or built by another process)."""
    chunk = chunk or default_chunk()
    todo = [k for k in dict.fromkeys(keys) if not is_built(k)]
    compiled: set[str] = set()
    while todo:
        mine: list[str] = []
        held: list[FileLock] = []
        busy: list[str] = []
        unclaimed: list[str] = []
        try:
            for i, key in enumerate(todo):
                if len(mine) == chunk:
                    unclaimed = todo[i:]
                    break
                lock = key_lock(root, key)
                try:
                    lock.acquire(timeout=0)
                except Timeout:
                    busy.append(key)
                    continue
                held.append(lock)
                if not is_built(key):  # built by the process that held it a moment ago
                    mine.append(key)
            if mine:
                compile_keys(mine)
                compiled.update(mine)
        finally:
            for lock in held:
                lock.release()
        if unclaimed:  # claim the rest (and look at the busy ones again) before waiting for anyone
            todo = unclaimed + [k for k in busy if not is_built(k)]
            continue
        if not busy:
            break
        # Wait for the first claimed key's builder (the rest are usually in the same chunk), then
        # look at all of them again: built ones are done, abandoned ones are claimed here.
        first = key_lock(root, busy[0])
        try:
            first.acquire(timeout=wait_seconds)
        except Timeout:
            raise TimeoutError(f"another process has been building {busy[0]} under {root} for over "
                               f"{wait_seconds:.0f} s (a key's lock is released when its holder exits, so "
                               "that process is still running: look for a stuck compiler)") from None
        first.release()
        todo = [k for k in busy if not is_built(k)]
    return compiled


def default_chunk() -> int:
    """Keys per claim: enough to keep every core compiling, few enough that a process waiting for
    one of them waits seconds, not the whole batch (an import audit claims hundreds of kernels)."""
    return max(16, 4 * (os.cpu_count() or 1))
