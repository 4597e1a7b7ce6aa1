"""opgen.nn.avg_pool3d_dilated, opgen's own dilated average pool (ONNX AveragePool's dilations;
torch's avg pools have none): its NumPy reference and the admitted C++ and Rust kernels against
ONNX's reference pool (onnx.reference's op_pool_common) on dilated windows, with and without
count_include_pad and ceil mode, against torch's avg_pool3d where every dilation is 1, and on the
edges the gate draws rarely: dilated windows wholly in the padding (0, or nan without
count_include_pad), a 2-d pool as the 3-d pool of a view with a size-1 pooled dim in front."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from onnx.reference.ops.op_pool_common import get_output_shape_explicit_padding, pool

from opgen.pool_references import avg_pool3d_dilated
from tests.registry_kernels import verified_kernels

OP = "opgen.nn.avg_pool3d_dilated"
TARGETS = ("cpu-cpp", "cpu-rust")


def _onnx(x: np.ndarray, kernel, stride, pads, dilation, ceil: bool, cip: bool) -> np.ndarray:
    """ONNX's reference AveragePool on X (N, C, D, H, W) with explicit pads (begin..., end...)."""
    spatial = x.shape[2:]
    out_shape, extra = get_output_shape_explicit_padding(pads, spatial, kernel, stride, dilation, ceil)
    n = len(spatial)
    padded = np.pad(x, [(0, 0), (0, 0)] + [(extra[i], extra[n + i]) for i in range(n)],
                    constant_values=0 if cip else np.nan)
    return pool(padded, x.shape, kernel, stride, out_shape, "AVG", pads_required=extra, pads=pads,
                dilations=dilation, count_include_pad=int(cip))


# (D, H, W), kernel, stride, padding (symmetric), dilation, ceil_mode: ceil overhang with
# dilation, stride past the dilated kernel, one dim undilated, ONNX's dilations_small shape
CASES = [((4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (2, 2, 2), True),
         ((9, 8, 10), (3, 2, 3), (3, 2, 3), (1, 1, 0), (2, 3, 2), True),
         ((7, 9, 6), (2, 3, 2), (2, 1, 2), (1, 1, 1), (3, 2, 1), False),
         ((12, 12, 12), (5, 5, 5), (3, 3, 3), (0, 0, 0), (2, 2, 2), True),
         ((5, 6, 11), (1, 3, 2), (1, 2, 4), (0, 1, 1), (1, 1, 3), True)]


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels([(OP, "f32")], TARGETS)


@pytest.mark.parametrize("case", CASES)
def test_reference_is_onnx_s_average_pool(case):
    shape, k, s, p, d, ceil = case
    x = np.random.default_rng(1).standard_normal((1, 2) + shape).astype(np.float32)
    for cip in (True, False):
        ref = avg_pool3d_dilated(x, *k, *s, *p, *d, ceil, cip)
        np.testing.assert_allclose(ref, _onnx(x, k, s, list(p) * 2, d, ceil, cip), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_against_onnx_and_torch(kernels, target):
    _, _, kernel = kernels[(OP, "f32", target)]
    rng = np.random.default_rng(4)
    for shape, k, s, p, d, ceil in CASES:
        x = rng.standard_normal((1, 2) + shape).astype(np.float32)
        strided = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), np.float32)
        strided[..., ::2] = x
        for cip in (True, False):
            want = _onnx(x, k, s, list(p) * 2, d, ceil, cip)
            for xv in (x, strided[..., ::2], np.ascontiguousarray(x.swapaxes(-1, -3)).swapaxes(-1, -3)):
                got = kernel([xv, *k, *s, *p, *d, ceil, cip], out=np.empty(want.shape, np.float32))
                np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=f"{target} {shape} {k} {d} {cip}")
            # every dilation 1: torch's avg_pool3d
            want = F.avg_pool3d(torch.from_numpy(x).double(), k, s, p, ceil, cip).numpy().astype(np.float32)
            got = kernel([x, *k, *s, *p, 1, 1, 1, ceil, cip], out=np.empty(want.shape, np.float32))
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=f"{target} {shape} {k} undilated")


@pytest.mark.parametrize("target", TARGETS)
def test_a_window_wholly_in_the_padding(kernels, target):
    """L = 2, kernel 2, padding 1, dilation 3: the first window's taps are -1 and 2, both padding
    (0 / 2 with count_include_pad, 0 / 0 = nan without), the last one's are 0 and 3."""
    _, _, kernel = kernels[(OP, "f32", target)]
    x = np.array([1.0, 2.0], np.float32).reshape(1, 1, 1, 2)
    for cip, first in ((True, 0.0), (False, np.nan)):
        ref = avg_pool3d_dilated(x, 1, 1, 2, 1, 1, 1, 0, 0, 1, 1, 1, 3, False, cip)
        got = kernel([x, 1, 1, 2, 1, 1, 1, 0, 0, 1, 1, 1, 3, False, cip], out=np.empty(ref.shape, np.float32))
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(got.reshape(-1)[0], first)


@pytest.mark.parametrize("target", TARGETS)
def test_a_2d_pool_as_a_view_with_a_size_one_dim_in_front(kernels, target):
    """ONNX's averagepool_2d_dilations (4x4, kernel 2, dilation 2, ceil mode): the mapping's view."""
    _, _, kernel = kernels[(OP, "f32", target)]
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    got = kernel([x.reshape(1, 1, 1, 4, 4), 1, 2, 2, 1, 1, 1, 0, 0, 0, 1, 2, 2, True, False],
                 out=np.empty((1, 1, 1, 2, 2), np.float32))
    np.testing.assert_array_equal(got.reshape(2, 2), [[6, 7], [10, 11]])


@pytest.mark.parametrize("target", TARGETS)
def test_shim_errors(kernels, target):
    _, _, kernel = kernels[(OP, "f32", target)]
    x = np.zeros((1, 3, 3, 3), np.float32)
    for args, words in (((1, 1, 2, 1, 1, 1, 0, 0, 0, 1, 1, 0), "dilation"),
                        ((1, 1, 3, 1, 1, 1, 0, 0, 2, 1, 1, 1), "half of the kernel"),
                        ((1, 1, 2, 1, 1, 1, 0, 0, 0, 1, 1, 3), "output size is too small")):
        with pytest.raises(ValueError, match=words):
            kernel([x, *args, False, True], out=np.empty((1, 0, 0, 0), np.float32))
