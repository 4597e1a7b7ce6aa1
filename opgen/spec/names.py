"""Every name an op is reachable by: its own (``operator.matmul``), its aliases
(``numpy.matmul``, ``torch.matmul``) and its methods (``ndarray.sum``, ``str.lower``).

The registry's lookup, the CLI and the compiler go through here, so any common spelling of an
op finds its one spec. ``load_all`` has already refused a name that two specs claim.
"""

from __future__ import annotations

import difflib

from opgen.errors import OpgenError
from opgen.spec.model import Method, Spec


def spec_named(specs: dict[str, Spec], name: str) -> Spec | None:
    """The spec ``name`` is the op, an alias or a method of, or None."""
    if name in specs:
        return specs[name]
    return next((s for s in specs.values() if name in s.aliases or any(m.name == name for m in s.methods)), None)


def method_named(specs: dict[str, Spec], name: str) -> tuple[Spec, Method] | None:
    """The spec and method entry of a method or attribute name (``ndarray.sum``), or None."""
    return next(((s, m) for s in specs.values() for m in s.methods if m.name == name), None)


def all_names(specs: dict[str, Spec]) -> dict[str, str]:
    """Every name (op, alias, method) -> the op it names."""
    return {n: s.op for s in specs.values() for n in [s.op, *s.aliases, *(m.name for m in s.methods)]}


def find_spec(specs: dict[str, Spec], name: str) -> Spec:
    """``spec_named``, or an error naming the closest known names."""
    spec = spec_named(specs, name)
    if spec is None:
        names = all_names(specs)
        close = difflib.get_close_matches(name, names, n=3)
        raise OpgenError(f"no spec for {name}",
                         hint=(f"did you mean {', '.join(f'{c} ({names[c]})' if names[c] != c else c for c in close)}? "
                               if close else "") + f"known ops: {', '.join(sorted(specs))}")
    return spec
