"""Containers built the way people build them: empty lists and dicts filled by append, item
assignment and d.get (no annotations on the locals), dict literals and comprehensions, list
concatenation and repetition, and dicts and tuples returned to the caller."""


LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def word_frequencies(tokens: list[str]) -> dict[str, int]:
    """How often each token occurs, in order of first appearance (the counts = {} idiom)."""
    counts = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    return counts


def build_vocab(tokens: list[str], min_count: int) -> dict[str, int]:
    """A token -> id table of the tokens seen at least min_count times, ids in order of first appearance."""
    counts = {}
    for t in tokens:
        if t in counts:
            counts[t] += 1
        else:
            counts[t] = 1
    vocab = {}
    for t, n in counts.items():
        if n >= min_count:
            vocab[t] = len(vocab)
    return vocab


def encode_tokens(tokens: list[str], vocab: dict[str, int], unk: int) -> list[int]:
    """Token ids with an unknown-token fallback (vocab.get(t, unk))."""
    return [vocab.get(t, unk) for t in tokens]


def pad_ids(ids: list[int], length: int, pad: int) -> list[int]:
    """Truncates or pads a sequence of ids to a fixed length ([pad] * n and +=)."""
    out = ids[:length]
    out += [pad] * (length - len(out))
    return out


def histogram(values: list[float], bins: int) -> list[int]:
    """Counts of values in equal-width bins between the min and the max (counts = [0] * bins, counts[i] += 1)."""
    if bins <= 0 or not values:
        return []
    lo, hi = min(values), max(values)
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        i = int((v - lo) / width) if width > 0 else 0
        if i >= bins:
            i = bins - 1
        counts[i] += 1
    return counts


def min_max_mean(xs: list[float]) -> tuple[float, float, float]:
    """Three statistics in one pass, returned as a tuple ((0.0, 0.0, 0.0) for no values)."""
    if not xs:
        return 0.0, 0.0, 0.0
    lo, hi, total = xs[0], xs[0], 0.0
    for x in xs:
        if x < lo:
            lo = x
        if x > hi:
            hi = x
        total += x
    return lo, hi, total / len(xs)


def split_by_score(labels: list[str], scores: list[float], threshold: float) -> tuple[list[str], list[str]]:
    """The labels at or above a threshold and those below it, as two lists."""
    keep, drop = [], []
    for label, s in zip(labels, scores):
        if s >= threshold:
            keep.append(label)
        else:
            drop.append(label)
    return keep, drop


def label_scores(labels: list[str], scores: list[float]) -> dict[str, float]:
    """A label -> score table from two parallel lists (dict(zip(...)); a repeated label keeps its last score)."""
    return dict(zip(labels, scores))


def invert_mapping(d: dict[str, str]) -> dict[str, str]:
    """Values to keys (a dict comprehension over items(); a repeated value keeps the last key)."""
    return {v: k for k, v in d.items()}


def merge_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    """Two count tables added key by key (a copy with dict(a), then out[k] = out.get(k, 0) + n)."""
    out = dict(a)
    for k, n in b.items():
        out[k] = out.get(k, 0) + n
    return out


def sliding_sums(xs: list[int], k: int) -> list[int]:
    """Sums of each window of k values, the window kept as a list (window[1:] + [x])."""
    window = []
    sums = []
    for x in xs:
        window = window + [x]
        if len(window) > k:
            window = window[1:]
        if len(window) == k:
            sums.append(sum(window))
    return sums


def running_max(xs: list[float]) -> list[float]:
    """The maximum so far at each position (reads out[-1] of a list built without an annotation)."""
    out = []
    for x in xs:
        out.append(x if not out or x > out[-1] else out[-1])
    return out


def title_rule(title: str, width: int) -> str:
    """A title under a rule of '=' as wide as asked ("=" * width)."""
    return "=" * width + "\n" + title


def char_classes(s: str) -> dict[str, int]:
    """Counts of letters, digits, spaces and others in a text, from a dict literal of zeros."""
    counts = {"alpha": 0, "digit": 0, "space": 0, "other": 0}
    for ch in s:
        if ch in LETTERS:
            counts["alpha"] += 1
        elif ch in "0123456789":
            counts["digit"] += 1
        elif ch == " ":
            counts["space"] += 1
        else:
            counts["other"] += 1
    return counts


def best_label(scores: dict[str, float]) -> tuple[str, float]:
    """The label with the highest score and its score, the first one on ties (("", 0.0) for none)."""
    best, best_score = "", 0.0
    first = True
    for label, s in scores.items():
        if first or s > best_score:
            best, best_score = label, s
            first = False
    return best, best_score


def dedupe_keep_order(items: list[str]) -> list[str]:
    """The items without repeats, in order of first appearance (a seen dict and an out list)."""
    seen = {}
    out = []
    for x in items:
        if x not in seen:
            seen[x] = True
            out.append(x)
    return out


def flatten_pairs(a: list[int], b: list[int]) -> list[int]:
    """Interleaves two lists pairwise and appends what is left of the longer (extend and slices)."""
    out = []
    n = min(len(a), len(b))
    for i in range(n):
        out.extend([a[i], b[i]])
    out.extend(a[n:])
    out.extend(b[n:])
    return out
