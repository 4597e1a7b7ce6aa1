"""Shape rules: how a kernel's output shape follows from its inputs.

The caller (harness, emitter, pipeline) allocates every output tensor from this
rule before calling the kernel, as torchgen's structured "out" kernels do. Rules are
data, so the emitter can evaluate them in C++ exactly as the harness does here.

    gufunc      "(m,k),(k,n)->(m,n)"  core dims per tensor input; leading loop dims broadcast
    elementwise                       all tensor inputs broadcast together (NumPy rules)
    reduce      {reduce: a, axis: axis}   a's shape with that axis removed
    same_as     {same_as: x}              the shape of x
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

_GUFUNC = re.compile(r"\s*(\([^()]*\)(?:\s*,\s*\([^()]*\))*)\s*->\s*(\([^()]*\))\s*\Z")


class ShapeRuleError(ValueError):
    pass


@dataclass(frozen=True)
class ShapeRule:
    kind: str  # gufunc | elementwise | reduce | same_as
    gufunc: str | None = None
    inputs_core: tuple[tuple[str, ...], ...] = ()
    output_core: tuple[str, ...] = ()
    source: str | None = None  # tensor param for reduce / same_as
    axis: str | None = None  # int param naming the reduced axis

    def describe(self) -> str:
        if self.kind == "gufunc":
            return f"gufunc {self.gufunc} (loop dims broadcast, NumPy rules)"
        if self.kind == "elementwise":
            return "elementwise: tensor inputs broadcast together (NumPy rules)"
        if self.kind == "reduce":
            return f"reduce: shape of {self.source} with axis {self.axis} removed (negative axes count from the end)"
        return f"same shape as {self.source}"

    def output_shape(self, args: dict[str, Any], tensor_names: list[str]) -> tuple[int, ...]:
        """Output shape for concrete arguments; raises ValueError on incompatible shapes."""
        shapes = [tuple(np.shape(args[n])) for n in tensor_names]
        if self.kind == "elementwise":
            return tuple(np.broadcast_shapes(*shapes))
        if self.kind == "same_as":
            return tuple(np.shape(args[self.source]))
        if self.kind == "reduce":
            shape = list(np.shape(args[self.source]))
            ax = normalize_axis(int(args[self.axis]), len(shape))
            del shape[ax]
            return tuple(shape)
        sizes: dict[str, int] = {}
        loops = []
        for shape, core in zip(shapes, self.inputs_core):
            if len(shape) < len(core):
                raise ValueError(f"input of shape {shape} has fewer dims than core {core}")
            split = len(shape) - len(core)
            loops.append(shape[:split])
            for name, size in zip(core, shape[split:]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"core dim {name} is {sizes[name]} in one input and {size} in another")
        return tuple(np.broadcast_shapes(*loops)) + tuple(sizes[n] for n in self.output_core)


def normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for {ndim} dims")
    return axis % ndim


def parse_shape_rule(raw: Any, tensor_params: list[str], int_params: list[str]) -> ShapeRule:
    """Parse the spec's ``shape:`` value; errors say which form is expected."""
    if raw == "elementwise":
        return ShapeRule("elementwise")
    if isinstance(raw, str):
        m = _GUFUNC.match(raw)
        if not m:
            raise ShapeRuleError(
                f"shape {raw!r} is neither 'elementwise' nor a gufunc signature like '(m,k),(k,n)->(m,n)'"
            )
        ins = tuple(_core(c) for c in re.findall(r"\([^()]*\)", m.group(1)))
        out = _core(m.group(2))
        if len(ins) != len(tensor_params):
            raise ShapeRuleError(
                f"gufunc {raw!r} names {len(ins)} inputs but the signature has {len(tensor_params)} tensor parameters"
            )
        known = {d for c in ins for d in c}
        if missing := [d for d in out if d not in known]:
            raise ShapeRuleError(f"output dims {missing} of {raw!r} appear in no input")
        return ShapeRule("gufunc", gufunc=raw.strip(), inputs_core=ins, output_core=out)
    if isinstance(raw, dict) and set(raw) == {"same_as"}:
        _need(raw["same_as"], tensor_params, "same_as", "tensor")
        return ShapeRule("same_as", source=raw["same_as"])
    if isinstance(raw, dict) and set(raw) == {"reduce", "axis"}:
        _need(raw["reduce"], tensor_params, "reduce", "tensor")
        _need(raw["axis"], int_params, "axis", "int")
        return ShapeRule("reduce", source=raw["reduce"], axis=raw["axis"])
    raise ShapeRuleError(
        "shape must be 'elementwise', a gufunc string like '(m,k),(k,n)->(m,n)', "
        "{same_as: <tensor param>} or {reduce: <tensor param>, axis: <int param>}"
    )


def _core(text: str) -> tuple[str, ...]:
    inner = text.strip()[1:-1]
    dims = tuple(d.strip() for d in inner.split(",") if d.strip())
    for d in dims:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d):
            raise ShapeRuleError(f"core dimension {d!r} must be a name (fixed sizes are not supported)")
    return dims


def _need(name: Any, allowed: list[str], key: str, kind: str) -> None:
    if name not in allowed:
        raise ShapeRuleError(f"{key}: {name!r} is not a {kind} parameter of the signature (have: {allowed})")
