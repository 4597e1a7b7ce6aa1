"""The gate compares the sign of zero results (opgen.verify.compare, Tolerance.signed_zeros):
-0.0 and 0.0 are equal by value, so a value comparison alone admits a kernel that loses the
sign (tanh(-0.0) must be -0.0). The corpus entry tanh_f32_loses_the_sign_of_zero is the kernel;
these are the rule's edges."""

from __future__ import annotations

import numpy as np
import pytest

from opgen.spec.model import Tolerance
from opgen.verify.compare import Mismatch, Outcome, compare_scalar, compare_tensor

EXACT = Tolerance(rtol=0.0, atol=0.0, signed_zeros=True)
LOOSE = Tolerance(rtol=1e-3, atol=1e-6, signed_zeros=True)


@pytest.mark.parametrize("tol", [EXACT, LOOSE])
def test_a_zero_of_the_other_sign_is_a_mismatch_naming_it(tol: Tolerance) -> None:
    ref = np.array([1.0, -0.0, 0.0, np.nan], dtype=np.float32)
    got = np.array([1.0, 0.0, 0.0, np.nan], dtype=np.float32)
    with pytest.raises(Mismatch) as caught:
        compare_tensor(got, ref, tol, None, Outcome())
    assert "index (1,)" in str(caught.value) and "the sign of zero differs" in str(caught.value)
    assert caught.value.details["mismatched"] == 1


def test_a_tiny_nonzero_within_atol_for_a_signed_zero_still_passes() -> None:
    # The sign rule is about two zeros; a value within atol of -0.0 is judged by value as before.
    compare_tensor(np.array([1e-9, -1e-9]), np.array([-0.0, 0.0]), LOOSE, None, Outcome())


def test_a_spec_may_say_the_sign_of_a_zero_is_not_defined() -> None:
    tol = Tolerance(rtol=1e-6, atol=0.0, signed_zeros=False, why="the sign of a zero sum depends on the order")
    compare_tensor(np.array([0.0, -0.0]), np.array([-0.0, 0.0]), tol, None, Outcome())


def test_a_float_scalar_result_follows_the_same_rule() -> None:
    # A scalar result goes through the tensor comparison: the tolerance decides, as for tensors.
    with pytest.raises(Mismatch, match="the sign of zero differs"):
        compare_scalar(0.0, -0.0, EXACT, Outcome())
    compare_scalar(0.0, -0.0, Tolerance(rtol=0.0, atol=0.0, signed_zeros=False), Outcome())


def test_the_default_leaves_shipped_hashes_alone() -> None:
    # A new field with a default must not change any admitted entry's overload hash.
    assert "signed_zeros" not in Tolerance(rtol=0.0, atol=0.0).model_dump(exclude_defaults=True)


def test_unset_the_shape_rule_decides_where_a_zero_has_a_defined_sign() -> None:
    # On where each element comes from the elements at its own index; off where a result combines
    # several (its zero's sign follows the order of the terms: np.max([0., -0.]) is -0.0).
    from opgen.project import PACKAGE_ROOT
    from opgen.spec.model import load_all

    specs = load_all(PACKAGE_ROOT / "specs")

    def checked(op: str, overload: str) -> bool:
        spec = specs[op]
        o = spec.overload(overload)
        return bool(spec.tolerance_for(o, o.sig.returns.dtype).signed_zeros)

    assert checked("numpy.tanh", "f32") and checked("torch.nn.functional.relu", "f32")  # one tensor, same shape
    assert checked("operator.sub", "tensor_f32")  # elementwise
    assert checked("torch.nn.functional.leaky_relu", "f64")  # scalar parameters do not change that
    assert not checked("numpy.sum", "f32")  # a reduction
    assert not checked("torch.nn.functional.softmax", "f32")  # same shape, but along an axis
    assert not checked("torch.nn.functional.layer_norm", "f32")  # rows, with weight and bias
    assert not checked("operator.matmul", "f32")  # a contraction
    assert not checked("torch.nn.functional.max_pool2d", "f32")  # windows
