"""``Client().embeddings.create(...)``: OpenAI's embeddings call, answered in-process by a
native pipeline built only from verified registry kernels.

The responses are the ``openai`` package's own types (CreateEmbeddingResponse, Embedding,
Usage) and failures are its own exceptions (NotFoundError for an unknown model,
BadRequestError for bad input), so code written against the OpenAI client works as is.
The first call for a model links its pipeline library (cached by content, like every
opgen build) and loads it; later calls reuse it.
"""

from __future__ import annotations

import base64
import ctypes
import threading
from pathlib import Path
from typing import Any, Literal

import numpy as np
import openai
from openai.types import CreateEmbeddingResponse, Embedding
from openai.types.create_embedding_response import Usage

from opgen.errors import OpgenError
from opgen.verify.ffi import ErrorInfo, String, string_array
from opgen.project import Project
from opgen.pipelines.library import build_pipeline
from opgen.pipelines.models import ModelInfo, ModelNotFound, file_owners, local_copy, resolve

try:  # the HTTP library the installed openai package builds its errors around
    import httpx2 as _http
except ImportError:  # pragma: no cover - older openai releases use httpx
    import httpx as _http


def _api_error(cls: type[openai.APIStatusError], status: int, message: str, param: str | None,
               code: str | None) -> openai.APIStatusError:
    body = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    response = _http.Response(status, request=_http.Request("POST", "opgen://local/v1/embeddings"),
                              json={"error": body})
    return cls(f"Error code: {status} - {message}", response=response, body=body)


def bad_request(message: str, param: str, code: str | None = None) -> openai.BadRequestError:
    return _api_error(openai.BadRequestError, 400, message, param, code)


class NativePipeline:
    """One loaded pipeline library with its model open; calls are serialised (the glue
    reuses its activation buffers from call to call)."""

    def __init__(self, library: Path, model_dir: Path, config: list[float], tokenizer: Any = None):
        self.lib = ctypes.CDLL(str(library))
        self.lib.opgen_pipeline_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_double), ctypes.c_int64,
                                                 ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ErrorInfo)]
        self.lib.opgen_pipeline_open.restype = ctypes.c_int32
        self.lib.opgen_pipeline_dim.argtypes = [ctypes.c_void_p]
        self.lib.opgen_pipeline_dim.restype = ctypes.c_int64
        self.lib.opgen_pipeline_embed.argtypes = [ctypes.c_void_p, ctypes.POINTER(String), ctypes.c_int64,
                                                  ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                                  ctypes.POINTER(ErrorInfo)]
        self.lib.opgen_pipeline_embed.restype = ctypes.c_int32
        self.lib.opgen_pipeline_close.argtypes = [ctypes.c_void_p]
        self.lib.opgen_pipeline_close.restype = None
        values = (ctypes.c_double * len(config))(*config)
        handle, err = ctypes.c_void_p(), ErrorInfo()
        if self.lib.opgen_pipeline_open(str(model_dir).encode(), values, len(config), ctypes.byref(handle),
                                        ctypes.byref(err)) != 0:
            raise OpgenError(f"cannot open the model in {model_dir}: {err.message.decode(errors='replace')}")
        self.handle = handle
        if tokenizer is not None:
            self._set_tokenizer(tokenizer)
        self.dim = int(self.lib.opgen_pipeline_dim(handle))
        self._lock = threading.Lock()

    def _set_tokenizer(self, tok: Any) -> None:
        """Hand the BPE tables (opgen.text.bpe_encode's arguments) to the glue, once."""
        fn = self.lib.opgen_pipeline_set_tokenizer
        fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(String), ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
                       ctypes.c_int64, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64, ctypes.POINTER(ErrorInfo)]
        fn.restype = ctypes.c_int32
        keep: list = []
        vocab = string_array([piece.encode("utf-8") for piece in tok.vocab], keep)
        merges = (ctypes.c_int64 * max(len(tok.merges), 1))(*tok.merges)
        added = (ctypes.c_int64 * max(len(tok.added), 1))(*tok.added)
        err = ErrorInfo()
        if fn(self.handle, vocab, len(tok.vocab), merges, len(tok.merges), added, len(tok.added), ctypes.byref(err)):
            raise OpgenError(f"cannot set the tokenizer: {err.message.decode(errors='replace')}")

    def embed(self, texts: list[str], dims: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(n x dims float32 embeddings, L2-normalised; token count per text)."""
        dims = self.dim if dims is None else dims
        keep: list = []
        items = string_array([t.encode("utf-8") for t in texts], keep)
        out = np.empty((len(texts), dims), dtype=np.float32)
        tokens = np.zeros(len(texts), dtype=np.int64)
        err = ErrorInfo()
        with self._lock:
            status = self.lib.opgen_pipeline_embed(self.handle, items, len(texts), dims, out.ctypes.data,
                                                   tokens.ctypes.data, ctypes.byref(err))
        if status != 0:
            raise OpgenError(f"the native pipeline failed: {err.message.decode(errors='replace')}")
        return out, tokens

    def stage_seconds(self) -> tuple[float, float, float] | None:
        """Seconds spent tokenizing, in the encoder and pooling since the pipeline opened, or
        None for a library built before the glue kept the count."""
        try:
            fn = self.lib.opgen_pipeline_stage_seconds
        except AttributeError:
            return None
        fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)]
        fn.restype = None
        got = (ctypes.c_double * 3)()
        with self._lock:
            fn(self.handle, got)
        return (got[0], got[1], got[2])

    def close(self) -> None:
        if self.handle:
            self.lib.opgen_pipeline_close(self.handle)
            self.handle = None

    def __del__(self) -> None:  # noqa: D105
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown: the library may be gone)
            pass


class Embeddings:
    def __init__(self, client: "Client"):
        self._client = client

    def create(self, *, model: str, input: str | list[str], dimensions: int | None = None,
               encoding_format: Literal["float", "base64"] = "float", user: str | None = None,
               **unsupported: Any) -> CreateEmbeddingResponse:
        """OpenAI's ``embeddings.create``: one embedding per input string, in order."""
        if unsupported:
            name = sorted(unsupported)[0]
            raise bad_request(f"Unrecognized request argument supplied: {name}", name)
        texts = _texts(input)
        if encoding_format not in ("float", "base64"):
            raise bad_request(f"'{encoding_format}' is not one of ['float', 'base64'] - 'encoding_format'",
                              "encoding_format")
        info = self._client._model(model)
        pipeline = self._client._pipeline(info)
        vectors, tokens = pipeline.embed(texts, _dimensions(info, pipeline.dim, dimensions))
        data = [Embedding.model_construct(index=i, object="embedding", embedding=_encode(v, encoding_format))
                for i, v in enumerate(vectors)]
        total = int(tokens.sum())
        return CreateEmbeddingResponse(data=data, model=info.name, object="list",
                                       usage=Usage(prompt_tokens=total, total_tokens=total))


class Client:
    """An OpenAI-style client whose embeddings come from opgen's native pipelines.

    ``model_dirs`` maps a model name to a local copy of its files (needed for models whose
    weights opgen cannot install, such as EmbeddingGemma; $OPGEN_MODEL_DIR_<NAME> works too).
    """

    def __init__(self, *, root: Path | str | None = None, target: str = "cpu-cpp",
                 model_dirs: dict[str, Path | str] | None = None, max_batch: int = 32):
        self.project = Project.locate(Path(root) if root else None)
        self.target = target
        self.model_dirs = {k.lower(): Path(v) for k, v in (model_dirs or {}).items()}
        self.max_batch = max_batch
        self.embeddings = Embeddings(self)
        self._pipelines: dict[str, NativePipeline] = {}
        self._lock = threading.Lock()

    def _model(self, name: str) -> ModelInfo:
        if not isinstance(name, str) or not name:
            raise bad_request("you must provide a model parameter", "model")
        try:
            return resolve(name)
        except OpgenError:
            raise _api_error(openai.NotFoundError, 404, f"The model `{name}` does not exist or you do not have "
                             "access to it.", "model", "model_not_found") from None

    def _pipeline(self, info: ModelInfo) -> NativePipeline:
        with self._lock:
            if info.name not in self._pipelines:
                model_dir = self._model_dir(info)
                library = build_pipeline(self.project, info, self.target)
                tokenizer = info.tokenizer(model_dir) if info.tokenizer else None
                self._pipelines[info.name] = NativePipeline(library.path, model_dir,
                                                            info.config(model_dir, self.max_batch, tokenizer),
                                                            tokenizer)
            return self._pipelines[info.name]

    def _model_dir(self, info: ModelInfo) -> Path:
        for owner in file_owners(info):
            for name in (owner.name, *owner.aliases):
                if name.lower() in self.model_dirs:
                    return self.model_dirs[name.lower()]
        override = local_copy(info)
        if override is not None:
            return override
        try:
            return info.locate()
        except ModelNotFound as exc:
            raise _api_error(openai.NotFoundError, 404, f"The model `{info.name}` is not available here: {exc.render()}",
                             "model", "model_not_found") from None


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise bad_request("'input' must be a non-empty string or a non-empty list of strings", "input")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise bad_request(f"'input[{i}]' must be a string (token arrays are not supported by local models), "
                              f"got {type(item).__name__}", "input")
        if not item:
            raise bad_request(f"'input[{i}]' is empty; every input must be a non-empty string", "input")
    return list(value)


def _dimensions(info: ModelInfo, full: int, dimensions: Any) -> int:
    """The output size: the model's own, or a Matryoshka size it was trained for."""
    if dimensions is None:
        return full
    allowed = sorted({*info.dimensions, full})
    if not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions not in allowed:
        raise bad_request(f"{info.name} supports dimensions {', '.join(map(str, allowed))}; got {dimensions!r}",
                          "dimensions")
    return dimensions


def _encode(vector: np.ndarray, encoding_format: str) -> list[float] | str:
    if encoding_format == "base64":  # little-endian float32 bytes, as the OpenAI API sends them
        return base64.b64encode(np.ascontiguousarray(vector, dtype="<f4").tobytes()).decode("ascii")
    return vector.astype(np.float64).tolist()

