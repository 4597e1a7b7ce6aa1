"""An admitted registry kernel built and loaded the way a host loads it (entry, build, ctypes shim), for
tests that call kernels directly."""

from __future__ import annotations

import ctypes

from opgen.gate.admission import build_job
from opgen.project import PACKAGE_ROOT
from opgen.registry import Registry
from opgen.spec.model import TARGET_IDS, Spec
from opgen.targets.catalog import build_any
from opgen.verify.ffi import Kernel


def served_kernel(spec: Spec, overload: str, target: str) -> Kernel:
    """The kernel the registry serves for ``spec``'s overload on ``target`` (asserting there is one)."""
    entry, why = Registry(PACKAGE_ROOT / "generated").serve(spec.op, overload, TARGET_IDS[target], spec)
    assert entry is not None, f"{spec.op} {overload} is not verified for {target}: {why}"
    o = spec.overload(overload)
    built = build_any([build_job(spec, o, entry.file("kernel").read_text(), target=target)])[0]
    assert built.ok, built.diagnostics
    return Kernel(ctypes.CDLL(str(built.library)), entry.signature["c_symbol"], o.sig)
