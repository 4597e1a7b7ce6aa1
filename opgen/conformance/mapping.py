"""Which ONNX op is which opgen op, and how one ONNX node becomes calls of opgen kernels (one, or
several where the node is a composition of opgen ops).

``MAPPINGS`` is the table (docs/conformance.md prints it): each row names the ONNX op, the opgen
op and the translation, a function from one test case's node (attributes, inputs, the opset) to a
``Plan``: the overload, its arguments by parameter name, and how each ONNX output comes from the
kernel's result. What a translation may do, and nothing more:

* pass inputs as they are, or as views and reshapes of them (a transpose, a merged or split dim,
  a dim of 1 added or removed, a broadcast), and concatenate inputs (a KV cache and new keys):
  data movement only, no arithmetic on the values;
* turn attributes into the opgen op's scalar arguments, with ONNX's defaults;
* reshape, transpose or reverse the kernel's result into the ONNX output;
* compose: plan the next kernel call from this call's result (``Plan.then``), whose inputs are
  that result as the kernel wrote it, or views of it (ONNX's Max of N inputs is a fold of
  numpy.maximum; select_last_index maps argmax's index back with operator.sub). Every step is a
  served kernel's call; a translation never computes a value itself.

Where that cannot express the case exactly, the translation raises ``Inexpressible`` naming
what is missing (a dtype, an attribute value, an input, an output, the op) and why. Every ONNX
semantic that differs from the opgen op's is checked, on the attributes and, where it depends on
them, on the data (ONNX Gather wraps negative indices, embedding raises; LpNormalization divides
by the norm, normalize clamps it at eps; ...). Outputs the opgen op does not compute (LayerNorm's
Mean and InvStdDev, MaxPool's Indices, a half-precision Attention's qk_matmul_output) are reported as such: the case is
inexpressible, and its other outputs are still compared (a wrong one makes the case wrong).

One case, RMSNormalization, passes a parameter through arithmetic: Gemma's RMSNorm multiplies by
``1 + weight``, so ONNX's ``scale`` is passed as ``weight = scale - 1`` (in float32) only where
``1 + weight`` is within 1/100 of the case's rtol of ``scale`` (``_rms_norm`` says why that
cannot change a verdict).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

import numpy as np

from opgen.spec.dtypes import numpy_dtype
from opgen.spec.model import Overload, Spec
from opgen.spec.shapes import pool_out_size


class Inexpressible(Exception):
    """A case the opgen op cannot express: ``subject`` names what (``dtype int8``, ``attribute
    ceil_mode=1``, ``output Indices``), ``why`` says what the opgen op does instead."""

    def __init__(self, subject: str, why: str):
        super().__init__(f"{subject}: {why}")
        self.subject, self.why = subject, why


class MappingError(Exception):
    """The table does not fit the spec (a parameter it passes is not the overload's): a bug here."""


@dataclass(frozen=True)
class Node:
    """One data set of one ONNX node case, as a translation sees it."""

    op_type: str
    opset: int
    attrs: dict[str, Any]
    inputs: tuple[np.ndarray | None, ...]  # by the node's input position; None where omitted
    outputs: tuple[str, ...]  # the node's output names; '' where omitted
    rtol: float
    atol: float

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def input(self, i: int) -> np.ndarray | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def wants(self, i: int) -> bool:
        """Whether the node names output ``i``."""
        return i < len(self.outputs) and self.outputs[i] != ""


@dataclass
class Plan:
    """One kernel call: the overload, its arguments, and each ONNX output from the result."""

    overload: Overload
    args: dict[str, Any]
    outputs: dict[int, Callable[[np.ndarray], np.ndarray]] = field(default_factory=lambda: {0: _same})
    notes: list[str] = field(default_factory=list)
    # The spec the overload belongs to, where the translation chose one of its row's ``others``
    # (Trilu's upper=0 is torch.tril); None: the row's own op.
    spec: Spec | None = None
    # A composed node (ONNX's N-input Max, select_last_index, an exclusive CumSum): the next kernel
    # call, planned from this call's result (the kernel's own output, or a view of it, is the next
    # call's input). ``outputs`` of every step are compared; a step that produces no ONNX output
    # has ``outputs={}``. The next plan names its spec (one of the row's ops).
    then: Callable[[Any], Plan] | None = None
    # A step that only converts dtypes for the op (an opgen.cast before or after it): the case is
    # reported under the op's first step that is not one.
    auxiliary: bool = False



# A translation gets the node and the row's op's spec, then the specs of the row's ``others``.
Translate = Callable[..., Plan]


@dataclass(frozen=True)
class Mapping:
    onnx_op: str
    opgen_op: str
    translate: Translate
    how: str  # one line for the docs and the report
    # Further opgen ops the translation may choose from, by the node's attributes or ranks (one ONNX
    # op that NumPy or torch spell as several functions: Trilu is triu or tril, MaxPool max_pool1d,
    # 2d or 3d), and the ops of its composed plans' later steps (numpy.pad, operator.sub, ...).
    # Each is a plain call of that op: the translation rules above still hold.
    others: tuple[str, ...] = ()

    @property
    def ops(self) -> tuple[str, ...]:
        return (self.opgen_op, *self.others)

    def plan(self, node: Node, specs: dict[str, Spec]) -> Plan:
        """Translate one node with the specs of this row's ops; a missing one is inexpressible."""
        missing = [op for op in self.ops if op not in specs]
        if missing:
            raise Inexpressible(f"op {missing[0]}", "this project has no spec for it")
        plan = self.translate(node, *(specs[op] for op in self.ops))
        if plan.spec is None:
            plan.spec = specs[self.opgen_op]
        return self.admit(plan)

    def following(self, plan: Plan, result: Any) -> Plan:
        """The next step of a composed plan, from this step's result; it must name its spec."""
        assert plan.then is not None
        step = plan.then(result)
        if step.spec is None:
            raise MappingError(f"a later step of the {self.onnx_op} translation names no spec")
        return self.admit(step)

    def admit(self, plan: Plan) -> Plan:
        if plan.spec is not None and plan.spec.op not in self.ops:
            raise MappingError(f"the {self.onnx_op} translation chose {plan.spec.op}, which its row does not name")
        return plan


def _same(y: np.ndarray) -> np.ndarray:
    return y


def _reshape(shape: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    return lambda y: y.reshape(shape)


# ------------------------------------------------------------------------------ overloads


def _fits(value: Any, t: Any) -> bool:
    if t.kind == "tensor":
        return isinstance(value, np.ndarray) and value.dtype == t.dtype.np
    if isinstance(value, np.ndarray):
        return False
    if t.name == "int":
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if t.name == "float":
        return isinstance(value, (float, int)) and not isinstance(value, bool)
    if t.name == "bool":
        return isinstance(value, bool)
    if t.name == "str":
        return isinstance(value, str)
    if t.is_tensor_list:  # every element a tensor of the list's dtype
        return isinstance(value, list) and all(_fits(v, t.elem) for v in value)
    if t.kind == "list":  # list[<scalar>]: every element fits the element type
        return isinstance(value, (list, tuple)) and all(_fits(v, t.elem) for v in value)
    return False


def choose(spec: Spec, args: dict[str, Any]) -> Overload:
    """The overload whose parameters are exactly ``args`` and whose types they have; else
    Inexpressible naming the dtype (or kind) none of them takes."""
    same_names = [o for o in spec.overloads if {p.name for p in o.sig.params} == set(args)]
    for o in same_names:
        if all(_fits(args[p.name], p.type) for p in o.sig.params):
            return o
    if not same_names:
        raise MappingError(f"{spec.op} has no overload taking exactly ({', '.join(args)}); its overloads take "
                           + "; ".join(f"{o.name} ({', '.join(p.name for p in o.sig.params)})" for o in spec.overloads))
    if lists := [name for name, v in args.items() if isinstance(v, list) and v and isinstance(v[0], np.ndarray)]:
        allowed = sorted({p.type.elem.dtype.name for o in same_names for p in o.sig.params
                          if p.name in lists and p.type.is_tensor_list})
        got = args[lists[0]][0].dtype
        if got.name not in allowed:
            _raise_dtype(spec, lists[0], got, allowed)
    tensors = [name for name, v in args.items() if isinstance(v, np.ndarray)]
    taking = [o for o in same_names if any(p.type.kind == "tensor" for p in o.sig.params)]
    if tensors and not taking:
        kinds = ", ".join(o.name for o in same_names)
        raise Inexpressible("tensor inputs", f"{spec.op} has only scalar overloads ({kinds})")
    for name in tensors:
        allowed = sorted({p.type.dtype.name for o in taking for p in o.sig.params
                          if p.name == name and p.type.kind == "tensor"})
        got = args[name].dtype
        if got.name not in allowed:
            _raise_dtype(spec, name, got, allowed)
    raise Inexpressible("argument types", f"no overload of {spec.op} takes "
                        + ", ".join(f"{k}: {_kind(v)}" for k, v in args.items()))


def _raise_dtype(spec: Spec, name: str, got: np.dtype, allowed: list[str]) -> NoReturn:
    dtype = "string" if got == object else got.name
    raise Inexpressible(f"dtype {dtype}", f"{spec.op} takes {name} as {' or '.join(allowed) or 'no tensor'}")


def _kind(v: Any) -> str:
    return f"tensor[{v.dtype}]" if isinstance(v, np.ndarray) else type(v).__name__


def _prod(dims: Any) -> int:
    return int(math.prod(int(d) for d in dims))


def _axis(axis: int, ndim: int, what: str = "axis") -> int:
    a = int(axis) + ndim if int(axis) < 0 else int(axis)
    if not 0 <= a < max(ndim, 1):
        raise Inexpressible(f"attribute {what}={axis}", f"out of range for a {ndim}-d input (an invalid case)")
    return a


def _required(node: Node, i: int, name: str) -> np.ndarray:
    x = node.input(i)
    if x is None:
        raise Inexpressible(f"no input {name}", "the node omits a required input (an invalid case)")
    return x


# ---------------------------------------------------------------------------- translations


def _params(spec: Spec, count: int) -> list[str]:
    """The names of the first ``count`` parameters of the spec's first overload (``x``, ``input``,
    ``a``/``b``, ``x1``/``x2``: specs name them after their library). ``choose`` then finds the
    overload taking exactly those names and dtypes, or says which dtype none takes."""
    return [p.name for p in spec.overloads[0].sig.params[:count]]


def _unary(node: Node, spec: Spec) -> Plan:
    (name,) = _params(spec, 1)
    args = {name: _required(node, 0, "X")}
    return Plan(choose(spec, args), args)


def _binary(node: Node, spec: Spec) -> Plan:
    if node.attr("broadcast", 0) or "axis" in node.attrs:
        raise Inexpressible("attribute broadcast/axis", f"the opset < 7 broadcast along an axis; {spec.op} "
                            "broadcasts as NumPy does")
    first, second = _params(spec, 2)
    args = {first: _required(node, 0, "A"), second: _required(node, 1, "B")}
    return Plan(choose(spec, args), args)


def _variadic_fold(node: Node, spec: Spec) -> Plan:
    """ONNX Max and Min take 1 to N inputs, broadcast together; the opgen op (NumPy's maximum,
    minimum) takes two. N inputs are a left fold, op(op(x0, x1), x2) ..., each step a kernel call
    whose first input is the previous step's result (broadcasting pairwise is broadcasting all
    together; a NaN propagates through every step). One input is op(x0, x0): x0 itself."""
    given = [x for x in node.inputs if x is not None]
    if not given:
        raise Inexpressible("no inputs", f"ONNX {node.op_type} takes 1 to N (an invalid case)")
    first, second = _params(spec, 2)
    operands = given if len(given) > 1 else given * 2

    def step(acc: np.ndarray, k: int) -> Plan:
        args = {first: acc, second: operands[k]}
        last = k == len(operands) - 1
        plan = Plan(choose(spec, args), args, {0: _same} if last else {}, spec=spec)
        if not last:
            plan.then = lambda result: step(result, k + 1)
        return plan

    plan = step(operands[0], 1)
    plan.notes.append(f"{len(given)} inputs: {spec.op}(x0, x0)" if len(given) == 1 else
                      f"{len(given)} inputs: a left fold of {spec.op}, {len(given) - 1} calls")
    return plan


def _leaky_relu(node: Node, spec: Spec) -> Plan:
    (name,) = _params(spec, 1)
    args = {name: _required(node, 0, "X"), "negative_slope": float(node.attr("alpha", 0.01))}
    return Plan(choose(spec, args), args)


_FLT_LOWEST, _FLT_MAX = -3.4028234663852886e38, 3.4028234663852886e38


def _clip(node: Node, spec: Spec) -> Plan:
    """Clip-11 on: optional scalar inputs min (1) and max (2), a missing one the dtype's extreme
    (clips nothing); Clip-1/6: float attributes defaulting to float32's range."""
    x = _required(node, 0, "input")
    if node.opset < 11:
        bounds = [float(node.attr("min", _FLT_LOWEST)), float(node.attr("max", _FLT_MAX))]
        notes = [f"opset {node.opset}: min/max from the attributes"]
    else:
        default = [-(2**63), 2**63 - 1] if x.dtype.kind in "iu" else [-math.inf, math.inf]
        bounds, notes = [], []
        for i, name in ((1, "min"), (2, "max")):
            b = node.input(i)
            if b is None:
                if x.dtype == np.uint64 and i == 2 and np.any(x > np.uint64(2**63 - 1)):
                    raise Inexpressible("no input max on uint64 values above 2**63-1",
                                        f"{spec.op} takes int64 bounds; 2**63-1 would clip them")
                bounds.append(default[i - 1])
                notes.append(f"no {name}: {default[i - 1]}")
                continue
            b = np.asarray(b)
            if b.size != 1:
                raise Inexpressible(f"input {name} of shape {list(b.shape)}", f"{spec.op} takes scalar bounds "
                                    "(ONNX requires a scalar: an invalid case)")
            if b.dtype != x.dtype:
                raise Inexpressible(f"input {name} of dtype {b.dtype}", f"ONNX requires min/max of the input's "
                                    f"dtype {x.dtype} (an invalid case)")
            bounds.append(b.reshape(()).item())  # a Python float (exact for float32) or int
    args = {"a": x, "a_min": bounds[0], "a_max": bounds[1]}
    return Plan(choose(spec, args), args, {0: _same}, notes)


def _div(node: Node, truediv: Spec, floordiv: Spec, fmod: Spec, sub: Spec) -> Plan:
    """ONNX Div: A / B on floats is operator.truediv; on integers ONNX truncates towards zero and
    keeps the dtype, which is operator.floordiv (NumPy's //, which floors) wherever the two agree:
    every divisor nonzero (ONNX leaves x / 0 undefined), no INT_MIN / -1 (it overflows: undefined in
    ONNX, NumPy wraps), and every quotient exact or nonnegative (always so for unsigned dtypes;
    checked on the data, after broadcasting). Where an inexact quotient is negative, the truncated
    quotient is composed exactly: R = numpy.fmod(A, B) (the remainder with A's sign, so A - R is
    the multiple of B towards zero, never past A: no overflow), then operator.sub A - R, then
    operator.floordiv (A - R) // B, an exact division."""
    a, b = _required(node, 0, "A"), _required(node, 1, "B")
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        return _binary(node, truediv)
    if np.any(b == 0):
        raise Inexpressible("a zero divisor", "ONNX leaves integer division by 0 undefined")
    if a.dtype.kind == "i":
        a_, b_ = np.broadcast_arrays(a, b)
        if np.any((a_ == np.iinfo(a.dtype).min) & (b_ == -1)):
            raise Inexpressible(f"{np.iinfo(a.dtype).min} / -1", "the quotient overflows "
                                f"{a.dtype} (undefined in ONNX); {floordiv.op} wraps it as NumPy does")
        with np.errstate(all="ignore"):
            if np.any(((a_ < 0) != (b_ < 0)) & (a_ % b_ != 0)):
                return _truncated_quotient(a, b, floordiv, fmod, sub)
    plan = _binary(node, floordiv)
    plan.spec = floordiv
    return plan


def _truncated_quotient(a: np.ndarray, b: np.ndarray, floordiv: Spec, fmod: Spec, sub: Spec) -> Plan:
    """A / B truncated towards zero as (A - fmod(A, B)) // B, three served calls (see _div)."""
    first = {"x1": a, "x2": b}
    notes = [f"truncated towards zero as (A - {fmod.op}(A, B)) // B: {sub.op} and {floordiv.op} of an exact multiple"]

    def minus(r: np.ndarray) -> Plan:
        args = {"a": a, "b": r}
        return Plan(choose(sub, args), args, {}, spec=sub, then=divide)

    def divide(multiple: np.ndarray) -> Plan:
        args = {"a": multiple, "b": b}
        return Plan(choose(floordiv, args), args, spec=floordiv)

    return Plan(choose(fmod, first), first, {}, notes, spec=fmod, then=minus)


def _mod(node: Node, mod: Spec, fmod: Spec) -> Plan:
    """ONNX Mod: fmod=0 is the remainder with the divisor's sign (np.mod, Python's %), which is
    operator.mod on tensors; fmod=1 is C's fmod (the dividend's sign), numpy.fmod."""
    if int(node.attr("fmod", 0)) == 0:
        return _binary(node, mod)
    plan = _binary(node, fmod)
    plan.spec = fmod
    return plan


# ------------------------------------------------------- computing in another dtype, through casts

# A rule for a dtype the op lacks, or a mix of dtypes it does not take: given the dtypes of the
# node's data inputs, the dtype to compute in and the dtype of ONNX's result; None where it has none.
DtypeRule = Callable[[tuple[np.dtype, ...]], "tuple[np.dtype, np.dtype] | None"]


def widened(table: dict[str, str]) -> DtypeRule:
    """Data inputs all of one dtype the table names: computed in the wider dtype it maps to, the
    result cast back to the inputs' dtype."""

    def rule(dtypes: tuple[np.dtype, ...]) -> tuple[np.dtype, np.dtype] | None:
        if len(set(dtypes)) != 1 or dtypes[0].name not in table:
            return None
        return numpy_dtype(table[dtypes[0].name]), dtypes[0]

    return rule


def promoted_then_as(position: int) -> DtypeRule:
    """Mixed dtypes computed in NumPy's promotion of them (np.result_type, what NumPy's own ufunc
    does to the operands), the result cast to the dtype of data input ``position``."""

    def rule(dtypes: tuple[np.dtype, ...]) -> tuple[np.dtype, np.dtype] | None:
        if len(set(dtypes)) == 1:
            return None
        return np.result_type(*dtypes), dtypes[position]

    return rule


def _cast_overload(cast: Spec, source: np.dtype, target: np.dtype) -> Overload | None:
    for o in cast.overloads:
        if o.sig.params[0].type.dtype.np == source and o.sig.returns.dtype.np == target:
            return o
    return None


def through_casts(translate: Translate, rule: DtypeRule, why: str, data: tuple[int, ...] | None = None) -> Translate:
    """``translate`` where the node's dtypes are the op's; where the op lacks them (its translation
    raises Inexpressible for a dtype or for the argument types), the same translation in the dtype
    ``rule`` gives, composed with served ``opgen.cast`` calls: each data input (positions ``data``,
    default every input) cast to the compute dtype, the op, its result cast to ONNX's dtype. The
    rows say ``why`` that equals ONNX's result exactly (each rule is exact for its ops only: a
    widening every value survives, and a narrowing the op's result always fits, or one NumPy's own
    ufunc makes). The last of the row's other ops must be ``opgen.cast``."""

    def translate_through_casts(node: Node, *specs: Spec) -> Plan:
        try:
            return translate(node, *specs[:-1])
        except Inexpressible as exc:
            if not exc.subject.startswith(("dtype ", "argument types")):
                raise
            refused = exc
        cast, main = specs[-1], specs[0]
        positions = [i for i in (data if data is not None else range(len(node.inputs)))
                     if i < len(node.inputs) and node.inputs[i] is not None]
        dtypes = tuple(node.inputs[i].dtype for i in positions)
        chosen = rule(dtypes) if dtypes else None
        if chosen is None:
            raise refused
        compute, result = chosen
        casts = {i: _cast_overload(cast, node.inputs[i].dtype, compute)
                 for i in positions if node.inputs[i].dtype != compute}
        back = _cast_overload(cast, compute, result) if compute != result else None
        lacking = [(node.inputs[i].dtype, compute) for i, o in casts.items() if o is None]
        lacking += [(compute, result)] if compute != result and back is None else []
        if lacking:
            source, target = lacking[0]
            raise Inexpressible(refused.subject, f"{refused.why}; computing in {compute} needs an "
                                f"{cast.op} from {source} to {target}, which has no overload")
        note = (f"computed in {compute} ({', '.join(str(d) for d in dtypes)} cast by {cast.op}"
                + (f", the result cast to {result}" if back is not None else "") + f"): {why}")

        def narrowed(step: Plan) -> Plan:
            """The op's steps, with ONNX's output cast back to its dtype after the step computing it
            (every step after the first names its spec, as Mapping.following requires)."""
            if step.outputs and set(step.outputs) != {0}:
                raise MappingError(f"{cast.op} narrows one output; {step.spec.op}'s step computes "
                                   f"outputs {sorted(step.outputs)}")
            produce, inner = step.outputs.get(0), step.then
            if produce is not None and inner is not None:
                raise MappingError(f"a step of {main.op} both computes ONNX's output and plans another")
            step.outputs = {}
            if produce is not None:
                step.then = lambda value: Plan(back, {"x": produce(value)}, {0: _same}, spec=cast, auxiliary=True)
            else:
                step.then = lambda value: narrowed(inner(value))
            return step

        def cast_step(k: int, inputs: list[Any]) -> Plan:
            pending = [i for i in casts if i >= k]
            if not pending:
                plan = translate(dataclasses.replace(node, inputs=tuple(inputs)), *specs[:-1])
                plan.spec = plan.spec or main
                return plan if back is None else narrowed(plan)
            i = pending[0]

            def next_input(value: np.ndarray) -> Plan:
                return cast_step(i + 1, [*inputs[:i], value, *inputs[i + 1:]])

            return Plan(casts[i], {"x": node.inputs[i]}, {}, spec=cast, then=next_input, auxiliary=True)

        first = cast_step(0, list(node.inputs))
        first.notes.insert(0, note)
        return first

    return translate_through_casts


def _where(node: Node, spec: Spec) -> Plan:
    """ONNX Where(condition, X, Y): the three inputs broadcast together, as numpy.where's."""
    cond, first, second = _params(spec, 3)
    args = {cond: _required(node, 0, "condition"), first: _required(node, 1, "X"), second: _required(node, 2, "Y")}
    return Plan(choose(spec, args), args)


def _softplus(node: Node, spec: Spec) -> Plan:
    """ONNX Softplus is ln(exp(X) + 1): no beta, no threshold. beta = 1 is exact; torch's linear
    branch above threshold = 20 (its default) returns x where ONNX gives x + log1p(exp(-x)), which
    differs from x by exp(-x) < 2.1e-9 absolute: below one float32 ulp of x, and far inside the
    node tests' rtol."""
    (name,) = _params(spec, 1)
    args = {name: _required(node, 0, "X"), "beta": 1.0, "threshold": 20.0}
    return Plan(choose(spec, args), args, notes=["beta = 1, threshold = 20: above x = 20 the result is x, "
                                                 "within 2.1e-9 of ln(exp(x) + 1)"])


def _elu(node: Node, spec: Spec) -> Plan:
    """ONNX Elu: X < 0 ? alpha * (exp(X) - 1) : X, alpha default 1.0. torch takes the exp branch for
    X <= 0, which gives the same 0 (and -0.0 for -0.0) at X = 0."""
    (name,) = _params(spec, 1)
    args = {name: _required(node, 0, "X"), "alpha": float(node.attr("alpha", 1.0))}
    return Plan(choose(spec, args), args)


def _ints(value: Any) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _transpose(node: Node, spec: Spec) -> Plan:
    """perm (default: the dims reversed) as axes; ONNX perm entries are in [0, r)."""
    x = _required(node, 0, "data")
    perm = node.attr("perm")
    axes = list(range(x.ndim))[::-1] if perm is None else [int(p) for p in perm]
    args = {"a": x, "axes": axes}
    return Plan(choose(spec, args), args)


def _reshape_node(node: Node, spec: Spec) -> Plan:
    """shape from the second input (a constant). allowzero=0 (the default): a 0 copies the input's
    dim at that index, which the translation resolves into the shape it passes (an argument, no data
    moves); allowzero=1: a 0 is a dim of size 0, as in NumPy. -1 as in NumPy."""
    x = _required(node, 0, "data")
    shape = _ints(_required(node, 1, "shape"))
    if any(d < -1 for d in shape):
        raise Inexpressible(f"shape {shape}", "ONNX allows no negative entry but -1 (an invalid case)")
    if not bool(node.attr("allowzero", 0)):
        if any(d == 0 and i >= x.ndim for i, d in enumerate(shape)):
            raise Inexpressible(f"shape {shape}", "a 0 past the input's rank copies no dim (an invalid case)")
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    elif 0 in shape and -1 in shape:
        raise Inexpressible(f"shape {shape}", "allowzero=1 with both 0 and -1 is an invalid case")
    args = {"a": x, "shape": shape}
    return Plan(choose(spec, args), args)


def _flatten(node: Node, spec: Spec) -> Plan:
    """Flatten is numpy.reshape to (prod(shape[:axis]), prod(shape[axis:])), axis in [-r, r]
    (default 1; negative counts from the end, r itself gives (prod(shape), 1))."""
    x = _required(node, 0, "input")
    axis = int(node.attr("axis", 1))
    r = x.ndim
    if not -r <= axis <= r:
        raise Inexpressible(f"attribute axis={axis}", f"out of range [-{r}, {r}] (an invalid case)")
    axis = axis + r if axis < 0 else axis
    args = {"a": x, "shape": [_prod(x.shape[:axis]), _prod(x.shape[axis:])]}
    return Plan(choose(spec, args), args)


def _pad(node: Node, spec: Spec) -> Plan:
    """Pad is numpy.pad with a (before, after) pair per dim: ONNX's pads (all begins, then all ends;
    an input from opset 11, an attribute before) over ``axes`` (opset 18; default every dim, negative
    counted from the end) become pad_width's pair-per-dim form; mode (constant, edge, reflect, wrap:
    NumPy's names and meanings) as it is; the constant (an input from opset 11, the ``value``
    attribute before; default 0) as constant_values, a Python int for integer data. Negative pads
    (ONNX crops) are inexpressible: numpy.pad refuses them."""
    x = _required(node, 0, "data")
    if node.opset >= 11:
        pads = _ints(_required(node, 1, "pads"))
        given = node.input(2)
        value = 0 if given is None or np.asarray(given).size == 0 else np.asarray(given).reshape(-1)[0].item()
        axes_in = node.input(3)
        axes = list(range(x.ndim)) if axes_in is None else [_axis(a, x.ndim, "axes") for a in _ints(axes_in)]
    else:
        pads = [int(p) for p in node.attr("pads", [])]
        value, axes = float(node.attr("value", 0.0)), list(range(x.ndim))
    mode = str(node.attr("mode", "constant"))
    if len(pads) != 2 * len(axes):
        raise Inexpressible(f"pads {pads}", f"needs 2 entries an axis ({len(axes)} axes; an invalid case)")
    if any(p < 0 for p in pads):
        raise Inexpressible(f"pads {pads}", f"a negative pad crops in ONNX; {spec.op} refuses it (ValueError), as NumPy")
    pairs = [[0, 0] for _ in range(x.ndim)]
    for k, a in enumerate(axes):
        pairs[a] = [pads[k], pads[k + len(axes)]]
    if np.issubdtype(x.dtype, np.integer):
        value = int(value)
    else:
        value = float(value)
    args = {"array": x, "pad_width": [w for pair in pairs for w in pair], "mode": mode, "constant_values": value}
    return Plan(choose(spec, args), args)


def _tile(node: Node, spec: Spec) -> Plan:
    """Tile is numpy.tile with ``repeats`` (one entry a dim, as ONNX requires) as reps."""
    x = _required(node, 0, "input")
    reps = _ints(_required(node, 1, "repeats"))
    if len(reps) != x.ndim:
        raise Inexpressible(f"repeats {reps}", f"ONNX needs one entry a dim ({x.ndim}; an invalid case)")
    args = {"A": x, "reps": reps}
    return Plan(choose(spec, args), args)


def _global_pool(empty_error: str | None = None) -> Callable[[Node, Spec], Plan]:
    """GlobalAveragePool / GlobalMaxPool: X (N, C, D1, ...) with the spatial dims merged into one by a
    reshape, reduced over it without keepdims (numpy.mean, numpy.max: functions of the multiset of
    the elements, so the merge is exact), the result reshaped to (N, C, 1, ...)."""

    def translate(node: Node, spec: Spec) -> Plan:
        x = _required(node, 0, "X")
        if x.ndim < 3:
            raise Inexpressible(f"a {x.ndim}-d input", "ONNX's global pools take (N, C, D1, ...) (an invalid case)")
        spatial = _prod(x.shape[2:])
        if empty_error is not None and spatial == 0:
            raise Inexpressible("an empty spatial extent", empty_error)
        args = {"a": x.reshape(x.shape[:2] + (spatial,)), "axis": 2, "keepdims": False}
        notes = [f"spatial dims {list(x.shape[2:])} merged into one by a reshape"] if x.ndim > 3 else []
        return Plan(choose(spec, args), args, {0: _reshape(x.shape[:2] + (1,) * (x.ndim - 2))}, notes)

    return translate


def _axes_given(node: Node) -> list[int] | None:
    """Unsqueeze's and Squeeze's axes: the second input from opset 13, the attribute before."""
    given = node.input(1) if node.opset >= 13 else node.attr("axes")
    return None if given is None else _ints(given)


def _unsqueeze(node: Node, expand_dims: Spec, reshape: Spec) -> Plan:
    """One axis of the output, in [-r-1, r]: numpy.expand_dims(data, axis). Several: the output's
    shape (a 1 at each axis of the output, the input's dims in order elsewhere) through
    numpy.reshape, which moves no data either."""
    x = _required(node, 0, "data")
    axes = _axes_given(node)
    if not axes:
        raise Inexpressible("no axes", "Unsqueeze requires axes (an invalid case)")
    if len(axes) == 1:
        args = {"a": x, "axis": axes[0]}
        return Plan(choose(expand_dims, args), args)
    rank = x.ndim + len(axes)
    placed = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(placed)) != len(placed) or not all(0 <= a < rank for a in placed):
        raise Inexpressible(f"axes {axes}", f"repeated or out of range for an output of rank {rank} (an invalid case)")
    dims = iter(x.shape)
    shape = [1 if i in placed else next(dims) for i in range(rank)]
    args = {"a": x, "shape": shape}
    return Plan(choose(reshape, args), args, notes=[f"reshape to {shape}"], spec=reshape)


def _expand(node: Node, spec: Spec) -> Plan:
    """ONNX broadcasts both ways (a dim of 1 in shape keeps the input's dim): the output shape is
    the two shapes broadcast together, to which numpy.broadcast_to broadcasts the input one way."""
    x = _required(node, 0, "input")
    shape = _ints(_required(node, 1, "shape"))
    try:
        target = [int(d) for d in np.broadcast_shapes(x.shape, tuple(shape))]
    except ValueError:
        raise Inexpressible(f"shape {shape}", f"the input's shape {list(x.shape)} does not broadcast with it "
                            "(an invalid case)") from None
    args = {"array": x, "shape": target}
    return Plan(choose(spec, args), args, notes=[f"broadcast_to shape {target}"] if target != shape else [])


def _concat(node: Node, spec: Spec) -> Plan:
    """Every input, in order, joined along the attribute axis (required; negative from opset 11)."""
    xs = [x for x in node.inputs if x is not None]
    axis = node.attr("axis")
    if axis is None:
        raise Inexpressible("no axis", "Concat requires axis (an invalid case)")
    if len({x.dtype for x in xs}) > 1:
        raise Inexpressible("mixed dtypes", "Concat's inputs share one type (an invalid case)")
    args = {"arrays": xs, "axis": int(axis)}
    return Plan(choose(spec, args), args)


def _squeeze(node: Node, squeeze: Spec, reshape: Spec) -> Plan:
    """One axis: numpy.squeeze(data, axis) (a dim that is not 1 is an error in both). Without axes
    ONNX removes every dim of size 1, and with several the named ones: numpy.squeeze where that is
    one dim, else the input's shape without them through numpy.reshape (no data moves)."""
    x = _required(node, 0, "data")
    axes = _axes_given(node)
    if axes is None:
        axes = [i for i, n in enumerate(x.shape) if n == 1]
    if len(axes) == 1:
        args = {"a": x, "axis": axes[0]}
        return Plan(choose(squeeze, args), args)
    placed = {a + x.ndim if a < 0 else a for a in axes}
    if not all(0 <= a < x.ndim and x.shape[a] == 1 for a in placed):
        raise Inexpressible(f"axes {axes}", f"not all dims of 1 of the input of shape {list(x.shape)} (an invalid case)")
    shape = [n for i, n in enumerate(x.shape) if i not in placed]
    args = {"a": x, "shape": shape}
    return Plan(choose(reshape, args), args, notes=[f"reshape to {shape}"], spec=reshape)


def _trilu(node: Node, triu: Spec, tril: Spec) -> Plan:
    """upper=1 (the default) is torch.triu, upper=0 torch.tril, with k (the optional second input,
    default 0) as the diagonal."""
    spec = triu if bool(node.attr("upper", 1)) else tril
    x = _required(node, 0, "input")
    k = node.input(1)
    args = {"input": x, "diagonal": 0 if k is None else int(np.asarray(k).reshape(-1)[0])}
    return Plan(choose(spec, args), args, spec=spec)


def _matmul(node: Node, spec: Spec) -> Plan:
    a, b = _required(node, 0, "A"), _required(node, 1, "B")
    if a.ndim == 0 or b.ndim == 0:
        raise Inexpressible("a 0-d operand", "MatMul needs at least 1-d operands (an invalid case)")
    a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a  # NumPy's rule: a 1-d operand gains a dim of 1 ...
    b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    try:
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise Inexpressible(f"shapes {list(a.shape)} and {list(b.shape)}", "do not broadcast (an invalid case)") from None
    full = [*batch, a2.shape[-2], b2.shape[-1]]
    if b.ndim == 1:  # ... which the result loses again
        full.pop(-1)
    if a.ndim == 1:
        full.pop(-2 if b.ndim > 1 else -1)
    args = {"a": a2, "b": b2}
    return Plan(choose(spec, args), args, {0: _reshape(tuple(full))},
                ["1-d operands as (1, k) and (k, 1), as NumPy's matmul does"] if min(a.ndim, b.ndim) == 1 else [])


def _reduce_axes(node: Node, x: np.ndarray, spec: Spec, axes_input_from: int) -> tuple[list[int], bool]:
    """The sorted, normalised axes of a Reduce* node (all axes when none are given), and keepdims.
    The axes are an input from opset ``axes_input_from`` on (13 for ReduceSum, 18 for the others),
    an attribute before."""
    keep = bool(node.attr("keepdims", 1))
    if node.opset >= axes_input_from:
        given = node.input(1)
        axes = [] if given is None else [int(a) for a in np.asarray(given).reshape(-1)]
        noop = bool(node.attr("noop_with_empty_axes", 0))
    else:
        axes, noop = [int(a) for a in node.attr("axes", [])], False
    if not axes and noop:
        raise Inexpressible("noop_with_empty_axes=1 without axes", f"{node.op_type} is then the identity, not a "
                            "reduction")
    r = x.ndim
    original = list(axes)
    axes = sorted({_axis(a, r, "axes") for a in axes}) if axes else list(range(r))
    if axes and axes != list(range(axes[0], axes[-1] + 1)):
        raise Inexpressible(f"axes {original}", f"are not adjacent: {spec.op} reduces one axis (adjacent axes "
                            "are merged into one by a reshape)")
    return axes, keep


def _merged(x: np.ndarray, axes: list[int], keep: bool) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """``x`` with the adjacent ``axes`` merged into one (a reshape), that axis, and ONNX's result shape."""
    if x.ndim == 0:
        merged, lo = x.reshape(1), 0
    else:
        lo, hi = axes[0], axes[-1] + 1
        merged = x.reshape(x.shape[:lo] + (_prod(x.shape[lo:hi]),) + x.shape[hi:])
    shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape)) if keep else \
        tuple(n for i, n in enumerate(x.shape) if i not in axes)
    return merged, lo, shape


def _is_noop(node: Node, axes_input_from: int) -> bool:
    """noop_with_empty_axes=1 and no axes given (the input from opset ``axes_input_from``): the identity."""
    given = node.input(1)
    return node.opset >= axes_input_from and bool(node.attr("noop_with_empty_axes", 0)) and \
        (given is None or np.asarray(given).size == 0)


def _reduce_sum(node: Node, spec: Spec) -> Plan:
    """ReduceSum is numpy.sum over one axis (adjacent ones merged by a reshape). The identity
    (noop_with_empty_axes=1 without axes) is the sum over a dim of 1 added at the end by a reshape:
    each element summed alone."""
    x = _required(node, 0, "data")
    if _is_noop(node, 13):
        args = {"a": x.reshape(x.shape + (1,)), "axis": x.ndim}
        return Plan(choose(spec, args), args, {0: _reshape(x.shape)},
                    ["noop_with_empty_axes=1 without axes: the sum over a dim of 1 added by a reshape"])
    axes, keep = _reduce_axes(node, x, spec, 13)
    merged, lo, shape = _merged(x, axes, keep)
    args = {"a": merged, "axis": lo}
    notes = [f"axes {axes} merged into one by a reshape"] if len(axes) > 1 else []
    return Plan(choose(spec, args), args, {0: _reshape(shape)}, notes)


def _reduce_one(data: str = "a", axis: str = "axis", keepdims: str = "keepdims",
                identity: float | None = None, fixed: dict[str, Any] | None = None) -> Callable[..., Plan]:
    """ReduceMean / ReduceMax / ReduceMin / ReduceProd / ReduceLogSumExp / ReduceL1 / ReduceL2 (axes
    an input from opset 18) as one call of a one-axis reduction with keepdims: adjacent axes merged by
    a reshape, which is exact for these (each is a function of the multiset of the reduced elements);
    the result reshaped to ONNX's. ``fixed``: arguments the ONNX op implies (a norm's ord).
    ``identity``: ReduceMax's -inf, ReduceMin's +inf, ONNX's result over an empty set, where the
    opgen op (numpy.max, numpy.min) raises; an empty reduced axis is first padded with that one
    element by numpy.pad (the row's second op), and the reduction runs over it."""

    def translate(node: Node, spec: Spec, pad: Spec | None = None) -> Plan:
        x = _required(node, 0, "data")
        axes, keep = _reduce_axes(node, x, spec, 18)
        merged, lo, shape = _merged(x, axes, keep)
        # One axis: ONNX's keepdims is the kernel's; merged axes: reduced without, then reshaped.
        single = bool(keep and len(axes) == 1 and x.ndim > 0)
        notes = [f"axes {axes} merged into one by a reshape"] if len(axes) > 1 else []
        if identity is None or merged.shape[lo] or pad is None:
            args = {data: merged, **(fixed or {}), axis: lo, keepdims: single}
            return Plan(choose(spec, args), args, {0: _reshape(shape)}, notes)
        if merged.dtype.kind != "f":
            raise Inexpressible(f"an empty reduction of dtype {merged.dtype}", f"ONNX gives the dtype's extreme "
                                f"there; {spec.op} raises ValueError, and an infinity does not fit the dtype")
        width = [w for d in range(merged.ndim) for w in ((0, 1) if d == lo else (0, 0))]
        padded = {"array": merged, "pad_width": width, "mode": "constant", "constant_values": float(identity)}
        notes.append(f"an empty set: padded with {identity} by {pad.op} (ONNX's result there), then {spec.op}")

        def reduce(one: np.ndarray) -> Plan:
            args = {data: one, **(fixed or {}), axis: lo, keepdims: single}
            return Plan(choose(spec, args), args, {0: _reshape(shape)}, spec=spec)

        return Plan(choose(pad, padded), padded, {}, notes, spec=pad, then=reduce)

    return translate


def _arg_extreme(node: Node, spec: Spec, sub: Spec) -> Plan:
    """ArgMax / ArgMin: numpy.argmax / argmin (the first index of ties, NaN as NumPy). With
    select_last_index=1 the last of ties: the first on the axis reversed (a view with a negative
    stride), whose index i is n - 1 - i on the original axis, computed by operator.sub (the row's
    second op) on the kernel's result."""
    x = _required(node, 0, "data")
    if x.ndim == 0:
        raise Inexpressible("a 0-d input", f"{spec.op} needs an axis to reduce")
    axis = _axis(node.attr("axis", 0), x.ndim)
    n = x.shape[axis]
    if n == 0:
        raise Inexpressible("an empty axis", f"{spec.op} raises ValueError there, as NumPy")
    keep = bool(node.attr("keepdims", 1))
    if int(node.attr("select_last_index", 0)) == 0:
        args = {"a": x, "axis": axis, "keepdims": keep}
        return Plan(choose(spec, args), args)
    args = {"a": np.flip(x, axis), "axis": axis, "keepdims": keep}

    def back(index: np.ndarray) -> Plan:
        last = {"a": np.array(n - 1, dtype=index.dtype), "b": index}
        return Plan(choose(sub, last), last, spec=sub)

    return Plan(choose(spec, args), args, {}, [f"select_last_index=1: {spec.op} on the axis reversed (a view), "
                                                f"the index i mapped back as {n - 1} - i by {sub.op}"], then=back)


def _result(position: int) -> Callable[[tuple[np.ndarray, ...]], np.ndarray]:
    """An ONNX output that is one result of a tuple-returning op (its position in the tuple)."""
    return lambda results: results[position]


def _topk(node: Node, spec: Spec) -> Plan:
    """Values and Indices: torch.topk's (values, indices), whose ties (the lower index first) and NaN
    order are ONNX's. K is an input from opset 10, the attribute k before."""
    x = _required(node, 0, "X")
    k_input = node.input(1)
    k = int(np.asarray(k_input).reshape(-1)[0]) if k_input is not None else int(node.attr("k"))
    if x.ndim == 0:
        raise Inexpressible("a 0-d input", "ONNX TopK takes a tensor of rank 1 or more (an invalid case)")
    args = {"input": x, "k": k, "dim": _axis(node.attr("axis", -1), x.ndim),
            "largest": bool(node.attr("largest", 1)), "sorted": bool(node.attr("sorted", 1))}
    return Plan(choose(spec, args), args, {0: _result(0), 1: _result(1)})


def _cumsum(node: Node, spec: Spec, pad: Spec) -> Plan:
    """CumSum is numpy.cumsum along ``axis``. reverse=1: the axis reversed (a view with a negative
    stride) and the result reversed back (a view). exclusive=1 (out[i] sums x[:i]): the inclusive
    sum of x without its last element along the axis (a view), then numpy.pad (the row's second op)
    puts the empty sum, 0, in front."""
    x = _required(node, 0, "x")
    axis_t = _required(node, 1, "axis")
    if x.ndim == 0:
        raise Inexpressible("a 0-d input", f"{spec.op} needs an axis")
    axis = _axis(int(np.asarray(axis_t).reshape(-1)[0]), x.ndim)
    reverse, exclusive = bool(int(node.attr("reverse", 0))), bool(int(node.attr("exclusive", 0)))
    view, notes = (np.flip(x, axis), ["reverse=1: the axis reversed (views) before and after"]) if reverse else (x, [])
    flip_back: Callable[[np.ndarray], np.ndarray] = (lambda y: np.flip(y, axis)) if reverse else _same
    n = x.shape[axis]
    if not exclusive or n == 0:  # an empty axis: the exclusive sum is empty too
        args = {"a": view, "axis": axis}
        return Plan(choose(spec, args), args, {0: flip_back}, notes)
    args = {"a": view[(slice(None),) * axis + (slice(0, n - 1),)], "axis": axis}
    notes.append(f"exclusive=1: {spec.op} of the first {n - 1} along the axis, then {pad.op} puts 0 in front")

    def shift(inclusive: np.ndarray) -> Plan:
        width = [w for d in range(x.ndim) for w in ((1, 0) if d == axis else (0, 0))]
        zero = 0 if inclusive.dtype.kind in "iu" else 0.0
        padded = {"array": inclusive, "pad_width": width, "mode": "constant", "constant_values": zero}
        return Plan(choose(pad, padded), padded, {0: flip_back}, spec=pad)

    return Plan(choose(spec, args), args, {}, notes, then=shift)


def _softmax(node: Node, spec: Spec) -> Plan:
    """Softmax and LogSoftmax (torch's softmax and log_softmax take the same (x, dim))."""
    x = _required(node, 0, "input")
    if node.opset >= 13:
        args = {"x": x, "dim": int(node.attr("axis", -1))}
        return Plan(choose(spec, args), args)
    # Before opset 13 (Log)Softmax coerces its input to 2-d at `axis` (default 1) and normalises each
    # row of the flattened trailing dims.
    axis = _axis(node.attr("axis", 1), x.ndim)
    flat = x.reshape(_prod(x.shape[:axis]), _prod(x.shape[axis:]))
    args = {"x": flat, "dim": 1}
    return Plan(choose(spec, args), args, {0: _reshape(x.shape)},
                [f"opset {node.opset}: coerced to 2-d at axis {axis}, {spec.op.rsplit('.', 1)[-1]} over each row"])


def _gelu(node: Node, spec: Spec) -> Plan:
    args = {"input": _required(node, 0, "X"), "approximate": str(node.attr("approximate", "none"))}
    return Plan(choose(spec, args), args)


def _layer_norm(node: Node, spec: Spec, native: Spec) -> Plan:
    """Y by layer_norm; where the node asks for Mean or InvStdDev too, all three by
    torch.native_layer_norm's (output, mean, rstd) (its rstd is ONNX's InvStdDev), reshaped to
    X.shape[:axis] + (1,) * (rank - axis). A dtype native_layer_norm lacks computes Y only (partly)."""
    x, scale, bias = _required(node, 0, "X"), _required(node, 1, "Scale"), node.input(2)
    if bias is None:
        raise Inexpressible("no bias input B", f"{spec.op}'s overload takes weight and bias")
    axis = _axis(node.attr("axis", -1), x.ndim)
    normalized = x.shape[axis:]
    d = _prod(normalized)
    try:
        weight = np.broadcast_to(scale, normalized).reshape(d)
        bias_ = np.broadcast_to(bias, normalized).reshape(d)
    except ValueError:
        raise Inexpressible(f"Scale {list(scale.shape)} or B {list(bias.shape)}",
                            f"does not broadcast to the normalized shape {list(normalized)}") from None
    args = {"input": x.reshape(_prod(x.shape[:axis]), d), "weight": weight, "bias": bias_,
            "eps": float(node.attr("epsilon", 1e-5))}
    notes = [f"normalized over dims {axis}.. merged into one of {d} by a reshape"] if len(normalized) > 1 else []
    if any(node.outputs[1:3]):
        try:
            overload = choose(native, args)
        except Inexpressible:
            pass  # Y alone, by layer_norm: Mean and InvStdDev are left not computed
        else:
            kept = x.shape[:axis] + (1,) * len(normalized)
            return Plan(overload, args, {0: lambda r: r[0].reshape(x.shape), 1: lambda r: r[1].reshape(kept),
                                         2: lambda r: r[2].reshape(kept)}, notes, spec=native)
    return Plan(choose(spec, args), args, {0: _reshape(x.shape)}, notes)


def _gemm(node: Node, linear: Spec, addmm: Spec) -> Plan:
    """Y = alpha * A' @ B' + beta * C (A' = A.T when transA, B' = B.T when transB; C optional and
    unidirectionally broadcastable to (M, N)). torch.nn.functional.linear where it can say it
    (float32, alpha = 1, and no C or beta = 1 with C one row); else torch.addmm, which scales
    both terms and takes C as any (M, N) view: a stride-0 broadcast of (), (1,), (N,), (1, N) or
    (M, 1). Without C, addmm gets beta = 0 and a stride-0 (M, N) view of one zero (beta == 0
    ignores its input, as BLAS does)."""
    a, b, c = _required(node, 0, "A"), _required(node, 1, "B"), node.input(2)
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    if a.ndim != 2 or b.ndim != 2:
        raise Inexpressible("operands that are not 2-d", "Gemm takes matrices (an invalid case)")
    trans_a, trans_b = bool(node.attr("transA", 0)), bool(node.attr("transB", 0))
    a2 = a.T if trans_a else a  # (M, K), a view: the kernels take strided operands
    b2 = b.T if trans_b else b  # (K, N), a view
    m, n = a2.shape[0], b2.shape[1]
    notes = [f"mat1 = {'A.T' if trans_a else 'A'}, mat2 = {'B.T' if trans_b else 'B'} (views)"]
    row_c = c is None or c.size == 1 or tuple(c.shape) in ((n,), (1, n))
    if a.dtype == np.float32 and alpha == 1.0 and (c is None or beta == 1.0) and row_c:
        args: dict[str, Any] = {"input": a2, "weight": b2.T}  # linear's weight is (N, K): B' transposed, a view
        notes = [f"weight = {'B' if trans_b else 'B.T'} (a view), input = {'A.T' if trans_a else 'A'}"]
        if c is not None:
            if c.size == 1:
                args["bias"] = np.full(n, c.reshape(()), dtype=c.dtype)
                notes.append(f"scalar C as a bias row of {n}")
            else:
                args["bias"] = c.reshape(n)
        return Plan(choose(linear, args), args, {0: _same}, notes)
    if c is None:
        bias = np.broadcast_to(np.zeros((), dtype=a.dtype), (m, n))
        beta = 0.0
        notes.append("no C: beta = 0 and a stride-0 zero as input")
    else:
        if beta == 0.0 and not np.isfinite(c).all():
            raise Inexpressible("beta=0 with a non-finite C", "ONNX's 0 * C is nan there; torch.addmm's beta == 0 "
                                "ignores its input, as BLAS does")
        try:
            bias = np.broadcast_to(c, (m, n))  # a view: stride 0 along the dims C broadcasts
        except ValueError:
            raise Inexpressible(f"C of shape {list(c.shape)}", f"does not broadcast to ({m}, {n}) (an invalid case)") from None
        if bias.shape != tuple(c.shape):
            notes.append(f"C {list(c.shape)} broadcast to ({m}, {n}) as a stride-0 view")
    args = {"input": bias, "mat1": a2, "mat2": b2, "beta": beta, "alpha": alpha}
    return Plan(choose(addmm, args), args, {0: _same}, notes, spec=addmm)


def _pool_output(size: int, kernel: int, stride: int, begin: int, end: int, ceil: bool) -> int:
    """ONNX's output length for explicit pads (ceil mode: a last window that would start in the end
    padding is dropped, as PyTorch does)."""
    span = size + begin + end - kernel
    out = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + begin:
        out -= 1
    return out


def _onnx_pads(node: Node, size: list[int], span: list[int], strides: list[int],
               ceil: bool) -> tuple[list[int], list[int], list[int], str]:
    """The padding at the start and at the end of each pooled dim, ONNX's output sizes and how the
    pads were given (an auto_pad, or ""), from ``pads`` or ``auto_pad`` (VALID, SAME_UPPER,
    SAME_LOWER as ONNX computes them) for windows spanning ``span`` (the dilated kernel)."""
    nd = len(span)
    auto = str(node.attr("auto_pad", "NOTSET") or "NOTSET")
    if auto == "NOTSET":
        pads = [int(p) for p in node.attr("pads", [0] * 2 * nd)]
        begin, end = pads[:nd], pads[nd:]
        out = [_pool_output(size[i], span[i], strides[i], begin[i], end[i], ceil) for i in range(nd)]
    elif auto == "VALID":
        begin = end = [0] * nd
        out = [-(-(size[i] - span[i] + 1) // strides[i]) for i in range(nd)]
    else:  # SAME_UPPER / SAME_LOWER: ceil(size / stride) outputs, the odd pad at the end / the start
        out = [-(-size[i] // strides[i]) for i in range(nd)]
        total = [max(0, (out[i] - 1) * strides[i] + span[i] - size[i]) for i in range(nd)]
        small, big = [t // 2 for t in total], [t - t // 2 for t in total]
        begin, end = (small, big) if auto == "SAME_UPPER" else (big, small)
    via = "" if auto == "NOTSET" else f" (auto_pad {auto})"
    return begin, end, out, via


def _pool_by_rank(kind: str) -> Translate:
    """MaxPool / AveragePool by the kernel's rank, through the ops with torch's options (max:
    dilation and ceil_mode; avg: ceil_mode and count_include_pad, no dilation): 1-d and 3-d ops, and
    the 2-d op's f32_options overload, or its plain f32 (floor mode, no dilation, padding counted)
    where that gives the same windows and divisors. AveragePool with dilations is opgen's own
    opgen.nn.avg_pool3d_dilated (the row's sixth op; torch has no dilated average pool): its
    divisor counts the taps inside the padded input or the input, as ONNX's reference does, and a
    1-d or 2-d pool is its 3-d pool of a view of X with size-1 pooled dims in front.

    Pads torch cannot take (asymmetric, or over half the kernel) are numpy.pad's first (the row's
    fourth op): -inf for MaxPool (never the largest of a window holding an element), 0 for
    AveragePool, then the pool without padding. count_include_pad=1 divides by the whole window,
    which the pool of the zero-padded input does; count_include_pad=0 divides by the window's
    elements of X: the pool of the padded X divided by operator.truediv (the row's fifth op) by
    the pool of the padded mask of X (1 on X, 0 on the pads: a constant of the shapes), that is
    (sum / K) / (count / K)."""

    def translate(node: Node, spec2: Spec, spec1: Spec, spec3: Spec, pad_op: Spec,
                  truediv: Spec | None = None, dilated: Spec | None = None) -> Plan:
        kernel = [int(k) for k in node.attr("kernel_shape", [])]
        nd = len(kernel)
        if nd not in (1, 2, 3):
            raise Inexpressible(f"{nd}-d pooling (kernel_shape {kernel})", "opgen pools over 1, 2 or 3 dims")
        spec = {1: spec1, 2: spec2, 3: spec3}[nd]
        x = _required(node, 0, "X")
        if x.ndim < nd + 2:
            raise Inexpressible(f"a {x.ndim}-d input", f"{nd}-d pooling takes (N, C, ...{nd} dims) (an invalid case)")
        strides = [int(s) for s in node.attr("strides", [1] * nd)]
        dilations = [int(d) for d in node.attr("dilations", [1] * nd)]
        if kind == "average" and any(d != 1 for d in dilations):
            # torch's avg pools have no dilation: opgen's own 3-D op has, the 1-D and 2-D pools being
            # its 3-D pool of a view with size-1 pooled dims in front (kernel 1 there: the same windows)
            assert dilated is not None
            spec = dilated
        size = [int(s) for s in x.shape[-nd:]]
        eff = [d * (k - 1) + 1 for k, d in zip(kernel, dilations)]
        ceil = bool(node.attr("ceil_mode", 0))
        begin, end, out, via = _onnx_pads(node, size, eff, strides, ceil)
        count_include_pad = bool(node.attr("count_include_pad", 0))

        def call(inp: np.ndarray, pad: list[int], extent: list[int], include: bool) -> Plan:
            """One pool call on ``inp`` (pooled dims ``extent``) with torch's symmetric ``pad``."""
            # torch's output sizes in floor or ceil mode; the one that gives ONNX's (an auto_pad's
            # count may need either)
            sizes = {c: [pool_out_size(extent[i], kernel[i], strides[i], pad[i], dilations[i], c) for i in range(nd)]
                     for c in (False, True)}
            mode = ceil if sizes[ceil] == out else (not ceil if sizes[not ceil] == out else None)
            if mode is None:
                raise Inexpressible(f"{'attribute ceil_mode=1' if ceil else 'floor mode'}{via}",
                                    f"gives {out} outputs where {spec.op} gives {sizes[False]} (floor) or "
                                    f"{sizes[True]} (ceil)")
            if nd == 2 and spec is not dilated and sizes[False] == out and all(d == 1 for d in dilations) and \
                    (kind == "max" or include or not any(pad)):
                # the plain 2-d overload: floor-mode windows (every one inside the padded input, so
                # count_include_pad=1's divisor is the full kernel), no dilation
                args: dict[str, Any] = {"input": inp, "kernel_h": kernel[0], "kernel_w": kernel[1],
                                        "stride_h": strides[0], "stride_w": strides[1], "pad_h": pad[0], "pad_w": pad[1]}
                notes = ["ceil_mode=1 gives the same windows as floor mode here"] if ceil else []
                return Plan(choose(spec, args), args, {0: _same}, notes, spec=spec)
            if spec is dilated:
                lead = (1,) * (3 - nd)
                view = inp.reshape(inp.shape[:inp.ndim - nd] + lead + inp.shape[inp.ndim - nd:])
                args = {"input": view}
                # the size-1 dims in front: kernel, stride and dilation 1, no padding
                for key, vals, front in (("kernel", kernel, 1), ("stride", strides, 1), ("pad", pad, 0),
                                         ("dilation", dilations, 1)):
                    args.update({f"{key}_{a}": int(v) for a, v in zip("dhw", [front] * (3 - nd) + list(vals))})
                args.update({"ceil_mode": mode, "count_include_pad": include})
                notes = [f"{nd}-d as the 3-d pool of a view with size-1 pooled dims in front"] if nd < 3 else []
                if mode != ceil:
                    notes.append(f"ceil_mode={int(ceil)} computed as ceil_mode={mode}: the same windows here")
                shape = inp.shape[:inp.ndim - nd] + tuple(sizes[mode])
                return Plan(choose(spec, args), args, {0: _reshape(shape)}, notes, spec=spec)
            if nd == 1:
                args = {"input": inp, "kernel": kernel[0], "stride": strides[0], "padding": pad[0]}
                if kind == "max":
                    args["dilation"] = dilations[0]
            else:
                axes = "dhw"[3 - nd:]
                args = {"input": inp}
                for key, vals in (("kernel", kernel), ("stride", strides), ("pad", pad)):
                    args.update({f"{key}_{a}": int(v) for a, v in zip(axes, vals)})
                if kind == "max":
                    args.update({f"dilation_{a}": int(v) for a, v in zip(axes, dilations)})
            args["ceil_mode"] = mode
            if kind == "average":
                args["count_include_pad"] = include
            notes = [f"ceil_mode={int(ceil)} computed as ceil_mode={mode}: the same windows here"] if mode != ceil else []
            return Plan(choose(spec, args), args, {0: _same}, notes, spec=spec)

        if begin == end and all(2 * p <= k for p, k in zip(begin, kernel)):
            return call(x, begin, size, count_include_pad)
        # torch's pools pad both ends alike, by at most half the kernel: numpy.pad first
        pads = begin + end
        if any(b >= e or a >= e for b, a, e in zip(begin, end, eff)):
            raise Inexpressible(f"pads {pads}{via}", "a window wholly in the padding")
        extent = [n + b + a for n, b, a in zip(size, begin, end)]
        floor_sizes = [pool_out_size(extent[i], kernel[i], strides[i], 0, dilations[i], False) for i in range(nd)]
        if kind == "average" and floor_sizes != out:
            raise Inexpressible(f"attribute ceil_mode=1 with pads {pads}{via}", "a window past the padded input, "
                                "whose divisor torch and ONNX count differently")
        width = [0, 0] * (x.ndim - nd) + [w for b, a in zip(begin, end) for w in (b, a)]
        fill = -math.inf if kind == "max" else 0.0
        padded = {"array": x, "pad_width": width, "mode": "constant", "constant_values": fill}
        notes = [f"pads {pads}{via} by {pad_op.op} ({fill}), then {spec.op} without padding"]
        if kind == "max" or count_include_pad:
            return Plan(choose(pad_op, padded), padded, {}, notes, spec=pad_op,
                        then=lambda y: call(y, [0] * nd, extent, True))
        assert truediv is not None
        mask = np.pad(np.ones(size, x.dtype), list(zip(begin, end))).reshape((1,) * (x.ndim - nd) + tuple(extent))
        notes.append(f"count_include_pad=0: divided by {truediv.op} by the pool of X's mask (1 on X, 0 on the pads)")

        def sums(padded_x: np.ndarray) -> Plan:
            of_x = call(padded_x, [0] * nd, extent, True)
            of_x.outputs = {}
            of_x.then = lambda pooled_x: counts(pooled_x)
            return of_x

        def counts(pooled_x: np.ndarray) -> Plan:
            of_mask = call(mask, [0] * nd, extent, True)
            of_mask.outputs = {}
            of_mask.then = lambda pooled_mask: divide(pooled_x, pooled_mask)
            return of_mask

        def divide(pooled_x: np.ndarray, pooled_mask: np.ndarray) -> Plan:
            # the dilated op's results carry its size-1 pooled dims: views of Y's shape (the
            # mask's leading dims are 1s, broadcast by the division)
            lead = x.ndim - nd
            args = {"a": pooled_x.reshape(x.shape[:lead] + tuple(out)),
                    "b": pooled_mask.reshape((1,) * lead + tuple(out))}
            return Plan(choose(truediv, args), args, spec=truediv)

        return Plan(choose(pad_op, padded), padded, {}, notes, spec=pad_op, then=sums)

    return translate


def _index_tensor(node: Node, i: int, name: str) -> np.ndarray:
    """ONNX's indices are int32 or int64; the gathers take int64, which holds every int32 exactly."""
    indices = _required(node, i, name)
    return indices.astype(np.int64) if indices.dtype == np.int32 else indices


def _gather(node: Node, spec: Spec) -> Plan:
    """Gather is numpy.take(data, indices, axis): any axis, indices counted from the end when
    negative, as both define it."""
    data, indices = _required(node, 0, "data"), _index_tensor(node, 1, "indices")
    if data.ndim == 0:
        raise Inexpressible("0-d data", "Gather needs at least 1-d data (an invalid case)")
    args = {"a": data, "indices": indices, "axis": _axis(node.attr("axis", 0), data.ndim)}
    return Plan(choose(spec, args), args)


def _gather_elements(node: Node, spec: Spec) -> Plan:
    """GatherElements is numpy.take_along_axis(data, indices, axis). ONNX lets indices be shorter
    than data along the other axes (out[i][j] reads data[indices[i][j]][j]); NumPy broadcasts them
    instead, so data is first cut to indices' extent there, which reads the same elements."""
    data, indices = _required(node, 0, "data"), _index_tensor(node, 1, "indices")
    if data.ndim != indices.ndim:
        raise Inexpressible("indices of another rank", "GatherElements needs equal ranks (an invalid case)")
    axis = _axis(node.attr("axis", 0), data.ndim)
    cut = tuple(slice(None) if d == axis else slice(0, indices.shape[d]) for d in range(data.ndim))
    notes = []
    if data[cut].shape != data.shape:
        notes.append(f"data {list(data.shape)} cut to {list(data[cut].shape)} along the other axes")
    args = {"arr": np.ascontiguousarray(data[cut]), "indices": indices, "axis": axis}
    return Plan(choose(spec, args), args, notes=notes)


def _lp_normalization(node: Node, spec: Spec, norm: Spec, truediv: Spec) -> Plan:
    """p = 2: torch.nn.functional.normalize, whose eps is checked on the data. p = 1: X divided by
    operator.truediv (the row's third op) by its L1 norm along the axis, computed by
    torch.linalg.vector_norm (ord 1, keepdim; the row's second op) from X."""
    x = _required(node, 0, "input")
    p = int(node.attr("p", 2))
    axis = int(node.attr("axis", -1))
    if p == 1:
        return _l1_normalization(node, x, axis, norm, truediv)
    if p != 2:
        raise Inexpressible(f"attribute p={p}", "ONNX allows p = 1 or 2 only (an invalid case)")
    args = {"input": x, "p": 2.0, "dim": axis, "eps": 0.0}
    overload = choose(spec, args)
    # normalize divides by max(norm, eps); ONNX by the norm (0 where it is 0). The smallest eps the
    # gate verified agrees with ONNX unless a slice's norm is positive and below it.
    eps = overload.domain["eps"].min if "eps" in overload.domain and overload.domain["eps"].min else 1e-12
    args["eps"] = float(eps)
    if x.ndim:
        norms = np.sqrt(np.sum(np.square(x.astype(np.float64)), axis=_axis(axis, x.ndim)))
        if ((norms > 0) & (norms < eps)).any():
            raise Inexpressible(f"a slice whose L2 norm is below eps={eps:g}",
                                f"ONNX divides by the norm, {spec.op} by max(norm, eps)")
    return Plan(overload, args, {0: _same}, [f"eps={eps:g} (ONNX has none; no slice's norm is below it)"])


def _l1_normalization(node: Node, x: np.ndarray, axis: int, norm: Spec, truediv: Spec) -> Plan:
    if x.ndim == 0:
        raise Inexpressible("a 0-d input", "LpNormalization needs an axis (an invalid case)")
    a = _axis(axis, x.ndim)
    if x.dtype.kind == "f" and (x < 0).any():
        # ONNX's spec takes |x|; its reference (which made the expected outputs) sums x itself
        raise Inexpressible("negative values with p=1", "ONNX's reference sums x where its spec sums |x| "
                            f"({norm.op} with ord 1); the two disagree here")
    if (np.abs(x).sum(axis=a) == 0).any():
        raise Inexpressible("a slice whose L1 norm is 0", f"ONNX gives 0 there, {truediv.op}'s 0 / 0 is nan")
    args = {"x": x, "ord": 1.0, "dim": a, "keepdim": True}

    def divide(norms: np.ndarray) -> Plan:
        quotient = {"a": x, "b": norms}
        return Plan(choose(truediv, quotient), quotient, spec=truediv)

    return Plan(choose(norm, args), args, {}, [f"p=1: X / {norm.op}(X, ord 1, keepdim) by {truediv.op}"],
                spec=norm, then=divide)


def _rms_norm(node: Node, spec: Spec) -> Plan:
    x, scale = _required(node, 0, "X"), _required(node, 1, "scale")
    axis = _axis(node.attr("axis", -1), x.ndim)
    normalized = x.shape[axis:]
    d = _prod(normalized)
    try:
        s = np.broadcast_to(scale, normalized).reshape(d)
    except ValueError:
        raise Inexpressible(f"scale {list(scale.shape)}", f"does not broadcast to {list(normalized)}") from None
    one = s.dtype.type(1) if s.dtype.kind == "f" else 1
    weight = (s - one).astype(s.dtype) if s.dtype.kind == "f" else s
    args = {"x": x.reshape(_prod(x.shape[:axis]), d), "weight": weight, "eps": float(node.attr("epsilon", 1e-5))}
    overload = choose(spec, args)
    # gemma_rms_norm multiplies by 1 + weight: with weight = fl(scale - 1) that is scale to within
    # an ulp of |scale| + 1. Within rtol / 100 relative, the result moves by that much at most: far
    # too little to turn a pass into a failure or back.
    with np.errstate(all="ignore"):
        multiplier = one + weight
        rel = np.abs(multiplier.astype(np.float64) - s) / np.abs(s.astype(np.float64))
    rel = np.where(s == 0, np.where(multiplier == 0, 0.0, np.inf), rel)
    worst = float(rel.max()) if rel.size else 0.0
    if worst > node.rtol / 100:
        raise Inexpressible("scale", f"{spec.op} multiplies by 1 + weight, and 1 + (scale - 1) in float32 is "
                            f"{worst:.2g} off scale (over rtol/100)")
    notes = [f"scale passed as weight = scale - 1 (1 + weight is within {worst:.2g} relative of scale)"]
    if len(normalized) > 1:
        notes.append(f"normalized over dims {axis}.. merged into one of {d} by a reshape")
    return Plan(overload, args, {0: _reshape(x.shape)}, notes)


def _heads(x: np.ndarray, heads: int | None, what: str) -> np.ndarray:
    """(B, S, H * D) as the (B, H, S, D) view ONNX's 3-d Attention means (``q_num_heads`` ...)."""
    if not heads or x.shape[-1] % heads:
        raise Inexpressible(f"3-d {what} without a matching {what.lower()}_num_heads",
                            "cannot split the hidden dim into heads (an invalid case)")
    b, s, hd = x.shape
    return x.reshape(b, s, heads, hd // heads).transpose(0, 2, 1, 3)


def _attention(node: Node, spec: Spec, concat: Spec, mul: Spec, matmul: Spec, truediv: Spec, tanh: Spec,
               add: Spec, softmax: Spec, where: Spec) -> Plan:
    """ONNX Attention as one call of opgen.nn.attention: the KV cache concatenated before K/V, the
    mask (bool as 0/-inf, padded to T with -inf, nonpad_kv_seqlen as -inf past each sequence's
    length) as a broadcast (B, Hq, S, T) bias view, is_causal and the windows aligned at the past
    length, softcap and scale as they are. present_key and present_value (the cache after this
    step: past then the new keys, (B, Hkv, T, D)) are numpy.concatenate's (the row's second op)
    of past_key and K (4-d views), and of past_value and V; without a past, of K (V) alone.
    qk_matmul_output (float32) is composed after those from the row's further ops, as ONNX
    computes it (_qk_matmul_output)."""
    q, k, v = _required(node, 0, "Q"), _required(node, 1, "K"), _required(node, 2, "V")
    mask, past_k, past_v, nonpad = node.input(3), node.input(4), node.input(5), node.input(6)
    three_d = q.ndim == 3
    if three_d:
        q = _heads(q, node.attr("q_num_heads"), "Q")
        k = _heads(k, node.attr("kv_num_heads"), "KV")
        v = _heads(v, node.attr("kv_num_heads"), "KV")
    dt = q.dtype  # float32, or half storage (float16, bfloat16: the f16 and bf16 overloads)
    for name, x in (("Q", q), ("K", k), ("V", v)):
        if x.dtype.name not in ("float32", "float16", "bfloat16") or x.dtype != dt:
            raise Inexpressible(f"dtype {x.dtype}", f"{spec.op} takes {name} as float32, float16 or bfloat16, "
                                "Q, K and V alike")
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise Inexpressible("Q, K, V ranks", "Attention takes 3-d or 4-d inputs (an invalid case)")
    if (past_k is None) != (past_v is None):
        raise Inexpressible("only one of past_key, past_value", "an invalid case")
    if nonpad is not None and past_k is not None:
        raise Inexpressible("nonpad_kv_seqlen with past_key", "ONNX rejects the pair (an invalid case)")
    precision = node.attr("softmax_precision")
    if precision is not None and int(precision) not in (1, 11):  # FLOAT, DOUBLE
        raise Inexpressible(f"attribute softmax_precision={precision}", f"{spec.op} computes the softmax "
                            "in float32 or wider, not in a narrower type")
    notes = []
    past = 0
    new_kv = (k, v)  # the 4-d views of this step's keys and values, before any past
    if past_k is not None:  # the KV cache and the new keys, one sequence
        past = past_k.shape[2]
        k, v = np.concatenate([past_k, k], axis=2), np.concatenate([past_v, v], axis=2)
        notes.append(f"past_key/past_value concatenated before K/V (offset {past})")
    batch, hq, s, d = q.shape
    hkv, t = k.shape[1], k.shape[2]
    if v.shape[1] != hkv or k.shape[0] != batch or v.shape[0] != batch or v.shape[2] != t or k.shape[3] != d:
        raise Inexpressible(f"K {list(k.shape)}, V {list(v.shape)}", "do not fit Q and each other (an invalid case)")
    if hkv == 0 or hq % hkv:
        raise Inexpressible(f"{hq} query heads on {hkv} key/value heads", "not grouped-query attention "
                            "(an invalid case)")
    is_causal = bool(node.attr("is_causal", 0))
    left, right = int(node.attr("left_window_size", -1)), int(node.attr("right_window_size", -1))
    if left < -1 or right < -1:
        raise Inexpressible(f"left_window_size={left}, right_window_size={right}", "below -1 (an invalid case)")
    offset = past
    offsets: list[int] | None = None  # one offset per batch entry, where they differ
    if nonpad is not None:
        lengths = np.asarray(nonpad).reshape(-1).astype(np.int64)
        if lengths.shape != (batch,):
            raise Inexpressible(f"nonpad_kv_seqlen of shape {list(np.shape(nonpad))}", f"is not one length per "
                                f"batch entry ({batch}) (an invalid case)")
        if is_causal or left >= 0 or right >= 0:
            # The causal frontier and the windows sit at nonpad_kv_seqlen[b] - S: one offset per
            # batch entry, and opgen.nn.attention takes one offset per call: where they differ, one
            # call per batch entry, the results joined by numpy.concatenate.
            if batch and not (lengths == lengths[0]).all():
                offsets = [int(n) - s for n in lengths]
                notes.append(f"is_causal/windows at offsets nonpad_kv_seqlen[b] - S = {offsets}: one {spec.op} "
                             f"call per batch entry, joined by {concat.op}")
            else:
                offset = int(lengths[0]) - s if batch else 0
                notes.append(f"is_causal/windows at offset nonpad_kv_seqlen - S = {offset} (the same for every batch)")
    softcap = float(node.attr("softcap", 0.0))
    scale = float(node.attr("scale")) if "scale" in node.attrs else 1.0 / math.sqrt(d)
    # The bias: the mask padded to T keys, bool as 0 / -inf, broadcast to (B, Hq, S, T); zeros without one.
    if mask is not None:
        if mask.dtype == bool:
            bias = np.where(mask, 0.0, -np.inf).astype(dt)
            notes.append("bool attn_mask as a 0/-inf bias")
        elif mask.dtype == dt:
            if np.isnan(mask).any() or (mask == np.inf).any():
                raise Inexpressible("attn_mask with nan or +inf", f"{spec.op}'s bias holds finite values and -inf")
            bias = mask
        else:
            raise Inexpressible(f"attn_mask of dtype {mask.dtype}", f"{spec.op} takes a bias of Q's dtype ({dt})")
        if bias.shape[-1] < t:  # ONNX pads a short mask with -inf (False)
            pad = np.full(bias.shape[:-1] + (t - bias.shape[-1],), -np.inf, dt)
            bias = np.concatenate([bias, pad], axis=-1)
            notes.append(f"attn_mask padded with -inf to {t} keys")
        try:
            bias = np.broadcast_to(bias, (batch, hq, s, t))
        except ValueError:
            raise Inexpressible(f"attn_mask of shape {list(mask.shape)}",
                                f"does not broadcast to (B, Hq, S, T) = {[batch, hq, s, t]}") from None
    else:
        bias = np.broadcast_to(np.zeros((), dt), (batch, hq, s, t))
    if nonpad is not None:  # keys from nonpad_kv_seqlen[b] on are padding: -inf
        padded = np.arange(t)[None, :] >= lengths[:, None]  # (B, T)
        bias = np.where(padded[:, None, None, :], np.float32(-np.inf), bias).astype(bias.dtype)
        notes.append("nonpad_kv_seqlen as -inf in the bias past each length")
    args: dict[str, Any] = {"q": q, "k": k, "v": v, "bias": bias, "is_causal": is_causal, "offset": offset,
                            "left_window": left, "right_window": right, "softcap": softcap, "scale": scale}
    overload = choose(spec, args)
    if three_d:
        dv = v.shape[-1]
        shape = (batch, s, hq * dv)
        notes.append("3-d inputs split into heads (views), the result merged back")
        outputs = {0: lambda y: y.transpose(0, 2, 1, 3).reshape(shape)}
    else:
        outputs = {0: _same}
    if "scale" not in node.attrs:
        notes.append(f"scale = 1/sqrt({d})")
    presents = [(position, [p for p in (past_x,) if p is not None] + [new])
                for position, past_x, new in ((1, past_k, new_kv[0]), (2, past_v, new_kv[1])) if node.wants(position)]
    after = _presents(presents, concat) if presents else None
    if presents:
        notes.append(f"{' and '.join(('present_key', 'present_value')[p - 1] for p, _ in presents)} by "
                     f"{concat.op} of {'the past and ' if past_k is not None else ''}the new (4-d views)")
    if node.wants(3) and dt == np.float32:
        frontier = np.asarray(offsets if offsets is not None else [offset] * batch, np.int64)
        full_bias = bias + _causal_window_bias(s, t, frontier, is_causal, left, right)
        qk = _qk_matmul_output(q, k, np.float32(math.sqrt(scale)), softcap, int(node.attr("qk_matmul_output_mode", 0)),
                               full_bias, (mul, matmul, truediv, tanh, add, softmax, where))
        notes.append(f"qk_matmul_output (mode {int(node.attr('qk_matmul_output_mode', 0))}) composed after "
                     f"{spec.op} as ONNX computes it")
        after = _then(after, qk) if after is not None else qk
    if offsets is not None:
        return _per_batch(args, offsets, spec, concat, outputs[0], notes, after)
    return Plan(overload, args, outputs, notes, then=after)


def _then(first: Callable[[Any], Plan], second: Callable[[Any], Plan]) -> Callable[[Any], Plan]:
    """The steps of ``first`` (a chain of plans), then those of ``second``."""

    def step(result: Any) -> Plan:
        plan = first(result)
        plan.then = _then(plan.then, second) if plan.then is not None else second
        return plan

    return step


def _causal_window_bias(s: int, t: int, frontier: np.ndarray, is_causal: bool, left: int, right: int) -> np.ndarray:
    """ONNX Attention's causal and sliding-window terms of the bias, (B, 1, S, T), 0 or -inf (a
    constant of the shapes): query i of batch entry b sits at position frontier[b] + i; it attends
    key j iff j <= that position (is_causal), and within left_window_size before and
    right_window_size after it (each where >= 0)."""
    diff = np.arange(s)[None, :, None] + frontier[:, None, None] - np.arange(t)[None, None, :]  # (B, S, T)
    allowed = np.ones(diff.shape, bool)
    if is_causal:
        allowed &= diff >= 0
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= -diff <= right
    return np.where(allowed, np.float32(0), np.float32(-np.inf))[:, None]


def _qk_matmul_output(q: np.ndarray, k: np.ndarray, root_scale: np.float32, softcap: float, mode: int,
                      bias: np.ndarray, specs: tuple[Spec, ...]) -> Callable[[Any], Plan]:
    """ONNX Attention's qk_matmul_output, step by step as ONNX's reference computes it (Q and K
    each times sqrt(scale) in float32, then their product): operator.mul for Q and for K (the KV
    cache included), operator.matmul of Q viewed as (B, Hkv, Hq/Hkv, S, D) and K^T viewed as
    (B, Hkv, 1, D, T) (grouped-query heads repeated by broadcasting, as ONNX's np.repeat pairs
    query head h with key head h // (Hq/Hkv)); softcap c > 0 as c * tanh(x / c) (operator.truediv,
    numpy.tanh, operator.mul). Modes 0 and 1 stop there (ONNX's reference gives the softcapped
    product for both); mode 2 adds the whole bias (mask, causal, windows, padding: operator.add);
    mode 3 is the softmax of that over the keys (torch.nn.functional.softmax), rows whose bias is
    all -inf set to 0 (numpy.where), as ONNX does."""
    mul, matmul, truediv, tanh, add, softmax, where = specs
    batch, hq, s, d = q.shape
    hkv, t = k.shape[1], k.shape[2]
    shape = (batch, hq, s, t)
    if mode not in (0, 1, 2, 3):
        raise Inexpressible(f"attribute qk_matmul_output_mode={mode}", "ONNX defines modes 0 to 3 (an invalid case)")
    tail: list[Callable[[np.ndarray], Plan]] = []
    if softcap > 0:
        cap = np.asarray(softcap, np.float32)
        tail += [lambda x: _call(truediv, {"a": x, "b": cap}), lambda x: _call(tanh, {"x": x}),
                 lambda x: _call(mul, {"a": x, "b": cap})]
    if mode >= 2:
        tail.append(lambda x: _call(add, {"a": x, "b": bias}))
    if mode == 3:
        masked = np.isneginf(bias.max(axis=-1, keepdims=True))  # (..., S, 1): no key attended
        tail += [lambda x: _call(softmax, {"x": x, "dim": -1}),
                 lambda x: _call(where, {"condition": masked, "x": np.zeros((), np.float32), "y": x})]
    root = np.asarray(root_scale, np.float32)

    def scaled_q(_: Any) -> Plan:
        return _call(mul, {"a": q, "b": root}, then=scaled_k)

    def scaled_k(qs: np.ndarray) -> Plan:
        return _call(mul, {"a": k, "b": root}, then=lambda ks: product(qs, ks))

    def product(qs: np.ndarray, ks: np.ndarray) -> Plan:
        args = {"a": qs.reshape(batch, hkv, hq // hkv, s, d), "b": ks[:, :, None].swapaxes(-1, -2)}
        return last(_call(matmul, args), 0)

    def last(plan: Plan, i: int) -> Plan:
        """``plan`` (the product, or tail step i - 1) gives the output, or feeds tail step i."""
        if i == len(tail):
            plan.outputs = {3: _reshape(shape)}
        else:
            plan.then = lambda x: last(tail[i](x.reshape(shape)), i + 1)
        return plan

    return scaled_q


def _call(spec: Spec, args: dict[str, Any], then: Callable[[Any], Plan] | None = None) -> Plan:
    """One intermediate step of a composed plan: no ONNX output of its own."""
    return Plan(choose(spec, args), args, {}, spec=spec, then=then)


def _per_batch(args: dict[str, Any], offsets: list[int], spec: Spec, concat: Spec,
               output: Callable[[np.ndarray], np.ndarray], notes: list[str],
               after: Callable[[Any], Plan] | None) -> Plan:
    """One attention call per batch entry b (Q, K, V and the bias sliced to b:b+1, views) at its
    own offset, one after the other; then numpy.concatenate joins the results along the batch
    (``output`` turns the join into ONNX's Y), and ``after`` plans the steps after that."""
    batch_args = ("q", "k", "v", "bias")
    results: list[np.ndarray] = []

    def call(b: int) -> Plan:
        one = {**args, **{name: args[name][b:b + 1] for name in batch_args}, "offset": offsets[b]}
        return Plan(choose(spec, one), one, {}, notes if b == 0 else [], spec=spec, then=lambda y: collect(y))

    def collect(y: np.ndarray) -> Plan:
        results.append(y)
        if len(results) < len(offsets):
            return call(len(results))
        joined = {"arrays": list(results), "axis": 0}
        return Plan(choose(concat, joined), joined, {0: output}, spec=concat, then=after)

    return call(0)


def _presents(presents: list[tuple[int, list[np.ndarray]]], concat: Spec) -> Callable[[Any], Plan]:
    """The steps after the attention call: one numpy.concatenate call along the sequence (axis 2)
    for each ONNX output ``position`` of ``presents``, of its arrays (past, then new)."""

    def step(_: Any) -> Plan:
        (position, arrays), rest = presents[0], presents[1:]
        args = {"arrays": arrays, "axis": 2}
        return Plan(choose(concat, args), args, {position: _same}, spec=concat,
                    then=_presents(rest, concat) if rest else None)

    return step


def _rotary(node: Node, spec: Spec) -> Plan:
    """ONNX RotaryEmbedding as one call of opgen.nn.apply_rotary: a 3-d (B, S, hidden) input split
    into num_heads heads as the (B, H, S, D) view, a 4-d one as it is; cos_cache/sin_cache gathered
    by position_ids (data movement: the cache rows indexed) or used as they are (B, S, R); the
    tables viewed as (B, 1, S, R) to broadcast over the heads; rotary_embedding_dim (0: the head
    dim) checked against 2R; interleaved as the bool. The result is transposed and merged back."""
    x = _required(node, 0, "X")
    cos, sin = _required(node, 1, "cos_cache"), _required(node, 2, "sin_cache")
    position_ids = node.input(3)
    for name, a in (("X", x), ("cos_cache", cos), ("sin_cache", sin)):
        if a.dtype != np.float32:  # float16, bfloat16: no overload
            raise Inexpressible(f"dtype {a.dtype}", f"{spec.op} takes {name} as float32 only")
    notes = []
    three_d = x.ndim == 3
    if three_d:
        x = _heads(x, node.attr("num_heads"), "X")
        notes.append("3-d input split into num_heads heads (a view), the result merged back")
    if x.ndim != 4:
        raise Inexpressible(f"a {x.ndim}-d input", "RotaryEmbedding takes 3-d or 4-d inputs (an invalid case)")
    batch, heads, s, d = x.shape
    if position_ids is not None:
        ids = np.asarray(position_ids)
        if ids.shape != (batch, s):
            raise Inexpressible(f"position_ids of shape {list(ids.shape)}", f"is not (B, S) = {[batch, s]} "
                                "(an invalid case)")
        if cos.ndim != 2 or sin.shape != cos.shape:
            raise Inexpressible(f"caches of shapes {list(cos.shape)}, {list(sin.shape)} with position_ids",
                                "are not (max_position, R) (an invalid case)")
        if ids.size and (ids.min() < 0 or ids.max() >= cos.shape[0]):
            raise Inexpressible("position_ids out of range", "NumPy's indexing would wrap a negative id or "
                                "fail past the cache (an invalid case)")
        cos, sin = cos[ids], sin[ids]  # (B, S, R): the cache rows, indexed
        notes.append("cos_cache/sin_cache rows gathered by position_ids")
    if cos.shape != (batch, s, cos.shape[-1]) or sin.shape != cos.shape:
        raise Inexpressible(f"caches of shapes {list(cos.shape)}, {list(sin.shape)}",
                            f"are not (B, S, R) with (B, S) = {[batch, s]} (an invalid case)")
    r = cos.shape[-1]
    rotary_dim = int(node.attr("rotary_embedding_dim", 0) or 0)
    if rotary_dim == 0:
        rotary_dim = d  # ONNX: full rotation
    if rotary_dim != 2 * r:
        raise Inexpressible(f"rotary_embedding_dim {rotary_dim} with caches {r} wide",
                            "ONNX needs the caches rotary_embedding_dim / 2 wide (an invalid case)")
    if rotary_dim > d:
        raise Inexpressible(f"rotary_embedding_dim {rotary_dim} > head dim {d}", "an invalid case")
    args: dict[str, Any] = {"x": x, "cos": cos[:, None], "sin": sin[:, None],
                            "interleaved": bool(node.attr("interleaved", 0))}
    notes.append("cos/sin viewed as (B, 1, S, R) over the heads")
    overload = choose(spec, args)
    if three_d:
        shape = (batch, s, heads * d)
        outputs = {0: lambda y: y.transpose(0, 2, 1, 3).reshape(shape)}
    else:
        outputs = {0: _same}
    return Plan(overload, args, outputs, notes)


# --------------------------------------------------------------------------------- the table

# Why each row's casts give ONNX's result exactly (through_casts).
_HALF_TO_FLOAT = {"float16": "float32"}
_BOOL_TO_FLOAT = {"bool": "float32"}
_SELECTS = ("the result is one of the inputs' values (or nan), which every cast here carries there and back "
            "unchanged")
_REMAINDER = ("NumPy computes float16 % and fmod in float32 and rounds once, which is the cast back; an integer "
              "remainder is smaller than its divisor, so int64's fits int32 exactly")
_TRUNCATED = ("an int32 quotient (INT_MIN / -1 refused) and every step's value (the remainder, the multiple of B "
              "towards zero) fit int32, so int64's steps give the same values and the cast back keeps them")
_WRAPPING_SUM = ("the int64 prefix sums equal int32's modulo 2**32, and the cast back keeps the low 32 bits: "
                 "int32's wrapped sums")
_POW_MIXED = ("ONNX's reference is np.power(A, B).astype(A.dtype), and NumPy computes np.power of mixed dtypes in "
              "their promotion, so casting both there (exact for every value the cases hold) and the result "
              "to A's dtype is the same computation")

MAPPINGS: tuple[Mapping, ...] = (
    Mapping("Add", "operator.add", _binary, "A + B, NumPy broadcasting"),
    Mapping("Mul", "operator.mul", _binary, "A * B, NumPy broadcasting"),
    Mapping("Pow", "operator.pow", through_casts(_binary, promoted_then_as(0), _POW_MIXED), "A ** B; mixed dtypes "
            "computed in NumPy's promotion of the two, the result cast to A's dtype", others=("opgen.cast",)),
    Mapping("Equal", "operator.eq", _binary, "A == B"),
    Mapping("Less", "operator.lt", _binary, "A < B"),
    Mapping("LessOrEqual", "operator.le", _binary, "A <= B"),
    Mapping("Greater", "operator.gt", _binary, "A > B"),
    Mapping("GreaterOrEqual", "operator.ge", _binary, "A >= B"),
    Mapping("MatMul", "operator.matmul", _matmul, "A @ B; a 1-d operand as (1, k) or (k, 1), as NumPy does"),
    Mapping("Sub", "operator.sub", _binary, "A - B, NumPy broadcasting"),
    Mapping("Div", "operator.truediv", through_casts(_div, widened({"int32": "int64"}), _TRUNCATED),
            "A / B, NumPy broadcasting; on integers operator.floordiv where truncation and flooring agree on the "
            "data, else (A - numpy.fmod(A, B)) // B (operator.sub, operator.floordiv); int32 that lacks an overload "
            "computed in int64",
            others=("operator.floordiv", "numpy.fmod", "operator.sub", "opgen.cast")),
    Mapping("Max", "numpy.maximum", through_casts(_variadic_fold, widened(_HALF_TO_FLOAT), _SELECTS),
            "numpy.maximum, N inputs as a left fold of calls, one as maximum(x, x) (NaN propagates); float16 "
            "computed in float32", others=("opgen.cast",)),
    Mapping("Min", "numpy.minimum", through_casts(_variadic_fold, widened(_HALF_TO_FLOAT), _SELECTS),
            "numpy.minimum, N inputs as a left fold of calls, one as minimum(x, x) (NaN propagates); float16 "
            "computed in float32", others=("opgen.cast",)),
    Mapping("Exp", "numpy.exp", _unary, "exp(X)"),
    Mapping("Log", "numpy.log", _unary, "log(X)"),
    Mapping("Sqrt", "numpy.sqrt", _unary, "sqrt(X)"),
    Mapping("Tanh", "numpy.tanh", _unary, "tanh(X)"),
    Mapping("Abs", "numpy.abs", _unary, "|X|"),
    Mapping("Neg", "numpy.negative", _unary, "-X"),
    Mapping("Sin", "numpy.sin", _unary, "sin(X)"),
    Mapping("Cos", "numpy.cos", _unary, "cos(X)"),
    Mapping("Erf", "torch.erf", _unary, "erf(X)"),
    Mapping("Floor", "numpy.floor", _unary, "floor(X)"),
    Mapping("Ceil", "numpy.ceil", _unary, "ceil(X)"),
    Mapping("Round", "numpy.rint", _unary, "round half to even (numpy.rint)"),
    Mapping("Sign", "numpy.sign", _unary, "sign(X) (float: nan stays nan, -0 gives +0; int64)"),
    Mapping("Reciprocal", "numpy.reciprocal", _unary, "1 / X"),
    Mapping("Clip", "numpy.clip", _clip, "scalar min/max (inputs, or opset < 11 attributes); a missing bound "
            "is the dtype's extreme; min > max gives max"),
    Mapping("Relu", "torch.nn.functional.relu", _unary, "max(X, 0)"),
    Mapping("Sigmoid", "torch.sigmoid", _unary, "1 / (1 + exp(-X))"),
    Mapping("LeakyRelu", "torch.nn.functional.leaky_relu", _leaky_relu, "alpha as negative_slope (default 0.01)"),
    Mapping("Softplus", "torch.nn.functional.softplus", _softplus,
            "beta = 1, threshold = 20 (ONNX has none: x above 20, within 2.1e-9)"),
    Mapping("Elu", "torch.nn.functional.elu", _elu, "alpha (default 1.0)"),
    Mapping("HardSwish", "torch.nn.functional.hardswish", _unary, "X * relu6(X + 3) / 6"),
    Mapping("Mish", "torch.nn.functional.mish", _unary, "X * tanh(softplus(X))"),
    Mapping("Mod", "operator.mod", through_casts(_mod, widened({**_HALF_TO_FLOAT, "int32": "int64"}), _REMAINDER),
            "fmod=0: A % B with the divisor's sign; fmod=1: numpy.fmod, the dividend's sign; NumPy broadcasting "
            "(x % 0 is 0 on ints); float16 computed in float32, int32 in int64", others=("numpy.fmod", "opgen.cast")),
    Mapping("Where", "numpy.where", _where, "condition ? X : Y, the three broadcast together"),
    Mapping("And", "numpy.logical_and", _binary, "A and B on bool tensors, NumPy broadcasting"),
    Mapping("Or", "numpy.logical_or", _binary, "A or B on bool tensors, NumPy broadcasting"),
    Mapping("Xor", "numpy.logical_xor", _binary, "A xor B on bool tensors, NumPy broadcasting"),
    Mapping("Not", "numpy.logical_not", _unary, "not X on a bool tensor"),
    Mapping("ReduceSum", "numpy.sum", _reduce_sum, "sum over one axis, or adjacent axes merged by a reshape; "
            "keepdims by a reshape; noop_with_empty_axes=1 without axes as the sum over an added dim of 1"),
    Mapping("ReduceMean", "numpy.mean", _reduce_one(),
            "mean over one axis, or adjacent axes merged by a reshape; keepdims as ONNX's"),
    Mapping("ReduceMax", "numpy.max", through_casts(_reduce_one(identity=-math.inf), widened(_BOOL_TO_FLOAT),
                                                    _SELECTS, data=(0,)),
            "max over one axis or adjacent axes merged by a reshape (NaN propagates); an empty set padded with "
            "-inf by numpy.pad first; bool computed in float32", others=("numpy.pad", "opgen.cast")),
    Mapping("ReduceMin", "numpy.min", through_casts(_reduce_one(identity=math.inf), widened(_BOOL_TO_FLOAT),
                                                    _SELECTS, data=(0,)),
            "min over one axis or adjacent axes merged by a reshape (NaN propagates); an empty set padded with "
            "+inf by numpy.pad first; bool computed in float32", others=("numpy.pad", "opgen.cast")),
    Mapping("ReduceProd", "numpy.prod", _reduce_one(),
            "product over one axis, or adjacent axes merged by a reshape (an empty set gives 1)"),
    Mapping("ReduceLogSumExp", "torch.logsumexp", _reduce_one(data="input", axis="dim", keepdims="keepdim"),
            "log-sum-exp over one axis, or adjacent axes merged by a reshape (an empty set gives -inf)"),
    Mapping("ReduceL1", "torch.linalg.vector_norm", _reduce_one(data="x", axis="dim", keepdims="keepdim", fixed={"ord": 1.0}),
            "ord 1 over one axis, or adjacent axes merged by a reshape (an empty set gives 0)"),
    Mapping("ReduceL2", "torch.linalg.vector_norm", _reduce_one(data="x", axis="dim", keepdims="keepdim", fixed={"ord": 2.0}),
            "ord 2 over one axis, or adjacent axes merged by a reshape (an empty set gives 0)"),
    Mapping("ArgMax", "numpy.argmax", _arg_extreme, "axis, keepdims; select_last_index=1 as argmax on the axis "
            "reversed (a view), then n - 1 - i by operator.sub", others=("operator.sub",)),
    Mapping("ArgMin", "numpy.argmin", _arg_extreme, "axis, keepdims; select_last_index=1 as argmin on the axis "
            "reversed (a view), then n - 1 - i by operator.sub", others=("operator.sub",)),
    Mapping("CumSum", "numpy.cumsum", through_casts(_cumsum, widened({"int32": "int64"}), _WRAPPING_SUM, data=(0,)),
            "prefix sum; reverse=1 on reversed views; exclusive=1 as the sum without the last element, then "
            "numpy.pad puts 0 in front; int32 computed in int64", others=("numpy.pad", "opgen.cast")),
    Mapping("Softmax", "torch.nn.functional.softmax", _softmax, "softmax along axis (opset < 13: coerced to 2-d)"),
    Mapping("LogSoftmax", "torch.nn.functional.log_softmax", _softmax,
            "log-softmax along axis (opset < 13: coerced to 2-d)"),
    Mapping("Gelu", "torch.nn.functional.gelu", _gelu, "approximate none or tanh"),
    Mapping("TopK", "torch.topk", _topk, "K input (or the k attribute before opset 10), axis, largest, sorted; "
            "Values and Indices (ties: the lower index first, as both say)"),
    Mapping("LayerNormalization", "torch.nn.functional.layer_norm", _layer_norm,
            "the trailing dims from axis merged into one; Y by layer_norm, or with Mean and InvStdDev all three "
            "by torch.native_layer_norm (float32; other dtypes Y only); needs B", others=("torch.native_layer_norm",)),
    Mapping("Gemm", "torch.nn.functional.linear", _gemm,
            "linear for alpha = 1 with no C or beta = 1 and C one row; else torch.addmm (alpha, beta, C broadcast "
            "to (M, N) as a stride-0 view; no C: beta = 0); transposes as views", others=("torch.addmm",)),
    Mapping("MaxPool", "torch.nn.functional.max_pool2d", _pool_by_rank("max"),
            "1-d, 2-d or 3-d by kernel rank: symmetric pads up to half the kernel, others by numpy.pad (-inf) "
            "first; dilations and ceil_mode (2-d: the f32_options overload where the plain one's floor-mode windows "
            "differ); Y only (not Indices)",
            others=("torch.nn.functional.max_pool1d", "torch.nn.functional.max_pool3d", "numpy.pad")),
    Mapping("AveragePool", "torch.nn.functional.avg_pool2d", _pool_by_rank("average"),
            "as MaxPool; dilations by opgen.nn.avg_pool3d_dilated (1-d and 2-d as a view with size-1 pooled dims "
            "in front); count_include_pad either way; other pads by numpy.pad (0) first, "
            "count_include_pad=0 then divided by the pool of X's mask (operator.truediv)",
            others=("torch.nn.functional.avg_pool1d", "torch.nn.functional.avg_pool3d", "numpy.pad",
                    "operator.truediv", "opgen.nn.avg_pool3d_dilated")),
    Mapping("Gather", "numpy.take", _gather, "any axis; negative indices counted from the end; int32 indices as int64"),
    Mapping("GatherElements", "numpy.take_along_axis", _gather_elements,
            "any axis; data cut to the indices' extent along the other axes; int32 indices as int64"),
    Mapping("LpNormalization", "torch.nn.functional.normalize", _lp_normalization,
            "p = 2, eps at the gate's smallest (no slice's norm below it); p = 1 as X / vector_norm(X, ord 1) "
            "by operator.truediv", others=("torch.linalg.vector_norm", "operator.truediv")),
    Mapping("RMSNormalization", "opgen.nn.gemma_rms_norm", _rms_norm, "weight = scale - 1 where that is exact enough"),
    Mapping("Attention", "opgen.nn.attention", _attention,
            "float32; the mask as a 0/-inf-padded bias view, past_key/past_value concatenated, causal and windows "
            "at the past length; present_key/present_value by numpy.concatenate; qk_matmul_output (float32) composed "
            "as ONNX computes it: Q and K times sqrt(scale) (operator.mul), their product (operator.matmul), softcap "
            "(operator.truediv, numpy.tanh, operator.mul), mode 2 + the bias (operator.add), mode 3 its softmax "
            "(torch.nn.functional.softmax) with fully masked rows 0 (numpy.where); "
            "nonpad_kv_seqlen with is_causal or windows only where one length serves every batch entry",
            others=("numpy.concatenate", "operator.mul", "operator.matmul", "operator.truediv", "numpy.tanh",
                    "operator.add", "torch.nn.functional.softmax", "numpy.where")),
    Mapping("RotaryEmbedding", "opgen.nn.apply_rotary", _rotary,
            "float32; 3-d split into heads by num_heads; the caches' rows gathered by position_ids, viewed as "
            "(B, 1, S, R); rotary_embedding_dim = 2R; interleaved"),
    Mapping("Transpose", "numpy.transpose", _transpose, "perm as axes (default: the dims reversed)"),
    Mapping("Reshape", "numpy.reshape", _reshape_node,
            "shape as the list; allowzero=0 zeros resolved to the input's dims; -1 as in NumPy"),
    Mapping("Unsqueeze", "numpy.expand_dims", _unsqueeze, "one axis (input or attribute); several as numpy.reshape",
            others=("numpy.reshape",)),
    Mapping("Expand", "numpy.broadcast_to", _expand,
            "shape as the input's shape and shape broadcast together (ONNX's two-way rule), then one way"),
    Mapping("Concat", "numpy.concatenate", _concat, "every input as the list, axis as the attribute"),
    Mapping("Squeeze", "numpy.squeeze", _squeeze, "one axis; several (or every dim of 1) as numpy.reshape",
            others=("numpy.reshape",)),
    Mapping("Flatten", "numpy.reshape", _flatten, "reshape to (prod(shape[:axis]), prod(shape[axis:])), axis in [-r, r]"),
    Mapping("Pad", "numpy.pad", _pad, "pads (begins, then ends, over axes) as a (before, after) pair per dim; "
            "mode constant, edge, reflect or wrap; the constant as constant_values; negative pads inexpressible"),
    Mapping("Tile", "numpy.tile", _tile, "repeats as reps"),
    Mapping("GlobalAveragePool", "numpy.mean", _global_pool(),
            "the spatial dims merged by a reshape, numpy.mean over them, reshaped to (N, C, 1, ...)"),
    Mapping("GlobalMaxPool", "numpy.max", _global_pool(empty_error="numpy.max raises ValueError for an empty set"),
            "the spatial dims merged by a reshape, numpy.max over them, reshaped to (N, C, 1, ...)"),
    Mapping("Trilu", "torch.triu", _trilu, "upper=1 as torch.triu, upper=0 as torch.tril; k as diagonal (default 0)",
            others=("torch.tril",)),
)
