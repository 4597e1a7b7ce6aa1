"""str.lower and str.upper: the kernels' case tables are this Python's, the cased_text strategy
meets what case mapping gets wrong, the scale stage checks a table whole, and a mismatch on a
megabyte string is reported by its first difference, not printed whole."""

from __future__ import annotations

import importlib.util
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from opgen.spec.model import load_spec
from opgen.verify.compare import LONG_VALUE, Mismatch, Outcome, compare_scalar
from opgen.verify.runner import describe
from opgen.verify.scale import CPU_BUDGET, EVERY_CODE_POINT, scale_cases
from opgen.verify.text_strategies import CASE_IGNORABLE, cased_text, every_code_point

ROOT = Path(__file__).resolve().parents[1]


def _tables_script():
    spec = importlib.util.spec_from_file_location("unicode_case_tables", ROOT / "scripts" / "unicode_case_tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_kernels_case_tables_are_this_pythons() -> None:
    # A Python with another Unicode version gives other tables: the check names the files to rewrite.
    assert _tables_script().main(["--check"]) == 0


def test_the_tables_reproduce_python_on_every_code_point() -> None:
    script = _tables_script()
    for direction in ("lower", "upper"):
        t = script.tables(direction)
        mapping = {cp: chr(cp + delta) for a, b, delta, step in t.runs for cp in range(a, b + 1, step)}
        mapping.update(t.special)
        for cp in range(0x110000):
            if 0xD800 <= cp <= 0xDFFF or (direction == "lower" and cp == 0x3A3):  # sigma: by context
                continue
            c = chr(cp)
            assert mapping.get(cp, c) == (c.lower() if direction == "lower" else c.upper()), (direction, hex(cp))


def test_the_probed_properties_agree_with_pythons_own_predicates() -> None:
    # Cased (as Final_Sigma asks it: of code points that are not Case_Ignorable) is what islower,
    # isupper and istitle say of one code point.
    t = _tables_script().tables("lower")
    ignorable = {cp for a, b in t.case_ignorable for cp in range(a, b + 1)}
    cased = {cp for a, b in t.cased for cp in range(a, b + 1)}
    by_predicates = {cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF
                     and (chr(cp).islower() or chr(cp).isupper() or chr(cp).istitle())}
    assert cased == by_predicates - ignorable
    assert {ord(c) for c in "'.:\u0301\u00ad"} <= ignorable  # Unicode's Case_Ignorable examples
    assert unicodedata.category("\u02b0") == "Lm" and 0x2B0 in ignorable


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(cased_text())
def test_cased_text_is_valid_text(s: str) -> None:
    s.encode("utf-8")  # no surrogates: the kernels take UTF-8


def test_cased_text_meets_both_sides_of_final_sigma_and_one_to_many_mappings() -> None:
    seen = {"final": 0, "not final": 0, "ignorable beside sigma": 0, "longer upper": 0, "beyond the BMP": 0}

    @settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(cased_text())
    def draw(s: str) -> None:
        lowered = s.lower()
        seen["final"] += "ς" in lowered and "Σ" in s
        seen["not final"] += "σ" in lowered and "Σ" in s
        seen["ignorable beside sigma"] += any(c + "Σ" in s or "Σ" + c in s for c in CASE_IGNORABLE)
        seen["longer upper"] += len(s.upper()) > len(s)
        seen["beyond the BMP"] += any(ord(c) > 0xFFFF and c.lower() != c.upper() for c in s)

    draw()
    assert all(n >= 10 for n in seen.values()), seen


@pytest.mark.parametrize("op", ["str.lower", "str.upper"])
def test_the_scale_stage_checks_every_code_point(op: str) -> None:
    spec = load_spec(ROOT / "specs" / "str" / f"{op.split('.')[1]}.yaml")
    cases = list(scale_cases(spec, spec.overload("str"), 7, CPU_BUDGET))
    whole = [c for c in cases if EVERY_CODE_POINT in c.notes]
    assert len(whole) == 1 and whole[0].args["s"] == every_code_point()
    assert len(every_code_point()) == 0x110000 - 0x800
    assert any("Σ" in c.args["s"] and c is not whole[0] for c in cases)  # a long cased text too


def test_a_long_string_mismatch_names_the_first_difference_and_stays_short() -> None:
    ref = "a" * 5000 + "ς" + "b" * 5000
    got = "a" * 5000 + "σ" + "b" * 5000
    with pytest.raises(Mismatch) as err:
        compare_scalar(got, ref, None, Outcome())
    message = err.value.message
    assert "first difference at code point 5000" in message and "aς" in message and "aσ" in message
    assert len(message) < 400 and len(err.value.details["got"]) < 200
    assert len(describe({"s": ref})["s"]) < 200  # the counterexample, too
    short = "x" * LONG_VALUE
    with pytest.raises(Mismatch, match=r"expected 'x+', got 'y'"):
        compare_scalar("y", short, None, Outcome())
