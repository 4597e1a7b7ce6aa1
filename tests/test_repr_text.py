"""builtins.repr and builtins.ascii: the repr kernels' non-printable table is this Python's, the
table script's ranges reproduce str.isprintable() on every code point, and the repr_text strategy
meets what a repr gets wrong (the quote choice, escapes of every width)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import find, settings

from opgen.spec.model import load_spec
from opgen.verify.scale import CPU_BUDGET, EVERY_CODE_POINT, scale_cases
from opgen.verify.text_strategies import REPR_NONPRINTABLE, REPR_PRINTABLE, repr_text

ROOT = Path(__file__).resolve().parents[1]


def _table_script():
    # scripts/ is not a package: load the script as a module of its own
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("unicode_printable_table",
                                                  ROOT / "scripts" / "unicode_printable_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_repr_kernels_table_is_this_pythons() -> None:
    # A Python with another Unicode version gives another table: the check names the files to rewrite.
    assert _table_script().main(["--check"]) == 0


def test_the_ranges_reproduce_isprintable_on_every_code_point() -> None:
    nonprintable = {cp for a, b in _table_script().nonprintable_ranges() for cp in range(a, b + 1)}
    assert all((cp in nonprintable) == (not chr(cp).isprintable()) for cp in range(0x110000))


def test_the_strategy_alphabets_are_what_they_claim() -> None:
    assert not any(c.isprintable() for c in REPR_NONPRINTABLE)
    assert all(c.isprintable() for c in REPR_PRINTABLE) and any(ord(c) > 0xFFFF for c in REPR_PRINTABLE)


@pytest.mark.parametrize("form", ['"', "'", "\\x", "\\u", "\\U", "\\n", "\\\\", "\\'"])
def test_repr_text_draws_each_quote_choice_and_escape(form: str) -> None:
    # find() raises NoSuchExample when no draw within its budget has the form
    if form in ('"', "'"):
        find(repr_text(), lambda s: repr(s).startswith(form), settings=settings(max_examples=500, database=None))
    else:
        find(repr_text(), lambda s: form in repr(s), settings=settings(max_examples=500, database=None))


def test_the_scale_stage_checks_the_table_whole() -> None:
    spec = load_spec(ROOT / "specs" / "builtins" / "repr.yaml")
    cases = list(scale_cases(spec, spec.overload("str"), 7, CPU_BUDGET))
    assert any(EVERY_CODE_POINT in c.notes for c in cases)
