"""Synthesis at scale: many overload x target items at once (``opgen synthesize --missing``).

``plan_many`` chooses the work: every overload x target of the chosen ops (all by default) that
has no current entry (``--missing``), or all of them (``--all``), in one slice of a CI matrix
(``--shard I/N``, the nightly job's stable hashing). ``run_many`` does it with ``jobs`` workers:

* each worker thread runs the ordinary repair loop (``synthesize_overload``) with its own provider,
  all of them sharing one token budget and one rate limiter (``opgen.llm.ratelimit``: a 429 seen by
  one worker pauses them all);
* gates run in child processes (``opgen.gate.pool``), at most ``gate_jobs`` at once;
* an interrupt (Ctrl-C, SIGTERM) stops everything: no request is sent, no gate finishes and no
  entry is admitted after it, the running gates are killed, and every entry admitted before it is
  whole (the registry admits by an atomic rename); the items not done are reported as interrupted.

Nothing here prints: progress goes to ``on_event``; ``opgen.cli.synthesize`` shows it.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Callable

from opgen.errors import AwaitingAnswer, Interrupted, OpgenError
from opgen.gate.admission import GateSettings
from opgen.gate.pool import GatePool
from opgen.llm.providers import BudgetSpent, Provider
from opgen.nightly.shards import WHOLE, Shard
from opgen.project import Project
from opgen.registry import Entry, Registry
from opgen.service import current_entry
from opgen.spec.model import PLAIN_VARIANT, TARGET_IDS, Overload, Spec, load_all
from opgen.spec.names import find_spec
from opgen.synthesize import Outcome, synthesize_overload
from opgen.targets.catalog import target_for

# How long an interrupted run waits for its workers to notice (they are between a request and a
# gate, or in one: both end at once); a worker blocked in an HTTP read is abandoned, and it can no
# longer admit anything.
STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class WorkItem:
    spec: Spec
    overload: Overload
    target: str  # short name: cpp, rust, cuda, metal
    variant: str = PLAIN_VARIANT

    @property
    def key(self) -> str:
        """Stable across runs and machines: what ``--shard`` hashes."""
        return f"synthesize:{self.spec.op}:{self.overload.name}@{self.variant}:{TARGET_IDS[self.target]}"

    @property
    def label(self) -> str:
        name = self.overload.name if self.variant == PLAIN_VARIANT else f"{self.overload.name}@{self.variant}"
        return f"{self.spec.op} {name} ({TARGET_IDS[self.target]})"

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.spec.op, "overload": self.overload.name, "target": TARGET_IDS[self.target],
                "variant": self.variant}


@dataclass
class ManyPlan:
    items: list[WorkItem]                       # to synthesize
    current: list[tuple[WorkItem, Entry]]       # already current: left alone (not with --all)
    skipped: list[tuple[WorkItem, str]]         # the target cannot express the overload
    spec_problems: list[tuple[WorkItem, str]]   # refused before any request: the spec must be fixed
    shard: Shard = WHOLE


def plan_many(project: Project, ops: list[str] | None = None, targets: list[str] | None = None, *,
              overloads: list[str] | None = None, everything: bool = False, variant: str = PLAIN_VARIANT,
              shard: Shard = WHOLE, spec_check: Callable[[Spec, list[Overload]], None] | None = None) -> ManyPlan:
    """The items of ``ops`` (default: every spec) x ``targets`` (default: each spec's own targets),
    only the overloads named ``overloads`` when given.

    Without ``everything`` an item whose entry is current (``service.current_entry``) is left out.
    ``spec_check(spec, overloads)`` raises an OpgenError for a spec that must be fixed first (``opgen spec
    check``: the lint, then tolerance and domain); that spec's items are refused, the others go on."""
    specs = load_all(project.specs)
    chosen = [find_spec(specs, name) for name in ops] if ops else [specs[name] for name in sorted(specs)]
    chosen = list({s.op: s for s in chosen}.values())  # an op named twice (by two aliases) once
    registry = Registry(project.generated)
    plan = ManyPlan([], [], [], [], shard)
    for spec in chosen:
        if variant not in spec.variant_names():
            if ops:  # asked for by name: say so; otherwise the op simply has no such variant
                raise OpgenError(f"{spec.op} declares no variant {variant!r}",
                                 hint=f"choose one of {', '.join(spec.variant_names())}")
            continue
        wanted = [t for t in (targets or spec.targets) if t in spec.targets]
        candidates: list[WorkItem] = []
        for t in wanted:
            for o in spec.overloads:
                if overloads and o.name not in overloads:
                    continue
                item = WorkItem(spec, o, t, variant)
                if not shard.owns(item.key):
                    continue
                if (why := target_for(t).unsupported(spec, o)) is not None:
                    plan.skipped.append((item, why))
                    continue
                if not everything and (entry := current_entry(registry, spec, o, t, variant)) is not None:
                    plan.current.append((item, entry))
                    continue
                candidates.append(item)
        if not candidates:
            continue
        if spec_check is not None:
            try:
                spec_check(spec, list({i.overload.name: i.overload for i in candidates}.values()))
            except OpgenError as exc:
                plan.spec_problems.extend((i, exc.render()) for i in candidates)
                continue
        plan.items.extend(candidates)
    return plan


# What happened to an item. "interrupted": the run stopped before it was done (nothing admitted for
# it); "not started": the token budget was spent before it began.
RESULTS = ("admitted", "not admitted", "error", "awaiting", "interrupted", "not started")


@dataclass
class ItemResult:
    item: WorkItem
    result: str
    seconds: float = 0.0
    message: str = ""
    outcome: Outcome | None = None

    def as_dict(self, root: Path | None = None) -> dict[str, Any]:
        """Paths relative to ``root`` when given (the project root: what a CI shard's bundle holds)."""
        o = self.outcome

        def shown(path: Path | None) -> str | None:
            if path is None:
                return None
            return str(path.relative_to(root)) if root is not None and path.is_relative_to(root) else str(path)

        return {**self.item.as_dict(), "result": self.result, "seconds": round(self.seconds, 3),
                "message": self.message,
                "attempts": len(o.attempts) if o else 0,
                "stages": [a.stage for a in o.attempts] if o else [],
                "tokens": dict(o.tokens) if o else {"prompt": 0, "completion": 0},
                "entry": shown(o.entry.path) if o and o.entry else None,
                "transcript": shown(o.transcript_path) if o else None,
                "recordings": [shown(p) for p in o.recordings] if o else []}


@dataclass
class ManyResult:
    results: list[ItemResult] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    rate_limit: dict[str, Any] = field(default_factory=dict)

    def count(self, result: str) -> int:
        return sum(r.result == result for r in self.results)

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(r.result == "admitted" for r in self.results)


Event = Callable[[str, WorkItem, Any], None]  # (kind: start | report | finish, item, message or ItemResult)


def run_many(project: Project, plan: ManyPlan, make_provider: Callable[[], Provider], *, jobs: int = 1,
             gate_jobs: int = 1, max_attempts: int = 3, settings: GateSettings = GateSettings(),
             on_event: Event = lambda kind, item, data: None, stop: threading.Event | None = None,
             limiter: Any = None) -> ManyResult:
    """Synthesize every item of ``plan`` with ``jobs`` workers; returns when all are done or the run
    is interrupted (KeyboardInterrupt in the calling thread, or ``stop`` set by someone else)."""
    stop = stop or threading.Event()
    gates = GatePool(gate_jobs)
    todo: queue.Queue[WorkItem] = queue.Queue()
    for item in plan.items:
        todo.put(item)
    results: dict[int, ItemResult] = {}
    index = {id(item): n for n, item in enumerate(plan.items)}
    events = threading.Lock()  # callbacks one at a time: the console is shared
    budget_spent = threading.Event()
    started_at = time.monotonic()

    def emit(kind: str, item: WorkItem, data: Any) -> None:
        with events:
            on_event(kind, item, data)

    def finish(item: WorkItem, result: ItemResult) -> None:
        results[index[id(item)]] = result
        emit("finish", item, result)

    def worker() -> None:
        provider: Provider | None = None
        while not stop.is_set():
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            if budget_spent.is_set():
                finish(item, ItemResult(item, "not started", 0.0, "the token budget was spent before it began"))
                continue
            emit("start", item, None)
            began = time.monotonic()
            try:
                provider = provider or make_provider()
                outcome = synthesize_overload(
                    project, item.spec, item.overload, provider, target=item.target, max_attempts=max_attempts,
                    settings=settings, report=lambda msg, item=item: emit("report", item, msg), lint=False,
                    variant=item.variant, gate_runner=gates.run, stopping=stop.is_set)
            except Interrupted as exc:
                finish(item, ItemResult(item, "interrupted", time.monotonic() - began, str(exc)))
                continue
            except AwaitingAnswer as exc:
                finish(item, ItemResult(item, "awaiting", time.monotonic() - began, exc.render()))
                continue
            except OpgenError as exc:
                if isinstance(exc, BudgetSpent):
                    budget_spent.set()
                if stop.is_set():  # an error caused by the stop itself (a killed gate, a closed socket)
                    finish(item, ItemResult(item, "interrupted", time.monotonic() - began, exc.render()))
                else:
                    finish(item, ItemResult(item, "error", time.monotonic() - began, exc.render()))
                continue
            except Exception as exc:  # a bug in opgen: this item fails, the others go on; say where
                where = traceback.format_exception(exc)[-2].strip().splitlines()[0]
                finish(item, ItemResult(item, "error", time.monotonic() - began,
                                        f"internal error: {type(exc).__name__}: {exc} ({where})"))
                continue
            result = "admitted" if outcome.admitted else "not admitted"
            finish(item, ItemResult(item, result, time.monotonic() - began, outcome.error or "", outcome))

    threads = [threading.Thread(target=worker, name=f"synthesize-{n + 1}", daemon=True)
               for n in range(max(1, min(jobs, len(plan.items))))]
    interrupted = False
    try:
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.2)  # short: the main thread must see Ctrl-C
            if stop.is_set():
                interrupted = True
                break
    except KeyboardInterrupt:
        interrupted = True
    if interrupted:
        stop.set()
        gates.stop()
        deadline = time.monotonic() + STOP_GRACE_S
        for t in threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
    for n, item in enumerate(plan.items):  # what never finished: stopped before or while it ran
        if n not in results:
            results[n] = ItemResult(item, "interrupted", 0.0, "the run stopped before this item was done")
    stats = limiter.stats.as_dict() if limiter is not None else {}
    return ManyResult([results[n] for n in range(len(plan.items))], interrupted,
                      time.monotonic() - started_at, stats)
