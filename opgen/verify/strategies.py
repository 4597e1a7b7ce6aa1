"""Hypothesis strategies derived from a spec overload: one example = one dict of arguments.

Shapes come from hypothesis.extra.numpy (``mutually_broadcastable_shapes`` for gufunc
and elementwise rules, ``array_shapes`` otherwise) with 0-size, 0-d and size-1 dims,
plus lengths that leave a vector tail (23, 812). Values are drawn heavy-tailed from a
Hypothesis-chosen seed and distribution (fast for large arrays, and shrinkable), then
special values the domain admits are planted at Hypothesis-chosen positions. Index
tensors (``index_into``) hold indices inside their table, and now and then outside it
where the overload declares IndexError; scalars with ``choices`` take only those. Every
tensor is laid out in memory in a Hypothesis-chosen way: contiguous, transposed,
strided, reversed or offset, with identical values. A list of tensors (under a concatenate or
stack rule) gets a drawn length (the empty list and one element included), elements of shapes the
rule relates, each drawn and laid out on its own; where ValueError is declared, one draw in eight
is one NumPy rejects.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from opgen.spec.dtypes import DType
from opgen.spec.nativetypes import NativeType
from opgen.spec.model import Domain, Overload, lattice_cores
from opgen.spec.shapes import GATHER, GATHER_SIGNED, JOIN, MOVEMENT, dot_shape, dot_terms, pad_pairs
from opgen.verify import bpe_strategies, prepared, text_strategies
from opgen.arrays import c_order

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# Lengths that are not multiples of any vector width, so vectorised kernels must
# handle a tail; 812 also makes reductions long enough for float32 drift to show.
TAIL_LENGTHS = (23, 812)
DISTRIBUTIONS = ("heavy_tailed", "uniform", "log_uniform", "small_integers")
LAYOUTS = ("contiguous", "transposed", "strided", "reversed", "offset")


def special_value(name: str, dt: DType) -> float:
    if name == "nan":
        return float("nan")
    if name == "inf":
        return float("inf")
    if name == "-inf":
        return float("-inf")
    if name == "-0":
        return -0.0
    if name == "subnormal":
        return float(np.finfo(dt.numpy).smallest_subnormal) * 3
    raise ValueError(name)


def _bounds(dom: Domain, dt: DType) -> tuple[float, float]:
    if dt.is_float:
        big = float(np.finfo(dt.numpy).max)
        return (dom.min if dom.min is not None else -big, dom.max if dom.max is not None else big)
    info = np.iinfo(dt.numpy) if dt.name != "bool" else None
    lo = int(dom.min) if dom.min is not None else (info.min if info else 0)
    hi = int(dom.max) if dom.max is not None else (info.max if info else 1)
    return lo, hi


def draw_integers(rng: np.random.Generator, lo: int, hi: int, shape: tuple[int, ...], dt: DType) -> np.ndarray:
    """Uniform integers in [lo, hi] of an integer dtype, uint64's upper half included (NumPy draws
    in int64 otherwise, which cannot hold it)."""
    wide = np.uint64 if dt.np == np.uint64 else np.int64
    return rng.integers(lo, hi, size=shape, endpoint=True, dtype=wide).astype(dt.np)


def edge_grid(values: np.ndarray, edges: list[int], role: int) -> None:
    """Write every pair of edge values into the first len(edges)**2 elements (in flat order) of
    two tensors of the same shape: the first integer operand (role 0) holds edges[i // E], the
    others edges[i % E], so a binary op meets min // -1, max + 1 and 0 % 0 at one index."""
    flat = values.reshape(-1)
    e = len(edges)
    m = min(flat.size, e * e)
    i = np.arange(m)
    flat[:m] = np.array(edges, dtype=object)[(i // e) % e if role == 0 else i % e].astype(values.dtype)


def integer_edges(dt: DType, lo: int, hi: int) -> list[int]:
    """The values where integer kernels go wrong, inside [lo, hi]: 0 (a divisor), +-1 and 2, and
    the dtype's extremes and their neighbours (wrap-around, abs(min), min // -1, saturation). A
    uniform draw over a 64-bit range meets none of them."""
    info = np.iinfo(dt.np)
    near = (0, 1, -1, 2, -2, int(info.min), int(info.min) + 1, int(info.max), int(info.max) - 1)
    return sorted({v for v in near if lo <= v <= hi})


def edge_runs(rng: np.random.Generator, values: np.ndarray, dt: DType, lo: int, hi: int) -> None:
    """Overwrite long runs of ``values`` (in flat order) with the dtype's extremes inside [lo, hi]
    (min, max and their neighbours): the whole tensor in a third of the calls, else one to three
    runs of a quarter of it or more; each run one extreme, min and max alternating, or extremes at
    random (Domain.edge_runs). A k-term sum of products of extremes is where a narrower
    accumulator saturates or wraps."""
    flat = values.reshape(-1)
    n = flat.size
    info = np.iinfo(dt.np)
    ext = [v for v in (int(info.min), int(info.max), int(info.min) + 1, int(info.max) - 1) if lo <= v <= hi]
    if not n or not ext:
        return
    spans = [(0, n)] if rng.random() < 1 / 3 else []
    for _ in range(len(spans) == 0 and int(rng.integers(1, 4))):
        length = int(rng.integers(max(n // 4, 1), n + 1))
        start = int(rng.integers(0, n - length + 1))
        spans.append((start, start + length))
    for a, b in spans:
        kind = int(rng.integers(0, 3))
        if kind == 0:
            run = np.full(b - a, ext[int(rng.integers(0, len(ext)))], dtype=object)
        elif kind == 1:
            pair = [ext[0], ext[1 % len(ext)]][:: 1 if rng.random() < 0.5 else -1]
            run = np.array(pair, dtype=object)[np.arange(b - a) % 2]
        else:
            run = np.array(ext, dtype=object)[rng.integers(0, len(ext), size=b - a)]
        flat[a:b] = run.astype(dt.np)


def snap_to_lattice(values: np.ndarray, of: np.ndarray, step: float, own_core: tuple[str, ...],
                    of_core: tuple[str, ...], lo: float, hi: float, multiples: int | None = None,
                    rng: np.random.Generator | None = None) -> bool:
    """Put ``values`` in place on the lattice of integer multiples of ``step * of`` (Domain.lattice):
    each snapped to its nearest multiple, or with ``multiples`` replaced by k * step * of for
    integers k drawn from ``rng`` uniformly in [-multiples, multiples]. ``of`` is broadcast against
    ``values`` as a shape rule aligns them: its core dims (a subsequence of ``own_core``) at theirs,
    its loop dims against the loop dims (where ``values`` has a loop dim of 1 that ``of`` does not,
    ``of``'s first index there). Where the lattice's spacing is zero or not finite, and where
    ``of`` cannot be aligned at all, the values stay. Then clipped to [lo, hi]. Whether it did."""
    if values.size == 0 or of.size == 0 or values.ndim < len(own_core):
        return False
    n_of_loop = of.ndim - len(of_core)
    core_sizes = dict(zip(of_core, of.shape[n_of_loop:]))
    g = of.reshape(of.shape[:n_of_loop] + tuple(core_sizes.get(d, 1) for d in own_core))
    g = g[(0,) * max(g.ndim - values.ndim, 0)] if g.ndim > values.ndim else g.reshape((1,) * (values.ndim - g.ndim) + g.shape)
    g = g[tuple(slice(0, 1) if gs != vs and vs == 1 else slice(None) for gs, vs in zip(g.shape, values.shape))]
    try:
        of_b = np.broadcast_to(g, values.shape)
    except ValueError:
        return False
    dt = values.dtype
    with np.errstate(all="ignore"):
        g = of_b.astype(np.float64) * step
        v = values.astype(np.float64)
        ok = np.isfinite(g) & (g != 0) & np.isfinite(v)
        if multiples is not None:
            t = rng.integers(-multiples, multiples, size=v.shape, endpoint=True) * step
        else:
            t = np.round(np.where(ok, v / np.where(ok, g, 1.0), 0.0)) * step
        # The value of the tensor's dtype nearest t * of, or a neighbour of it, whose quotient by
        # of in that dtype is exactly t: rounding to the dtype must not move the quotient off the
        # lattice (105.49999 is no tie).
        of_d = of_b.astype(np.result_type(dt, of.dtype))
        x = (t * of_b.astype(np.float64)).astype(dt)
        best = x
        for cand in (np.nextafter(x, np.inf, dtype=dt), np.nextafter(x, -np.inf, dtype=dt)):
            exact = (best.astype(of_d.dtype) / of_d) == t
            best = np.where(exact, best, cand)
        best = np.where((best.astype(of_d.dtype) / of_d) == t, best, x)
        values[...] = np.where(ok, np.clip(best, lo, hi), values).astype(dt)
    return True


def _values(rng: np.random.Generator, dist: str, shape: tuple[int, ...], dt: DType, dom: Domain) -> np.ndarray:
    lo, hi = _bounds(dom, dt)
    n = int(np.prod(shape))
    if dt.name == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if not dt.is_float:
        if dist == "small_integers":  # -8..8 where the domain allows: equal pairs, zeros, -1s are common
            small_lo, small_hi = max(lo, -8), min(hi, 8)
            if small_lo > small_hi:
                small_lo, small_hi = lo, min(hi, lo + 16)
            return draw_integers(rng, small_lo, small_hi, shape, dt)
        return draw_integers(rng, lo, hi, shape, dt)
    span = min(hi - lo, 1e300)
    if dist == "uniform":
        v = rng.uniform(max(lo, -1e300), min(hi, 1e300), size=n)
    elif dist == "log_uniform":
        top = np.log10(max(abs(lo), abs(hi), 1e-30))
        v = rng.choice([-1.0, 1.0], size=n) * 10.0 ** rng.uniform(top - 12, top, size=n)
    elif dist == "small_integers":
        v = rng.integers(-8, 9, size=n).astype(np.float64)
    else:  # heavy_tailed: Student's t with 1.5 degrees of freedom, scaled to the domain
        v = rng.standard_t(1.5, size=n) * max(min(span / 200.0, 1e6), 1.0)
    return np.clip(v, lo, hi).astype(dt.np).reshape(shape)


@st.composite
def _tensor(draw: st.DrawFn, shape: tuple[int, ...], dt: DType, dom: Domain,
            index_bound: int | None = None, out_of_range: bool = False, role: int = 0) -> np.ndarray:
    seed = draw(st.integers(0, 2**32 - 1), label="value seed")
    if index_bound is not None:
        return lay_out(draw(_indices(seed, shape, dt, index_bound, out_of_range)), draw(st.sampled_from(LAYOUTS),
                                                                                          label="layout"))
    dist = draw(st.sampled_from(DISTRIBUTIONS), label="distribution")
    values = _values(np.random.default_rng(seed), dist, shape, dt, dom)
    n = values.size
    if dom.special and n and dt.is_float:
        plants = draw(
            st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(dom.special)), max_size=min(n, 4)),
            label="special values",
        )
        flat = values.reshape(-1)
        for index, name in plants:
            flat[index] = special_value(name, dt)
    if n and not dt.is_float and dt.name != "bool":
        # Integers' special values, planted in three draws of four: 0, +-1, the extremes. Uniform
        # draws almost never hold them (an int64 zero divisor: 2**-64 an element), so without
        # this a kernel that traps on x // 0 or wraps min // -1 wrongly would pass.
        # Now and then as a grid of every pair (edge_grid), which two operands of one shape
        # line up: min // -1 needs both at one index.
        edges = integer_edges(dt, *_bounds(dom, dt))
        mode = draw(st.integers(0, 3), label="plant integer edges") if edges else 0
        if mode == 3:
            edge_grid(values, edges, role)
        elif mode:
            plants = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(edges)), min_size=1,
                                   max_size=min(n, 6)), label="integer edge values")
            flat = values.reshape(-1)
            for index, value in plants:
                flat[index] = value
        if dom.edge_runs and draw(st.booleans(), label="runs of extremes"):
            edge_runs(np.random.default_rng(seed + 1), values, dt, *_bounds(dom, dt))
    return lay_out(values, draw(st.sampled_from(LAYOUTS), label="layout"))


@st.composite
def _indices(draw: st.DrawFn, seed: int, shape: tuple[int, ...], dt: DType, bound: int,
             out_of_range: bool) -> np.ndarray:
    """Indices into a dim of size ``bound``: inside [0, bound), and where the overload declares
    IndexError, now and then a few outside it (-1, bound, the dtype's extremes: a kernel must
    check before it multiplies an index by a stride)."""
    n = int(np.prod(shape))
    if bound > 0:
        values = np.random.default_rng(seed).integers(0, bound, size=shape, dtype=np.int64)
    else:  # an empty table: every index is out of range
        values = np.zeros(shape, dtype=np.int64)
    info = np.iinfo(dt.np)
    bad = sorted({v for v in (-1, bound, bound + 1, int(info.min), int(info.max)) if info.min <= v <= info.max
                  and not 0 <= v < bound})
    if out_of_range and n and bad and draw(st.integers(0, 7), label="plant out-of-range indices") == 0:
        plants = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(bad)), min_size=1, max_size=3),
                      label="out-of-range indices")
        flat = values.reshape(-1)
        for index, value in plants:
            flat[index] = value
    return values.astype(dt.np)


def lay_out(values: np.ndarray, layout: str) -> np.ndarray:
    """The same values in another memory layout (what a strided view looks like)."""
    if values.ndim == 0 or layout == "contiguous":
        return np.array(values, order="C", copy=True)  # 0-d stays 0-d (opgen.arrays)
    if layout == "transposed":
        base = c_order(values.T)
        return base.T
    if layout == "strided":
        # Every other element of the last dim and every other row of the first: non-unit strides
        # in the innermost and the outermost dim, at most 4x the memory (doubling every dim of a
        # 4-d tensor would take 16x, and the verifier sends whole buffers both ways).
        steps = [1] * values.ndim
        steps[-1] = steps[0] = 2
        big = np.zeros(tuple(s * k for s, k in zip(values.shape, steps)), dtype=values.dtype)
        view = big[tuple(slice(None, None, k) for k in steps)]
        view[...] = values
        return view
    if layout == "reversed":
        base = c_order(values[..., ::-1])
        return base[..., ::-1]
    # offset: the view starts one element into its buffer (misaligned for SIMD loads)
    buf = np.zeros(values.size + 1, dtype=values.dtype)
    view = buf[1:].reshape(values.shape)
    view[...] = values
    return view


def _scalar(t: NativeType, dom: Domain) -> st.SearchStrategy[Any]:
    if dom.choices is not None:
        return st.sampled_from([float(c) if t.name == "float" else c for c in dom.choices])
    if t.name == "str" and dom.strings != "unicode":
        return string_strategy(dom)
    if t.name == "int":
        lo = int(dom.min) if dom.min is not None else INT64_MIN
        hi = int(dom.max) if dom.max is not None else INT64_MAX
        return st.integers(lo, hi)
    if t.name == "float":
        finite = st.floats(
            min_value=dom.min, max_value=dom.max, allow_nan=False, allow_infinity=False,
            allow_subnormal=None,  # subnormals wherever the range includes them
        )
        specials = [special_value(s, t.dtype) for s in dom.special]
        return st.one_of(finite, st.sampled_from(specials)) if specials else finite
    if t.name == "bool":
        return st.booleans()
    # str: any Unicode that UTF-8 can carry (lone surrogates cannot cross a native boundary)
    return st.text(st.characters(exclude_categories=("Cs",)), max_size=dom.max_len if dom.max_len is not None else 64)


@st.composite
def prepared_argument(draw: st.DrawFn, op: str, t: NativeType) -> tuple[Any, list[str]]:
    """What ``op`` (a domain's prepared_by) returns for arguments drawn from its own domain, and
    the first list[str] argument it was prepared from (the vocabulary a words_of spells from)."""
    _, preparing_overload = prepared.preparing(op)
    args = draw(examples(preparing_overload), label=f"{op}'s arguments")
    try:
        value = prepared.prepare(op, args, t)
    except prepared.NotPrepared:
        assume(False)  # an error of the preparing op: not an argument it ever hands on
    strings = [args[p.name] for p in preparing_overload.sig.params if p.type.kind == "list" and p.type.elem.name == "str"]
    return value, strings[0] if strings else []


def _shapes(draw: st.DrawFn, overload: Overload) -> dict[str, tuple[int, ...]]:
    # a prepared tensor is another op's result, not a shape drawn here
    tensors = [p for p in overload.sig.tensor_params
               if overload.domain.get(p.name, Domain()).prepared_by is None]
    if not tensors:
        return {}
    doms = [overload.domain.get(p.name, Domain()) for p in tensors]
    max_side = min((d.max_side for d in doms if d.max_side), default=8)
    max_dims = min((d.max_dims for d in doms if d.max_dims is not None), default=4)
    min_dims = max((d.min_dims for d in doms if d.min_dims is not None), default=0)
    rule = overload.rule
    if rule is not None and rule.kind == "gufunc":
        # Each tensor's own max_dims caps its rank: a weight that must be exactly (n, k) gets
        # max_dims 2 and no loop dims, while the input beside it keeps its batch dims
        # (dropping leading dims keeps the shapes mutually broadcastable).
        caps = [d.max_dims if d.max_dims is not None else 4 for d in doms]
        loops = max(max(cap - len(core), 0) for cap, core in zip(caps, rule.inputs_core))
        shapes = draw(
            hnp.mutually_broadcastable_shapes(
                signature=rule.gufunc,
                min_dims=0,
                max_dims=loops,
                min_side=0,
                max_side=max_side,
            ),
            label="shapes",
        ).input_shapes
        drawn = {p.name: tuple(s)[max(len(s) - max(cap, len(core)), 0):]
                 for p, s, cap, core in zip(tensors, shapes, caps, rule.inputs_core)}
        return _multiples(draw, drawn, overload, max_side)
    if len(tensors) > 1:
        shapes = draw(
            hnp.mutually_broadcastable_shapes(
                num_shapes=len(tensors), min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side
            ),
            label="shapes",
        ).input_shapes
        return {p.name: tuple(s) for p, s in zip(tensors, shapes)}
    tails = [s for s in ((n,) for n in TAIL_LENGTHS) if min_dims <= 1 <= max_dims]
    tails += [(3, n) for n in TAIL_LENGTHS if min_dims <= 2 <= max_dims]
    shape = draw(
        st.one_of(
            hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side),
            st.sampled_from(tails) if tails else st.nothing(),
        ),
        label="shape",
    )
    return {tensors[0].name: tuple(shape)}


def _multiples(draw: st.DrawFn, shapes: dict[str, tuple[int, ...]], overload: Overload,
               max_side: int) -> dict[str, tuple[int, ...]]:
    """Resize the core dims a domain's ``multiple_of`` names to a multiple of another core dim
    or of a number, in every tensor that has them; one draw in eight keeps the drawn size."""
    cores = dict(zip((p.name for p in overload.sig.tensor_params), overload.rule.inputs_core))

    def size(dim: str) -> int:
        name = next(n for n, core in cores.items() if dim in core)
        return shapes[name][len(shapes[name]) - len(cores[name]) + cores[name].index(dim)]

    for name in cores:
        for dim, of in (overload.domain.get(name, Domain()).multiple_of or {}).items():
            base = of if isinstance(of, int) else size(of)
            if base == 0 or draw(st.integers(0, 7), label=f"keep {dim} as drawn") == 0:
                continue
            new = base * draw(st.integers(1, max(max_side // base, 1)), label=f"{dim} as a multiple of {of}")
            for other, core in cores.items():
                if dim in core:
                    at = len(shapes[other]) - len(core) + core.index(dim)
                    shapes[other] = shapes[other][:at] + (new,) + shapes[other][at + 1:]
    return shapes


@st.composite
def examples(draw: st.DrawFn, overload: Overload) -> dict[str, Any]:
    """Arguments for one call, keyed by parameter name, in signature order."""
    if overload.rule is not None and overload.rule.kind in GATHER:
        shapes, moved = _gather_draw(draw, overload)
    elif overload.rule is not None and overload.rule.kind in ("boolean_mask", "masked_fill"):
        shapes, moved = _mask_draw(draw, overload)
    elif overload.rule is not None and overload.rule.kind == "assign_region":
        shapes, moved = _region_draw(draw, overload)
    elif overload.rule is not None and overload.rule.kind == "dot":
        shapes, moved = _dot_draw(draw, overload)
    elif overload.rule is not None and overload.rule.kind in JOIN:
        shapes, moved = {}, draw(join_arguments(overload))
    else:
        shapes = _shapes(draw, overload)
        moved = _movement_params(draw, overload, shapes)
        moved.update(_pool_params(draw, overload, shapes))
    moved.update(_index_axes(draw, overload, shapes, moved))
    args: dict[str, Any] = {}
    sources: dict[str, list[str]] = {}  # a prepared argument's vocabulary (words_of)
    int_role = 0  # integer tensors so far: the role of the next one in an edge grid
    for p in overload.sig.params:
        dom = overload.domain.get(p.name, Domain())
        t = p.type
        if p.name in moved:
            args[p.name] = moved[p.name]
        elif dom.prepared_by is not None:
            args[p.name], sources[p.name] = draw(prepared_argument(dom.prepared_by, t), label=p.name)
        elif dom.words_of is not None and draw(st.booleans(), label=f"{p.name} spelled from {dom.words_of}"):
            vocabulary = sources.get(dom.words_of, args[dom.words_of])
            args[p.name] = draw(text_strategies.vocabulary_texts(vocabulary, dom.max_len), label=p.name)
        elif t.kind == "tensor" and dom.index_of is not None:
            signed = GATHER_SIGNED.get(overload.rule.kind, True) if overload.rule is not None else True
            args[p.name] = draw(_tensor_of_indices(shapes[p.name], t.dtype,
                                                   axis_length(shapes[dom.index_of], moved[dom.axis]),
                                                   any(r.error == "IndexError" for r in overload.raises), signed),
                                label=p.name)
        elif t.kind == "tensor" and dom.index_into is not None:
            table = shapes[dom.index_into]
            args[p.name] = draw(_tensor(shapes[p.name], t.dtype, dom, index_bound=table[0] if table else 0,
                                        out_of_range=any(r.error == "IndexError" for r in overload.raises)),
                                label=p.name)
        elif t.kind == "tensor":
            args[p.name] = draw(_tensor(shapes[p.name], t.dtype, dom, role=int_role), label=p.name)
            int_role += not t.dtype.is_float and t.dtype.name != "bool"
        elif dom.axis_of is not None:
            ndim = len(shapes[dom.axis_of])
            args[p.name] = draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1), label=p.name)
        elif dom.ids is not None:  # ids into a vocabulary drawn before (opgen/verify/bpe_strategies.py)
            malformed = any(r.error == "ValueError" for r in overload.raises)
            args[p.name] = draw(bpe_strategies.ids_strategy(dom.ids, args[dom.ids_of], dom.max_len, malformed), label=p.name)
        elif t.kind == "list" and dom.strings != "unicode":
            args[p.name] = draw(string_list_strategy(dom), label=p.name)
        elif t.kind == "list":
            args[p.name] = draw(st.lists(_scalar(t.elem, dom), max_size=dom.max_len or 16), label=p.name)
        else:
            args[p.name] = draw(_scalar(t, dom), label=p.name)
    for p in overload.sig.tensor_params:  # values on a lattice of another tensor's, drawn by now
        lattice = overload.domain.get(p.name, Domain()).lattice
        if lattice is not None and draw(st.booleans(), label=f"{p.name} on a lattice of {lattice.of}"):
            own, of_core = lattice_cores(overload.rule, overload.sig, p.name, lattice.of)
            seed = draw(st.integers(0, 2**32 - 1), label=f"{p.name}'s multiples") if lattice.multiples else 0
            snap_to_lattice(args[p.name], args[lattice.of], lattice.step, own, of_core,
                            *_bounds(overload.domain[p.name], p.type.dtype), lattice.multiples,
                            np.random.default_rng(seed))
    return args


DEFAULT_MAX_LIST = 4  # a list of tensors' most elements when its domain gives no max_len


@st.composite
def join_shapes(draw: st.DrawFn, overload: Overload) -> tuple[list[tuple[int, ...]], int]:
    """The element shapes and the axis of a concatenate or stack rule: a length in the domain's
    [min_len, max_len] (one element, and the empty list where min_len is 0, among them), a common
    shape of the domain's ranks (concatenate: at least 1-d; each element its own size along the
    axis, 0 included), an axis of either sign. Where the overload declares ValueError, one draw in
    eight is one NumPy rejects: an axis out of range, an element of another size or rank, 0-d
    elements (concatenate), an empty list."""
    rule = overload.rule
    dom = overload.domain.get(rule.source, Domain())
    lo, hi = dom.min_len if dom.min_len is not None else 0, dom.max_len if dom.max_len is not None else DEFAULT_MAX_LIST
    concat = rule.kind == "concatenate"
    max_side = dom.max_side or 8
    min_dims = max(dom.min_dims or 0, 1 if concat else 0)
    max_dims = max(dom.max_dims if dom.max_dims is not None else 4, min_dims)
    bad = "ValueError" in {r.error for r in overload.raises} and draw(st.integers(0, 7), label="rejected") == 3
    n = draw(st.integers(max(lo, 1), max(hi, 1)) if hi >= 1 else st.just(0), label="list length")
    if lo == 0 and draw(st.integers(0, 11), label="empty list") == 0:
        n = 0
    shape = tuple(draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side),
                       label="element shape"))
    nd = len(shape) + (0 if concat else 1)
    axis = draw(st.integers(-nd, nd - 1), label="axis")
    shapes = [shape] * n
    if concat and n:
        ax = axis % nd
        sizes = draw(st.lists(st.integers(0, max_side), min_size=n, max_size=n), label="sizes along the axis")
        shapes = [shape[:ax] + (k,) + shape[ax + 1:] for k in sizes]
    if bad:
        hows = ["axis", "empty"] + (["size", "rank"] if n >= 2 else []) + (["0-d"] if concat else [])
        how = draw(st.sampled_from(hows), label="how")
        if how == "axis":
            axis = draw(st.sampled_from([nd, -nd - 1, nd + 3]), label="axis out of range")
        elif how == "empty":
            shapes = []
        elif how == "0-d":
            shapes = [()] * max(n, 1)
        else:
            at = draw(st.integers(1, n - 1), label="odd element")
            odd = list(shapes[at])
            if how == "rank":
                odd = odd + [1] if len(odd) < 4 or not odd else odd[:-1]
            else:
                ax = axis % nd if concat else -1
                dims = [d for d in range(len(odd)) if d != ax]
                if not dims:
                    odd = odd + [1]
                else:
                    d = draw(st.sampled_from(dims), label="odd dim")
                    odd[d] += 1
            shapes[at] = tuple(odd)
    return shapes, axis


@st.composite
def join_arguments(draw: st.DrawFn, overload: Overload) -> dict[str, Any]:
    """The list of tensors and the axis of a concatenate or stack rule (join_shapes), each element
    drawn as a single tensor is (values, special values, layout)."""
    rule = overload.rule
    p = overload.sig.param(rule.source)
    dom = overload.domain.get(rule.source, Domain())
    shapes, axis = draw(join_shapes(overload))
    xs = [draw(_tensor(s, p.type.elem.dtype, dom), label=f"{rule.source}[{i}]") for i, s in enumerate(shapes)]
    return {rule.source: xs, rule.axis: axis}


def axis_length(shape: tuple[int, ...], axis: int) -> int:
    """The length of ``shape`` along ``axis`` (a 0-d shape counts as (1,), as numpy.take takes it);
    1 for an axis out of range (the shim rejects the axis before it looks at an index)."""
    shape = tuple(shape) or (1,)
    return int(shape[axis]) if -len(shape) <= axis < len(shape) else 1


def _index_axes(draw: st.DrawFn, overload: Overload, shapes: dict[str, tuple[int, ...]],
                moved: dict[str, Any]) -> dict[str, Any]:
    """The axis parameters that ``index_of`` domains name, drawn before their indices (the indices'
    range depends on them) where the shape rule did not draw them: an axis of that tensor."""
    out: dict[str, Any] = {}
    for p in overload.sig.params:
        dom = overload.domain.get(p.name, Domain())
        if dom.index_of is None or dom.axis in moved or dom.axis in out:
            continue
        ndim = max(len(shapes[dom.index_of]), 1)
        out[dom.axis] = draw(st.integers(-ndim, ndim - 1), label=dom.axis)
    return out


@st.composite
def _tensor_of_indices(draw: st.DrawFn, shape: tuple[int, ...], dt: DType, n: int, out_of_range: bool,
                       signed: bool = True) -> np.ndarray:
    """NumPy-style indices along an axis of length ``n`` (index_of): uniform in [-n, n), both signs,
    with the ends -n, -1, 0 and n - 1 planted in most draws; where the overload declares
    IndexError, one draw in eight also plants 1-3 outside it (n, -n - 1, n + 1 and the dtype's
    extremes: a kernel must check before it multiplies an index by a stride). ``signed`` False
    (torch.index_select: GATHER_SIGNED): in [0, n), the ends 0 and n - 1, and -1 among the bad ones."""
    seed = draw(st.integers(0, 2**32 - 1), label="value seed")
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    lo = -n if signed else 0
    values = rng.integers(lo, n, size=shape, dtype=np.int64) if n > 0 else np.zeros(shape, dtype=np.int64)
    flat = values.reshape(-1)
    ends = sorted({lo, -1 if signed else 0, 0, n - 1}) if n > 0 else []
    if size and ends and draw(st.integers(0, 3), label="plant the ends") != 0:
        plants = draw(st.lists(st.tuples(st.integers(0, size - 1), st.sampled_from(ends)), min_size=1,
                               max_size=min(size, 4)), label="end indices")
        for index, value in plants:
            flat[index] = value
    info = np.iinfo(dt.np)
    bad = sorted({v for v in (n, lo - 1, -1, n + 1, int(info.min), int(info.max)) if info.min <= v <= info.max
                  and not lo <= v < n})
    if out_of_range and size and bad and draw(st.integers(0, 7), label="plant out-of-range indices") == 5:
        plants = draw(st.lists(st.tuples(st.integers(0, size - 1), st.sampled_from(bad)), min_size=1, max_size=3),
                      label="out-of-range indices")
        for index, value in plants:
            flat[index] = value
    return lay_out(values.astype(dt.np), draw(st.sampled_from(LAYOUTS), label="layout"))


def _index_select_shapes(draw: st.DrawFn, overload: Overload, shape: tuple[int, ...], axis: int,
                         max_side: int) -> tuple[dict[str, tuple[int, ...]], dict[str, Any]]:
    """torch.index_select's index: a vector (0 to max_side long) or now and then 0-d (one index); for a
    0-d input one index. Where the overload declares IndexError, one draw in eight is one torch
    rejects: a dim out of range, an index of 2 dims, or (0-d input) a count other than 1."""
    rule = overload.rule
    bad = "IndexError" in {r.error for r in overload.raises} and draw(st.integers(0, 7), label="rejected") == 3
    if not shape:
        index_shape = draw(st.sampled_from([(), (1,)]), label="index shape")
    else:
        index_shape = draw(st.one_of(st.just(()), st.tuples(st.integers(0, max_side))), label="index shape")
    if bad:
        nd = max(len(shape), 1)
        how = draw(st.sampled_from(["dim", "rank"] + ([] if shape else ["count"])), label="how")
        if how == "dim":
            axis = draw(st.sampled_from([nd, -nd - 1, nd + 2]), label=rule.axis)
        elif how == "rank":
            index_shape = (2, draw(st.integers(0, 3), label="index cols"))
        else:
            index_shape = (draw(st.sampled_from([0, 2, 3]), label="count"),)
    return {rule.source: shape, rule.indices: tuple(index_shape)}, {rule.axis: axis}


def _data_shape(draw: st.DrawFn, dom: Domain) -> tuple[int, ...]:
    """The shape of the tensor a mask or a region indexes: any of the domain's ranks (0-d and dims
    of 0 and 1 among them, sides up to its max_side or 8), or a vector tail (TAIL_LENGTHS)."""
    max_side = dom.max_side or 8
    lo = dom.min_dims if dom.min_dims is not None else 0
    hi = dom.max_dims if dom.max_dims is not None else 4
    tails = [(n,) for n in TAIL_LENGTHS if lo <= 1 <= hi] + [(3, n) for n in TAIL_LENGTHS if lo <= 2 <= hi]
    return tuple(draw(st.one_of(hnp.array_shapes(min_dims=lo, max_dims=hi, min_side=0, max_side=max_side),
                                st.sampled_from(tails) if tails else st.nothing()), label="data shape"))


MASK_DENSITIES = (0.0, 0.05, 0.5, 0.95, 1.0)  # none, a few, half, most, all rows kept


def _mask_draw(draw: st.DrawFn, overload: Overload) -> tuple[dict[str, tuple[int, ...]], dict[str, Any]]:
    """x's shape and the mask itself for a boolean_mask or masked_fill rule: the mask over x's first k dims (k from
    0, a 0-d mask, to x.ndim), true with a drawn density (none, a few, half, most, all: counts of 0
    and of the whole bound both come up), in any layout. Where the overload declares IndexError, one
    draw in eight has a mask that does not match: a dim one longer or shorter, or one dim too many."""
    rule = overload.rule
    x, mask = rule.source, rule.indices
    shape = _data_shape(draw, overload.domain.get(x, Domain()))
    k = draw(st.integers(0, len(shape)), label="mask dims")
    mask_shape = shape[:k]
    if any(r.error == "IndexError" for r in overload.raises) and draw(st.integers(0, 7), label="mask mismatch") == 2:
        if mask_shape and draw(st.booleans(), label="a dim, not the rank"):
            at = draw(st.integers(0, k - 1), label="mismatched dim")
            n = mask_shape[at]
            mask_shape = mask_shape[:at] + (n + 1 if n == 0 or draw(st.booleans()) else n - 1,) + mask_shape[at + 1:]
        else:
            mask_shape = shape + (draw(st.integers(0, 3), label="extra dim"),)
    density = draw(st.sampled_from(MASK_DENSITIES), label="mask density")
    seed = draw(st.integers(0, 2**32 - 1), label="mask seed")
    values = np.random.default_rng(seed).random(mask_shape) < density
    return {x: shape, mask: mask_shape}, {mask: lay_out(values, draw(st.sampled_from(LAYOUTS), label="layout"))}


REGION_STEPS = (1, 1, -1, 2, -2, 3, -3, 5)  # unit steps most often, reversed, strided, a long stride


def _region_dim(draw: st.DrawFn, n: int, d: int) -> tuple[int, int, int]:
    """A valid (start, step, count) along a dim of length n: a count of 0 (then any start), 1, the
    dim's whole length (step 1 or -1), or any that fits; the step drawn first (REGION_STEPS), the
    count up to what fits, the start so that the last position stays inside."""
    step = draw(st.sampled_from(REGION_STEPS), label=f"step along dim {d}")
    if n == 0:
        return draw(st.integers(0, 3), label=f"start along dim {d}"), step, 0
    fits = (n - 1) // abs(step) + 1  # the most positions of this step in n
    count = draw(st.one_of(st.sampled_from([0, 1, fits]), st.integers(0, fits)), label=f"count along dim {d}")
    if count == 0:
        return draw(st.integers(0, n + 2), label=f"start along dim {d}"), step, 0
    span = (count - 1) * abs(step)  # the first and last positions are span apart
    lo = draw(st.integers(0, n - 1 - span), label=f"region's lowest position along dim {d}")
    return (lo if step > 0 else lo + span), step, count


def _region_draw(draw: st.DrawFn, overload: Overload) -> tuple[dict[str, tuple[int, ...]], dict[str, Any]]:
    """x's shape and the region of an assign_region rule (x[region] = value): x's shape as _mask_draw
    draws it (_data_shape: 0-d, dims of 0 and 1, the vector tails), then along each dim a valid
    (start, step, count) (_region_dim: counts of 0, 1 and the whole dim, steps of either sign, 1 and
    larger); value's shape is the counts. starts and steps are drawn here, as Python lists; value too
    in one draw in four, as a broadcast view (its values, drawn as any tensor's with the domain's
    specials and a drawn layout, of length 1 along a drawn subset of its dims, np.broadcast_to there:
    stride 0), and for a 0-d x (x and value, kept 0-d). Where the overload declares ValueError, one
    draw in eight is a region NumPy's setitem rejects: a first or last position outside x, a step of
    0, starts or steps of another length, value of another rank."""
    rule = overload.rule
    x, value = rule.source, rule.indices
    starts_name, steps_name = rule.region
    shape = _data_shape(draw, overload.domain.get(x, Domain()))
    dims = [_region_dim(draw, n, d) for d, n in enumerate(shape)]
    starts, steps, counts = [s for s, _, _ in dims], [t for _, t, _ in dims], [c for _, _, c in dims]
    if "ValueError" in {r.error for r in overload.raises} and draw(st.integers(0, 7), label="rejected region") == 3:
        hows = ["starts length", "steps length", "rank"] + (["outside", "step 0"] if shape else [])
        how = draw(st.sampled_from(hows), label="how")
        if how in ("outside", "step 0"):
            d = draw(st.integers(0, len(shape) - 1), label="bad dim")
            n = shape[d]
            if how == "step 0":
                steps[d] = 0
            else:  # a first or last position one past either end (a count of 0 where there is no room)
                counts[d] = max(counts[d], 1)
                where = draw(st.sampled_from(["start past the end", "start before 0", "last past the end",
                                              "last before 0"]), label="where")
                if where == "start past the end":
                    starts[d] = n + draw(st.integers(0, 2), label="past by")
                elif where == "start before 0":
                    starts[d] = -1 - draw(st.integers(0, 2), label="before by")
                elif n == 0:  # any first position is outside an empty dim
                    starts[d] = 0
                elif where == "last past the end":  # one step past position n - 1
                    steps[d] = abs(steps[d])
                    starts[d] = draw(st.integers(0, n - 1), label="start")
                    counts[d] = (n - 1 - starts[d]) // steps[d] + 2
                else:  # one step backwards past position 0
                    steps[d] = -abs(steps[d])
                    starts[d] = draw(st.integers(0, n - 1), label="start")
                    counts[d] = starts[d] // abs(steps[d]) + 2
        elif how == "starts length":
            starts = starts[:-1] if starts and draw(st.booleans(), label="shorter") else starts + [0]
        elif how == "steps length":
            steps = steps[:-1] if steps and draw(st.booleans(), label="shorter") else steps + [1]
        else:  # value of another rank
            counts = counts[:-1] if counts and draw(st.booleans(), label="fewer") else counts + [1]
    moved: dict[str, Any] = {starts_name: [int(s) for s in starts], steps_name: [int(t) for t in steps]}
    counts_t = tuple(counts)
    if counts_t and draw(st.integers(0, 3), label="value broadcast") == 0:
        # stride 0 along a drawn subset of value's dims: its values drawn at 1 there, then broadcast
        along = draw(st.lists(st.booleans(), min_size=len(counts_t), max_size=len(counts_t)), label="broadcast dims")
        small = tuple(1 if b else c for b, c in zip(along, counts_t))
        p = overload.sig.param(value)
        base = draw(_tensor(small, p.type.dtype, overload.domain.get(value, Domain())), label=value)
        moved[value] = np.broadcast_to(base, counts_t)
    return {x: shape, value: counts_t}, moved


DOT_WORK = 1 << 15  # the most multiply-adds of a drawn dot (out's size times the contracted length)


def _dot_draw(draw: st.DrawFn, overload: Overload) -> tuple[dict[str, tuple[int, ...]], dict[str, Any]]:
    """Shapes of a dot rule's a and b (numpy.dot): each of a rank from its domain's (0 to 4 by default), so
    every case comes up (a 0-d operand, 1-D . 1-D, 2-D . 2-D, N-D . 1-D, N-D . M-D); sides from 0 (size-0
    dims, a contracted length of 0) to the domain's max_side (8), the contracted length now and then a
    vector tail (TAIL_LENGTHS); dims halved (the contracted one last) until the product's work is at most
    DOT_WORK. The layouts are drawn with the values (_tensor: transposed, strided, reversed, offset); in
    one draw in four one operand is a broadcast view (drawn of length 1 along a subset of its dims, then
    np.broadcast_to: stride 0 there). Where the overload declares ValueError, one draw in eight has
    contracted lengths that differ by one (an operand drawn 0-d made 1-D first), which NumPy rejects."""
    rule = overload.rule
    a, b = rule.source, rule.indices
    dom_a, dom_b = overload.domain.get(a, Domain()), overload.domain.get(b, Domain())
    max_side = min((d.max_side for d in (dom_a, dom_b) if d.max_side), default=8)

    def rank(dom: Domain, name: str) -> int:
        lo = dom.min_dims if dom.min_dims is not None else 0
        hi = dom.max_dims if dom.max_dims is not None else 4
        return draw(st.integers(lo, max(lo, hi)), label=f"{name}'s rank")

    ra, rb = rank(dom_a, a), rank(dom_b, b)
    bad = "ValueError" in {r.error for r in overload.raises} and draw(st.integers(0, 7), label="not aligned") == 3
    if bad:
        ra, rb = max(ra, 1), max(rb, 1)
    side = st.integers(0, max_side)
    # (with a 0-d operand, k is the other's last dim)
    k = draw(st.one_of(side, st.sampled_from(TAIL_LENGTHS)), label="contracted length")
    a_lead = list(draw(st.lists(side, min_size=max(ra - 1, 0), max_size=max(ra - 1, 0)), label=f"{a}'s other dims"))
    b_lead = list(draw(st.lists(side, min_size=max(rb - 1, 0), max_size=max(rb - 1, 0)), label=f"{b}'s other dims"))

    def shapes_of(k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if not ra or not rb:
            return (tuple(a_lead) + (k,) if ra else ()), (tuple(b_lead) + (k,) if rb else ())
        sa = tuple(a_lead) + (k,)
        sb = (k,) if rb == 1 else tuple(b_lead[:-1]) + (k,) + tuple(b_lead[-1:])
        return sa, sb

    def work(k: int) -> int:
        sa, sb = shapes_of(k)
        out, _ = dot_shape(sa, sb)
        return int(np.prod(out, dtype=np.int64)) * max(dot_terms(sa, sb), 1)

    while work(k) > DOT_WORK:  # the largest other dim halved, the contracted length once they are small
        lead = a_lead + b_lead
        if lead and max(lead) > 2:
            i = lead.index(max(lead))
            if i < len(a_lead):
                a_lead[i] //= 2
            else:
                b_lead[i - len(a_lead)] //= 2
        else:
            k //= 2
    sa, sb = shapes_of(k)
    if bad:  # b's contracted length one more or one less
        at = len(sb) - 2 if len(sb) >= 2 else 0
        kb = k + 1 if k == 0 or draw(st.booleans(), label="longer") else k - 1
        sb = sb[:at] + (kb,) + sb[at + 1:]
    moved: dict[str, Any] = {}
    if draw(st.integers(0, 3), label="a broadcast operand") == 0:
        name, shape = draw(st.sampled_from([(a, sa), (b, sb)]), label="broadcast operand")
        if shape:
            along = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)), label="broadcast dims")
            small = tuple(1 if f else n for f, n in zip(along, shape))
            p = overload.sig.param(name)
            base = draw(_tensor(small, p.type.dtype, overload.domain.get(name, Domain())), label=name)
            moved[name] = np.broadcast_to(base, shape)
    return {a: sa, b: sb}, moved


def _gather_draw(draw: st.DrawFn, overload: Overload) -> tuple[dict[str, tuple[int, ...]], dict[str, Any]]:
    """Shapes and the axis of a gather rule (take, take_along_axis), valid for each other: take's
    data and indices of any shapes (the result at most 8 dims), take_along_axis's of one rank,
    broadcastable on every dim but the axis (each indices dim equal, 1, or any where the data's is
    1). An axis drawn of length 0 becomes 1 to 4 in most draws (else every non-empty take fails).
    Where the overload declares ValueError, one draw in eight has an axis out of range (or, for
    take_along_axis, indices of another rank); where it declares IndexError (take_along_axis), one
    in eight has a dim that does not broadcast."""
    rule = overload.rule
    x, ind = rule.source, rule.indices
    dom_x, dom_i = overload.domain.get(x, Domain()), overload.domain.get(ind, Domain())
    max_side = min((d.max_side for d in (dom_x, dom_i) if d.max_side), default=8)
    raises = {r.error for r in overload.raises}
    bad_value = "ValueError" in raises and draw(st.integers(0, 7), label="rejected axis or rank") == 3
    bad_shape = (rule.kind == "take_along_axis" and "IndexError" in raises
                 and draw(st.integers(0, 7), label="shape mismatch") == 5)
    lo = dom_x.min_dims if dom_x.min_dims is not None else 0
    hi = dom_x.max_dims if dom_x.max_dims is not None else 4
    tails = [(n,) for n in TAIL_LENGTHS if lo <= 1 <= hi] + [(3, n) for n in TAIL_LENGTHS if lo <= 2 <= hi]
    shape = tuple(draw(st.one_of(hnp.array_shapes(min_dims=lo, max_dims=hi, min_side=0, max_side=max_side),
                                 st.sampled_from(tails) if tails else st.nothing()), label="data shape"))
    nd = max(len(shape), 1) if rule.kind in ("take", "index_select") else len(shape)
    if nd:
        axis = draw(st.integers(-nd, nd - 1), label=rule.axis)
    else:  # a 0-d take_along_axis: every axis is out of range
        axis = draw(st.sampled_from([0, -1]), label=rule.axis)
    if bad_value and (rule.kind == "take" or draw(st.booleans(), label="axis, not rank")):
        axis = draw(st.sampled_from([nd, -nd - 1, nd + 2]), label=rule.axis)
    ax = axis % nd if nd and -nd <= axis < nd else None
    if ax is not None and shape and shape[ax] == 0 and draw(st.integers(0, 7), label="keep an empty axis") != 3:
        shape = shape[:ax] + (draw(st.integers(1, 4), label="axis length"),) + shape[ax + 1:]
    if rule.kind == "index_select":
        return _index_select_shapes(draw, overload, shape, axis, max_side)
    if rule.kind == "take":
        i_lo = dom_i.min_dims if dom_i.min_dims is not None else 0
        i_hi = dom_i.max_dims if dom_i.max_dims is not None else 3
        i_hi = max(min(i_hi, 8 - max(len(shape) - 1, 0)), i_lo)
        index_shape = tuple(draw(hnp.array_shapes(min_dims=i_lo, max_dims=i_hi, min_side=0, max_side=max_side),
                                 label="indices shape"))
        return {x: shape, ind: index_shape}, {rule.axis: axis}
    dims = []
    for d, s in enumerate(shape):
        if d == ax:
            dims.append(draw(st.integers(0, max_side), label="indices along the axis"))
        elif s == 1:
            dims.append(draw(st.sampled_from([1, 1, 0, 2, 3, 5]), label="indices dim"))
        else:
            dims.append(draw(st.sampled_from([s, s, 1]), label="indices dim"))
    if bad_shape:
        clash = [d for d, s in enumerate(shape) if d != ax and s != 1]
        if clash:
            d = draw(st.sampled_from(clash), label="mismatched dim")
            dims[d] = shape[d] + 1 if shape[d] + 1 != 1 else shape[d] + 2
    if bad_value and ax is not None:  # indices of another rank
        dims = dims[1:] if dims and draw(st.booleans(), label="fewer") else [2] + dims
    return {x: shape, ind: tuple(dims)}, {rule.axis: axis}


def _movement_params(draw: st.DrawFn, overload: Overload, shapes: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """The parameter of a data-movement shape rule (permute, reshape, expand_dims, squeeze,
    broadcast_to), drawn valid for the drawn shape: a permutation of range(ndim), a shape of the
    same size (now and then with one -1), an axis in range (squeeze: the drawn shape gets a 1
    there), a shape the drawn one broadcasts to. Where the overload
    declares ValueError, one draw in eight is one the op rejects (NumPy's errors)."""
    rule = overload.rule
    if rule is None or rule.kind not in MOVEMENT:
        return {}
    shape = shapes[rule.source]
    ndim = len(shape)
    bad = "ValueError" in {r.error for r in overload.raises} and draw(st.integers(0, 7), label="rejected parameter") == 3
    sign = lambda a, n: a - n if draw(st.booleans(), label="negative axis") else a  # noqa: E731
    if rule.kind == "permute":
        axes = [sign(a, ndim) for a in draw(st.permutations(range(ndim)), label="axes")]
        if bad:
            how = draw(st.sampled_from(["length", "range", "repeat"] if ndim else ["length", "range"]), label="how")
            if how == "length":
                axes = axes[:-1] if axes and draw(st.booleans(), label="shorter") else axes + [ndim]
            elif how == "range":
                axes = axes[:-1] + [draw(st.sampled_from([ndim, -ndim - 1, ndim + 3]), label="axis")] if axes else [0]
            else:
                axes = axes + [axes[0]] if ndim == 1 else [axes[1]] + axes[1:]
        return {rule.dims: axes}
    if rule.kind == "reshape":
        new = draw(_regrouped(shape), label="new shape")
        if bad:
            hows = ["two unknown", "unknown of 0"] + (["size"] if int(np.prod(shape)) else [])
            how = draw(st.sampled_from(hows), label="how")
            new = [-1, -1] + new if how == "two unknown" else [-1, 0] + new if how == "unknown of 0" else new + [2]
        elif new and draw(st.integers(0, 2), label="unknown dim") == 0:
            at = draw(st.integers(0, len(new) - 1), label="unknown at")
            if int(np.prod(new[:at] + new[at + 1:])):  # else NumPy cannot infer it (an error)
                new[at] = draw(st.sampled_from([-1, -1, -1, -2]), label="unknown")
        return {rule.dims: [int(d) for d in new]}
    if rule.kind == "broadcast_to":
        if ndim and draw(st.booleans(), label="a dim of 1"):  # something to broadcast along, most draws
            at = draw(st.integers(0, ndim - 1), label="at")
            shapes[rule.source] = shape = shape[:at] + (1,) + shape[at + 1:]
        return {rule.dims: draw(_broadcast_target(shape, bad), label="target shape")}
    if rule.kind == "tile":
        return {rule.dims: draw(_tile_reps(ndim, int(np.prod(shape)), bad), label="reps")}
    if rule.kind == "pad":
        return {rule.dims: draw(_pad_widths(shape, bad), label="pad widths")}
    if rule.kind == "torch_pad":
        return {rule.dims: draw(_torch_pad(shape, bad), label="pad")}
    if rule.kind == "expand_dims":
        if bad:
            return {rule.axis: draw(st.sampled_from([ndim + 1, -ndim - 2, ndim + 5]), label="axis")}
        return {rule.axis: draw(st.integers(-ndim - 1, ndim), label="axis")}
    # squeeze
    if bad or ndim == 0:
        axis = draw(st.sampled_from([ndim, -ndim - 1] + ([draw(st.integers(-ndim, ndim - 1), label="at")] if ndim else [])),
                    label="axis")
        return {rule.axis: axis}
    axis = draw(st.integers(-ndim, ndim - 1), label="axis")
    shapes[rule.source] = shape[:axis % ndim] + (1,) + shape[axis % ndim + 1:]
    return {rule.axis: axis}


def _pool_params(draw: st.DrawFn, overload: Overload, shapes: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """The kernel, stride, padding and dilation of a ``pool`` shape rule, drawn valid for the drawn
    shape, one pooled dim at a time, each within its domain: a padding at most half the kernel, a
    kernel no larger than the padded input (no larger than the input under check_input_size), a
    dilation that keeps the dilated kernel inside the padded input (so every output size is at
    least 1, in floor and ceil mode). A pooled dim drawn as 0 becomes 1 to 4 in most draws. Where
    the overload declares ValueError, one draw in eight is one torch rejects (a padding over half
    its kernel, a kernel or dilated kernel too large, a stride, kernel or dilation of 0, a
    negative padding)."""
    rule = overload.rule
    if rule is None or rule.kind != "pool":
        return {}
    n = rule.pool_ndim
    shape = shapes[rule.source]
    if len(shape) < n:
        return {}
    bad = "ValueError" in {r.error for r in overload.raises} and draw(st.integers(0, 7), label="rejected pool") == 3
    lead, sizes = shape[:len(shape) - n], list(shape[len(shape) - n:])
    for i, size in enumerate(sizes):
        if size == 0 and draw(st.integers(0, 7), label="keep a pooled 0") != 3:  # (not 0: Hypothesis favours it)
            sizes[i] = draw(st.integers(1, 4), label="pooled size")
    shapes[rule.source] = tuple(lead) + tuple(sizes)

    def bounds(name: str, lo: int, hi: int) -> tuple[int, int]:
        dom = overload.domain.get(name, Domain())
        return (int(dom.min) if dom.min is not None else lo, int(dom.max) if dom.max is not None else hi)

    k_names, s_names, p_names = rule.pool[:n], rule.pool[n:2 * n], rule.pool[2 * n:]
    out: dict[str, Any] = {}
    for i in range(n):
        size = max(sizes[i], 1)
        k_lo, k_hi = bounds(k_names[i], 1, 5)
        p_lo, p_hi = bounds(p_names[i], 0, 2)
        s_lo, s_hi = bounds(s_names[i], 1, 3)
        k = draw(st.integers(max(k_lo, 1), max(k_lo, k_hi, 1)), label=f"{k_names[i]}")
        p = draw(st.integers(max(p_lo, 0), max(min(p_hi, k // 2), max(p_lo, 0))), label=f"{p_names[i]}")
        room = size if rule.check_input_size else size + 2 * p
        if k > room:
            k = max(room, 1)
            p = min(p, k // 2)
        d = 1
        if rule.dilation:
            d_lo, d_hi = bounds(rule.dilation[i], 1, 3)
            d_top = (size + 2 * p - 1) // (k - 1) if k > 1 else d_hi
            d = draw(st.integers(max(d_lo, 1), max(min(d_hi, d_top), max(d_lo, 1))), label=f"{rule.dilation[i]}")
            out[rule.dilation[i]] = d
        out[k_names[i]] = k
        out[p_names[i]] = p
        out[s_names[i]] = draw(st.integers(max(s_lo, 1), max(s_hi, s_lo, 1)), label=f"{s_names[i]}")
    if bad:
        i = draw(st.integers(0, n - 1), label="rejected dim")
        hows = ["padding", "kernel", "stride", "negative"] + (["dilation", "dilated"] if rule.dilation else [])
        how = draw(st.sampled_from(hows), label="how")
        k = out[k_names[i]]
        if how == "padding":
            out[p_names[i]] = k // 2 + 1
        elif how == "kernel":  # larger than the padded input: an output size below 1
            out[p_names[i]] = 0
            out[k_names[i]] = sizes[i] + 1 + draw(st.integers(0, 2), label="over")
        elif how == "stride":
            out[s_names[i]] = 0
        elif how == "negative":
            out[p_names[i]] = -1
        elif how == "dilation":
            out[rule.dilation[i]] = 0
        else:  # a dilated kernel past the padded input
            out[k_names[i]] = max(k, 2)
            out[p_names[i]] = 0
            out[rule.dilation[i]] = sizes[i] + 1
    return out


@st.composite
def _broadcast_target(draw: st.DrawFn, shape: tuple[int, ...], bad: bool) -> list[int]:
    """A shape ``shape`` broadcasts to: 0 to 2 new leading dims (0 now and then), each dim of 1
    now and then grown (to 0 too), the others kept. ``bad``: one NumPy rejects (a negative entry,
    fewer dims, a dim that is neither equal nor 1)."""
    # (at most 8 dims in all: OPGEN_MAX_DIMS, the native tensor's largest rank)
    lead = draw(st.lists(st.integers(0, 4), max_size=max(min(2, 8 - len(shape)), 0)), label="leading dims")
    dims = [draw(st.sampled_from([d, 0, 2, 3, 5]), label="grown") if d == 1 else d for d in shape]
    new = lead + dims
    if bad:
        hows = ["negative"] + (["fewer"] if shape else []) + (["clash"] if any(d != 1 for d in shape) else [])
        how = draw(st.sampled_from(hows), label="how")
        if how == "negative":
            new = new[:-1] + [-1 - new[-1] % 2] if new else [-1]
        elif how == "fewer":
            new = dims[1:]
        else:
            at = next(i for i, d in enumerate(shape) if d != 1)
            new = lead + dims[:at] + [shape[at] + 1] + dims[at + 1:]
    return [int(d) for d in new]


@st.composite
def _tile_reps(draw: st.DrawFn, ndim: int, size: int, bad: bool) -> list[int]:
    """numpy.tile's reps: fewer entries than dims, as many, or more (new leading dims), each 1 to 3
    and now and then 0, the result kept under 4096 elements. ``bad``: a negative entry."""
    n = draw(st.integers(0, min(ndim + 2, 8)), label="len(reps)")
    reps = [draw(st.sampled_from([1, 2, 3, 2, 0]), label="rep") for _ in range(n)]
    while reps and size * int(np.prod(reps)) > 4096:  # (the largest drawn tensor is about that size)
        reps[reps.index(max(reps))] = 1
    if bad:
        at = draw(st.integers(0, max(n - 1, 0)), label="negative at")
        reps = reps[:at] + [draw(st.sampled_from([-1, -2]), label="negative")] + reps[at + 1:]
    return reps


@st.composite
def _torch_pad(draw: st.DrawFn, shape: tuple[int, ...], bad: bool) -> list[int]:
    """torch.nn.functional.pad's list: 0 to ndim (before, after) pairs from the last dim backwards,
    each -n to 3 (a negative entry crops), kept where both sides leave a length >= 0. ``bad``: an odd
    length, more pairs than dims, or a crop past the dim's length."""
    ndim = len(shape)
    pairs = draw(st.integers(0, ndim), label="pairs")
    pad: list[int] = []
    for k in range(pairs):
        n = shape[ndim - 1 - k]
        b = draw(st.integers(-n, 3), label="before")
        a = draw(st.integers(-(n + min(b, 0)), 3), label="after")
        pad += [b, a]
    if bad:
        how = draw(st.sampled_from(["odd", "long"] + (["crop"] if ndim else [])), label="how")
        if how == "odd":
            pad = pad + [1]
        elif how == "long":
            pad = pad + [0, 0] * (ndim - pairs + 1)
        else:
            pad = [-shape[-1] - 1, 0] + pad[2:]
    return pad


@st.composite
def _pad_widths(draw: st.DrawFn, shape: tuple[int, ...], bad: bool) -> list[int]:
    """numpy.pad's widths in the pad rule's three forms: one entry, one (before, after) pair for every
    dim, or a pair per dim; each 0 to 3, now and then past the dim's length (reflect and wrap then
    repeat the pattern). ``bad``: a negative entry, or a length that is none of the three."""
    ndim = len(shape)
    width = st.one_of(st.integers(0, 3), st.integers(0, 2 * max(shape, default=1) + 2))
    form = draw(st.sampled_from([1, 2, 2 * ndim, 2 * ndim]), label="form") or 1  # (a 0-d array: 1 or 2)
    widths = [draw(width, label="width") for _ in range(form)]
    pairs = pad_pairs(widths, ndim) or []
    if int(np.prod([n + b + a for n, (b, a) in zip(shape, pairs)])) > 1 << 16:  # (keep examples small)
        widths = [min(w, 3) for w in widths]
    if bad:
        if widths and draw(st.booleans(), label="negative"):
            widths[draw(st.integers(0, len(widths) - 1), label="at")] = draw(st.sampled_from([-1, -3]), label="w")
        else:
            widths = widths + [1] * (3 - len(widths)) if len(widths) < 3 else widths + [1]
            if len(widths) == 2 * ndim:
                widths.append(1)
    return [int(w) for w in widths]


@st.composite
def _regrouped(draw: st.DrawFn, shape: tuple[int, ...]) -> list[int]:
    """A shape with shape's size: its dims merged in runs, split into factors, 1s inserted."""
    dims = list(shape)
    out: list[int] = []
    i = 0
    while i < len(dims):
        run = draw(st.integers(1, max(len(dims) - i, 1)), label="merge")
        size = int(np.prod(dims[i:i + run]))
        i += run
        f = [d for d in range(2, min(size, 64) + 1) if size % d == 0 and d < size]
        if f and len(out) < 5 and draw(st.booleans(), label="split"):
            d = draw(st.sampled_from(f), label="factor")
            out += [d, size // d]
        else:
            out.append(size)
    for _ in range(draw(st.integers(0, 2), label="ones")):
        if len(out) < 8:  # OPGEN_MAX_DIMS: the native tensor's largest rank
                out.insert(draw(st.integers(0, len(out)), label="one at"), 1)
    if not out and draw(st.booleans(), label="0-d as [1]"):
        out = [1]
    return out


def string_strategy(dom: Domain) -> st.SearchStrategy[str]:
    """One string of a ``str`` parameter whose domain names a ``strings`` kind."""
    if dom.strings == "mixed_text":
        return text_strategies.mixed_text()
    if dom.strings == "text_pieces":
        return text_strategies.text_pieces()
    if dom.strings == "format_specs":
        return text_strategies.format_specs()
    if dom.strings == "cased_text":
        return text_strategies.cased_text()
    if dom.strings == "repr_text":
        return text_strategies.repr_text()
    if dom.strings == "number_text":
        return text_strategies.number_text()
    if dom.strings.startswith("bpe_"):  # Gemma-style BPE tokenizers: bpe_strategies.py
        return bpe_strategies.string_strategy(dom.strings)
    raise ValueError(f"strings kind {dom.strings!r} does not draw single strings")


def string_list_strategy(dom: Domain) -> st.SearchStrategy[list[str]]:
    """A ``list[str]`` parameter whose domain names a ``strings`` kind (max_len: items at most)."""
    if dom.strings == "wordpiece_vocab":
        return text_strategies.wordpiece_vocab(dom.max_len if dom.max_len is not None else 53)
    if dom.strings == "wordpiece_table_vocab":
        return text_strategies.wordpiece_table_vocab(dom.max_len if dom.max_len is not None else 53)
    if dom.strings.startswith("bpe_"):  # Gemma-style BPE tokenizers: bpe_strategies.py
        return bpe_strategies.string_list_strategy(dom.strings, dom.max_len)
    items = text_strategies.text_pieces() if dom.strings == "text_pieces" else text_strategies.mixed_text()
    return st.lists(items, max_size=dom.max_len if dom.max_len is not None else 8)
