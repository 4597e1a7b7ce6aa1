"""The scale stage's cases: a handful of large, model-shaped examples per overload.

Hypothesis draws small shapes (a matmul side of at most 48, a softmax row of at most 812,
strings of at most 64 characters) so that it can draw and shrink many of them. Kernels, an
LLM's and a cheat's alike, are often right below a size and wrong above it: a blocked loop
whose remainder is dropped once k passes the block, no max-subtraction above some row
length, a float32 path for float64 tensors above some element count, indices narrowed to
16 bits, a fixed-size stack buffer, a special path for dims that are multiples of 128. And
precision downgrades (one-pass variance, float32 accumulation, TF32-rounded products) only
show on realistic data: rows whose mean is far above their spread, wide dynamic ranges,
logits with a standard deviation of 30 and more.

So every overload also meets, at admission, in ``opgen verify`` and in the nightly job:

* the spec's ``bench:`` shapes (what users run) and its own ``scale:`` cases;
* derived cases, for any shape rule, from one seed: each core dim (or axis) in turn made
  long (4096 +- 1, 8192 + 1, 1000 + r, up to 100k+ elements for a reduction) with the others
  small; every dim drawn around a model size (64, 128, 384, 768, 1024, 4096, each +-1); every
  dim a multiple of 128; index tables of more than 65536 rows with indices reaching the top;
  strings of 64 KB and more (multi-byte UTF-8), and tokenizer vocabularies of 65536+ pieces;
* values from realistic and hostile distributions: normal, offset rows (mean >> spread),
  wide dynamic range (12 decades, both signs), logits (std 30 to 60), heavy tails, and the
  special values the domain admits; some cases in a non-contiguous layout.

``max_side`` and ``max_len`` bound Hypothesis's draws only: the scale stage goes past them on
purpose. Every other domain rule (value ranges, choices, multiples, index bounds) holds.
The cases fit a ``Budget`` (work and bytes per case): the CPU targets' is a few hundred
million multiply-adds per case, the GPU emulation layer's far smaller (it runs every GPU
thread as a fiber). A failure names its case; the seed reproduces it.
"""

from __future__ import annotations

import string
from dataclasses import asdict, dataclass, field
from itertools import chain
from typing import Any, Iterator

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from opgen.spec.dtypes import DType
from opgen.spec.dtypes import dtype as _dtype_named
from opgen.verify.compare import is_array_list
from opgen.spec.shapes import CREATION, GATHER, GATHER_SIGNED, JOIN, MOVEMENT, dot_shape, dot_terms, pool2d_error, pool_error
from opgen.spec.model import BenchTensor, Domain, Overload, Spec, lattice_cores
from opgen.verify import prepared
from opgen.verify.text_strategies import every_code_point, long_number_text
from opgen.verify.strategies import (axis_length, draw_integers, edge_grid, edge_runs, examples, integer_edges,
                                     lay_out, snap_to_lattice, special_value)

MODEL_SIZES = (64, 128, 384, 768, 1024, 4096)
AROUND_MODEL = tuple(sorted({m + d for m in MODEL_SIZES for d in (-1, 0, 1)}))
LONG_SIZES = (4095, 4097, 8193)  # long axes; with 1000 + r and the reduction lengths below
REDUCTION_LENGTH = 100_003  # reductions over >= 100k elements
TABLE_ROWS = 65_536  # index tables over this many rows (a uint16 index is not enough)
STRING_BYTES = 64 * 1024  # strings of at least this many bytes
DISTRIBUTIONS = ("normal", "offset_rows", "wide_range", "logits", "heavy_tailed")


@dataclass(frozen=True)
class Budget:
    """What one scale case may cost: ``max_work`` bounds the product of the op's distinct
    dim sizes (multiply-adds for a matmul), ``max_bytes`` the bytes of its tensors and its output.
    The bytes matter more than the flops: every call's inputs travel to the executor and back
    whole, and the runner prefills, compares and checks every byte in Python-driven NumPy (about
    0.3 us per element), so a case of 8M elements costs seconds. What the stage is for is long
    dims, not many elements: a case over the budget is skipped (a bench shape too; the derived
    cases cover its dim sizes)."""

    max_work: int = 1 << 31
    max_bytes: int = 32 << 20
    max_cases: int = 16

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Budget":
        return cls(**d) if d else cls()

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


CPU_BUDGET = Budget()
# The CPU execution layer of the GPU targets runs each GPU thread as a fiber and every
# shared-memory access through checks: a few million multiply-adds per case is what it affords.
EMULATED_BUDGET = Budget(max_work=1 << 23, max_bytes=16 << 20, max_cases=10)


@dataclass
class ScaleCase:
    name: str
    args: dict[str, Any]
    origin: str  # bench | spec | derived
    distribution: str
    layout: str = "contiguous"
    notes: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        shapes = {k: list(v.shape) for k, v in self.args.items() if isinstance(v, np.ndarray)}
        shapes.update({k: [list(e.shape) for e in v] for k, v in self.args.items() if is_array_list(v)})
        lengths = {k: (len(v.encode()) if isinstance(v, str) else sum(len(s.encode()) for s in v))
                   for k, v in self.args.items()
                   if isinstance(v, str) or (isinstance(v, list) and v and isinstance(v[0], str))}
        return {"name": self.name, "origin": self.origin, "distribution": self.distribution,
                "layout": self.layout, "shapes": shapes, "string_bytes": lengths, "notes": self.notes}


def arrays_nbytes(args: dict[str, Any]) -> int:
    """The bytes of an example's tensors, a list of tensors' elements included."""
    return sum(v.nbytes if isinstance(v, np.ndarray) else sum(e.nbytes for e in v)
               for v in args.values() if isinstance(v, np.ndarray) or is_array_list(v))


def _shape_list(shapes: dict[str, Any]) -> list[tuple[int, ...]]:
    """Every tensor shape of a case's shapes, a list of tensors' element shapes included."""
    out: list[tuple[int, ...]] = []
    for v in shapes.values():
        out += [tuple(e) for e in v] if isinstance(v, list) else [tuple(v)]
    return out


# --- values -------------------------------------------------------------------------------

def _float_bounds(dom: Domain, dt: DType) -> tuple[float, float]:
    big = float(np.finfo(dt.numpy).max)
    return (dom.min if dom.min is not None else -big, dom.max if dom.max is not None else big)


def _magnitude(lo: float, hi: float) -> float:
    """A realistic scale for values in [lo, hi]: the domain's own size, at most 1e4."""
    return float(min(max(abs(lo), abs(hi)), 1e4)) or 1.0


def float_values(rng: np.random.Generator, dist: str, shape: tuple[int, ...], dt: DType, dom: Domain,
                 specials: bool = True) -> np.ndarray:
    lo, hi = _float_bounds(dom, dt)
    m = _magnitude(lo, hi)
    n = int(np.prod(shape, dtype=np.int64))
    if dist == "offset_rows":  # each row far from 0 relative to its spread: one-pass variance breaks
        rows = shape[:-1] if len(shape) else ()
        width = shape[-1] if len(shape) else 1
        centre = lo + (hi - lo) / 2 if np.isfinite(hi - lo) and hi - lo < 2 * m else 0.0
        offsets = centre + rng.choice([-1.0, 1.0], size=rows + (1,)) * rng.uniform(0.3, 0.5, size=rows + (1,)) * m
        v = offsets + rng.standard_normal(size=rows + (width,)) * m * 1e-4
    elif dist == "wide_range":  # twelve decades of magnitude, both signs
        top = np.log10(m)
        v = rng.choice([-1.0, 1.0], size=n) * 10.0 ** rng.uniform(top - 12, top, size=n)
    elif dist == "logits":  # attention scores and classifier logits: std 30 to 60
        v = rng.standard_normal(size=n) * rng.uniform(30, 60)
    elif dist == "heavy_tailed":
        v = rng.standard_t(1.5, size=n) * max(m / 100.0, 1.0)
    else:  # normal: activations, weights and embeddings look like this
        v = rng.standard_normal(size=n) * min(m, 3.0)
    v = np.clip(np.asarray(v, dtype=np.float64).reshape(shape), lo, hi)
    out = v.astype(dt.np)
    if dom.special and n and rng.random() < 0.3:  # now and then a few special values the domain admits
        flat = out.reshape(-1)
        for i in rng.integers(0, n, size=min(4, n)):
            name = str(rng.choice(dom.special))  # drawn either way: the seed's later draws stay the same
            if specials:
                flat[i] = special_value(name, dt)
    return out


def int_values(rng: np.random.Generator, shape: tuple[int, ...], dt: DType, dom: Domain, role: int = 0) -> np.ndarray:
    """Uniform over the domain, with small values (-8..8: zero divisors, -1s, equal pairs) in a
    tenth of the elements, the integer edges (0, +-1, the dtype's extremes) planted at a few
    dozen places, and every pair of edges at the start (edge_grid; ``role``: this tensor's place
    among the case's integer operands), where two operands of one shape line them up."""
    if dt.name == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dt.np)
    lo = int(dom.min) if dom.min is not None else int(info.min)
    hi = int(dom.max) if dom.max is not None else int(info.max)
    out = draw_integers(rng, lo, hi, shape, dt)
    n = out.size
    if n:
        flat = out.reshape(-1)
        small_lo, small_hi = max(lo, -8), min(hi, 8)
        if small_lo <= small_hi:
            at = rng.choice(n, size=max(1, n // 10), replace=False) if n > 1 else np.zeros(1, np.int64)
            flat[at] = draw_integers(rng, small_lo, small_hi, (len(at),), dt)
        edges = integer_edges(dt, lo, hi)
        if edges:
            at = rng.integers(0, n, size=min(n, 32))
            flat[at] = np.array(edges, dtype=object)[rng.integers(0, len(edges), size=len(at))].astype(dt.np)
            edge_grid(out, edges, role)
    return out


def index_values(rng: np.random.Generator, shape: tuple[int, ...], dt: DType, rows: int) -> np.ndarray:
    """Indices into a table of ``rows`` rows, reaching its last rows (a narrowed index shows there)."""
    n = int(np.prod(shape, dtype=np.int64))
    if rows == 0 or n == 0:
        return np.zeros(shape, dtype=dt.np)
    v = rng.integers(0, rows, size=n, dtype=np.int64)
    top = np.arange(max(rows - 4, 0), rows)
    v[rng.choice(n, size=min(n, len(top)), replace=False)] = top[: min(n, len(top))]
    if rows > TABLE_ROWS:  # and rows above 2**16 often
        high = rng.integers(TABLE_ROWS, rows, size=n // 2 + 1)
        v[rng.choice(n, size=min(n, len(high)), replace=False)] = high[: min(n, len(high))]
    return v.reshape(shape).astype(dt.np)


def signed_index_values(rng: np.random.Generator, shape: tuple[int, ...], dt: DType, n: int) -> np.ndarray:
    """NumPy-style indices along an axis of length ``n`` (index_of): index_values' (reaching the
    last rows, and rows above 2**16 where there are more), about half of them as the negative index
    of the same element (v - n), with -n and -1 planted."""
    v = index_values(rng, shape, _dtype_named("int64"), n).astype(np.int64).reshape(-1)
    if n == 0 or v.size == 0:
        return v.reshape(shape).astype(dt.np)
    neg = rng.random(v.size) < 0.5
    v[neg] -= n
    ends = np.array([-n, -1], dtype=np.int64)
    v[rng.choice(v.size, size=min(v.size, 2), replace=False)] = ends[: min(v.size, 2)]
    return v.reshape(shape).astype(dt.np)


def _scalar(rng: np.random.Generator, t: Any, dom: Domain, prefer: Any = None) -> Any:
    if prefer is not None:
        return prefer
    if dom.choices is not None:
        c = dom.choices[int(rng.integers(0, len(dom.choices)))]
        return float(c) if t.name == "float" else c
    if t.name == "bool":
        return bool(rng.integers(0, 2))
    if t.name == "int":
        lo = int(dom.min) if dom.min is not None else -(2**31)
        hi = int(dom.max) if dom.max is not None else 2**31
        picks = [lo, hi, int(rng.integers(lo, hi, endpoint=True))] + ([0] if lo <= 0 <= hi else [])
        return int(picks[int(rng.integers(0, len(picks)))])
    if t.name == "float":
        lo = dom.min if dom.min is not None else -1e6
        hi = dom.max if dom.max is not None else 1e6
        if lo > 0 and hi / lo > 1e3:  # eps-like: log-uniform
            return float(10 ** rng.uniform(np.log10(lo), np.log10(hi)))
        return float(rng.uniform(lo, hi))
    return ""


# --- strings ------------------------------------------------------------------------------

# Multi-byte UTF-8 of every width, so byte lengths and character counts differ.
_WIDE = "é日本語ßЖ\u0301😀𝄞"
# The words of a long cased_text: letters of several scripts, one-to-many mappings and capital
# sigmas, with case-ignorable code points inside words (Final_Sigma's context at every length).
EVERY_CODE_POINT = "every code point, in order"
CASED_ALPHABET = "AbCdΣσΑΒγΔЖжÅǅİßﬁ'.\u0345\u0307\U00010400\U0001e922"


def long_text(rng: np.random.Generator, min_bytes: int, alphabet: str = string.ascii_letters) -> str:
    words, size = [], 0
    while size < min_bytes:
        k = int(rng.integers(1, 12))
        w = "".join(rng.choice(list(alphabet), size=k))
        if rng.random() < 0.15:
            w += str(rng.choice(list(_WIDE)))
        if rng.random() < 0.1:
            w += str(rng.choice(list(".,;!?")))
        words.append(w)
        size += len(w.encode()) + 1
    return " ".join(words)


def wordpiece_vocabulary(rng: np.random.Generator, rows: int) -> list[str]:
    """BERT's special tokens and ``rows`` unique pieces over a-z (continuations among them)."""
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    letters = string.ascii_lowercase
    pieces: set[str] = set()
    for a in letters:
        pieces.update({a, "##" + a})
        for b in letters:
            pieces.update({a + b, "##" + a + b})
    while len(pieces) < rows - len(special):
        k = int(rng.integers(3, 7))
        w = "".join(rng.choice(list(letters), size=k))
        pieces.add(w if rng.random() < 0.6 else "##" + w)
    vocab = special + sorted(pieces)[: rows - len(special)]
    order = rng.permutation(len(vocab) - len(special)) + len(special)
    return special + [vocab[i] for i in order]


# --- shapes -------------------------------------------------------------------------------

def _work(sizes: dict[str, int], loop: tuple[int, ...], counted: set[str] | None = None) -> int:
    """The loop nest's size: the loop dims times the dims in ``counted`` (all of them by default)."""
    dims = [s for d, s in sizes.items() if counted is None or d in counted]
    return int(np.prod(dims or [1], dtype=np.float64) * np.prod(loop or (1,), dtype=np.float64))


def _halve_dot(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A dot's operand shapes with their largest dim halved (the contracted length in both at once)."""
    at = (len(sb) - 2 if len(sb) >= 2 else 0) if sa and sb else None  # b's contracted dim
    dims = [(n, "a", i) for i, n in enumerate(sa)] + [(n, "b", i) for i, n in enumerate(sb) if i != at]
    n, which, i = max(dims)
    half = n // 2 + (n % 2)
    if which == "a" and at is not None and i == len(sa) - 1:
        return sa[:-1] + (half,), sb[:at] + (half,) + sb[at + 1:]
    if which == "a":
        return sa[:i] + (half,) + sa[i + 1:], sb
    return sa, sb[:i] + (half,) + sb[i + 1:]


def _fit(sizes: dict[str, int], loop: tuple[int, ...], max_work: int, keep: str | None = None,
         counted: set[str] | None = None) -> dict[str, int]:
    """Halve the largest dims (other than ``keep``) until the case fits the work budget."""
    sizes = dict(sizes)
    while _work(sizes, loop, counted) > max_work:
        candidates = [d for d in sizes if d != keep and sizes[d] > 1]
        if not candidates:
            if keep is not None and sizes[keep] > 1:
                sizes[keep] = max(sizes[keep] // 2 + 1, 1)
                continue
            break
        d = max(candidates, key=lambda x: sizes[x])
        sizes[d] = max(sizes[d] // 2 + (sizes[d] % 2), 1)
    return sizes


def _apply_multiples(sizes: dict[str, int], overload: Overload) -> dict[str, int]:
    for dom in overload.domain.values():
        for dim, of in (dom.multiple_of or {}).items():
            base = of if isinstance(of, int) else sizes.get(of, 1)
            if dim in sizes and base:
                sizes[dim] = max(base, (sizes[dim] // base) * base)
    return sizes


class _Builder:
    """Builds the cases of one overload from one seed."""

    def __init__(self, spec: Spec, overload: Overload, seed: int, budget: Budget):
        self.spec, self.overload, self.budget = spec, overload, budget
        self.rng = np.random.default_rng(seed)
        self.sig = overload.sig
        self.tensors = [p.name for p in self.sig.tensor_params]
        self.rule = overload.rule
        self.dist_i = int(self.rng.integers(0, len(DISTRIBUTIONS)))
        self.seed = seed
        self.choice_turns: dict[str, int] = {}

    def scalar(self, name: str, t: Any, dom: Domain, prefer: Any = None) -> Any:
        """A scalar argument. A parameter with ``choices`` takes them in turn, from a place the
        seed picks, so consecutive cases cover every choice (drawn at random, one case in a few
        would have met a choice-specific bug, e.g. a vector norm wrong only for ord = inf)."""
        if prefer is None and dom.choices is not None:
            self.rng.integers(0, len(dom.choices))  # drawn either way: the seed's later draws stay the same
            turn = self.choice_turns.get(name, self.seed % len(dom.choices))
            self.choice_turns[name] = turn + 1
            c = dom.choices[turn % len(dom.choices)]
            return float(c) if t.name == "float" else c
        return _scalar(self.rng, t, dom, prefer)

    def dom(self, name: str) -> Domain:
        return self.overload.domain.get(name, Domain())

    def next_distribution(self) -> str:
        self.dist_i += 1
        return DISTRIBUTIONS[self.dist_i % len(DISTRIBUTIONS)]

    def work_of(self, shapes: dict[str, tuple[int, ...]]) -> int:
        """A case's work as the derived cases count it: a gufunc's output dims times the dims it
        reduces over (loop dims included), any other rule's largest tensor."""
        rule = self.rule
        if rule is not None and rule.kind == "dot":  # out's size times the contracted length
            out, err = dot_shape(shapes[rule.source], shapes[rule.indices])
            return 0 if err else int(np.prod(out, dtype=np.int64)) * dot_terms(shapes[rule.source], shapes[rule.indices])
        if rule is None or rule.kind != "gufunc":
            return max((int(np.prod(s, dtype=np.int64)) for s in _shape_list(shapes)), default=0)
        sizes: dict[str, int] = {}
        loops = []
        for name, core in zip(self.tensors, rule.inputs_core):
            shape = shapes[name]
            loops.append(shape[: len(shape) - len(core)])
            sizes.update(zip(core, shape[len(shape) - len(core):]))
        try:
            loop = tuple(np.broadcast_shapes(*loops))
        except ValueError:
            loop = ()
        bases = {of for dom in self.overload.domain.values() for of in (dom.multiple_of or {}).values()
                 if isinstance(of, str)}
        return _work(sizes, loop, set(sizes) - (bases - set(rule.output_core)))

    def nbytes(self, shapes: dict[str, tuple[int, ...]]) -> int:
        """The bytes of the tensor arguments these shapes give, and of an output as large as the
        largest of them (what every shape rule but matmul's gives; matmul's work budget bounds it)."""
        sizes = [int(np.prod(shapes[p.name], dtype=np.int64)) * p.type.dtype.np.itemsize
                 for p in self.sig.tensor_params]
        joined = [sum(int(np.prod(s, dtype=np.int64)) for s in shapes.get(p.name, [])) * p.type.elem.dtype.np.itemsize
                  for p in self.sig.tensor_list_params]  # out holds them all
        if self.rule is not None and self.rule.kind == "dot" and self.sig.tensor_params:  # out may outgrow a and b
            out, err = dot_shape(shapes[self.rule.source], shapes[self.rule.indices])
            sizes.append(0 if err else int(np.prod(out, dtype=np.int64)) * self.sig.tensor_params[0].type.dtype.np.itemsize)
        return sum(sizes) + max(sizes, default=0) + 2 * sum(joined)

    def shrink(self, sizes: dict[str, int], shapes_for: Any, loop: tuple[int, ...] = (),
               keep: str | None = None) -> dict[str, int]:
        """Halve the largest dims until the tensors fit the byte budget."""
        sizes = dict(sizes)
        while self.nbytes(shapes_for(sizes, loop)) > self.budget.max_bytes:
            d = max((x for x in sizes if x != keep and sizes[x] > 1), key=lambda x: sizes[x], default=None)
            if d is None:
                d = keep
            if d is None or sizes[d] <= 1:
                break
            sizes[d] = sizes[d] // 2 + (sizes[d] % 2)
        return sizes

    # -- turning shapes into arguments
    def make(self, name: str, origin: str, shapes: dict[str, tuple[int, ...]], scalars: dict[str, Any] | None = None,
             layout: str | None = None, notes: list[str] | None = None, dist: str | None = None,
             specials: bool | None = None) -> ScaleCase | None:
        """``specials``: whether special values may be planted (by default on any data but normal).
        A case aimed at a precision downgrade plants none: one nan or inf in a reduced row makes
        that row nonfinite on both sides, and a single long run is then hidden whole."""
        if self.rule is not None and self.rule.kind in MOVEMENT:
            shapes, scalars = self._movement(dict(shapes), dict(scalars or {}))
        if self.nbytes(shapes) > self.budget.max_bytes:
            return None  # checked before any value is drawn: a case over budget costs nothing
        dist = dist or self.next_distribution()
        args: dict[str, Any] = {}
        scalars = dict(scalars or {})
        for p in self.sig.params:  # the axes index_of indices are drawn along, before the indices
            dom = self.dom(p.name)
            if dom.index_of is not None and scalars.get(dom.axis) is None:
                scalars[dom.axis] = -1
        int_role = 0  # integer tensors so far (their place in an edge grid)
        for p in self.sig.params:
            t, dom = p.type, self.dom(p.name)
            if t.is_tensor_list:  # each element drawn as a single tensor of its dtype is
                et = t.elem.dtype
                args[p.name] = [float_values(self.rng, dist, tuple(s), et, dom,
                                             specials=dist != "normal" if specials is None else specials)
                                if et.is_float else int_values(self.rng, tuple(s), et, dom)
                                for s in shapes[p.name]]
            elif t.kind == "tensor":
                shape = tuple(int(s) for s in shapes[p.name])
                if dom.index_of is not None:
                    n = axis_length(tuple(int(s) for s in shapes[dom.index_of]), int(scalars[dom.axis]))
                    signed = GATHER_SIGNED.get(self.rule.kind, True) if self.rule is not None else True
                    args[p.name] = (signed_index_values if signed else index_values)(self.rng, shape, t.dtype, n)
                elif dom.index_into is not None:
                    table = shapes[dom.index_into]
                    args[p.name] = index_values(self.rng, shape, t.dtype, table[0] if table else 0)
                elif t.dtype.is_float:
                    # Normal data is the benign case, where the tolerance is tightest: no NaN there,
                    # which would make a whole reduced row NaN on both sides and hide it.
                    args[p.name] = float_values(self.rng, dist, shape, t.dtype, dom,
                                                specials=dist != "normal" if specials is None else specials)
                else:
                    args[p.name] = int_values(self.rng, shape, t.dtype, dom, int_role)
                    int_role += t.dtype.name != "bool"
                    if dom.edge_runs and self.rng.random() < 0.5:  # long runs of the extremes
                        info = np.iinfo(t.dtype.np)
                        edge_runs(self.rng, args[p.name], t.dtype, int(dom.min) if dom.min is not None else int(info.min),
                                  int(dom.max) if dom.max is not None else int(info.max))
                        notes = (notes or []) + [f"{p.name}: runs of extremes"]
            else:
                prefer = (scalars or {}).get(p.name)
                if prefer is None and dom.axis_of is not None:
                    prefer = -1
                args[p.name] = self.scalar(p.name, t, dom, prefer)
        for p in self.sig.tensor_params:  # values on a lattice of another tensor's (Domain.lattice)
            lattice = self.dom(p.name).lattice
            if lattice is not None and self.rng.random() < 0.5:
                own, of_core = lattice_cores(self.rule, self.sig, p.name, lattice.of)
                if snap_to_lattice(args[p.name], args[lattice.of], lattice.step, own, of_core,
                                   *_float_bounds(self.dom(p.name), p.type.dtype), lattice.multiples, self.rng):
                    notes = (notes or []) + [f"{p.name} on a lattice of {lattice.step} x {lattice.of}"]
        if self.rule is not None and self.rule.kind == "pool2d":
            if not self._fix_pool(args):
                return None
        if self.rule is not None and self.rule.kind == "pool":
            if not self._fix_pool_nd(args):
                return None
        if self.rule is not None:
            nbytes = arrays_nbytes(args)
            try:  # every result's out tensor (a tuple has several)
                for result, t in self.sig.results:
                    out = self.overload.rules[result].output_shape(args, self.tensors)
                    nbytes += int(np.prod(out, dtype=np.int64)) * t.dtype.np.itemsize
            except ValueError:
                return None
            if nbytes > self.budget.max_bytes:
                return None
        chosen = layout or ("contiguous" if self.rng.random() < 0.6 else
                            str(self.rng.choice(["transposed", "reversed", "offset"])))
        for k, v in list(args.items()):
            if isinstance(v, np.ndarray) and v.ndim:
                args[k] = lay_out(v, chosen)
            elif is_array_list(v):  # the first element in the chosen layout, the others in turn
                others = ["contiguous", "transposed", "reversed", "offset"]
                args[k] = [lay_out(e, chosen if i == 0 else others[(i + self.dist_i) % len(others)]) if e.ndim else e
                           for i, e in enumerate(v)]
        return ScaleCase(name=f"{name}, {dist}" + ("" if chosen == "contiguous" else f", {chosen}"),
                         args=args, origin=origin, distribution=dist, layout=chosen, notes=notes or [])

    def _movement(self, shapes: dict[str, tuple[int, ...]], scalars: dict[str, Any]) -> tuple[dict, dict]:
        """A data-movement rule's parameter, valid for the case's shape where the case gives none:
        a permutation, a regrouping of the dims (one in three with a -1), an axis, a shape to
        broadcast to; a squeeze case's shape gets a dim of 1 at its axis (the axis the case names,
        as an axis of that shape)."""
        rule, rng = self.rule, self.rng
        shape = tuple(shapes[rule.source])
        ndim = len(shape)
        if rule.kind == "squeeze":
            axis = scalars.get(rule.axis)
            axis = int(rng.integers(-ndim - 1, ndim + 1)) if axis is None else int(axis)
            if not (-ndim <= axis < ndim and shape[axis] == 1):
                if not -ndim - 1 <= axis <= ndim:
                    axis = int(rng.integers(-ndim - 1, ndim + 1))
                at = axis % (ndim + 1)
                shapes[rule.source] = shape[:at] + (1,) + shape[at:]
            scalars[rule.axis] = axis
        elif rule.kind == "expand_dims" and rule.axis not in scalars:
            scalars[rule.axis] = int(rng.integers(-ndim - 1, ndim + 1))
        elif rule.kind == "expand_dims" and not -ndim - 1 <= int(scalars[rule.axis]) <= ndim:
            scalars[rule.axis] = int(rng.integers(-ndim - 1, ndim + 1))
        elif rule.kind == "broadcast_to" and rule.dims not in scalars:
            # The case's shape is the target; the input gets a dim of 1 where it is broadcast (a
            # bias row, a per-head mask), or the target a new leading dim of 2 (the whole input twice).
            target = [int(d) for d in shape]
            if ndim and rng.random() < 2 / 3:
                at = int(rng.integers(0, ndim))
                shapes[rule.source] = shape[:at] + (1,) + shape[at + 1:]
            else:
                target = [2] + target
            scalars[rule.dims] = target
        elif rule.kind == "tile" and rule.dims not in scalars:
            # A row repeated down a batch (2, 1, ...), or a block doubled along its last dim.
            scalars[rule.dims] = [2] + [1] * ndim if rng.random() < 0.5 else [1] * (ndim - 1) + [2]
        elif rule.kind == "torch_pad" and rule.dims not in scalars:
            # The last dim padded and the one before it cropped by one (when it has a row to spare).
            scalars[rule.dims] = ([1, 2] + ([-1, 0] if ndim > 1 and shape[-2] > 0 else [])) if ndim else []
        elif rule.kind == "pad" and rule.dims not in scalars:
            # A pair per dim, a few rows or columns each (a conv's halo, a sequence padded to a length).
            scalars[rule.dims] = [int(w) for w in rng.integers(0, 4, size=2 * ndim)] or [1]
        elif rule.kind == "permute" and rule.dims not in scalars:
            scalars[rule.dims] = [int(a) for a in rng.permutation(ndim)]
        elif rule.kind == "reshape" and rule.dims not in scalars:
            new: list[int] = []
            i = 0
            while i < ndim:
                run = int(rng.integers(1, ndim - i + 1))
                size = int(np.prod(shape[i:i + run], dtype=np.int64))
                i += run
                f = [d for d in (2, 3, 4, 8, 16, 64, 128) if size % d == 0 and d < size]
                if f and rng.random() < 0.5:
                    d = int(rng.choice(f))
                    new += [d, size // d]
                else:
                    new.append(size)
            if new and rng.random() < 1 / 3 and int(np.prod(shape, dtype=np.int64)):
                new[int(rng.integers(0, len(new)))] = -1
            scalars[rule.dims] = new
        return shapes, scalars

    def _fix_pool(self, args: dict[str, Any]) -> bool:
        kh, kw, sh, sw, ph, pw = self.rule.pool
        shape = args[self.rule.source].shape
        for _ in range(50):
            if pool2d_error(shape, *(int(args[p]) for p in self.rule.pool)) is None:
                return True
            for p in (kh, kw, sh, sw, ph, pw):
                args[p] = self.scalar(p, self.sig.param(p).type, self.dom(p))
        return False

    def _fix_pool_nd(self, args: dict[str, Any]) -> bool:
        """A pool rule's parameters valid for the case's shape (redrawn from their domains, up to 50
        times, where the drawn ones are not)."""
        rule = self.rule
        shape = args[rule.source].shape
        params = list(rule.pool) + list(rule.dilation)
        for _ in range(50):
            if pool_error(shape, *rule.pool_args(args), rule.check_input_size) is None:
                return True
            for p in params:
                args[p] = self.scalar(p, self.sig.param(p).type, self.dom(p))
        return False

    # -- the sources of cases
    def bench_and_spec(self) -> Iterator[ScaleCase]:
        for origin, cases in (("spec", self.overload.scale), ("bench", self.overload.bench)):
            for case in cases:
                shapes: dict[str, Any] = {k: tuple(v.shape) for k, v in case.args.items() if isinstance(v, BenchTensor)}
                shapes.update({k: [tuple(e.shape) for e in v] for k, v in case.args.items()
                               if isinstance(v, list) and v and all(isinstance(e, BenchTensor) for e in v)})
                scalars = {k: v for k, v in case.args.items() if k not in shapes}
                if set(shapes) != set(self.tensors) | {p.name for p in self.sig.tensor_list_params}:
                    continue
                if origin == "bench" and self.budget.max_work < CPU_BUDGET.max_work:
                    # A smaller budget (the emulation layer, the corpus) cannot afford users' full shapes:
                    # the batch-like sizes a quarter, the feature sizes (any tensor's last dim) kept, so a
                    # hidden size of 384 stays 384 (a quarter, 96, is no longer a multiple of 128).
                    features = {v[-1] for v in _shape_list(shapes) if v}

                    def quarter(v: tuple[int, ...]) -> tuple[int, ...]:
                        return tuple(max(1, s // 4) if s > 64 and s not in features else s for s in v)

                    shapes = {k: [quarter(e) for e in v] if isinstance(v, list) else quarter(v)
                              for k, v in shapes.items()}
                if self.work_of(shapes) > self.budget.max_work:
                    continue  # the derived cases cover its dim sizes within the budget
                made = self.make(f"{origin} {case.name}", origin, shapes, scalars)
                if made is not None:
                    yield made

    def derived(self) -> Iterator[ScaleCase]:
        if self.rule is None:
            yield from self.strings()
            return
        kind = self.rule.kind
        if kind == "gufunc":
            yield from self.gufunc()
        elif kind == "pool2d":
            yield from self.pool2d()
        elif kind == "pool":
            yield from self.pool_nd()
        elif kind in GATHER:
            yield from self.gather()
        elif kind in JOIN:
            yield from self.joins()
        elif kind in ("boolean_mask", "masked_fill"):
            yield from self.masks()
        elif kind == "assign_region":
            yield from self.regions()
        elif kind == "dot":
            yield from self.dots()
        elif kind in CREATION:
            yield from self.creations()
        else:
            yield from self.arrays()

    def odd(self) -> int:
        """An odd-looking size from 1001 to 2015 whose remainder modulo 64 is at least 17."""
        n = 1000 + int(self.rng.integers(1, 1000))
        return n + 17 - n % 64 if n % 64 < 17 else n

    def long_size(self) -> int:
        """A long size just past a power of two or an odd one, with a remainder modulo 64 large enough
        that a dropped tail of a blocked loop is many elements, not one."""
        past = int(self.rng.choice([4096, 8192])) + int(self.rng.integers(17, 64))
        return int(self.rng.choice([past, 4095, self.odd()]))

    def gufunc(self) -> Iterator[ScaleCase]:
        rule = self.rule
        dims = list(dict.fromkeys(d for core in rule.inputs_core for d in core))
        ranks = {name: len(core) for name, core in zip(self.tensors, rule.inputs_core)}
        caps = {name: self.dom(name).max_dims for name in self.tensors}
        loop_ok = any(caps[n] is None or caps[n] > ranks[n] for n in self.tensors)

        def shapes_for(sizes: dict[str, int], loop: tuple[int, ...] = ()) -> dict[str, tuple[int, ...]]:
            out = {}
            for name, core in zip(self.tensors, rule.inputs_core):
                cap = caps[name]
                lead = loop if (cap is None or cap >= len(core) + len(loop)) else ()
                if not core and not lead:  # a tensor of loop dims only (token ids): a batch of sequences
                    lead = (3, 129)[: cap if cap is not None else 2] or ()
                out[name] = tuple(lead) + tuple(sizes[d] for d in core)
            return out

        # The work of a gufunc: its output's dims times the dims it reduces over; a dim that only
        # groups another (attention's key/value heads g, of which the query heads are a multiple)
        # adds none.
        bases = {of for dom in self.overload.domain.values() for of in (dom.multiple_of or {}).values()
                 if isinstance(of, str)}
        counted = set(dims) - (bases - set(rule.output_core))
        small = lambda: int(self.rng.choice([1, 2, 3, 5, 7]))  # noqa: E731
        # The CPU execution layer runs a block per fiber group: 100k blocks is more than it affords.
        reduction = REDUCTION_LENGTH if self.budget.max_work >= CPU_BUDGET.max_work else LONG_SIZES[-1]
        # Dims reduced over: those the output lacks, and a last dim kept by the output (the row a
        # layer norm, RMS norm or rotary embedding works along).
        reduced = (set(dims) - set(rule.output_core)) | (
            {rule.output_core[-1]} if rule.output_core and any(c and c[-1] == rule.output_core[-1]
                                                               for c in rule.inputs_core) else set())
        for d in dims:  # each dim long in turn: remainders of blocked loops, long reductions
            # A dim the op reduces over is long twice: on centred data, where a dropped or sampled
            # term shows, and on offset rows, where a float32 accumulator or a one-pass variance does.
            # Reduced dims get three: centred data at a long size with a large remainder modulo the
            # usual block sizes (a dropped tail shows: at the reduction length the tail is a
            # 1/8193 or 35/100003 part, inside a tolerance that grows with the length, so a dropped
            # remainder passed about one run in four), centred data at the reduction length (a
            # sampled axis shows), and offset rows there (a float32 accumulator shows).
            plans = ((("normal", False), ("normal", True), ("offset_rows", True)) if d in reduced
                     else ((None, None),))
            for dist, at_reduction in plans:
                sizes = {o: small() for o in dims}
                if at_reduction is None:
                    at_reduction = self.rng.random() < 0.5
                sizes[d] = reduction if at_reduction else self.long_size()
                sizes = _fit(sizes, (), self.budget.max_work, keep=d, counted=counted)
                sizes = _apply_multiples(self.shrink(sizes, shapes_for, keep=d), self.overload)
                made = self.make(f"derived: {d}={sizes[d]} long, " + self._sizes_text(sizes), "derived",
                                 shapes_for(sizes), dist=dist, specials=None if dist is None else False)
                if made is not None:
                    yield made
        # The multiples-of-128 case is on normal data, on every seed: a wrong path taken only at
        # aligned sizes must meet the tolerance where it is tightest. A drawn distribution let a
        # 0.13% error through on 2 seeds in 10 (offset rows widen a layer norm's allowance past it);
        # hostile data at model sizes is the around-model-sizes case's.
        for label, menu, dist in (("around model sizes", AROUND_MODEL, "offset_rows"),
                                  ("multiples of 128", (128, 256, 384, 768, 1024), "normal")):
            sizes = {d: int(self.rng.choice(menu)) for d in dims}
            loop = (int(self.rng.choice([2, 3])),) if loop_ok and self.rng.random() < 0.5 else ()
            sizes = self.shrink(_fit(sizes, loop, self.budget.max_work, counted=counted), shapes_for, loop)
            if label == "multiples of 128":
                sizes = {d: max(128, (s // 128) * 128) if s >= 128 else s for d, s in sizes.items()}
            sizes = _apply_multiples(sizes, self.overload)
            made = self.make(f"derived: {label}, " + self._sizes_text(sizes, loop), "derived", shapes_for(sizes, loop),
                             dist=dist)
            if made is not None:
                yield made
        yield from self.tables(dims, shapes_for)

    def tables(self, dims: list[str], shapes_for: Any) -> Iterator[ScaleCase]:
        """Index tables over 65536 rows: an index narrowed to 16 bits reads the wrong row."""
        for p in self.sig.tensor_params:
            table = self.dom(p.name).index_into
            if table is None:
                continue
            core = self.rule.inputs_core[self.tensors.index(table)]
            if not core:
                continue
            sizes = {d: int(self.rng.choice([2, 3, 8])) for d in dims}
            sizes[core[0]] = TABLE_ROWS + int(self.rng.integers(1, 4096))
            sizes = _apply_multiples(sizes, self.overload)
            shapes = shapes_for(sizes)
            if not self.rule.inputs_core[self.tensors.index(p.name)]:  # an index tensor of loop dims only
                shapes[p.name] = (4, 129)
            made = self.make(f"derived: table of {sizes[core[0]]} rows", "derived", shapes, dist="normal")
            if made is not None:
                yield made

    def arrays(self) -> Iterator[ScaleCase]:
        """elementwise, same_as and reduce: long 1-D runs, long rows, long strided axes, model shapes."""
        rule = self.rule
        axis_param = rule.axis or next((p.name for p in self.sig.params if self.dom(p.name).axis_of), None)
        n_tensors = len(self.tensors)
        min_dims = max([self.dom(n).min_dims or 0 for n in self.tensors] or [0])
        big = int(min(REDUCTION_LENGTH * 10 + int(self.rng.integers(1, 999)),
                      self.budget.max_work, self.budget.max_bytes // (8 * (n_tensors + 1)) - 1))
        # The long reductions meet the data that exposes each kind of downgrade on purpose, not by
        # chance: offset rows (float32 accumulation, one-pass variance), logits (no max-subtraction),
        # centred data (sampled or truncated axes); the other cases draw theirs in turn.
        layouts: list[tuple[str, tuple[int, ...], int | None, str | None]] = [
            ("one long run", (big,), 0, "offset_rows"),
            ("long rows", (3, REDUCTION_LENGTH), -1, "logits"),
            ("long offset rows", (2, REDUCTION_LENGTH + int(self.rng.integers(1, 64))), -1, "offset_rows"),
            ("a long strided axis", (self.long_size() * 8 + 1, 3), 0, "normal"),
            ("model-sized rows", (int(self.rng.choice(AROUND_MODEL[:9])), int(self.rng.choice(AROUND_MODEL))), -1, None),
            ("a long middle axis", (2, self.long_size(), 3), 1, None),
            ("multiples of 128", (int(self.rng.choice([128, 256, 384])), int(self.rng.choice([768, 1024]))), 0, None),
        ]
        for label, shape, axis, dist in layouts:
            if len(shape) < min_dims:
                shape = (1,) * (min_dims - len(shape)) + shape
            while int(np.prod(shape)) > self.budget.max_work and max(shape) > 1:
                i = int(np.argmax(shape))
                shape = shape[:i] + (shape[i] // 2 + 1,) + shape[i + 1:]
            shapes = {name: shape for name in self.tensors}
            if rule.kind == "elementwise" and n_tensors > 1 and len(shape) > 1 and self.rng.random() < 0.5:
                shapes[self.tensors[-1]] = shape[1:] if self.rng.random() < 0.5 else shape[:-1] + (1,)
            scalars = {axis_param: axis} if axis_param is not None and axis is not None else {}
            # A case whose data is chosen to expose a downgrade plants no special values where the
            # op works along rows (one nan hides a row); elementwise, a special hides only itself.
            aimed = dist is not None and rule.kind != "elementwise"
            made = self.make(f"derived: {label} {shape}" + (f", {axis_param}={axis}" if scalars else ""),
                             "derived", shapes, scalars, dist=dist, specials=False if aimed else None)
            if made is not None:
                yield made

    def creations(self) -> Iterator[ScaleCase]:
        """sized, arange: results past a vector register's tail and a blocked loop's, and model-shaped
        ones; an arange counting down and one whose step is not 1 (a fill that only stores its first
        value, or steps by 1, fails there). Their size follows from the parameters alone."""
        rule = self.rule
        if rule.kind == "sized":
            cases = [(self.long_size(),), (3, self.odd()), (8, 128, 384), (2, 1, self.odd(), 5)]
            for shape in cases:
                made = self.make(f"derived: shape {list(shape)}", "derived", {}, {rule.dims: [int(d) for d in shape]})
                if made is not None:
                    yield made
            return
        start, stop, step = rule.bounds
        n = self.long_size()
        if self.sig.param(start).type.name == "int":
            cases = [(0, n, 1), (-7, 3 * n - 7, 3), (n, -5, -2)]
        else:  # steps a float represents exactly and ones it rounds (positional encodings' exponents)
            steps = [1.0, 0.25, -0.1]
            dom = self.dom(step)
            if dom.choices is not None:  # the step stays in its domain; the bounds grow the length
                allowed = sorted((float(c) for c in dom.choices if float(c) != 0.0), key=abs)
                steps = [allowed[-1], allowed[0], next((c for c in allowed if c < 0), allowed[-1])]
            cases = [(0.0, n * abs(steps[0]), steps[0]), (-1.5, n * abs(steps[1]) - 1.5, steps[1]),
                     (n * abs(steps[2]), -2.0, steps[2]) if steps[2] < 0 else (-2.0, n * steps[2], steps[2])]
        for a, b, c in cases:
            made = self.make(f"derived: arange({a}, {b}, {c})", "derived", {}, {start: a, stop: b, step: c})
            if made is not None:
                yield made

    def pool2d(self) -> Iterator[ScaleCase]:
        src = self.rule.source
        for label, shape in (("a tall image", (1, 2, self.long_size(), 9)), ("a wide image", (1, 3, 7, self.odd())),
                             ("model-sized maps", (2, int(self.rng.choice([63, 64, 65])), 57, 57))):
            made = self.make(f"derived: {label} {shape}", "derived", {src: shape})
            if made is not None:
                yield made

    def pool_nd(self) -> Iterator[ScaleCase]:
        """A pool rule's cases by its number of pooled dims: one long pooled dim (past the sizes a
        vector register or a cache line covers), an odd one, and model-sized maps."""
        src, n = self.rule.source, self.rule.pool_ndim
        if n == 1:
            cases = (("a long sequence", (2, 3, self.long_size())), ("odd sequences", (3, 17, self.odd())),
                     ("model-sized maps", (2, int(self.rng.choice([63, 64, 65])), 1001)))
        elif n == 2:
            cases = (("a tall image", (1, 2, self.long_size(), 9)), ("a wide image", (1, 3, 7, self.odd())),
                     ("model-sized maps", (2, int(self.rng.choice([63, 64, 65])), 57, 57)))
        else:
            cases = (("a long clip", (1, 2, 33, 9, 9)), ("wide frames", (1, 2, 3, 7, self.odd())),
                     ("model-sized volumes", (2, int(self.rng.choice([15, 16, 17])), 9, 29, 29)))
        for label, shape in cases:
            made = self.make(f"derived: {label} {shape}", "derived", {src: shape})
            if made is not None:
                yield made

    def gather(self) -> Iterator[ScaleCase]:
        """take and take_along_axis: a long gathered axis, a table of more than 65536 rows (an index
        narrowed to 16 bits reads the wrong row), many indices, a middle axis and model-sized rows;
        take_along_axis also with indices and data broadcast against each other. The indices are
        valid for the case (both signs, the ends, the last rows)."""
        rule = self.rule
        x, ind, axis = rule.source, rule.indices, rule.axis
        long, rows, m = self.long_size(), TABLE_ROWS + int(self.rng.integers(1, 4096)), 1000 + int(self.rng.integers(1, 999))
        model = (int(self.rng.choice(AROUND_MODEL[3:12])), int(self.rng.choice([384, 768])))
        if rule.kind == "index_select":  # torch's index: a vector
            cases = [("a long axis", (3, long), (m,), -1), ("a table of many rows", (rows, 3), (4129,), 0),
                     ("many indices", (7, 5), (REDUCTION_LENGTH,), 0), ("a middle axis", (2, long, 3), (65,), 1),
                     ("model-sized rows", model, (1024,), 0)]
        elif rule.kind == "take":
            cases = [("a long axis", (3, long), (m,), -1), ("a table of many rows", (rows, 3), (4, 129), 0),
                     ("many indices", (7, 5), (REDUCTION_LENGTH,), 0), ("a middle axis", (2, long, 3), (2, 65), 1),
                     ("model-sized rows", model, (8, 128), 0)]
        else:
            cases = [("long rows", (3, long), (3, m), -1), ("a table of many rows", (rows, 3), (4129, 3), 0),
                     ("a table of many rows, broadcast", (rows, 3), (4129, 1), 0),
                     ("many indices", (3, 17), (3, REDUCTION_LENGTH), 1),
                     ("broadcast data rows", (1, long), (4, 257), 1), ("broadcast index rows", (5, long), (1, 257), 1),
                     ("a middle axis", (2, long, 3), (2, 65, 3), 1), ("model-sized rows", model, (model[0], 32), -1)]
        for label, shape, index_shape, ax in cases:
            made = self.make(f"derived: {label}, {x}{shape}, {ind}{index_shape}, {axis}={ax}", "derived",
                             {x: shape, ind: index_shape}, {axis: ax})
            if made is not None:
                yield made

    def masks(self) -> Iterator[ScaleCase]:
        """boolean_mask and masked_fill: a long 1-D run (the mask over every element), the rows of a table of more than
        65536 rows, model-sized rows, a mask over two leading dims; the mask true at about half the
        rows (drawn), and in one case at all of them (the count is the bound)."""
        rule = self.rule
        x, mask = rule.source, rule.indices
        long, rows = self.long_size(), TABLE_ROWS + int(self.rng.integers(1, 4096))
        model = (int(self.rng.choice(AROUND_MODEL[3:12])), int(self.rng.choice([384, 768])))
        cases = [("one long run", (REDUCTION_LENGTH + long,), 1), ("a table of many rows", (rows, 3), 1),
                 ("model-sized rows", model, 1), ("two leading dims", (3, long, 5), 2),
                 ("every row kept", (long, 7), 1)]
        for label, shape, k in cases:
            made = self.make(f"derived: {label}, {x}{shape}, {mask}{shape[:k]}", "derived",
                             {x: shape, mask: shape[:k]})
            if made is not None:
                if label == "every row kept":
                    made.args[mask][...] = True
                yield made

    def regions(self) -> Iterator[ScaleCase]:
        """assign_region (x[region] = value): a long 1-D run set with step 1 past a blocked loop's tail,
        a column block x[:, :k] of a model-sized (rows, 384 or 768) table, one row (a count of 1 on dim
        0, as x[r] = row is), every other row from the last backwards with a strided column range, and
        a block of a table of more than 65536 rows; value sized to the region (in the column block a
        broadcast view of one row: stride 0 along dim 0, as x[:, :k] = row lowers)."""
        rule = self.rule
        x, value = rule.source, rule.indices
        starts, steps = rule.region
        long, odd, rows = self.long_size(), self.odd(), TABLE_ROWS + int(self.rng.integers(1, 4096))
        model = (int(self.rng.choice(AROUND_MODEL[3:12])), int(self.rng.choice([384, 768])))
        k = int(self.rng.integers(17, model[1] // 2))
        r = int(self.rng.integers(0, model[0]))
        # (label, x's shape, starts, steps, counts)
        cases = [("a long run", (REDUCTION_LENGTH + long,), [7], [1], [REDUCTION_LENGTH + long - 7 - 5]),
                 (f"a column block [:, :{k}]", model, [0, 0], [1, 1], [model[0], k]),
                 (f"one row [{r}]", (model[0], model[1]), [r, 0], [1, 1], [1, model[1]]),
                 ("every other row backwards, strided columns", (odd, 129), [odd - 1, 3], [-2, 3],
                  [(odd - 1) // 2 + 1, 42]),
                 ("a block of a table of many rows", (rows, 5), [rows // 3, 1], [1, 1], [rows // 2, 3])]
        for label, shape, st_, sp, counts in cases:
            made = self.make(f"derived: {label}, {x}{shape}, {value}{tuple(counts)}", "derived",
                             {x: shape, value: tuple(counts)}, {starts: st_, steps: sp})
            if made is not None:
                if label.startswith("a column block"):  # the right-hand side one row, broadcast: stride 0 along dim 0
                    made.args[value] = np.broadcast_to(np.ascontiguousarray(made.args[value][:1]), tuple(counts))
                yield made

    def dots(self) -> Iterator[ScaleCase]:
        """dot (numpy.dot): a long inner product (1-D . 1-D) on centred data and on offset data (a float32
        accumulator shows), a long contraction of a 2-D . 1-D (rows of a matrix times a vector), a
        model-sized 2-D . 2-D (a projection: hidden 384 or 768), a 2-D . 2-D with a long contraction and
        few rows and columns, an N-D . M-D (batch dims on both sides, b's contracted dim in the middle)
        with odd sizes past a blocked loop's tail, and a 0-d scalar times a long vector; the long
        contraction with both operands transposed (column-major: b's contracted dim is its inner one). Each
        shrunk to the work and byte budgets (_halve_dot); the other cases' layouts drawn as any case's."""
        rule = self.rule
        a, b = rule.source, rule.indices
        reduction = REDUCTION_LENGTH if self.budget.max_work >= CPU_BUDGET.max_work else LONG_SIZES[-1]
        long, odd = self.long_size(), self.odd()
        hidden = int(self.rng.choice([384, 768]))
        rows = int(self.rng.choice(AROUND_MODEL[3:12]))
        k_odd = int(self.rng.integers(17, 200)) * 2 + 1
        # (label, a's shape, b's shape, distribution, layout)
        cases = [("a long inner product", (reduction + long,), (reduction + long,), "normal", None),
                 ("a long inner product on offset data", (reduction + 7,), (reduction + 7,), "offset_rows", None),
                 ("matrix times a long vector", (3, reduction), (reduction,), None, None),
                 (f"a projection to {hidden}", (rows, hidden), (hidden, odd), None, None),
                 ("a long contraction of few rows and columns", (5, long), (long, 3), "offset_rows", "transposed"),
                 ("batch dims on both sides", (2, 3, 33, k_odd), (2, k_odd, 129), None, None),
                 ("a scalar times a long vector", (), (long * 8 + 1,), None, None)]
        for label, sa, sb, dist, layout in cases:
            shapes = {a: sa, b: sb}
            while (self.work_of(shapes) > self.budget.max_work or self.nbytes(shapes) > self.budget.max_bytes) \
                    and max(sa + sb, default=1) > 1:
                sa, sb = _halve_dot(sa, sb)
                shapes = {a: sa, b: sb}
            made = self.make(f"derived: {label}, {a}{sa}, {b}{sb}", "derived", shapes, layout=layout, dist=dist,
                             specials=False if dist is not None else None)
            if made is not None:
                yield made

    def joins(self) -> Iterator[ScaleCase]:
        """concatenate and stack: a KV-cache append (a long cache, one new position, a middle axis),
        long rows joined on the last axis, many small elements, model-sized elements, elements of
        size 0 among long ones."""
        rule = self.rule
        xs, axis = rule.source, rule.axis
        long, odd = self.long_size(), self.odd()
        hidden = int(self.rng.choice([384, 768]))
        if rule.kind == "concatenate":
            cases = [("a KV-cache append", [(1, 12, long // 8, 64), (1, 12, 1, 64)], 2),
                     ("long rows", [(3, long), (3, odd), (3, 17)], -1),
                     ("many elements", [(int(self.rng.integers(1, 9)), 33)] * 129, 0),
                     ("model-sized elements", [(8, 128, hidden), (8, 129, hidden)], 1),
                     ("empty elements among long ones", [(2, long), (2, 0), (2, odd), (2, 0)], 1)]
        else:
            cases = [("long elements", [(long,)] * 5, 0), ("on a new last axis", [(3, odd)] * 4, -1),
                     ("many elements", [(33,)] * 129, 1), ("attention heads", [(1, 128, 64)] * 12, 1),
                     ("model-sized elements", [(8, 128, hidden)] * 3, 2)]
        for label, shapes, ax in cases:
            made = self.make(f"derived: {label}, {len(shapes)} x {xs} {shapes[0]}..., {axis}={ax}", "derived",
                             {xs: shapes}, {axis: ax})
            if made is not None:
                yield made

    def strings(self) -> Iterator[ScaleCase]:
        """Signatures without tensors: long strings (64 KB and more, multi-byte UTF-8) where the op
        takes strings, and WordPiece vocabularies of more than 65536 pieces."""
        params = self.sig.params
        texts = [p for p in params if p.type.name == "str" or (p.type.kind == "list" and p.type.elem.name == "str")]
        if not texts or all(self.dom(p.name).choices is not None for p in texts):
            return  # no strings, or only a few fixed ones: nothing grows
        prepared_by = {p.name: self.dom(p.name).prepared_by for p in params if self.dom(p.name).prepared_by}
        kinds = {self.dom(p.name).strings for p in params}
        kinds |= {d.strings for op in prepared_by.values() for d in prepared.preparing(op)[1].domain.values()}
        if kinds & {"bpe_vocab", "bpe_table_vocab"}:
            yield from self.grown_texts()
            return
        wordpiece = bool(kinds & {"wordpiece_vocab", "wordpiece_table_vocab"})
        for label, size in (("64 KB", STRING_BYTES + int(self.rng.integers(1, 4096))), ("200 KB", 200 * 1024)):
            args: dict[str, Any] = {}
            notes: list[str] = []
            for p in params:
                dom, t = self.dom(p.name), p.type
                if p.name in prepared_by:
                    args[p.name], note = self.prepared(prepared_by[p.name], t)
                    notes.append(note)
                elif dom.strings in ("wordpiece_vocab", "wordpiece_table_vocab"):
                    args[p.name] = wordpiece_vocabulary(self.rng, TABLE_ROWS + int(self.rng.integers(1, 4096)))
                    notes.append(f"{len(args[p.name])} vocabulary pieces")
                elif t.kind == "list" and t.elem.name == "str":
                    alphabet = string.ascii_lowercase if wordpiece else string.ascii_letters
                    args[p.name] = [long_text(self.rng, size, alphabet), long_text(self.rng, 300, alphabet), ""]
                elif dom.strings in ("cased_text", "repr_text") and label == "64 KB":
                    # every code point once: a case table is checked whole, not where draws land
                    args[p.name] = every_code_point()
                    notes.append(EVERY_CODE_POINT)
                elif dom.strings == "cased_text":
                    args[p.name] = long_text(self.rng, size, CASED_ALPHABET)
                    notes.append("cased words, capital sigmas among case-ignorable code points")
                elif dom.strings == "format_specs":
                    # a spec that pads the result out to the grown size: the output grows, not the spec
                    pad = ["{}>{}", "{}^{}", "{}<{}", "{}={}"][int(self.rng.integers(0, 4))]
                    args[p.name] = pad.format(["*", "中", " "][int(self.rng.integers(0, 3))], size)
                    notes.append(f"format spec {args[p.name]!r}")
                elif dom.strings == "number_text":
                    # long numeric literals: int()'s digit limit, float()'s rounding of long mantissas
                    args[p.name], note = long_number_text(size, tail=label != "64 KB")
                    notes.append(note)
                elif t.name == "str" and dom.choices is None:
                    args[p.name] = long_text(self.rng, size)
                elif t.name == "int" and dom.choices is None and any(q.type.name == "str" for q in params):
                    # an int beside a string repeats it (str * n): a few repeats keep it to megabytes
                    hi = int(dom.max) if dom.max is not None else 8
                    args[p.name] = min(hi, int(self.rng.integers(2, 9)))
                else:
                    args[p.name] = self.scalar(p.name, t, dom)
            if EVERY_CODE_POINT in notes:
                label = "4.3 MB"  # the whole of Unicode, not the grown size
            yield ScaleCase(name=f"derived: strings of {label}" + (f", {notes[0]}" if notes else ""), args=args,
                            origin="derived", distribution="text", notes=notes)

    def prepared(self, op: str, t: Any) -> tuple[Any, str]:
        """A prepared argument at scale: ``op``'s reference result for the first of its own scale
        cases that it accepts (a WordPiece table of a 65536+ piece vocabulary)."""
        spec, overload = prepared.preparing(op)
        for case in _Builder(spec, overload, int(self.rng.integers(0, 2**32)), self.budget).derived():
            try:
                return prepared.prepare(op, case.args, t), f"{op} of {case.name.removeprefix('derived: ')}"
            except prepared.NotPrepared:
                continue
        raise ValueError(f"{op}: none of its scale cases is an argument it accepts; give its spec a scale case")

    def grown_texts(self) -> Iterator[ScaleCase]:
        """Where the other arguments must agree with each other (a BPE vocabulary, its merges and its
        added tokens), one example drawn by the overload's own strategy, its texts grown past 64 KB
        by joining its drawn texts over and over (so they hold what the vocabulary matches)."""
        drawn = drawn_example(self.overload, int(self.rng.integers(0, 2**32)))
        for label, size in (("64 KB", STRING_BYTES + int(self.rng.integers(1, 4096))), ("200 KB", 200 * 1024)):
            args = dict(drawn)
            for p in self.sig.params:
                dom, t = self.dom(p.name), p.type
                if t.kind == "list" and t.elem.name == "str" and dom.strings in ("bpe_text", "mixed_text", "unicode"):
                    pieces = [x for x in drawn[p.name] if x] or [long_text(self.rng, 64)]
                    grown, n = [], 0
                    while n < size:
                        piece = pieces[int(self.rng.integers(0, len(pieces)))]
                        grown.append(piece)
                        n += len(piece.encode()) + 1
                    args[p.name] = [" ".join(grown)] + list(drawn[p.name])[:2]
            yield ScaleCase(name=f"derived: drawn example with texts grown to {label}", args=args, origin="derived",
                            distribution="text")

    def _sizes_text(self, sizes: dict[str, int], loop: tuple[int, ...] = ()) -> str:
        return ", ".join(f"{d}={s}" for d, s in sizes.items()) + (f", loop {loop}" if loop else "")


def drawn_examples(overload: Overload, seed: int, n: int, max_bytes: int | None = None) -> list[dict[str, Any]]:
    """``n`` examples of the overload's Hypothesis strategy, reproducibly from ``seed`` (only those
    whose tensors hold at most ``max_bytes``; at least one, whatever its size)."""
    found: list[dict[str, Any]] = []

    @hypothesis_seed(seed)
    @settings(max_examples=max(n * 4, 1), database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(examples(overload))
    def draw(args: dict[str, Any]) -> None:
        small = max_bytes is None or arrays_nbytes(args) <= max_bytes
        if len(found) < n and (small or not found):
            found.append(args)

    draw()
    return found


def drawn_example(overload: Overload, seed: int) -> dict[str, Any]:
    """One example of the overload's Hypothesis strategy, reproducibly from ``seed``."""
    return drawn_examples(overload, seed, 1)[0]


def scale_cases(spec: Spec, overload: Overload, seed: int, budget: Budget = CPU_BUDGET) -> Iterator[ScaleCase]:
    """The scale cases of one overload for one seed, within the budget (the spec's own ``scale:``
    cases and its ``bench:`` shapes first, then the derived ones)."""
    builder = _Builder(spec, overload, seed, budget)
    n = 0
    for case in chain(builder.bench_and_spec(), builder.derived()):  # lazily: one case's arrays at a time
        if n >= budget.max_cases:
            return
        n += 1
        yield case
