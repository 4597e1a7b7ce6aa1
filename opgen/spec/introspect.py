"""What a reference callable says about itself: the parameters and the dtype overloads a spec draft starts from.

``opgen spec new`` resolves a dotted name (``numpy.tanh``, ``torch.nn.functional.silu``) and reads:

* a NumPy ufunc's ``nin``/``nout`` and its loops (``types``: ``'f->f'``, ``'dd->d'``), keeping those whose
  dtypes are all float32, float64 or int64 (and a bool result), and the parameter names of its
  docstring's signature line (``arctan2(x1, x2, /, ...)``);
* a PyTorch op's Python signature (``inspect``) or, for a builtin, its ATen schema
  (``torch._C._jit_get_schemas_for_operator``): tensors, numbers, ints, their defaults and whether they are
  keyword-only. The reference is called positionally (``opgen.references.call_reference``), so keyword-only
  parameters and flags such as ``inplace`` are left out and take their defaults; the dtypes come from
  calling it on float32, float64 and int64 tensors.

Anything else is refused with a hint: the drafter handles elementwise ops (and ones with an axis parameter
that keep the input's shape), which is what people add one at a time.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from opgen.errors import OpgenError
from opgen.references import call_reference, resolve
from opgen.spec.dtypes import numpy_dtype

# The dtypes a draft offers overloads for (opgen.spec.dtypes knows more; these are the ones shipped
# specs use); a bool result is kept too (comparisons, isnan).
DRAFT_DTYPES = ("float32", "float64", "int64")
SHORT = {"float32": "f32", "float64": "f64", "int64": "i64", "bool": "bool"}
DROPPED_PARAMS = {"inplace", "out"}  # flags a native kernel has no use for: they take their defaults
AXIS_NAMES = {"dim", "axis"}
PROBE_SHAPE = (3, 5)


@dataclass
class Param:
    name: str
    kind: str  # tensor | float | int | axis
    default: Any = None  # a scalar's default (the draft's only choice for it)


@dataclass
class Loop:
    """One dtype overload: the dtype of each tensor parameter and of the result."""

    inputs: tuple[str, ...]
    output: str

    @property
    def name(self) -> str:
        ins = [SHORT[d] for d in self.inputs]
        return ins[0] if len(set(ins)) == 1 else "_".join(ins)


@dataclass
class Introspected:
    op: str
    reference: str
    kind: str  # ufunc | torch
    fn: Callable[..., Any]
    params: list[Param]
    loops: list[Loop]
    shape: str  # same_as | elementwise
    doc: str  # the first sentence of the docstring, if any
    notes: list[str] = field(default_factory=list)  # what was left out, and why

    @property
    def tensors(self) -> list[Param]:
        return [p for p in self.params if p.kind == "tensor"]


def introspect(name: str) -> Introspected:
    try:
        fn = resolve(name)
    except LookupError:
        raise OpgenError(f"{name} does not resolve to a callable",
                         hint="give the dotted import path of a NumPy ufunc or a PyTorch op, e.g. numpy.tanh, "
                              "numpy.arctan2, torch.nn.functional.silu or torch.special.erf") from None
    if isinstance(fn, np.ufunc):
        return _ufunc(name, fn)
    if name.startswith("torch."):
        return _torch(name, fn)
    raise OpgenError(f"{name} is neither a NumPy ufunc nor a PyTorch op, so its dtypes cannot be read from it",
                     hint="write the spec by hand (docs/writing-specs.md), starting from a shipped spec such as "
                          "specs/numpy/exp.yaml")


# ---------------------------------------------------------------------------------------- NumPy


def _ufunc(name: str, fn: np.ufunc) -> Introspected:
    if fn.nout != 1:
        raise OpgenError(f"{name} has {fn.nout} outputs; a native kernel returns one",
                         hint="write a spec per output by hand, with a reference in opgen/references.py that returns it")
    notes: list[str] = []
    loops: list[Loop] = []
    left: set[str] = set()
    for t in fn.types:
        ins, out = t.split("->")
        try:
            names = [numpy_dtype(c).name for c in ins] + [numpy_dtype(out).name]
        except TypeError:
            left.add(t)
            continue
        if all(n in DRAFT_DTYPES for n in names[:-1]) and (names[-1] in DRAFT_DTYPES or names[-1] == "bool"):
            loop = Loop(tuple(names[:-1]), names[-1])
            if loop not in loops:
                loops.append(loop)
        else:
            left.add(t)
    if not loops:
        raise OpgenError(f"{name} has no loop over {', '.join(DRAFT_DTYPES)} (its loops: {', '.join(fn.types)})",
                         hint="write the spec by hand (docs/writing-specs.md)")
    if left:
        notes.append(f"left out the loops {', '.join(sorted(left))} (dtypes other than {', '.join(DRAFT_DTYPES)}); "
                     "add overloads for them by hand if you need them")
    names = _doc_params(fn, fn.nin)
    params = [Param(n, "tensor") for n in names]
    return Introspected(name, name, "ufunc", fn, params, loops, "same_as" if fn.nin == 1 else "elementwise",
                        _first_sentence(fn.__doc__, skip_signature=True), notes)


def _doc_params(fn: np.ufunc, nin: int) -> list[str]:
    """NumPy's own parameter names, from the docstring's first line (``arctan2(x1, x2, /, ...)``)."""
    head = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
    m = re.match(r"\w+\(([^/\[]*)", head)
    found = [p.strip() for p in m.group(1).split(",") if p.strip()] if m else []
    if len(found) == nin and all(re.fullmatch(r"[a-z][a-z0-9_]*", p) for p in found):
        return found
    return ["x"] if nin == 1 else [f"x{i + 1}" for i in range(nin)]


def _first_sentence(doc: str | None, skip_signature: bool = False) -> str:
    lines = [ln.strip() for ln in (doc or "").strip().splitlines()]
    if skip_signature and lines and "(" in lines[0]:
        lines = lines[1:]
    text = " ".join(ln for ln in _paragraph(lines))
    m = re.match(r"(.+?\.)(\s|$)", text)
    sentence = (m.group(1) if m else text).replace("``", "").replace("`", "")
    return sentence if len(sentence) <= 120 else ""


def _paragraph(lines: list[str]) -> list[str]:
    out: list[str] = []
    for ln in lines:
        if not ln:
            if out:
                break
            continue
        out.append(ln)
    return out


# ---------------------------------------------------------------------------------------- PyTorch


def _torch(name: str, fn: Callable[..., Any]) -> Introspected:
    notes: list[str] = []
    try:
        params = _python_params(fn, notes)
    except (TypeError, ValueError):
        params = _schema_params(name, fn, notes)
    tensors = [p for p in params if p.kind == "tensor"]
    if not tensors:
        raise OpgenError(f"{name} takes no tensor (as far as its signature says)",
                         hint="write the spec by hand (docs/writing-specs.md)")
    axis = next((p for p in params if p.kind == "axis"), None)
    shape, loops = _torch_loops(name, params, notes)
    if not loops:
        raise OpgenError(f"{name} accepts none of {', '.join(DRAFT_DTYPES)} tensors keeping their dtype and shape "
                         "(the drafter handles elementwise ops): " + "; ".join(notes[-len(DRAFT_DTYPES):]),
                         hint="write the spec by hand (docs/writing-specs.md)")
    if axis is not None and len(tensors) > 1:
        raise OpgenError(f"{name} has an axis parameter and several tensors; the drafter handles one tensor with an axis",
                         hint="write the spec by hand, starting from specs/torch/nn/functional/softmax.yaml")
    return Introspected(name, name, "torch", fn, params, loops, shape, _first_sentence(getattr(fn, "__doc__", "")), notes)


def _python_params(fn: Callable[..., Any], notes: list[str]) -> list[Param]:
    sig = inspect.signature(fn)
    params: list[Param] = []
    for p in sig.parameters.values():
        if p.name in DROPPED_PARAMS or p.name.startswith("_"):
            if p.name in DROPPED_PARAMS:
                notes.append(f"left out {p.name} (a flag the native kernel has no use for; the reference takes "
                             f"its default {p.default!r})")
            continue
        if p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD, p.VAR_POSITIONAL):
            notes.append(f"left out {p.name} (keyword-only: the reference is called positionally, so it takes its "
                         "default; wrap the reference in opgen/references.py to expose it)")
            continue
        ann = str(p.annotation)
        if p.default is p.empty and ("Tensor" in ann or p.annotation is p.empty):
            params.append(Param(p.name, "tensor"))
        elif p.name in AXIS_NAMES:
            params.append(Param(p.name, "axis"))
        elif p.default is None:
            notes.append(f"left out {p.name} (optional, default None: the reference uses its default)")
        elif isinstance(p.default, bool):
            notes.append(f"left out {p.name} (a flag: the reference takes its default {p.default!r})")
        elif isinstance(p.default, (int, float)):
            params.append(Param(p.name, "float" if isinstance(p.default, float) or "float" in ann else "int",
                                p.default))
        else:
            notes.append(f"left out {p.name} (default {p.default!r}: the reference takes it)")
    return params


def _schema_params(name: str, fn: Callable[..., Any], notes: list[str]) -> list[Param]:
    # torch (seconds to import) only for drafting a torch op
    import torch

    op = getattr(fn, "__name__", name.rsplit(".", 1)[-1])
    schemas = [s for s in torch._C._jit_get_schemas_for_operator(f"aten::{op}") if s.overload_name == ""]
    if not schemas:
        raise OpgenError(f"{name} has neither a Python signature nor an ATen schema aten::{op}",
                         hint="write the spec by hand (docs/writing-specs.md)")
    params: list[Param] = []
    for a in schemas[0].arguments:
        kind = str(a.type)
        pname = "input" if a.name == "self" else a.name
        if a.kwarg_only:
            notes.append(f"left out {pname} (keyword-only in {name}: the reference is called positionally, so it "
                         f"takes its default {a.default_value!r}; wrap the reference in opgen/references.py, as "
                         "opgen.references.gelu does, to expose it)")
        elif kind == "Tensor":
            params.append(Param(pname, "tensor"))
        elif pname in AXIS_NAMES and kind.startswith("int"):
            params.append(Param(pname, "axis"))
        elif kind in ("float", "number", "Scalar") and a.default_value is not None:
            params.append(Param(pname, "float", float(a.default_value)))
        elif kind == "int" and a.default_value is not None:
            params.append(Param(pname, "int", int(a.default_value)))
        else:
            notes.append(f"left out {pname} ({kind}, default {a.default_value!r}: the reference takes it)")
            if a.default_value is None:
                raise OpgenError(f"{name}'s parameter {pname} ({kind}) has no default the drafter could leave it at",
                                 hint="write the spec by hand (docs/writing-specs.md)")
    return params


def _torch_loops(name: str, params: list[Param], notes: list[str]) -> tuple[str, list[Loop]]:
    """The dtypes the op keeps (called on each), and its shape rule (called on a probe shape)."""
    tensors = [p for p in params if p.kind == "tensor"]
    loops: list[Loop] = []
    shape = "same_as" if len(tensors) == 1 else "elementwise"
    for dt in DRAFT_DTYPES:
        args = []
        for i, p in enumerate(params):
            if p.kind == "tensor":
                shp = PROBE_SHAPE if i == 0 or len(tensors) == 1 else (PROBE_SHAPE[1],)  # broadcasts
                args.append((np.arange(1, 1 + int(np.prod(shp))).reshape(shp) % 7 + 1).astype(dt))
            elif p.kind == "axis":
                args.append(-1)
            else:
                args.append(p.default)
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(call_reference(name, args))
        except Exception as exc:  # noqa: BLE001 - a dtype the op does not take is left out, with why
            text = str(exc).splitlines()[0][:160] if str(exc) else ""
            notes.append(f"left out {dt}: the reference raised {type(exc).__name__} on {dt} tensors of shapes "
                         f"{PROBE_SHAPE} and ({PROBE_SHAPE[1]},) ({text})")
            continue
        if out.shape != PROBE_SHAPE:
            raise OpgenError(f"{name} returns shape {out.shape} for a {PROBE_SHAPE} input: the drafter handles "
                             "elementwise ops (and ones that keep the input's shape along an axis)",
                             hint="write the spec by hand with a shape rule (docs/writing-specs.md#shape-rules), "
                                  "starting from a shipped spec such as specs/operator/matmul.yaml")
        if out.dtype.name != dt and not (out.dtype.name == "bool"):
            notes.append(f"left out {dt}: the reference returns {out.dtype.name} for {dt} tensors")
            continue
        loops.append(Loop(tuple(dt for _ in tensors), out.dtype.name))
    return shape, loops


def signature_of(intro: Introspected, loop: Loop) -> str:
    """The native signature of one loop: tensors of its dtypes, scalars as float or int, an axis as int."""
    dts = iter(loop.inputs)
    parts = []
    for p in intro.params:
        if p.kind == "tensor":
            parts.append(f"{p.name}: tensor[{next(dts)}]")
        else:
            parts.append(f"{p.name}: {'float' if p.kind == 'float' else 'int'}")
    return f"({', '.join(parts)}) -> tensor[{loop.output}]"
