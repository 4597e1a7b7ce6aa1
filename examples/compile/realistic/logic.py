"""Conditions as people write them: and/or/not, chained comparisons, `in`, truthiness."""


def in_band(xs: list[int], lo: int, hi: int) -> int:
    """How many values lie in [lo, hi): a chained comparison in a generator's filter."""
    return sum(1 for x in xs if lo <= x < hi)


def valid_username(name: str, banned: list[str]) -> bool:
    """A login rule: long enough, not banned, not the admin (and/not/in short-circuiting)."""
    return len(name) >= 3 and name not in banned and not name == "admin"


def first_nonempty(a: str, b: str, c: str) -> str:
    """`a or b or c` on strings: the first non-empty one, else the last."""
    return a or b or c


def has_duplicates(xs: list[int]) -> bool:
    """any() over a two-clause generator, stopping at the first duplicate pair."""
    return any(xs[i] == xs[j] for i in range(len(xs)) for j in range(i + 1, len(xs)))


def all_positive(xs: list[float]) -> bool:
    """Truthiness of a list and all() over it (an empty list is not 'all positive' here)."""
    return bool(xs) and all(x > 0 for x in xs)


def safe_ratio(a: float, b: float) -> float:
    """Guarding a division: `b and a / b or 0.0` style, written as a conditional."""
    if not b:
        return 0.0
    return a / b


def classify(t: float) -> int:
    """A ladder of chained comparisons: 0 cold, 1 mild, 2 warm, 3 hot (-1 for nan)."""
    if t != t:
        return -1
    if t < 10.0:
        return 0
    if 10.0 <= t < 20.0:
        return 1
    if 20.0 <= t < 30.0:
        return 2
    return 3


def count_vowels(s: str) -> int:
    """Iterate a str's characters and test membership in another str."""
    n = 0
    for ch in s:
        if ch in "aeiouAEIOU":
            n += 1
    return n
