"""builtins.int and builtins.float of a str (specs/builtins/int.yaml, float.yaml): the admitted C++
and Rust kernels against Python's int() and float() themselves, where the gate cannot look: the
exact error messages (repr() of the original text, cut to 200 code points for int()), whitespace of
every kind (and the U+001C-U+001F that str.isspace() counts and int()/float() do not strip), digits
of every Unicode script, underscores, signs, int64's edges (OverflowError where Python's int would
be big), CPython's 4300-digit limit, inf/nan spellings, every bit of the double (the sign of a zero
and of a nan too), exact midpoints between doubles, and long mantissas. Then the kernels' digit and
whitespace tables against this Python, code point by code point, and a differential run over the
spec's own ``number_text`` strategy."""

from __future__ import annotations

import importlib.util
import math
import struct
import sys
import unicodedata
from decimal import Context, Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from opgen.verify.text_strategies import NUMBER_NOT_DIGITS, NUMBER_NOT_SPACES, NUMBER_SPACES, number_text
from tests.registry_kernels import verified_kernels

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("cpu-cpp", "cpu-rust")
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
INT_OVERFLOW = "int() of this str does not fit in int64"
ABI_MESSAGE_BYTES = 255  # opgen_error.message holds 255 bytes and a NUL


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([("builtins.int", "str"), ("builtins.float", "str")], TARGETS)


def _outcome(fn, s):
    try:
        return "ok", fn(s)
    except (ValueError, OverflowError) as exc:
        return type(exc).__name__, str(exc)


def _python_int(s):
    """Python's int(s), where a value outside int64 is the native OverflowError."""
    kind, value = _outcome(int, s)
    if kind == "ok" and not I64_MIN <= value <= I64_MAX:
        return "OverflowError", INT_OVERFLOW
    return kind, value


def _message_fits(got: str, want: str) -> bool:
    """The kernel's message is Python's; one longer than the ABI's 255 bytes arrives cut there (C++
    cuts bytes, so a split character decodes as U+FFFD; Rust cuts on a character boundary)."""
    raw = want.encode()
    if len(raw) <= ABI_MESSAGE_BYTES:
        return got == want
    cut = raw[:ABI_MESSAGE_BYTES]
    return got in (cut.decode("utf-8", "replace"), cut.decode("utf-8", "ignore"))


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _same_float(got, want) -> bool:
    if not isinstance(got, float):
        return False
    if math.isnan(want):  # a nan's sign too: float('-nan') has the sign bit set
        return math.isnan(got) and math.copysign(1.0, got) == math.copysign(1.0, want)
    return _bits(got) == _bits(want)


def _check_int(kernel, s):
    want = _python_int(s)
    got = _outcome(lambda v: kernel([v]), s)
    assert got[0] == want[0], (s, got, want)
    if want[0] == "ok":
        assert type(got[1]) is int and got[1] == want[1], (s, got, want)
    else:
        assert _message_fits(got[1], want[1]), (s, got, want)


def _check_float(kernel, s):
    want = _outcome(float, s)
    got = _outcome(lambda v: kernel([v]), s)
    assert got[0] == want[0], (s, got, want)
    if want[0] == "ok":
        assert _same_float(got[1], want[1]), (s, got, want)
    else:
        assert _message_fits(got[1], want[1]), (s, got, want)


# ------------------------------------------------------------------------------------------ int

INT_CASES = [
    # plain, signs, leading zeros
    "0", "7", "-0", "+0", "007", "-007", "+42", "-42", "1234567890",
    # whitespace Python strips (ASCII and Unicode) and what it does not
    " 42", "42 ", "\t\n\r\x0b\x0c42\x0b", "\xa042\u3000", "\x8542\u2028\u2029", "\u1680\u2000\u200a42\u202f\u205f",
    "\x1c42", "42\x1f", "\u200b42", "\ufeff42", "\u180e42", "42\x00", "4\x002", "\x00",
    # signs that fail
    "+", "-", "- 1", "+-1", "--1", "++1", "-+1", "1-", "1+",
    # underscores
    "1_000", "1_0_0", "-1_0", "_1", "1_", "1__0", "+_1", "-_1", "1_ ", " _1", "_", "__",
    # other scripts, mixed, and digit-like characters that are not decimal digits
    "\u0663", "\u0969", "\uff13", "\U0001d7d1", "\u0661\u0662\u0663", "\u0967\uff12\U0001d7d1_\u0e54", "-\uff10\uff17",
    "\u00b2", "\u2460", "\u2163", "\u96f6", "1\u00b2", "\u0661\u066b\u0665", "1\u00e9",
    # prefixes, points, exponents, words
    "0x10", "0X10", "0b1", "0o7", "1.0", "1.", ".1", "1e5", "inf", "nan", "", " ", "\u3000",
    # int64's edges
    "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
    "+9_223_372_036_854_775_807", "18446744073709551616", "-99999999999999999999", "0" * 30 + "9223372036854775807",
    "00000000000000000000000000000000000000000000009223372036854775808",
    # CPython's 4300-digit limit: counted digits (not underscores), leading zeros included
    "0" * 4300, "0" * 4299 + "7", "-" + "0" * 4299 + "7", "0" * 4301, "0" * 5000, "1" * 4301,
    "_".join("0" * 4300), "_".join("0" * 4301), " " + "0" * 4400 + " ",
    "1" * 5000 + "x", "1" * 5000 + "_x", "1" * 5000 + "__1", "1" * 5000 + "\u00e9", "1" * 5000 + "\x00",
    "x" + "1" * 5000, "\uff11" * 4301,
    # messages cut to 200 code points, repr escapes in them, both quotes
    "x" * 300, "\u00e9" * 300, "\U0001f600" * 300, "\x01" * 300, "it's", "it's \"x\"", "a\\b", "\t1\n2",
    "1 2", "\U000e0001", "\ud7ff",
]


@pytest.mark.parametrize("target", TARGETS)
def test_int_cases_are_pythons(kernels, target):
    _, _, kernel = kernels[("builtins.int", "str", target)]
    for s in INT_CASES:
        _check_int(kernel, s)


@pytest.mark.parametrize("target", TARGETS)
def test_int_edges_and_messages_exactly(kernels, target):
    _, _, kernel = kernels[("builtins.int", "str", target)]
    assert kernel([" -9_223_372_036_854_775_808\n"]) == I64_MIN
    assert kernel(["9223372036854775807"]) == I64_MAX
    assert kernel(["\u3000-\u0663\u0969\uff13\U0001d7d1_0\u00a0"]) == -33330
    with pytest.raises(OverflowError, match=r"^int\(\) of this str does not fit in int64$"):
        kernel(["9223372036854775808"])
    with pytest.raises(OverflowError):
        kernel(["-9223372036854775809"])
    with pytest.raises(ValueError) as e:
        kernel(["\x1c42"])
    assert str(e.value) == "invalid literal for int() with base 10: '\\x1c42'"
    with pytest.raises(ValueError) as e:
        kernel(["it's"])
    assert str(e.value) == "invalid literal for int() with base 10: \"it's\""
    with pytest.raises(ValueError) as e:
        kernel(["0" * 5000])
    assert str(e.value) == ("Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; "
                            "use sys.set_int_max_str_digits() to increase the limit")
    with pytest.raises(ValueError) as e:  # cut to 200 code points: the quote and 199 x, no closing quote
        kernel(["x" * 300])
    assert str(e.value) == "invalid literal for int() with base 10: '" + "x" * 199


@pytest.mark.parametrize("target", TARGETS)
def test_int_of_every_scripts_digits(kernels, target):
    """Every run of ten Unicode decimal digits reads as 0..9, alone and beside ASCII ones."""
    _, _, kernel = kernels[("builtins.int", "str", target)]
    zeros = [cp for cp in range(0x80, 0x110000) if chr(cp).isdecimal() and unicodedata.decimal(chr(cp)) == 0]
    assert len(zeros) >= 60
    for z in zeros:
        digits = "".join(chr(z + i) for i in range(10))
        assert kernel([digits]) == 123456789, hex(z)
        assert kernel(["-9" + digits[::-1]]) == -99876543210, hex(z)


# ---------------------------------------------------------------------------------------- float

def _midpoints() -> list[str]:
    ctx = Context(prec=1200)
    out = []
    for x in (1.0, 0.1, 2.0**53, 5e-324, 2.2250738585072014e-308, 1.7976931348623155e308, 123.456, 1e23, 9007199254740993.0):
        mid = ctx.divide(ctx.add(Decimal(x), Decimal(math.nextafter(x, math.inf))), 2)
        hair = Decimal((0, (1,), mid.as_tuple().exponent - 40))
        out += [str(mid), str(ctx.add(mid, hair)), str(ctx.subtract(mid, hair)), format(mid, "f")]
    return out


FLOAT_CASES = [
    # forms
    "0", "1", "-1", "+1", "1.5", "-1.5", "1e5", ".5", "5.", "1E-3", "+.5e+2", "1.e5", "-.5E-0", "0e0", "00.00e00",
    "1e+5", "1e-5", "-0", "-0.0", "+0.0", "-0e5", ".0", "0.",
    # forms that fail
    ".", "-.", "e5", "1e", "1e+", "1e-", ".e1", "1 e5", "1e 5", "1.2.3", "1..2", "1ee5", "1e5.0", "1e5e5", "", " ",
    "+", "-", "+-1", "--1", "- 1", "1-", "0x1p3", "0x10", "0X1.8P1", "1p3", "1j", "1f", "1d", "1.0L", "1,5",
    # underscores
    "1_0.5", "1e1_0", "0.0_1", "1_000_000.000_1e1_0", "1__0", "_1", "1_", "1_.5", "1._5", "1_e5", "1e_5", "1e5_",
    "_1.0", "1.0_", "in_f", "nan_", "+_1", "1_0e-_1",
    # words
    "inf", "-inf", "+inf", "INF", "iNf", "infinity", "-Infinity", "+INFINITY", "iNfInItY", "nan", "-nan", "+nan",
    "NaN", "NAN", "-NaN", " inf ", "\u3000-infinity\xa0", "infin", "infinit", "infinityx", "infs", "in", "na",
    "nan()", "nan(1)", "nanx", "-+inf", "+-nan", "- inf", "inf inity", "\u0131nf",
    # whitespace Python strips and what it does not
    " 1.5 ", "\t\n\r\x0b\x0c1.5\x0b", "\xa01.5\u3000", "\x851.5\u2028\u2029", "\x1c1.5", "1.5\x1f", "\u200b1.5",
    "\ufeff1.5", "\u180e1.5", "1.5\x00", "1\x00.5", "1\u30005",
    # other scripts
    "\uff11.\uff15", "\u0661.\u0665", "\u0661\u066b\u0665", "\u0967e\u0968", "-\U0001d7cf\U0001d7ce.\U0001d7d3e-\u0e51",
    "\u00b2", "1\u00b2", "\u2460.5",
    # range
    "1e308", "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1e309", "1e999",
    "-1e999", "0.1e310", "0.1e309", "1e310", "4.9406564584124654e-324", "5e-324", "2.4703282292062328e-324",
    "2.4703282292062327e-324", "-2.4703282292062327e-324", "1e-400", "-1e-400", "2.2250738585072014e-308",
    "2.2250738585072011e-308", "1e-320", "0e99999999999999999999", "1e99999999999999999999",
    "1e-99999999999999999999", "-0.000001e99999999999999999999", "0." + "0" * 400 + "1e401",
    "1" + "0" * 400 + "e-400", "0." + "0" * 330 + "1e331", "0." + "0" * 340 + "1", "1" + "0" * 320,
    # correct rounding: ties to even, long mantissas, exact midpoints and a hair either side
    "9007199254740993", "9007199254740995", "9007199254740993.0000000000000000000001", "0.1", "0.3", "2.675",
    "1.00000000000000011102230246251565404236316680908203125",
    "1.00000000000000011102230246251565404236316680908203125" + "0" * 5000 + "1",
    "1.00000000000000011102230246251565404236316680908203124" + "9" * 5000,
    "8.98846567431158e307", "179769313486231580793728971405303415079934132710037826936173778980444968292764750946"
    "64973543004213491280427290220549848436015064614413107106327488346521640573898810806883776296434896818810046"
    "10521574217658012893224227072" + "0" * 150,
] + _midpoints() + [
    # messages: the whole repr (the ABI carries its first 255 bytes), escapes, quotes
    "x" * 300, "it's", "it's \"x\"", "a\\b", "\t\n", "\U000e0001", "\x7f",
]


@pytest.mark.parametrize("target", TARGETS)
def test_float_cases_are_pythons_bit_for_bit(kernels, target):
    _, _, kernel = kernels[("builtins.float", "str", target)]
    for s in FLOAT_CASES:
        _check_float(kernel, s)


@pytest.mark.parametrize("target", TARGETS)
def test_float_edges_and_messages_exactly(kernels, target):
    _, _, kernel = kernels[("builtins.float", "str", target)]
    assert math.copysign(1.0, kernel(["-0"])) == -1.0 and kernel(["-0"]) == 0.0
    assert math.copysign(1.0, kernel(["-1e-400"])) == -1.0
    assert kernel(["1e999"]) == math.inf and kernel(["-1e999"]) == -math.inf
    assert math.isnan(kernel(["-nan"])) and math.copysign(1.0, kernel(["-nan"])) == -1.0
    assert kernel(["1_0.5"]) == 10.5 and kernel(["1e1_0"]) == 1e10
    assert kernel(["9007199254740993"]) == 9007199254740992.0
    with pytest.raises(ValueError) as e:
        kernel(["0x1p3"])
    assert str(e.value) == "could not convert string to float: '0x1p3'"
    with pytest.raises(ValueError) as e:
        kernel(["1__0"])
    assert str(e.value) == "could not convert string to float: '1__0'"
    with pytest.raises(ValueError) as e:
        kernel(["\x1c1"])
    assert str(e.value) == "could not convert string to float: '\\x1c1'"


@pytest.mark.parametrize("target", TARGETS)
def test_float_of_random_doubles_round_trips(kernels, target):
    """repr() of a double, and its 17- and 25-digit forms, read back to the same bits."""
    import random

    _, _, kernel = kernels[("builtins.float", "str", target)]
    rng = random.Random(11)
    for _ in range(3000):
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isnan(x):
            continue
        for s in (repr(x), f"{x:.17e}", f"{x:.25g}", f"{x:.3e}"):
            assert _bits(kernel([s])) == _bits(float(s)), s


# ------------------------------------------------------------------------ tables, code by code

@pytest.mark.parametrize("target", TARGETS)
def test_whitespace_and_digits_code_point_by_code_point(kernels, target):
    """Around a digit, every BMP code point and every astral decimal digit: int() and float() agree
    with Python (stripped, read as a digit, or an error with Python's message)."""
    _, _, int_kernel = kernels[("builtins.int", "str", target)]
    _, _, float_kernel = kernels[("builtins.float", "str", target)]
    astral_digits = [cp for cp in range(0x10000, 0x110000) if chr(cp).isdecimal()]
    for cp in list(range(0xD800)) + list(range(0xE000, 0x10000)) + astral_digits:
        c = chr(cp)
        _check_int(int_kernel, c + "1")
        _check_int(int_kernel, "1" + c)
        if cp < 0x3100 or c.isdecimal() or c.isspace():
            _check_float(float_kernel, c + "1" + c)


def test_the_strategy_alphabets_are_what_they_claim() -> None:
    assert all(c.isspace() for c in NUMBER_SPACES)
    assert not any(c.isdecimal() for c in NUMBER_NOT_DIGITS)
    # not stripped by int()/float(), though some are str.isspace()
    for c in NUMBER_NOT_SPACES:
        with pytest.raises(ValueError):
            int(c + "1")


def _script(name: str):
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_kernels_tables_are_this_pythons() -> None:
    # A Python with another Unicode version gives other tables: the checks name the files to rewrite.
    assert _script("unicode_number_tables").main(["--check"]) == 0
    assert _script("unicode_printable_table").main(["--check"]) == 0


# ------------------------------------------------------------------- differential, number_text

@pytest.mark.parametrize("target", TARGETS)
def test_number_text_draws_agree_with_python(kernels, target):
    _, _, int_kernel = kernels[("builtins.int", "str", target)]
    _, _, float_kernel = kernels[("builtins.float", "str", target)]

    @settings(max_examples=1500, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(number_text())
    def run(s: str) -> None:
        _check_int(int_kernel, s)
        _check_float(float_kernel, s)

    run()
