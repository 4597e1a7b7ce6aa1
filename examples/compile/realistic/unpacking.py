"""Tuples as people use them: unpacking, enumerate, zip, dict.items(), helpers returning pairs."""


def fibonacci(n: int) -> list[int]:
    """The first n Fibonacci numbers with `a, b = b, a + b`."""
    out: list[int] = []
    a, b = 0, 1
    for _ in range(n):
        out.append(a)
        a, b = b, a + b
    return out


def argmax_of(xs: list[float]) -> int:
    """Index of the largest value (the first of equals), tracking a pair through enumerate."""
    best_i, best = -1, 0.0
    for i, x in enumerate(xs):
        if best_i < 0 or x > best:
            best_i, best = i, x
    return best_i


def dot(xs: list[float], ys: list[float]) -> float:
    """A dot product over zip (the shorter list decides) with a generator expression."""
    return sum(x * y for x, y in zip(xs, ys))


def invoice_total(prices: dict[str, float], counts: dict[str, int]) -> float:
    """Sum price * count over a dict's items, for the items that were ordered."""
    total = 0.0
    for name, price in prices.items():
        if name in counts:
            total += price * counts[name]
    return total


def bounds(xs: list[int]):
    lo, hi = xs[0], xs[0]
    for x in xs:
        lo, hi = min(lo, x), max(hi, x)
    return lo, hi


def spread(xs: list[int]) -> list[int]:
    """A module helper returning a tuple, unpacked by the caller: [min, max, max - min]."""
    lo, hi = bounds(xs)
    return [lo, hi, hi - lo]


def numbered(lines: list[str], first: int) -> list[str]:
    """Number lines from a start with enumerate(xs, start)."""
    return [str_num(i) + ": " + line for i, line in enumerate(lines, first)]


def str_num(i: int) -> str:
    """An int's decimal digits built by hand (indexing a str, a while loop), as str(i) gives them."""
    digits = "0123456789"
    if i == 0:
        return "0"
    sign = "-" if i < 0 else ""
    i = abs(i)
    out = ""
    while i > 0:
        out = digits[i % 10] + out
        i //= 10
    return sign + out


def split_shape(rows: list[int]) -> int:
    """Unpack a list of known length (ValueError if it is not two items long)."""
    n, d = rows
    return n * d
