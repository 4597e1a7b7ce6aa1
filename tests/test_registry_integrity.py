"""Registry integrity: tampering is reported, concurrent admissions do not corrupt the
registry, and SIGKILL at any moment of an admission leaves an entry exactly as it was
before or exactly as it is after.

The concurrency and kill tests drive Registry.admit from real child processes (the
same code path `opgen synthesize` uses to admit), with files large enough that a kill
can land in the middle of writing, fsyncing, swapping or cleaning up.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.service import status_rows
from opgen.project import Project
from opgen.registry import Registry
from tests.conftest import CHECKOUT, isolate_env

runner = CliRunner()
OP, TARGET = "operator.add", "cpu-cpp"

# ----------------------------------------------------------------- opgen verify --all on a tampered registry


def test_verify_all_reports_a_tampered_kernel_and_a_missing_shim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    for d in ("specs", "prompts", "generated"):
        shutil.copytree(CHECKOUT / d, root / d)
    # The scalar ops' entries are enough to show tampering next to healthy entries, and
    # keep this test quick (tests/test_shipped_library.py re-verifies the whole registry).
    for entry_dir in (root / "generated" / "cpp").iterdir():
        if entry_dir.name not in ("operator.add", "operator.mul"):
            shutil.rmtree(entry_dir)
            continue
        for overload_dir in entry_dir.iterdir():  # the scalar overloads (the tensor ones grow with the library)
            if overload_dir.name not in ("int", "float", "str", "str_repeat"):
                shutil.rmtree(overload_dir)
    for other in ("rust", "cuda", "metal"):  # C++ alone: the other targets' rows are then missing, not re-verified
        shutil.rmtree(root / "generated" / other, ignore_errors=True)
    isolate_env(monkeypatch, root)
    verified = [r for r in status_rows(Project(root)) if r.status == "verified"]
    assert len(verified) >= 3, "the shipped registry should hold at least three verified entries"
    tampered, unshimmed, *others = verified

    kernel = tampered.entry.file("kernel")
    data = bytearray(kernel.read_bytes())
    data[len(data) // 2] ^= 0x01  # one byte, one bit
    kernel.write_bytes(bytes(data))
    unshimmed.entry.file("shim").unlink()

    result = runner.invoke(app, ["verify", "--all", "--json", "--examples", "10", "--root", str(root)],
                           catch_exceptions=False)
    assert result.exit_code == 1, result.output
    rows = {(r["op"], r["overload"], r["target"]): r for r in json.loads(result.stdout)["results"]}
    bad = rows[(tampered.op, tampered.overload, tampered.target)]
    assert (bad["ok"], bad["stage"]) == (False, "stale")
    assert bad["message"] == "kernel file kernel.cpp changed since admission (sha256 differs)"
    gone = rows[(unshimmed.op, unshimmed.overload, unshimmed.target)]
    assert (gone["ok"], gone["stage"]) == (False, "stale")
    assert gone["message"] == "shim file shim.cpp is missing"
    for r in others:  # every other entry is rebuilt and re-verified on fresh seeds
        row = rows[(r.op, r.overload, r.target)]
        assert (row["ok"], row["stage"]) == (True, "pass"), row
        # --examples 10: development and two admission runs, the scale stage's few cases and, for a
        # threaded overload, those cases and 30 drawn examples again at two thread counts
        assert 0 < row["examples"] <= 30 + 16 + 2 * (16 + 30)
    # The human-readable listing says the same.
    listing = runner.invoke(app, ["list", "--json", "--root", str(root)], catch_exceptions=False)
    status = {(r["op"], r["overload"], r["target"]): (r["status"], r["reasons"]) for r in json.loads(listing.output)}
    assert status[(tampered.op, tampered.overload, tampered.target)] == \
        ("stale", ["kernel file kernel.cpp changed since admission (sha256 differs)"])
    assert status[(unshimmed.op, unshimmed.overload, unshimmed.target)] == ("stale", ["shim file shim.cpp is missing"])


# ----------------------------------------------------------------- child processes that admit

# Two versions of one entry. B has an extra file, so a directory holding a mix of A
# and B (or a half-finished swap) is told apart from either by its listing alone.
CHILD = textwrap.dedent('''
    import json, sys
    from opgen.registry import Registry

    root, overload, rounds, first = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

    def variant(v):
        files = {"kernel": ("kernel.cpp", f"// variant {v}\\n" + v.lower() * (300_000 if v == "A" else 200_000)),
                 "shim": ("shim.cpp", f"// shim {v}\\n" + "s" * 50_000)}
        if v == "B":
            files["transcript"] = ("transcript.json", json.dumps({"v": "B", "pad": "t" * 400_000}))
        return files, {"op": "operator.add", "overload": overload, "target": "cpu-cpp", "marker": v}

    registry = Registry(root)
    print("ready", flush=True)
    sys.stdin.readline()  # go
    n = 0
    while rounds < 0 or n < rounds:
        v = "AB"[(n + (first == "B")) % 2]
        files, data = variant(v)
        registry.admit("operator.add", overload, "cpu-cpp", files, data)
        n += 1
''')


def expected_files(variant: str) -> list[str]:
    return sorted(["entry.json", "kernel.cpp", "shim.cpp"] + (["transcript.json"] if variant == "B" else []))


def start_child(root: Path, overload: str, rounds: int, first: str = "A") -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(root), overload, str(rounds), first],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=CHECKOUT)
    assert child.stdout.readline().strip() == "ready"
    return child


def go(*children: subprocess.Popen) -> None:
    for c in children:
        c.stdin.write("go\n")
        c.stdin.flush()


def assert_whole(registry: Registry, overload: str) -> str:
    """The entry is a complete, hash-consistent A or B; returns which."""
    entry = registry.get(OP, overload, TARGET)
    assert entry is not None, "the entry vanished"
    variant = entry.data["marker"]
    assert variant in ("A", "B")
    assert entry.integrity_problems() == []
    assert sorted(p.name for p in entry.path.iterdir()) == expected_files(variant)
    assert entry.file("kernel").read_text().startswith(f"// variant {variant}\n")
    return variant


def leftovers(registry: Registry) -> list[str]:
    base = registry.root / "cpp" / OP
    return sorted(p.name for p in base.iterdir() if p.name.startswith(".")) if base.is_dir() else []


# ----------------------------------------------------------------- concurrency


@pytest.mark.parametrize("overloads", [("int", "str"), ("int", "int")], ids=["different-overloads", "same-overload"])
def test_concurrent_admissions_never_corrupt_the_registry(tmp_path: Path, overloads: tuple[str, str]) -> None:
    registry = Registry(tmp_path / "generated")
    rounds = 25
    children = [start_child(registry.root, o, rounds, first) for o, first in zip(overloads, "AB")]
    go(*children)
    seen = 0
    # A reader during the admissions: the entry never disappears and entry.json is never partial.
    while any(c.poll() is None for c in children):
        for o in set(overloads):
            entry = registry.get(OP, o, TARGET)
            if entry is not None:
                assert entry.data["marker"] in ("A", "B")
                seen += 1
    for c in children:
        assert c.wait() == 0
    assert seen > 0
    for o in set(overloads):
        assert_whole(registry, o)
    assert sorted(e.overload for e in registry.entries()) == sorted(set(overloads))
    for e in registry.entries():
        assert e.integrity_problems() == []
    assert leftovers(registry) == []  # finished admissions leave nothing staged behind


# ----------------------------------------------------------------- SIGKILL mid-admission


def test_sigkill_at_any_moment_leaves_the_entry_before_or_after(tmp_path: Path) -> None:
    registry = Registry(tmp_path / "generated")
    # How long one admission takes here, so the kills spread over whole admissions.
    first = start_child(registry.root, "int", 6, "A")
    started = time.monotonic()
    go(first)
    assert first.wait() == 0
    period = (time.monotonic() - started) / 6
    assert assert_whole(registry, "int") == "B"  # A, B, A, B, A, B

    rng = random.Random(20240611)
    outcomes: dict[str, int] = {"A": 0, "B": 0}
    with_leftovers = 0
    for _ in range(30):
        child = start_child(registry.root, "int", -1, "A")  # A, B, A, ... until killed
        go(child)
        time.sleep(rng.uniform(0, 4 * period))
        child.send_signal(signal.SIGKILL)
        assert child.wait() == -signal.SIGKILL
        outcomes[assert_whole(registry, "int")] += 1
        # Whatever a killed admission left behind is never served.
        assert [(e.overload, e.path.name) for e in registry.entries()] == [("int", "int")]
        with_leftovers += bool(leftovers(registry))
    assert outcomes["A"] and outcomes["B"], outcomes  # kills landed before and after swaps

    # The next admission of the entry clears what killed ones left behind.
    last = start_child(registry.root, "int", 1, "A")
    go(last)
    assert last.wait() == 0
    assert assert_whole(registry, "int") == "A"
    assert leftovers(registry) == []
    print(f"\n30 kills: {outcomes['A']} left A, {outcomes['B']} left B, {with_leftovers} left staged leftovers; "
          f"one admission takes {period * 1000:.1f} ms")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_replacing_an_entry_is_one_renameat2_exchange(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = Registry(tmp_path / "generated")
    files = {"kernel": ("kernel.cpp", "// A\n"), "shim": ("shim.cpp", "// shim\n")}
    data = {"op": OP, "overload": "int", "target": TARGET, "marker": "A"}
    registry.admit(OP, "int", TARGET, files, data)

    def no_rename(*args: object) -> None:
        raise AssertionError("replacing an entry fell back to two renames (a window with no entry)")

    monkeypatch.setattr(os, "rename", no_rename)
    entry = registry.admit(OP, "int", TARGET, {**files, "kernel": ("kernel.cpp", "// B\n")}, {**data, "marker": "B"})
    assert entry.file("kernel").read_text() == "// B\n"
    assert entry.integrity_problems() == []


def test_without_an_exchange_the_two_rename_fallback_still_replaces(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import opgen.registry as registry_module

    monkeypatch.setattr(registry_module, "_exchange", lambda a, b: False)
    registry = Registry(tmp_path / "generated")
    files = {"kernel": ("kernel.cpp", "// variant A\n"), "shim": ("shim.cpp", "// shim\n")}
    registry.admit(OP, "int", TARGET, files, {"marker": "A"})
    registry.admit(OP, "int", TARGET, {**files, "kernel": ("kernel.cpp", "// variant B\n")}, {"marker": "B"})
    entry = registry.get(OP, "int", TARGET)
    assert entry.data["marker"] == "B" and entry.integrity_problems() == []
    assert leftovers(registry) == []


def test_a_kill_between_the_fallback_renames_is_undone_by_the_next_admission(tmp_path: Path) -> None:
    registry = Registry(tmp_path / "generated")
    files = {"kernel": ("kernel.cpp", "// variant A\n"), "shim": ("shim.cpp", "// shim\n")}
    final = registry.admit(OP, "int", TARGET, files, {"marker": "A"}).path
    # The state a kill between `rename(final, old)` and `rename(staged, final)` leaves.
    os.rename(final, final.with_name(".int.old-4242"))
    (final.parent / ".int.staged-x1y2z3").mkdir()
    assert registry.get(OP, "int", TARGET) is None and list(registry.entries()) == []

    from opgen.registry import _recover

    with registry.lock():
        _recover(final)
    entry = registry.get(OP, "int", TARGET)
    assert entry.data["marker"] == "A" and entry.integrity_problems() == []  # exactly as before
    assert leftovers(registry) == []


def test_verify_prints_each_failures_whole_message_after_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The table cuts a failure's detail to a line; a CI log must still hold the whole reason.
    root = tmp_path / "project"
    for d in ("specs", "prompts"):
        shutil.copytree(CHECKOUT / d, root / d)
    entry = CHECKOUT / "generated" / "cpp" / "numpy.exp" / "f32"
    shutil.copytree(entry, root / "generated" / "cpp" / "numpy.exp" / "f32")
    isolate_env(monkeypatch, root)
    (root / "generated" / "cpp" / "numpy.exp" / "f32" / "shim.cpp").unlink()
    result = runner.invoke(app, ["verify", "numpy.exp", "--target", "cpp", "--root", str(root)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    tail = result.output.split("└")[-1]  # what follows the table
    assert "numpy.exp f32 (cpu-cpp, plain): stale" in tail and "shim file shim.cpp is missing" in tail
