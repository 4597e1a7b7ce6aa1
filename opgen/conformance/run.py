"""``opgen conformance onnx``: the ONNX backend node cases through the registry's served kernels.

For every mapped ONNX op (``opgen.conformance.mapping.MAPPINGS``) and every one of its node test
cases: translate the case into a call of the opgen op (or record why it is inexpressible), find
the kernel the registry serves for that overload on the target (``Registry.serve``: the verified
variant measured fastest here, else plain; a stale entry is not served), build it from its
committed source (the build is cached, as for ``opgen bench``), and run every call in one child
process (``opgen.conformance.worker``) under the gate's limits, each kernel in the gate's
sandboxed executor. Then compare each output with the case's expected one as ONNX's backend runner
does (``opgen.conformance.check``).

Per case the result is one of:

* ``pass``: every output the opgen op computes matched;
* ``wrong``: an output differs (shape, dtype or values beyond the case's rtol/atol), or the kernel
  wrote one of its inputs;
* ``error``: the kernel raised, crashed (a signal, abort()), ran past the timeout, or no longer
  builds or loads;
* ``inexpressible``: the opgen op cannot express the case (the dtype, attribute value, input,
  output or op it lacks, named), or the registry serves no kernel for the overload it needs. A
  case whose node asks for outputs the opgen op does not compute is inexpressible even when the
  outputs it does compute matched (``partial``: "pass"); had one of them differed, it is wrong.

A run is ok when no case is wrong and none is an error.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from opgen.conformance.cases import Case, cases_of, onnx_version
from opgen.conformance.check import compare
from opgen.conformance.mapping import MAPPINGS, Inexpressible, Mapping, MappingError, Node, Plan
from opgen.errors import OpgenError
from opgen.project import Project
from opgen.registry import Entry, Registry
from opgen.service import build_job_for
from opgen.spec.model import Spec, load_all
from opgen.spec.names import spec_named
from opgen.targets.catalog import build_any, target_for
from opgen.verify import sandbox
# The worker gets exactly the limits (CPU, memory, files, processes, no core dumps, its own network
# namespace) and the environment (no OPENAI_/OPGEN_ variables, thread settings) of the gate's own
# verification child: the harness's helpers, not a copy of them.
from opgen.verify.executor import dtype_token
from opgen.verify.harness import Limits, apply_limits, child_env
from opgen.verify.runner import place

SCHEMA = "opgen-conformance-onnx/1"
STATUSES = ("pass", "wrong", "error", "inexpressible")
SEVERITY = {"wrong": 0, "error": 1, "inexpressible": 2, "pass": 3}  # a case's worst data set decides
DEFAULT_TIMEOUT = 30.0  # seconds per kernel call: ONNX's cases are tiny, so this is a hang
WATCHDOG_SLACK = 60.0  # seconds on top of the call timeout before the worker itself counts as hung
TOP_REASONS = 3


@dataclass
class CaseResult:
    case: str
    status: str
    message: str = ""
    overload: str | None = None
    variant: str | None = None
    outputs_checked: list[str] = field(default_factory=list)
    outputs_not_computed: list[str] = field(default_factory=list)
    partial: str | None = None  # inexpressible for an output it lacks: how the outputs it has compared
    subject: str | None = None  # inexpressible: what is missing; why: ``message``
    why: str | None = None
    notes: list[str] = field(default_factory=list)
    mismatch: dict[str, Any] | None = None
    error_kind: str | None = None

    def as_dict(self) -> dict[str, Any]:
        d = {"case": self.case, "status": self.status, "message": self.message}
        for k in ("overload", "variant", "partial", "subject", "why", "mismatch", "error_kind"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        for k in ("outputs_checked", "outputs_not_computed", "notes"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        return d


@dataclass
class OpResult:
    onnx_op: str
    opgen_op: str
    target: str
    how: str
    results: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.target}/{self.onnx_op}"

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def partial(self) -> int:
        return sum(r.partial == "pass" for r in self.results)

    def reasons(self, top: int | None = None) -> list[dict[str, Any]]:
        """The inexpressible cases grouped by why, most frequent first, with what each lacked."""
        groups: dict[str, list[str]] = {}
        for r in self.results:
            if r.status == "inexpressible":
                groups.setdefault(r.why or r.message, []).append(r.subject or "")
        ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        out = [{"why": why, "subjects": sorted(set(subjects), key=subjects.index), "count": len(subjects)}
               for why, subjects in ranked]
        return out[:top] if top else out

    @property
    def ok(self) -> bool:
        return not self.count("wrong") and not self.count("error")

    def summary(self) -> str:
        parts = [f"{self.count(s)} {s}" for s in STATUSES if self.count(s)]
        return ", ".join(parts) or "no cases"

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "onnx_op": self.onnx_op, "opgen_op": self.opgen_op, "target": self.target,
                "how": self.how, "cases": len(self.results), **{s: self.count(s) for s in STATUSES},
                "partial": self.partial, "reasons": self.reasons(), "seconds": round(self.seconds, 2),
                "results": [r.as_dict() for r in self.results]}


@dataclass
class Report:
    target: str
    ops: list[OpResult]
    seconds: float
    onnx: str

    @property
    def ok(self) -> bool:
        return all(op.ok for op in self.ops)

    def totals(self) -> dict[str, int]:
        return {"ops": len(self.ops), "cases": sum(len(op.results) for op in self.ops),
                **{s: sum(op.count(s) for op in self.ops) for s in STATUSES},
                "partial": sum(op.partial for op in self.ops)}

    def as_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "onnx": self.onnx, "target": self.target, "ok": self.ok,
                "totals": self.totals(), "seconds": round(self.seconds, 1), "ops": [op.as_dict() for op in self.ops]}


def select_mappings(specs: dict[str, Spec], names: list[str] | None) -> list[Mapping]:
    """The mappings ``names`` pick: ONNX op names (any case) or opgen op names and aliases."""
    if not names:
        return list(MAPPINGS)
    by_onnx = {m.onnx_op.lower(): m for m in MAPPINGS}
    chosen: list[Mapping] = []
    for name in names:
        if name.lower() in by_onnx:
            picked = [by_onnx[name.lower()]]
        else:
            spec = spec_named(specs, name)
            picked = [m for m in MAPPINGS if spec is not None and spec.op in m.ops]
            if not picked:
                what = f"no ONNX op maps to {name}" + (f" ({spec.op})" if spec is not None and spec.op != name else "")
                raise OpgenError(what, hint="name an ONNX op or an opgen op of the mapping table: "
                                 + ", ".join(f"{m.onnx_op} ({m.opgen_op})" for m in MAPPINGS))
        chosen += [m for m in picked if m not in chosen]
    return chosen


@dataclass
class _Call:
    """One kernel call of one data set of one case."""

    op: int  # index into the run's op results
    case: int  # index into that op's cases
    data_set: int
    plan: Plan  # the step to run next (the only one, unless the plan is composed)
    expected: tuple[np.ndarray, ...]  # the node's present outputs, in order
    output_positions: list[int]  # the node's present outputs' positions
    mapping: Mapping
    entry: Entry | None = None  # the served entry, once found and built
    library: str | None = None  # its build
    spec_path: str | None = None
    answer: dict[str, Any] | None = None  # the worker's answer, or {"decided": CaseResult} without a call
    # The steps of a composed plan run so far: each plan, its kernel's result, its served variant.
    done: list[tuple[Plan, Any, str | None]] = field(default_factory=list)

    def next_step(self) -> bool:
        """After a step answered ok: plan the next one from its result (True), or there is none."""
        if self.plan.then is None or self.answer.get("inputs_written"):
            return False  # the last step, or one that wrote its input: judged as it is
        result = self.answer["out"] if "out" in self.answer else np.asarray(self.answer.get("value"))
        self.done.append((self.plan, result, self.entry.variant if self.entry else None))
        self.plan = self.mapping.following(self.plan, result)
        self.entry = self.library = self.spec_path = self.answer = None
        return True


def run_onnx(project: Project, names: list[str] | None = None, *, target: str = "cpp",
             timeout: float = DEFAULT_TIMEOUT, progress: Callable[[OpResult], None] = lambda op: None,
             specs: dict[str, Spec] | None = None) -> Report:
    """Run the mapped ONNX node cases through ``target``'s served kernels; ``progress(op)`` as each
    ONNX op's cases are all decided."""
    started = time.monotonic()
    the_target = target_for(target)
    target_id = the_target.target_id
    specs = specs if specs is not None else load_all(project.specs)
    mappings = select_mappings(specs, names)
    cases = cases_of({m.onnx_op for m in mappings})
    registry = Registry(project.generated)
    ops: list[OpResult] = []
    pending: list[_Call] = []
    decided: list[list[list[CaseResult | None]]] = []  # per op, per case, per data set (None: a call decides)
    for m in mappings:
        op = OpResult(m.onnx_op, ", ".join(m.ops), target_id, m.how)
        ops.append(op)
        per_case = []
        for ci, case in enumerate(cases[m.onnx_op]):
            per_set: list[CaseResult | None] = []
            for di, (inputs, outputs) in enumerate(case.data_sets):
                node, positions = _node(case, inputs)
                try:
                    plan = m.plan(node, specs)
                except Inexpressible as exc:
                    per_set.append(CaseResult(case.name, "inexpressible", str(exc), subject=exc.subject, why=exc.why))
                    continue
                except MappingError as exc:
                    per_set.append(CaseResult(case.name, "error", f"the mapping does not fit the spec: {exc}",
                                              error_kind="mapping"))
                    continue
                except Exception as exc:  # noqa: BLE001 - a translation that trips over a case is an error of it
                    per_set.append(CaseResult(case.name, "error", f"translating the case failed: "
                                              f"{type(exc).__name__}: {exc}", error_kind="mapping"))
                    continue
                per_set.append(None)
                pending.append(_Call(len(ops) - 1, ci, di, plan, outputs, positions, m))
            per_case.append(per_set)
        decided.append(per_case)

    remaining = Counter(c.op for c in pending)
    next_op, last = [0], [time.monotonic()]

    def advance() -> None:
        """Decide and report, in table order, every op whose calls have all been answered."""
        while next_op[0] < len(ops) and not remaining[next_op[0]]:
            i = next_op[0]
            op = ops[i]
            _settle(pending, i, decided, cases, ops)
            op.results = [_combine(cases[op.onnx_op][ci].name, sets) for ci, sets in enumerate(decided[i])]
            now = time.monotonic()
            op.seconds, last[0] = now - last[0], now
            progress(op)
            next_op[0] += 1

    # Rounds: every call's first step, then the next step of each composed plan whose step answered
    # ok (planned from that answer), until no step is left.
    steps = pending
    while steps:
        _serve_and_build(steps, specs, registry, target_id, ops, cases)
        for call in steps:
            if call.answer is not None:  # no served kernel, or it no longer builds: decided here
                remaining[call.op] -= 1
        advance()
        runnable = [c for c in steps if c.answer is None]
        following: list[_Call] = []

        def answered(call: _Call) -> None:
            if call.answer.get("status") == "ok":
                try:
                    if call.next_step():
                        following.append(call)
                        return
                except (Inexpressible, MappingError) as exc:
                    name = cases[ops[call.op].onnx_op][call.case].name
                    status, kind = ("inexpressible", None) if isinstance(exc, Inexpressible) else ("error", "mapping")
                    call.answer = {"decided": CaseResult(name, status, str(exc), error_kind=kind,
                                                         subject=getattr(exc, "subject", None),
                                                         why=getattr(exc, "why", None))}
            remaining[call.op] -= 1
            advance()

        if runnable:
            _run_calls(runnable, the_target.limits(Limits()), timeout, answered)
        steps = following
    advance()
    return Report(target_id, ops, time.monotonic() - started, onnx_version())


def _node(case: Case, inputs: tuple[np.ndarray, ...]) -> tuple[Node, list[int]]:
    """The node of one data set: inputs by position (None where omitted) and its present outputs' positions."""
    given = iter(inputs)
    by_position = tuple(next(given) if name else None for name in case.inputs)
    positions = [i for i, name in enumerate(case.outputs) if name]
    return Node(case.op_type, case.opset, case.attrs, by_position, case.outputs, case.rtol, case.atol), positions


def _serve_and_build(pending: list[_Call], specs: dict[str, Spec], registry: Registry, target_id: str,
                     ops: list[OpResult], cases: dict[str, list[Case]]) -> None:
    """The served entry of each planned overload, built; a call with none is decided here."""
    served: dict[tuple[str, str], tuple[Entry | None, str]] = {}
    for call in pending:
        spec = call.plan.spec
        key = (spec.op, call.plan.overload.name)
        if key not in served:
            entry, reasons = registry.serve(spec.op, call.plan.overload.name, target_id, spec)
            served[key] = (entry, _why_not_served(registry, spec, key[1], target_id, reasons))
        entry, why = served[key]
        if entry is None:
            name = cases[ops[call.op].onnx_op][call.case].name
            subject = f"no served {target_id} kernel for {spec.op} [{key[1]}]"
            call.answer = {"decided": CaseResult(name, "inexpressible", f"{subject}: {why}", overload=key[1],
                                                 subject=subject, why=why)}
        else:
            call.entry, call.spec_path = entry, str(spec.path)
    entries = {id(c.entry): c.entry for c in pending if c.entry is not None}
    unique = list(entries.values())
    jobs = [build_job_for(e, specs[e.op], specs[e.op].overload(e.overload)) for e in unique]
    built = dict(zip((id(e) for e in unique), build_any(jobs) if jobs else []))
    for call in pending:
        if call.entry is None:
            continue
        b = built[id(call.entry)]
        if not b.ok:
            name = cases[ops[call.op].onnx_op][call.case].name
            call.answer = {"decided": CaseResult(name, "error", "the served kernel no longer builds: "
                                                 + (b.diagnostics or "")[:500], overload=call.entry.overload,
                                                 variant=call.entry.variant, error_kind="build")}
            call.entry = None
        else:
            call.library = str(b.library)


def _why_not_served(registry: Registry, spec: Spec, overload: str, target_id: str, reasons: list[str]) -> str:
    if reasons:  # stale: what changed
        return "; ".join(reasons)
    if target_id not in [target_for(t).target_id for t in spec.targets]:
        return "the spec does not list this target"
    statuses = sorted({e.status(spec)[0] for e in registry.variants(spec.op, overload, target_id)})
    if statuses:
        return f"its entry is {' and '.join(statuses)}; the registry serves verified entries only"
    return "nothing admitted for this target"


def _run_calls(calls: list[_Call], limits: Limits, timeout: float, answered: Callable[[_Call], None]) -> None:
    """Every call in one worker process; each answer as it comes (``answered``)."""
    with tempfile.TemporaryDirectory(prefix="opgen-conformance-") as tmp:
        work = Path(tmp)
        kernels: dict[str, dict[str, Any]] = {}
        keys: dict[int, str] = {}
        job_calls = []
        rng = np.random.default_rng(0)
        for i, call in enumerate(calls):
            e = call.entry
            if id(e) not in keys:
                keys[id(e)] = f"k{len(keys)}"
                kernels[keys[id(e)]] = {"library": call.library, "symbol": e.signature["c_symbol"],
                                        "spec_path": call.spec_path, "overload": e.overload}
            job_calls.append(_job_call(i, keys[id(e)], call, work, rng))
        job = {"kernels": kernels, "calls": job_calls, "timeout": timeout, "parent_netns": sandbox.network_namespace(),
               "cpu_seconds": limits.cpu_seconds, "file_size_bytes": limits.file_size_bytes}
        (work / "job.json").write_text(json.dumps(job))
        read_fd, write_fd = os.pipe()
        with open(work / "worker.log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "opgen.conformance.worker", str(work / "job.json"), str(write_fd)],
                cwd=work, env=child_env(work, limits, None), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True, pass_fds=(write_fd,),
                preexec_fn=lambda: apply_limits(limits))
        os.close(write_fd)
        got: set[int] = set()
        try:
            for answer in _lines(read_fd, timeout + WATCHDOG_SLACK):
                i = int(answer["id"])
                call = calls[i]
                call.answer = answer
                if answer.get("status") == "ok" and "value" not in answer:
                    sig = call.plan.overload.sig
                    outs = [_load_out(work / (f"out-{i}-{j}.npy" if sig.returns.is_tuple else f"out-{i}.npy"), t)
                            for j, (_, t) in enumerate(sig.results)]
                    call.answer["out"] = tuple(outs) if sig.returns.is_tuple else outs[0]
                got.add(i)
                answered(call)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            code = proc.wait()
            os.close(read_fd)
        missing = [i for i in range(len(calls)) if i not in got]
        if missing:
            tail = (work / "worker.log").read_bytes()[-1500:].decode("utf-8", "replace")
            why = (f"the conformance worker stopped (exit status {code}) before answering"
                   + (f": {tail.strip()}" if tail.strip() else ""))
            for i in missing:
                calls[i].answer = {"status": "error", "kind": "worker", "message": why}
                answered(calls[i])


def _load_out(path: Path, t: Any) -> np.ndarray:
    out = np.load(path)
    want = np.dtype(t.dtype.np)
    # .npy keeps ml_dtypes' bfloat16 as a two-byte void: the bits, viewed back
    return out.view(want) if out.dtype.kind == "V" and out.itemsize == want.itemsize else out


def _lines(fd: int, patience: float):
    """JSON lines from ``fd`` until EOF, or until none came for ``patience`` seconds."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    buffer = b""
    while True:
        if not poller.poll(int(patience * 1000)):
            return  # the worker hangs: the caller kills it and reports the calls left
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield json.loads(line)


def _placed_arg(key: str, value: np.ndarray, rng: np.random.Generator, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """A tensor argument placed in its own buffer (stored under ``key``), as the worker reads it."""
    placed = place(value, rng, 0)
    arrays[key] = placed.buffer
    return {"buffer": key, "offset": placed.offset, "shape": list(placed.shape),
            "strides": list(placed.strides), "dtype": dtype_token(placed.dtype)}


def _job_call(i: int, key: str, call: _Call, work: Path, rng: np.random.Generator) -> dict[str, Any]:
    overload = call.plan.overload
    args, arrays = [], {}
    for p in overload.sig.params:
        value = call.plan.args[p.name]
        if p.type.kind == "tensor":
            args.append({"name": p.name, **_placed_arg(p.name, value, rng, arrays)})
        elif p.type.is_tensor_list:  # each element in its own buffer, as the gate places them
            args.append({"name": p.name, "list": [_placed_arg(f"{p.name}[{k}]", v, rng, arrays)
                                                  for k, v in enumerate(value)]})
        else:
            args.append({"name": p.name, "value": value.item() if isinstance(value, np.generic) else value})
    np.savez(work / f"in-{i}.npz", **arrays)
    sig = overload.sig
    names = [p.name for p in sig.tensor_params]
    outs = [{"shape": [int(n) for n in overload.rules[name].output_shape(call.plan.args, names)],
             "dtype": dtype_token(np.dtype(t.dtype.np))} for name, t in sig.results] if sig.tensor_results else []
    out = outs if sig.returns.is_tuple else outs[0] if outs else None  # a tuple result: one per result
    return {"id": i, "kernel": key, "inputs": f"in-{i}.npz", "args": args, "out": out}


def _settle(pending: list[_Call], op_index: int, decided: list, cases: dict[str, list[Case]], ops: list[OpResult]) -> None:
    """Fill in the per-data-set results of one op from its calls' answers."""
    op = ops[op_index]
    for call in pending:
        if call.op != op_index or decided[op_index][call.case][call.data_set] is not None:
            continue
        name = cases[op.onnx_op][call.case].name
        first = _main_step(call)[0]  # the op that computes the node's main output
        decided[op_index][call.case][call.data_set] = _judge(name, call, cases[op.onnx_op][call.case], first.spec.op)


def _main_step(call: _Call) -> tuple[Plan, Any, str | None]:
    """The first step of the call's plan that is the op's own (not a cast converting dtypes for it)."""
    steps = [*call.done, (call.plan, None, call.entry.variant if call.entry else None)]
    return next((step for step in steps if not step[0].auxiliary), steps[0])


def _judge(name: str, call: _Call, case: Case, opgen_op: str) -> CaseResult:
    answer = call.answer or {"status": "error", "kind": "worker", "message": "no answer"}
    if "decided" in answer:
        return answer["decided"]
    first = _main_step(call)
    notes = [n for plan, _, _ in call.done for n in plan.notes] + call.plan.notes
    if call.done:  # a composed plan: name its steps, in order
        notes.append("composed: " + " then ".join(f"{p.spec.op} [{p.overload.name}]"
                                                  for p in [*(d[0] for d in call.done), call.plan]))
    base = dict(overload=first[0].overload.name, variant=first[2], notes=notes)
    if answer.get("status") != "ok":
        return CaseResult(name, "error", str(answer.get("message", "")), error_kind=answer.get("kind"), **base)
    result = answer.get("out")
    if result is None:
        result = np.asarray(answer.get("value"))
    steps = [(plan, got) for plan, got, _ in call.done] + [(call.plan, result)]
    produced = {position for plan, _ in steps for position in plan.outputs}
    expected = dict(zip(call.output_positions, call.expected))
    not_computed = [case.outputs[p] for p in call.output_positions if p not in produced]
    checked = [case.outputs[p] for p in call.output_positions if p in produced]
    if answer.get("inputs_written"):
        return CaseResult(name, "wrong", f"the kernel wrote its input {', '.join(answer['inputs_written'])}",
                          outputs_checked=checked, outputs_not_computed=not_computed, **base)
    for plan, step_result in steps:
        for position, produce in plan.outputs.items():
            if position not in expected:
                continue  # the node does not ask for this output
            try:
                got = produce(step_result)
            except ValueError as exc:  # the result does not have the shape the translation expects
                shapes = [list(r.shape) for r in step_result] if isinstance(step_result, tuple) \
                    else list(step_result.shape)
                return CaseResult(name, "wrong", f"output {case.outputs[position]}: the result of shape "
                                  f"{shapes} does not fit ({exc})", outputs_checked=checked,
                                  outputs_not_computed=not_computed, **base)
            mismatch = compare(got, expected[position], case.rtol, case.atol)
            if mismatch is not None:
                mismatch["output"] = case.outputs[position]
                return CaseResult(name, "wrong", f"output {case.outputs[position]}: {mismatch['message']}",
                                  outputs_checked=checked, outputs_not_computed=not_computed, mismatch=mismatch,
                                  **base)
    if not_computed:
        subject = f"output{'s' if len(not_computed) > 1 else ''} {', '.join(not_computed)}"
        ops = list(dict.fromkeys([opgen_op] + [plan.spec.op for plan, _ in steps]))
        who = ops[0] if len(ops) == 1 else f"{' and '.join(ops)} compute"
        why = f"{who if len(ops) > 1 else who + ' computes'} only {', '.join(checked) or 'other outputs'}"
        return CaseResult(name, "inexpressible", f"{subject}: {why} (which matched)", subject=subject, why=why,
                          partial="pass", outputs_checked=checked, outputs_not_computed=not_computed, **base)
    return CaseResult(name, "pass", "", outputs_checked=checked, **base)


def _combine(name: str, sets: list[CaseResult | None]) -> CaseResult:
    """A case's result: its worst data set's."""
    known = [r for r in sets if r is not None]
    if not known:
        return CaseResult(name, "error", "the case has no data set", error_kind="case")
    return min(known, key=lambda r: SEVERITY[r.status])
