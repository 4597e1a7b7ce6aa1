"""Every spec name meets its library's own signature: what Python code passes reaches the kernel.

A compiled call binds as NumPy or torch binds it (opgen.spec.library_signature), so a spec whose
native parameters the library cannot reach, or whose defaults differ from the library's, would
compile Python code to something other than what it means. These tests hold all shipped specs
to their libraries, and the compiler to the binding.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from opgen.spec.library_signature import EMPTY, NOVALUE, library_signatures, map_params
from opgen.spec.model import check_default, load_all

SPECS = load_all(Path(__file__).resolve().parent.parent / "specs")

# Library defaults a spec leaves out on purpose, each with why: a call must then pass the argument.
NOT_FILLED = {}


def _names(spec):
    yield spec.op, None
    for a in spec.aliases:
        yield a, None
    for m in spec.methods:
        if not m.attribute:
            yield m.name, m.receiver


CASES = [(spec, name, receiver) for spec in SPECS.values() for name, receiver in _names(spec)
         if library_signatures(name)]


def test_the_names_with_a_library_signature_are_most_of_them() -> None:
    """Binding is the rule, not the exception: every numpy/torch/operator name but ``*shape`` methods."""
    names = [name for spec in SPECS.values() for name, _ in _names(spec) if not name.startswith("opgen.")]
    missing = [n for n in names if not library_signatures(n)]
    assert not missing, f"no library signature found for {missing}"
    assert len(CASES) > 150


@pytest.mark.parametrize("spec,name,receiver", CASES, ids=[c[1] for c in CASES])
def test_spec_defaults_are_the_librarys(spec, name, receiver) -> None:
    """A default the spec writes is the library's; one it leaves out the compiler fills from the library,
    so the gate must have drawn it (the value lies in the parameter's domain on every overload)."""
    native = list(dict.fromkeys(p.name for o in spec.overloads for p in o.sig.params))
    bad = []
    for sig in library_signatures(name):
        pm = map_params(sig, native, receiver, spec.python_params)
        for lib_name, native_name in pm.native.items():
            lib = sig.param(lib_name)
            if lib.default in (EMPTY, NOVALUE, None) or type(lib.default) not in (int, float, bool, str) \
                    or (spec.op, native_name) in NOT_FILLED:
                continue
            for o in spec.overloads:
                if native_name not in [p.name for p in o.sig.params]:
                    continue
                p = o.sig.param(native_name)
                if p.has_default and p.default != lib.default:
                    bad.append(f"{o.name}: {native_name} defaults to {p.default!r}, {name}'s {lib_name} to "
                               f"{lib.default!r}")
                if not p.has_default:
                    try:
                        check_default(native_name, lib.default, o.domain.get(native_name))
                    except ValueError as exc:
                        bad.append(f"{o.name}: {name}'s default cannot be filled: {exc}")
    assert not bad, f"{spec.op}: {sorted(set(bad))}"


@pytest.mark.parametrize("spec,name,receiver", CASES, ids=[c[1] for c in CASES])
def test_every_native_parameter_is_reachable_from_python(spec, name, receiver) -> None:
    """A native parameter no library parameter pairs with can only take its spec default."""
    for o in spec.overloads:
        names = [p.name for p in o.sig.params]
        reached = set()
        sigs = [s for s in library_signatures(name) if not any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in s.params)]
        if not sigs:
            continue  # x.reshape(*shape): the compiler takes the arguments in the native order
        for sig in sigs:
            pm = map_params(sig, names, receiver, spec.python_params)
            reached |= set(pm.native.values()) | {n for targets in pm.spread.values() for n in targets}
            if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in sig.params):
                reached |= set(names)  # ndarray.sum(**kwargs) passes keepdims on by name
        unreachable = [p.name for p in o.sig.params if p.name not in reached and not p.has_default]
        assert not unreachable, f"{name} [{o.name}] cannot pass {unreachable}"
