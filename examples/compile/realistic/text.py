"""Text pre- and post-processing as people write it around inference: str methods chained and
mapped (strip, split, join, replace, startswith, endswith), with the containers they fill."""


def normalize_whitespace(text: str) -> str:
    """Every run of whitespace becomes one space, none at the ends (" ".join(text.split()))."""
    return " ".join(text.split())


def clean_prompts(texts: list[str]) -> list[str]:
    """The prompts stripped, blank ones dropped."""
    return [t.strip() for t in texts if t.strip()]


def parse_csv_row(line: str) -> list[str]:
    """The fields of one comma-separated line, each stripped."""
    return [field.strip() for field in line.split(",")]


def parse_key_values(line: str) -> dict[str, str]:
    """'a=1; b = two' into a dict, keys and values stripped; parts without '=' are skipped."""
    out = {}
    for part in line.split(";"):
        if "=" not in part:
            continue
        key, value = part.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def word_counts(text: str) -> dict[str, int]:
    """How often each whitespace-separated word occurs, in order of first appearance."""
    counts = {}
    for w in text.split():
        counts[w] = counts.get(w, 0) + 1
    return counts


def strip_prefix(s: str, prefix: str) -> str:
    """s without a leading prefix, if it has one (str.removeprefix written out)."""
    if s.startswith(prefix):
        return s[len(prefix):]
    return s


def file_stem(path: str) -> str:
    """The last path component without its last extension ('a/b.tar.gz' -> 'b.tar')."""
    name = path.split("/")[-1]
    if "." not in name:
        return name
    return ".".join(name.split(".")[:-1])


def truncate_words(text: str, n: int) -> str:
    """At most n words, with '...' when some were cut."""
    words = text.split()
    if len(words) <= n:
        return " ".join(words)
    return " ".join(words[:max(n, 0)]) + "..."


def chat_prompt(system: str, turns: list[str]) -> str:
    """A chat transcript: the system line, then user and assistant turns alternating, one per line."""
    lines = ["<system> " + system.strip()]
    for i, turn in enumerate(turns):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append("<" + role + "> " + turn.strip())
    return "\n".join(lines)


def tokenize_simple(text: str, vocab: dict[str, int], unk: int) -> list[int]:
    """Ids of the words and commas of a text, unknown words as unk."""
    return [vocab.get(w, unk) for w in text.replace(",", " , ").split()]


def strip_lines(text: str) -> str:
    """Every line stripped, blank lines kept."""
    return "\n".join([line.strip() for line in text.split("\n")])


def is_question(s: str) -> bool:
    """Whether the text ends with a question mark, trailing whitespace ignored."""
    return s.rstrip().endswith("?")


def split_sentences(text: str) -> list[str]:
    """Sentences split at '.', '!' and '?', stripped, empty ones dropped."""
    return [p.strip() for p in text.replace("!", ".").replace("?", ".").split(".") if p.strip()]


def tag_lines(text: str, tag: str) -> list[str]:
    """The non-blank lines that do not yet start with the tag, tagged; tagged ones kept as they are."""
    out = []
    for line in text.split("\n"):
        line = line.rstrip()
        if not line:
            continue
        out.append(line if line.startswith(tag) else tag + line)
    return out


def split_at_pivot(words: list[str], pivot: str) -> tuple[list[str], list[str]]:
    """Words before and from a pivot in code point order, as a shard router or a merge step splits them."""
    before, after = [], []
    for w in words:
        if w < pivot:
            before.append(w)
        else:
            after.append(w)
    return before, after


def is_strictly_sorted(vocab: list[str]) -> bool:
    """Whether a vocabulary list is strictly increasing, as a binary-search lookup needs it."""
    for i in range(1, len(vocab)):
        if not vocab[i - 1] < vocab[i]:
            return False
    return True


def ascii_letter_share(text: str) -> float:
    """The share of characters that are ASCII letters (a quick language or noise filter)."""
    letters = 0
    for ch in text:
        if "a" <= ch <= "z" or "A" <= ch <= "Z":
            letters += 1
    return letters / len(text) if text else 0.0


def latest_version(tags: list[str], default: str) -> str:
    """The greatest release tag in code point order, or the default when there are none."""
    best = default
    for t in tags:
        if t.startswith("v") and t > best:
            best = t
    return best


def sorted_vocabulary(words: list[str]) -> list[str]:
    """The distinct words of a batch in code point order, as a tokenizer's build step writes them."""
    seen = {}
    for w in words:
        seen[w] = True
    return sorted(seen.keys())


def word_range(words: list[str]) -> str:
    """The least and greatest word, as a sharded index labels its key range."""
    if not words:
        return ""
    return min(words) + ".." + max(w for w in words)
