"""``opgen.pipelines.embed(MODEL, texts)``: a model's native embedding pipeline as a compiler intrinsic.

It is not a registry op: the call stands for a whole pipeline (tokenizer, encoder, pooling,
normalisation), whose glue (opgen/pipelines/native/<architecture>.cpp) and served registry
kernels are linked into the compiled library as sealed units, kernels the function's own
ops also call linked once. The model name must be a constant; its directory and the config
its glue takes are resolved at compile time and baked into the emitted C++, which opens the
pipeline on first call. Only models whose glue reads its own tokenizer qualify: a glue that
takes host-read tokenizer tables (EmbeddingGemma's BPE) has no place to get them from inside
a compiled call.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from opgen.errors import OpgenError
from opgen.pipelines import library as pipeline_library
from opgen.pipelines import models
from opgen.project import Project
from opgen.registry import Entry
from opgen.spec.model import Spec
from opgen.compiler import ir
from opgen.compiler.errors import CompileError
from opgen.targets.catalog import target_for
from opgen.compiler.emit_cpp import Kernel

INTRINSIC = "opgen.pipelines.embed"


def model_for(name: str, where: str) -> models.ModelInfo:
    """The model a constant name denotes, if the intrinsic can serve it."""
    try:
        info = models.resolve(name)
    except OpgenError as exc:
        raise CompileError(f"{INTRINSIC}: {exc.message}", where=where, hint=exc.hint) from None
    if info.tokenizer is not None:
        raise CompileError(
            f"{INTRINSIC}: {info.name}'s pipeline needs tokenizer tables the host reads and hands to it "
            "(opgen_pipeline_set_tokenizer); a compiled function has no host step to do that", where=where,
            hint="use a model whose glue reads its own tokenizer (all-minilm-l6-v2), or serve this one through "
                 "opgen.Client / `opgen pipeline`; compiling it would need the tables baked into the library")
    return info


@dataclass
class LinkedPipeline:
    """One model's pipeline as the library links it."""

    info: models.ModelInfo
    model_dir: Path
    config: list[float]
    entries: dict[str, Entry]  # kernel role -> the served registry entry

    @property
    def glue(self) -> str:
        return f"{self.info.architecture}.cpp"

    def glue_sha256(self) -> str:
        return hashlib.sha256((pipeline_library.NATIVE / self.glue).read_bytes()).hexdigest()


def pipelines_of(fn: ir.Function) -> list[ir.PipelineEmbed]:
    from opgen.compiler.emit_cpp import function_expressions  # the emitter's walk over every expression
    return [e for e in function_expressions(fn) if isinstance(e, ir.PipelineEmbed)]


def link_pipelines(project: Project, fn: ir.Function, target: str) -> list[LinkedPipeline]:
    """Resolve each model's files and kernels now (compile time) and attach them to its calls."""
    calls = pipelines_of(fn)
    if not calls:
        return []
    if target_for(target).compiled_as != "linked":
        raise CompileError(f"{INTRINSIC} links the pipeline's C++ kernels; {fn.name} was compiled for {target}",
                           where=f"{fn.path}:{calls[0].line}", hint="compile with --target cpp")
    linked: dict[str, LinkedPipeline] = {}
    for call in calls:
        if call.model not in linked:
            info = models.resolve(call.model)
            where = f"{fn.path}:{call.line}"
            try:
                model_dir = models.local_copy(info) or info.locate()
                config = [float(v) for v in info.config(model_dir, 32, None)]
                entries = pipeline_library.kernels_for(project, info, target)
            except OpgenError as exc:
                raise CompileError(f"{INTRINSIC}({info.name!r}): {exc.message}", where=where, hint=exc.hint) from None
            linked[call.model] = LinkedPipeline(info, Path(model_dir).resolve(), config, entries)
        call.linked = linked[call.model]
    architectures = {p.info.architecture for p in linked.values()}
    if len(architectures) > 1:
        raise CompileError(f"{fn.name} calls pipelines of {len(architectures)} architectures "
                           f"({', '.join(sorted(architectures))}); each glue defines the same opgen_pipeline_* entry "
                           "points, so one library links one", where=f"{fn.path}:{fn.line}",
                           hint="compile one function per architecture")
    return list(linked.values())


def kernel_of(specs: dict[str, Spec], entry: Entry):
    spec = specs[entry.op]
    return Kernel(spec, spec.overload(entry.overload), entry)
