"""A trivially honest kernel, backed by the reference, run through the gate's own runner.

``spec check`` asks whether a kernel that is right can pass the gate under this spec. The kernel
here is as right as one can be: where the reference's result is a float and a wider evaluation
exists (``opgen.spec.wide``), it returns that evaluation rounded once to the result dtype (a correctly
rounded kernel, which rounds differently from the reference wherever the reference is off), and
otherwise the reference's own result. It raises what the reference raises, and OverflowError for an
int result outside int64, as a native kernel must.

It runs in this process, as the trusted stand-in ``opgen.verify.runner.run`` accepts (the GPU device
check and the corpus's memorizer use the same door): the examples, the layouts, the output prefills,
the repeated calls, the declared-error rules, the tolerance lookup and the comparison are the gate's,
not a lookalike. If it fails, the spec rejects a correct kernel.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from opgen.references import INT64_MAX, INT64_MIN, call_reference
from opgen.spec.model import Overload, Spec, bounded_results
from opgen.spec.wide import Unavailable, WideRoute, combine
from opgen.verify import runner
from opgen.verify.scale import Budget


class HonestKernel:
    """Called as the runner calls a kernel: ``kernel(values, out=array)``, values in signature order."""

    placed = False  # the runner hands it plain views over copies of the placed buffers

    def __init__(self, spec: Spec, overload: Overload, route: WideRoute):
        self.spec, self.overload, self.route = spec, overload, route
        self.reference = spec.reference_for(overload)
        self.declared = {r.error for r in overload.raises}
        self.calls = 0
        self.unavailable = 0  # calls on which the wider route gave nothing (the reference's result was used)

    def __call__(self, values: list[Any], out: np.ndarray | None = None) -> Any:
        self.calls += 1
        copies = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in values]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call_reference(self.reference, copies)  # its errors are the kernel's errors
        r = self.overload.sig.returns
        if r.name == "int" and not isinstance(result, bool) and not INT64_MIN <= int(result) <= INT64_MAX:
            raise OverflowError("the result does not fit in int64")
        if self.route.available:
            args = {p.name: v for p, v in zip(self.overload.sig.params, copies)}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    wide = self.route.evaluate(self.overload, args)
                result = combine(self.route, result, self.route.rounded(wide, result))
            except Unavailable:
                self.unavailable += 1
        if isinstance(out, tuple):  # a tuple result: each out from the reference's element at its position
            bounded = set(bounded_results(self.overload))
            for (name, _), o, value in zip(self.overload.sig.results, out, result):
                value = np.asarray(value, dtype=o.dtype)
                if name in bounded:  # x[mask]: its rows fill the first rows of the bound, the rest stays as it was
                    o[:len(value)] = value
                else:
                    o[...] = value
            return out
        if out is not None:
            out[...] = np.asarray(result, dtype=out.dtype)
            return out
        return result


def gate_run(spec: Spec, overload: Overload, kernel: HonestKernel, *, seed: int, examples: int = 0,
             scale_budget: Budget | None = None) -> dict[str, Any]:
    """One run of the gate's runner with ``kernel``: Hypothesis's ``examples`` examples of ``seed``
    (shrunk on failure, as in the gate), or with ``scale_budget`` the scale stage's cases of ``seed``.
    The runner's verdict (``ok``, ``kind``, ``message``, ``details``, ``examples``, worst errors)."""
    job: dict[str, Any] = {"seed": seed, "max_examples": examples, "symbol": "honest"}
    if scale_budget is not None:
        job.update(mode="scale", options={"budget": scale_budget.as_dict()})
    with tempfile.TemporaryDirectory(prefix="opgen-spec-check-") as tmp, np.errstate(all="ignore"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return runner.run(job, Path(tmp), spec, overload, kernel=kernel)
