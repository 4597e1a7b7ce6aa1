"""Where answers come from: an OpenAI-compatible endpoint, a file exchange, or a recording.

All three take the same conversation and return the same ``Reply``: a validated
``KernelAnswer`` plus truthful provenance (who answered, which model the server said
answered, tokens) and the raw exchanges for the transcript.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from ..errors import AwaitingAnswer, ConfigError, OpgenError
from .recordings import Recordings, request_hash
from .response import KernelAnswer

MODES = {"tools": "TOOLS", "json": "JSON", "md_json": "MD_JSON", "json_schema": "JSON_SCHEMA"}
NO_ENDPOINT_HINT = (
    "point opgen at an OpenAI-compatible endpoint: OpenAI (export OPENAI_API_KEY=... and OPGEN_MODEL=gpt-4.1), "
    "vLLM (export OPENAI_BASE_URL=http://localhost:8000/v1 OPGEN_MODEL=<served model>), llama.cpp's server "
    "(OPENAI_BASE_URL=http://localhost:8080/v1), or Ollama (OPENAI_BASE_URL=http://localhost:11434/v1 "
    "OPGEN_MODEL=qwen2.5-coder); or answer by hand with --provider file"
)


class LLMError(OpgenError):
    """The endpoint failed or never produced a valid answer within the retry budget."""


@dataclass
class Request:
    op: str
    overload: str
    target: str
    messages: list[dict[str, str]]
    context: dict[str, Any]  # validation context (the kernel name to look for)

    @property
    def digest(self) -> str:
        return request_hash(self.messages)


@dataclass
class Reply:
    answer: KernelAnswer
    provenance: dict[str, Any]
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Provider(Protocol):
    name: str

    def complete(self, request: Request) -> Reply: ...


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class OpenAIProvider:
    """openai client wrapped by instructor. HTTP 429/5xx are retried by the openai client
    (exponential backoff, honouring Retry-After); validation failures are re-asked by
    instructor with the error text."""

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, mode: str = "tools",
                 http_retries: int = 4, reasks: int = 2, timeout: float = 300.0, max_tokens: int | None = None):
        import instructor
        import openai

        if not model:
            raise ConfigError("no model name", hint="pass --model NAME or export OPGEN_MODEL=NAME")
        if mode not in MODES:
            raise ConfigError(f"unknown instructor mode {mode!r}", hint=f"choose one of {', '.join(MODES)}")
        self.model, self.mode, self.reasks, self.max_tokens = model, mode, reasks, max_tokens
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self._openai = openai
        client = openai.OpenAI(base_url=self.base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "none",
                               max_retries=http_retries, timeout=timeout)
        self.client = instructor.from_openai(client, mode=getattr(instructor.Mode, MODES[mode]))
        self._exchanges: list[dict[str, Any]] = []
        self.client.on("completion:kwargs", self._on_kwargs)
        self.client.on("completion:response", self._on_response)
        self.client.on("parse:error", self._on_parse_error)
        self.client.on("completion:error", self._on_error)

    def _on_kwargs(self, *args: Any, **kwargs: Any) -> None:
        self._exchanges.append({"at": now(), "request": {k: v for k, v in kwargs.items() if k != "response_model"}})

    def _on_response(self, response: Any) -> None:
        dump = response.model_dump() if hasattr(response, "model_dump") else repr(response)
        self._current()["response"] = dump

    def _on_parse_error(self, error: Exception, **_: Any) -> None:
        self._current()["validation_error"] = str(error)

    def _on_error(self, error: Exception, **_: Any) -> None:
        self._current()["error"] = f"{type(error).__name__}: {error}"

    @property
    def last_exchanges(self) -> list[dict[str, Any]]:
        """Raw requests and responses of the latest ``complete`` call, failed or not."""
        return self._exchanges

    def _current(self) -> dict[str, Any]:
        if not self._exchanges:
            self._exchanges.append({"at": now()})
        return self._exchanges[-1]

    def complete(self, request: Request) -> Reply:
        from instructor.core import IncompleteOutputException, InstructorRetryException

        self._exchanges = []
        extra = {"max_tokens": self.max_tokens} if self.max_tokens else {}
        try:
            answer, completion = self.client.chat.completions.create_with_completion(
                model=self.model, messages=request.messages, response_model=KernelAnswer.expecting(request.context),
                max_retries=self.reasks, **extra,  # no context=: instructor would template the messages with it
            )
        except IncompleteOutputException:
            raise LLMError("the answer was cut off at the token limit", hint="raise --max-tokens, or use a model with a longer output") from None
        except InstructorRetryException as exc:
            cause = exc.__cause__
            if (isinstance(cause, ValueError) and not isinstance(cause, ValidationError)
                    and self._exchanges and "response" not in self._exchanges[-1]):
                # The client could not decode the HTTP body (no completion ever arrived); instructor
                # retries that like a bad answer, but no model answered: say what the server did.
                raise _not_json(self.base_url, cause) from None
            raise LLMError(_explain_failure(exc, self), hint=_failure_hint(exc)) from None
        except self._openai.APIError as exc:
            raise LLMError(_explain_failure(exc, self), hint=_failure_hint(exc)) from None
        except ValueError as exc:  # a truncated or non-JSON body the client could not decode
            raise _not_json(self.base_url, exc) from None
        usage = getattr(completion, "usage", None)
        return Reply(
            answer=KernelAnswer(source=answer.source, notes=answer.notes),
            provenance={
                "provider": "openai-compatible",
                "base_url": self.base_url,
                "mode": self.mode,
                "model_requested": self.model,
                # The model the server says produced the answer, never our guess.
                "model": getattr(completion, "model", None),
                "answered_at": now(),
            },
            exchanges=self._exchanges,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        )


def _not_json(base_url: str, exc: Exception) -> LLMError:
    return LLMError(f"the endpoint {base_url} sent a body that is not valid JSON: {exc}",
                    hint="check that OPENAI_BASE_URL points at an OpenAI-compatible /v1 endpoint")


def _explain_failure(exc: Exception, provider: OpenAIProvider) -> str:
    cause = exc.__cause__ or exc
    name = type(cause).__name__
    status = getattr(cause, "status_code", None)
    if name == "APIConnectionError" or name == "APITimeoutError":
        return f"cannot reach {provider.base_url} ({name}: {cause})"
    if status is not None:
        return f"{provider.base_url} answered HTTP {status} after retries: {getattr(cause, 'message', cause)}"
    attempts = getattr(exc, "n_attempts", None)
    return (f"no valid answer from model {provider.model} after {attempts or '?'} attempts "
            f"(instructor re-asked with the validation errors): {str(exc)[:600]}")


def _failure_hint(exc: Exception) -> str:
    cause = exc.__cause__ or exc
    status = getattr(cause, "status_code", None)
    if status in (401, 403):
        return "check OPENAI_API_KEY"
    if status == 404:
        return "check OPGEN_MODEL / --model and that OPENAI_BASE_URL ends in /v1"
    if status == 429:
        return "the endpoint is rate-limiting; wait, or lower concurrency"
    if type(cause).__name__ in ("APIConnectionError", "APITimeoutError"):
        return "is the server running? " + NO_ENDPOINT_HINT
    return "try another --mode (tools, json, md_json) if the server does not support tool calls"


class ReplayProvider:
    """Answers from recordings made earlier; the default when no endpoint is configured."""

    name = "replay"

    def __init__(self, recordings: Recordings):
        self.recordings = recordings

    def complete(self, request: Request) -> Reply:
        rec = self.recordings.find(request.digest)
        if rec is None:
            raise ConfigError(
                f"no LLM endpoint is configured and there is no recorded answer for this exact request "
                f"({request.op} {request.overload}, request {request.digest[:16]})",
                hint=NO_ENDPOINT_HINT,
            )
        try:
            answer = KernelAnswer.model_validate(rec["answer"], context=request.context)
        except ValidationError as exc:
            raise OpgenError(f"recording {rec['_path']} holds an invalid answer: {exc}") from None
        original = rec["provenance"]
        return Reply(
            answer=answer,
            provenance={"provider": "replay", "recording": Path(rec["_path"]).name, "original": original,
                        "model": original.get("model")},
            exchanges=[{"at": now(), "replayed_from": Path(rec["_path"]).name, "answer": rec["answer"]}],
        )


class FileProvider:
    """The air-gapped path: the prompt is written to a file and the answer read back.

    Run once to get ``<id>.prompt.md``; paste it into any chat; save the reply's C++ as
    ``<id>.answer.cpp`` (or ``{"source": ..., "notes": ...}`` as ``<id>.answer.json``);
    run the same command again.
    """

    name = "file"

    def __init__(self, exchange_dir: Path, answered_by: str | None = None):
        self.dir = Path(exchange_dir)
        self.answered_by = answered_by or os.environ.get("OPGEN_ANSWERED_BY") or "unspecified (file exchange)"

    def complete(self, request: Request) -> Reply:
        self.dir.mkdir(parents=True, exist_ok=True)
        stem = f"{request.op}__{request.overload}.{request.target}.{request.digest[:16]}"
        prompt = self.dir / f"{stem}.prompt.md"
        cpp, js = self.dir / f"{stem}.answer.cpp", self.dir / f"{stem}.answer.json"
        if not prompt.exists():
            prompt.write_text(render_conversation(request.messages))
        if js.exists():
            raw = json.loads(js.read_text())
        elif cpp.exists():
            raw = {"source": cpp.read_text(), "notes": ""}
        else:
            raise AwaitingAnswer(
                f"wrote the prompt to {prompt}",
                hint=f"answer it (any chat window will do), save the C++ source as {cpp} "
                     f"(or JSON {{\"source\", \"notes\"}} as {js}), then run the same command again",
            )
        try:
            answer = KernelAnswer.model_validate(raw, context=request.context)
        except ValidationError as exc:
            raise OpgenError(f"the answer in {cpp if cpp.exists() else js} is not usable: {exc.errors()[0]['msg']}",
                             hint="fix the file and run the same command again") from None
        return Reply(
            answer=answer,
            provenance={"provider": "file", "model": None, "answered_by": self.answered_by,
                        "answer_file": (cpp if cpp.exists() else js).name, "answered_at": now()},
            exchanges=[{"at": now(), "prompt_file": prompt.name, "answer": answer.model_dump()}],
        )


def render_conversation(messages: list[dict[str, str]]) -> str:
    parts = [f"<!-- opgen file exchange; {time.strftime('%Y-%m-%d')} -->"]
    for m in messages:
        parts.append(f"## {m['role']}\n\n{m['content'].strip()}\n")
    return "\n\n".join(parts) + "\n"


def choose_provider(name: str | None, *, model: str | None, recordings: Recordings, exchange_dir: Path,
                    mode: str | None = None, answered_by: str | None = None, http_retries: int = 4,
                    reasks: int = 2, max_tokens: int | None = None) -> Provider:
    """--provider, else an endpoint if one is configured, else replay."""
    name = name or os.environ.get("OPGEN_PROVIDER") or "auto"
    model = model or os.environ.get("OPGEN_MODEL")
    mode = mode or os.environ.get("OPGEN_MODE") or "tools"
    if name == "auto":
        configured = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY")
        name = "openai" if configured else "replay"
    if name == "openai":
        http_retries = int(os.environ.get("OPGEN_HTTP_RETRIES", http_retries))
        return OpenAIProvider(model or "", mode=mode, http_retries=http_retries, reasks=reasks, max_tokens=max_tokens)
    if name == "replay":
        return ReplayProvider(recordings)
    if name == "file":
        return FileProvider(exchange_dir, answered_by)
    raise ConfigError(f"unknown provider {name!r}", hint="choose auto, openai, file or replay")
