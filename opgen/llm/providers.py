"""Where answers come from: an OpenAI-compatible endpoint, a file exchange, or a recording.

All three take the same conversation and return the same ``Reply``: a validated
``KernelAnswer`` plus truthful provenance (who answered, which model the server said
answered, tokens) and the raw exchanges for the transcript.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from opgen.errors import AwaitingAnswer, ConfigError, OpgenError
from opgen.llm.recordings import Recordings, request_hash
from opgen.llm.response import KernelAnswer
from opgen.targets.catalog import target_for

MODES = {"tools": "TOOLS", "json": "JSON", "md_json": "MD_JSON", "json_schema": "JSON_SCHEMA"}
NO_ENDPOINT_HINT = (
    "point opgen at an OpenAI-compatible endpoint: OpenAI (export OPENAI_API_KEY=... and OPGEN_MODEL=gpt-4.1), "
    "vLLM (export OPENAI_BASE_URL=http://localhost:8000/v1 OPGEN_MODEL=<served model>), llama.cpp's server "
    "(OPENAI_BASE_URL=http://localhost:8080/v1), or Ollama (OPENAI_BASE_URL=http://localhost:11434/v1 "
    "OPGEN_MODEL=qwen2.5-coder); or answer by hand with --provider file"
)


class LLMError(OpgenError):
    """The endpoint failed or never produced a valid answer within the retry budget."""


class BudgetSpent(LLMError):
    """The total token budget is spent; no further request is started."""


@dataclass
class TokenBudget:
    """Tokens spent at the endpoint over a whole run (every overload, attempt and re-ask),
    as the server reports them in ``usage``, against an optional limit."""

    limit: int | None = None
    prompt: int = 0
    completion: int = 0
    # Concurrent workers (``opgen synthesize --jobs``) share one budget.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def used(self) -> int:
        return self.prompt + self.completion

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else self.limit - self.used

    def add(self, usage: Any) -> None:
        with self._lock:
            self.prompt += getattr(usage, "prompt_tokens", 0) or 0
            self.completion += getattr(usage, "completion_tokens", 0) or 0

    def report(self) -> str:
        of = f" of the {self.limit} budgeted" if self.limit is not None else ""
        return (f"{self.used}{of} tokens used ({self.prompt} prompt + {self.completion} completion, "
                "as the server reported)")

    def spent(self, before: str) -> BudgetSpent:
        return BudgetSpent(f"the token budget is spent: {self.report()}; stopped before {before}",
                           hint="raise --token-budget (or OPGEN_TOKEN_BUDGET) to go on; admitted entries are kept")

    def check(self, before: str) -> None:
        """Raise BudgetSpent if another request would start with the budget used up."""
        if self.limit is not None and self.used >= self.limit:
            raise self.spent(before)


def parse_budget(value: int | str | None) -> int | None:
    """--token-budget or OPGEN_TOKEN_BUDGET: a positive whole number of tokens, or unset."""
    if value is None or value == "":
        return None
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n <= 0:
        raise ConfigError(f"token budget {value!r} is not a positive number of tokens",
                          hint="pass --token-budget N (or OPGEN_TOKEN_BUDGET=N) with N > 0, or leave it unset")
    return n


@dataclass
class Request:
    op: str
    overload: str
    target: str
    messages: list[dict[str, str]]
    context: dict[str, Any]  # validation context (the kernel name to look for)

    @property
    def digest(self) -> str:
        return request_hash(self.messages, self.target)


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
    """openai client wrapped by instructor. HTTP 429/5xx and timeouts are retried by the
    openai client (``http_retries`` times, exponential backoff, honouring Retry-After);
    validation failures are re-asked by instructor with the error text. Every response's
    token usage is added to ``budget``; once a limit is spent no further request starts.

    A provider serves one worker at a time (it keeps the current call's exchanges); concurrent
    workers each get their own, sharing ``budget`` and ``limiter`` (``opgen.llm.ratelimit``: one
    pause for all of them when the endpoint says 429)."""

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, mode: str = "tools",
                 http_retries: int = 4, reasks: int = 2, timeout: float = 300.0, max_tokens: int | None = None,
                 budget: TokenBudget | None = None, limiter: Any = None, stop: threading.Event | None = None):
        # openai and instructor are slow to import; only a live request needs them
        import instructor
        import openai

        if not model:
            raise ConfigError("no model name", hint="pass --model NAME or export OPGEN_MODEL=NAME")
        if mode not in MODES:
            raise ConfigError(f"unknown instructor mode {mode!r}", hint=f"choose one of {', '.join(MODES)}")
        self.model, self.mode, self.reasks, self.max_tokens = model, mode, reasks, max_tokens
        self.http_retries, self.timeout = http_retries, timeout
        # Every response's usage is counted here, re-asks and failed calls included.
        self.budget = budget if budget is not None else TokenBudget()
        self._call_usage = TokenBudget()
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self._openai = openai
        http_client = None
        if limiter is not None:
            # only concurrent runs share a limiter; it brings httpx's transport API with it
            from opgen.llm.ratelimit import LimitedTransport

            http_client = openai.DefaultHttpxClient(transport=LimitedTransport(limiter, stop), timeout=timeout)
        client = openai.OpenAI(base_url=self.base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "none",
                               max_retries=http_retries, timeout=timeout, http_client=http_client)
        self.client = instructor.from_openai(client, mode=getattr(instructor.Mode, MODES[mode]))
        self._exchanges: list[dict[str, Any]] = []
        self.client.on("completion:kwargs", self._on_kwargs)
        self.client.on("completion:response", self._on_response)
        self.client.on("parse:error", self._on_parse_error)
        self.client.on("completion:error", self._on_error)

    def _on_kwargs(self, *args: Any, **kwargs: Any) -> None:
        # A copy, now (as the transcript will hold it: JSON): instructor appends its re-ask messages
        # to the same list in place, so a reference kept here would later show messages this
        # request never sent.
        sent = {k: v for k, v in kwargs.items() if k != "response_model"}
        self._exchanges.append({"at": now(), "request": json.loads(json.dumps(sent, default=repr))})

    def _on_response(self, response: Any) -> None:
        dump = response.model_dump() if hasattr(response, "model_dump") else repr(response)
        self._current()["response"] = dump
        if isinstance(response, (str, bytes)):
            # The client hands back the body as text when the server did not say it was JSON.
            self._current()["not_json"] = True
        usage = getattr(response, "usage", None)
        self.budget.add(usage)
        self._call_usage.add(usage)

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
        # openai and instructor are slow to import; only a live request needs them
        from instructor.core import IncompleteOutputException, InstructorRetryException

        try:  # instructor >= 1.17 stops its own re-asks at a token budget
            # openai and instructor are slow to import; only a live request needs them
            from instructor.core import TokenBudgetExceeded, TokenUsageUnavailableError
        except ImportError:  # older: the budget is still checked before every attempt
            TokenBudgetExceeded = TokenUsageUnavailableError = _Never

        self._exchanges = []
        self._call_usage = TokenBudget()
        self.budget.check(f"asking {self.model} for {request.op} [{request.overload}]")
        extra: dict[str, Any] = {"max_tokens": self.max_tokens} if self.max_tokens else {}
        if self.budget.remaining is not None and TokenBudgetExceeded is not _Never:
            extra["token_budget"] = self.budget.remaining  # instructor stops re-asking once it is spent
        try:
            answer, completion = self.client.chat.completions.create_with_completion(
                model=self.model, messages=request.messages, response_model=target_for(request.target).answer_model.expecting(request.context),
                max_retries=self.reasks, **extra,  # no context=: instructor would template the messages with it
            )
        except IncompleteOutputException:
            limit = f"max_tokens {self.max_tokens}" if self.max_tokens else "the server's default max_tokens"
            raise LLMError(f"the answer was cut off at the token limit (finish_reason 'length', {limit}); "
                           "nothing was admitted",
                           hint="raise --max-tokens, or use a model with a longer output") from None
        except TokenBudgetExceeded:
            raise self.budget.spent(f"re-asking {self.model} for {request.op} [{request.overload}]") from None
        except TokenUsageUnavailableError:
            raise LLMError(f"{self.base_url} does not report token usage, so --token-budget cannot be enforced",
                           hint="unset --token-budget / OPGEN_TOKEN_BUDGET for this endpoint") from None
        except InstructorRetryException as exc:
            if any(x.get("not_json") for x in self._exchanges):
                raise _not_json(self.base_url, _body_of(self._exchanges)) from None
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
        return Reply(
            answer=target_for(request.target).answer_model(source=answer.source, notes=answer.notes),
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
            # Every response of this call (instructor's re-asks included), not only the last.
            prompt_tokens=self._call_usage.prompt,
            completion_tokens=self._call_usage.completion,
        )


class _Never(Exception):
    """Stands in for an exception type the installed instructor does not have."""


def _not_json(base_url: str, exc: Exception | str) -> LLMError:
    return LLMError(f"the endpoint {base_url} sent a body that is not valid JSON: {exc}",
                    hint="check that OPENAI_BASE_URL points at an OpenAI-compatible /v1 endpoint")


def _body_of(exchanges: list[dict[str, Any]]) -> str:
    body = next(x["response"] for x in exchanges if x.get("not_json"))
    return f"it starts {body[:120]}"


def _explain_failure(exc: Exception, provider: OpenAIProvider) -> str:
    cause = exc.__cause__ or exc
    name = type(cause).__name__
    status = getattr(cause, "status_code", None)
    tries = _tries(cause)
    if name == "APITimeoutError":
        return (f"{provider.base_url} did not answer within the {provider.timeout:g} s timeout"
                + (f" ({tries} tries)" if tries and tries > 1 else ""))
    if name == "APIConnectionError":
        return f"cannot reach {provider.base_url} ({name}: {cause})"
    if status is not None:
        response = getattr(cause, "response", None)
        wait = response.headers.get("retry-after") if response is not None else None
        after = (f" on all {tries} tries" if tries and tries > 1
                 else f" and asked to wait {wait} s, longer than the client waits (not retried)" if wait
                 else " (not retried)" if tries == 1 else " after retries")
        return f"{provider.base_url} answered HTTP {status}{after}: {getattr(cause, 'message', cause)}"
    attempts = getattr(exc, "n_attempts", None)
    return (f"no valid answer from model {provider.model} after {attempts or '?'} attempts "
            f"(instructor re-asked with the validation errors): {str(exc)[:600]}")


def _tries(cause: BaseException) -> int | None:
    """How many times the openai client sent the failing request (it numbers its retries)."""
    request = getattr(cause, "request", None)
    if request is None:
        request = getattr(getattr(cause, "response", None), "request", None)
    try:
        return int(request.headers["x-stainless-retry-count"]) + 1
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def _failure_hint(exc: Exception) -> str:
    cause = exc.__cause__ or exc
    status = getattr(cause, "status_code", None)
    if status in (401, 403):
        return "check OPENAI_API_KEY"
    if status == 404:
        return "check OPGEN_MODEL / --model and that OPENAI_BASE_URL ends in /v1"
    if status == 429:
        return "the endpoint is rate-limiting; wait, or lower concurrency"
    if status is not None and status >= 500:
        return ("the server kept failing; check its logs or try again later "
                "(OPGEN_HTTP_RETRIES sets how many times opgen retries)")
    if type(cause).__name__ == "APITimeoutError":
        return ("raise --timeout (or OPGEN_HTTP_TIMEOUT, in seconds) for a slow model, "
                "or check that the server is not overloaded")
    if type(cause).__name__ == "APIConnectionError":
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
            answer = target_for(request.target).answer_model.model_validate(rec["answer"], context=request.context)
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
    ``<id>.answer.cpp`` (Rust as ``<id>.answer.rs``; or ``{"source": ..., "notes": ...}`` as
    ``<id>.answer.json``);
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
        ext = target_for(request.target).answer_extension
        language = target_for(request.target).language
        cpp, js = self.dir / f"{stem}.answer.{ext}", self.dir / f"{stem}.answer.json"
        if not prompt.exists():
            prompt.write_text(render_conversation(request.messages))
        if js.exists():
            raw = json.loads(js.read_text())
        elif cpp.exists():
            raw = {"source": cpp.read_text(), "notes": ""}
        else:
            raise AwaitingAnswer(
                f"wrote the prompt to {prompt}",
                hint=f"answer it (any chat window will do), save the {language} source as {cpp} "
                     f"(or JSON {{\"source\", \"notes\"}} as {js}), then run the same command again",
            )
        try:
            answer = target_for(request.target).answer_model.model_validate(raw, context=request.context)
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
                    reasks: int = 2, max_tokens: int | None = None, timeout: float | None = None,
                    budget: TokenBudget | None = None, limiter: Any = None,
                    stop: threading.Event | None = None) -> Provider:
    """--provider, else an endpoint if one is configured, else replay."""
    name = name or os.environ.get("OPGEN_PROVIDER") or "auto"
    model = model or os.environ.get("OPGEN_MODEL")
    mode = mode or os.environ.get("OPGEN_MODE") or "tools"
    if name == "auto":
        configured = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY")
        name = "openai" if configured else "replay"
    if name == "openai":
        http_retries = int(os.environ.get("OPGEN_HTTP_RETRIES", http_retries))
        timeout = timeout if timeout is not None else parse_timeout(os.environ.get("OPGEN_HTTP_TIMEOUT"))
        return OpenAIProvider(model or "", mode=mode, http_retries=http_retries, reasks=reasks, max_tokens=max_tokens,
                              timeout=timeout, budget=budget, limiter=limiter, stop=stop)
    if name == "replay":
        return ReplayProvider(recordings)
    if name == "file":
        return FileProvider(exchange_dir, answered_by)
    raise ConfigError(f"unknown provider {name!r}", hint="choose auto, openai, file or replay")


def parse_timeout(value: str | float | None, default: float = 300.0) -> float:
    """--timeout or OPGEN_HTTP_TIMEOUT: seconds to wait for one HTTP response."""
    if value is None or value == "":
        return default
    try:
        t = float(value)
    except ValueError:
        t = 0.0
    if not t > 0:
        raise ConfigError(f"HTTP timeout {value!r} is not a positive number of seconds",
                          hint="pass --timeout SECONDS (or OPGEN_HTTP_TIMEOUT=SECONDS), e.g. 600 for a slow local model")
    return t
