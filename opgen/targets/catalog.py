"""Every target by name, and what works across targets: finding a target by its spec name or
registry id, the target a hand-written file is for, building a mixed list of jobs.

Adding a target: a package under ``opgen/targets/`` whose ``target`` module defines
``TARGET`` (a ``opgen.targets.base.Target``), a line below, its name and registry id in
``opgen.spec.model.TARGET_IDS`` (specs list it), its registry folder in
``opgen.registry.TARGET_DIRS``, and its prompt templates under ``prompts/<name>/``.
"""

from __future__ import annotations

from pathlib import Path

from opgen.build.cpp import BuildJob, BuildResult, build
from opgen.build.rust import RustBuildJob, build_rust
from opgen.errors import OpgenError
from opgen.spec.model import TARGET_IDS
from opgen.targets.base import Target
from opgen.targets.cpp.target import TARGET as CPP
from opgen.targets.cuda.target import TARGET as CUDA
from opgen.targets.metal.target import TARGET as METAL
from opgen.targets.rust.target import TARGET as RUST

TARGETS: dict[str, Target] = {t.name: t for t in (CPP, RUST, CUDA, METAL)}
_BY_ID = {v: k for k, v in TARGET_IDS.items()}


def target_for(name: str) -> Target:
    """The target of a spec name (cpp) or registry id (cpu-cpp)."""
    target = TARGETS.get(_BY_ID.get(name, name))
    if target is None:
        raise OpgenError(f"unknown target {name!r}", hint=f"choose one of {', '.join(TARGETS)}")
    return target


def target_of_file(path: Path) -> Target:
    """The target a hand-written source is for, by its suffix (.rs Rust, .cu CUDA, .metal Metal, anything else C++)."""
    return next((t for t in TARGETS.values() if Path(path).suffix == t.suffix), CPP)


def build_any(jobs: list[BuildJob]) -> list[BuildResult]:
    """Build jobs of any targets, each build system's in one parallel ninja run (Rust jobs with
    rustc, every other job, the GPU execution layer's included, with g++); results in job order."""
    rust = [j for j in jobs if isinstance(j, RustBuildJob)]
    cpp = [j for j in jobs if not isinstance(j, RustBuildJob)]
    done = dict(zip(map(id, cpp), build(cpp) if cpp else []))
    done.update(zip(map(id, rust), build_rust(rust) if rust else []))
    return [done[id(j)] for j in jobs]
