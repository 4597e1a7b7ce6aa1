"""Errors handled where they happen, as Python code does it: try/except around a lookup, an index or a
division (one kind, a tuple of kinds, ArithmeticError/LookupError, an else clause, re-raising another),
the handler falling through, returning, or leaving a loop."""

import numpy as np


def token_ids(tokens: list[str], vocab: dict[str, int], unknown: int) -> list[int]:
    """Ids of tokens, the unknown id where the vocabulary has none (KeyError handled per token)."""
    ids = []
    for t in tokens:
        try:
            ids.append(vocab[t])
        except KeyError:
            ids.append(unknown)
    return ids


def mean_or_zero(values: list[float]) -> float:
    """The mean, 0.0 for no values (ZeroDivisionError of the division handled)."""
    try:
        return sum(values) / len(values)
    except ZeroDivisionError:
        return 0.0


def first_score_or(scores: np.ndarray, default: float) -> float:
    """The first score, or a default where there is none (NumPy's IndexError of an empty or 0-d array)."""
    try:
        return float(scores[0])
    except IndexError:
        return default


def ratio_label(a: int, b: int) -> str:
    """a // b and a % b described, "undefined" where Python's integer division raises (ArithmeticError)."""
    try:
        q = a // b
        r = a % b
    except ArithmeticError:
        return "undefined"
    else:
        return f"{q} rem {r}"


def prefix_sums(xs: list[int], upto: int) -> list[int]:
    """Running sums of xs up to index upto, stopping at the end of the list (IndexError leaves the loop)."""
    out = []
    total = 0
    for i in range(upto):
        try:
            total += xs[i]
        except (IndexError, KeyError):
            break
        out.append(total)
    return out


def checked_lookup(table: dict[str, float], key: str) -> float:
    """A lookup whose KeyError becomes a ValueError with a message, as an API boundary reports it."""
    try:
        return table[key]
    except LookupError:
        raise ValueError(f"unknown key {key!r}")


def parse_ids(fields: list[str]) -> list[int]:
    """Token ids parsed from text fields, the malformed ones skipped (int() of a str, ValueError handled)."""
    ids = []
    for f in fields:
        try:
            ids.append(int(f))
        except ValueError:
            continue
    return ids


def parse_threshold(text: str, default: float) -> float:
    """A threshold read from a config value: float() of the text, the default where it does not parse."""
    try:
        return float(text)
    except ValueError:
        return default


def parse_counting_attempts(fields: list[str]) -> list[int]:
    """Sums the fields that parse as ints, counting every attempt in a finally clause, which runs whether
    the parse worked, failed (ValueError handled) or was skipped by continue: [total, attempts]."""
    total = 0
    attempts = 0
    for f in fields:
        try:
            if not f:
                continue
            total += int(f)
        except ValueError:
            total -= 1
        finally:
            attempts += 1
    return [total, attempts]


def first_parsed_index(fields: list[str], stop: int) -> int:
    """The index of the first field that parses as an int, the search bounded by stop; the finally clause
    runs on the return from inside the try and on leaving the loop by break, and counts the fields looked at."""
    looked = 0
    for i, f in enumerate(fields):
        try:
            if i >= stop:
                break
            sign = 1 if int(f) >= 0 else -1
            return sign * (i * 1000 + looked)
        except ValueError:
            pass
        finally:
            looked += 1
    return -looked


def guarded_ratio(a: float, b: float) -> float:
    """a / b with a finally clause that runs while the ZeroDivisionError leaves the function (no handler):
    the error still reaches the caller, the clause's work is done."""
    steps = 0
    try:
        return a / b
    finally:
        steps += 1


def checked_ratio(a: float, b: float) -> float:
    """a / b whose finally clause raises a ValueError of its own for a zero divisor: that error replaces
    the ZeroDivisionError in flight, as Python's does; for any other divisor the return goes through."""
    try:
        return a / b
    finally:
        if b == 0.0:
            raise ValueError("no ratio for a zero divisor")
