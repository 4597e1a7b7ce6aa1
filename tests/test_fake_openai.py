"""Tests for tests/fake_openai.py, driven through the real openai and instructor clients.

These also pin down openai 3.x / instructor 1.17 behaviour the rest of the
project relies on (retry counts, re-ask message shapes), so an upgrade that
changes it fails here first.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import instructor
import openai
import pytest
from instructor.core import IncompleteOutputException, InstructorRetryException
from pydantic import BaseModel

from tests.fake_openai import (
    MAX_DELAY_S,
    FakeOpenAI,
    reply_delay,
    reply_http_error,
    reply_json,
    reply_raw,
    reply_text,
    reply_tool_call,
)

MESSAGES: list[Any] = [{"role": "user", "content": "extract"}]
GOOD = {"name": "bolt", "qty": 3}


class Item(BaseModel):
    name: str
    qty: int


def _client(server: FakeOpenAI, max_retries: int = 0, **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=max_retries, **kw)


def _instructor(
    server: FakeOpenAI, mode: instructor.Mode = instructor.Mode.TOOLS, max_retries: int = 0
) -> instructor.Instructor:
    return instructor.from_openai(_client(server, max_retries), mode=mode)


def _is_item(item: object, expected: dict[str, Any]) -> bool:
    # instructor returns a dynamic subclass of Item carrying _raw_response and
    # _total_usage in __dict__, so `item == Item(...)` is False; compare fields.
    return isinstance(item, Item) and item.model_dump() == expected


# ----------------------------------------------------------------- happy paths


def test_tools_mode_parses_and_reports_scripted_model_and_usage() -> None:
    with FakeOpenAI([reply_tool_call(GOOD, model="served-model-7")]) as server:
        item, raw = _instructor(server).chat.completions.create_with_completion(
            model="requested-model", response_model=Item, messages=MESSAGES, max_retries=0
        )
    assert _is_item(item, GOOD)
    # Provenance must come from what the server reported, not what was requested.
    assert raw.model == "served-model-7"
    assert raw.object == "chat.completion"
    assert raw.choices[0].finish_reason == "tool_calls"
    assert raw.usage is not None
    assert (raw.usage.prompt_tokens, raw.usage.completion_tokens, raw.usage.total_tokens) == (
        100,
        50,
        150,
    )
    (request,) = server.requests
    assert request["model"] == "requested-model"
    # TOOLS mode: one tool named after the response model, forced via tool_choice.
    assert [t["function"]["name"] for t in request["tools"]] == ["Item"]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "Item"}}
    assert "response_format" not in request


def test_json_mode_parses_content_and_sends_schema_in_system_prompt() -> None:
    with FakeOpenAI([reply_json(GOOD)]) as server:
        item = _instructor(server, instructor.Mode.JSON).chat.completions.create(
            model="m", response_model=Item, messages=MESSAGES, max_retries=0
        )
    assert _is_item(item, GOOD)
    (request,) = server.requests
    assert request["response_format"] == {"type": "json_object"}
    assert "tools" not in request
    system = request["messages"][0]
    assert system["role"] == "system" and '"qty"' in system["content"]


def test_headers_are_recorded_and_completion_ids_are_unique() -> None:
    with FakeOpenAI([reply_text("a"), reply_text("b")]) as server:
        client = _client(server)
        first = client.chat.completions.create(model="m", messages=MESSAGES)
        second = client.chat.completions.create(model="m", messages=MESSAGES)
    assert first.id != second.id
    assert isinstance(first.created, int)
    assert [first.choices[0].message.content, second.choices[0].message.content] == ["a", "b"]
    assert server.request_headers[0]["authorization"] == "Bearer test"
    assert server.calls[0].path == "/v1/chat/completions"
    assert server.remaining == 0


def test_callable_item_computes_reply_from_request() -> None:
    script = [lambda body: reply_json({"name": body["model"], "qty": len(body["messages"])})]
    with FakeOpenAI(script) as server:
        item = _instructor(server, instructor.Mode.JSON).chat.completions.create(
            model="echo-me", response_model=Item, messages=MESSAGES, max_retries=0
        )
    # JSON mode prepends a system message, so two messages arrive.
    assert _is_item(item, {"name": "echo-me", "qty": 2})


def test_models_endpoint_lists_scripted_models() -> None:
    with FakeOpenAI([reply_text("x", model="alpha"), reply_tool_call(GOOD, model="beta")]) as server:
        ids = [m.id for m in _client(server).models.list()]
    assert ids == ["alpha", "beta"]
    assert server.requests == []  # GETs are not chat requests and consume nothing


def test_path_without_v1_prefix_is_accepted() -> None:
    with FakeOpenAI([reply_text("hi")]) as server:
        url = server.base_url.removesuffix("/v1") + "/chat/completions"
        req = urllib.request.Request(
            url, data=json.dumps({"model": "m", "messages": []}).encode(), method="POST"
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            body = json.load(resp)
    assert body["choices"][0]["message"]["content"] == "hi"
    assert server.calls[0].path == "/chat/completions"


# ----------------------------------------------------------------- transport retries (openai)


def test_500_then_success_is_retried_by_openai_client() -> None:
    script = [reply_http_error(500), reply_tool_call(GOOD)]
    with FakeOpenAI(script) as server:
        item = _instructor(server, max_retries=2).chat.completions.create(
            model="m", response_model=Item, messages=MESSAGES, max_retries=0
        )
    assert _is_item(item, GOOD)
    assert len(server.requests) == 2
    # The SDK (not instructor) retried: it counts its own attempts in a header.
    assert [h["x-stainless-retry-count"] for h in server.request_headers] == ["0", "1"]
    # reply_http_error's default retry-after-ms: 1 replaces the SDK's ~0.5 s backoff.
    first, second = server.calls
    assert second.received_at - first.received_at < 0.3


def test_429_with_retry_after_zero_then_success() -> None:
    script = [reply_http_error(429, headers={"Retry-After": "0"}), reply_text("ok")]
    with FakeOpenAI(script) as server:
        reply = _client(server, max_retries=2).chat.completions.create(model="m", messages=MESSAGES)
    assert reply.choices[0].message.content == "ok"
    assert len(server.requests) == 2
    # openai 3.x honours only Retry-After > 0, so "0" falls back to its own
    # backoff: 0.5 s * jitter in [0.75, 1]. Pinned so a change is noticed.
    first, second = server.calls
    assert 0.3 < second.received_at - first.received_at < 1.0


def test_instructor_does_not_retry_http_errors_itself() -> None:
    with FakeOpenAI([reply_http_error(500), reply_tool_call(GOOD)]) as server:
        with pytest.raises(InstructorRetryException) as info:
            _instructor(server, max_retries=0).chat.completions.create(
                model="m", response_model=Item, messages=MESSAGES, max_retries=3
            )
    assert isinstance(info.value.__cause__, openai.InternalServerError)
    assert len(server.requests) == 1


def test_client_timeout_on_delayed_reply() -> None:
    with FakeOpenAI([reply_delay(2.0, reply_text("late"))]) as server:
        with pytest.raises(openai.APITimeoutError):
            _client(server, timeout=0.2).chat.completions.create(model="m", messages=MESSAGES)
        exit_started = time.monotonic()
    # Leaving the block cut the server-side delay short instead of waiting it out.
    assert time.monotonic() - exit_started < 1.0
    assert len(server.requests) == 1


def test_delay_is_bounded() -> None:
    with pytest.raises(ValueError):
        reply_delay(MAX_DELAY_S + 1, reply_text("x"))


# ----------------------------------------------------------------- validation re-asks (instructor)


def test_tools_mode_reasks_after_malformed_arguments() -> None:
    script = [reply_tool_call('{"name": "bolt", "qty": '), reply_tool_call(GOOD)]
    with FakeOpenAI(script) as server:
        item = _instructor(server).chat.completions.create(
            model="m", response_model=Item, messages=MESSAGES, max_retries=2
        )
    assert _is_item(item, GOOD)
    assert len(server.requests) == 2
    # Re-ask = echo the bad assistant tool call, then a "tool" message with the error.
    assistant, tool = server.requests[1]["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"name": "bolt", "qty": '
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert "Validation Error found" in tool["content"] and "json_invalid" in tool["content"]


def test_json_mode_reasks_with_validation_error_text() -> None:
    script = [reply_json({"name": "bolt", "qty": "many"}), reply_json(GOOD)]
    with FakeOpenAI(script) as server:
        item = _instructor(server, instructor.Mode.JSON).chat.completions.create(
            model="m", response_model=Item, messages=MESSAGES, max_retries=2
        )
    assert _is_item(item, GOOD)
    assert len(server.requests) == 2
    last = server.requests[1]["messages"][-1]
    assert last["role"] == "user"
    assert last["content"].startswith("Correct your JSON ONLY RESPONSE")
    assert "qty" in last["content"] and "int_type" in last["content"]


def test_instructor_max_retries_counts_retries_not_attempts() -> None:
    with FakeOpenAI([reply_tool_call("{bad")] * 5) as server:
        with pytest.raises(InstructorRetryException) as info:
            _instructor(server).chat.completions.create(
                model="m", response_model=Item, messages=MESSAGES, max_retries=2
            )
    assert len(server.requests) == 3 == info.value.n_attempts


def test_truncated_answer_raises_incomplete_output() -> None:
    script = [reply_text('{"name": "bo', finish_reason="length"), reply_json(GOOD)]
    with FakeOpenAI(script) as server:
        with pytest.raises(IncompleteOutputException):
            _instructor(server, instructor.Mode.JSON).chat.completions.create(
                model="m", response_model=Item, messages=MESSAGES, max_retries=2
            )
    assert len(server.requests) == 1  # not re-asked


# ----------------------------------------------------------------- broken servers


def test_exhausted_script_gives_500_without_client_retries() -> None:
    with FakeOpenAI([]) as server:
        with pytest.raises(openai.InternalServerError, match="script exhausted"):
            _client(server, max_retries=2).chat.completions.create(model="m", messages=MESSAGES)
    # x-should-retry: false stops the SDK from retrying a reply that cannot change.
    assert len(server.requests) == 1
    assert server.requests[0]["model"] == "m"


def test_truncated_json_body_surfaces_as_decode_error() -> None:
    with FakeOpenAI([reply_raw(200, b'{"id": "chatcmpl-x", "obj')]) as server:
        # Not an openai.APIError: callers must also catch ValueError.
        with pytest.raises(json.JSONDecodeError):
            _client(server).chat.completions.create(model="m", messages=MESSAGES)


def test_raw_reply_sends_bytes_verbatim() -> None:
    with FakeOpenAI([reply_raw(502, b"<html>bad gateway</html>", "text/html")]) as server:
        req = urllib.request.Request(server.base_url + "/chat/completions", data=b"{}")
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=5)
    assert info.value.code == 502
    assert info.value.headers["content-type"] == "text/html"
    assert info.value.read() == b"<html>bad gateway</html>"


def test_server_stops_serving_after_context() -> None:
    with FakeOpenAI([reply_text("x")]) as server:
        url = server.base_url
    with pytest.raises(openai.APIConnectionError):
        openai.OpenAI(base_url=url, api_key="t", max_retries=0, timeout=1).models.list()
