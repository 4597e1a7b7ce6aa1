"""One shared library from the emitted C++ and the registry kernels it calls, plus its manifest.

Every C++ kernel goes in with its generated shim as one sealed unit (opgen.build.cpp: partially
linked, hidden symbols made local), so helpers two LLM-written kernels both define can
never be merged; the emitted code declares the shims hidden, so the library exports only
its entry point and opgen_free. A Rust kernel carries its own standard library, so it stays
the cdylib its admission built (opgen.build.rust, a cache hit) and ships in kernels/ beside
the library, which loads it on first use. Builds are ninja's, cached by content.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from opgen.build.cpp import BuildJob
from opgen.build.rust import RustBuildJob, rust_job
from opgen.errors import OpgenError
from opgen.registry import sha256_file
from opgen.pipelines import library as pipeline_library
from opgen.compiler.emit_cpp import ERROR_KINDS, Kernel, usage_symbol
from opgen.compiler.pipeline_intrinsic import LinkedPipeline, kernel_of
from opgen.compiler.entry_abi import c_declaration, entry_params, entry_symbol
from opgen.compiler.errors import CompileError
from opgen.targets.catalog import target_for
from opgen.compiler import ir

RUNTIME_HEADER = Path(__file__).parent / "runtime" / "opgen_compiled.hpp"
PIPELINE_RUNTIME_HEADER = Path(__file__).parent / "runtime" / "opgen_compiled_pipeline.hpp"
MANIFEST_FORMAT = "opgen-compiled/1"


def build_job(fn: ir.Function, cpp: str, kernels: list[Kernel], pipelines: list[LinkedPipeline] = (),
              pipeline_kernels: list[Kernel] = ()) -> BuildJob:
    sources = {"compiled.cpp": cpp, RUNTIME_HEADER.name: RUNTIME_HEADER.read_text()}
    sealed = []
    if pipelines:
        sources[PIPELINE_RUNTIME_HEADER.name] = PIPELINE_RUNTIME_HEADER.read_text()
        sealed += _pipeline_glue(sources, pipelines)
        kernels = [*kernels, *pipeline_kernels]
    for k in kernels:
        if k.separate_library:
            continue  # built on its own (rust_jobs) and loaded at run time
        if target_for(k.entry.target).compiled_as != "linked":
            raise CompileError(f"{k.spec.op} [{k.overload.name}] is a {k.entry.target} kernel; opgen compile links "
                               "cpu-cpp and cpu-rust kernels", hint="compile with --target cpp or --target rust")
        unit = []
        for role in ("kernel", "shim"):
            name = f"{k.adapter}.{role}.cpp"
            sources[name] = _admitted_text(k, role)
            unit.append(name)
        sealed.append(tuple(unit))
    threads = bool(pipelines) or any(k.spec.threads_allowed(k.overload) for k in kernels)
    return BuildJob(name=f"compiled-{fn.name}", sources=sources, threads=threads, sealed=tuple(sealed), resident=True,
                    precompiled=(RUNTIME_HEADER.name,))


def _pipeline_glue(sources: dict[str, str], pipelines: list[LinkedPipeline]) -> list[tuple[str, ...]]:
    """Each architecture's glue once (sealed, as opgen.pipelines.library links it), with the
    header naming the kernels it calls by role; the kernels themselves go in with the function's."""
    by_glue = {p.glue: p for p in pipelines}
    if len(by_glue) != 1:
        raise CompileError("one compiled library links one pipeline glue", hint="compile one function per architecture")
    (p,) = by_glue.values()
    # Embedded: the glue leaves out what only a pipeline library's host calls (the stage clocks).
    sources["glue.cpp"] = "#define OPGEN_PIPELINE_EMBEDDED 1\n" + (pipeline_library.NATIVE / p.glue).read_text()
    sources["opgen_pipeline_kernels.h"] = pipeline_library.kernel_header(p.entries)
    for header in pipeline_library.GLUE_HEADERS:
        sources[header] = (pipeline_library.NATIVE / header).read_text()
    return [("glue.cpp",)]


def pipeline_kernels(pipelines: list[LinkedPipeline], own: list[Kernel], specs) -> list[Kernel]:
    """The pipelines' kernels the function's own ops do not already link (one copy of each:
    both sides look up the same served entry, and a second copy would define its symbol twice)."""
    linked = {k.symbol: k for k in own}
    extra: dict[str, Kernel] = {}
    for p in pipelines:
        for entry in p.entries.values():
            symbol = entry.signature["c_symbol"]
            have = linked.get(symbol) or extra.get(symbol)
            if have is not None:
                if have.entry.path != entry.path:
                    raise CompileError(f"{entry.op} [{entry.overload}] resolves to two entries ({have.entry.path}, "
                                       f"{entry.path}) that would share the symbol {symbol}",
                                       hint="the registry changed during compilation; compile again")
                continue
            extra[symbol] = kernel_of(specs, entry)
    return list(extra.values())


def pipeline_record(p: LinkedPipeline, own: list[Kernel], specs, root: Path) -> dict[str, Any]:
    own_symbols = {k.symbol for k in own}
    kernels = []
    for role, entry in p.entries.items():
        record = kernel_record(kernel_of(specs, entry), root, False)
        kernels.append({"role": role, **record, "shared_with_function": entry.signature["c_symbol"] in own_symbols})
    return {"model": p.info.name, "architecture": p.info.architecture, "model_dir": str(p.model_dir),
            "config": p.config, "glue": f"opgen/pipelines/native/{p.glue}", "glue_sha256": p.glue_sha256(),
            "kernels": kernels}


def rust_jobs(kernels: list[Kernel]) -> list[RustBuildJob]:
    """Each Rust kernel as the cdylib its admission built (same sources and flags: a cache hit)."""
    return [rust_job(f"{k.spec.op}__{k.overload.name}", _admitted_text(k, "kernel"), _admitted_text(k, "shim"),
                     threads=k.spec.threads_allowed(k.overload))
            for k in kernels if k.separate_library]


def _admitted_text(k: Kernel, role: str) -> str:
    try:
        return k.entry.admitted_text(role)
    except OpgenError as exc:
        raise CompileError(exc.message, hint=exc.hint) from None


def entry_hash(k: Kernel) -> str:
    """What identifies the linked code of one kernel: its files and the spec it was verified against."""
    e = k.entry
    blob = json.dumps([e.op, e.overload, e.target, e.variant, e.data["files"]["kernel"]["sha256"],
                       e.data["files"]["shim"]["sha256"], e.data["spec"]["hash"]])
    return hashlib.sha256(blob.encode()).hexdigest()


def kernel_record(k: Kernel, root: Path, synthesized: bool) -> dict[str, Any]:
    e = k.entry
    pv = e.data.get("provenance", {})
    return {
        "op": e.op, "overload": e.overload, "target": e.target, "variant": e.variant,
        "signature": e.signature["python"], "c_symbol": e.signature["c_symbol"],
        "entry": _relative(e.path, root), "entry_hash": entry_hash(k),
        "library": f"kernels/{k.separate_library}" if k.separate_library else None,
        "kernel_sha256": e.data["files"]["kernel"]["sha256"], "shim_sha256": e.data["files"]["shim"]["sha256"],
        "spec_hash": e.data["spec"]["hash"], "admitted_at": e.data.get("admitted_at"),
        "provenance": {"provider": pv.get("provider"), "model": pv.get("model"), "answered_by": pv.get("answered_by")},
        "synthesized_by_this_compile": synthesized,
    }


def manifest(fn: ir.Function, source: Path, kernels: list[dict[str, Any]], library: str, cpp_file: str,
             target: str, build_record: dict[str, Any], pipelines: list[dict[str, Any]] = ()) -> dict[str, Any]:
    params = []
    for p in fn.params:
        record: dict[str, Any] = {"name": p.name, "type": str(p.type)}
        if p.flavor:
            record["flavor"] = p.flavor
        if p.has_default:
            record["default"] = p.default
        if p.dtype_assumed:
            record["dtype_assumed"] = True
        if p.optional:  # the caller may pass None (the entry takes a presence flag first: entry_abi)
            record["optional"] = True
        params.append(record)
    returns: dict[str, Any] = {"type": str(fn.returns)}
    if fn.return_flavor:
        returns["flavor"] = fn.return_flavor
    extra: dict[str, Any] = {}
    if pipelines:
        # Linked pipelines, and the export reporting how many tokens they processed per call.
        extra = {"pipelines": list(pipelines), "usage_symbol": usage_symbol(fn.name)}
    return {
        "format": MANIFEST_FORMAT,
        "function": fn.name,
        "symbol": entry_symbol(fn.name),
        "c_declaration": c_declaration(fn.name, entry_params(fn), fn.returns),
        "params": params,
        "returns": returns,
        "library": library,
        "cpp": cpp_file,
        "source": {"path": str(source), "line": fn.line, "sha256": sha256_file(source)},
        "target": target,
        "error_kinds": {str(k): v for k, v in ERROR_KINDS.items()},
        "kernels": kernels,
        "build": build_record,
        **extra,
    }


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
