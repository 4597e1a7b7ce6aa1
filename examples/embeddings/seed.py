"""The seed example: prefix texts with a task prompt, tokenize, run the model, return the matrix.

    opgen compile examples/embeddings/seed.py:embed -o out/seed

``opgen.pipelines.embed`` is the model's native pipeline (WordPiece tokenizer, BERT encoder,
mean pooling, L2 normalisation, every step a verified registry kernel), linked into the
compiled library; the task prompt comes from the module-level table, looked up with the
run-time key (an unknown task is a KeyError, as in Python). The same function runs as plain
Python too (opgen.pipelines.embed then calls the same pipeline through opgen.Client).
"""

import numpy as np
import numpy.typing as npt

import opgen.pipelines

# all-MiniLM-L6-v2 was not trained with prompts; plain prefixes in EmbeddingGemma's style
# show the pattern (they change the vectors a little, not the ranking).
TASKS = {
    "query": "task: search result | query: ",
    "document": "title: none | text: ",
}


def embed(texts: list[str], task: str) -> npt.NDArray[np.float32]:
    return opgen.pipelines.embed("all-minilm-l6-v2", [TASKS[task] + t for t in texts])
