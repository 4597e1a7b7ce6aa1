"""The repair loop: ask, gate, feed the failure back, until admitted or out of attempts.

Every exchange and every verdict goes into the transcript. An admitted kernel's
transcript is kept with its registry entry; a run that admits nothing leaves its
transcript under ``runs/`` and admits nothing.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from opgen import __version__
from opgen.gate.admission import GateResult, GateSettings, run_gate
from opgen.errors import AwaitingAnswer, Interrupted, OpgenError
from opgen.llm.providers import Provider, Request, now
from opgen.llm.recordings import Recordings
from opgen.project import Project
from opgen.prompts import render_repair, render_request
from opgen.registry import Entry, Registry
from opgen.spec.model import PLAIN_VARIANT, TARGET_IDS, Overload, Spec
from opgen.spec.lint import require_clean
from opgen.targets.catalog import target_for

Report = Callable[[str], None]


@dataclass
class Attempt:
    number: int
    stage: str
    feedback: str
    provenance: dict[str, Any]
    seconds: float


@dataclass
class Outcome:
    op: str
    overload: str
    target: str
    admitted: bool
    variant: str = PLAIN_VARIANT
    attempts: list[Attempt] = field(default_factory=list)
    entry: Entry | None = None
    transcript_path: Path | None = None
    error: str | None = None
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0})
    recordings: list[Path] = field(default_factory=list)  # answers this run recorded (never replaced ones)


def synthesize_overload(project: Project, spec: Spec, overload: Overload, provider: Provider, *,
                        target: str = "cpp", max_attempts: int = 3, settings: GateSettings = GateSettings(),
                        report: Report = lambda s: None, lint: bool = True, variant: str = PLAIN_VARIANT,
                        gate_runner: Callable[..., GateResult] = run_gate,
                        stopping: Callable[[], bool] = lambda: False) -> Outcome:
    """Ask, gate, repair until admitted or ``max_attempts`` are spent.

    ``gate_runner`` runs the admission gate (in this process by default; ``opgen.synthesize_many`` passes
    one that runs it in a pool of processes). ``stopping()`` is asked before each request and before
    admission: when it says True the loop raises ``Interrupted`` and admits nothing more."""
    if lint:  # a spec that a constant or all-zero kernel could pass is fixed before anything is asked
        require_clean(spec, [overload])
    target_id = TARGET_IDS[target]
    registry = Registry(project.generated)
    recordings = Recordings(project.recordings)
    messages = render_request(project.prompts, spec, overload, target, variant)
    context = target_for(target).answer_context(spec, overload)
    outcome = Outcome(spec.op, overload.name, target_id, admitted=False, variant=variant)
    transcript: dict[str, Any] = {
        "op": spec.op, "overload": overload.name, "target": target_id, "variant": variant, "opgen": __version__,
        "started": now(), "exchanges": [],
    }
    for number in range(1, max_attempts + 1):
        if stopping():
            raise Interrupted(f"stopped before attempt {number} of {spec.op} [{overload.name}]")
        started = time.monotonic()
        request = Request(spec.op, overload.name, target, list(messages), context)
        report(f"attempt {number}/{max_attempts}: asking {provider.name}")
        try:
            reply = provider.complete(request)
        except AwaitingAnswer:
            raise  # the file exchange is waiting for a person; nothing failed
        except OpgenError as exc:
            # Keep whatever raw traffic the provider saw (refusals, invalid answers) with the error.
            transcript["exchanges"].append({"attempt": number, "request": request.messages, "error": exc.render(),
                                            "raw": list(getattr(provider, "last_exchanges", []))})
            outcome.error = exc.render()
            outcome.transcript_path = _keep_failed(project, transcript, outcome)
            raise _with_transcript(exc, outcome.transcript_path)
        outcome.tokens["prompt"] += reply.prompt_tokens
        outcome.tokens["completion"] += reply.completion_tokens
        if provider.name == "replay":
            original = reply.provenance["original"]
            report(f"replaying a recorded answer ({reply.provenance['recording']}; originally from "
                   f"{original.get('provider')}, model {original.get('model') or 'none recorded'}); "
                   "building and verifying afresh")
        else:
            kept = recordings.save(spec.op, overload.name, target, request.messages, reply.answer, reply.provenance)
            outcome.recordings.append(kept)
            shipped = recordings.path_for(spec.op, overload.name, target, request.digest)
            if kept != shipped:
                where = shipped.relative_to(project.root) if shipped.is_relative_to(project.root) else shipped
                report(f"a recording of this request is already there ({where}); it stays what replay uses, "
                       f"and this answer is kept beside it ({kept.name}); scripts/record_answers.py replaces "
                       "shipped recordings")
        report(f"attempt {number}: building and verifying")
        gate = gate_runner(spec, overload, reply.answer.source, settings, target=target)
        seconds = time.monotonic() - started
        outcome.attempts.append(Attempt(number, gate.stage, gate.feedback, reply.provenance, seconds))
        transcript["exchanges"].append({
            "attempt": number, "request_hash": request.digest, "request": request.messages,
            "answer": reply.answer.model_dump(), "provenance": reply.provenance, "raw": reply.exchanges,
            "tokens": {"prompt": reply.prompt_tokens, "completion": reply.completion_tokens},
            "gate": {"stage": gate.stage, "ok": gate.ok, "feedback": gate.feedback,
                     "verdicts": [_verdict(v) for v in gate.verdicts]},
            "seconds": round(seconds, 3),
        })
        if gate.ok:
            if stopping():  # a verdict reached while the run stops is not admitted: the run said it would stop
                raise Interrupted(f"stopped before admitting {spec.op} [{overload.name}]")
            report(f"attempt {number}: admitted ({gate.feedback})")
            transcript["finished"] = now()
            outcome.entry = _admit(registry, spec, overload, target, reply.answer.source, gate, transcript,
                                   reply.provenance, number, outcome.tokens, request.digest, variant)
            outcome.admitted = True
            outcome.transcript_path = outcome.entry.file("transcript")
            return outcome
        report(f"attempt {number}: rejected at {gate.stage}: {gate.feedback.splitlines()[0][:160]}")
        messages = request.messages + [
            {"role": "assistant", "content": reply.answer.source},
            {"role": "user", "content": render_repair(project.prompts, spec, overload, target, gate.stage, gate.feedback)},
        ]
    transcript["finished"] = now()
    outcome.error = f"no candidate was admitted in {max_attempts} attempts"
    outcome.transcript_path = _keep_failed(project, transcript, outcome)
    return outcome


def _admit(registry: Registry, spec: Spec, overload: Overload, target: str, source: str, gate: GateResult,
           transcript: dict, provenance: dict, attempts: int, tokens: dict, digest: str,
           variant: str = PLAIN_VARIANT) -> Entry:
    files = target_for(target)
    target_id = files.target_id
    shim = files.shim(spec, overload)
    transcript_text = json.dumps(transcript, indent=2) + "\n"
    data = {
        "op": spec.op,
        "overload": overload.name,
        "target": target_id,
        "status": files.admitted_status,
        "signature": files.signature(spec, overload),
        "spec": {"path": _rel(spec.path), "hash": spec.overload_hash(overload)},
        "build": gate.evidence["build"],
        "evidence": gate.evidence,
        "provenance": {
            **provenance,
            "prompt_hash": transcript["exchanges"][0]["request_hash"],
            "final_request_hash": digest,
            "attempts": attempts,
            "tokens": tokens,
            "transcript": "transcript.json",
        },
        "admitted_at": now(),
    }
    return registry.admit(spec.op, overload.name, target_id,
                          {"kernel": (files.kernel_file, source), "shim": (files.shim_file, shim),
                           "transcript": ("transcript.json", transcript_text), **files.extra_files(spec, overload)},
                          data, variant=variant)


def _keep_failed(project: Project, transcript: dict, outcome: Outcome) -> Path:
    project.runs.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%f")  # two failures in one second must not collide
    suffix = "" if outcome.variant == PLAIN_VARIANT else f"@{outcome.variant}"
    path = project.runs / f"{stamp}-{outcome.op}__{outcome.overload}{suffix}.{outcome.target}.json"
    transcript["outcome"] = outcome.error
    path.write_text(json.dumps(transcript, indent=2) + "\n")
    return path


def _with_transcript(exc: OpgenError, path: Path) -> OpgenError:
    exc.message += f" (transcript kept at {path})"
    return exc


def _verdict(v) -> dict:
    return {"ok": v.ok, "kind": v.kind, "message": v.message, "seed": v.seed, "examples": v.examples,
            "details": v.details, "seconds": round(v.seconds, 3)}


def _rel(path: Path | None) -> str:
    if path is None:
        return ""
    parts = path.parts
    return "/".join(parts[parts.index("specs"):]) if "specs" in parts else str(path)
