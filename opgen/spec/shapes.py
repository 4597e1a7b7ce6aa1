"""Shape rules: how a kernel's output shape follows from its inputs.

The caller (harness, emitter, pipeline) allocates every output tensor from this
rule before calling the kernel, as torchgen's structured "out" kernels do. Rules are
data, so the emitter can evaluate them in C++ exactly as the harness does here.

    gufunc      "(m,k),(k,n)->(m,n)"  core dims per tensor input; leading loop dims broadcast
    elementwise                       all tensor inputs broadcast together (NumPy rules)
    reduce      {reduce: a, axis: axis}   a's shape with that axis removed
    same_as     {same_as: x}              the shape of x
    pool2d      {pool2d: x, kernel: [kh, kw], stride: [sh, sw], padding: [ph, pw]}
                x's shape (*, H, W) with the last two dims pooled: (*, Ho, Wo),
                Ho = (H + 2*ph - kh) // sh + 1 (torch's pooling with ceil_mode=False)
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
    kind: str  # gufunc | elementwise | reduce | same_as | pool2d
    gufunc: str | None = None
    inputs_core: tuple[tuple[str, ...], ...] = ()
    output_core: tuple[str, ...] = ()
    source: str | None = None  # tensor param for reduce / same_as
    axis: str | None = None  # int param naming the reduced axis
    pool: tuple[str, ...] = ()  # pool2d: the int params kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w

    def describe(self) -> str:
        if self.kind == "gufunc":
            return f"gufunc {self.gufunc} (loop dims broadcast, NumPy rules)"
        if self.kind == "elementwise":
            return "elementwise: tensor inputs broadcast together (NumPy rules)"
        if self.kind == "reduce":
            return f"reduce: shape of {self.source} with axis {self.axis} removed (negative axes count from the end)"
        if self.kind == "pool2d":
            kh, kw, sh, sw, ph, pw = self.pool
            return (f"pool2d: {self.source} is (*, H, W) and out (*, Ho, Wo) with Ho = (H + 2*{ph} - {kh}) // {sh} + 1 "
                    f"and Wo = (W + 2*{pw} - {kw}) // {sw} + 1; opgen's shim has already raised ValueError for "
                    f"parameters the op rejects ({kh}, {kw}, {sh}, {sw} < 1, {ph}, {pw} < 0, a padding over half "
                    "its kernel, H or W == 0, an output size below 1), so the kernel sees valid ones only")
        return f"same shape as {self.source}"

    def output_shape(self, args: dict[str, Any], tensor_names: list[str]) -> tuple[int, ...]:
        """Output shape for concrete arguments; raises ValueError on incompatible shapes."""
        shapes = [tuple(np.shape(args[n])) for n in tensor_names]
        if self.kind == "elementwise":
            return tuple(np.broadcast_shapes(*shapes))
        if self.kind == "same_as":
            return tuple(np.shape(args[self.source]))
        if self.kind == "pool2d":
            return pool2d_shape(np.shape(args[self.source]), *(int(args[p]) for p in self.pool))
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


def pool2d_error(shape: tuple[int, ...], kh: int, kw: int, sh: int, sw: int, ph: int, pw: int) -> str | None:
    """Why torch's 2-D pooling (ceil_mode=False) rejects these arguments, or None; the C++ shim
    checks the same conditions in the same words."""
    if len(shape) < 2:
        return "input needs at least 2 dims (*, H, W)"
    if kh < 1 or kw < 1:
        return "kernel size must be at least 1"
    if sh < 1 or sw < 1:
        return "stride must be at least 1"
    if ph < 0 or pw < 0:
        return "padding must not be negative"
    if 2 * ph > kh or 2 * pw > kw:
        return "padding should be at most half of the kernel size"
    if shape[-2] == 0 or shape[-1] == 0:
        return "input height and width must not be 0"
    if shape[-2] + 2 * ph < kh or shape[-1] + 2 * pw < kw:
        return "output size is too small (the padded input is smaller than the kernel)"
    return None


def pool2d_shape(shape: tuple[int, ...], kh: int, kw: int, sh: int, sw: int, ph: int, pw: int) -> tuple[int, ...]:
    """The pooled shape; for arguments the op rejects (pool2d_error), 0 in the pooled dims: the
    caller allocates an empty out and the kernel's shim raises ValueError before it looks at it."""
    shape = tuple(shape)
    if len(shape) < 2:
        return shape
    if pool2d_error(shape, kh, kw, sh, sw, ph, pw) is not None:
        return shape[:-2] + (0, 0)
    return shape[:-2] + ((shape[-2] + 2 * ph - kh) // sh + 1, (shape[-1] + 2 * pw - kw) // sw + 1)


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
    if isinstance(raw, dict) and set(raw) == {"pool2d", "kernel", "stride", "padding"}:
        _need(raw["pool2d"], tensor_params, "pool2d", "tensor")
        names = []
        for key in ("kernel", "stride", "padding"):
            pair = raw[key]
            if not isinstance(pair, list) or len(pair) != 2:
                raise ShapeRuleError(f"pool2d {key}: give two int parameters [height, width], e.g. [{key}_h, {key}_w]")
            for name in pair:
                _need(name, int_params, key, "int")
            names += pair
        return ShapeRule("pool2d", source=raw["pool2d"], pool=tuple(names))
    raise ShapeRuleError(
        "shape must be 'elementwise', a gufunc string like '(m,k),(k,n)->(m,n)', "
        "{same_as: <tensor param>}, {reduce: <tensor param>, axis: <int param>} or "
        "{pool2d: <tensor param>, kernel: [<int>, <int>], stride: [<int>, <int>], padding: [<int>, <int>]}"
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
