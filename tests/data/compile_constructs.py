"""Edge cases of the constructs opgen compile implements itself (tests/test_compile_constructs.py)."""

import numpy as np
import numpy.typing as npt


def range_values(start: int, stop: int, step: int) -> list[int]:
    return list(range(start, stop, step))


def range_count(start: int, stop: int, step: int) -> int:
    n = 0
    for _ in range(start, stop, step):
        n += 1
        if n > 10:
            break
    return n


def rounded(x: float) -> int:
    return round(x)


def truncated(x: float) -> int:
    return int(x)


def lazy_any(xs: list[int]) -> bool:
    return any(10 // x > 1 for x in xs)


def lazy_all(xs: list[int]) -> bool:
    return all(10 // x < 20 for x in xs)


def guarded(x: int) -> bool:
    return x != 0 and 10 // x > 1


def either(a: int, b: int) -> int:
    return a or b


def max_pair(a: float, b: float) -> float:
    return max(a, b)


def min_list(xs: list[float]) -> float:
    return min(xs)


def char_at(s: str, i: int) -> str:
    return s[i]


def chars(s: str) -> list[str]:
    return [c for c in s]


def skip_evens(n: int) -> int:
    i = 0
    total = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        total += i
    return total


def twice(x):
    return x + x


def both(a: int, b: float) -> float:
    return twice(a) + twice(b)


def widen_int8(x: npt.NDArray[np.int8], k: int) -> npt.NDArray[np.int8]:
    return x + k


def unpack_list(xs: list[int]) -> int:
    a, b, c = xs
    return a * 100 + b * 10 + c


def is_int(flag: bool) -> bool:
    return isinstance(flag, int) and not isinstance(flag, str)


def none_checks(x: int, s: str) -> list[bool]:
    """`is None` folds: a compiled value never is None."""
    return [x is None, x is not None, None is s, s is not None]


def flag_formats(flag: bool, n: int) -> list[str]:
    """bool's __format__: str(flag) for the empty spec, int's for any other."""
    return [f"{flag}", str(flag), format(flag), f"{flag:d}", f"{flag:>5}", f"{n!s:>4}|{flag!s:^7}"]


def formatted_pieces(x: float, s: str) -> str:
    """An f-string of literal text only, one of a lone field, and nested ones."""
    return f"plain" + f"{x}" + f"<{s:*^9.2}>{x:+08.2f}{{braces}}"


def nested_specs(x: float, n: int, s: str, w: int, p: int, fill: str, spec: str) -> list[str]:
    """Replacement fields inside a format spec: the spec is built at run time from them (each
    formatted, with its own conversion and spec), then the value formatted with it."""
    return [f"{x:>{w}}", f"{x:.{p}f}", f"{s:{fill}^{w}}", f"{n:{spec}}", f"{x:{spec}}", f"{s:{spec}}",
            f"[{n:+0{w},}]", f"{x:{w}.{p}{'e'}}", f"{s:{fill!s}<{w:d}.{p}}", f"{n:{w!r}}"]


def reprs(s: str, n: int, x: float, flag: bool) -> list[str]:
    """repr()/ascii() and the !r/!a conversions of each value type, alone and under a format spec."""
    return [repr(s), ascii(s), f"{s!r}", f"{s!a}", f"{s!r:>12}", f"{s!a:*^16.5}", repr(n), ascii(n), f"{n!r:>6}",
            repr(x), ascii(x), f"{x!r}", f"{x!a:>10}", repr(flag), ascii(flag), f"{flag!r:>6}|{flag!a}",
            f"{s!r:{n % 7 + 3}}"]


def list_reprs(words: list[str], counts: list[int]) -> list[str]:
    """A list's repr and ascii as the compile error for repr(list) tells one to write them (Python's
    list repr is exactly this)."""
    return ["[" + ", ".join(repr(w) for w in words) + "]", "[" + ", ".join(ascii(w) for w in words) + "]",
            "[" + ", ".join(repr(c) for c in counts) + "]"]
