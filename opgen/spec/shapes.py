"""Shape rules: how a kernel's output shape follows from its inputs.

The caller (harness, emitter, pipeline) allocates every output tensor from this
rule before calling the kernel, as torchgen's structured "out" kernels do. Rules are
data, so the emitter can evaluate them in C++ exactly as the harness does here.

    gufunc      "(m,k),(k,n)->(m,n)"  core dims per tensor input; leading loop dims broadcast
    elementwise                       all tensor inputs broadcast together (NumPy rules)
    reduce      {reduce: a, axis: axis}   a's shape with that axis removed
                {reduce: a, axis: axis, keepdims: keepdims}   ... or kept as size 1 when the
                bool parameter keepdims is true (NumPy's keepdims=True, torch's keepdim=True)
    same_as     {same_as: x}              the shape of x
    pool2d      {pool2d: x, kernel: [kh, kw], stride: [sh, sw], padding: [ph, pw]}
                x's shape (*, H, W) with the last two dims pooled: (*, Ho, Wo),
                Ho = (H + 2*ph - kh) // sh + 1 (torch's pooling with ceil_mode=False)
    pool        {pool: x, kernel: [k...], stride: [s...], padding: [p...]} and optionally
                dilation: [d...], ceil_mode: <bool param> and check_input_size: true: torch's N-d
                pooling (N the kernel list's length, 1 to 3), x's shape (*, L1..LN) with the last N
                dims pooled, each by torch's pooling_output_shape (floor or ceil, dilation, the ceil
                overhang rule); check_input_size: the unpadded input must be at least the kernel
                (torch's avg_pool3d)
    permute     {permute: x, axes: axes}  x's shape permuted: out.shape[i] = x.shape[axes[i]]
                (axes a list[int] parameter, a permutation of range(ndim), negative entries count
                from the end: numpy.transpose)
    reshape     {reshape: x, shape: shape}  the list[int] parameter shape, one negative entry
                standing for the size the others leave (numpy.reshape)
    expand_dims {expand_dims: x, axis: axis}  x's shape with a dim of 1 inserted at axis (an axis
                of the result, in [-ndim-1, ndim])
    squeeze     {squeeze: x, axis: axis}  x's shape with axis removed; that dim must be 1
    broadcast_to {broadcast_to: x, shape: shape}  the list[int] parameter shape, to which x
                broadcasts (NumPy's rules, one way: numpy.broadcast_to); the shim hands the kernel
                x as a view of that shape (stride 0 along the broadcast dims)
    tile        {tile: x, reps: reps}  numpy.tile: x's shape and the list[int] parameter reps, the
                shorter padded with leading 1s, multiplied dim by dim
    pad         {pad: x, widths: pad_width, mode: mode}  numpy.pad: each dim grown by its (before,
                after) pair of the list[int] parameter pad_width (1 entry: every pair (w, w); 2: every
                pair (b, a); 2*ndim: the (ndim, 2) array in C order); the str parameter mode is one of
                PAD_MODES (its errors: an unknown mode, a non-constant mode extending an empty axis)
    torch_pad   {torch_pad: input, pad: pad}  torch.nn.functional.pad (mode 'constant'): the list[int]
                parameter pad holds (before, after) pairs from the last dim backwards (at most ndim
                pairs); a negative entry crops; every dim's length plus its pair must stay >= 0
    The last eight are data movement: the shim checks the parameters (NumPy's errors, as
    ValueError) before the kernel runs, and for parameters it rejects the shape is (0,).
    take        {take: a, indices: indices, axis: axis}  a.shape[:axis] + indices.shape +
                a.shape[axis+1:] (numpy.take with an int axis, mode="raise"; a 0-d a is taken as
                shape (1,), as NumPy does)
    take_along_axis {take_along_axis: arr, indices: indices, axis: axis}  arr and indices have
                the same rank; out's dims are their broadcast on every dim but axis, where it is
                indices' length (numpy.take_along_axis with an int axis)
    index_select {index_select: input, indices: index, axis: dim}  torch.index_select: input's shape
                with dim's length replaced by the number of indices (a vector, or 0-d: one); a 0-d
                input takes exactly one index and gives a 0-d result
    These three are gathers (GATHER): the shim raises the library's errors (take, take_along_axis:
    NumPy's, ValueError for the axis and the rank, IndexError for a shape mismatch, a non-empty take
    from an empty axis and any index outside [-n, n); index_select: torch's, all IndexError, for the
    dim, an index tensor of more than 1 dim, a count other than 1 for a 0-d input, and any index
    outside [0, n): GATHER_SIGNED says which indices count from the end) before the kernel runs; for
    shapes it rejects the shape is (0,).
    topk        {topk: x, axis: dim, k: k}  x's shape with the axis the int parameter dim names (negative
                counts from the end; a 0-d x has the one axis 0 or -1) of length k, the int parameter k
                (torch.topk's values and indices); the shim raises IndexError, as torch's checks in its
                words, for an axis out of range or k outside [0, length], and then the shape is (0,)
    concatenate {concatenate: xs, axis: axis}  xs a list[tensor[...]] parameter: the elements'
                common shape with their sizes along axis added (numpy.concatenate with an int axis)
    stack       {stack: xs, axis: axis}  the elements' common shape with a dim of len(xs) inserted
                at axis, an axis of the result (numpy.stack)
    These two join a list of tensors (JOIN): the shim raises NumPy's errors (all ValueError, its
    AxisError among them: an empty list, 0-d elements for concatenate, an axis out of range,
    elements whose ranks or sizes do not fit) before the kernel runs; for those the shape is (0,).
    boolean_mask {boolean_mask: x, mask: mask}  NumPy's x[mask] with a bool mask of the shape of x's
                first mask.ndim dims: (count, *x.shape[mask.ndim:]), count the number of true elements.
                That length depends on the data, so the rule gives its bound, (mask.size,
                *x.shape[mask.ndim:]): the caller allocates the bound, the kernel writes the first count
                rows and reports count in the result whose rule is {count_of: mask}, and the caller
                takes the view of the first count rows (no copy). The shim raises NumPy's IndexError
                for a mask whose shape does not match x's first dims, before the kernel runs; then the
                shape is (0,).
    masked_fill {masked_fill: x, mask: mask}  x's shape: NumPy's x[mask] = value (a functional update),
                mask a bool mask of the shape of x's first mask.ndim dims. The shim raises NumPy's
                IndexError for a mask that does not match (boolean_mask's checks, in its words) before
                the kernel runs; then the shape is x's all the same.
    assign_region {assign_region: x, value: value, starts: starts, steps: steps}  x's shape: NumPy's
                basic-index item assignment x[s_0:e_0:t_0, ...] = value as a functional update; the
                list[int] parameters starts and steps give each dim's first position and step (a
                negative step walks backwards, never 0), value's shape the count along each dim (0:
                nothing set), so out[starts + i*steps] = value[i]. The shim raises ValueError
                (assign_region_shape, its words) for a region that does not lie in x (ranks or list
                lengths that differ, a step of 0, a first or last position outside x's dim) before the
                kernel runs; then the shape is x's all the same.
    dot         {dot: [a, b]}  numpy.dot(a, b) (NumPy 2): a 0-d operand multiplies elementwise (out has the
                other's shape); otherwise a.shape[-1] is contracted with b's second-to-last dim (its only
                dim when b is 1-D) and out's shape is a.shape[:-1] + b.shape[:-2] + b.shape[-1:]
                (dot_shape). The shim raises NumPy's ValueError ("shapes (2,3) and (4,) not aligned: 3
                (dim 1) != 4 (dim 0)", dot_shape's words) for lengths that differ, and opgen's for a result
                of more than 8 dims, before the kernel runs; then the shape is (0,). The contracted length is
                the ``terms`` a tolerance names as ``k`` (DOT_TERMS).
    count_of    {count_of: mask}  the 0-d int64 result holding the length a bounded result (BOUNDED)
                reaches at run time.
    sized       {sized: shape}  the list[int] parameter shape itself (numpy.zeros, ones, full: an array
                created from its shape); a negative entry is NumPy's ValueError ("negative dimensions
                are not allowed"), more than 8 entries opgen's
    arange      {arange: [start, stop, step]}  a vector of length max(0, ceil((stop - start) / step)),
                the quotient taken in double as NumPy's _arange_safe_ceil_to_intp does (int or float
                parameters, all of one kind); step 0 is ZeroDivisionError ("division by zero"), a
                quotient that is not finite ValueError ("arange: cannot compute length"), a length
                past int64 ValueError ("Maximum allowed size exceeded")
    These two create (CREATION): no tensor input, the shape from scalar parameters alone; the shim
    raises the errors before the kernel runs, and for parameters it rejects the shape is (0,).
    Why a bound and a count, not two calls (count, then fill): one pass over the data, one kernel,
    and the caller's allocation stays a function of shapes only, as for every other rule; the bytes
    past the count are not part of the result (the gate compares the count exactly and the rows
    before it; a write past the bound is caught as for any output).
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
    kind: str  # gufunc | elementwise | reduce | same_as | sized | arange | pool2d | pool | permute | reshape | expand_dims | squeeze | broadcast_to | tile | pad | take | take_along_axis | index_select | topk | concatenate | stack | boolean_mask | masked_fill | assign_region | dot | count_of
    gufunc: str | None = None
    inputs_core: tuple[tuple[str, ...], ...] = ()
    output_core: tuple[str, ...] = ()
    source: str | None = None  # tensor param for reduce / same_as
    axis: str | None = None  # int param naming the reduced axis
    keepdims: str | None = None  # reduce: the bool param that keeps the reduced axis as size 1
    pool: tuple[str, ...] = ()  # pool2d: the int params kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w
    # arange: the int (or float) params start, stop and step, in that order
    bounds: tuple[str, ...] = ()
    dims: str | None = None  # sized: the list[int] param of the shape; permute: the list[int] param of axes; reshape, broadcast_to: the list[int] param of the new shape; tile: of reps; pad: of the widths
    mode: str | None = None  # pad: the str param of the mode (PAD_MODES)
    # pool: the int params of the dilation, one a pooled dim (empty: dilation 1), and the bool
    # param of ceil_mode (None: floor); its kernel, stride and padding params are in ``pool``.
    dilation: tuple[str, ...] = ()
    ceil_mode: str | None = None
    check_input_size: bool = False  # pool: the unpadded input at least the kernel in every pooled dim (avg_pool3d)
    indices: str | None = None  # take, take_along_axis, index_select: the int tensor param of the indices; boolean_mask: the bool mask; assign_region: the value tensor; dot: b (source is a)
    region: tuple[str, ...] = ()  # assign_region: the list[int] params of the starts and the steps, in that order
    k: str | None = None  # topk: the int param of the selected length
    # concatenate and stack: ``source`` names the list[tensor[...]] parameter, ``axis`` the int one.
    # gufunc: NumPy's flexible core dims ("(m?,k),(k,n?)->(m?,n?)", matmul's 1-D rules), written
    # without the "?" in ``gufunc`` and the cores: the kernel always sees them. A caller whose
    # operand has fewer dims than its core inserts them as size-1 dims and drops them from the
    # result (opgen.compiler's adapters do); a dim named here is flexible wherever it appears.
    flexible: tuple[str, ...] = ()

    @property
    def pool_ndim(self) -> int:
        """pool: the number of pooled (last) dims."""
        return len(self.pool) // 3

    def pool_args(self, args: dict[str, Any]) -> tuple[list[int], list[int], list[int], list[int], bool]:
        """pool: (kernel, stride, padding, dilation, ceil_mode) for concrete arguments."""
        n = self.pool_ndim
        ints = [int(args[p]) for p in self.pool]
        dilation = [int(args[p]) for p in self.dilation] if self.dilation else [1] * n
        ceil = bool(args[self.ceil_mode]) if self.ceil_mode is not None else False
        return ints[:n], ints[n:2 * n], ints[2 * n:], dilation, ceil

    def describe(self) -> str:
        if self.kind == "gufunc":
            return f"gufunc {self.gufunc} (loop dims broadcast, NumPy rules)"
        if self.kind == "elementwise":
            return "elementwise: tensor inputs broadcast together (NumPy rules)"
        if self.kind == "reduce":
            if self.keepdims is not None:
                return (f"reduce: shape of {self.source} with axis {self.axis} kept as size 1 when {self.keepdims} "
                        "is true, removed when it is false (negative axes count from the end)")
            return f"reduce: shape of {self.source} with axis {self.axis} removed (negative axes count from the end)"
        if self.kind == "pool2d":
            kh, kw, sh, sw, ph, pw = self.pool
            return (f"pool2d: {self.source} is (*, H, W) and out (*, Ho, Wo) with Ho = (H + 2*{ph} - {kh}) // {sh} + 1 "
                    f"and Wo = (W + 2*{pw} - {kw}) // {sw} + 1; opgen's shim has already raised ValueError for "
                    f"parameters the op rejects ({kh}, {kw}, {sh}, {sw} < 1, {ph}, {pw} < 0, a padding over half "
                    "its kernel, H or W == 0, an output size below 1), so the kernel sees valid ones only")
        if self.kind == "pool":
            n = self.pool_ndim
            k, st, pd = self.pool[:n], self.pool[n:2 * n], self.pool[2 * n:]
            d = self.dilation
            mode = "round" if self.ceil_mode else "floor"
            window = [f"{d[i]}*({k[i]} - 1) - 1" if self.dilation else k[i] for i in range(n)]
            sizes = "; ".join(f"O{i} = {mode}((L{i} + 2*{pd[i]} - {window[i]}) / {st[i]}) + 1" for i in range(n))
            if self.ceil_mode:
                sizes += f", where round is ceil when {self.ceil_mode} is true and floor when it is false"
            return (f"pool: {self.source} is (*, {', '.join(f'L{i}' for i in range(n))}) and out "
                    f"(*, {', '.join(f'O{i}' for i in range(n))}) with {sizes}"
                    + (f"; in ceil mode an Oi with (Oi - 1)*stride >= Li + padding (a last window starting in the "
                       "right padding) is one less (torch's pooling_output_shape)" if self.ceil_mode else "")
                    + "; opgen's shim has already raised ValueError for parameters the op rejects (a kernel"
                    + (", stride or dilation" if self.dilation else " or stride")
                    + " below 1, a negative padding, a padding over half its kernel, a pooled dim of 0, "
                    + ("an unpadded pooled dim smaller than its kernel, " if self.check_input_size else "")
                    + "an output size below 1), so the kernel sees valid ones only")
        if self.kind in MOVEMENT:
            return self._describe_movement()
        if self.kind in GATHER:
            return self._describe_gather()
        if self.kind == "topk":
            return (f"topk: shape of {self.source} with axis {self.axis} (negative counts from the end) of length "
                    f"{self.k}; a 0-d {self.source} gives a 0-d result; opgen's shim has already raised IndexError "
                    f"for an axis out of range and for {self.k} outside [0, that axis' length], so the kernel sees "
                    "valid ones only")
        if self.kind in JOIN:
            return self._describe_join()
        if self.kind == "masked_fill":
            x, m = self.source, self.indices
            return (f"masked_fill: out has {x}'s shape; opgen's shim has already raised NumPy's IndexError for a {m} "
                    f"whose shape is not {x}'s first {m}.ndim dims, so the shapes match")
        if self.kind == "assign_region":
            x, v = self.source, self.indices
            starts, steps = self.region
            return (f"assign_region: out has {x}'s shape and is a copy of {x} in which the region is replaced by {v}: "
                    f"for every index i of {v}.shape, out[{starts}[0] + i[0]*{steps}[0], ..., {starts}[n-1] + "
                    f"i[n-1]*{steps}[n-1]] = {v}[i] (NumPy's {x}[{starts}[0]::{steps}[0], ...][:{v}.shape[0], ...] = "
                    f"{v}); {v} has {x}'s rank, {v}.shape[d] is the count along dim d (0: nothing set), a step may "
                    f"be negative (a reversed slice) but is never 0; opgen's shim has already raised ValueError for a "
                    f"region that does not lie in {x} (ranks or list lengths that differ, a step of 0, a first or "
                    f"last position outside {x}'s dim), so every position written is inside {x}")
        if self.kind == "dot":
            a, b = self.source, self.indices
            return (f"dot: numpy.dot({a}, {b}). When {a} or {b} is 0-d, out has the other's shape (0-d when both are) "
                    f"and out[i] = {a}[i] * {b}[i], the 0-d one standing for every i. Otherwise k = {a}.shape[-1] is "
                    f"contracted with {b}'s second-to-last dim ({b}'s only dim when {b} is 1-D): out.shape = "
                    f"{a}.shape[:-1] + {b}.shape[:-2] + {b}.shape[-1:] ({b}.shape[-1:] only when {b} has at least 2 "
                    f"dims), out[i..., j..., n] = sum over p < k of {a}[i..., p] * {b}[j..., p, n] (for a 1-D {b}: "
                    f"out[i...] = sum {a}[i..., p] * {b}[p]; both 1-D: a 0-d out); k may be 0 (out is all zeros); "
                    f"opgen's shim has already raised NumPy's ValueError for lengths that differ (and for a result "
                    f"of more than 8 dims), so the lengths agree")
        if self.kind == "boolean_mask":
            x, m = self.source, self.indices
            return (f"boolean_mask: out is allocated at its bound ({m}.numel(), *{x}.shape[{m}.ndim:]), and the "
                    f"kernel writes the rows of {x} (each {x}[i] over {x}'s first {m}.ndim dims, in C order) where "
                    f"{m} is true into out's first rows, in order, and their number into the count result; rows "
                    f"past the count are not part of the result and must not be written past the bound "
                    f"(NumPy's {x}[{m}]); opgen's shim has already raised NumPy's IndexError for a {m} whose "
                    f"shape is not {x}'s first {m}.ndim dims, so the shapes match")
        if self.kind == "sized":
            return (f"sized: out's shape is the list {self.dims} itself; opgen's shim has already raised ValueError "
                    f"for a negative entry (and for more than 8 entries), so the kernel sees a valid shape")
        if self.kind == "arange":
            start, stop, step = self.bounds
            return (f"arange: out is a vector of length max(0, ceil(({stop} - {start}) / {step})), the quotient "
                    f"computed in double (numpy.arange); opgen's shim has already raised ZeroDivisionError for "
                    f"{step} == 0 and ValueError for a length that is not finite or too large, so the kernel sees "
                    "valid ones only")
        if self.kind == "count_of":
            return (f"count_of: a 0-d int64 result, the number of true elements of {self.source}: the length of "
                    "the bounded result's first dim")
        return f"same shape as {self.source}"

    def _describe_join(self) -> str:
        xs, ax = self.source, self.axis
        checked = (f"; opgen's shim has already raised NumPy's ValueErrors (an empty {xs}, "
                   + ("0-d elements, " if self.kind == "concatenate" else "")
                   + f"{ax} out of range, elements whose "
                   + ("ranks differ or whose sizes differ off the axis" if self.kind == "concatenate"
                      else "shapes differ")
                   + f"), so the kernel sees at least one element and a valid {ax}")
        if self.kind == "concatenate":
            return (f"concatenate: every element of {xs} has the same rank (at least 1) and the same sizes except "
                    f"along {ax} (negative counts from the end); out has that shape with out.shape[{ax}] the sum "
                    f"of their sizes along {ax}, the elements placed one after another along it, in order "
                    "(numpy.concatenate); an element may have size 0 along the axis or elsewhere" + checked)
        return (f"stack: every element of {xs} has the same shape s; out.shape is s with len({xs}) inserted at "
                f"{ax}, an axis of the result (in [-s.ndim - 1, s.ndim], negative counting from the end), and "
                f"out[..., i, ...] (i at {ax}) is {xs}[i] (numpy.stack)" + checked)

    def _describe_gather(self) -> str:
        x, i, ax = self.source, self.indices, self.axis
        checked = (f"; opgen's shim has already raised NumPy's errors (ValueError for an axis out of range"
                   + (" or a rank mismatch" if self.kind == "take_along_axis" else "")
                   + ", IndexError for " + ("a shape mismatch" if self.kind == "take_along_axis"
                                             else "a non-empty take from an empty axis")
                   + f" and for any index outside [-n, n), n = {x}.shape[{ax}]), so where out is not empty every "
                   f"index is in [-n, n), a negative one counting from the end")
        if self.kind == "index_select":
            return (f"index_select: out.shape is {x}.shape with {ax} replaced by {i}.numel() ({i} is 1-d, or 0-d: "
                    f"one index; a 0-d {x} comes as shape (1,) and out is 0-d), out[pre, j, post] = "
                    f"{x}[pre, {i}[j], post] (torch.index_select); opgen's shim has already raised torch's "
                    f"IndexErrors (a {ax} out of range, {i} of more than 1 dim, a 0-d {x} with other than one "
                    f"index, an index outside [0, n), n = {x}.shape[{ax}]; negative indices are errors), so "
                    f"every index is in [0, n)")
        if self.kind == "take":
            return (f"take: out.shape = {x}.shape[:{ax}] + {i}.shape + {x}.shape[{ax}+1:] (negative {ax} counts "
                    f"from the end; a 0-d {x} comes as shape (1,)), out[pre, j, post] = {x}[pre, {i}[j], post] "
                    "(numpy.take, mode='raise')" + checked)
        return (f"take_along_axis: {x} and {i} have the same rank; out.shape is their broadcast on every dim but "
                f"{ax}, where it is {i}.shape[{ax}]; the shim hands the kernel {i} as a view of out's shape and {x} "
                f"as a view of out's shape with {x}.shape[{ax}] along {ax} (stride 0 along broadcast dims), and "
                f"out[p] = {x}[p with {ax} replaced by {i}[p]] (numpy.take_along_axis)" + checked)

    def _describe_movement(self) -> str:
        checked = ("; opgen's shim has already raised ValueError for parameters the op rejects, so the kernel "
                   "sees valid ones only")
        x = self.source
        if self.kind == "permute":
            return (f"permute: out.shape[i] = {x}.shape[{self.dims}[i]]; {self.dims} is a permutation of "
                    f"range({x}.ndim), a negative entry counting from the end (numpy.transpose)" + checked)
        if self.kind == "reshape":
            return (f"reshape: out's shape is {self.dims}, one negative entry standing for the size the others "
                    f"leave, and out has {x}'s elements in C order (numpy.reshape)" + checked)
        if self.kind == "broadcast_to":
            return (f"broadcast_to: out's shape is {self.dims}, to which {x} broadcasts (NumPy's rules: {x}'s dims "
                    f"line up with the last ones of {self.dims}, each equal or 1); opgen's shim has already raised "
                    f"ValueError for a {self.dims} the op rejects and hands the kernel {x} as a view of out's shape, "
                    "stride 0 along every broadcast dim, so the kernel copies that view into out")
        if self.kind == "expand_dims":
            return (f"expand_dims: {x}'s shape with a dim of 1 inserted at {self.axis}, an axis of the result "
                    f"(in [-{x}.ndim - 1, {x}.ndim], negative counting from the end)" + checked)
        if self.kind == "tile":
            return (f"tile: with d = max({x}.ndim, len({self.dims})), {x}'s shape and {self.dims} each padded with "
                    f"leading 1s to d entries, out.shape[i] = shape[i] * {self.dims}[i], and out[o] = {x}[o mod shape] "
                    f"over {x}'s own (last) dims (numpy.tile)" + checked)
        if self.kind == "torch_pad":
            return (f"torch_pad: {self.dims} holds (before, after) pairs from the last dim of {x} backwards (pair k "
                    f"for dim ndim - 1 - k; dims without a pair keep their length); out.shape[d] = {x}.shape[d] + "
                    f"before + after, and out[o] = {x}[o - before] where that lies inside {x}, else the value: a "
                    f"negative entry crops (torch.nn.functional.pad, mode 'constant')" + checked)
        if self.kind == "pad":
            return (f"pad: {self.dims} gives each dim i of {x} a pair (before_i, after_i): 1 entry w means (w, w) for "
                    f"every dim, 2 entries (b, a) mean (b, a) for every dim, 2*ndim entries are the pairs in dim order "
                    f"(b0, a0, b1, a1, ...); out.shape[i] = {x}.shape[i] + before_i + after_i, and out[o] = "
                    f"{x}[o - before] where that is inside {x}, else by {self.mode} (numpy.pad): 'constant' the "
                    f"constant value, 'edge' the nearest edge element, 'reflect' the mirror without repeating the "
                    f"edge (period 2*(n-1) along a dim of length n; n == 1 gives that element), 'wrap' periodic "
                    f"(period n)" + checked)
        return (f"squeeze: {x}'s shape with axis {self.axis} removed (negative counts from the end); "
                "that dim has size 1" + checked)

    def output_shape(self, args: dict[str, Any], tensor_names: list[str]) -> tuple[int, ...]:
        """Output shape for concrete arguments; raises ValueError on incompatible shapes."""
        shapes = [tuple(np.shape(args[n])) for n in tensor_names]
        if self.kind == "elementwise":
            return tuple(np.broadcast_shapes(*shapes))
        if self.kind == "same_as":
            return tuple(np.shape(args[self.source]))
        if self.kind == "pool2d":
            return pool2d_shape(np.shape(args[self.source]), *(int(args[p]) for p in self.pool))
        if self.kind == "pool":
            return pool_shape(np.shape(args[self.source]), *self.pool_args(args), self.check_input_size)
        if self.kind in MOVEMENT:
            shape, _ = movement_shape(self, tuple(np.shape(args[self.source])), args)
            return shape
        if self.kind in JOIN:
            shape, _ = join_shape(self, [tuple(np.shape(x)) for x in args[self.source]], int(args[self.axis]))
            return shape
        if self.kind in GATHER:
            shape, _ = gather_shape(self, tuple(np.shape(args[self.source])), tuple(np.shape(args[self.indices])),
                                    int(args[self.axis]))
            return shape
        if self.kind == "topk":
            shape, _ = topk_shape(tuple(np.shape(args[self.source])), int(args[self.axis]), int(args[self.k]))
            return shape
        if self.kind == "boolean_mask":
            shape, _ = boolean_mask_shape(tuple(np.shape(args[self.source])), tuple(np.shape(args[self.indices])))
            return shape
        if self.kind in ("masked_fill", "assign_region"):
            return tuple(np.shape(args[self.source]))
        if self.kind == "dot":
            shape, _ = dot_shape(tuple(np.shape(args[self.source])), tuple(np.shape(args[self.indices])))
            return shape
        if self.kind == "count_of":
            return ()
        if self.kind in CREATION:
            shape, _ = creation_shape(self, args)
            return shape
        if self.kind == "reduce":
            shape = list(np.shape(args[self.source]))
            ax = normalize_axis(int(args[self.axis]), len(shape))
            if self.keepdims is not None and bool(args[self.keepdims]):
                shape[ax] = 1
            else:
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
        return tuple(np.broadcast_shapes(*loops)) + tuple(1 if n == KEPT_DIM else sizes[n] for n in self.output_core)


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


def pool_out_size(n: int, k: int, s: int, p: int, d: int = 1, ceil_mode: bool = False) -> int:
    """torch's pooling_output_shape: floor (or ceil) of (n + 2p - d*(k-1) - 1) / s, plus 1; in ceil
    mode one less where the last window would start at or past n + p (in the right padding). May
    be below 1 (an error, pool_error)."""
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1  # Python's floor division: torch's div_rtn
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def pool_error(shape: tuple[int, ...], kernel: list[int], stride: list[int], padding: list[int],
               dilation: list[int] | None = None, ceil_mode: bool = False,
               check_input_size: bool = False) -> str | None:
    """Why torch's N-d pooling (max_pool1d/3d, avg_pool1d/3d; N = len(kernel)) rejects these
    arguments, or None. The padding bound is half the plain kernel, as torch checks it, for max and
    avg alike (torch's max_pool1d/3d do not count the dilation there). The C++ and Rust shims check
    the same conditions in the same words and order. ``check_input_size``: torch's avg_pool3d
    (pool3d_shape_check's flag of that name) also rejects an unpadded input smaller than the
    kernel in any pooled dim, however much padding there is."""
    n = len(kernel)
    dilation = list(dilation) if dilation is not None else [1] * n
    if len(shape) < n:
        return f"input needs at least {n} dims (the last {n} pooled)"
    if any(k < 1 for k in kernel):
        return "kernel size must be at least 1"
    if any(s < 1 for s in stride):
        return "stride must be at least 1"
    if any(p < 0 for p in padding):
        return "padding must not be negative"
    if any(d < 1 for d in dilation):
        return "dilation must be at least 1"
    if any(2 * p > k for p, k in zip(padding, kernel)):
        return "padding should be at most half of the kernel size"
    sizes = shape[len(shape) - n:]
    if any(s == 0 for s in sizes):
        return "the pooled dims must not be 0"
    if check_input_size and any(L < k for L, k in zip(sizes, kernel)):
        return "input is smaller than the kernel (in a pooled dim, before padding)"
    if any(pool_out_size(L, k, s, p, d, ceil_mode) < 1 for L, k, s, p, d in zip(sizes, kernel, stride, padding, dilation)):
        return "output size is too small (the padded input is smaller than the dilated kernel)"
    return None


def pool_shape(shape: tuple[int, ...], kernel: list[int], stride: list[int], padding: list[int],
               dilation: list[int] | None = None, ceil_mode: bool = False,
               check_input_size: bool = False) -> tuple[int, ...]:
    """The pooled shape; for arguments the op rejects (pool_error), 0 in the pooled dims (the
    shim raises ValueError before the kernel looks at out)."""
    shape = tuple(int(s) for s in shape)
    n = len(kernel)
    if len(shape) < n:
        return shape
    if pool_error(shape, kernel, stride, padding, dilation, ceil_mode, check_input_size) is not None:
        return shape[:len(shape) - n] + (0,) * n
    dilation = list(dilation) if dilation is not None else [1] * n
    return shape[:len(shape) - n] + tuple(
        pool_out_size(L, k, s, p, d, ceil_mode)
        for L, k, s, p, d in zip(shape[len(shape) - n:], kernel, stride, padding, dilation))


MOVEMENT = ("permute", "reshape", "expand_dims", "squeeze", "broadcast_to", "tile", "pad", "torch_pad")
INT64_MAX = 2**63 - 1
PAD_MODES = ("constant", "edge", "reflect", "wrap")  # numpy.pad's modes that opgen's pad rule takes


def pad_pairs(widths: list[int], ndim: int) -> list[tuple[int, int]] | None:
    """The (before, after) pair of each dim that a pad rule's widths give (1 entry: (w, w) everywhere;
    2: (b, a) everywhere; 2*ndim: the pairs in dim order), or None for another length (or none)."""
    w = [int(v) for v in widths]
    if not w:  # NumPy refuses an empty pad_width, even for a 0-d array
        return None
    if len(w) == 1:
        return [(w[0], w[0])] * ndim
    if len(w) == 2:
        return [(w[0], w[1])] * ndim
    if len(w) == 2 * ndim:
        return [(w[2 * i], w[2 * i + 1]) for i in range(ndim)]
    return None


def movement_shape(rule: ShapeRule, shape: tuple[int, ...], args: dict[str, Any]) -> tuple[tuple[int, ...], str | None]:
    """(out's shape, None) for parameters a data-movement rule accepts, else ((0,), why): NumPy's
    errors (all ValueError; NumPy's AxisError is one), which the C++ and Rust shims check in the
    same words before the kernel runs."""
    shape = tuple(int(s) for s in shape)
    ndim = len(shape)
    if rule.kind == "permute":
        axes = [int(a) for a in args[rule.dims]]
        if len(axes) != ndim:
            return (0,), "axes don't match array"
        if any(not -ndim <= a < ndim for a in axes):
            return (0,), "axis out of range"
        axes = [a % ndim for a in axes]
        if len(set(axes)) != ndim:
            return (0,), "repeated axis in transpose"
        return tuple(shape[a] for a in axes), None
    if rule.kind == "reshape":
        new = [int(d) for d in args[rule.dims]]
        size = 1
        for s in shape:
            size *= s
        unknown = [i for i, d in enumerate(new) if d < 0]
        if len(unknown) > 1:
            return (0,), "can only specify one unknown dimension"
        known = 1
        for d in new:
            if d >= 0:
                known *= d
        mismatch = "cannot reshape: the new shape's size differs from the input's"
        if known > INT64_MAX:
            return (0,), mismatch
        if unknown:
            if known == 0 or size % known:
                return (0,), mismatch
            new[unknown[0]] = size // known
        elif known != size:
            return (0,), mismatch
        return tuple(new), None
    if rule.kind == "broadcast_to":
        new = tuple(int(d) for d in args[rule.dims])
        if any(d < 0 for d in new):
            return (0,), "all elements of broadcast shape must be non-negative"
        if not new and ndim:
            return (0,), "cannot broadcast a non-scalar to a scalar array"
        if len(new) < ndim:
            return (0,), "input operand has more dimensions than allowed by the axis remapping"
        if any(s != 1 and s != d for s, d in zip(shape, new[len(new) - ndim:])):
            return (0,), "operands could not be broadcast together with remapped shapes"
        return new, None
    if rule.kind == "tile":
        reps = [int(r) for r in args[rule.dims]]
        d = max(ndim, len(reps))
        full = (1,) * (d - ndim) + shape
        reps = [1] * (d - len(reps)) + reps
        out = tuple(s * r for s, r in zip(full, reps))
        # NumPy repeats a non-empty array (a negative count is an error) but only reshapes an empty
        # one, which a negative rep breaks only where it meets a dim that is not 0.
        if any(r < 0 for r in reps) and int(np.prod(shape, dtype=np.int64)):
            return (0,), "negative dimensions are not allowed"
        if any(o < 0 for o in out):
            return (0,), "cannot reshape array of size 0 into a shape with a negative dim"
        if d > MAX_DIMS:
            return (0,), "the result has more dims than an opgen tensor holds (8)"
        return out, None
    if rule.kind == "torch_pad":
        pad = [int(p) for p in args[rule.dims]]
        if len(pad) % 2:
            return (0,), "Padding length must be divisible by 2"
        if len(pad) > 2 * ndim:
            return (0,), (f"Padding length should be less than or equal to two times the input dimension but got "
                          f"padding length {len(pad)} and input of dimension {ndim}")
        out = list(shape)
        for k in range(len(pad) // 2):  # pairs from the last dim backwards
            d, b, a = ndim - 1 - k, pad[2 * k], pad[2 * k + 1]
            # torch crops (narrows) the negative sides first, then pads: both must leave a length >= 0
            if shape[d] + min(b, 0) + min(a, 0) < 0 or shape[d] + b + a < 0:
                return (0,), (f"The input size {shape[d]}, plus negative padding {b} and {a} resulted in a negative "
                              f"output size, which is invalid. Check dimension {d} of your input.")
            out[d] = shape[d] + b + a
        return tuple(out), None
    if rule.kind == "pad":
        mode = str(args[rule.mode])
        if mode not in PAD_MODES:
            return (0,), f"mode '{mode}' is not supported"
        pairs = pad_pairs(args[rule.dims], ndim)
        if pairs is None:
            return (0,), "pad_width needs 1, 2 or 2 * ndim entries"
        if any(int(w) < 0 for w in args[rule.dims]):  # (the widths, not the pairs: a 0-d array has none)
            return (0,), "index can't contain negative values"
        for i, (n, (b, a)) in enumerate(zip(shape, pairs)):
            if mode != "constant" and n == 0 and (b or a):
                return (0,), f"can't extend empty axis {i} using modes other than 'constant' or 'empty'"
        return tuple(n + b + a for n, (b, a) in zip(shape, pairs)), None
    axis = int(args[rule.axis])
    if rule.kind == "expand_dims":
        if not -ndim - 1 <= axis <= ndim:
            return (0,), "axis out of range"
        axis %= ndim + 1
        return shape[:axis] + (1,) + shape[axis:], None
    if ndim == 0 and axis in (0, -1):
        return (), None  # NumPy's quirk: a 0-d array squeezes along axis 0 or -1 to itself
    if not -ndim <= axis < ndim:
        return (0,), "axis out of range"
    axis %= ndim
    if shape[axis] != 1:
        return (0,), "cannot select an axis to squeeze out which has size not equal to one"
    return shape[:axis] + shape[axis + 1:], None


CREATION = ("sized", "arange")


def arange_length(start: float, stop: float, step: float) -> tuple[int, tuple[str, str] | None]:
    """numpy.arange's length, as its _arange_safe_ceil_to_intp computes it: ceil((stop - start) / step)
    in double, at least 0; or (0, (error type, NumPy's message)) for a step of 0, a quotient that is not
    finite, or a length past int64."""
    if step == 0:
        return 0, ("ZeroDivisionError", "division by zero")
    q = (float(stop) - float(start)) / float(step)
    if q != q or q in (float("inf"), float("-inf")):
        return 0, ("ValueError", "arange: cannot compute length")
    n = float(np.ceil(q))
    if n >= 2.0**63:
        return 0, ("ValueError", "Maximum allowed size exceeded")
    return max(int(n), 0), None


def creation_shape(rule: ShapeRule, args: dict[str, Any]) -> tuple[tuple[int, ...], tuple[str, str] | None]:
    """(out's shape, None) for parameters a creation rule (CREATION) accepts, else ((0,), (error type,
    NumPy's message)); the C++ and Rust shims check the same, in the same order and words."""
    if rule.kind == "arange":
        n, err = arange_length(*(args[b] for b in rule.bounds))
        return ((0,), err) if err is not None else ((n,), None)
    shape = tuple(int(d) for d in args[rule.dims])
    if any(d < 0 for d in shape):
        return (0,), ("ValueError", "negative dimensions are not allowed")
    if len(shape) > MAX_DIMS:
        return (0,), ("ValueError", "the result has more dims than an opgen tensor holds (8)")
    return shape, None


GATHER = ("take", "take_along_axis", "index_select")
# Whether a gather's indices may be negative, counting from the end (NumPy's), or must lie in
# [0, n) (torch.index_select's): what the shims check, the verifier draws and the kernels meet.
GATHER_SIGNED = {"take": True, "take_along_axis": True, "index_select": False}
MAX_DIMS = 8  # OPGEN_MAX_DIMS: the native tensor's largest rank


def _numpy_shape_text(shape: tuple[int, ...]) -> str:
    """A shape as NumPy's fancy-indexing messages print it: (2,1,1), (3,)."""
    return "(" + ",".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def gather_shape(rule: ShapeRule, shape: tuple[int, ...], index_shape: tuple[int, ...],
                 axis: int) -> tuple[tuple[int, ...], tuple[str, str] | None]:
    """(out's shape, None) where a gather rule (take, take_along_axis) accepts the shapes and the
    axis, else ((0,), (error type, NumPy's message)): the errors that do not depend on the index
    values, in NumPy's order and words, which the C++ and Rust shims check the same way before the
    kernel runs (the values: gather_index_error)."""
    shape = tuple(int(s) for s in shape)
    index_shape = tuple(int(s) for s in index_shape)
    axis = int(axis)
    if rule.kind == "index_select":
        nd = max(len(shape), 1)
        if not -nd <= axis < nd:
            return (0,), ("IndexError", f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                          f"but got {axis})")
        if len(index_shape) > 1:
            return (0,), ("IndexError", "index_select(): Index is supposed to be a vector")
        count = int(np.prod(index_shape, dtype=np.int64))
        if not shape:
            if count != 1:
                return (0,), ("IndexError", f"index_select(): Index to scalar can have only 1 value, got {count} "
                              "value(s)")
            return (), None
        ax = axis % nd
        if shape[ax] == 0 and count:
            return (0,), ("IndexError", "index_select(): self indexing axis dim should be positive")
        return shape[:ax] + (count,) + shape[ax + 1:], None
    if rule.kind == "take":
        if not shape:
            shape = (1,)  # NumPy's PyArray_CheckAxis: a 0-d array is taken from as 1-d
        nd = len(shape)
        if not -nd <= axis < nd:
            return (0,), ("ValueError", f"axis {axis} is out of bounds for array of dimension {nd}")
        ax = axis % nd
        out = shape[:ax] + index_shape + shape[ax + 1:]
        if len(out) > MAX_DIMS:
            return (0,), ("ValueError", "the result has more dims than an opgen tensor holds (8)")
        if shape[ax] == 0 and int(np.prod(out, dtype=np.int64)) != 0:
            return (0,), ("IndexError", "cannot do a non-empty take from an empty axes.")
        return out, None
    nd = len(shape)
    if not -nd <= axis < nd:
        return (0,), ("ValueError", f"axis {axis} is out of bounds for array of dimension {nd}")
    ax = axis % nd
    if len(index_shape) != nd:
        return (0,), ("ValueError", "`indices` and `arr` must have the same number of dimensions")
    out = []
    for d, (s, i) in enumerate(zip(shape, index_shape)):
        if d == ax:
            out.append(i)
        elif s == i or i == 1:
            out.append(s)
        elif s == 1:
            out.append(i)
        else:
            parts = [index_shape if k == ax else (1,) * k + (shape[k],) + (1,) * (nd - k - 1) for k in range(nd)]
            return (0,), ("IndexError", "shape mismatch: indexing arrays could not be broadcast together with shapes "
                          + "".join(_numpy_shape_text(p) + " " for p in parts))
    return tuple(out), None


def gather_index_error(rule: ShapeRule, shape: tuple[int, ...], indices: Any, axis: int) -> str | None:
    """NumPy's IndexError message for the first index (in C order) outside [-n, n), n the length
    of the axis, where NumPy checks them (take: when a.shape[:axis] is not empty; take_along_axis:
    when out is not empty), or None. For shapes and an axis gather_shape accepts."""
    shape = tuple(int(s) for s in shape) or ((1,) if rule.kind in ("take", "index_select") else ())
    idx = np.asarray(indices)
    ax = int(axis) % len(shape)
    n = shape[ax]
    if rule.kind == "index_select":  # torch checks every index, whatever the result's size
        flat = idx.reshape(-1)
        return "index out of range in self" if np.any((flat < 0) | (flat >= n)) else None
    if rule.kind == "take":
        if int(np.prod(shape[:ax], dtype=np.int64)) == 0:
            return None
    else:
        out, err = gather_shape(rule, shape, idx.shape, axis)
        if err is not None or int(np.prod(out, dtype=np.int64)) == 0:
            return None
    flat = idx.reshape(-1)
    bad = np.flatnonzero((flat < -n) | (flat >= n))
    if not bad.size:
        return None
    return f"index {int(flat[bad[0]])} is out of bounds for axis {ax} with size {n}"


def topk_shape(shape: tuple[int, ...], axis: int, k: int) -> tuple[tuple[int, ...], str | None]:
    """torch.topk's result shape and, for arguments torch rejects (IndexError, its words), why: then
    the shape is (0,). A 0-d tensor has one axis (0 or -1) of length 1, and its result stays 0-d."""
    nd = max(len(shape), 1)
    if not -nd <= axis < nd:
        return (0,), f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {axis})"
    n = shape[axis % nd] if shape else 1
    if not 0 <= k <= n:
        return (0,), "selected index k out of range"
    if not shape:
        return (), None
    out = list(shape)
    out[axis % nd] = k
    return tuple(out), None


JOIN = ("concatenate", "stack")


def join_shape(rule: ShapeRule, shapes: list[tuple[int, ...]], axis: int) -> tuple[tuple[int, ...], str | None]:
    """(out's shape, None) where numpy.concatenate (numpy.stack) accepts elements of these shapes
    and this axis, else ((0,), NumPy's message): every error is a ValueError (NumPy's AxisError is
    one), checked in NumPy's order; the C++ and Rust shims check the same in the same words."""
    shapes = [tuple(int(d) for d in s) for s in shapes]
    axis = int(axis)
    if rule.kind == "stack":
        if not shapes:
            return (0,), "need at least one array to stack"
        if len(set(shapes)) != 1:
            return (0,), "all input arrays must have the same shape"
        nd = len(shapes[0]) + 1
        if not -nd <= axis < nd:
            return (0,), f"axis {axis} is out of bounds for array of dimension {nd}"
        if nd > MAX_DIMS:
            return (0,), "the result has more dims than an opgen tensor holds (8)"
        ax = axis % nd
        return shapes[0][:ax] + (len(shapes),) + shapes[0][ax:], None
    if not shapes:
        return (0,), "need at least one array to concatenate"
    first = shapes[0]
    nd = len(first)
    if nd == 0:
        return (0,), "zero-dimensional arrays cannot be concatenated"
    if not -nd <= axis < nd:
        return (0,), f"axis {axis} is out of bounds for array of dimension {nd}"
    ax = axis % nd
    total = 0
    for i, s in enumerate(shapes):
        if len(s) != nd:
            return (0,), (f"all the input arrays must have same number of dimensions, but the array at index 0 has "
                          f"{nd} dimension(s) and the array at index {i} has {len(s)} dimension(s)")
        for d in range(nd):
            if d != ax and s[d] != first[d]:
                return (0,), (f"all the input array dimensions except for the concatenation axis must match exactly, "
                              f"but along dimension {d}, the array at index 0 has size {first[d]} and the array at "
                              f"index {i} has size {s[d]}")
        total += s[ax]
    return first[:ax] + (total,) + first[ax + 1:], None


# A bounded rule kind (its first dim's length is known only when the kernel has run) and the kind
# of the rule of the 0-d int64 result that reports that length.
BOUNDED = {"boolean_mask": "count_of"}


def boolean_mask_shape(shape: tuple[int, ...], mask: tuple[int, ...]) -> tuple[tuple[int, ...], str | None]:
    """(the bound of x[mask]'s shape, None) where NumPy accepts a bool mask of shape ``mask`` for an
    array of shape ``shape``, else ((0,), NumPy's IndexError message); the C++ and Rust shims check
    the same in the same order and words."""
    if len(mask) > len(shape):
        return (0,), (f"too many indices for array: array is {len(shape)}-dimensional, but {len(mask)} "
                      "were indexed")
    for i, (n, m) in enumerate(zip(shape, mask)):
        if n != m and not (n == 1 and m == 0):  # NumPy lets an empty mask dim stand against a dim of 1
            return (0,), (f"boolean index did not match indexed array along axis {i}; size of axis is {n} but "
                          f"size of corresponding boolean axis is {m}")
    return (int(np.prod(mask, dtype=np.int64)),) + tuple(shape[len(mask):]), None


def assign_region_shape(shape: tuple[int, ...], value: tuple[int, ...], starts: Any,
                        steps: Any) -> tuple[tuple[int, ...], str | None]:
    """(out's shape, None) where x[region] = value (assign_region) accepts the region, else (out's
    shape, why not: the shim's ValueError message). out's shape is x's either way (the caller
    allocates it from the shapes alone). Rejected: value of another rank than x, starts or steps of
    another length than x's rank, a step of 0 (along any dim), or, along a dim where value's count is
    not 0, a first (start) or last (start + (count - 1) * step) position outside [0, x's length). The
    C++ and Rust shims check the same in the same order and words, without overflow (Python's ints
    are exact; the shims check each product and sum)."""
    shape, value = tuple(int(d) for d in shape), tuple(int(d) for d in value)
    starts, steps = [int(s) for s in starts], [int(s) for s in steps]
    nd = len(shape)
    if len(value) != nd:
        return shape, f"assign_region: value has {len(value)} dims but x has {nd} (a region of x has x's rank)"
    if len(starts) != nd:
        return shape, f"assign_region: starts has {len(starts)} entries but x has {nd} dims"
    if len(steps) != nd:
        return shape, f"assign_region: steps has {len(steps)} entries but x has {nd} dims"
    for d in range(nd):
        start, step, count, n = starts[d], steps[d], value[d], shape[d]
        if step == 0:
            return shape, f"assign_region: the step along dim {d} is 0"
        if count and not (0 <= start < n and 0 <= start + (count - 1) * step < n):
            return shape, (f"assign_region: the region along dim {d} (start {start}, step {step}, count {count}) "
                           f"reaches outside x's length {n}")
    return shape, None


DOT_TERMS = "k"  # the name a tolerance's ``terms`` gives a dot rule's contracted length


def dot_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], str | None]:
    """(out's shape, None) where numpy.dot accepts operands of shapes ``a`` and ``b``, else ((0,), why
    not: NumPy's ValueError message, or opgen's for a result of more than 8 dims). A 0-d operand
    multiplies elementwise (out has the other's shape); otherwise a's last dim is contracted with b's
    second-to-last (its only one when b is 1-D): out is a.shape[:-1] + b.shape[:-2] + b.shape[-1:].
    The reference and the C++ and Rust shims check the same in the same order and words."""
    a, b = tuple(int(d) for d in a), tuple(int(d) for d in b)
    if not a or not b:
        return (b if not a else a), None
    at = len(b) - 2 if len(b) >= 2 else 0  # b's contracted dim
    if a[-1] != b[at]:
        return (0,), (f"shapes {_numpy_shape_text(a)} and {_numpy_shape_text(b)} not aligned: {a[-1]} (dim "
                      f"{len(a) - 1}) != {b[at]} (dim {at})")
    out = a[:-1] + b[:-2] + b[-1:] if len(b) >= 2 else a[:-1]
    if len(out) > MAX_DIMS:
        return (0,), "the result has more dims than an opgen tensor holds (8)"
    return out, None


def dot_terms(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """The number of products each element of numpy.dot(a, b) sums: a's last dim, or 1 where an operand is 0-d."""
    return int(a[-1]) if len(a) and len(b) else 1


def normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for {ndim} dims")
    return axis % ndim


def parse_shape_rule(raw: Any, tensor_params: list[str], int_params: list[str],
                     bool_params: list[str] | None = None, int_list_params: list[str] | None = None,
                     str_params: list[str] | None = None,
                     tensor_list_params: list[str] | None = None,
                     float_params: list[str] | None = None) -> ShapeRule:
    """Parse the spec's ``shape:`` value; errors say which form is expected. ``bool_params``: the
    signature's bool parameters (a reduce rule's ``keepdims`` must name one)."""
    if raw == "elementwise":
        return ShapeRule("elementwise")
    if isinstance(raw, str):
        m = _GUFUNC.match(raw)
        if not m:
            raise ShapeRuleError(
                f"shape {raw!r} is neither 'elementwise' nor a gufunc signature like '(m,k),(k,n)->(m,n)'"
            )
        flexible = tuple(dict.fromkeys(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\?", raw)))
        bare = re.sub(r"\s*\?", "", raw)
        m = _GUFUNC.match(bare)
        ins = tuple(_core(c) for c in re.findall(r"\([^()]*\)", m.group(1)))
        out = _core(m.group(2), output=True)
        _check_flexible(raw, flexible, ins, out)
        if len(ins) != len(tensor_params):
            raise ShapeRuleError(
                f"gufunc {raw!r} names {len(ins)} inputs but the signature has {len(tensor_params)} tensor parameters"
            )
        known = {d for c in ins for d in c}
        if missing := [d for d in out if d not in known and d != KEPT_DIM]:
            raise ShapeRuleError(f"output dims {missing} of {raw!r} appear in no input")
        return ShapeRule("gufunc", gufunc=bare.strip(), inputs_core=ins, output_core=out, flexible=flexible)
    if isinstance(raw, dict) and set(raw) == {"same_as"}:
        _need(raw["same_as"], tensor_params, "same_as", "tensor")
        return ShapeRule("same_as", source=raw["same_as"])
    if isinstance(raw, dict) and set(raw) in ({"reduce", "axis"}, {"reduce", "axis", "keepdims"}):
        _need(raw["reduce"], tensor_params, "reduce", "tensor")
        _need(raw["axis"], int_params, "axis", "int")
        if "keepdims" in raw:
            _need(raw["keepdims"], bool_params or [], "keepdims", "bool")
        return ShapeRule("reduce", source=raw["reduce"], axis=raw["axis"], keepdims=raw.get("keepdims"))
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
    if isinstance(raw, dict) and "pool" in raw and {"pool", "kernel", "stride", "padding"} <= set(raw) <= {
            "pool", "kernel", "stride", "padding", "dilation", "ceil_mode", "check_input_size"}:
        _need(raw["pool"], tensor_params, "pool", "tensor")
        kernel = raw["kernel"]
        if not isinstance(kernel, list) or not 1 <= len(kernel) <= 3:
            raise ShapeRuleError("pool kernel: give one int parameter a pooled dim, 1 to 3 of them, "
                                 "e.g. [kernel] or [kernel_d, kernel_h, kernel_w]")
        n = len(kernel)
        lists = {}
        for key in ("kernel", "stride", "padding", "dilation"):
            if key not in raw:
                continue
            names = raw[key]
            if not isinstance(names, list) or len(names) != n:
                raise ShapeRuleError(f"pool {key}: give {n} int parameters, one a pooled dim as the kernel has")
            for name in names:
                _need(name, int_params, key, "int")
            lists[key] = tuple(names)
        if "ceil_mode" in raw:
            _need(raw["ceil_mode"], bool_params or [], "ceil_mode", "bool")
        if not isinstance(raw.get("check_input_size", False), bool):
            raise ShapeRuleError("pool check_input_size: true or false (true: the unpadded input must be at least "
                                 "the kernel in every pooled dim, as torch's avg_pool3d checks)")
        return ShapeRule("pool", source=raw["pool"], pool=lists["kernel"] + lists["stride"] + lists["padding"],
                         dilation=lists.get("dilation", ()), ceil_mode=raw.get("ceil_mode"),
                         check_input_size=raw.get("check_input_size", False))
    if isinstance(raw, dict) and set(raw) == {"topk", "axis", "k"}:
        _need(raw["topk"], tensor_params, "topk", "tensor")
        _need(raw["axis"], int_params, "axis", "int")
        _need(raw["k"], int_params, "k", "int")
        return ShapeRule("topk", source=raw["topk"], axis=raw["axis"], k=raw["k"])
    for kind in JOIN:
        if isinstance(raw, dict) and set(raw) == {kind, "axis"}:
            _need(raw[kind], tensor_list_params or [], kind, "list[tensor[...]]")
            _need(raw["axis"], int_params, "axis", "int")
            if tensor_params:  # the elements' shapes relate only to each other
                raise ShapeRuleError(f"{kind}: the signature's tensors are the list {raw[kind]!r}'s elements; "
                                     f"it takes no other tensor (has {tensor_params})")
            return ShapeRule(kind, source=raw[kind], axis=raw["axis"])
    for kind in GATHER:
        if isinstance(raw, dict) and set(raw) == {kind, "indices", "axis"}:
            _need(raw[kind], tensor_params, kind, "tensor")
            _need(raw["indices"], tensor_params, "indices", "tensor")
            if raw["indices"] == raw[kind]:
                raise ShapeRuleError(f"{kind}: indices must be another tensor parameter than {raw[kind]!r}")
            _need(raw["axis"], int_params, "axis", "int")
            return ShapeRule(kind, source=raw[kind], indices=raw["indices"], axis=raw["axis"])
    if isinstance(raw, dict) and set(raw) == {"boolean_mask", "mask"}:
        _need(raw["boolean_mask"], tensor_params, "boolean_mask", "tensor")
        _need(raw["mask"], tensor_params, "mask", "tensor")
        if raw["mask"] == raw["boolean_mask"]:
            raise ShapeRuleError(f"boolean_mask: mask must be another tensor parameter than {raw['mask']!r}")
        return ShapeRule("boolean_mask", source=raw["boolean_mask"], indices=raw["mask"])
    if isinstance(raw, dict) and set(raw) == {"sized"}:
        _need(raw["sized"], int_list_params or [], "sized", "list[int]")
        if tensor_params:
            raise ShapeRuleError(f"sized: out's shape is the list {raw['sized']!r} alone; the signature takes no "
                                 f"tensor (has {tensor_params}); an array shaped like another is {{same_as: <tensor>}}")
        return ShapeRule("sized", dims=raw["sized"])
    if isinstance(raw, dict) and set(raw) == {"arange"}:
        names = raw["arange"]
        if not isinstance(names, list) or len(names) != 3:
            raise ShapeRuleError("arange: give the three parameters [start, stop, step], e.g. {arange: [start, stop, step]}")
        ints, floats = int_params, float_params or []
        if not (all(n in ints for n in names) or all(n in floats for n in names)):
            raise ShapeRuleError(f"arange: {names!r} must all be int parameters or all float parameters of the "
                                 f"signature (int: {ints}; float: {floats})")
        if tensor_params:
            raise ShapeRuleError(f"arange: out's length follows from {names!r} alone; the signature takes no tensor "
                                 f"(has {tensor_params})")
        return ShapeRule("arange", bounds=tuple(names))
    if isinstance(raw, dict) and set(raw) == {"masked_fill", "mask"}:
        _need(raw["masked_fill"], tensor_params, "masked_fill", "tensor")
        _need(raw["mask"], tensor_params, "mask", "tensor")
        if raw["mask"] == raw["masked_fill"]:
            raise ShapeRuleError(f"masked_fill: mask must be another tensor parameter than {raw['mask']!r}")
        return ShapeRule("masked_fill", source=raw["masked_fill"], indices=raw["mask"])
    if isinstance(raw, dict) and set(raw) == {"assign_region", "value", "starts", "steps"}:
        _need(raw["assign_region"], tensor_params, "assign_region", "tensor")
        _need(raw["value"], tensor_params, "value", "tensor")
        if raw["value"] == raw["assign_region"]:
            raise ShapeRuleError(f"assign_region: value must be another tensor parameter than {raw['value']!r}")
        _need(raw["starts"], int_list_params or [], "starts", "list[int]")
        _need(raw["steps"], int_list_params or [], "steps", "list[int]")
        if raw["starts"] == raw["steps"]:
            raise ShapeRuleError(f"assign_region: steps must be another list[int] parameter than {raw['starts']!r}")
        return ShapeRule("assign_region", source=raw["assign_region"], indices=raw["value"],
                         region=(raw["starts"], raw["steps"]))
    if isinstance(raw, dict) and set(raw) == {"dot"}:
        pair = raw["dot"]
        if not isinstance(pair, list) or len(pair) != 2:
            raise ShapeRuleError("dot: give the two tensor parameters [a, b], e.g. {dot: [a, b]}")
        for name in pair:
            _need(name, tensor_params, "dot", "tensor")
        if pair[0] == pair[1]:
            raise ShapeRuleError(f"dot: b must be another tensor parameter than {pair[0]!r}")
        if len(tensor_params) != 2:
            raise ShapeRuleError(f"dot: the signature takes the two tensors a and b only (has {tensor_params})")
        return ShapeRule("dot", source=pair[0], indices=pair[1])
    if isinstance(raw, dict) and set(raw) == {"count_of"}:
        _need(raw["count_of"], tensor_params, "count_of", "tensor")
        return ShapeRule("count_of", source=raw["count_of"])
    if isinstance(raw, dict) and set(raw) == {"pad", "widths", "mode"}:
        _need(raw["pad"], tensor_params, "pad", "tensor")
        _need(raw["widths"], int_list_params or [], "widths", "list[int]")
        _need(raw["mode"], str_params or [], "mode", "str")
        return ShapeRule("pad", source=raw["pad"], dims=raw["widths"], mode=raw["mode"])
    for kind, key, what in (("permute", "axes", "list[int]"), ("reshape", "shape", "list[int]"),
                            ("torch_pad", "pad", "list[int]"),
                            ("broadcast_to", "shape", "list[int]"), ("tile", "reps", "list[int]"),
                            ("expand_dims", "axis", "int"), ("squeeze", "axis", "int")):
        if isinstance(raw, dict) and set(raw) == {kind, key}:
            _need(raw[kind], tensor_params, kind, "tensor")
            _need(raw[key], (int_list_params or []) if what == "list[int]" else int_params, key, what)
            if what == "int":
                return ShapeRule(kind, source=raw[kind], axis=raw[key])
            return ShapeRule(kind, source=raw[kind], dims=raw[key])
    raise ShapeRuleError(
        "shape must be 'elementwise', a gufunc string like '(m,k),(k,n)->(m,n)', "
        "{same_as: <tensor param>}, {sized: <list[int] param>}, {arange: [<start>, <stop>, <step>]} (int or float "
        "params), {reduce: <tensor param>, axis: <int param>} (optionally with "
        "keepdims: <bool param>), {permute: <tensor param>, axes: <list[int] param>}, "
        "{reshape: <tensor param>, shape: <list[int] param>}, {expand_dims: <tensor param>, axis: <int param>}, "
        "{squeeze: <tensor param>, axis: <int param>}, {topk: <tensor param>, axis: <int param>, k: <int param>}, "
        "{broadcast_to: <tensor param>, shape: <list[int] param>}, "
        "{tile: <tensor param>, reps: <list[int] param>}, {torch_pad: <tensor param>, pad: <list[int] param>}, "
        "{pad: <tensor param>, widths: <list[int] param>, mode: <str param>}, "
        "{concatenate: <list[tensor] param>, axis: <int param>}, {stack: <list[tensor] param>, axis: <int param>}, "
        "{boolean_mask: <tensor param>, mask: <bool tensor param>} with {count_of: <bool tensor param>}, "
        "{masked_fill: <tensor param>, mask: <bool tensor param>}, "
        "{assign_region: <tensor param>, value: <tensor param>, starts: <list[int] param>, steps: <list[int] param>}, "
        "{dot: [<tensor param>, <tensor param>]}, "
        "{pool: <tensor param>, kernel: [<int>...], stride: [<int>...], padding: [<int>...]} (optionally with "
        "dilation: [<int>...] and ceil_mode: <bool param>) or "
        "{pool2d: <tensor param>, kernel: [<int>, <int>], stride: [<int>, <int>], padding: [<int>, <int>]}"
    )


def _check_flexible(raw: str, flexible: tuple[str, ...], ins: tuple[tuple[str, ...], ...], out: tuple[str, ...]) -> None:
    """NumPy's rules for "?" dims: marked at every appearance, at the start or end of an input's
    core beside a fixed dim, and each in one input only (that input's rank decides it)."""
    if not flexible:
        return
    marked = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\??)", raw)
    for name in flexible:
        if any(d == name and not q for d, q in marked):
            raise ShapeRuleError(f"gufunc {raw!r}: {name} is flexible ({name}?) in one place, so mark it so everywhere")
        holders = [core for core in ins if name in core]
        if len(holders) != 1:
            raise ShapeRuleError(f"gufunc {raw!r}: the flexible dim {name}? must belong to exactly one input")
        core = holders[0]
        if len(core) < 2 or name not in (core[0], core[-1]) or all(d in flexible for d in core):
            raise ShapeRuleError(f"gufunc {raw!r}: a flexible dim stands first or last in an input's core, beside "
                                 "a fixed one, as in matmul's (m?,k),(k,n?)->(m?,n?)")
        if name not in out:
            raise ShapeRuleError(f"gufunc {raw!r}: the flexible dim {name}? must appear in the output")


# An output core dim written "1": a dim of size 1 (a kept reduced dim, as torch.native_layer_norm's
# mean and rstd of shape (*, 1)). Inputs' core dims are names only.
KEPT_DIM = "1"


def _core(text: str, *, output: bool = False) -> tuple[str, ...]:
    inner = text.strip()[1:-1]
    dims = tuple(d.strip() for d in inner.split(",") if d.strip())
    for d in dims:
        if not (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d) or (output and d == KEPT_DIM)):
            raise ShapeRuleError(f"core dimension {d!r} must be a name (fixed sizes are not supported"
                                 + (", except 1 in the output: a kept dim of size 1)" if output else ")"))
    return dims


def _need(name: Any, allowed: list[str], key: str, kind: str) -> None:
    if name not in allowed:
        raise ShapeRuleError(f"{key}: {name!r} is not a {kind} parameter of the signature (have: {allowed})")
