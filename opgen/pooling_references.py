"""References of the 2-D pooling ops (torch.nn.functional.avg_pool2d / max_pool2d with
ceil_mode=False, count_include_pad=True, dilation 1, no indices) on opgen's native signature:
an input of shape (*, H, W) (every leading dim a plane; torch takes (C, H, W) or
(N, C, H, W), whose planes are pooled alike) and the kernel, stride and padding as ints.

Arguments torch rejects are a ValueError here, on exactly the conditions of
``opgen.spec.shapes.pool2d_error``, which the generated shims check in the same words.
"""

from __future__ import annotations

import numpy as np

from opgen.spec.shapes import pool2d_error


def _pool(fn_name: str, x: np.ndarray, kh: int, kw: int, sh: int, sw: int, ph: int, pw: int) -> np.ndarray:
    # torch (seconds to import) only in the references that use it: numpy ones must not wait for it
    import torch

    x = np.asarray(x)
    if (why := pool2d_error(x.shape, kh, kw, sh, sw, ph, pw)) is not None:
        raise ValueError(why)
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    planes = torch.from_numpy(np.ascontiguousarray(x)).reshape(-1, 1, h, w)
    fn = getattr(torch.nn.functional, fn_name)
    out = fn(planes, kernel_size=(kh, kw), stride=(sh, sw), padding=(ph, pw))
    return out.reshape(lead + tuple(out.shape[-2:])).numpy()


def avg_pool2d(input: np.ndarray, kernel_h: int, kernel_w: int, stride_h: int, stride_w: int, pad_h: int,
               pad_w: int) -> np.ndarray:
    """torch.nn.functional.avg_pool2d(x, (kh, kw), (sh, sw), (ph, pw)): the window's sum over
    kh * kw (padding counts as zeros in the divisor, count_include_pad=True)."""
    return _pool("avg_pool2d", input, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w)


def max_pool2d(input: np.ndarray, kernel_h: int, kernel_w: int, stride_h: int, stride_w: int, pad_h: int,
               pad_w: int) -> np.ndarray:
    """torch.nn.functional.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw)): the window's maximum over
    the input elements it covers (padding never wins); a nan in the window gives nan."""
    return _pool("max_pool2d", input, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w)
