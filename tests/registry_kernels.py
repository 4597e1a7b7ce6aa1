"""Loading the shipped library's verified kernels into the test process, for the tests that check
what the gate cannot (bit patterns, error kinds, layouts): each entry is built (from the build
cache when it is there) and its C symbol bound with the overload's signature."""

from __future__ import annotations

import ctypes
from collections.abc import Iterable
from functools import lru_cache

from opgen.project import PACKAGE_ROOT
from opgen.registry import Registry
from opgen.service import build_job_for
from opgen.spec.model import Overload, Spec, load_all
from opgen.targets.catalog import build_any
from opgen.verify.ffi import Kernel

ROOT = PACKAGE_ROOT
Loaded = tuple[Spec, Overload, Kernel]


@lru_cache(maxsize=1)
def _specs() -> dict[str, Spec]:
    return load_all(ROOT / "specs")


def verified_kernels(pairs: Iterable[tuple[str, str]], targets: Iterable[str]) -> dict[tuple[str, str, str], Loaded]:
    """(op, overload, target) -> (spec, overload, kernel) for every pair on every target, built
    together; an entry that is missing or not verified fails the calling test, naming it."""
    specs, registry = _specs(), Registry(ROOT / "generated")
    plan = []
    for op, overload in pairs:
        spec = specs[op]
        for target in targets:
            entry = registry.get(op, overload, target)
            assert entry is not None and entry.status(spec)[0] == "verified", f"{op} {overload} {target}"
            plan.append((spec, spec.overload(overload), entry))
    built = build_any([build_job_for(e, s, o) for s, o, e in plan])
    out = {}
    for (spec, o, entry), b in zip(plan, built):
        assert b.ok, b.diagnostics
        out[(spec.op, o.name, entry.target)] = (spec, o, Kernel(ctypes.CDLL(str(b.library)), entry.signature["c_symbol"], o.sig))
    return out


class LazyKernels(dict):
    """verified_kernels one at a time, on first use: for tests that touch a few of many entries."""

    def __missing__(self, key: tuple[str, str, str]) -> Loaded:
        op, overload, target = key
        self[key] = verified_kernels([(op, overload)], [target])[key]
        return self[key]
