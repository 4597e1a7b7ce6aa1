"""The spec check's report: its problems (overload, field, input, fix), what each overload's check
covered, and the recorder the checks write into (``opgen.spec.check``, ``opgen.spec.value_checks``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from opgen.errors import SpecError
from opgen.spec.dtypes import DType
from opgen.spec.model import Overload, Spec, Tolerance
from opgen.spec.source import line_of, load_with_lines
from opgen.verify.compare import Mismatch
from opgen.verify.runner import describe

ELEMENT_INPUTS = 4  # elementwise results: inputs shown at the failing element


@dataclass
class Problem:
    """One reason the spec would reject a correct kernel: where, which field, on which input, the fix."""

    op: str
    overload: str
    check: str  # lint | tolerance | ulp | backward | domain | reference | gate
    field: str  # the spec field to change, e.g. tolerance.float32.atol or overloads[f32].domain.x
    message: str
    fix: str
    input: dict[str, Any] | None = None  # the failing input (shapes, layout, values), as the runner describes it
    path: str = ""
    line: int = 1

    def render(self) -> str:
        text = f"{self.path}:{self.line}: {self.op} [{self.overload}] {self.check}: {self.message}\n  field: {self.field}"
        if self.input:
            text += f"\n  input: {input_text(self.input)}"
        return text + f"\n  fix: {self.fix}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class OverloadCheck:
    """What was checked on one overload, with the figures, and what could not be checked and why."""

    overload: str
    route: str  # the wider evaluation used, or "none: <why>"
    examples: int = 0  # inputs measured directly (drawn and scale cases)
    wide_examples: int = 0  # of which the wider evaluation covered
    gate_examples: int = 0  # examples the honest kernel ran through the gate's runner
    # The reference's worst distance from the correctly rounded result, as a fraction of the tolerance.
    worst_tolerance_used: float | None = None
    # The same for every value check that ran (tolerance, ulp, backward): how much room is left.
    margins: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"overload": self.overload, "ok": self.ok, "route": self.route, "examples": self.examples,
                "wide_examples": self.wide_examples, "gate_examples": self.gate_examples,
                "worst_tolerance_used": self.worst_tolerance_used, "margins": self.margins, "notes": self.notes,
                "problems": [p.as_dict() for p in self.problems], "seconds": round(self.seconds, 3)}


@dataclass
class SpecCheckReport:
    op: str
    path: str
    overloads: list[OverloadCheck] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def problems(self) -> list[Problem]:
        return [p for o in self.overloads for p in o.problems]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "path": self.path, "ok": self.ok, "seconds": round(self.seconds, 3),
                "overloads": [o.as_dict() for o in self.overloads]}


class Recorder:
    """One overload's check in progress: where its fields are, what was found (one problem per check)."""

    def __init__(self, spec: Spec, overload: Overload, result: OverloadCheck):
        self.spec, self.o, self.result = spec, overload, result
        self.sig = overload.sig
        self.index = [x.name for x in spec.overloads].index(overload.name)
        self.lines: dict = {}
        if spec.path is not None:
            try:
                _, self.lines = load_with_lines(Path(spec.path))
            except (SpecError, OSError):
                self.lines = {}
        self.seen: set[str] = set()  # checks already reported (one problem per check and overload)

    def line(self, *loc: Any) -> int:
        return line_of(self.lines, loc) if self.lines else 1

    def problem(self, check: str, field_: str, message: str, fix: str, args: dict[str, Any] | None = None,
                loc: tuple = (), at: dict[str, Any] | None = None) -> None:
        """Record a problem (the first of each check only); ``args`` the failing input, ``at`` what to show
        of its failing element."""
        if check in self.seen:
            return
        self.seen.add(check)
        shown = None
        if args is not None:
            shown = {"args": describe(args)}
            if at:
                shown["at"] = at
        self.result.problems.append(Problem(
            self.spec.op, self.o.name, check, field_, message, fix, input=shown,
            path=str(self.spec.path or f"<{self.spec.op}>"), line=self.line(*(loc or ("overloads", self.index)))))

    def tolerance_field(self, dt: DType, part: str) -> tuple[str, tuple]:
        if dt.name in self.o.tolerance:
            return f"overloads[{self.o.name}].tolerance.{dt.name}.{part}", ("overloads", self.index, "tolerance", dt.name)
        if dt.name in self.spec.tolerance:
            return f"tolerance.{dt.name}.{part}", ("tolerance", dt.name)
        return f"tolerance.{dt.name}.{part} (none written: the default {dt.name} tolerance applies)", ("tolerance",)

    def domain_field(self) -> tuple[str, tuple]:
        return f"overloads[{self.o.name}].domain", ("overloads", self.index, "domain")


def float_result(o: Overload) -> bool:
    """Whether a result is a float (any result of a tuple)."""
    return first_float(o) is not None


def first_float(o: Overload) -> DType | None:
    """The dtype of the first float result, or None."""
    return next((t.dtype for _, t in o.sig.results if t.dtype is not None and t.dtype.is_float), None)


def tol_exact(tol: Tolerance) -> bool:
    """rtol = atol = 0: the spec declares one correctly rounded operation (or a copy)."""
    return tol.rtol == 0 and tol.atol == 0 and tol.rtol_per_term == 0




def element(state: Recorder, args: dict[str, Any], m: Mismatch | None, idx: tuple | None = None) -> dict:
    """What to show of the failing element: its index, for elementwise results each input's value there
    (what a person needs to see the edge), and expected and got from a mismatch."""
    if idx is None and m is not None and m.details.get("index") is not None:
        idx = m.details["index"]
    idx = tuple(idx) if idx is not None else None
    rule = state.o.rule
    extra: dict[str, Any] = {"index": list(idx)} if idx else {}
    if idx is not None and rule is not None and rule.kind in ("elementwise", "same_as"):
        try:
            out_shape = rule.output_shape(args, [p.name for p in state.sig.tensor_params])
            for p in state.sig.tensor_params[:ELEMENT_INPUTS]:
                v = np.broadcast_to(np.asarray(args[p.name]), out_shape)
                extra[f"{p.name}{list(idx)}"] = repr(v[idx].item())
        except (ValueError, IndexError):
            extra = {"index": list(idx)} if idx else {}
    if m is not None:
        extra.update({k: m.details[k] for k in ("expected", "got") if k in m.details})
    return extra




def input_text(described: dict[str, Any]) -> str:
    args = described.get("args", described)
    parts = []
    for name, d in args.items():
        if isinstance(d, dict) and "shape" in d:
            head = d.get("values_head", [])
            parts.append(f"{name}: {d['dtype']}{d['shape']} {'contiguous' if d.get('contiguous') else 'strided'} "
                         f"[{', '.join(head[:6])}{', ...' if len(head) > 6 else ''}]")
        else:
            text = str(d)
            parts.append(f"{name}={text if len(text) <= 60 else text[:57] + '...'}")
    at = described.get("at")
    if isinstance(at, dict) and at:
        parts.append("element: " + ", ".join(f"{k} = {v}" for k, v in at.items()))
    return "; ".join(parts)




def short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text if len(text) <= 200 else text[:197] + "..."


