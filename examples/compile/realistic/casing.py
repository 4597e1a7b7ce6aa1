"""Case-insensitive text handling as people write it around inference: lower() and upper() chained
with the other str methods, in comprehensions, dict keys and comparisons."""


def normalize_query(query: str) -> str:
    """A search query lower-cased with its whitespace collapsed, as a cache key."""
    return " ".join(query.strip().lower().split())


def slugify(title: str) -> str:
    """A title as a URL slug: lower-cased words joined by hyphens."""
    return "-".join(title.lower().split())


def unique_ignoring_case(words: list[str]) -> list[str]:
    """The words in order, dropping any that repeat an earlier one up to case."""
    seen = {}
    out = []
    for w in words:
        key = w.lower()
        if key not in seen:
            seen[key] = 1
            out.append(w)
    return out


def is_shouting(text: str) -> bool:
    """Whether the text has cased letters and all of them are capitals (Python's isupper, written out)."""
    return text == text.upper() and text != text.lower()


def keyword_hits(text: str, keywords: list[str]) -> int:
    """How many of the keywords occur in the text, ignoring case."""
    haystack = text.lower()
    return sum(1 for k in keywords if k.lower() in haystack)


def constant_name(label: str) -> str:
    """A label as a constant's name: upper-cased, spaces and hyphens as underscores."""
    return label.strip().upper().replace(" ", "_").replace("-", "_")


def lowercase_counts(text: str) -> dict[str, int]:
    """How often each word occurs, counted case-insensitively, keyed by its lower-case form."""
    counts = {}
    for w in text.lower().split():
        counts[w] = counts.get(w, 0) + 1
    return counts


def same_ignoring_case(a: str, b: str) -> bool:
    """Whether two strings are equal up to case (the lower() comparison people write; casefold aside)."""
    return a.lower() == b.lower()
