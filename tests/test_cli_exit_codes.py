"""Every exit code the ``opgen`` docs promise (opgen.cli's docstring, README.md, ``opgen --help``):
0 success, 1 failure, 2 usage error (click's), 3 the file exchange awaits an answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import opgen.cli
from opgen.cli import EXIT_AWAITING, EXIT_FAILED, EXIT_OK, EXIT_USAGE, app
from tests.conftest import CHECKOUT

runner = CliRunner()


def test_the_codes_are_the_documented_ones() -> None:
    assert (EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_AWAITING) == (0, 1, 2, 3)
    doc = " ".join(opgen.cli.__doc__.split())
    for text in ("0 success", "1 a failure", "2 a usage error", "3 the file exchange"):
        assert text in doc, text
    readme = " ".join((CHECKOUT / "README.md").read_text().split())
    for text in ("0 success", "1 failure", "2 a usage error", "3 the file exchange is waiting for an answer"):
        assert text in readme, text
    shown = " ".join(runner.invoke(app, ["--help"]).stdout.replace("│", " ").split())
    for text in ("0 success", "1 failure", "2 usage error", "3 the file exchange is waiting for an answer"):
        assert text in shown, text


def test_success_is_0() -> None:
    result = runner.invoke(app, ["show", "operator.add", "--overload", "int", "--root", str(CHECKOUT)])
    assert result.exit_code == EXIT_OK, result.output


def test_a_failure_is_1_with_the_reason_and_no_traceback(project: Path) -> None:
    result = runner.invoke(app, ["synthesize", "no.such.op"])
    assert result.exit_code == EXIT_FAILED, result.output
    assert "no spec for no.such.op" in result.stderr and "Traceback" not in result.output
    assert result.stdout == ""


@pytest.mark.parametrize("args", [
    ["list", "--no-such-option"],  # an unknown option
    ["show"],  # a missing argument
    ["synthesize", "operator.add", "--max-attempts", "0"],  # a value out of range
    ["no-such-command"],
], ids=["unknown-option", "missing-argument", "out-of-range", "unknown-command"])
def test_a_usage_error_is_2(args: list[str], project: Path) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_USAGE, result.output
    assert "Usage:" in result.stderr and result.stdout == ""


def test_awaiting_an_answer_is_3(project: Path, tmp_path: Path) -> None:
    exchange = tmp_path / "exchange"
    result = runner.invoke(app, ["synthesize", "operator.add", "--overload", "int", "--provider", "file",
                                 "--exchange-dir", str(exchange)])
    assert result.exit_code == EXIT_AWAITING, result.output
    (prompt,) = exchange.glob("*.prompt.md")
    assert str(prompt) in result.stderr.replace("\n", "")
