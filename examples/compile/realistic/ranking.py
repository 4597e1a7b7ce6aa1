"""Ranking as post-processing code writes it: sorted/min/max with key= (a lambda reading the enclosing
function's names, len, str.lower, counts.get over the dict itself), reverse=True keeping ties in order."""


def top_k_indices(scores: list[float], k: int) -> list[int]:
    """Indices of the k best scores, best first, ties in index order (sorted range by a lambda key)."""
    order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    return order[:k]


def most_frequent(words: list[str]) -> str:
    """The most frequent word, the first seen among equals: counts built, then max(counts, key=counts.get)."""
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    return max(counts, key=counts.get)


def vocabulary_by_frequency(counts: dict[str, int], limit: int) -> list[str]:
    """A vocabulary: the words by descending count (sorted(counts, key=counts.get, reverse=True)), cut at limit."""
    return sorted(counts, key=counts.get, reverse=True)[:limit]


def sort_labels(labels: list[str]) -> list[str]:
    """Labels in case-insensitive order (key=str.lower), equal ones in their given order."""
    return sorted(labels, key=str.lower)


def longest_word(text: str) -> str:
    """The longest whitespace-separated word (max with key=len), the first among equals."""
    return max(text.split(), key=len)


def nearest_threshold(thresholds: list[float], score: float) -> float:
    """The threshold closest to a score: min with a lambda key of the distance."""
    return min(thresholds, key=lambda t: abs(t - score))
