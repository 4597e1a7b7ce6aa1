"""The realistic collection (examples/compile/realistic/): functions written the way people write
them (loops with break and early returns, tuple unpacking, enumerate/zip/dict.items(), and/or and
truthiness, the builtins, helper functions, Python numbers meeting arrays), compiled for cpu-cpp
and cpu-rust and differentially tested against the Python functions on Hypothesis inputs, from
Python and (for cpu-cpp) from Node.js.

Inputs are drawn from each function's annotations (tests/compile_support's int64 oracle holds ints
to the kernels' range), with a few functions narrowing them where Python's answer would be an
unbounded int or a sort of nans. Every function of the collection is tested: a new one needs no
entry here unless its inputs need narrowing.
"""

from __future__ import annotations

import ast
import math
import types
import typing
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from opgen.compiler import compile_many
from opgen.host import load_compiled
from opgen.project import Project
from tests.compile_support import (CHECKOUT, EXAMPLES, BothHosts, INT64, Int64, as_int64, as_node_returns, assert_same,
                                   node_outcomes, outcome)

REALISTIC = EXAMPLES / "realistic"
NODE_CASES = 8
EXAMPLES_PER_FUNCTION = 40


def collection() -> list[tuple[str, str]]:
    """(file relative to examples/compile, function): every annotated public function of the collection
    (unannotated ones are the helpers they call)."""
    found = []
    for path in sorted(REALISTIC.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.returns is not None and not node.name.startswith("_"):
                found.append((f"realistic/{path.name}", node.name))
    return found


COLLECTION = collection()


@pytest.fixture(scope="session")
def realistic_cpp(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("realistic-cpp")
    compile_many(Project(CHECKOUT), [(EXAMPLES / f, n, out / n) for f, n in COLLECTION])
    return {n: out / n for _, n in COLLECTION}


@pytest.fixture(scope="session")
def realistic_rust(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("realistic-rust")
    compile_many(Project(CHECKOUT), [(EXAMPLES / f, n, out / n) for f, n in COLLECTION], target="cpu-rust")
    return {n: out / n for _, n in COLLECTION}


# ---------------------------------------------------------------- inputs from annotations

small_int = st.integers(-40, 40)
any_int = st.one_of(small_int, small_int, st.integers(*INT64), st.sampled_from([INT64[0], INT64[1], 0, -1]))
any_float = st.one_of(st.floats(-100, 100), st.floats(allow_nan=True, allow_infinity=True),
                      st.sampled_from([0.0, -0.0, 0.5, 1.5, 2.5, -2.5]))
text = st.text(alphabet=st.sampled_from("abeiouAE xyzé日-"), max_size=8)
# What the text functions meet: separators, punctuation and whitespace beyond ASCII (U+3000, U+001F,
# which Python's split() and strip() treat as whitespace), and multi-byte letters.
prose = st.text(alphabet=st.sampled_from("abAé日 ,;=.!?/-\n\t\u3000\x1f"), max_size=24)
# What the casing functions meet: letters whose case mapping is several code points (ß, İ, ﬁ),
# capital sigmas where Final_Sigma applies and where it does not, apostrophes, titlecase ǅ.
cased = st.text(alphabet=st.sampled_from("aAzZßİıiIﬁǅΣσςΟΔΥΕ'. -_\u3000é日"), max_size=16)
# What int() and float() of a str meet: digits of several scripts, signs, points, exponents, underscores,
# whitespace, inf/nan spellings, and junk; ints past int64 are the compiled OverflowError (ints are int64).
numeric_text = st.one_of(
    st.integers(-10**18, 10**18).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet=st.sampled_from("0123456789٣४３_+-.eE \t\u3000xinfa"), max_size=8),
    st.sampled_from(["", " 12 ", "1_000", "1__0", "-0", "+.5e+2", "Infinity", "-nan", "0x10", "٣٤", "1e999"]))
ARRAY_SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
ONE_DIM_OR_MORE = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)


def strategy(t: Any) -> st.SearchStrategy:
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin in (typing.Union, types.UnionType) and type(None) in args:  # Optional[T]: None or a T
        (present,) = [a for a in args if a is not type(None)]
        return st.one_of(st.none(), strategy(present))
    if t is int:
        return any_int
    if t is float:
        return any_float
    if t is str:
        return text
    if t is bool:
        return st.booleans()
    if origin is list:
        return st.lists(strategy(args[0]), max_size=6)
    if origin is dict:
        return st.dictionaries(text, strategy(args[1]), max_size=4)
    if t is torch.Tensor:  # no dtype: torch's default, float32 (opgen.compiler.annotations)
        return strategy(np.ndarray[Any, np.dtype[np.float32]]).map(torch.from_numpy)
    if t is np.ndarray:  # no dtype: NumPy's default, float64
        return hnp.arrays(np.float64, ARRAY_SHAPES, elements=st.floats(-10, 10))
    if origin is typing.Annotated and args[0] is torch.Tensor:
        return strategy(np.ndarray[Any, np.dtype[np.float32]]).map(torch.from_numpy)
    if origin is np.ndarray:
        dtype = typing.get_args(args[1])[0]
        elements = st.floats(-10, 10, width=32) if dtype is np.float32 else st.booleans() if dtype is np.bool_ \
            else st.integers(-1000, 1000)
        return hnp.arrays(dtype, ARRAY_SHAPES, elements=elements)
    raise AssertionError(f"no strategy for {t}")


def finite(lo: float = -1e6, hi: float = 1e6) -> st.SearchStrategy:
    return st.floats(lo, hi)


@st.composite
def float_tensors(draw, min_dims: int = 0, min_last: int = 0, distinct: bool = False) -> torch.Tensor:
    """float32 tensors of 0..3 dims with at least ``min_dims`` dims and ``min_last`` elements along the last;
    ``distinct``: no two equal (torch.topk orders ties as it likes, opgen the lower index first)."""
    shape = draw(hnp.array_shapes(min_dims=max(min_dims, 1 if min_last else 0), max_dims=3, min_side=0, max_side=4))
    if min_last:
        shape = (*shape[:-1], max(shape[-1], min_last))
    elements = st.floats(-10, 10, width=32)
    x = draw(hnp.arrays(np.float32, shape, elements=elements, unique=distinct))
    return torch.from_numpy(x)


@st.composite
def attention_inputs(draw) -> tuple:
    b, m, n, d = (draw(st.integers(1, 4)) for _ in range(4))
    f = lambda shape: torch.from_numpy(draw(hnp.arrays(np.float32, shape, elements=st.floats(-3, 3, width=32))))
    return f((b, m, d)), f((b, n, d))


@dataclass
class Case:
    args: st.SearchStrategy | None = None  # default: drawn from the annotations
    rtol: float = 0.0
    atol: float = 0.0
    # Whether a zero's sign must match: NumPy's max/min of tied zeros (0.0 and -0.0) gives
    # whichever operand its SIMD path happens to keep, so reductions leave that sign free
    # (the gate's signed_zeros is off for them) and a function returning one does too.
    signed_zeros: bool = True


@st.composite
def array_and_operand(draw, dtype: type, elements: st.SearchStrategy, as_torch: bool = False) -> tuple:
    """An array and a second one that broadcasts to its shape in most draws (the same shape, or a
    trailing part of it) and has any shape in the rest (where an in-place write raises)."""
    shape = draw(ARRAY_SHAPES)
    other = draw(st.one_of(st.just(shape), st.integers(0, len(shape)).map(lambda k: shape[k:]), ARRAY_SHAPES))
    a, b = draw(hnp.arrays(dtype, shape, elements=elements)), draw(hnp.arrays(dtype, other, elements=elements))
    return (torch.from_numpy(a), torch.from_numpy(b)) if as_torch else (a, b)


@st.composite
def table_and_ids(draw) -> tuple:
    """A table and token ids mostly in its range (-n..n-1), now and then one past it (IndexError)."""
    n, d = draw(st.integers(0, 5)), draw(st.integers(1, 4))
    table = draw(hnp.arrays(np.float32, (n, d), elements=st.floats(-10, 10, width=32)))
    ids = draw(hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
                          elements=st.integers(-n - (draw(st.integers(0, 9)) == 0), max(n - 1, 0))))
    return table, ids


@st.composite
def cache_and_heads(draw) -> tuple:
    b, h, s, d = (draw(st.integers(1, 3)) for _ in range(4))
    cache = draw(hnp.arrays(np.float32, (b, h, s, d), elements=st.floats(-3, 3, width=32)))
    heads = draw(hnp.arrays(np.int64, st.integers(0, 4), elements=st.integers(-h, h - (draw(st.integers(0, 9)) != 0))))
    return torch.from_numpy(cache), torch.from_numpy(heads)


@st.composite
def table_and_narrow_ids(draw, dtype: type, to_torch: bool = False) -> tuple:
    """A (n, d) table and ids of a narrow integer dtype, mostly in its range (negative ones where the
    dtype has them), now and then one past it (IndexError)."""
    n, d = draw(st.integers(0, 5)), draw(st.integers(1, 4))
    table = draw(hnp.arrays(np.float32, (n, d), elements=st.floats(-10, 10, width=32)))
    low = -n if np.iinfo(dtype).min < 0 else 0
    ids = draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
                          elements=st.integers(low - (low < 0 and draw(st.integers(0, 9)) == 0),
                                               max(n - 1, 0) + (draw(st.integers(0, 9)) == 0))))
    return (torch.from_numpy(table), torch.from_numpy(ids)) if to_torch else (table, ids)


@st.composite
def rows_and_scores(draw) -> tuple:
    """(n, d) embeddings, n scores (now and then n + 1 or n - 1 of them: NumPy's IndexError) and a
    threshold among the scores or past them all."""
    n, d = draw(st.integers(0, 6)), draw(st.integers(0, 4))
    m = n if draw(st.integers(0, 7)) else max(n + draw(st.sampled_from([-1, 1])), 0)
    emb = draw(hnp.arrays(np.float32, (n, d), elements=st.floats(-10, 10, width=32)))
    scores = draw(hnp.arrays(np.float32, (m,), elements=st.floats(0, 1, width=32)))
    threshold = draw(st.sampled_from([float(v) for v in scores] + [0.0, 0.5, 2.0]))
    return emb, scores, threshold


@st.composite
def array_and_mask(draw, dtype: type = np.float32) -> tuple:
    """An array and a bool mask of its shape or over its leading dims (now and then one that does not
    fit: NumPy's IndexError), for x[mask] = v."""
    if dtype is np.bool_:
        x = draw(hnp.arrays(np.bool_, ARRAY_SHAPES))
    else:
        x = draw(hnp.arrays(np.float32, ARRAY_SHAPES, elements=st.floats(-10, 10, width=32)))
    k = draw(st.integers(0, x.ndim))
    shape = x.shape[:k]
    if shape and not draw(st.integers(0, 7)):
        shape = (shape[0] + 1, *shape[1:])
    return x, draw(hnp.arrays(np.bool_, shape))


@st.composite
def ids_and_attention(draw) -> tuple:
    """Token ids and a 0/1 attention mask of the same length (now and then another: IndexError)."""
    n = draw(st.integers(0, 8))
    m = n if draw(st.integers(0, 7)) else n + 1
    ids = draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, 30000)))
    return ids, draw(hnp.arrays(np.int64, (m,), elements=st.integers(0, 1)))


@st.composite
def heads_inputs(draw) -> tuple:
    """q, k, v of (batch, seq, dim) with dim even (two heads), now and then a dim that does not split."""
    b, s = draw(st.integers(0, 2)), draw(st.integers(0, 4))
    d = draw(st.sampled_from([2, 4, 6, 3] if draw(st.integers(0, 7)) == 0 else [2, 4, 6]))
    arrays = [draw(hnp.arrays(np.float32, (b, s, d), elements=st.floats(-3, 3, width=32))) for _ in range(3)]
    return tuple(torch.from_numpy(a) for a in arrays)


@st.composite
def scores_and_keep(draw) -> tuple:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    scores = draw(hnp.arrays(np.float32, shape, elements=st.floats(-10, 10, width=32)))
    keep = draw(hnp.arrays(np.bool_, shape))
    return torch.from_numpy(scores), torch.from_numpy(keep)


@st.composite
def hidden_and_mask(draw) -> tuple:
    b, s, d = (draw(st.integers(0, 3)) for _ in range(3))
    hidden = draw(hnp.arrays(np.float32, (b, s, d), elements=st.floats(-10, 10, width=32)))
    mask = draw(hnp.arrays(np.float32, (b, s), elements=st.sampled_from([0.0, 1.0])))
    return torch.from_numpy(hidden), torch.from_numpy(mask)


@st.composite
def query_and_docs(draw) -> tuple:
    """A (d,) query and (n, d) documents (now and then of another width: torch's RuntimeError)."""
    n, d = draw(st.integers(0, 4)), draw(st.integers(0, 5))
    e = d if draw(st.integers(0, 7)) else d + 1
    f = lambda shape: torch.from_numpy(draw(hnp.arrays(np.float32, shape, elements=st.floats(-10, 10, width=32))))
    return f((d,)), f((n, e))


@st.composite
def batch_pairs(draw) -> tuple:
    """Two tensors of one shape of 0..3 dims, or of shapes that broadcast (a dim of 1, one fewer dim)."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    other = list(shape)
    if other and draw(st.booleans()):
        other[draw(st.integers(0, len(other) - 1))] = 1
    if other and draw(st.booleans()):
        other = other[1:]
    f = lambda s: torch.from_numpy(draw(hnp.arrays(np.float32, s, elements=st.floats(-10, 10, width=32))))
    return f(shape), f(tuple(other))


@st.composite
def probs_and_ids(draw) -> tuple:
    n, c = draw(st.integers(0, 4)), draw(st.integers(1, 4))
    probs = draw(hnp.arrays(np.float32, (n, c), elements=st.floats(0, 1, width=32)))
    ids = draw(hnp.arrays(np.int64, (draw(st.sampled_from([n, n, n, n + 1])),), elements=st.integers(-c - 1, c)))
    return probs, ids


@st.composite
def optional_mask(draw) -> tuple:
    """Hidden states and, or not, a 0/1 mask over their (batch, seq)."""
    hidden, mask = draw(hidden_and_mask())
    return hidden, draw(st.sampled_from([None, mask]))


@st.composite
def optional_bias_and_scale(draw) -> tuple:
    """Attention inputs, an additive bias of the scores' shape or none, a scale or none."""
    q, k = draw(attention_inputs())
    bias = torch.from_numpy(draw(hnp.arrays(np.float32, (q.shape[0], q.shape[1], k.shape[1]),
                                            elements=st.floats(-3, 3, width=32))))
    return q, k, draw(st.sampled_from([None, bias])), draw(st.sampled_from([None, 0.25, 1.0]))


@st.composite
def rows_and_weight(draw) -> tuple:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    x = draw(hnp.arrays(np.float32, shape, elements=st.floats(-10, 10, width=32)))
    w = draw(hnp.arrays(np.float32, shape[-1:], elements=st.floats(-2, 2, width=32)))
    return torch.from_numpy(x), torch.from_numpy(w), draw(st.sampled_from([1e-6, 1e-5, 0.1]))


@st.composite
def vector_pairs(draw) -> tuple:
    n = draw(st.integers(0, 6))
    m = n if draw(st.integers(0, 7)) else n + 1
    return tuple(draw(hnp.arrays(np.float64, (k,), elements=st.floats(-10, 10))) for k in (n, m))


@st.composite
def rows_and_weights(draw, torch_float32: bool = False) -> tuple:
    """x of (n, k) and w of (k, m) or (k,), now and then a k that does not match."""
    n, k, m = (draw(st.integers(0, 4)) for _ in range(3))
    dtype = np.float32 if torch_float32 else np.float64
    elements = st.floats(-3, 3, width=32) if torch_float32 else st.floats(-10, 10)
    x = draw(hnp.arrays(dtype, (n, k), elements=elements))
    k2 = k if draw(st.integers(0, 7)) else k + 1
    w = draw(hnp.arrays(dtype, (k2, m) if torch_float32 or draw(st.booleans()) else (k2,), elements=elements))
    return (torch.from_numpy(x), torch.from_numpy(w)) if torch_float32 else (x, w)


pixels = hnp.arrays(np.uint8, ARRAY_SHAPES)
amounts = st.one_of(st.integers(-300, 300), st.sampled_from([0, 255, 256, -1, -256]))
APPROXIMATE = Case(rtol=2e-5, atol=2e-6)  # verified approximations (tanh, softmax, matmul)
CASES: dict[str, Case] = {
    # Python's ints are unbounded: keep the walks and searches to what ends quickly.
    "collatz_steps": Case(st.tuples(st.integers(-3, 10**5), st.integers(0, 300))),
    "is_prime": Case(st.tuples(st.integers(-5, 10**6))),
    "fibonacci": Case(st.tuples(st.integers(-2, 100))),
    "countdown_every": Case(st.tuples(st.integers(-5, 30), st.integers(-3, 5))),
    "range_stats": Case(st.tuples(st.integers(-3, 200))),
    # Python sorts floats that include nan in an order of its own merge; compiled sorted() refuses them.
    "median": Case(st.tuples(st.lists(finite(), max_size=7))),
    "digit_sum": Case(st.tuples(st.integers(-10**12, 10**12))),
    # enumerate()'s counts are plain Python ints, which the int64 oracle cannot hold to int64.
    "numbered": Case(st.tuples(st.lists(text, max_size=5), st.integers(-10**6, 10**6))),
    "embed_tokens": Case(table_and_ids(), rtol=1e-6, atol=1e-6),
    "select_heads": Case(cache_and_heads()),
    "reverse_time": Case(st.tuples(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0,
                                                                            max_side=4)))),
    "first_and_last": Case(st.tuples(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0,
                                                                              max_side=4)))),
    "embed_int32_ids": Case(table_and_narrow_ids(np.int32)),
    "colorize": Case(table_and_narrow_ids(np.uint8)),
    "decode_codes": Case(table_and_narrow_ids(np.int16).map(lambda a: (np.ascontiguousarray(a[0].T), a[1]))),
    "position_embeddings": Case(table_and_narrow_ids(np.int32, to_torch=True), rtol=1e-6, atol=1e-6),
    "brighten": Case(st.tuples(pixels, amounts)),
    "brighten_tensor": Case(st.tuples(pixels.map(torch.from_numpy), amounts)),
    "gelu_tanh": APPROXIMATE,
    "scaled_scores": Case(attention_inputs(), rtol=2e-5, atol=2e-6),
    "circle_areas": Case(rtol=1e-6, atol=1e-6),
    "row_peaks": Case(signed_zeros=False),  # row.max() of [0., -0.]
    "peak_to_peak": Case(signed_zeros=False),  # max - min of [0., -0.]
    # NumPy turns a 0-d array into a NumPy scalar after x * x, whose .sum(axis=-1) is allowed; the
    # compiled function keeps arrays (np.sum of a 0-d array with axis=-1 is NumPy's AxisError).
    "row_norms": Case(st.tuples(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0,
                                                                         max_side=4),
                                           elements=st.floats(-10, 10, width=32))), rtol=1e-6, atol=1e-5),
    # Exact float results from a loop of one-rounding operations; drawn from finite values for
    # lerp and the min-max scale, whose nan paths Python and C++ agree on but which say little.
    "smooth": Case(st.tuples(st.lists(finite(), max_size=6), finite(0, 1))),
    "normalize": Case(st.tuples(st.lists(finite(), min_size=1, max_size=6))),
    # int() of an inf or nan bin position is Python's OverflowError or ValueError, raised alike;
    # finite values exercise the binning itself. The float mean is one rounding per step, as Python's.
    "histogram": Case(st.tuples(st.lists(finite(), max_size=8), st.integers(-1, 6))),
    "pad_ids": Case(st.tuples(st.lists(st.integers(-5, 5), max_size=6), st.integers(-2, 8), st.integers(-1, 1))),
    # "=" * width fills memory for a huge width, in Python as compiled.
    "title_rule": Case(st.tuples(text, st.integers(-3, 60))),
    "normalize_whitespace": Case(st.tuples(prose)),
    "clean_prompts": Case(st.tuples(st.lists(prose, max_size=5))),
    "parse_csv_row": Case(st.tuples(prose)),
    "parse_key_values": Case(st.tuples(prose)),
    "word_counts": Case(st.tuples(prose)),
    "strip_prefix": Case(st.tuples(prose, st.sampled_from(["", "a", "ab", " ", "é日"]))),
    "file_stem": Case(st.tuples(prose)),
    "truncate_words": Case(st.tuples(prose, st.integers(-2, 6))),
    "chat_prompt": Case(st.tuples(prose, st.lists(prose, max_size=4))),
    "tokenize_simple": Case(st.tuples(prose, st.dictionaries(st.sampled_from(["a", "ab", ",", "A", "é日"]),
                                                              st.integers(0, 9), max_size=4), st.integers(-1, 1))),
    "strip_lines": Case(st.tuples(prose)),
    "is_question": Case(st.tuples(prose)),
    "normalize_query": Case(st.tuples(cased)),
    "slugify": Case(st.tuples(cased)),
    "unique_ignoring_case": Case(st.tuples(st.lists(cased, max_size=6))),
    "is_shouting": Case(st.tuples(cased)),
    "keyword_hits": Case(st.tuples(cased, st.lists(cased, max_size=4))),
    "constant_name": Case(st.tuples(cased)),
    "lowercase_counts": Case(st.tuples(cased)),
    "same_ignoring_case": Case(st.tuples(cased, cased)),
    "split_sentences": Case(st.tuples(prose)),
    "tag_lines": Case(st.tuples(prose, st.sampled_from(["", "> ", "a"]))),
    "split_at_pivot": Case(st.tuples(st.lists(prose, max_size=6), prose)),
    "is_strictly_sorted": Case(st.tuples(st.one_of(st.lists(prose, max_size=5),
                                                   st.lists(prose, max_size=5).map(lambda xs: sorted(set(xs)))))),
    "latest_version": Case(st.tuples(st.lists(st.sampled_from(["v1", "v1.2", "v10", "v2", "1.0", "vé", "v", ""]),
                                              max_size=5), st.sampled_from(["", "v0", "v1.5"]))),
    # torch.topk and torch.max along a dim need a dim to select from: at least one dim (two for the
    # margin and the filter's k), values without nan where torch orders ties or nans as it likes (topk).
    "greedy_tokens": Case(st.tuples(float_tensors(min_dims=1))),
    "confidence_margin": Case(st.tuples(float_tensors(min_dims=1, min_last=2, distinct=True))),
    "top_k_filter": Case(float_tensors(min_dims=1, min_last=1, distinct=True).flatmap(
        lambda x: st.tuples(st.just(x), st.integers(1, x.shape[-1])))),
    "pooled_max_positions": Case(st.tuples(float_tensors(min_dims=2))),
    "sliding_sums": Case(st.tuples(st.lists(st.integers(-10**6, 10**6), max_size=8), st.integers(-1, 4))),
    "gelu_numpy2": APPROXIMATE,  # float64 tanh, a verified approximation
    # x[mask]: sums of the kept values add in the kernel's order, not NumPy's pairwise one.
    "sum_of_positive": Case(rtol=1e-5, atol=1e-5),
    "mean_of_positive": Case(rtol=1e-5, atol=1e-5),
    "confident_tokens": Case(rows_and_scores()),
    # Whole-array reductions: the kernel adds in its own order (NumPy's is pairwise).
    "l2_norm": Case(rtol=1e-5, atol=1e-5),
    "total_energy": Case(rtol=1e-5, atol=1e-5),
    "mean_confidence": Case(rtol=1e-5, atol=1e-5),
    "embedding_norm": Case(rtol=1e-5, atol=1e-5),
    # Distinct whole numbers: a std of at least 0.5 (or 0 for one element, where x - mean is exactly 0),
    # so the division does not magnify the summation order's last-bit differences.
    "standardize": Case(st.tuples(hnp.arrays(np.float32, ARRAY_SHAPES, elements=st.integers(-100, 100).map(float),
                                             unique=True)), rtol=1e-5, atol=1e-5),
    # Scale factors near 1: a product far from float32's overflow, where the order would decide inf.
    "scale_product": Case(st.tuples(hnp.arrays(np.float32, ARRAY_SHAPES, elements=st.floats(0.5, 2, width=32))),
                          rtol=1e-5, atol=1e-30),
    "drop_padding": Case(ids_and_attention()),
    # Created arrays: sizes small enough to allocate (negative ones are NumPy's ValueError; torch raises
    # RuntimeError for those, and for an arange whose bounds and step disagree, so the torch functions
    # meet sizes of 0 and up), square scores for a causal mask, 1-d ids and 2-d batches.
    "causal_bias": Case(st.tuples(st.integers(0, 2), st.integers(0, 4)).flatmap(
        lambda bn: st.tuples(hnp.arrays(np.float32, (bn[0], bn[1], bn[1]), elements=st.floats(-10, 10, width=32))
                             .map(torch.from_numpy)))),
    "causal_keep": Case(st.tuples(st.integers(0, 6))),
    "sinusoidal_positions": Case(st.tuples(st.integers(-1, 6), st.integers(1, 9)), rtol=2e-5, atol=2e-6),
    "one_hot": Case(st.tuples(hnp.arrays(np.int64, st.integers(0, 6), elements=st.integers(-1, 5)),
                              st.integers(-1, 5))),
    "running_total": Case(st.tuples(hnp.arrays(np.float32, st.tuples(st.integers(0, 4), st.integers(0, 4)),
                                               elements=st.floats(-10, 10, width=32)))),
    "centred": Case(st.tuples(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                                         elements=st.floats(-10, 10, width=32))), rtol=2e-5, atol=2e-6),
    "uniform_weights": Case(st.tuples(st.integers(-2, 8))),
    # any floats, subnormal spans (the step underflows to 0), inf and nan included: NumPy's own arithmetic
    "histogram_edges": Case(st.tuples(st.floats(), st.floats(), st.integers(-3, 40))),
    "sample_times": Case(st.tuples(st.floats(), st.integers(-2, 40))),
    # In-place arithmetic: an operand that fits the array in most draws, any shape in the rest.
    "center_and_scale": Case(rtol=1e-9, atol=1e-12),
    "biased_counts": Case(array_and_operand(np.int64, st.integers(-1000, 1000))),
    "f32_accumulates_f64": Case(array_and_operand(np.float64, st.floats(-10, 10)).map(
        lambda pair: (pair[0].astype(np.float32), pair[1]))),
    "damped_update": Case(array_and_operand(np.float64, st.floats(-10, 10)).flatmap(
        lambda pair: st.tuples(st.just(pair[0]), st.just(pair[1]), st.integers(-2, 8)))),
    "torch_residual": Case(array_and_operand(np.float32, st.floats(-5, 5, width=32), as_torch=True)),
    "torch_augmented": Case(rtol=1e-5, atol=1e-5),
    "reset_and_copy": Case(array_and_operand(np.float32, st.floats(-5, 5, width=32), as_torch=True)),
    "frame_peaks": Case(st.tuples(hnp.arrays(np.float32, st.integers(0, 12), elements=st.floats(-5, 5, width=32)),
                                  st.integers(-3, 5))),
    "identity_blend": Case(st.tuples(hnp.arrays(np.float64, st.integers(0, 4).map(lambda n: (n, n)),
                                                elements=st.floats(-5, 5)), st.floats(-2, 2))),
    "shifted_diagonal": Case(st.tuples(st.integers(-1, 6), st.integers(-1, 6),
                                       st.one_of(st.integers(-8, 8), st.integers(-2**63, 2**63 - 1)))),
    "position_ids": Case(st.tuples(st.integers(0, 6), st.integers(0, 10))),
    "countdown": Case(st.tuples(st.integers(-3, 20), st.integers(-3, 4))),
    # x[mask] = v: masks that fit the array (its shape or its leading dims), now and then one that does not.
    "mask_scores": Case(array_and_mask()),
    "flags_off": Case(array_and_mask(np.bool_)),
    "threshold_logits": Case(st.tuples(hnp.arrays(np.float64, ARRAY_SHAPES, elements=st.floats(allow_nan=True)),
                                       any_float)),
    # NumPy's ufunc reductions take axis 0 or -1 of a 0-d array (np.all(np.array(0.0), axis=0) is False);
    # the compiled reduce rule raises there as np.mean does: arrays of 1 dim or more.
    "columns_all_positive": Case(st.tuples(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0,
                                                                                   max_side=4),
                                                      elements=st.floats(-10, 10, width=32)))),
    # Basic-index writes: sizes held small (np.zeros of an any-int size would not fit in memory).
    "pad_batch": Case(st.tuples(strategy(npt.NDArray[np.float32]), st.integers(-2, 6))),
    "bucket_counts": Case(st.tuples(strategy(npt.NDArray[np.int64]), st.integers(-2, 12))),
    "last_flag_on": Case(st.tuples(hnp.arrays(np.bool_, ARRAY_SHAPES))),
    # Model code with bare annotations (float32 tensors, float64 arrays) and torch's methods.
    "multi_head_attention": Case(heads_inputs(), rtol=2e-5, atol=2e-6),
    "masked_softmax": Case(scores_and_keep(), rtol=2e-5, atol=2e-6),
    "mean_pool_mask": Case(hidden_and_mask(), rtol=1e-5, atol=1e-5),
    "rms_norm": Case(rows_and_weight(), rtol=1e-5, atol=1e-5),
    # torch idioms compiled from their Python definitions (opgen/compiler/lowerings): shapes that fit where
    # the idiom needs them (now and then one that does not, torch's error), the rest from the annotations.
    "mean_pooling": Case(hidden_and_mask(), rtol=1e-5, atol=1e-5),
    "safe_log": Case(st.tuples(hnp.arrays(np.float32, ARRAY_SHAPES, elements=st.floats(0, 1, width=32)).map(
        torch.from_numpy), st.sampled_from([1e-7, 1e-3, 0.0, float("nan"), 1e39])), rtol=2e-6, atol=1e-7),  # log
    "tile_rows": Case(st.tuples(float_tensors(), st.integers(-1, 4))),
    "retrieval_scores": Case(query_and_docs(), rtol=1e-5, atol=1e-6),
    "pair_similarity": Case(batch_pairs(), rtol=1e-5, atol=1e-6),
    # key= orderings: scores with ties (nan keys are refused by sorted(), as its nan is; min/max take them)
    "top_k_indices": Case(st.tuples(st.lists(st.sampled_from([0.0, 1.0, 2.5, -1.0, 0.5]), max_size=7),
                                    st.integers(-2, 5))),
    "most_frequent": Case(st.tuples(st.lists(st.sampled_from(["a", "b", "é", "日"]), max_size=6))),
    "vocabulary_by_frequency": Case(st.tuples(st.dictionaries(st.sampled_from(["a", "b", "c", "d", "é"]),
                                                              st.integers(0, 3), max_size=5), st.integers(-1, 4))),
    "longest_word": Case(st.tuples(prose)),
    # %d of a float past int64 is Python's big int, compiled code's OverflowError (ints are int64): finite losses
    "legacy_log_line": Case(st.tuples(any_int, st.one_of(finite(), st.sampled_from([float("nan"), float("inf")])),
                                      text)),
    # np.linalg.norm adds in the kernel's order (NumPy's is pairwise): the last bit may differ
    "stable_normalize": Case(rtol=1e-9, atol=1e-12),
    # x[i, j]: probabilities of n rows and n ids, now and then one more id than rows or an id out of range
    "chosen_token_probs": Case(probs_and_ids()),
    # int() and float() of text: numeric literals of several scripts and spellings, and junk
    "parse_ids": Case(st.tuples(st.lists(numeric_text, max_size=5))),
    "parse_threshold": Case(st.tuples(numeric_text, finite())),
    "parse_counting_attempts": Case(st.tuples(st.lists(numeric_text, max_size=6))),
    "first_parsed_index": Case(st.tuples(st.lists(numeric_text, max_size=6), st.integers(-1, 7))),
    "guarded_ratio": Case(st.tuples(finite(), st.one_of(finite(), st.just(0.0)))),
    # shapes of up to 5 dims with many unit dims: squeezes that remove, keep and refuse a named dim
    **{name: Case(st.tuples(hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=5, min_side=1, max_side=2),
                                       elements=st.floats(-3, 3, width=32)).map(torch.from_numpy)))
       for name in ("squeeze_pooled", "squeeze_named_dims")},
    "checked_ratio": Case(st.tuples(finite(), st.one_of(finite(), st.just(0.0), st.just(-0.0)))),
    # Optional arguments: each drawn as None or as a value (shapes that fit; the rest from the annotations).
    "mean_pool": Case(optional_mask(), rtol=1e-5, atol=1e-5),
    "attention_weights": Case(optional_bias_and_scale(), rtol=2e-5, atol=2e-6),
    "weighted_sum": Case(st.lists(finite(), max_size=5).flatmap(
        lambda v: st.tuples(st.just(v), st.one_of(st.none(), st.lists(finite(), min_size=len(v), max_size=len(v)))))),
    "tempered_scores": Case(st.tuples(hnp.arrays(np.float64, ARRAY_SHAPES, elements=st.floats(-10, 10)),
                                      st.one_of(st.none(), st.floats(0.1, 10)), st.booleans())),
    "batch_loss": Case(rtol=1e-5, atol=1e-5),
    # NumPy's ufunc reductions and torch's take dim 0 or -1 of a 0-d array or tensor; the compiled reduce
    # rule raises there (as np.mean does): arrays and tensors of 1 dim or more.
    "softmax_rows": Case(st.tuples(hnp.arrays(np.float64, ONE_DIM_OR_MORE, elements=st.floats(-10, 10)),
                                   st.integers(-3, 2)), rtol=2e-5, atol=2e-6),
    "l1_normalize": Case(st.tuples(float_tensors(min_dims=1)), rtol=1e-5, atol=1e-6),
    "top_class": Case(st.tuples(float_tensors(min_dims=1))),
    "centred_negation": Case(rtol=1e-9, atol=1e-9),
    # zip() of weights and rows: rows of 1 dim or more (a 0-d tensor has no rows: TypeError, tested alike).
    "weighted_row_sum": Case(st.tuples(float_tensors(), st.lists(st.floats(-2, 2), max_size=5)), rtol=1e-5,
                             atol=1e-5),
    "positional_scores": Case(st.tuples(hnp.arrays(np.float64, ONE_DIM_OR_MORE, elements=st.floats(-10, 10))),
                              rtol=1e-9, atol=1e-9),
    # Vectors of one length (a length mismatch is np.dot's ValueError, drawn now and then); the norms add in
    # the kernel's order.
    "cosine_similarity": Case(vector_pairs(), rtol=1e-9, atol=1e-12),
    "rms_distance": Case(vector_pairs(), rtol=1e-9, atol=1e-12),
    "project": Case(rows_and_weights(), rtol=1e-9, atol=1e-9),
    "unit_rows": Case(st.tuples(hnp.arrays(np.float64, st.tuples(st.integers(0, 4), st.integers(0, 4)),
                                           elements=st.floats(-10, 10))), rtol=1e-9, atol=1e-12),
    "checked_mean": Case(st.tuples(hnp.arrays(np.float64, ARRAY_SHAPES, elements=st.floats(-10, 10))),
                         rtol=1e-9, atol=1e-12),
    # A list's dtype is its element type's: torch.tensor([]) is float32 in Python (no element says int), so
    # the ids are padded to at least one.
    "ids_tensor": Case(st.tuples(st.lists(st.integers(-5, 5), max_size=4), st.integers(-1, 1), st.integers(1, 6))),
    "logits_no_grad": Case(rows_and_weights(torch_float32=True), rtol=2e-5, atol=2e-6),
    "label_counts": Case(st.tuples(hnp.arrays(np.float64, st.integers(0, 8), elements=st.floats(-2, 6)),
                                   st.integers(0, 6))),
}


class _Int64Literals(ast.NodeTransformer):
    """Every int literal of the module becomes an Int64, so values computed from literals (``a, b =
    0, 1`` then ``a + b``) overflow int64 as the compiled ints do, not only those from arguments."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if type(node.value) is int:
            return ast.copy_location(ast.Call(ast.Name("_Int64", ast.Load()), [node], []), node)
        return node


def python_function(file: str, name: str) -> Any:
    """The oracle: the example module run by Python, its int literals held to int64."""
    path = EXAMPLES / file
    tree = ast.fix_missing_locations(_Int64Literals().visit(ast.parse(path.read_text())))
    namespace: dict[str, Any] = {"_Int64": Int64, "__name__": f"realistic_{path.stem}"}
    exec(compile(tree, str(path), "exec", dont_inherit=True), namespace)  # noqa: S102 - the project's own example file
    return namespace[name]


def case_for(file: str, name: str) -> tuple[Case, Any]:
    fn = python_function(file, name)
    case = CASES.get(name, Case())
    if case.args is None:
        hints = typing.get_type_hints(fn, include_extras=True)
        params = [hints[p] for p in fn.__code__.co_varnames[:fn.__code__.co_argcount]]
        case = dataclasses.replace(case, args=st.tuples(*[strategy(t) for t in params]))
    return case, fn


def expected_of(fn: Any, args: list[Any]) -> tuple[str, Any]:
    """The Python outcome, with an int result outside int64 standing for the OverflowError the
    compiled function raises (its ints are 64-bit), and an int where the function is annotated to
    return a float (``sum([])`` is 0) read as that float: a compiled function returns its
    annotated type."""
    # NumPy reads only an exact Python int as a weak scalar (Int64 is a subclass it takes as int64), so
    # calls with arrays run on plain ints, as tests/test_compile_constructs.py's do.
    arrays = any(isinstance(a, (np.ndarray, torch.Tensor)) for a in args)
    kind, value = outcome(fn, list(args) if arrays else as_int64(args))
    if kind == "ok" and any(type(v) is not bool and isinstance(v, int) and not INT64[0] <= v <= INT64[1]
                            for v in _ints(value)):
        return "error", OverflowError("outside int64")
    if kind == "ok" and fn.__annotations__.get("return") is float and isinstance(value, int) \
            and not isinstance(value, bool):
        return kind, float(value)
    return kind, value


def _ints(value: Any):
    if isinstance(value, int) and not isinstance(value, bool):
        yield value
    elif isinstance(value, (list, tuple, dict)):
        for v in (value.values() if isinstance(value, dict) else value):
            yield from _ints(v)


def test_the_collection_is_large_and_every_narrowing_names_a_function() -> None:
    names = [n for _, n in COLLECTION]
    assert len(names) >= 30 and len(set(names)) == len(names)
    assert set(CASES) <= set(names)
    for path in REALISTIC.glob("*.py"):  # each function says what it stands for
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.returns is not None and not node.name.startswith("_"):
                assert ast.get_docstring(node), f"{path.name}:{node.name} has no one-line description"


TARGETS = [("cpp", f, n) for f, n in COLLECTION] + [("rust", f, n) for f, n in COLLECTION]


@pytest.mark.parametrize("target,file,name", TARGETS, ids=[f"{t}-{n}" for t, _, n in TARGETS])
def test_realistic_function_matches_python(target: str, file: str, name: str, request: pytest.FixtureRequest,
                                           tmp_path: Path) -> None:
    case, python = case_for(file, name)
    libraries = request.getfixturevalue(f"realistic_{target}")
    native = BothHosts(libraries[name])
    replay: list[tuple[tuple, tuple[str, Any]]] = []

    @settings(max_examples=EXAMPLES_PER_FUNCTION, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(args=case.args)
    def from_python(args: tuple) -> None:
        expected = expected_of(python, list(args))
        got = outcome(native, list(args))
        assert_same(expected, got, rtol=case.rtol, atol=case.atol, signed_zeros=case.signed_zeros,
                    context=f"python host {name}{args!r}")
        if len(replay) < NODE_CASES:
            replay.append((args, expected))

    from_python()
    if target == "cpp":
        results = node_outcomes([(libraries[name], list(args)) for args, _ in replay], tmp_path)
        for (args, (kind, want)), got in zip(replay, results, strict=True):
            expected = (kind, as_node_returns(want) if kind == "ok" else want)
            assert_same(expected, got, rtol=case.rtol, atol=case.atol, signed_zeros=case.signed_zeros,
                        context=f"node host {name}{args!r}")


def test_weak_python_scalars_keep_the_arrays_dtype_and_range(realistic_cpp: dict[str, Path]) -> None:
    """NumPy 2 (NEP 50): a Python float with a float32 array is float32; a Python int beyond an
    int64 array's range is NumPy's OverflowError (checked here on an int that fits, and on the wrap
    NumPy does inside the array's dtype)."""
    areas = load_compiled(realistic_cpp["circle_areas"])(np.array([1.0, 2.0], np.float32))
    assert areas.dtype == np.float32
    np.testing.assert_array_equal(areas, np.pi * np.array([1.0, 2.0], np.float32) ** 2)
    shifted = load_compiled(realistic_cpp["relu_shift"])(np.array([INT64[1]], np.int64), 1)
    assert shifted.tolist() == np.maximum(np.array([INT64[1]]) + 1, 0).tolist() == [0]
    assert math.isclose(load_compiled(realistic_cpp["dot"])([1.5, 2.0], [2.0, 4.0, 9.0]), 11.0)
