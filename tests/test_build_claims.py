"""One builder per cache key (opgen.build.claims): a build of other keys never waits for a long
batch, a key being built elsewhere is waited for and not compiled twice, and a key whose builder
left no library behind is built by the one that waited. Threads stand in for processes: each
takes its own flock on a key's file, which excludes the others exactly as another process would."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from opgen.build.claims import build_unclaimed


class FakeCache:
    """A cache whose compiles the test releases: ``gates[key]`` holds a key's compile until set."""

    def __init__(self, root: Path):
        self.root = root
        self.gates: dict[str, threading.Event] = {}
        self.started: dict[str, threading.Event] = {}
        self.failing: set[str] = set()  # builders whose compiles fail (write no library)
        self.compiles: list[tuple[str, list[str]]] = []

    def built(self, key: str) -> bool:
        return (self.root / key / "lib.so").exists()

    def compiler(self, who: str):
        def compile_keys(keys: list[str]) -> None:
            self.compiles.append((who, list(keys)))
            for key in keys:
                self.started.setdefault(key, threading.Event()).set()
            for key in keys:
                if key in self.gates:
                    assert self.gates[key].wait(10), f"the test never released {key}"
            for key in keys:
                if who not in self.failing:
                    (self.root / key).mkdir(parents=True, exist_ok=True)
                    (self.root / key / "lib.so").write_text("built by " + who)
        return compile_keys

    def build(self, who: str, keys: list[str]) -> set[str]:
        return build_unclaimed(self.root, keys, self.built, self.compiler(who), wait_seconds=20)

    def in_background(self, who: str, keys: list[str]) -> tuple[threading.Thread, dict[str, set[str]]]:
        return self.in_background_chunked(who, keys, chunk=None)

    def in_background_chunked(self, who: str, keys: list[str],
                              chunk: int | None) -> tuple[threading.Thread, dict[str, set[str]]]:
        out: dict[str, set[str]] = {}
        thread = threading.Thread(
            target=lambda: out.setdefault("built", build_unclaimed(self.root, keys, self.built, self.compiler(who),
                                                                   wait_seconds=20, chunk=chunk)), daemon=True)
        thread.start()
        return thread, out


def test_other_keys_build_while_a_long_batch_holds_its_own(tmp_path: Path) -> None:
    cache = FakeCache(tmp_path)
    cache.gates["slow"] = threading.Event()
    long_batch, _ = cache.in_background("audit", ["slow"])
    assert cache.started.setdefault("slow", threading.Event()).wait(10)
    begun = time.monotonic()
    assert cache.build("test", ["small"]) == {"small"}
    assert time.monotonic() - begun < 5  # not behind the batch: it is still compiling
    assert long_batch.is_alive() and not cache.built("slow")
    cache.gates["slow"].set()
    long_batch.join(10)
    assert cache.built("slow")


def test_a_key_being_built_elsewhere_is_waited_for_not_compiled_twice(tmp_path: Path) -> None:
    cache = FakeCache(tmp_path)
    cache.gates["shared"] = threading.Event()
    first, first_out = cache.in_background("first", ["shared"])
    assert cache.started.setdefault("shared", threading.Event()).wait(10)
    second, second_out = cache.in_background("second", ["shared", "own"])
    deadline = time.monotonic() + 10
    while not cache.built("own") and time.monotonic() < deadline:  # its unclaimed key first
        time.sleep(0.01)
    assert cache.built("own") and second.is_alive()  # ... and now waiting for "shared"
    cache.gates["shared"].set()
    first.join(10)
    second.join(10)
    assert first_out["built"] == {"shared"} and second_out["built"] == {"own"}
    assert (tmp_path / "shared" / "lib.so").read_text() == "built by first"
    assert sorted(who for who, keys in cache.compiles if "shared" in keys) == ["first"]


def test_a_key_its_builder_gave_up_on_is_built_by_the_one_that_waited(tmp_path: Path) -> None:
    cache = FakeCache(tmp_path)
    cache.gates["flaky"] = threading.Event()
    cache.failing.add("first")
    first, first_out = cache.in_background("first", ["flaky"])
    assert cache.started.setdefault("flaky", threading.Event()).wait(10)
    second, second_out = cache.in_background("second", ["flaky"])
    time.sleep(0.2)  # the second is waiting for the first's lock
    cache.gates["flaky"].set()
    first.join(10)
    second.join(10)
    assert first_out["built"] == {"flaky"} and second_out["built"] == {"flaky"}
    assert [who for who, _ in cache.compiles] == ["first", "second"]
    assert (tmp_path / "flaky" / "lib.so").read_text() == "built by second"


def test_cached_keys_take_no_lock_and_compile_nothing(tmp_path: Path) -> None:
    cache = FakeCache(tmp_path)
    assert cache.build("one", ["a", "b", "a"]) == {"a", "b"}
    assert cache.compiles == [("one", ["a", "b"])]  # a key named twice compiles once
    assert cache.build("two", ["a", "b"]) == set()
    assert len(cache.compiles) == 1


def test_a_long_batch_releases_each_chunk_as_it_is_compiled(tmp_path: Path) -> None:
    """A key early in a long batch is not held until the batch's last key is built."""
    cache = FakeCache(tmp_path)
    cache.gates["last"] = threading.Event()
    batch = [f"k{i}" for i in range(5)] + ["last"]
    long_batch, _ = cache.in_background_chunked("audit", batch, chunk=2)
    assert cache.started.setdefault("last", threading.Event()).wait(10)
    begun = time.monotonic()
    assert cache.build("test", ["k0"]) == set()  # built by the batch's first chunk, not again here
    assert time.monotonic() - begun < 5 and long_batch.is_alive()
    cache.gates["last"].set()
    long_batch.join(10)
    assert [keys for who, keys in cache.compiles if who == "audit"] == [["k0", "k1"], ["k2", "k3"], ["k4", "last"]]
