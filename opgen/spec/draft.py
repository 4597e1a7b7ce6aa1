"""``opgen spec new NAME``: a spec drafted from its reference, for a person to review.

From the reference alone (``opgen.spec.introspect``: a NumPy ufunc's loops or a PyTorch op's signature and
schema) and what it does when called (``opgen.spec.probe``), the draft gets:

* one overload per float32 / float64 / int64 loop, its signature and shape rule (elementwise ops);
* a domain per argument: the natural domain and the edges found on a grid, the special values the
  reference treats the same way in its scalar and vectorised paths, the axis of an axis parameter, a
  scalar parameter at its default;
* ``raises`` for the built-in errors the reference raises on its edges (empty and 0-d tensors, special
  values, the dtype's extremes);
* tolerances measured against a wider evaluation (``opgen.spec.wide``): rtol = (the reference's worst
  relative error on normal results + ``KERNEL_ULPS``) eps x ``SAFETY``, atol = ``SAFETY`` x 2 x the worst
  absolute error rtol leaves uncovered (results at or near 0, a reference that flushes), at least a few
  subnormal ulps; the figures go into ``why`` and a ``# measured:`` comment;
* bench shapes of the size the shipped specs use, semantics that state what was measured, edge cases.

Every choice that is not a measurement is printed and marked ``# guessed:`` in the YAML; the draft is
loaded back, linted and put through ``opgen spec check`` before it is reported as written.
"""

from __future__ import annotations

import platform
from importlib import metadata
import tempfile
import textwrap
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from opgen.errors import OpgenError
from opgen.spec.dtypes import numpy_dtype
from opgen.spec.introspect import Introspected, Loop, introspect, signature_of
from opgen.spec.model import Spec, load_all, load_spec
from opgen.spec.names import spec_named
from opgen.spec.probe import (ATOL_FLOOR, DEFAULT_BOUND, DENSE_POINTS, EDGE_POINTS, KERNEL_ULPS, SAFETY, Edges,
                              Measured, Side, edges, errors, measure, specials)

BENCH_SHAPE = [8, 128, 1536]  # all-MiniLM-L6-v2's FFN activation (specs/torch/nn/functional/gelu.yaml)
BENCH_RANGE = 6.0  # bench values within +-this (and the domain): what activations see
DENSE_SEED = 0xD2AF8
SPECIAL_WORDS = {"nan": "nan", "inf": "inf", "-inf": "-inf", "-0": "-0.0", "subnormal": "3 x the smallest subnormal"}


@dataclass
class Draft:
    op: str
    text: str  # the YAML
    guessed: list[str] = field(default_factory=list)  # every choice that is not a measurement
    measured: list[str] = field(default_factory=list)  # the figures the tolerances rest on
    notes: list[str] = field(default_factory=list)  # what was left out, and why


def spec_path(specs_dir: Path, op: str) -> Path:
    """Where a spec lives: specs/<op with dots as directories>.yaml."""
    return specs_dir.joinpath(*op.split(".")).with_suffix(".yaml")


def check_target(specs_dir: Path, op: str, path: Path, force: bool) -> None:
    """Refuse to overwrite a spec, and to put a second spec of the same op under specs/ (which would
    break every command: every command loads every spec)."""
    if path.exists() and not force:
        raise OpgenError(f"{path} already exists",
                         hint="review and edit it instead; or pass --force to overwrite it, --output PATH to write "
                              "the draft elsewhere, or --stdout to print it")
    if not specs_dir.is_dir():
        return
    try:
        existing = spec_named(load_all(specs_dir), op)
    except OpgenError:
        return  # a broken spec elsewhere is the loader's to report, not a reason to refuse this one
    inside = Path(path).resolve().is_relative_to(specs_dir.resolve())
    if existing is not None and inside and existing.path is not None and \
            Path(existing.path).resolve() != Path(path).resolve():
        raise OpgenError(f"{op} already has a spec, {existing.path}; a second one under {specs_dir} would make every "
                         "command fail (an op is defined once)",
                         hint=f"edit {existing.path}, or write the draft outside {specs_dir} with --output or --stdout")


def draft_spec(name: str) -> Draft:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the probes overflow, divide by zero and make nan on purpose
        return _draft(name)


def _draft(name: str) -> Draft:
    intro = introspect(name)
    d = Draft(intro.op, "")
    d.notes += intro.notes
    plan = [_plan_overload(intro, loop, d) for loop in intro.loops]
    _unique_names(plan)
    data = _data(intro, plan, tolerance={})
    spec = Spec.model_validate(data)
    tolerance: dict[str, Measured] = {}
    for p, o in zip(plan, spec.overloads):
        r = o.sig.returns
        if r.dtype is None or not r.dtype.is_float:
            continue
        flushes = [e.flush(r.dtype.np) for e in p.edges.values()]
        m = measure(spec, o, _dense(intro, p), max(flushes, key=lambda f: f[0], default=(0.0, None)))
        prev = tolerance.get(r.dtype.name)
        if prev is None or (m.rtol, m.atol) > (prev.rtol, prev.atol):
            tolerance[r.dtype.name] = m if prev is None else _merge(prev, m)
    for dt_name, m in tolerance.items():
        _say_tolerance(d, dt_name, m)
    data = _data(intro, plan, tolerance)
    d.text = render(intro, plan, tolerance, data)
    _validate(d.text, data)
    return d


# ------------------------------------------------------------------------------------------ planning


@dataclass
class Planned:
    loop: Loop
    name: str
    signature: str
    domain: dict[str, dict[str, Any]] = field(default_factory=dict)
    comments: dict[str, list[str]] = field(default_factory=dict)  # per domain key: # guessed: / # measured:
    edges: dict[str, Edges] = field(default_factory=dict)
    facts: list[str] = field(default_factory=list)  # what the reference does, for the semantics
    raises: list[tuple[str, str]] = field(default_factory=list)
    bench: dict[str, Any] = field(default_factory=dict)


def _plan_overload(intro: Introspected, loop: Loop, d: Draft) -> Planned:
    p = Planned(loop, loop.name, signature_of(intro, loop))
    dts = dict(zip([t.name for t in intro.tensors], loop.inputs))
    axis = next((q for q in intro.params if q.kind == "axis"), None)
    for q in intro.params:
        if q.kind == "tensor":
            _plan_tensor(intro, loop, q.name, numpy_dtype(dts[q.name]), axis is not None, p, d)
        elif q.kind == "axis":
            p.domain[q.name] = {"axis_of": intro.tensors[0].name}
            p.domain.setdefault(intro.tensors[0].name, {})["min_dims"] = 1
            p.comments[q.name] = [f"# guessed: {q.name} is an axis of {intro.tensors[0].name} (by its name)"]
        else:
            p.domain[q.name] = {"choices": [q.default]}
            msg = (f"{q.name} only at its default {q.default!r}: widen the choices (or give min and max) to what "
                   "the kernel must support")
            p.comments[q.name] = [f"# guessed: {msg}"]
            d.guessed.append(f"{intro.op} [{p.name}]: {msg}")
    errs = errors(intro, loop)
    p.raises = errs.raises
    for error, when in errs.raises:
        d.guessed.append(f"{intro.op} [{p.name}]: declared {error}, {when}")
    d.notes += [f"{intro.op} [{p.name}]: {n}" for n in errs.notes]
    p.bench = _bench(intro, p)
    return p


def _plan_tensor(intro: Introspected, loop: Loop, name: str, dt: np.dtype, has_axis: bool, p: Planned,
                 d: Draft) -> None:
    dom = p.domain.setdefault(name, {})
    comments = p.comments.setdefault(name, [])
    where = f"{intro.op} [{p.name}] {name}"
    if dt.kind != "f":
        msg = f"{name} over the whole {dt.name} range (the default); narrow it if the op is interesting on less"
        comments.append(f"# guessed: {msg}")
        d.guessed.append(f"{where}: {msg}")
        dom["max_dims"] = 4
        return
    if has_axis or len(intro.tensors) > 1 and intro.shape != "elementwise":
        lo, hi = -DEFAULT_BOUND, DEFAULT_BOUND
        msg = f"[{_num(lo)}, {_num(hi)}]: the range of the shipped activations' specs (no edge search for this op)"
        comments.append(f"# guessed: {msg}")
        d.guessed.append(f"{where}: domain {msg}")
    else:
        e, held = edges(intro, loop, name)
        p.edges[name] = e
        lo, hi = e.lo.bound, e.hi.bound
        others = "" if len(intro.tensors) == 1 else f" (the other arguments at {held:g})"
        why = "; ".join(_side_words(s, name, low) for s, low in ((e.lo, True), (e.hi, False)))
        msg = f"[{_num(lo)}, {_num(hi)}]{others}: {why}"
        comments.append(f"# guessed: {msg}")
        d.guessed.append(f"{where}: domain {msg}")
        p.facts += [f for f in (_side_fact(s, name, low, dt) for s, low in ((e.lo, True), (e.hi, False))) if f]
    dom["min"], dom["max"] = lo, hi
    typical = 1.0 if lo <= 1.0 <= hi else (lo + hi) / 2
    sp = specials(intro, loop, name, typical, elementwise=not has_axis)
    if sp.kept:
        dom["special"] = sp.kept
    dom["max_dims"] = 4
    results = ", ".join(f"{SPECIAL_WORDS[s]} gives {sp.results[s]}" for s in sp.kept)
    if results:
        p.facts.append(f"{name} = {results}" if len(intro.tensors) > 1 else results)
    for why in sp.left_out:
        comments.append(f"# guessed: left out the special value {why}")
        d.guessed.append(f"{where}: left out the special value {why}")
    # reorder: min, max, special, max_dims (the shipped specs' order), min_dims after max_dims
    p.domain[name] = {k: dom[k] for k in ("min", "max", "special", "max_dims", "min_dims") if k in dom}


def _side_words(s: Side, name: str, low: bool) -> str:
    side = "below" if low else "above"
    at = f"{s.edge:.6g}" if s.edge is not None else ""
    if s.kind == "nan":
        return f"nan {side} {name} = {at}: the domain stops there"
    if s.kind == "open":
        return f"still changing at the {'lowest' if low else 'largest'} {name}: {_num(s.bound)} keeps the draws useful"
    if s.kind == "capped":
        return f"constant only {side} {name} = {at}: capped at {_num(s.bound)}"
    if s.kind == "constant":
        return f"the result does not change with {name} alone: {_num(s.bound)} is a guess"
    what = {"overflow": "overflows to", "underflow": "underflows to", "saturation": "saturates at"}[s.kind]
    if s.kind == "saturation":
        return (f"{what} {_show(s.value)} {side} {name} = {at}: the bound goes far past that edge, to "
                f"{_num(s.bound)} (a formula that overflows out there would otherwise pass)")
    return f"{what} {_show(s.value)} {side} {name} = {at}: the bound goes just past that edge"


def _side_fact(s: Side, name: str, low: bool, dt: np.dtype) -> str:
    side = "below" if low else "above"
    if s.kind in ("overflow", "underflow", "saturation") and s.edge is not None:
        what = {"overflow": "overflows to", "underflow": "underflows to", "saturation": "is"}[s.kind]
        return f"the result {what} {_show(s.value)} {side} {name} ~ {s.edge:.6g}"
    if s.kind == "nan" and s.edge is not None:
        return f"the result is nan {side} {name} = {s.edge:.6g} (outside the domain)"
    return ""


def _show(v: Any) -> str:
    x = float(v)
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "-0.0" if np.signbit(x) else "0.0"
    return f"{x:.9g}"


def _bench(intro: Introspected, p: Planned) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for q, dt in zip(intro.tensors, p.loop.inputs):
        dom = p.domain.get(q.name, {})
        lo = max(float(dom.get("min", -BENCH_RANGE)), -BENCH_RANGE)
        hi = min(float(dom.get("max", BENCH_RANGE)), BENCH_RANGE)
        args[q.name] = {"shape": list(BENCH_SHAPE), "min": lo, "max": hi}
    for q in intro.params:
        if q.kind == "axis":
            args[q.name] = -1
        elif q.kind != "tensor":
            args[q.name] = q.default
    return {"name": "minilm-ffn", "why": "guessed: the size of a transformer FFN activation, all-MiniLM-L6-v2 at "
            "batch 8 x sequence 128 x 1536 (as in specs/torch/nn/functional/gelu.yaml)", "args": args}


def _unique_names(plan: list[Planned]) -> None:
    seen: dict[str, int] = {}
    for p in plan:
        base = p.name
        n = seen.get(base, 0)
        seen[base] = n + 1
        if n:
            p.name = f"{base}_{n + 1}"


def _dense(intro: Introspected, p: Planned) -> dict[str, Any]:
    """Points for the measurement: uniform and log-uniform over each argument's domain, and around its edges."""
    rng = np.random.default_rng(DENSE_SEED)
    n = 2 * DENSE_POINTS + EDGE_POINTS * 2
    out: dict[str, Any] = {}
    for q, dt_name in zip(intro.tensors, p.loop.inputs):
        dt = numpy_dtype(dt_name)
        dom = p.domain.get(q.name, {})
        if dt.kind != "f":
            info = np.iinfo(dt)
            out[q.name] = rng.integers(int(info.min), int(info.max), size=n, endpoint=True, dtype=np.int64).astype(dt)
            continue
        lo, hi = float(dom.get("min", -DEFAULT_BOUND)), float(dom.get("max", DEFAULT_BOUND))
        uniform = rng.uniform(lo, hi, DENSE_POINTS)
        top = np.log10(max(abs(lo), abs(hi), 1e-30))
        signs = rng.choice([-1.0, 1.0], DENSE_POINTS) if lo < 0 < hi else np.full(DENSE_POINTS, 1.0 if hi > 0 else -1.0)
        logu = signs * 10.0 ** rng.uniform(top - 30, top, DENSE_POINTS)
        e = p.edges.get(q.name)
        pts = e.points if e is not None else []
        near = (np.concatenate([np.asarray(pts, dtype=np.float64)[rng.integers(0, len(pts), EDGE_POINTS * 2)]
                                * (1 + rng.uniform(-2e-3, 2e-3, EDGE_POINTS * 2))]) if pts
                else rng.uniform(lo, hi, EDGE_POINTS * 2))
        v = np.clip(np.concatenate([uniform, logu, near]), lo, hi)
        out[q.name] = v.astype(dt)
    for q in intro.params:
        if q.kind == "axis":
            out[q.name] = -1
        elif q.kind != "tensor":
            out[q.name] = q.default
    return out


def _merge(a: Measured, b: Measured) -> Measured:
    return a if (a.rtol, a.atol) >= (b.rtol, b.atol) else b


def _say_tolerance(d: Draft, dt_name: str, m: Measured) -> None:
    if not m.measured:
        d.guessed.append(f"tolerance.{dt_name}: rtol {m.rtol:.2g}, atol {m.atol:.2g}: no wider evaluation ({m.route}), "
                         f"so the reference is assumed within 1 ulp; measure it (against mpmath) before synthesizing")
        return
    d.measured.append(f"tolerance.{dt_name}: the reference is within {m.rel_eps:.2f} eps relative of a wider "
                      f"evaluation on normal results ({m.points} points" + (f"; worst at {m.rel_at}" if m.rel_at else "")
                      + f") -> rtol {m.rtol:.2g} = ({m.rel_eps:.2f} + {KERNEL_ULPS:g} kernel ulps) eps x {SAFETY:g}")
    if m.atol > ATOL_FLOOR.get(dt_name, 0.0):
        d.measured.append(f"tolerance.{dt_name}: rtol leaves {m.abs_err:.3g} absolute uncovered"
                          + (f" ({m.abs_at})" if m.abs_at else "") + f" -> atol {m.atol:.2g} (x {SAFETY * 2:g})")
    else:
        d.measured.append(f"tolerance.{dt_name}: atol {m.atol:.2g}, a few subnormal ulps (rtol covers every "
                          "measured result above them)")


# ------------------------------------------------------------------------------------------ the spec


def _data(intro: Introspected, plan: list[Planned], tolerance: dict[str, Measured]) -> dict[str, Any]:
    """The spec as data (what ``render`` writes, with its comments)."""
    overloads = []
    for p in plan:
        o: dict[str, Any] = {"name": p.name, "signature": p.signature}
        o["shape"] = {"same_as": intro.tensors[0].name} if intro.shape == "same_as" else "elementwise"
        o["domain"] = p.domain
        if p.raises:
            o["raises"] = [{"error": e, "when": w} for e, w in p.raises]
        o["bench"] = [p.bench]
        overloads.append(o)
    data: dict[str, Any] = {"op": intro.op, "summary": _summary(intro), "semantics": _semantics(intro, plan),
                            "reference": intro.reference, "edge_cases": _edge_cases(intro, plan),
                            "overloads": overloads}
    if tolerance:
        # "why: >" folds the text into one line ending in a newline
        data["tolerance"] = {dt: {"rtol": m.rtol, "atol": m.atol, "why": _why(m, intro.reference) + "\n"}
                             for dt, m in tolerance.items()}
    data["targets"] = ["cpp", "rust"]
    data["tags"] = ["elementwise"] if all(q.kind != "axis" for q in intro.params) else []
    return data


def _summary(intro: Introspected) -> str:
    doc = intro.doc.rstrip(".").strip()
    if doc:
        return f"{doc[0].upper()}{doc[1:]} ({intro.op})."
    return f"Elementwise {intro.op.rsplit('.', 1)[-1]} ({intro.op})."


def _call_text(intro: Introspected) -> str:
    args = ", ".join(f"{p.name}[i]" if p.kind == "tensor" else p.name for p in intro.params)
    return f"{intro.reference}({args})"


def _semantics(intro: Introspected, plan: list[Planned]) -> str:
    tensors = [p.name for p in intro.tensors]
    lines = textwrap.wrap(f"out[i] = {_call_text(intro)} for every element, as {intro.reference} computes it"
                          + (f" ({', '.join(tensors)} broadcast together, NumPy's rules)." if len(tensors) > 1
                             else "."), 100)
    for p in plan:
        if p.facts:
            lines += textwrap.wrap(f"Measured on the reference ({p.loop.inputs[0]}): " + "; ".join(p.facts) + ".", 100)
    raised = sorted({e for p in plan for e, _ in p.raises})
    lines.append(f"It raises {', '.join(raised)} where the reference does (see raises)." if raised else
                 "No errors are raised.")
    if len(tensors) == 1:
        lines.append(f"`{tensors[0]}` may be non-contiguous; `out` has {tensors[0]}'s shape and is contiguous.")
    else:
        lines.append("The inputs may be non-contiguous; `out` has their broadcast shape and is contiguous.")
    lines.append("0-d and 0-size tensors are legal.")
    return "\n".join(lines) + "\n"


def _edge_cases(intro: Introspected, plan: list[Planned]) -> list[str]:
    out = []
    kept = sorted({s for p in plan for dom in p.domain.values() for s in dom.get("special", [])},
                  key=["nan", "inf", "-inf", "-0", "subnormal"].index)
    if kept:
        out.append(", ".join("-0.0" if s == "-0" else s for s in kept) + " inputs")
    edges_ = [f"{p.name} {name} ~ {e.edge:.6g}" for p in plan for name, ed in p.edges.items()
              for e in (ed.lo, ed.hi) if e.edge is not None and e.kind != "nan"]
    if edges_:
        out.append("the edges where the result overflows, underflows or saturates: " + ", ".join(edges_))
    out.append("0-d tensors, 0-size tensors, non-contiguous views")
    return out


def _why(m: Measured, reference: str) -> str:
    if not m.measured:
        return (f"Guessed, not measured ({m.route}): the reference assumed within 1 ulp, plus {KERNEL_ULPS:g} ulps for "
                f"the kernel, x {SAFETY:g}. " + (f"atol: the reference jumps to 0 from {m.abs_err:.3g} ({m.abs_at}), "
                                                 f"x {SAFETY * 2:g}." if m.abs_at else "atol: a few subnormal ulps."))
    text = (f"Measured by opgen spec new ({platform.machine()}, {_versions(reference)}): the reference is within "
            f"{m.rel_eps:.2f} eps relative of its wider evaluation ({m.route}) on {m.points} normal and subnormal "
            f"results (the gate's draws and scale cases, a dense sample of the domain and of its edges), so a kernel "
            f"within {KERNEL_ULPS:g} ulps differs from it by at most {m.rel_eps + KERNEL_ULPS:.2f} eps; rtol is that "
            f"x {SAFETY:g}.")
    if m.atol > ATOL_FLOOR.get(m.dtype, 0.0):
        text += (f" atol covers the {m.abs_err:.3g} absolute error that rtol leaves (results at or near 0"
                 + (f"; worst {m.abs_at}" if m.abs_at else "") + f"), x {SAFETY * 2:g}.")
    else:
        text += " atol only forgives results a few subnormal ulps from 0."
    return text


def _versions(reference: str) -> str:
    out = []
    for name, shown in (("numpy", "NumPy"), ("torch", "PyTorch")):
        if name == "torch" and not reference.startswith("torch."):
            continue
        try:
            out.append(f"{shown} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(out)


# ------------------------------------------------------------------------------------------ YAML


def _num(v: float) -> str:
    """A domain bound as the shipped specs write it: an integer where it is one, else a float YAML reads."""
    v = float(v)
    if v.is_integer() and abs(v) < 1e6:
        return str(int(v))
    return _float(v)


def _float(v: float) -> str:
    """A float YAML 1.1 reads as a float (it needs a dot in the mantissa: 1.0e-44, not 1e-44)."""
    v = float(v)
    if v == 0:
        return "0.0"
    text = repr(v) if 1e-4 <= abs(v) < 1e6 else f"{v:.2e}"
    if "e" in text:
        mant, exp = text.split("e")
        if "." not in mant:
            mant += ".0"
        mant = mant.rstrip("0") + ("0" if mant.rstrip("0").endswith(".") else "")
        text = f"{mant}e{int(exp)}"
    elif "." not in text:
        text += ".0"
    return text


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, float):
        return _float(v)
    if v == "-0":
        return '"-0"'
    return str(v)


def _flow(d: dict[str, Any]) -> str:
    parts = []
    for k, v in d.items():
        if isinstance(v, list):
            parts.append(f"{k}: [{', '.join(_scalar(x) if k != 'min' else _num(x) for x in v)}]")
        elif k in ("min", "max"):
            parts.append(f"{k}: {_num(v)}")
        else:
            parts.append(f"{k}: {_scalar(v)}")
    return "{" + ", ".join(parts) + "}"


def _block(text: str, indent: str) -> list[str]:
    return [indent + ln if ln else "" for ln in text.rstrip("\n").split("\n")]


def _fold(text: str, indent: str, width: int = 100) -> list[str]:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(indent) + len(cur) + 1 + len(w) > width:
            lines.append(indent + cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(indent + cur)
    return lines


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(intro: Introspected, plan: list[Planned], tolerance: dict[str, Measured], data: dict[str, Any]) -> str:
    out = [f"# Drafted by `opgen spec new {intro.op}` from the reference. Review every line marked",
           "# \"guessed:\" (and the semantics), then run `opgen spec check " + intro.op + "` before synthesizing.",
           f"op: {intro.op}",
           f"summary: {_quoted(data['summary'])}",
           "# guessed: the semantics state what was measured on the reference; say what a kernel writer needs",
           "semantics: |", *_block(data["semantics"], "  "),
           f"reference: {intro.reference}",
           "edge_cases:", *(f"  - {_quoted(e)}" for e in data["edge_cases"]),
           "overloads:"]
    for p, o in zip(plan, data["overloads"]):
        out += [f"  - name: {o['name']}",
                f"    signature: {_quoted(o['signature'])}",
                f"    shape: {_flow(o['shape']) if isinstance(o['shape'], dict) else o['shape']}",
                "    domain:"]
        for key, dom in o["domain"].items():
            out += [f"      {c}" for c in p.comments.get(key, [])]
            out.append(f"      {key}: {_flow(dom)}")
        if o.get("raises"):
            out.append("    # guessed: the errors the reference raised on the probes; say when in words")
            out.append("    raises:")
            for r in o["raises"]:
                out += [f"      - error: {r['error']}", f"        when: {_quoted(r['when'])}"]
        out.append("    bench:")
        for b in o["bench"]:
            out += [f"      - name: {b['name']}", f"        why: {_quoted(b['why'])}", "        args:"]
            for k, v in b["args"].items():
                if isinstance(v, dict):
                    out.append(f"          {k}: {{shape: [{', '.join(str(s) for s in v['shape'])}], "
                               f"min: {_float(v['min'])}, max: {_float(v['max'])}}}")
                else:
                    out.append(f"          {k}: {_scalar(v)}")
    if data.get("tolerance"):
        out.append("tolerance:")
        for dt, t in data["tolerance"].items():
            m = tolerance[dt]
            out.append(f"  {dt}:")
            if m.measured:
                out.append(f"    # measured: worst relative error {m.rel_eps:.3f} eps on normal results"
                           + (f" (at {m.rel_at})" if m.rel_at else "") + f"; {m.abs_err:.3g} absolute left over"
                           + (f" ({m.abs_at})" if m.abs_at else "") + f"; {m.points} points")
                out.append(f"    # guessed: the safety factors ({KERNEL_ULPS:g} kernel ulps, x {SAFETY:g})")
            else:
                out.append(f"    # guessed: not measured ({m.route})")
            out += [f"    rtol: {_float(t['rtol'])}", f"    atol: {_float(t['atol'])}", "    why: >",
                    *_fold(t["why"], "      ")]
    out.append("# guessed: the targets and tags the shipped elementwise specs list")
    out.append(f"targets: [{', '.join(data['targets'])}]")
    out.append(f"tags: [{', '.join(data['tags'])}]")
    return "\n".join(out) + "\n"


def _validate(text: str, data: dict[str, Any]) -> None:
    """The YAML must load (strictly, as every spec does) into the spec the data describes."""
    with tempfile.TemporaryDirectory(prefix="opgen-spec-new-") as tmp:
        path = Path(tmp) / "draft.yaml"
        path.write_text(text, encoding="utf-8")
        loaded = load_spec(path)
    want = Spec.model_validate(data)
    if loaded.model_dump(mode="json") != want.model_dump(mode="json"):
        raise AssertionError("the drafted YAML does not load back into the drafted spec (a bug in opgen.spec.draft)")
