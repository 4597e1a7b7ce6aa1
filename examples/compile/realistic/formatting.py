"""Output formatting as people write it around inference: f-strings with format specs, str() and
format(), % formatting, for log lines, tables, progress bars and CSV."""


def score_lines(labels: list[str], scores: list[float]) -> list[str]:
    """One "label: score" line per prediction, scores to three decimals."""
    return [f"{label}: {score:.3f}" for label, score in zip(labels, scores)]


def progress_line(done: int, total: int) -> str:
    """A progress counter with its percentage, the columns kept aligned."""
    percent = 100.0 * done / total if total else 0.0
    return f"[{done:>5}/{total:<5}] {percent:5.1f}%"


def table_row(name: str, count: int, share: float) -> str:
    """A Markdown table row: the name left-aligned, the count grouped, the share as a percentage."""
    return f"| {name:<12} | {count:>10,} | {share:>8.2%} |"


def training_log(step: int, loss: float, lr: float, done: bool) -> str:
    """A training log line: zero-padded step, fixed-point loss, scientific learning rate, a flag."""
    return f"step {step:06d} loss={loss:.4f} lr={lr:.2e} done={done}"


def hex_ids(ids: list[int]) -> str:
    """Token ids as two-digit hex, space-separated, as a debug dump shows them."""
    return " ".join(f"{i:02x}" for i in ids)


def human_size(n: int) -> str:
    """A byte count in the largest unit that keeps it at or above one, to one decimal."""
    size = float(n)
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if abs(size) < 1024.0:
            return f"{size:.1f} {unit}"
        size /= 1024.0
    return f"{size:.1f} TiB"


def csv_line(values: list[float]) -> str:
    """A CSV row of floats written as str() writes them (shortest round-trip, nan and inf too)."""
    return ",".join(str(v) for v in values)


def numbered_labels(labels: list[str]) -> list[str]:
    """Labels with their 1-based index and a centred title column."""
    out = []
    for i, label in enumerate(labels, 1):
        out.append(str(i) + ". " + format(label, "^9") + "|")
    return out


def aligned_report(names: list[str], values: list[float], digits: int) -> list[str]:
    """A two-column report: the name column as wide as the longest name and the values to the
    requested decimals, the specs built at run time ({name:<{width}}, {value:.{d}f})."""
    width = 0
    for name in names:
        width = max(width, len(name))
    d = min(max(digits, 0), 6)
    return [f"{name:<{width}} | {value:>12.{d}f}" for name, value in zip(names, values)]


def banner(title: str, width: int, fill: str) -> str:
    """A title centred in a banner of a given width and fill character (fill and width at run time)."""
    w = min(max(width, 0), 60)
    pad = fill[0] if fill else "="
    return f"{title:{pad}^{w}}"


def debug_fields(name: str, count: int, ratio: float, enabled: bool) -> str:
    """A dataclass-style debug line, each value as repr() shows it (quotes around the str)."""
    return f"Config(name={name!r}, count={count!r}, ratio={ratio!r}, enabled={enabled!r})"


def ascii_log_line(user: str, message: str) -> str:
    """A log line kept ASCII whatever the user typed: ascii() escapes the rest, the message cut to 40."""
    return f"user={ascii(user)} msg={message!a:.40} len={len(repr(message))}"


def legacy_log_line(step: int, loss: float, name: str) -> str:
    """A training-log line in the old % style: %5d, %.4f, %-10s, %% (as the f-string Python's % equals)."""
    return "step %5d | loss %.4f | %-10s | %d%%" % (step, loss, name, min(max(step, 0), 100))


def legacy_greeting(name: str) -> str:
    """One value without a tuple, repr'd with %r."""
    return "hello %r" % name
