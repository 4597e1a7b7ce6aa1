"""Python's builtins as people call them: min, max, sum, sorted, round, abs, int, len, list, reversed."""


def median(xs: list[float]) -> float:
    """The median of a non-empty list (sorted, integer division, the mean of the middle two)."""
    s = sorted(xs)
    n = len(s)
    if n % 2 == 1:
        return s[n // 2]
    return (s[n // 2 - 1] + s[n // 2]) / 2


def top_k_total(xs: list[int], k: int) -> int:
    """The sum of the k largest values: sorted(reverse=True) and a bounded range."""
    s = sorted(xs, reverse=True)
    total = 0
    for i in range(min(k, len(s))):
        total += s[i]
    return total


def clamp_round(xs: list[float], lo: float, hi: float) -> list[int]:
    """Clamp with min/max, then round half to even (Python's round), as ints."""
    return [round(min(max(x, lo), hi)) for x in xs]


def mean_abs(xs: list[int]) -> float:
    """Mean absolute value (ZeroDivisionError on an empty list, as in Python)."""
    return sum(abs(x) for x in xs) / len(xs)


def char_histogram(s: str, alphabet: str) -> list[int]:
    """Counts of each character of an alphabet in a text: nested iteration over strs."""
    return [sum(1 for ch in s if ch == a) for a in alphabet]


def reversed_words(words: list[str]) -> list[str]:
    """list(reversed(xs))."""
    return list(reversed(words))


def truncate_all(xs: list[float]) -> list[int]:
    """int() of floats: truncation toward zero (ValueError for nan, OverflowError for inf)."""
    return [int(x) for x in xs]


def range_stats(n: int) -> list[int]:
    """sum() and max() straight over a range, and list(range(...)) with a step."""
    evens = list(range(0, n, 2))
    return [sum(range(n)), max(range(n)) if n > 0 else -1, len(evens)]


def longest(words: list[str]) -> int:
    """max() over a generator of lengths, with an explicit empty case."""
    if not words:
        return 0
    return max(len(w) for w in words)


def is_number_list(xs: list[int]) -> bool:
    """isinstance() on a statically typed value folds to a constant, as it would always answer."""
    return isinstance(xs, list) and not isinstance(xs, dict)
