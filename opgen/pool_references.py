"""References of the pooling ops with torch's options (torch.nn.functional.max_pool1d, max_pool3d
and max_pool2d's f32_options overload with dilation and ceil_mode; avg_pool1d, avg_pool3d and
avg_pool2d's f32_options with ceil_mode and count_include_pad), on opgen's native signature: an
input of shape (*, L), (*, H, W) or (*, D, H, W), every leading dim a plane (torch takes (C, L) /
(N, C, L), (C, H, W) / (N, C, H, W) and (C, D, H, W) / (N, C, D, H, W), whose planes are pooled
alike), and the kernel, stride, padding and dilation as ints, one a pooled dim. (The plain 2-D
overloads, floor mode without dilation, have theirs in ``opgen.pooling_references``.)

The references are torch's own functions evaluated in float64 and rounded once to the input's
dtype (a maximum is exact either way; an average is then correctly rounded up to float64's
error). Arguments torch rejects are a ValueError here, on exactly the conditions of
``opgen.spec.shapes.pool_error``, which the generated shims check in the same words (torch raises
RuntimeError; the specs declare ValueError, as the 2-D ones do).

``torch_*`` are torch's own float32 evaluations, for ``opgen bench`` to time against.
"""

from __future__ import annotations

import numpy as np

from opgen.spec.shapes import pool_error, pool_shape


def _pool(fn_name: str, x: np.ndarray, kernel: list[int], stride: list[int], padding: list[int],
          dilation: list[int] | None, ceil_mode: bool, count_include_pad: bool | None, exact: bool) -> np.ndarray:
    x = np.asarray(x)
    n = len(kernel)
    ceil_mode = bool(ceil_mode)
    check = fn_name == "avg_pool3d"  # torch's avg_pool3d also wants the unpadded input >= the kernel
    if (why := pool_error(x.shape, kernel, stride, padding, dilation, ceil_mode, check)) is not None:
        raise ValueError(why)
    out_shape = pool_shape(x.shape, kernel, stride, padding, dilation, ceil_mode, check)
    if int(np.prod(out_shape, dtype=np.int64)) == 0:  # no planes: torch's checks differ by op on these
        return np.empty(out_shape, dtype=x.dtype)
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    data = x.astype(np.float64) if exact else np.ascontiguousarray(x)
    planes = torch.from_numpy(np.ascontiguousarray(data)).reshape((-1, 1) + x.shape[x.ndim - n:])
    kw = {"kernel_size": tuple(kernel), "stride": tuple(stride), "padding": tuple(padding), "ceil_mode": ceil_mode}
    if dilation is not None:
        kw["dilation"] = tuple(dilation)
    if count_include_pad is not None:
        kw["count_include_pad"] = bool(count_include_pad)
    out = getattr(torch.nn.functional, fn_name)(planes, **kw)
    return out.reshape(out_shape).numpy().astype(x.dtype)


def max_pool1d(input: np.ndarray, kernel: int, stride: int, padding: int, dilation: int = 1,
               ceil_mode: bool = False) -> np.ndarray:
    """torch.nn.functional.max_pool1d(x, kernel, stride, padding, dilation, ceil_mode): the largest
    element the dilated window covers (padding never wins; a window wholly in the padding, which
    dilation allows, gives -inf); a nan in the window gives nan."""
    return _pool("max_pool1d", input, [kernel], [stride], [padding], [dilation], ceil_mode, None, True)


def max_pool3d(input: np.ndarray, kernel_d: int, kernel_h: int, kernel_w: int, stride_d: int, stride_h: int,
               stride_w: int, pad_d: int, pad_h: int, pad_w: int, dilation_d: int = 1, dilation_h: int = 1,
               dilation_w: int = 1, ceil_mode: bool = False) -> np.ndarray:
    """torch.nn.functional.max_pool3d with per-dim kernel, stride, padding and dilation."""
    return _pool("max_pool3d", input, [kernel_d, kernel_h, kernel_w], [stride_d, stride_h, stride_w],
                 [pad_d, pad_h, pad_w], [dilation_d, dilation_h, dilation_w], ceil_mode, None, True)


def max_pool2d(input: np.ndarray, kernel_h: int, kernel_w: int, stride_h: int, stride_w: int, pad_h: int,
               pad_w: int, dilation_h: int = 1, dilation_w: int = 1, ceil_mode: bool = False) -> np.ndarray:
    """torch.nn.functional.max_pool2d with per-dim kernel, stride, padding and dilation, and ceil_mode."""
    return _pool("max_pool2d", input, [kernel_h, kernel_w], [stride_h, stride_w], [pad_h, pad_w],
                 [dilation_h, dilation_w], ceil_mode, None, True)


def avg_pool1d(input: np.ndarray, kernel: int, stride: int, padding: int, ceil_mode: bool = False,
               count_include_pad: bool = True) -> np.ndarray:
    """torch.nn.functional.avg_pool1d(x, kernel, stride, padding, ceil_mode, count_include_pad): the
    window's sum over its size clipped to the padded input (count_include_pad) or to the input."""
    return _pool("avg_pool1d", input, [kernel], [stride], [padding], None, ceil_mode, count_include_pad, True)


def avg_pool2d(input: np.ndarray, kernel_h: int, kernel_w: int, stride_h: int, stride_w: int, pad_h: int,
               pad_w: int, ceil_mode: bool = False, count_include_pad: bool = True) -> np.ndarray:
    """torch.nn.functional.avg_pool2d with per-dim kernel, stride and padding, ceil_mode and
    count_include_pad (no divisor_override, as the 1-D and 3-D ops)."""
    return _pool("avg_pool2d", input, [kernel_h, kernel_w], [stride_h, stride_w], [pad_h, pad_w], None, ceil_mode,
                 count_include_pad, True)


def avg_pool3d(input: np.ndarray, kernel_d: int, kernel_h: int, kernel_w: int, stride_d: int, stride_h: int,
               stride_w: int, pad_d: int, pad_h: int, pad_w: int, ceil_mode: bool = False,
               count_include_pad: bool = True) -> np.ndarray:
    """torch.nn.functional.avg_pool3d with per-dim kernel, stride and padding."""
    return _pool("avg_pool3d", input, [kernel_d, kernel_h, kernel_w], [stride_d, stride_h, stride_w],
                 [pad_d, pad_h, pad_w], None, ceil_mode, count_include_pad, True)


def torch_max_pool1d(input, kernel, stride, padding, dilation=1, ceil_mode=False):
    return _pool("max_pool1d", input, [kernel], [stride], [padding], [dilation], ceil_mode, None, False)


def torch_max_pool3d(input, kernel_d, kernel_h, kernel_w, stride_d, stride_h, stride_w, pad_d, pad_h, pad_w,
                     dilation_d=1, dilation_h=1, dilation_w=1, ceil_mode=False):
    return _pool("max_pool3d", input, [kernel_d, kernel_h, kernel_w], [stride_d, stride_h, stride_w],
                 [pad_d, pad_h, pad_w], [dilation_d, dilation_h, dilation_w], ceil_mode, None, False)


def torch_max_pool2d(input, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h=1, dilation_w=1,
                     ceil_mode=False):
    return _pool("max_pool2d", input, [kernel_h, kernel_w], [stride_h, stride_w], [pad_h, pad_w],
                 [dilation_h, dilation_w], ceil_mode, None, False)


def torch_avg_pool1d(input, kernel, stride, padding, ceil_mode=False, count_include_pad=True):
    return _pool("avg_pool1d", input, [kernel], [stride], [padding], None, ceil_mode, count_include_pad, False)


def torch_avg_pool3d(input, kernel_d, kernel_h, kernel_w, stride_d, stride_h, stride_w, pad_d, pad_h, pad_w,
                     ceil_mode=False, count_include_pad=True):
    return _pool("avg_pool3d", input, [kernel_d, kernel_h, kernel_w], [stride_d, stride_h, stride_w],
                 [pad_d, pad_h, pad_w], None, ceil_mode, count_include_pad, False)


def torch_avg_pool2d(input, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, ceil_mode=False,
                     count_include_pad=True):
    return _pool("avg_pool2d", input, [kernel_h, kernel_w], [stride_h, stride_w], [pad_h, pad_w], None, ceil_mode,
                 count_include_pad, False)


def _taps(n: int, k: int, s: int, p: int, d: int, o: int, include_pad: bool) -> tuple[np.ndarray, np.ndarray]:
    """One pooled dim of a dilated window: the input index of each tap (o, k), clipped into the
    input, and whether the tap is an input element (it is summed) and whether it counts in the
    divisor (inside the padded input [-p, n + p) with count_include_pad, else inside the input)."""
    pos = np.arange(o)[:, None] * s - p + np.arange(k)[None, :] * d
    inside = (pos >= 0) & (pos < n)
    counted = (pos < n + p) if include_pad else inside
    return np.clip(pos, 0, n - 1), inside, counted


def avg_pool3d_dilated(input: np.ndarray, kernel_d: int, kernel_h: int, kernel_w: int, stride_d: int,
                       stride_h: int, stride_w: int, pad_d: int, pad_h: int, pad_w: int, dilation_d: int = 1,
                       dilation_h: int = 1, dilation_w: int = 1, ceil_mode: bool = False,
                       count_include_pad: bool = True) -> np.ndarray:
    """opgen.nn.avg_pool3d_dilated in NumPy (torch has no dilated average pool): each dilated
    window's sum in float64 over the product of the per-dim counts of the taps that count, rounded
    once to the input's dtype. The window is a product of per-dim tap sets, so the sum is taken one
    pooled dim at a time (W, then H, then D), the taps outside the input contributing 0."""
    x = np.asarray(input)
    kernel, stride = [kernel_d, kernel_h, kernel_w], [stride_d, stride_h, stride_w]
    padding, dilation = [pad_d, pad_h, pad_w], [dilation_d, dilation_h, dilation_w]
    if (why := pool_error(x.shape, kernel, stride, padding, dilation, bool(ceil_mode))) is not None:
        raise ValueError(why)
    out_shape = pool_shape(x.shape, kernel, stride, padding, dilation, bool(ceil_mode))
    acc = x.astype(np.float64)
    divisor = np.ones(out_shape[-3:], dtype=np.float64)
    for axis in (-1, -2, -3):
        n, o = x.shape[axis], out_shape[axis]
        index, inside, counted = _taps(n, kernel[axis], stride[axis], padding[axis], dilation[axis], o,
                                       bool(count_include_pad))
        gathered = np.take(acc, index, axis=axis)  # the pooled dim becomes (o, k), the taps at ``axis``
        mask = inside.reshape(inside.shape + (1,) * (-axis - 1))
        # np.where, not a product with the mask: a tap outside the input must not turn inf into nan
        acc = np.where(mask, gathered, 0.0).sum(axis=axis)
        shape = [1, 1, 1]
        shape[axis] = o
        divisor = divisor * counted.sum(axis=1).reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (acc / divisor).astype(x.dtype).reshape(out_shape)


def torch_avg_pool3d_undilated(input, kernel_d, kernel_h, kernel_w, stride_d, stride_h, stride_w, pad_d, pad_h,
                               pad_w, dilation_d=1, dilation_h=1, dilation_w=1, ceil_mode=False,
                               count_include_pad=True):
    """torch's float32 avg_pool3d, for timing opgen.nn.avg_pool3d_dilated where every dilation is 1
    (torch has no dilated average pool)."""
    if (dilation_d, dilation_h, dilation_w) != (1, 1, 1):
        raise ValueError("torch's avg_pool3d has no dilation: time a bench whose dilations are all 1")
    return torch_avg_pool3d(input, kernel_d, kernel_h, kernel_w, stride_d, stride_h, stride_w, pad_d, pad_h, pad_w,
                            ceil_mode, count_include_pad)
