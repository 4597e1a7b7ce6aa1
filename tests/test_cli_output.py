"""CLI output for machines and logs: one plain line per finished item when stderr is not a
terminal (a live bar when it is), and ``--json`` writing nothing but one JSON document to stdout."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.cli.output import emit_json, json_output, progress
from tests.conftest import CHECKOUT
from tests.test_nightly_run import TINY, copy_entries

runner = CliRunner()


# --------------------------------------------------------------------------- the helper


def test_piped_progress_prints_one_flushed_line_per_item(capsys: pytest.CaptureFixture[str]) -> None:
    with progress("verify", 2, live=False) as t:
        t.note("building 2 entries")
        t.done("numpy.exp f64", "pass", 1.25)
        t.done("numpy.exp f32", "fail")
    err = capsys.readouterr()
    assert err.out == ""
    lines = err.err.splitlines()
    assert lines[0] == "verify: building 2 entries"
    assert lines[1].startswith("verify [1/2] numpy.exp f64: pass, 1.2 s (elapsed ")
    assert lines[2].startswith("verify [2/2] numpy.exp f32: fail, ")


def test_steps_close_the_previous_item_and_the_last_on_exit(capsys: pytest.CaptureFixture[str]) -> None:
    with progress("bench", live=False) as t:
        t.step("case a")
        t.step("case b")
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in lines] == ["bench [1] case a", "bench [2] case b"]


def test_phases_say_their_name(capsys: pytest.CaptureFixture[str]) -> None:
    with progress("nightly", live=False, own_task=False) as t:
        t.phase("verify", 1).done("numpy.exp f64 (cpu-cpp)")
    assert capsys.readouterr().err.startswith("nightly verify [1/1] numpy.exp f64 (cpu-cpp): done, ")


def test_a_terminal_gets_the_live_bar_not_lines(capsys: pytest.CaptureFixture[str]) -> None:
    with progress("verify", 2, live=True) as t:
        assert t.live
        t.done("numpy.exp f64", "pass")
    assert "verify [1/2]" not in capsys.readouterr().err


def test_json_output_sends_python_and_native_prints_to_stderr() -> None:
    script = (
        "import os, sys\n"
        "from opgen.cli.output import emit_json, json_output\n"
        "with json_output():\n"
        "    print('a library talks')\n"
        "    os.write(1, b'native printf\\n')\n"
        "    os.system('echo a child process')\n"
        "emit_json({'ok': True})\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout) == {"ok": True}
    for noise in ("a library talks", "native printf", "a child process"):
        assert noise in proc.stderr


def test_a_command_with_json_and_noisy_work_prints_only_json() -> None:
    """`opgen list --json` whose work prints to stdout (as Hypothesis or a tqdm bar might)."""
    script = (
        "import os, sys\n"
        "import opgen.cli.listing as listing\n"
        "real = listing.status_rows\n"
        "def noisy(*a, **k):\n"
        "    print('Loading weights 100%')\n"
        "    os.write(1, b'native noise\\n')\n"
        "    return real(*a, **k)\n"
        "listing.status_rows = noisy\n"
        "from opgen.cli import main\n"
        f"sys.argv = ['opgen', 'list', '--json', '--root', {str(CHECKOUT)!r}]\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert isinstance(json.loads(proc.stdout), list)
    assert "Loading weights" in proc.stderr and "native noise" in proc.stderr


# ------------------------------------------------------- every command with --json


def json_of(args: list[str], codes: tuple[int, ...] = (0,)):
    result = runner.invoke(app, args)
    assert result.exit_code in codes, result.output
    return json.loads(result.stdout), result.stderr


def test_list_show_lint_json() -> None:
    assert isinstance(json_of(["list", "--json", "--root", str(CHECKOUT)])[0], list)
    shown, _ = json_of(["show", "operator.add", "--overload", "int", "--json", "--root", str(CHECKOUT)])
    assert shown[0]["op"] == "operator.add"
    linted, _ = json_of(["lint", "operator.add", "--json", "--root", str(CHECKOUT)])
    assert linted["findings"] == 0


def test_verify_source_json() -> None:
    data, err = json_of(["verify", "--source", str(CHECKOUT / "examples/wrong_matmul.cpp"), "--op", "operator.matmul",
                         "--overload", "f32", "--examples", "10", "--json", "--root", str(CHECKOUT)], codes=(1,))
    assert data[0]["ok"] is False and "rejected operator.matmul f32" in err


def test_verify_json_and_a_line_per_entry_when_piped(project: Path) -> None:
    copy_entries(project, {"numpy.exp"})
    data, err = json_of(["verify", "numpy.exp", "--json", "--examples", "5", "--root", str(project)])
    assert data["failed"] == 0 and data["passed"] >= 1
    lines = [line for line in err.splitlines() if line.startswith("verify [")]
    assert len(lines) == len(data["results"]) and all(": pass, " in line for line in lines), err


def test_verify_and_bench_name_an_unknown_overload() -> None:
    for command in (["verify", "numpy.exp"], ["bench", "numpy.exp"]):
        result = runner.invoke(app, [*command, "--overload", "f16x", "--root", str(CHECKOUT)])
        assert result.exit_code == 1 and "no overload f16x among the selected ops" in result.output, result.output
        assert "f32, f64" in result.output  # the hint lists the real ones
    both = runner.invoke(app, ["verify", "--source", str(CHECKOUT / "examples/wrong_matmul.cpp"), "--op",
                               "operator.matmul", "--overload", "f32", "--overload", "f64", "--root", str(CHECKOUT)])
    assert both.exit_code == 1 and "--source gates one overload at a time" in both.output, both.output


def test_corpus_json() -> None:
    data, err = json_of(["corpus", "add_int_abort_on_overflow", "--no-honest", "--json", "--root", str(CHECKOUT)])
    assert data["entries"] == 1 and "corpus [1/1] add_int_abort_on_overflow: rejected as expected (" in err


def test_bench_json(project: Path) -> None:
    copy_entries(project, {"operator.add"})
    data, err = json_of(["bench", "operator.add", "--target", "cpp", "--overload", "tensor_f32", "--overload",
                         "tensor_i64", "--rounds", "1", "--json", "--root", str(project)])
    assert data and all(r["op"] == "operator.add" for r in data)
    assert {r["overload"] for r in data} == {"tensor_f32", "tensor_i64"}
    assert "bench [1] " in err


def test_compile_json(tmp_path: Path) -> None:
    data, _ = json_of(["compile", f"{CHECKOUT / 'examples/compile/numeric.py'}:horner", "-o", str(tmp_path), "--json",
                       "--root", str(CHECKOUT)])
    assert data["symbol"] == "opgen_compiled_horner"


def test_nightly_and_merge_json(project: Path, tmp_path: Path) -> None:
    copy_entries(project, {"numpy.exp"})
    shard = tmp_path / "shard.json"
    data, err = json_of(["nightly", *TINY, "--no-bench", "--no-corpus", "--run-id", "j1", "--shard", "1/1",
                         "--out", str(shard), "--json", "--root", str(project)])
    assert data["run_id"] == "j1" and re.search(r"nightly verify \[1/\d+\] numpy\.exp \w+ \([\w-]+\): pass, ", err), err
    merged, _ = json_of(["nightly", "merge", str(shard), "--no-report", "--json", "--root", str(project)])
    assert merged["run_id"] == "j1" and merged["comparison"]["ok"]


def test_emit_json_is_one_document(capsys: pytest.CaptureFixture[str]) -> None:
    with json_output():
        print("noise")
    emit_json({"a": [1, 2]})
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"a": [1, 2]} and "noise" in captured.err
