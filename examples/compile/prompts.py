"""Prompt prefixing, as an embedding model's query side does it (EmbeddingGemma's task prompts)."""

TASK_PREFIXES = {
    "query": "task: search result | query: ",
    "document": "title: none | text: ",
    "classification": "task: classification | query: ",
    "clustering": "task: clustering | query: ",
    "similarity": "task: sentence similarity | query: ",
}


def prefix_queries(text: list[str], task: str = "query") -> list[str]:
    """Each text with the task's prompt in front; an unknown task is a KeyError."""
    prefix = TASK_PREFIXES[task]
    return [prefix + s for s in text]


def prefix_for_search(text: list[str]) -> list[str]:
    """The prefix looked up at compile time: the key is a constant."""
    return [TASK_PREFIXES["query"] + s for s in text]


def label_matches(labels: list[str], wanted: str) -> list[bool]:
    """str == str (operator.eq) into a list of bools."""
    return [label == wanted for label in labels]
