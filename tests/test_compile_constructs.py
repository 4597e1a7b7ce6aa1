"""The constructs opgen compile implements itself (range, round/int of floats, lazy any/all and
`and`/`or`, min/max with nan, str indexing and iteration, while/continue, helpers specialised per
call signature, Python ints meeting int8 arrays, list unpacking, folded isinstance), each compiled
once and checked against Python on the edge inputs where a native translation goes wrong."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from opgen.host import load_compiled
from tests.compile_support import CHECKOUT, compile_data_functions, data_function, INT64, as_int64, assert_same, outcome

SOURCE = CHECKOUT / "tests" / "data" / "compile_constructs.py"
LO, HI = INT64
NAN, INF = math.nan, math.inf

# function -> argument tuples; every one is compared with Python (errors by type).
CASES: dict[str, list[tuple]] = {
    "range_values": [(0, 5, 1), (5, 0, -2), (0, 5, -1), (3, 3, 1), (LO, HI, 2**62), (HI, LO, -(2**62)), (0, 1, 0),
                     (-7, 7, 3), (HI - 2, HI, 1)],
    "range_count": [(LO, HI, 1), (HI, LO, -1), (0, 10, 0), (LO, LO + 3, 1)],
    "rounded": [(0.5,), (1.5,), (2.5,), (-0.5,), (-1.5,), (2.675,), (NAN,), (INF,), (-INF,), (9.2e18,),
                (-9223372036854775808.0,), (4503599627370497.0,)],
    "truncated": [(-0.9,), (0.9,), (-2.5,), (NAN,), (INF,), (9223372036854775807.0,), (-9223372036854775808.0,),
                  (1e300,)],
    "lazy_any": [([1, 0],), ([0, 1],), ([],), ([20, 30, 1, 0],)],
    "lazy_all": [([0, 1],), ([1, 0],), ([],), ([1, 2, 3],)],
    "guarded": [(0,), (1,), (20,)],
    "either": [(0, 5), (3, 5), (0, 0)],
    "max_pair": [(NAN, 1.0), (1.0, NAN), (0.0, -0.0), (-0.0, 0.0), (-INF, INF)],
    "min_list": [([2.0, NAN, 1.0],), ([NAN, 1.0],), ([-0.0, 0.0],), ([0.0, -0.0],), ([],)],
    "char_at": [("héllo", 1), ("héllo", -1), ("日本", 2), ("", 0), ("ab", -3)],
    "chars": [("héllo 日本",), ("",)],
    "skip_evens": [(0,), (1,), (10,), (-3,)],
    "both": [(3, 1.25), (HI, 0.5), (0, NAN)],
    "widen_int8": [(np.array([1, -2, 127], np.int8), 1), (np.array([0], np.int8), 127), (np.array([0], np.int8), 128),
                   (np.array([0], np.int8), -129), (np.array([100], np.int8), 100)],
    "unpack_list": [([1, 2, 3],), ([1, 2],), ([1, 2, 3, 4],)],
    "is_int": [(True,), (False,)],
    "none_checks": [(0, ""), (5, "a")],
    "flag_formats": [(True, 7), (False, -12345)],
    "formatted_pieces": [(1.5, "héllo"), (-0.0, ""), (NAN, "日本語"), (1e16, "ab"), (-INF, "x")],
    "nested_specs": [(3.14159, 42, "héllo", 9, 2, "*", ">8"), (-0.0, -7, "", 0, 0, "中", ""),
                     (NAN, HI, "日本語", 12, 5, " ", "*^11"), (1e16, LO, "ab", 3, 17, "0", "<3"),
                     (2.5, 5, "s", 4, 1, "=", "_<7"), (1.0, 1, "a", 5, 2, "<", "q")],
    "list_reprs": [(["it's", 'a "b"', "\u200b", ""], [1, -2]), ([], []), (["\\", "é\U0001f600"], [LO, HI])],
    "reprs": [("it's", 3, 0.1, True), ('say "hi"', -5, 1e16, False), ("both ' and \"", LO, NAN, True),
              ("tab\tnl\ncr\r\x00\x7f\\", HI, -INF, False), ("é中\U0001f600\u3000\u200b\U000e0001\xa0\xad", 0, -0.0, True),
              ("", 7, 1e-05, False)],
}


def python(name: str) -> Any:
    return data_function(SOURCE, name)


def int64_held(value: Any) -> tuple[str, Any]:
    return ("error", OverflowError()) if type(value) is int and not LO <= value <= HI else ("ok", value)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return compile_data_functions(tmp_path_factory, SOURCE, CASES, "constructs")


@pytest.mark.parametrize("name", sorted(CASES))
def test_construct_matches_python_on_its_edges(name: str, libraries: dict[str, Path]) -> None:
    fn, native = python(name), load_compiled(libraries[name])
    for args in CASES[name]:
        # NumPy reads only an exact Python int as a weak scalar, so the int64-held oracle's ints
        # (a subclass) would change what it computes: array cases run on plain ints.
        held = list(args) if any(isinstance(a, np.ndarray) for a in args) else as_int64(list(args))
        expected = outcome(fn, held)
        if expected[0] == "ok":
            expected = int64_held(expected[1]) if not isinstance(expected[1], list) else expected
        assert_same(expected, outcome(native, list(args)), context=f"{name}{args!r}")


def test_python_ints_meet_int8_arrays_as_numpy_2_says() -> None:
    """The cases above compare with NumPy itself: 128 with an int8 array is NumPy 2's OverflowError,
    127 + 100 inside the array wraps."""
    with pytest.raises(OverflowError):
        np.array([0], np.int8) + 128
    assert (np.array([100], np.int8) + 100).tolist() == [-56]
