"""Op resolution: (op, argument types) -> the spec overload and the registry entry serving it.

This is where the registry becomes the compiler's op library: the overload whose
signature takes the arguments (after Python's implicit bool -> int -> float widening
where no exact overload exists) names the kernel, ``Registry.lookup`` serves its
verified entry (the selected variant), and the entry's signature is the node's type.
An op without one is a MissingOp naming the op, the types and the command that would
supply it; with a ``synthesize`` callback the compiler runs that command itself.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Callable

from opgen.registry import Entry, Registry, TARGET_DIRS
from opgen.spec.model import TARGET_IDS, Overload, Spec
from opgen.spec.names import spec_named
from opgen.compiler import ir
from opgen.compiler.errors import MissingOp
from opgen.compiler.types import Type, widens_to

CLI_TARGETS = {v: k for k, v in TARGET_IDS.items()}  # cpu-cpp -> cpp

# Python compares int with float exactly, without converting the int (see types.widens_to).
EXACT_COMPARISONS = frozenset(f"operator.{n}" for n in ("lt", "le", "gt", "ge", "eq", "ne"))

# (spec, overload) -> the admitted entry, or raise (an OpgenError saying why not).
Synthesizer = Callable[[Spec, Overload], Entry]


@dataclass
class Resolution:
    spec: Spec
    overload: Overload
    entry: Entry | None  # None until OpResolver.settle() where the overload is to be synthesized
    params: list[str]  # kernel parameter names, in order
    widened: list[bool]  # per parameter: the argument is converted to the parameter's type


class OpResolver:
    def __init__(self, specs: dict[str, Spec], registry: Registry, target: str = "cpu-cpp",
                 synthesize: Synthesizer | None = None):
        if target not in TARGET_DIRS:
            raise ValueError(f"unknown target {target}")
        self.specs = specs
        self.registry = registry
        self.target = target
        self.synthesize = synthesize
        self.synthesized: list[Entry] = []  # entries this compilation admitted itself
        # Overloads to synthesize once typing has settled (see settle): typing may be retried with
        # another element type for an empty container, and an overload only an abandoned try
        # called must not be synthesized.
        self.pending: dict[tuple[str, str], tuple[Spec, Overload]] = {}

    def resolve(self, op: str, args: list[Type], kwargs: dict[str, Type], where: str,
                result: Type | None = None) -> Resolution:
        """``result``: the overload must return this type (a cast's target dtype, which is no argument of
        its kernel, selects among overloads taking the same arguments)."""
        shown = _call_types(args, kwargs) + (f" -> {result}" if result is not None else "")
        spec = spec_named(self.specs, op)  # an alias (numpy.matmul, torch.softmax) resolves to its op
        if spec is not None:
            op = spec.op
        if spec is None:
            close = difflib.get_close_matches(op, self.specs, n=1)
            hint = (f"did you mean {close[0]}? " if close else "") + (
                f"write a spec specs/{op.replace('.', '/')}.yaml (see specs/operator/add.yaml), "
                f"then run `opgen synthesize {op} --target {CLI_TARGETS[self.target]}`")
            raise MissingOp(f"no spec for {op}, called with ({shown})", op=op, arg_types=_types(args, kwargs),
                            command=None, where=where, hint=hint)
        match = _choose(spec, args, kwargs, int_to_float=op not in EXACT_COMPARISONS, result=result)
        if match is None:
            have = "; ".join(f"{o.name}: {o.sig}" for o in spec.overloads)
            mixed = "Python compares an int and a float exactly; write float(x) if rounding the int is " \
                    "what you mean. " if op in EXACT_COMPARISONS and {str(a) for a in args} == {"int", "float"} else ""
            raise MissingOp(
                f"{op} has no overload taking ({shown})", op=op, arg_types=_types(args, kwargs), command=None,
                where=where, hint=f"{mixed}its overloads: {have}. Add one to {_spec_path(spec)}, then run "
                                  f"`opgen synthesize {op} --overload NAME --target {CLI_TARGETS[self.target]}`")
        overload, params, widened = match
        param_types = [str(p.type) for p in overload.sig.params]
        command = f"opgen synthesize {op} --overload {overload.name} --target {CLI_TARGETS[self.target]}"
        if CLI_TARGETS[self.target] not in spec.targets:
            raise MissingOp(f"{op} [{overload.name}] does not list target {CLI_TARGETS[self.target]}",
                            op=op, arg_types=param_types, command=None, where=where,
                            hint=f"add {CLI_TARGETS[self.target]} to targets in {_spec_path(spec)}, then run `{command}`")
        try:
            entry = self.registry.lookup(op, param_types, self.specs, self.target, overload=overload.name)
        except LookupError as exc:
            if self.synthesize is None:
                raise MissingOp(f"no verified {self.target} kernel for {op}({', '.join(param_types)}) "
                                f"[overload {overload.name}]: {exc}", op=op, arg_types=param_types, command=command,
                                where=where, hint=f"run `{command}` (or compile with --synthesize-missing)") from None
            self.pending[(op, overload.name)] = (spec, overload)
            entry = None  # filled by settle()
        return Resolution(spec, overload, entry, params, widened)

    def settle(self, expressions) -> None:
        """Synthesizes the missing overloads the typed function calls (``expressions``: all of its
        and its helpers'), once each, and gives their calls the admitted entries."""
        admitted: dict[tuple[str, str], Entry] = {}
        for e in expressions:
            if not isinstance(e, ir.Op) or e.spec is None or e.entry is not None:
                continue
            key = (e.spec.op, e.overload.name)
            if key not in admitted:
                spec, overload = self.pending[key]
                admitted[key] = self.synthesize(spec, overload)
                self.synthesized.append(admitted[key])
            e.entry = admitted[key]


def _choose(spec: Spec, args: list[Type], kwargs: dict[str, Type], *, int_to_float: bool = True,
            result: Type | None = None) -> tuple[Overload, list[str], list[bool]] | None:
    """The overload taking these arguments (and returning ``result`` where given): an exact match, else
    the one needing fewest widenings."""
    best = None
    for o in spec.overloads:
        if result is not None and o.sig.returns != result:
            continue
        names = [p.name for p in o.sig.params]
        if len(args) > len(names) or any(k not in names[len(args):] for k in kwargs):
            continue
        given = dict(zip(names, args)) | kwargs
        if any(p.name not in given and not p.has_default for p in o.sig.params):
            continue
        widened = []
        for p in o.sig.params:
            if p.name not in given:  # omitted: the default, of the parameter's own type
                widened.append(False)
            elif given[p.name] == p.type:
                widened.append(False)
            elif widens_to(given[p.name], p.type, int_to_float=int_to_float):
                widened.append(True)
            else:
                break
        else:
            if best is None or sum(widened) < sum(best[2]):
                best = (o, names, widened)
    return best


def _types(args: list[Type], kwargs: dict[str, Type]) -> list[str]:
    return [str(a) for a in args] + [f"{k}={v}" for k, v in kwargs.items()]


def _call_types(args: list[Type], kwargs: dict[str, Type]) -> str:
    return ", ".join(_types(args, kwargs))


def _spec_path(spec: Spec) -> str:
    if spec.path is None:
        return f"the spec of {spec.op}"
    parts = spec.path.parts
    return "/".join(parts[parts.index("specs"):]) if "specs" in parts else str(spec.path)
