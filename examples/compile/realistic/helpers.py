"""Programs split into functions: module helpers, nested helpers, defaults and keyword arguments."""


def _lerp(a, b, t=0.5):
    return a + (b - a) * t


def smooth(xs: list[float], t: float) -> list[float]:
    """Exponential smoothing through a module helper with a default argument."""
    out: list[float] = []
    prev = 0.0
    for i, x in enumerate(xs):
        prev = x if i == 0 else _lerp(prev, x, t=t)
        out.append(prev)
    return out


def normalize(xs: list[float]) -> list[float]:
    """Min-max scaling with a nested helper that takes what it needs as parameters."""
    def scale(x, lo, span):
        return (x - lo) / span if span > 0 else 0.0

    lo = min(xs)
    span = max(xs) - lo
    return [scale(x, lo, span) for x in xs]


def poly3(xs: list[float], c0: float, c1: float, c2: float, c3: float) -> list[float]:
    """A cubic through a helper called with keywords in another order."""
    return [horner(x, d=c0, c=c1, b=c2, a=c3) for x in xs]


def horner(x, a, b, c, d):
    return ((a * x + b) * x + c) * x + d


def digit_sum(n: int) -> int:
    """A helper specialised for ints, called from a loop."""
    total = 0
    for part in [n, n // 10, n // 100]:
        total += last_digit(part)
    return total


def last_digit(v):
    return abs(v) % 10


_clip01 = lambda v: min(max(v, 0.0), 1.0)


def clipped_ramp(xs: list[float], gain: float) -> list[float]:
    """A module-level lambda used as a small helper: each value scaled and clipped to [0, 1]."""
    return [_clip01(x * gain) for x in xs]


def cleaned_tokens(text: str) -> list[str]:
    """A nested lambda with a default argument, called twice per word: punctuation stripped, lowered."""
    clean = lambda w, chars=".,;:!?": w.strip(chars).lower()
    return [clean(w) for w in text.split() if clean(w)]
