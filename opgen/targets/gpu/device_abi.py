"""The device-kernel contract of one overload: the exact kernel the LLM writes (pure data).

The LLM writes only the device kernel: a function with a fixed name and a fixed
parameter list, in this order:

    inputs   one pointer per tensor input, packed row-major and contiguous over its
             aligned shape (the loop dims broadcast, as in the CPU shims: a broadcast input
             is materialised), element type from the dtype
    out      one pointer to the output, row-major, written in full by the kernel
    sizes    32-bit sizes that describe the packed layouts: for a gufunc rule ``batch`` (the
             product of the loop dims) and every core dim by name; for a pool2d rule
             ``batch`` (the planes), ``in_h``, ``in_w``, ``out_h``, ``out_w``; for an
             elementwise rule ``n``
    scalars  the spec's int, float and bool parameters (int64, float32, bool on the device)
    Metal    the five thread-position arguments (opgen's fixed names and attributes)

opgen generates the host side (``opgen.targets.gpu.host``): checks, shape rule, packing, the
32-bit range checks, buffers, the launch from the kernel's ``@launch`` line, the copy back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from opgen.spec.abi import kernel_name
from opgen.errors import SpecError
from opgen.spec.model import Overload, Spec
from opgen.targets.gpu.dialect import METAL_POSITIONS, Dialect

# Names a size may not take (the kernel's own parameters, the language's words).
RESERVED = frozenset("""batch out kernel device constant thread threadgroup uint int float
long bool void const auto char short double signed unsigned struct union enum static""".split())


@dataclass(frozen=True)
class DeviceParam:
    name: str
    role: str  # input | output | size | scalar | position
    type: str  # the device type as the kernel declares it (without qualifiers or attributes)
    declaration: str  # as written in the kernel's parameter list
    host_type: str  # the C++ type the emulation host passes (the function type the build checks)
    host_value: str  # the C++ expression the generated host passes
    meaning: str  # for the prompt


@dataclass(frozen=True)
class Contract:
    op: str
    overload: str
    dialect: Dialect
    rule_kind: str
    params: tuple[DeviceParam, ...]
    layouts: tuple[tuple[str, str], ...]  # (tensor, packed shape in size names), inputs then out
    # (C++ condition, message): the spec's declared errors the host code raises as ValueError
    # before launching (a device kernel cannot throw).
    checks: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return kernel_name(self.op, self.overload)

    @property
    def sizes(self) -> tuple[DeviceParam, ...]:
        return tuple(p for p in self.params if p.role == "size")

    @property
    def launch_names(self) -> tuple[str, ...]:
        """What a launch line may name: the sizes and the int scalars."""
        return tuple(p.name for p in self.params if p.role == "size" or (p.role == "scalar" and p.type in ("int64_t", "long")))

    def declaration(self) -> str:
        """The kernel's exact first line(s), as the prompt shows it."""
        d = self.dialect
        params = ",\n    ".join(p.declaration for p in self.params)
        return f"{d.kernel_qualifier} {self.name}(\n    {params})"

    def function_type(self) -> str:
        """The C++ function-pointer type the kernel has when compiled for the CPU execution layer."""
        return f"void (*)({', '.join(p.host_type for p in self.params)})"

    def host_declaration(self) -> str:
        return f"void {self.name}({', '.join(p.host_type for p in self.params)});"


# Derived once per overload and dialect: a synthesis asks for the contract at every stage
# (prompt, answer check, policy, build, host code, evidence, registry signature).
_CONTRACTS: dict[tuple[str, str, str, str], Contract] = {}


def contract(spec: Spec, overload: Overload, dialect: Dialect) -> Contract:
    """The device kernel's contract (memoised by the overload's content hash)."""
    key = (spec.op, overload.name, spec.overload_hash(overload), dialect.target)
    found = _CONTRACTS.get(key)
    if found is None:
        found = _CONTRACTS[key] = _derive_contract(spec, overload, dialect)
    return found


def _derive_contract(spec: Spec, overload: Overload, dialect: Dialect) -> Contract:
    sig = overload.sig
    rule = overload.rule
    where = f"{spec.op} [{overload.name}]"
    if rule is None:
        raise SpecError(f"{where} returns {sig.returns}; {dialect.language} kernels write one tensor result",
                        hint=f"leave {dialect.target} out of this spec's targets")
    if rule.kind not in ("gufunc", "pool2d", "elementwise", "same_as"):
        raise SpecError(f"{where} has a {rule.kind} shape rule, which {dialect.language} kernels do not support yet",
                        hint="GPU targets take gufunc, pool2d, elementwise and same_as rules; leave "
                             f"{dialect.target} out of this spec's targets")
    taken = {p.name for p in sig.params} | {"out"}
    metal = dialect.target == "metal"
    params: list[DeviceParam] = []
    buffer = iter(range(64))

    def pointer(name: str, elem: str, role: str) -> DeviceParam:
        const = "const " if role == "input" else ""
        if metal:
            decl = f"device {const}{elem}* {name} [[buffer({next(buffer)})]]"
        else:
            decl = f"{const}{elem}* __restrict__ {name}"
        host_type = f"{const}{_host_elem(elem)}*"
        return DeviceParam(name, role, f"{const}{elem}*", decl, host_type, f"opgen_d_{name}.get()", "")

    def value(name: str, device_type: str, role: str, host_value: str, meaning: str) -> DeviceParam:
        if metal:
            decl = f"constant {device_type}& {name} [[buffer({next(buffer)})]]"
            host_type = f"const {_host_elem(device_type)}&"
        else:
            decl = f"{device_type} {name}"
            host_type = _host_elem(device_type)
        return DeviceParam(name, role, device_type, decl, host_type, host_value, meaning)

    tensors = [p for p in sig.params if p.type.is_tensor]
    out_elem = dialect.element(sig.returns.dtype, f"{where}'s result")
    size_names: dict[str, str] = {}  # core dim or layout word -> the size parameter's name

    def size_name(dim: str) -> str:
        if dim not in size_names:
            name = dim if dim not in taken and dim not in RESERVED and re.fullmatch(r"[a-z_][a-z0-9_]*", dim) else f"{dim}_size"
            size_names[dim] = name
        return size_names[dim]

    layouts: list[tuple[str, str]] = []
    sizes: list[tuple[str, str, str]] = []  # (name, host expression, meaning)
    if rule.kind == "gufunc":
        sizes.append(("batch", "opgen::gpu::product(opgen_loop)", "the product of the loop (batch) dims; 1 when there are none"))
        for core in rule.inputs_core:
            for dim in core:
                if all(size_name(dim) != s[0] for s in sizes):
                    sizes.append((size_name(dim), f"opgen_dim_{dim}", f"core dim {dim} of the shape rule"))
        for p, core in zip(tensors, rule.inputs_core):
            layouts.append((p.name, _shape_text(["batch"] + [size_name(d) for d in core])))
        layouts.append(("out", _shape_text(["batch"] + [size_name(d) for d in rule.output_core])))
    elif rule.kind == "pool2d":
        sizes += [("batch", "opgen::gpu::product(opgen_loop)", "the number of planes: the product of the dims before the last two"),
                  ("in_h", "opgen_dim_in_h", "input height"), ("in_w", "opgen_dim_in_w", "input width"),
                  ("out_h", "opgen_dim_out_h", "output height (the shape rule's, already checked)"),
                  ("out_w", "opgen_dim_out_w", "output width")]
        layouts += [(rule.source, "(batch, in_h, in_w)"), ("out", "(batch, out_h, out_w)")]
    else:
        sizes.append(("n", "opgen_out.numel()", "the number of elements of out (inputs are broadcast to it)"))
        layouts += [(p.name, "(n)") for p in tensors] + [("out", "(n)")]
    for p in tensors:
        params.append(pointer(p.name, dialect.element(p.type.dtype, f"{where}'s {p.name}"), "input"))
    params.append(pointer("out", out_elem, "output"))
    for name, host, meaning in sizes:
        params.append(value(name, dialect.size_type, "size", f"opgen::gpu::to_int({host}, \"{name}\")", meaning))
    for p in sig.params:
        if p.type.is_tensor:
            continue
        if p.type.kind != "scalar":
            raise SpecError(f"{where}'s parameter {p.name} is a {p.type}; {dialect.language} kernels take tensors "
                            "and scalars only", hint=f"leave {dialect.target} out of this spec's targets")
        device_type = dialect.scalar(p.type.name, f"{where}'s {p.name}")
        host = {"int": p.name, "float": f"static_cast<float>({p.name})", "bool": f"({p.name} != 0)"}[p.type.name]
        params.append(value(p.name, device_type, "scalar", host, f"the spec's {p.type.name} parameter {p.name}"))
    checks = _checks(spec, overload, where, dialect)
    if metal:
        for name, attribute, meaning in METAL_POSITIONS:
            params.append(DeviceParam(name, "position", "uint3", f"uint3 {name} [[{attribute}]]", "uint3",
                                      f"opgen::gpu::metal_{name}()", meaning))
    return Contract(spec.op, overload.name, dialect, rule.kind, tuple(params), tuple(layouts), checks)


def _checks(spec: Spec, overload: Overload, where: str, dialect: Dialect) -> tuple[tuple[str, str], ...]:
    """The declared errors as host-side checks. A gufunc domain's ``multiple_of`` says a core dim
    that is not such a multiple is an error (ValueError); the pool2d rule's own checks are in the
    shim. Any other declared error cannot be raised by a device kernel: such a spec is not for GPUs."""
    rule = overload.rule
    values = [r for r in overload.raises if r.error == "ValueError"]
    others = [r for r in overload.raises if r.error != "ValueError"]
    checks: list[tuple[str, str]] = []
    if rule.kind == "gufunc":
        for dom in overload.domain.values():
            for dim, of in (dom.multiple_of or {}).items():
                base = f"opgen_dim_{of}" if isinstance(of, str) else str(of)
                text = values[0].when if values else f"{dim} is not a multiple of {of}"
                checks.append((f"{base} == 0 || opgen_dim_{dim} % {base} != 0", text))
    covered = bool(checks) or rule.kind == "pool2d"
    if others or (values and not covered):
        missing = ", ".join(f"{r.error} when {r.when}" for r in others + ([] if covered else values))
        raise SpecError(f"{where} declares errors a {dialect.language} kernel cannot raise and opgen's host code "
                        f"cannot check: {missing}",
                        hint="GPU host code checks shape-rule errors and domain multiple_of; leave "
                             f"{dialect.target} out of this spec's targets")
    return tuple(checks)


def _host_elem(device_type: str) -> str:
    """The C++ spelling of a device scalar type on the CPU execution layer (same type, same mangling)."""
    return {"long": "long", "uchar": "unsigned char", "uint": "unsigned int", "unsigned char": "unsigned char"}.get(
        device_type, device_type)


def _shape_text(dims: list[str]) -> str:
    return "(" + ", ".join(dims) + ")"


def prompt_facts(spec: Spec, overload: Overload, dialect: Dialect) -> dict:
    """What the cuda/ and metal/ prompt templates need beyond the C++ facts."""
    c = contract(spec, overload, dialect)
    return {
        "declaration": c.declaration(),
        "gpu": {
            "language": dialect.language,
            "fence": dialect.fence,
            "kernel_name": c.name,
            "params": [{"name": p.name, "role": p.role, "type": p.type, "meaning": p.meaning} for p in c.params],
            "layouts": [{"tensor": t, "shape": shape} for t, shape in c.layouts],
            "launch_names": list(c.launch_names),
            "includes": list(dialect.std_includes),
            "barrier": dialect.barrier,
            "shared": dialect.shared,
            "rule_kind": c.rule_kind,
        },
    }
