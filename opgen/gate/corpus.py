"""The adversarial corpus: known-bad candidates, each with the rejection it must get.

``verification/corpus/manifest.yaml`` lists the entries. Each names a source file
``verification/corpus/<name>.cpp`` or ``<name>.rs`` (a Rust candidate; its header comment
describes the cheat), the op
and overload it claims to implement, and the rejection it must get: the gate stage,
the kind (a policy rule id, or a verdict kind such as value, error, input_modified,
nondeterministic, crash, timeout, forbidden_syscall, output_flood, sanitizer) and text
the message must contain.

Every entry goes through ``admission.run_gate``, the gate an LLM answer meets, and so
does every honest kernel in the registry (``generated/``). The tally counts entries
rejected as expected, rejected for another reason, admitted (a hole in the gate), and
honest kernels rejected (false rejections). Entries marked ``layer: sandbox`` expect a
layer that lives in the sandbox (import and load-time audits, seccomp, limits, sanitizer
run, checks in the runner); until that layer catches them their holes are reported as
pending rather than hidden. ``opgen corpus`` prints all of it.
"""

from __future__ import annotations

import difflib
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from opgen.gate import admission
from opgen.gate.admission import GateResult, GateSettings, build_job, check_policy, run_gate
from opgen.build.cpp import BuildResult
from opgen.errors import OpgenError
from opgen.project import Project
from opgen.references import INT64_MAX, INT64_MIN, call_reference
from opgen.registry import Registry
from opgen.spec.model import Spec, load_all
from opgen.targets.catalog import TARGETS, build_any, target_for, target_of_file
from opgen.spec.source import line_of, load_with_lines
from opgen.verify.harness import Limits
from opgen.verify.scale import Budget

CORPUS_DIR = Path("verification") / "corpus"
MANIFEST = "manifest.yaml"
STAGES = ("policy", "compile", "verify", "admission", "sanitizer", "checked", "scale", "threads", "racecheck", "soak")
# checked: Rust's checked build; scale: large model-shaped cases; threads: the same cases at other thread
# counts; racecheck: the GPU layer's shared-memory race detector; soak: the nightly job's long call sequence

# Small example counts keep the corpus fast; every entry was checked to be caught with
# these counts (the development seed is fixed, so a development-stage rejection is
# reproducible). A tighter CPU limit than the gate's default keeps the infinite loop from
# costing a minute (the heaviest honest run uses about 3 s of CPU). The wall clock is the gate's
# own 300 s: the CPU limit is the one that decides (a loop spins), and on a loaded machine (CI's
# two test workers, each gate's runs side by side) a 60-example run of a big-buffer matmul took
# over 90 s of wall clock on 10 s of CPU; the memory and output limits are the gate's own.
SETTINGS = GateSettings(
    dev_examples=60,
    admission_examples=60,
    admission_runs=2,
    sanitizer_examples=30,
    limits=Limits(cpu_seconds=40, wall_seconds=300.0),
    # A smaller scale budget than admission's (an eighth of the work per case: no 1024^3 product),
    # so a slow but honest kernel stays inside the corpus's CPU limit; every dim still goes long.
    scale_budget=Budget(max_work=1 << 28, max_bytes=24 << 20, max_cases=12),
    threads_examples=15,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Expect(_Strict):
    """The rejection an entry must get."""

    # The stage that must reject it. A list where which run catches it is chance: a cheat
    # that only some random examples expose may be caught by the development run or only by
    # an admission run.
    stage: list[str]
    kind: str | None = None  # policy rule id, or verdict kind; None: any
    message: list[str] = Field(default_factory=list)  # the message must contain one of these

    @field_validator("stage", "message", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @field_validator("stage")
    @classmethod
    def _stage(cls, v: list[str]) -> list[str]:
        for stage in v:
            if stage not in STAGES:
                raise ValueError(f"unknown stage {stage!r}; one of {', '.join(STAGES)}")
        if not v:
            raise ValueError("name at least one stage")
        return v

    @property
    def stages(self) -> str:
        return "|".join(self.stage)

    def describe(self) -> str:
        text = self.stages + (f"/{self.kind}" if self.kind else "")
        if self.message:
            text += " ~ " + " | ".join(repr(m) for m in self.message)
        return text


class CorpusEntry(_Strict):
    name: str = Field(pattern=r"^[a-z0-9_]+$")
    op: str
    overload: str
    cheat: str  # the cheat category, e.g. output-unwritten, cache-by-pointer
    expect: Expect
    # gate: the gate as it stands must reject it. sandbox: the layer that should catch it
    # belongs to the sandbox and is not in force yet; while admitted it is reported as pending.
    layer: Literal["gate", "sandbox"] = "gate"
    note: str = ""
    # The source's table between "// @memorized-begin" and "// @memorized-end" is refilled
    # before each run with the answers the gate's fixed-seed runs will ask for (see memorize).
    memorize: bool = False
    path: Path | None = None

    @property
    def source(self) -> str:
        assert self.path is not None
        return self.path.read_text()

    @property
    def target(self) -> str:
        """The target its file's suffix names: cpp, or rust for a .rs entry, ..."""
        assert self.path is not None
        return target_of_file(self.path).name


def corpus_dir(project: Project) -> Path:
    return project.root / CORPUS_DIR


def load_manifest(directory: Path, specs: dict[str, Spec] | None = None) -> list[CorpusEntry]:
    """Every entry of ``directory/manifest.yaml``, checked strictly (errors name file:line)."""
    path = directory / MANIFEST
    if not path.exists():
        raise OpgenError(f"no corpus manifest at {path}", hint="see verification/README.md")
    data, lines = load_with_lines(path)
    raw = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(raw, list) or set(data) != {"entries"}:
        raise OpgenError("the manifest is a mapping with one key, entries: a list of entries", where=f"{path}:1")
    errors: list[str] = []
    entries: list[CorpusEntry] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        where = f"{path}:{line_of(lines, ('entries', i))}"
        try:
            entry = CorpusEntry.model_validate(item)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ("entries", i) + tuple(err["loc"])
                at = f"{path}:{line_of(lines, loc)}"
                dotted = ".".join(str(p) for p in err["loc"])
                if err["type"] == "extra_forbidden":
                    allowed = [f for f in (Expect if "expect" in err["loc"][:-1] else CorpusEntry).model_fields
                               if f != "path"]
                    close = difflib.get_close_matches(str(err["loc"][-1]), allowed, n=1)
                    errors.append(f"{at}: unknown key {dotted}; " + (f"did you mean {close[0]!r}?" if close
                                                                     else f"allowed: {', '.join(allowed)}"))
                else:
                    errors.append(f"{at}: {dotted}: {err['msg'].removeprefix('Value error, ')}")
            continue
        if entry.name in seen:
            errors.append(f"{where}: entry {entry.name!r} appears twice")
        seen.add(entry.name)
        source = next((p for p in (directory / f"{entry.name}{b.suffix}" for b in TARGETS.values()) if p.exists()),
                      directory / f"{entry.name}.cpp")
        if not source.exists():
            errors.append(f"{where}: {entry.name}: no source file {source.name} next to the manifest")
        elif not source.read_text().lstrip().startswith("//"):
            errors.append(f"{where}: {entry.name}: {source.name} must open with a comment describing the cheat")
        if entry.memorize and source.suffix != ".cpp":
            errors.append(f"{where}: {entry.name}: memorize fills a C++ table; it is for .cpp entries only")
        if entry.memorize and source.exists() and MEMO_BEGIN not in source.read_text():
            errors.append(f"{where}: {entry.name}: memorize needs a table between {MEMO_BEGIN!r} and {MEMO_END!r}")
        if specs is not None:
            if entry.op not in specs:
                errors.append(f"{where}: {entry.name}: no spec for op {entry.op!r}")
            elif entry.overload not in {o.name for o in specs[entry.op].overloads}:
                errors.append(f"{where}: {entry.name}: {entry.op} has no overload {entry.overload!r}")
        entries.append(entry.model_copy(update={"path": source}))
    listed = {e.name for e in entries}
    for stray in sorted(p for b in TARGETS.values() for p in directory.glob(f"*{b.suffix}")):
        if stray.stem not in listed:
            errors.append(f"{path}:1: {stray.name} is not in the manifest; add an entry for it or remove it")
    if errors:
        raise OpgenError("the corpus manifest is not valid:\n" + "\n".join(errors), hint="fix the lines named above")
    return entries


# ---------------------------------------------------------------------------------------
# Running


@dataclass
class Rejection:
    """What the gate said, reduced to what an expectation is matched against."""

    stage: str  # policy | compile | verify | admission | ... | pass
    kinds: list[str]  # policy rule ids, or the failing verdict's kind
    message: str

    @classmethod
    def of(cls, gate: GateResult) -> "Rejection":
        if gate.ok:
            return cls("pass", [], gate.feedback)
        failed = [v for v in gate.verdicts if not v.ok]
        sanitizer = gate.sanitizer  # the ASan+UBSan run's verdict, kept apart
        if gate.stage == "policy":
            kinds = sorted(set(re.findall(r"\[rule ([\w-]+)\]", gate.feedback)))
        elif gate.stage in ("sanitizer", "checked") and sanitizer is not None:
            kinds = [sanitizer.kind]
        elif gate.stage == "scale" and gate.scale is not None:
            kinds = [gate.scale.kind]
        elif gate.stage == "threads" and gate.threads:
            kinds = [v.kind for _, v in gate.threads if not v.ok][:1]
        elif failed:
            kinds = [failed[0].kind]
        else:
            kinds = [gate.stage]
        return cls(gate.stage, kinds, gate.feedback)

    def matches(self, expect: Expect) -> bool:
        if self.stage not in expect.stage:
            return False
        if expect.kind is not None and expect.kind not in self.kinds:
            return False
        return not expect.message or any(m.lower() in self.message.lower() for m in expect.message)

    def summary(self) -> str:
        if self.stage == "pass":
            return "admitted"
        head = next((line for line in self.message.splitlines() if line.strip()), "")
        return f"{self.stage}/{','.join(self.kinds)}: {head.strip()[:160]}"


Outcome = Literal["expected", "other", "admitted"]
# What a progress line says of an entry's outcome.
ENTRY_OUTCOME_TEXT = {"expected": "rejected as expected ({stage})", "other": "rejected for another reason ({stage})",
                      "admitted": "ADMITTED: a hole in the gate"}


@dataclass
class EntryResult:
    entry: CorpusEntry
    got: Rejection
    seconds: float

    @property
    def outcome(self) -> Outcome:
        if self.got.stage == "pass":
            return "admitted"
        return "expected" if self.got.matches(self.entry.expect) else "other"

    @property
    def pending(self) -> bool:
        """A sandbox-layer entry still admitted: its layer is not in force yet."""
        return self.entry.layer == "sandbox" and self.outcome == "admitted"

    def as_dict(self) -> dict[str, Any]:
        e = self.entry
        return {"name": e.name, "op": e.op, "overload": e.overload, "cheat": e.cheat, "layer": e.layer,
                "expected": e.expect.model_dump(), "outcome": self.outcome, "pending": self.pending,
                "got": {"stage": self.got.stage, "kinds": self.got.kinds, "message": self.got.message[:2000]},
                "seconds": round(self.seconds, 2)}


@dataclass
class HonestResult:
    op: str
    overload: str
    target: str
    got: Rejection
    seconds: float
    examples: int = 0
    name: str = ""  # an unusual kernel's file stem (verification/honest/)

    @property
    def ok(self) -> bool:
        return self.got.stage == "pass"

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "overload": self.overload, "target": self.target, "admitted": self.ok,
                "stage": self.got.stage, "message": "" if self.ok else self.got.message[:2000],
                "examples": self.examples, "seconds": round(self.seconds, 2)} | ({"name": self.name} if self.name else {})


@dataclass
class HonestKernel:
    op: str
    overload: str
    target: str
    source: str
    name: str = ""  # an unusual kernel's file stem (verification/honest/); "" for a shipped one


def honest_kernels(project: Project, targets: tuple[str, ...] = ("cpu-cpp", "cpu-rust")) -> list[HonestKernel]:
    """The shipped kernels: every C++ and Rust registry entry's committed source."""
    out = []
    for entry in Registry(project.generated).entries():
        if entry.target not in targets:
            continue
        kernel = entry.file("kernel")
        if kernel.exists():
            out.append(HonestKernel(entry.op, entry.overload, entry.target, kernel.read_text()))
    return out


HONEST_DIR = Path("verification") / "honest"
SUFFIXES = frozenset(t.suffix for t in TARGETS.values())


class HonestEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    op: str
    overload: str


def unusual_honest_kernels(project: Project) -> list[HonestKernel]:
    """The unusual but right kernels of verification/honest/ (compensated and pairwise sums, online
    softmaxes, Welford statistics...), from its manifest: the gate must admit them too."""
    folder = project.root / HONEST_DIR
    manifest = folder / "manifest.yaml"
    if not manifest.exists():
        return []
    try:
        entries = [HonestEntry.model_validate(e) for e in (yaml.safe_load(manifest.read_text()) or {})["entries"]]
    except (ValidationError, KeyError, TypeError) as exc:
        raise OpgenError(f"{manifest}: {exc}", hint="each entry is {name, op, overload}") from None
    out = []
    for e in entries:
        files = [p for p in folder.glob(f"{e.name}.*") if p.suffix in SUFFIXES]
        if len(files) != 1:
            raise OpgenError(f"{manifest}: entry {e.name!r} names {len(files)} kernel files",
                             hint=f"put exactly one {e.name}.cpp/.rs/.cu/.metal beside the manifest")
        out.append(HonestKernel(e.op, e.overload, target_of_file(files[0]).target_id, files[0].read_text(),
                                name=e.name))
    return out


def gate(spec: Spec, overload_name: str, source: str, settings: GateSettings = SETTINGS,
         built: BuildResult | None = None, target: str = "cpp") -> tuple[GateResult, float]:
    """One source through the admission gate (policy first: a source that fails it is never built)."""
    started = time.monotonic()
    overload = spec.overload(overload_name)
    if check_policy(spec, overload, source, target) is not None:
        built = None
    result = run_gate(spec, overload, source, settings, built=built, target=target)
    return result, time.monotonic() - started


def run_entry(entry: CorpusEntry, specs: dict[str, Spec], settings: GateSettings = SETTINGS,
              built: BuildResult | None = None, source: str | None = None) -> EntryResult:
    started = time.monotonic()
    try:
        source = source if source is not None else entry_source(entry, specs, settings)
    except OpgenError as exc:  # the entry could not be prepared: a miss with the reason, not a crash
        return EntryResult(entry, Rejection("corpus", ["memorize"], exc.render()), time.monotonic() - started)
    result, _ = gate(specs[entry.op], entry.overload, source, settings, built, entry.target)
    return EntryResult(entry, Rejection.of(result), time.monotonic() - started)


def entry_source(entry: CorpusEntry, specs: dict[str, Spec], settings: GateSettings = SETTINGS) -> str:
    """The source as gated: for a memorizing entry, with its table filled in for today's seeds."""
    if not entry.memorize:
        return entry.source
    rows = memorized_answers(specs[entry.op], entry.overload, settings)
    return fill_table(entry.source, rows)


# ---------------------------------------------------------------------------------------
# Memorizing entries: "answers hard-coded for the seeds the LLM saw".
#
# The gate's fixed-seed runs (development, sanitizer sample) are reproducible, so a kernel
# can memorize every answer they ask for; only admission, on fresh seeds, exposes it. What
# those runs ask for depends on everything Hypothesis sees (the strategies, the runner's
# warm-up, even constants in opgen's own modules), so the table is recomputed before each
# run by replaying those seeds through the real runner with a kernel that records its
# arguments and answers from the reference.

MEMO_BEGIN, MEMO_END = "// @memorized-begin", "// @memorized-end"

_RECORDER = r"""
import json, sys
from pathlib import Path
from opgen.references import INT64_MAX, INT64_MIN, call_reference
from opgen.verify import runner

job = json.loads(Path(sys.argv[1]).read_text())
spec, overload = runner.prepare(job)
seen = []

class Recorder:
    def __init__(self, lib, symbol, sig):
        self.reference = spec.reference_for(overload)

    def __call__(self, values, out=None):
        seen.append(list(values))
        result = call_reference(self.reference, list(values))
        if isinstance(result, int) and not INT64_MIN <= result <= INT64_MAX:
            raise OverflowError("out of int64")
        return result

runner.Kernel = Recorder
verdict = runner.run(job, Path(sys.argv[2]), spec, overload)
print(json.dumps({"verdict": verdict, "seen": seen}))
"""


def fixed_seed_inputs(spec: Spec, overload_name: str, settings: GateSettings = SETTINGS) -> list[tuple]:
    """Every argument tuple the gate's fixed-seed runs pass to a kernel of this (scalar) overload."""
    import ctypes.util
    import json
    import subprocess
    import sys
    import tempfile


    overload = spec.overload(overload_name)
    runs = [(admission.dev_seed(spec, overload), settings.dev_examples)]
    if settings.sanitizer_examples:
        runs.append((admission.sanitizer_seed(spec, overload), settings.sanitizer_examples))
    seen: set[tuple] = set()
    for seed, count in runs:
        with tempfile.TemporaryDirectory(prefix="opgen-memorize-") as tmp:
            job = {"library": ctypes.util.find_library("c") or "libc.so.6", "symbol": "none",
                   "spec_path": str(Path(spec.path).resolve()), "overload": overload_name, "seed": seed,
                   "max_examples": count}
            (Path(tmp) / "job.json").write_text(json.dumps(job))
            done = subprocess.run([sys.executable, "-c", _RECORDER, str(Path(tmp) / "job.json"), tmp],
                                  capture_output=True, text=True, cwd=tmp, timeout=300)
            try:
                report = json.loads(done.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                raise OpgenError(f"replaying seed {seed} of {spec.op} {overload_name} failed:\n{done.stderr[-2000:]}") from None
            if not report["verdict"].get("ok"):
                raise OpgenError(f"replaying seed {seed} of {spec.op} {overload_name} did not pass: {report['verdict']}")
            seen.update(tuple(args) for args in report["seen"])
    return sorted(seen)


def memorized_answers(spec: Spec, overload_name: str, settings: GateSettings = SETTINGS) -> list[str]:
    """C++ table rows {a, b, answer, overflows} for an (int, int) -> int overload's fixed-seed runs."""

    overload = spec.overload(overload_name)
    if [str(p.type) for p in overload.sig.params] != ["int", "int"] or str(overload.sig.returns) != "int":
        raise OpgenError(f"memorize supports (int, int) -> int overloads only, not {spec.op} {overload_name}")
    reference = spec.reference_for(overload)

    def lit(v: int) -> str:
        return "INT64_MIN" if v == INT64_MIN else f"{v}LL" if v >= 0 else f"-{-v}LL"

    rows = []
    for a, b in fixed_seed_inputs(spec, overload_name, settings):
        try:
            r = call_reference(reference, [a, b])
            overflows = not INT64_MIN <= r <= INT64_MAX
        except (OverflowError, ValueError, ZeroDivisionError, IndexError):
            r, overflows = 0, True
        rows.append(f"    {{{lit(a)}, {lit(b)}, {0 if overflows else lit(r)}, {'true' if overflows else 'false'}}},")
    return rows


def fill_table(source: str, rows: list[str]) -> str:
    start = source.index(MEMO_BEGIN)
    start = source.index("\n", start) + 1
    end = source.index(MEMO_END, start)
    end = source.rindex("\n", 0, end) + 1
    return source[:start] + "\n".join(rows) + "\n" + source[end:]


def run_honest(kernel: HonestKernel, specs: dict[str, Spec], settings: GateSettings = SETTINGS,
               built: BuildResult | None = None) -> HonestResult:
    if kernel.op not in specs:
        return HonestResult(kernel.op, kernel.overload, kernel.target, Rejection("stale", ["stale"], "no spec"), 0.0)
    # The gate's own limits: a false rejection must be one admission would make (the corpus's tight
    # limits are there to stop its loops and bombs quickly, not to time honest kernels).
    honest = replace(settings, limits=Limits())
    result, seconds = gate(specs[kernel.op], kernel.overload, kernel.source, honest, built,
                           target_for(kernel.target).name)
    return HonestResult(kernel.op, kernel.overload, kernel.target, Rejection.of(result), seconds,
                        examples=result.evidence.get("examples", 0), name=kernel.name)


def _prebuild(jobs: list[tuple[Spec, str, str, str]]) -> list[BuildResult | None]:
    """Build every policy-clean source (spec, overload, source, target) in one parallel ninja run
    per language; None for the others."""
    todo, index = [], []
    for i, (spec, overload_name, source, target) in enumerate(jobs):
        o = spec.overload(overload_name)
        if check_policy(spec, o, source, target) is None:
            todo.append(build_job(spec, o, source, target))
            index.append(i)
    out: list[BuildResult | None] = [None] * len(jobs)
    for i, b in zip(index, build_any(todo) if todo else []):
        out[i] = b
    return out


@dataclass
class Report:
    entries: list[EntryResult]
    honest: list[HonestResult]
    settings: GateSettings
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(r.outcome == "expected" for r in self.entries) and all(h.ok for h in self.honest)

    def tally(self) -> dict[str, Any]:
        return tally(self.entries, self.honest, self.settings)

    def as_dict(self) -> dict[str, Any]:
        return {**self.tally(), "results": [r.as_dict() for r in self.entries],
                "honest_results": [h.as_dict() for h in self.honest], "seconds": round(self.seconds, 1)}


def tally(entries: list[EntryResult], honest: list[HonestResult], settings: GateSettings = SETTINGS) -> dict[str, Any]:
    """The reliability figures: corpus size, how each entry fared, false rejections, limits."""
    by_reason: dict[str, int] = {}
    for r in entries:
        if r.got.stage != "pass":
            key = f"{r.got.stage}/{r.got.kinds[0] if len(r.got.kinds) == 1 else '+'.join(r.got.kinds)}"
            by_reason[key] = by_reason.get(key, 0) + 1
    count = lambda outcome: sum(r.outcome == outcome for r in entries)  # noqa: E731
    return {
        "entries": len(entries),
        "rejected_as_expected": count("expected"),
        "rejected_for_another_reason": count("other"),
        "admitted": count("admitted"),
        "pending_sandbox_layer": sum(r.pending for r in entries),
        "by_reason": dict(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))),
        "cheats": len({r.entry.cheat for r in entries}),
        "honest_kernels": len(honest),
        "honest_admitted": sum(h.ok for h in honest),
        "false_rejections": sum(not h.ok for h in honest),
        "settings": {"dev_examples": settings.dev_examples, "admission_examples": settings.admission_examples,
                     "admission_runs": settings.admission_runs,
                     "sanitizer_examples": settings.sanitizer_examples},
        "limits": settings.limits.as_dict(),
        "default_limits": Limits().as_dict(),
    }


def run_corpus(project: Project, settings: GateSettings = SETTINGS, *, names: list[str] | None = None,
               honest: bool = True, jobs: int | None = None,
               progress: Callable[[str, str, float, int, int], None] = lambda label, result, seconds, done, total: None
               ) -> Report:
    """Every corpus entry (or those named) and every honest registry kernel through the gate.

    ``progress(label, result, seconds, done, total)`` is called as each one finishes, with what
    became of it (rejected as expected, for another reason, admitted; an honest kernel admitted or
    falsely rejected).
    """
    started = time.monotonic()
    specs = load_all(project.specs)
    entries = load_manifest(corpus_dir(project), specs)
    if names:
        unknown = set(names) - {e.name for e in entries}
        if unknown:
            raise OpgenError(f"no corpus entry named {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e.name in names]
    kernels = honest_kernels(project) + unusual_honest_kernels(project) if honest else []
    sources: dict[str, str | None] = {}
    for e in entries:
        try:
            sources[e.name] = entry_source(e, specs, settings)
        except OpgenError:
            sources[e.name] = None  # run_entry reports why
    built = _prebuild([(specs[e.op], e.overload, sources[e.name] or e.source, e.target) for e in entries]
                      + [(specs[k.op], k.overload, k.source, target_for(k.target).name) for k in kernels if k.op in specs])
    entry_builds, honest_builds = built[:len(entries)], iter(built[len(entries):])
    kernel_builds = [next(honest_builds) if k.op in specs else None for k in kernels]

    total, done = len(entries) + len(kernels), [0]
    lock = threading.Lock()

    def finished(label: str, result: str, seconds: float) -> None:
        with lock:
            done[0] += 1
            progress(label, result, seconds, done[0], total)

    def one_entry(pair: tuple[CorpusEntry, BuildResult | None]) -> EntryResult:
        r = run_entry(pair[0], specs, settings, pair[1], sources[pair[0].name])
        finished(pair[0].name, ENTRY_OUTCOME_TEXT[r.outcome].format(stage=r.got.stage), r.seconds)
        return r

    def one_kernel(pair: tuple[HonestKernel, BuildResult | None]) -> HonestResult:
        r = run_honest(pair[0], specs, settings, pair[1])
        finished(f"{pair[0].op} {pair[0].overload} ({pair[0].name or 'honest'}, {pair[0].target})",
                 "admitted" if r.ok else f"FALSE REJECTION at {r.got.stage}", r.seconds)
        return r

    # Each gate run is child processes (and compilers, already done): threads suffice here.
    workers = jobs or max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        entry_futures = [pool.submit(one_entry, p) for p in zip(entries, entry_builds)]
        kernel_futures = [pool.submit(one_kernel, p) for p in zip(kernels, kernel_builds)]
        results = [f.result() for f in entry_futures]
        honest_results = [f.result() for f in kernel_futures]
    return Report(results, honest_results, settings, seconds=time.monotonic() - started)


def render_tally(t: dict[str, Any]) -> str:
    """The tally as a few plain lines (for pytest -s and the CLI footer)."""
    lim = t["limits"]
    lines = [
        f"corpus: {t['entries']} entries over {t['cheats']} cheats: {t['rejected_as_expected']} rejected as expected, "
        f"{t['rejected_for_another_reason']} rejected for another reason, {t['admitted']} admitted"
        + (f" ({t['pending_sandbox_layer']} pending the sandbox layer)" if t["pending_sandbox_layer"] else ""),
        "rejections by reason: " + ", ".join(f"{k} {v}" for k, v in t["by_reason"].items()),
        f"honest kernels: {t['honest_kernels']}, admitted {t['honest_admitted']}, false rejections {t['false_rejections']}",
        f"gate settings: {t['settings']['dev_examples']} development + {t['settings']['admission_runs']} x "
        f"{t['settings']['admission_examples']} admission examples"
        + (f" + {t['settings']['sanitizer_examples']} under ASan+UBSan" if t["settings"]["sanitizer_examples"] else ""),
        "sandbox limits in force: " + "; ".join(f"{k} {_human(k, v)}" for k, v in lim.items()),
    ]
    return "\n".join(lines)


def _human(key: str, value: Any) -> str:
    if isinstance(value, int) and key.endswith("_bytes") and value >= 1 << 20:
        return f"{value / (1 << 30):g} GiB" if value >= 1 << 30 else f"{value / (1 << 20):g} MiB"
    return str(value)
