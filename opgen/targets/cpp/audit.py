"""The compiled C++ kernel object against the object policy (``opgen.targets.cpp.policy``):
imports on the allow-list, no load-time code, no writable data of its own, no system calls
or hand-placed machine code, and a failed link's unresolved symbols.

The baseline for what the trusted runtime owns is the generated unit of the same build
(``shim.cpp``): it includes the same runtime headers, so the inline variables and
function-local statics those headers define (the GPU execution layer's scheduler, launch
counter, stack pool, thread state) are defined there too, as mergeable (non-local) symbols
the linker makes one object. What the kernel object defines beyond them is its own.
"""

from __future__ import annotations

import re
from typing import Any

from opgen.build.cpp import BuildResult, inspect_object
from opgen.targets.cpp import policy

METHOD = ("the kernel object's undefined symbols against an allow-list of what computing needs; its writable data "
          "against the generated unit of the same build (the runtime's own); every executable section disassembled "
          "(no system-call instructions, no bytes outside functions)")


def audit_build(result: BuildResult, threads_allowed: bool, *, emulated: bool = False) -> tuple[list[str], dict[str, Any]]:
    """Violations and the evidence record. ``emulated``: a GPU kernel built for the CPU execution
    layer, whose block-shared arrays live in their own section and whose runtime symbols the
    generated unit provides."""
    obj = result.object("kernel.cpp")
    if obj is None:
        return [], {}
    info = inspect_object(obj)
    shim_obj = result.object("shim.cpp")
    shim = inspect_object(shim_obj) if shim_obj is not None else None
    runtime_data = frozenset(name for _, name, _, bind, _ in shim.writable if bind != "LOCAL") if shim else frozenset()
    violations = [str(v) for v in policy.audit_object(info.imports, info.load_time_sections, info.ifuncs,
                                                      threads_allowed=threads_allowed,
                                                      provided=shim.defines if shim and emulated else frozenset())]
    violations += policy.audit_state(info.writable, info.anonymous_writable, baseline=runtime_data,
                                     shared_section=policy.GPU_SHARED_SECTION if emulated else None)
    violations += policy.audit_machine_code(info.code.system_calls, info.code.stray, info.code.data_in_code)
    if not result.ok:
        unresolved = sorted(set(re.findall(r"undefined reference to [`'‘]([^'’`]+)['’]", result.diagnostics)))
        violations += [f"the kernel uses `{name}`, which no library it may link against provides (libstdc++, libm, "
                       f"libc{', libgomp' if threads_allowed else ''}); implement it yourself [rule unresolved-symbol]"
                       for name in unresolved]
    record = {"imports": sorted({shown for _, shown in info.imports} - {"_GLOBAL_OFFSET_TABLE_"}),
              "load_time_sections": [name for name, _ in info.load_time_sections],
              "ifuncs": list(info.ifuncs),
              "method": METHOD,
              "writable_data": sorted(shown for section, _, shown, _, _ in info.writable
                                      if not (emulated and section == policy.GPU_SHARED_SECTION)),
              "hardening": result.record().get("hardening", [])}
    return violations, record
