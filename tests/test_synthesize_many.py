"""Synthesis at scale: `opgen synthesize --missing/--all --jobs N --shard I/N --json`.

Against the loopback OpenAI-compatible server (tests/fake_openai.py: real HTTP through the real
openai client and instructor): several workers at once, a storm of 429s that must pause every
worker, and an interrupt (SIGTERM, Ctrl-C) that must leave each admitted entry whole and nothing
else. The "model" answers each request with the checkout's own admitted kernel for the function
the prompt asks for (an honest answer, so each item is admitted on its first attempt); gates run
for real with 30 examples and without the scale stage, to keep each item to a few seconds.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.errors import Interrupted
from opgen.llm.ratelimit import RateLimiter, _retry_after
from opgen.nightly.shards import Shard
from opgen.project import Project
from opgen.registry import Registry
from opgen.spec.model import load_all
from opgen.synthesize_many import plan_many
from tests.conftest import CHECKOUT, isolate_env, make_project
from tests.fake_openai import FakeOpenAI, reply_delay, reply_http_error, reply_tool_call

runner = CliRunner()
OPS = ["operator.add", "operator.mul"]
# The overloads these tests synthesize (the ops may have more; the "model" answers these).
OVERLOADS = {"operator.add": ("int", "float", "str", "tensor_f32"), "operator.mul": ("int", "float", "str_repeat", "tensor_f32")}
# (and numpy.exp's f32, the spec-check test's)
ONLY = [arg for o in sorted({"f32", *(o for names in OVERLOADS.values() for o in names)}) for arg in ("--overload", o)]
KERNEL_NAME = re.compile(r"\b(operator_(?:add|mul)__\w+)\s*\(")


def shipped_kernels() -> dict[str, str]:
    """Kernel function name -> the checkout's admitted C++ source defining it."""
    found = {}
    for op in OPS:
        for path in [CHECKOUT / "generated" / "cpp" / op / o / "kernel.cpp" for o in OVERLOADS[op]]:
            source = path.read_text()
            if (m := KERNEL_NAME.search(source)) is not None:
                found[m.group(1)] = source
    return found


KERNELS = shipped_kernels()


def asked_for(request: dict[str, Any]) -> str:
    """The kernel function a request asks for (named in its first user message)."""
    text = "\n".join(m.get("content") or "" for m in request["messages"] if m["role"] in ("system", "user"))
    names = [n for n in KERNELS if re.search(rf"\b{n}\b", text)]
    assert len(names) == 1, f"cannot tell which kernel the request asks for: {names}"
    return names[0]


def honest(request: dict[str, Any]):
    name = asked_for(request)
    return reply_tool_call({"source": KERNELS[name], "notes": f"the checkout's admitted {name}"},
                           model="scripted-coder", prompt_tokens=10, completion_tokens=5)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path / "project")
    isolate_env(monkeypatch, root)
    monkeypatch.setenv("OPGEN_SCALE", "0")
    return root


def point_at(mp: pytest.MonkeyPatch, base_url: str) -> None:
    mp.setenv("OPENAI_BASE_URL", base_url)
    mp.setenv("OPENAI_API_KEY", "test")
    mp.setenv("OPGEN_MODEL", "requested-model")


def entries(root: Path) -> list[str]:
    return sorted(str(p.parent.relative_to(root / "generated")) for p in (root / "generated").glob("*/*/*/entry.json"))


def leftovers(root: Path) -> list[Path]:
    """Staged or half-swapped admission directories, temporary recording files."""
    return [p for p in (root / "generated").rglob("*") if ".staged-" in p.name or ".old-" in p.name
            or p.name.startswith(".rec-")]


def whole(root: Path) -> None:
    """Every entry in the registry is whole: files present, hashes as admitted, status verified."""
    specs = load_all(root / "specs")
    for entry in Registry(root / "generated").entries():
        assert entry.integrity_problems() == [], entry.path
        assert entry.status(specs[entry.op])[0] == "verified", entry.path


def synthesize_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["synthesize", *args, *ONLY, "--examples", "30", "--json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


# ----------------------------------------------------------------- several workers


def test_several_workers_admit_every_missing_item_concurrently(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    in_flight = {"now": 0, "most": 0}
    lock = threading.Lock()

    def slow_honest(request: dict[str, Any]):
        with lock:
            in_flight["now"] += 1
            in_flight["most"] = max(in_flight["most"], in_flight["now"])
        time.sleep(0.4)  # long enough for the other workers' requests to arrive meanwhile
        with lock:
            in_flight["now"] -= 1
        return honest(request)

    with FakeOpenAI([slow_honest] * 40) as server:
        point_at(monkeypatch, server.base_url)
        code, summary = synthesize_json("--missing", *OPS, "--target", "cpp", "--jobs", "3")
    assert code == 0, summary
    items = summary["items"]
    assert len(items) == len(KERNELS) == 8
    assert {i["result"] for i in items} == {"admitted"}
    assert summary["totals"] == {"admitted": 8}
    assert in_flight["most"] >= 2, "the workers never had two requests at the server at once"
    assert len(server.requests) == 8  # one honest answer each: no repair, no re-ask
    assert summary["tokens"]["prompt"] == 80 and summary["tokens"]["completion"] == 40
    assert len(entries(project)) == 8
    whole(project)
    # Each entry's transcript holds its own request: no worker's exchanges leaked into another's.
    for rel in entries(project):
        t = json.loads((project / "generated" / rel / "transcript.json").read_text())
        (exchange,) = t["exchanges"]
        (raw,) = exchange["raw"]
        name = asked_for(raw["request"])
        assert name in exchange["answer"]["source"]
        assert name.split("__")[1] == rel.split("/")[-1]

    # Run again: everything is current, nothing is asked.
    with FakeOpenAI([]) as server:
        point_at(monkeypatch, server.base_url)
        code, summary = synthesize_json("--missing", *OPS, "--target", "cpp", "--jobs", "3")
    assert code == 0
    assert summary["totals"] == {"current": 8}
    assert server.requests == []


# ----------------------------------------------------------------- a 429 storm


def test_a_429_seen_by_one_worker_pauses_every_worker(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storm = 4
    script = [reply_http_error(429, headers={"retry-after": "1"}) for _ in range(storm)] + [honest] * 40
    monkeypatch.setenv("OPGEN_HTTP_RETRIES", "8")
    with FakeOpenAI(script) as server:
        point_at(monkeypatch, server.base_url)
        code, summary = synthesize_json("--missing", "operator.add", "--target", "cpp", "--jobs", "3")
    assert code == 0, summary
    assert summary["totals"] == {"admitted": 4}
    assert summary["rate_limit"]["rate_limited"] == storm
    assert summary["rate_limit"]["lowest_concurrency"] == 1  # halved on each 429: 3 -> 1
    assert summary["rate_limit"]["paused_s"] >= 0.9
    times = [c.received_at for c in server.calls]
    limited = times[:storm]
    # After each 429 (answered at once), no request from any worker reached the server until the
    # second it asked for had passed. (A request already on the wire when a 429 was answered may
    # land within a few milliseconds of it.)
    for t in limited:
        too_soon = [u - t for u in times if 0.05 < u - t < 0.95]
        assert too_soon == [], f"requests {too_soon} s after a 429 that asked for 1 s"
    assert times[-1] - times[0] >= 0.95


def test_rate_limiter_rules() -> None:
    clock = {"now": 100.0}
    limiter = RateLimiter(4, clock=lambda: clock["now"])
    limiter.acquire()
    limiter.release(429, {"retry-after": "3"})
    assert limiter.not_before == 103.0 and limiter.allowed == 2
    clock["now"] = 103.0
    limiter.acquire()
    limiter.release(200, {})
    assert limiter.allowed == 3  # one more after a success, up to the limit
    limiter.acquire()
    limiter.release(429, {})  # no Retry-After: backoff 1 s, then 2 s
    assert limiter.not_before == 104.0
    clock["now"] = 104.0
    limiter.acquire()
    limiter.release(429, {})
    assert limiter.not_before == 106.0
    clock["now"] = 106.0
    limiter.acquire()
    limiter.release(503, {})  # a 503 without Retry-After is an ordinary server error: no pause
    assert limiter.not_before == 106.0
    assert _retry_after({"retry-after-ms": "250"}) == 0.25
    assert _retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert _retry_after({"retry-after": "soon"}) is None
    stop = threading.Event()
    stop.set()
    with pytest.raises(Interrupted):
        limiter.acquire(stop)


# ----------------------------------------------------------------- shards and the plan


def test_shards_split_the_items_without_overlap(project: Path) -> None:
    p = Project.locate(project)
    whole_plan = plan_many(p)
    keys = {i.key for i in whole_plan.items}
    assert len(keys) > 40  # every spec x target: a real plan, not an empty one
    parts = [{i.key for i in plan_many(p, shard=Shard(n, 3)).items} for n in (1, 2, 3)]
    assert set().union(*parts) == keys
    assert sum(len(x) for x in parts) == len(keys)
    assert all(parts)
    # Items a target cannot express are listed as skipped, with why, not asked.
    assert all(why for _, why in whole_plan.skipped)


def test_unknown_target_and_contradictory_flags_are_refused(project: Path) -> None:
    r = runner.invoke(app, ["synthesize", "--missing", "--target", "fortran"])
    assert r.exit_code == 1 and "unknown target 'fortran'" in r.stderr
    r = runner.invoke(app, ["synthesize", "--missing", "--all"])
    assert r.exit_code == 1 and "contradict" in r.stderr
    r = runner.invoke(app, ["synthesize"])
    assert r.exit_code == 1 and "--missing" in r.stderr
    r = runner.invoke(app, ["synthesize", "--missing", "--shard", "4/3"])
    assert r.exit_code == 1 and "--shard 4/3" in r.stderr


# ----------------------------------------------------------------- interrupts


def run_cli(root: Path, base_url: str, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPGEN_"))}
    env.update(OPGEN_ROOT=str(root), OPGEN_CACHE_DIR=str(CHECKOUT / ".opgen-cache"), OPGEN_SCALE="0",
               OPENAI_BASE_URL=base_url, OPENAI_API_KEY="test", OPGEN_MODEL="requested-model")
    return subprocess.Popen([sys.executable, "-m", "opgen.cli", "synthesize", *args, *ONLY, "--examples", "30", "--json"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_an_interrupt_leaves_admitted_entries_whole_and_the_rest_untouched(project: Path, signum: int,
                                                                            code: int) -> None:
    def int_first(request: dict[str, Any]):
        # The int kernel at once; every other request answers only after a long think, so that the
        # interrupt finds one entry admitted and the other worker waiting on the endpoint.
        return honest(request) if asked_for(request).endswith("__int") else reply_delay(8.0, honest(request))

    with FakeOpenAI([int_first] * 20) as server:
        child = run_cli(project, server.base_url, "--missing", "operator.add", "--target", "cpp", "--jobs", "2")
        deadline = time.monotonic() + 90
        admitted = project / "generated" / "cpp" / "operator.add" / "int" / "entry.json"
        while not admitted.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the int kernel was never admitted"
            time.sleep(0.05)
        time.sleep(0.3)  # the next items have started: one waits on the endpoint
        signalled = time.monotonic()
        child.send_signal(signum)
        stdout, stderr = child.communicate(timeout=60)
        stopped_in = time.monotonic() - signalled
    assert child.returncode == code, stderr
    assert stopped_in < 15, f"took {stopped_in:.1f} s to stop"
    assert "interrupted by" in stderr
    summary = json.loads(stdout)
    assert summary["interrupted"] is True
    results = {i["overload"]: i["result"] for i in summary["items"]}
    assert results["int"] == "admitted"
    assert set(results.values()) <= {"admitted", "interrupted"} and "interrupted" in results.values()
    # What was admitted is whole; nothing else was written into the registry, half or whole.
    assert entries(project) == ["cpp/operator.add/int"]
    whole(project)
    assert leftovers(project) == []


# ----------------------------------------------------------------- shards in CI: bundle and merge


def test_shard_bundles_merge_into_one_registry(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Imported here: the script is run by CI as a file, not installed as a module.
    sys.path.insert(0, str(CHECKOUT / "scripts"))
    import synthesis_shards

    bundles = []
    with FakeOpenAI([honest] * 20) as server:
        point_at(monkeypatch, server.base_url)
        for n in (1, 2):
            code, summary = synthesize_json("--missing", "operator.add", "--target", "cpp", "--shard", f"{n}/2")
            assert code == 0, summary
            (tmp_path / f"summary-{n}.json").write_text(json.dumps(summary))
            bundles.append(tmp_path / f"entries-{n}.tar.gz")
            assert synthesis_shards.main(["--root", str(project), "pack", str(tmp_path / f"summary-{n}.json"),
                                          "--out", str(bundles[-1])]) == 0
    assert len(entries(project)) == 4
    # The merge side: a clean project that has none of them.
    other = make_project(tmp_path / "merged")
    assert synthesis_shards.main(["--root", str(other), "merge", *map(str, bundles)]) == 0
    assert entries(other) == entries(project)
    whole(other)
    recorded = sorted(p.name for p in (other / "generated" / "recordings").rglob("*.json"))
    assert len(recorded) == 4  # each answer's recording travelled with its entry
    # Merging again changes nothing.
    assert synthesis_shards.main(["--root", str(other), "merge", *map(str, bundles)]) == 0
    assert entries(other) == entries(project)
    # A bundle whose kernel was edited after admission is refused, and nothing is placed.
    import tarfile

    broken = tmp_path / "broken.tar.gz"
    with tarfile.open(bundles[0]) as src, tarfile.open(broken, "w:gz") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read() if member.isfile() else None
            if member.name.endswith("kernel.cpp"):
                data = data.replace(b"return", b"return 1 +", 1)
                member.size = len(data)
            dst.addfile(member, __import__("io").BytesIO(data) if data is not None else None)
    third = make_project(tmp_path / "third")
    assert synthesis_shards.main(["--root", str(third), "merge", str(broken)]) == 1
    assert entries(third) == []
    table = synthesis_shards.table([json.loads((tmp_path / f"summary-{n}.json").read_text()) for n in (1, 2)])
    assert "4 admitted" in table


def test_the_workflow_runs_commands_that_exist() -> None:
    """Every `opgen synthesize` option and script subcommand the CI workflow uses is one that exists."""
    import yaml
    import typer.main

    workflow = yaml.safe_load((CHECKOUT / ".github" / "workflows" / "synthesize.yml").read_text())
    runs = "\n".join(step.get("run", "") for job in workflow["jobs"].values() for step in job.get("steps", []))
    command = typer.main.get_command(app).commands["synthesize"]
    known = {opt for p in command.params for opt in p.opts}
    used = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", runs.split("opgen synthesize", 1)[1].split("python", 1)[0]))
    used.discard("--target")  # built by the shell loop, checked below
    assert used and used <= known | {"--missing", "--all"}, used - known
    assert "--target" in known and "--missing" in known and "--all" in known
    for sub in re.findall(r"synthesis_shards\.py (\w+)", runs):
        assert sub in ("pack", "merge", "table")
    assert workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.plan.outputs.shards) }}"


# ----------------------------------------------------------------- a spec a correct kernel cannot meet


def test_a_too_tight_tolerance_is_refused_before_any_request(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`opgen spec check` runs first: a tolerance tighter than a correctly rounded kernel can meet
    is reported as the spec's problem, with the input, and nothing is asked of the endpoint."""
    spec = project / "specs" / "numpy" / "exp.yaml"
    text = spec.read_text()
    assert "    rtol: 6.0e-7\n" in text
    spec.write_text(text.replace("    rtol: 6.0e-7\n", "    rtol: 1.0e-9\n", 1))
    with FakeOpenAI([honest] * 4) as server:
        point_at(monkeypatch, server.base_url)
        one = runner.invoke(app, ["synthesize", "numpy.exp", "--overload", "f32", "--examples", "30"])
        assert server.requests == []
        code, summary = synthesize_json("--missing", "numpy.exp", "operator.add", "--target", "cpp", "--jobs", "2")
        assert not any("numpy_exp" in json.dumps(r) for r in server.requests)
    assert one.exit_code == 1
    said = " ".join(one.stderr.split())
    assert "tolerance.float32.rtol" in said and "numpy.exp" in said
    assert code == 1  # the refused spec fails the run; the other op's items went on and were admitted
    results = {(i["op"], i["overload"]): i["result"] for i in summary["items"]}
    assert results[("numpy.exp", "f32")] == "spec problem"
    assert "tolerance.float32.rtol" in next(i["message"] for i in summary["items"] if i["op"] == "numpy.exp")
    assert {r for (op, _), r in results.items() if op == "operator.add"} == {"admitted"}
    assert entries(project) == sorted(f"cpp/operator.add/{o}" for o in ("float", "int", "str", "tensor_f32"))
