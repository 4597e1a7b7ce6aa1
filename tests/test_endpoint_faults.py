"""Endpoint faults: every way an OpenAI-compatible endpoint can fail ends in bounded
retries and a clear error, admits nothing, and keeps the transcript under runs/; and
a total token budget stops synthesis cleanly once spent.

Real HTTP against the scripted loopback server (tests/fake_openai.py), the real
openai client and instructor, the real `opgen synthesize` command. tests/
test_synthesize_llm.py already covers a 500 or 429 followed by success, connection
refused, a truncated JSON body and a plain-text refusal; these tests cover what it
does not: timeouts, Retry-After, retries running out, non-JSON bodies, answers cut at
the token limit, and the token budget.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import Result
from typer.testing import CliRunner

from opgen.cli import app
from tests.fake_openai import (
    DEFAULT_MODEL,
    FakeOpenAI,
    Reply,
    reply_delay,
    reply_http_error,
    reply_raw,
    reply_text,
    reply_tool_call,
)

REQUESTED = "requested-model"
ENTRY = Path("generated/cpp/operator.add/float")
runner = CliRunner()

# operator.add float: the simplest kernel the gate admits (no exceptions, one IEEE addition).
FLOAT_OK = """\
// operator.add float: one IEEE-754 double addition.
#include "opgen_kernel.hpp"

namespace opgen::kernels {

double operator_add__float(double a, double b) { return a + b; }

}  // namespace opgen::kernels
"""
FLOAT_PLUS_ONE = FLOAT_OK.replace("return a + b;", "return a + b + 1.0;")


def answer(source: str) -> dict[str, str]:
    return {"source": source, "notes": "scripted"}


def synthesize(*args: str) -> Result:
    return runner.invoke(app, ["synthesize", "operator.add", "--overload", "float", *args, "--examples", "10"],
                         catch_exceptions=False)


@pytest.fixture
def endpoint(project: Path, monkeypatch: pytest.MonkeyPatch):
    """Point opgen at a server; the openai client's own backoff shrunk to milliseconds,
    so any long wait a test sees is one the server asked for."""
    import openai._base_client as base_client

    monkeypatch.setattr(base_client, "INITIAL_RETRY_DELAY", 0.001)
    monkeypatch.setattr(base_client, "MAX_RETRY_DELAY", 0.01)
    monkeypatch.setenv("OPGEN_HTTP_RETRIES", "2")

    @contextmanager
    def serve(script: list) -> Iterator[FakeOpenAI]:
        with FakeOpenAI(script) as server:
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            monkeypatch.setenv("OPENAI_API_KEY", "test")
            monkeypatch.setenv("OPGEN_MODEL", REQUESTED)
            yield server

    return serve


def flat(text: str) -> str:
    return " ".join(text.split())


def assert_failed_cleanly(result: Result, project: Path, *needles: str) -> dict[str, Any]:
    """Exit 1 with the message, nothing in the registry, the transcript kept under runs/."""
    assert result.exit_code == 1, result.output
    out = flat(result.output)
    assert "Traceback" not in out
    for needle in needles:
        assert needle in out, (needle, out)
    assert not (project / "generated" / "cpp").exists()
    (kept,) = sorted((project / "runs").glob("*.json"))
    assert f"(transcript kept at {kept})" in result.output.replace("\n", "")
    return json.loads(kept.read_text())


# ----------------------------------------------------------------- timeouts


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_request_timeout_retries_then_names_the_timeout(project: Path, endpoint, monkeypatch: pytest.MonkeyPatch,
                                                          how: str) -> None:
    slow = reply_delay(5, reply_tool_call(answer(FLOAT_OK)))
    with endpoint([slow] * 3) as server:
        if how == "flag":
            result = synthesize("--timeout", "0.4")
        else:
            monkeypatch.setenv("OPGEN_HTTP_TIMEOUT", "0.4")
            result = synthesize()
    tr = assert_failed_cleanly(result, project, f"{server.base_url} did not answer within the 0.4 s timeout (3 tries)",
                               "fix: raise --timeout (or OPGEN_HTTP_TIMEOUT, in seconds) for a slow model")
    assert [h["x-stainless-retry-count"] for h in server.request_headers] == ["0", "1", "2"]  # bounded
    assert "did not answer within the 0.4 s timeout" in tr["exchanges"][0]["error"]


def test_a_bad_timeout_or_budget_value_is_a_clear_error(project: Path, endpoint,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with endpoint([]) as server:
        monkeypatch.setenv("OPGEN_HTTP_TIMEOUT", "soon")
        result = synthesize()
        assert result.exit_code == 1
        assert "HTTP timeout 'soon' is not a positive number of seconds" in flat(result.output)
        monkeypatch.delenv("OPGEN_HTTP_TIMEOUT")
        result = synthesize("--token-budget", "0")
        assert result.exit_code == 1
        assert "token budget 0 is not a positive number of tokens" in flat(result.output)
        monkeypatch.setenv("OPGEN_TOKEN_BUDGET", "lots")
        result = synthesize()
        assert "token budget 'lots' is not a positive number of tokens" in flat(result.output)
    assert server.requests == []


# ----------------------------------------------------------------- rate limits and server errors


def test_429_retry_after_is_honoured(project: Path, endpoint) -> None:
    script = [reply_http_error(429, headers={"Retry-After": "1"}),
              reply_tool_call(answer(FLOAT_OK), model="served", prompt_tokens=10, completion_tokens=5)]
    with endpoint(script) as server:
        result = synthesize()
    assert result.exit_code == 0, result.output
    first, second = server.calls
    # The client's own backoff is milliseconds here: a one-second gap is the server's Retry-After.
    assert second.received_at - first.received_at >= 0.95
    assert second.headers["x-stainless-retry-count"] == "1"
    data = json.loads((project / ENTRY / "entry.json").read_text())
    assert data["provenance"]["attempts"] == 1 and data["provenance"]["model"] == "served"


def test_429_asking_for_a_longer_wait_than_the_client_allows_fails_at_once(project: Path, endpoint) -> None:
    with endpoint([reply_http_error(429, headers={"Retry-After": "3600"})] * 3) as server:
        result = synthesize()
    assert_failed_cleanly(result, project,
                          f"{server.base_url} answered HTTP 429 and asked to wait 3600 s, longer than the client "
                          "waits (not retried)",
                          "fix: the endpoint is rate-limiting; wait, or lower concurrency")
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_exhausting_retries_names_the_status(project: Path, endpoint, status: int) -> None:
    with endpoint([reply_http_error(status)] * 5) as server:
        result = synthesize()
    tr = assert_failed_cleanly(result, project, f"{server.base_url} answered HTTP {status} on all 3 tries",
                               "fix: the server kept failing; check its logs or try again later")
    assert len(server.requests) == 3 and server.remaining == 2  # OPGEN_HTTP_RETRIES=2: bounded
    assert f"HTTP {status}" in tr["exchanges"][0]["error"]


# ----------------------------------------------------------------- bodies that are not completions


@pytest.mark.parametrize(("body", "content_type"), [
    (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    (b"upstream connect error or disconnect/reset before headers", "text/plain"),
    (b"<html><body>proxy error</body></html>", "application/json"),
], ids=["html", "plain-text", "html-labelled-json"])
def test_a_non_json_200_body_is_named_as_such(project: Path, endpoint, body: bytes, content_type: str) -> None:
    with endpoint([reply_raw(200, body, content_type)] * 3) as server:
        result = synthesize()
    tr = assert_failed_cleanly(result, project, f"the endpoint {server.base_url} sent a body that is not valid JSON",
                               "fix: check that OPENAI_BASE_URL points at an OpenAI-compatible /v1 endpoint")
    assert "no valid answer from model" not in flat(result.output)  # no model answered; none is blamed
    assert 1 <= len(server.requests) <= 3
    assert "not valid JSON" in tr["exchanges"][0]["error"]


def _cut_tool_call(request: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    name = request["tools"][0]["function"]["name"]
    body = {
        "id": "chatcmpl-cut", "object": "chat.completion", "created": 0, "model": DEFAULT_MODEL,
        "choices": [{"index": 0, "finish_reason": "length", "logprobs": None, "message": {
            "role": "assistant", "content": None, "tool_calls": [{"id": "call_cut", "type": "function", "function": {
                "name": name, "arguments": json.dumps(answer(FLOAT_OK))[:120]}}]}}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 64, "total_tokens": 964},
    }
    return 200, {"content-type": "application/json"}, json.dumps(body).encode()


@pytest.mark.parametrize("mode", ["tools", "json"])
def test_an_answer_cut_at_the_token_limit_says_raise_max_tokens(project: Path, endpoint, mode: str) -> None:
    cut = (Reply(render=_cut_tool_call) if mode == "tools"
           else reply_text(json.dumps(answer(FLOAT_OK))[:120], finish_reason="length", completion_tokens=64))
    with endpoint([cut] * 3) as server:
        result = synthesize("--mode", mode, "--max-tokens", "64")
    tr = assert_failed_cleanly(result, project,
                               "the answer was cut off at the token limit (finish_reason 'length', max_tokens 64); "
                               "nothing was admitted",
                               "fix: raise --max-tokens, or use a model with a longer output")
    (request,) = server.requests  # asking again would be cut again
    assert request["max_tokens"] == 64
    assert "cut off at the token limit" in tr["exchanges"][0]["error"]


# ----------------------------------------------------------------- the token budget


def test_token_budget_stops_before_the_next_attempt(project: Path, endpoint) -> None:
    script = [reply_tool_call(answer(FLOAT_PLUS_ONE), prompt_tokens=700, completion_tokens=300),
              reply_tool_call(answer(FLOAT_OK))]
    with endpoint(script) as server:
        result = synthesize("--token-budget", "1000")
    tr = assert_failed_cleanly(
        result, project,
        "attempt 1: rejected at verify",
        "error: the token budget is spent: 1000 of the 1000 budgeted tokens used (700 prompt + 300 completion, "
        f"as the server reported); stopped before asking {REQUESTED} for operator.add [float]",
        "fix: raise --token-budget (or OPGEN_TOKEN_BUDGET) to go on")
    assert len(server.requests) == 1 and server.remaining == 1  # the second answer was never asked for
    first, stopped = tr["exchanges"]
    assert first["tokens"] == {"prompt": 700, "completion": 300} and first["gate"]["stage"] == "verify"
    assert stopped["attempt"] == 2 and "the token budget is spent" in stopped["error"]


def test_token_budget_stops_instructor_reasks(project: Path, endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPGEN_TOKEN_BUDGET", "1000")
    malformed = '{"source": "#include \\"opgen_kernel.hpp\\"\\nnamespace opgen::kern'
    script = [reply_tool_call(malformed, prompt_tokens=600, completion_tokens=500), reply_tool_call(answer(FLOAT_OK))]
    with endpoint(script) as server:
        result = synthesize()
    assert_failed_cleanly(result, project,
                          "the token budget is spent: 1100 of the 1000 budgeted tokens used (600 prompt + 500 "
                          f"completion, as the server reported); stopped before re-asking {REQUESTED} for "
                          "operator.add [float]")
    assert len(server.requests) == 1  # the re-ask was never sent


def test_token_budget_spans_overloads_and_keeps_what_was_admitted(project: Path, endpoint) -> None:
    script = [reply_tool_call(answer(FLOAT_OK), prompt_tokens=300, completion_tokens=200),
              reply_tool_call(answer("never asked for"))]
    with endpoint(script) as server:
        result = runner.invoke(app, ["synthesize", "operator.add", "--overload", "float", "--overload", "str",
                                     "--examples", "10", "--token-budget", "500"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    out = flat(result.output)
    assert "admitted operator.add float" in out, result.output
    assert ("the token budget is spent: 500 of the 500 budgeted tokens used (300 prompt + 200 completion, as the "
            f"server reported); stopped before asking {REQUESTED} for operator.add [str]") in out
    assert len(server.requests) == 1
    assert sorted(p.parent.name for p in (project / "generated" / "cpp").rglob("entry.json")) == ["float"]
    (kept,) = (project / "runs").glob("*operator.add__str*.json")
    assert "the token budget is spent" in json.loads(kept.read_text())["outcome"]


def test_tokens_of_reasks_are_counted_and_reported(project: Path, endpoint) -> None:
    malformed = '{"source": "#include'
    script = [reply_tool_call(malformed, prompt_tokens=100, completion_tokens=50),
              reply_tool_call(answer(FLOAT_OK), prompt_tokens=120, completion_tokens=80)]
    with endpoint(script):
        result = synthesize("--token-budget", "10000")
    assert result.exit_code == 0, result.output
    assert ("tokens: 350 of the 10000 budgeted tokens used (220 prompt + 130 completion, as the server reported)"
            in flat(result.output))
    data = json.loads((project / ENTRY / "entry.json").read_text())
    assert data["provenance"]["tokens"] == {"prompt": 220, "completion": 130}  # the re-ask's tokens count too
