"""Variants: several verified implementations of one overload, and the one served.

The registry keeps the plain variant at <overload>/ and the others at
<overload>@<variant>/; it serves the verified variant measured fastest on this kind
of machine (``opgen bench --select``), or plain when nothing was measured.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from opgen.build.cpp import toolchain
from opgen.service import status_rows
from opgen.project import Project
from opgen.prompts import render_request
from opgen.registry import Registry
from opgen.spec.model import load_all, load_spec

from tests.conftest import CHECKOUT
from tests.test_registry import admit as admit_plain
from tests.test_registry import entry_data, spec, spec_file  # noqa: F401 (fixtures)

KERNEL = "// kernel\n"


def admit_variant(registry: Registry, spec, variant: str, overload: str = "int"):
    files = {"kernel": ("kernel.cpp", f"// {variant}\n"), "shim": ("shim.cpp", "// shim\n")}
    return registry.admit(spec.op, overload, "cpu-cpp", files, entry_data(spec, overload), variant=variant)


@pytest.fixture
def spec_with_variant(spec_file):  # noqa: F811
    spec_file.write_text(spec_file.read_text() + "variants:\n  unrolled: unrolled by four\n")
    return load_spec(spec_file)


def figures(seconds: float | None, isa: str | None = None) -> dict:
    return {"isa": isa or toolchain()["isa"], "primary_case": "big", "primary_seconds": seconds, "cases": {}}


def test_a_variant_lives_beside_the_plain_entry(tmp_path, spec_with_variant):
    registry = Registry(tmp_path / "generated")
    admit_plain(registry, spec_with_variant)
    entry = admit_variant(registry, spec_with_variant, "unrolled")
    assert entry.path == tmp_path / "generated" / "cpp" / "operator.add" / "int@unrolled"
    assert entry.variant == "unrolled" and entry.status(spec_with_variant) == ("verified", [])
    assert [e.variant for e in registry.variants("operator.add", "int", "cpu-cpp")] == ["plain", "unrolled"]
    assert registry.get("operator.add", "int", "cpu-cpp", "unrolled").path == entry.path
    assert sorted(e.variant for e in registry.entries()) == ["plain", "unrolled"]


def test_plain_is_served_until_something_is_measured(tmp_path, spec_with_variant):
    registry = Registry(tmp_path / "generated")
    admit_plain(registry, spec_with_variant)
    admit_variant(registry, spec_with_variant, "unrolled")
    served, _ = registry.serve("operator.add", "int", "cpu-cpp", spec_with_variant)
    assert served.variant == "plain"


def test_the_variant_measured_fastest_here_is_served(tmp_path, spec_with_variant):
    registry = Registry(tmp_path / "generated")
    plain = admit_plain(registry, spec_with_variant)
    fast = admit_variant(registry, spec_with_variant, "unrolled")
    registry.record_benchmark(plain, figures(2e-3))
    registry.record_benchmark(fast, figures(1e-3))
    specs = {"operator.add": spec_with_variant}
    assert registry.lookup("operator.add", ["int", "int"], specs).variant == "unrolled"
    registry.record_benchmark(fast, figures(3e-3))
    assert registry.lookup("operator.add", ["int", "int"], specs).variant == "plain"
    # Figures from another kind of machine rank below figures from this one.
    registry.record_benchmark(fast, figures(1e-6, isa="some-other-isa"))
    assert registry.lookup("operator.add", ["int", "int"], specs).variant == "plain"
    # Recording figures does not touch the hashed files: the entry stays verified.
    assert registry.get("operator.add", "int", "cpu-cpp", "unrolled").status(spec_with_variant) == ("verified", [])


def test_a_stale_variant_is_never_served_however_fast(tmp_path, spec_with_variant):
    registry = Registry(tmp_path / "generated")
    admit_plain(registry, spec_with_variant)
    fast = admit_variant(registry, spec_with_variant, "unrolled")
    registry.record_benchmark(fast, figures(1e-9))
    fast.file("kernel").write_text("// edited by hand\n")
    served, _ = registry.serve("operator.add", "int", "cpu-cpp", spec_with_variant)
    assert served.variant == "plain"


def test_a_variant_the_spec_no_longer_declares_is_stale(tmp_path, spec, spec_with_variant):  # noqa: F811
    registry = Registry(tmp_path / "generated")
    entry = admit_variant(registry, spec_with_variant, "unrolled")
    assert entry.status(spec) == ("stale", ["the spec no longer declares variant 'unrolled'"])
    with pytest.raises(LookupError, match="is stale: the spec no longer declares variant 'unrolled'"):
        registry.lookup("operator.add", ["int", "int"], {"operator.add": spec})


def test_a_variant_prompt_adds_what_the_variant_must_do(spec_with_variant):
    overload = spec_with_variant.overload("int")
    plain = render_request(CHECKOUT / "prompts", spec_with_variant, overload, "cpp")
    variant = render_request(CHECKOUT / "prompts", spec_with_variant, overload, "cpp", "unrolled")
    assert variant[0] == plain[0]
    assert variant[1]["content"].startswith(plain[1]["content"])
    assert "## This is the `unrolled` variant" in variant[1]["content"]
    assert "unrolled by four" in variant[1]["content"]
    with pytest.raises(Exception, match="declares no variant 'blocked'"):
        render_request(CHECKOUT / "prompts", spec_with_variant, overload, "cpp", "blocked")


# ------------------------------------------------------------------ end to end: synthesize, bench, select

EXP_SPEC = CHECKOUT / "specs" / "numpy" / "exp.yaml"


def opgen(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opgen.cli", *args], capture_output=True, text=True, cwd=cwd)


def admit_by_file(root: Path, variant: str, answer: Path) -> None:
    exchange = root / "exchange"
    cmd = ["synthesize", "numpy.exp", "--overload", "f64", "--variant", variant, "--provider", "file",
           "--exchange-dir", str(exchange), "--answered-by", "test", "--max-attempts", "1", "--examples", "40"]
    first = opgen(*cmd, cwd=root)
    assert first.returncode == 3, first.stdout + first.stderr
    prompts = sorted(exchange.glob("*.prompt.md"), key=lambda p: p.stat().st_mtime)
    prompt = prompts[-1]
    if variant != "plain":
        assert f"This is the `{variant}` variant" in prompt.read_text()
    shutil.copy(answer, prompt.with_name(prompt.name.replace(".prompt.md", ".answer.cpp")))
    second = opgen(*cmd, cwd=root)
    assert second.returncode == 0, second.stdout + second.stderr


def test_synthesize_a_variant_then_bench_select_serves_the_fastest(project: Path):
    spec_path = project / "specs" / "numpy" / "exp.yaml"
    text = spec_path.read_text()
    marker = "  - name: f64\n"
    assert marker in text
    spec_path.write_text(text.replace(marker, marker + "    bench:\n      - {name: big, args: {x: {shape: [4096]}}}\n", 1)
                         + "variants:\n  again: the same algorithm, admitted a second time\n")
    answer = CHECKOUT / "answers" / "cpp" / "numpy.exp__f64.cpp"
    admit_by_file(project, "plain", answer)
    admit_by_file(project, "again", answer)
    rows = [r for r in status_rows(Project(project))
            if r.op == "numpy.exp" and r.overload == "f64" and r.target == "cpu-cpp"]
    assert [(r.variant, r.status, r.served) for r in rows] == [("plain", "verified", True), ("again", "verified", False)]

    result = opgen("bench", "numpy.exp", "--select", "--rounds", "2", "--json", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    bench = json.loads(result.stdout)
    assert sorted(r["variant"] for r in bench) == ["again", "plain"]
    assert all(r["agrees"] and r["ratio"] > 0 and r["reference"] == "numpy.exp" for r in bench)
    fastest = min(bench, key=lambda r: r["kernel_s"])["variant"]
    registry = Registry(project / "generated")
    specs = load_all(project / "specs")
    assert registry.lookup("numpy.exp", ["tensor[float64]"], specs).variant == fastest
    listed = json.loads(opgen("list", "--json", cwd=project).stdout)
    assert [r["variant"] for r in listed if r["op"] == "numpy.exp" and r["overload"] == "f64" and r["served"]
            and r["target"] == "cpu-cpp"] == [fastest]


def test_bench_names_what_is_missing(project: Path):
    result = opgen("bench", "numpy.exp", cwd=project)
    assert result.returncode == 1
    assert "nothing to benchmark for numpy.exp" in result.stderr
    assert "bench: cases in its spec and a verified registry entry" in result.stderr
    result = opgen("bench", "no.such.op", cwd=project)
    assert result.returncode == 1 and "no spec for no.such.op" in result.stderr
