"""``opgen compile FILE.py:FUNCTION -o OUT``: trace, propagate types, emit, build, write the manifest.

OUT is a directory; it receives ``lib<function>.so``, ``<function>.cpp`` (the emitted
source, for review), ``<function>.manifest.json`` (what the hosts load) and, where this Python
has its headers, the native CPython entry ``_opgen_entry_<function>.<abi>.so`` (python_entry.py).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from opgen.gate.admission import GateSettings
from opgen.build.cpp import BuildResult, build
from opgen.build.rust import build_rust
from opgen.errors import OpgenError
from opgen.llm.providers import Provider
from opgen.project import Project
from opgen.registry import Entry, Registry
from opgen.spec.model import Overload, Spec, load_all
from opgen.synthesize import synthesize_overload
from opgen.compiler import link, python_entry
from opgen.compiler.emit_cpp import Kernel, function_expressions, kernels_of, render
from opgen.compiler.errors import CompileError
from opgen.compiler.pipeline_intrinsic import link_pipelines
from opgen.compiler.propagate import propagate
from opgen.compiler.resolve import CLI_TARGETS, OpResolver, Synthesizer
from opgen.compiler.tracer import trace_file


@dataclass
class Compiled:
    function: str
    out_dir: Path
    library: Path
    manifest_path: Path
    cpp_path: Path
    manifest: dict[str, Any]
    kernels: list[Kernel]
    build: BuildResult


def parse_target_spec(text: str) -> tuple[Path, str]:
    """``path/to/file.py:function`` -> (path, function)."""
    path, sep, function = text.rpartition(":")
    if not sep or not path or not function.isidentifier():
        raise OpgenError(f"{text!r} does not name a function", hint="write FILE.py:FUNCTION, e.g. examples/compile/prompts.py:prefix_queries")
    return Path(path), function


@dataclass
class _Prepared:
    source: Path
    out_dir: Path
    fn: Any
    cpp: str
    kernels: list[Kernel]
    job: Any
    resolver: OpResolver
    rust_jobs: list[Any]
    pipelines: list[dict[str, Any]]  # manifest records of the linked pipelines
    entry_job: Any  # the native CPython entry's build, or None where it cannot be built


def compile_function(project: Project, source: Path, function: str, out_dir: Path, *, target: str = "cpu-cpp",
                     synthesize: Synthesizer | None = None, dtypes: dict[str, str] | None = None) -> Compiled:
    """``dtypes``: parameter name -> dtype, for array parameters annotated without one (``--dtype``)."""
    return compile_many(project, [(source, function, out_dir)], target=target, synthesize=synthesize,
                        dtypes={function: dtypes} if dtypes else None)[0]


def compile_many(project: Project, functions: list[tuple[Path, str, Path]], *, target: str = "cpu-cpp",
                 synthesize: Synthesizer | None = None,
                 dtypes: dict[str, dict[str, str]] | None = None) -> list[Compiled]:
    """Compile several functions; their libraries build side by side in one ninja run. ``dtypes``: function
    name -> its ``--dtype`` overrides."""
    specs = load_all(project.specs)
    registry = Registry(project.generated)
    prepared = [_prepare(project, specs, registry, source, function, out_dir, target, synthesize,
                         (dtypes or {}).get(function))
                for source, function, out_dir in functions]
    entry_jobs = [p.entry_job for p in prepared if p.entry_job is not None]
    results = build([p.job for p in prepared] + entry_jobs)
    entry_results = iter(results[len(prepared):])
    entries = [next(entry_results) if p.entry_job is not None else None for p in prepared]
    rust = iter(build_rust([j for p in prepared for j in p.rust_jobs]))
    kernel_libraries = [[next(rust) for _ in p.rust_jobs] for p in prepared]
    return [_finish(project, p, r, libs, target, e) for p, r, libs, e in zip(prepared, results, kernel_libraries, entries)]


def _prepare(project: Project, specs: dict[str, Spec], registry: Registry, source: Path, function: str,
             out_dir: Path, target: str, synthesize: Synthesizer | None,
             dtypes: dict[str, str] | None = None) -> _Prepared:
    fn, _scope = trace_file(source, function, dtypes)
    resolver = OpResolver(specs, registry, target, synthesize)
    fn = propagate(fn, resolver)
    resolver.settle(function_expressions(fn))
    pipelines = link_pipelines(project, fn, target)
    cpp = render(fn, _label(source, project.root))
    kernels = kernels_of(fn)
    extra = link.pipeline_kernels(pipelines, kernels, specs)
    records = [link.pipeline_record(p, kernels, specs, project.root) for p in pipelines]
    entry_job = None if python_entry.headers_missing() else python_entry.build_job(fn)
    return _Prepared(source, out_dir, fn, cpp, kernels, link.build_job(fn, cpp, kernels, pipelines, extra), resolver,
                     link.rust_jobs(kernels), records, entry_job)


def _finish(project: Project, p: _Prepared, result: BuildResult, kernel_libraries: list[BuildResult],
            target: str, entry: BuildResult | None) -> Compiled:
    function = p.fn.name
    p.out_dir.mkdir(parents=True, exist_ok=True)
    cpp_path = p.out_dir / f"{function}.cpp"
    cpp_path.write_text(p.cpp)
    if not result.ok:
        raise CompileError(f"the C++ emitted for {function} did not build:\n{result.diagnostics}",
                           hint=f"this is a bug in opgen compile; the emitted file is {cpp_path}")
    separate = [k for k in p.kernels if k.separate_library]
    for k, built in zip(separate, kernel_libraries):
        if not built.ok:
            raise CompileError(f"the admitted {k.entry.target} kernel of {k.spec.op} [{k.overload.name}] did not "
                               f"build here:\n{built.diagnostics}", hint=f"run `opgen verify {k.spec.op}`")
        _install(built.library, p.out_dir / "kernels" / k.separate_library)
    library = p.out_dir / f"lib{function}.so"
    _install(result.library, library)
    synthesized = {(e.op, e.overload) for e in p.resolver.synthesized}
    records = [link.kernel_record(k, project.root, (k.entry.op, k.entry.overload) in synthesized) for k in p.kernels]
    data = link.manifest(p.fn, p.source, records, library.name, cpp_path.name, target,
                         {**result.record(), "cached": result.cached}, p.pipelines)
    data["python_entry"] = _install_entry(p, entry)
    manifest_path = p.out_dir / f"{function}.manifest.json"
    manifest_path.write_text(json.dumps(data, indent=2) + "\n")
    return Compiled(function, p.out_dir, library, manifest_path, cpp_path, data, p.kernels, result)


def synthesizer(project: Project, provider: Provider, target: str, *, max_attempts: int = 3,
                settings: GateSettings = GateSettings(), report: Callable[[str], None] = lambda s: None) -> Synthesizer:
    """For --synthesize-missing: admit a missing overload through the repair loop, or fail saying why."""

    def synthesize(spec: Spec, overload: Overload) -> Entry:
        report(f"synthesizing {spec.op} [{overload.name}] for {target} with {provider.name}")
        outcome = synthesize_overload(project, spec, overload, provider, target=CLI_TARGETS[target],
                                      max_attempts=max_attempts, settings=settings, report=report)
        if not outcome.admitted:
            raise CompileError(f"could not synthesize {spec.op} [{overload.name}]: {outcome.error}",
                               hint=f"read the transcript {outcome.transcript_path}")
        return outcome.entry

    return synthesize


def _label(source: Path, root: Path) -> str:
    try:
        return source.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return source.name


def _install_entry(p: _Prepared, entry: BuildResult | None) -> dict[str, Any]:
    """The native CPython entry put beside the library, and its manifest record: where it is, or
    why there is none (the hosts then call through ctypes)."""
    if entry is None:
        return {"absent": python_entry.headers_missing()}
    if not entry.ok:
        raise CompileError(f"the native Python entry of {p.fn.name} did not build:\n{entry.diagnostics}",
                           hint="this is a bug in opgen compile (opgen/compiler/python_entry.py)")
    record = python_entry.record(p.fn)
    _install(entry.library, p.out_dir / record["file"])
    return {**record, "build": {**entry.record(), "cached": entry.cached}}


def _install(built: Path, destination: Path) -> None:
    """Copy a built library into place in one step: a process that has the old one loaded keeps its mapping."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    tmp = destination.with_name(destination.name + ".tmp")
    shutil.copyfile(built, tmp)
    tmp.replace(destination)
