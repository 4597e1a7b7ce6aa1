"""Library functions written in Python: torch and NumPy calls that are compositions of ops the registry
holds (``t.squeeze(1)``, ``torch.flatten(x, 1)``, ``t.expand(b, -1, -1)``, ``torch.clamp(x, min=0)``),
each a function of a module in this package, in the subset ``opgen compile`` compiles. A call of such a
name that no spec declares is compiled as a call of that function (specialised to the argument types as
any helper is), so what it does, errors included, is read from one short Python definition and is
checked like any compiled code: differentially against the library on drawn inputs.

``LOWERINGS`` maps the library's name (a function ``torch.squeeze``, a method ``Tensor.squeeze``) to
its candidates, ``module:function``; the first whose parameters bind the call's arguments serves it (the
library's optional arguments are separate candidates: compiled helpers take no None), a parameter
annotated int or float binding only an argument of that type (a bound that cannot be nan is another
function than one that can). ``VARARGS``: the
names whose positional arguments after the first are one list (``t.expand(2, -1)`` is
``expand(t, [2, -1])``) unless that list is passed whole (``t.expand((2, -1))``).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from opgen.compiler.scope import ModuleScope, read_module

HERE = Path(__file__).parent

LOWERINGS: dict[str, tuple[str, ...]] = {
    **{name: ("torch_compositions:squeeze_dim", "torch_compositions:squeeze_dims", "torch_compositions:squeeze_all")
       for name in ("torch.squeeze", "Tensor.squeeze")},
    **{name: ("torch_compositions:flatten",) for name in ("torch.flatten", "Tensor.flatten")},
    "Tensor.expand": ("torch_compositions:expand",),
    **{name: ("torch_compositions:clamp_int", "torch_compositions:clamp_min_int", "torch_compositions:clamp_max_int",
              "torch_compositions:clamp", "torch_compositions:clamp_min", "torch_compositions:clamp_max")
       for name in ("torch.clamp", "torch.clip", "Tensor.clamp", "Tensor.clip")},
    # opgen's own names for index forms the compiler lowers (propagate.gather)
    "opgen.index_pairs": ("numpy_compositions:index_pairs",),
    "numpy.linspace": ("numpy_compositions:linspace",),
    "numpy.eye": ("numpy_compositions:eye_rectangular", "numpy_compositions:eye"),  # M given, or not
    **{name: ("torch_compositions:cosine_similarity",)
       for name in ("torch.nn.functional.cosine_similarity", "torch.cosine_similarity")},
}
VARARGS = {"Tensor.expand"}


@dataclass(frozen=True)
class Lowering:
    name: str  # the library's name it serves
    definition: ast.FunctionDef
    scope: ModuleScope

    @property
    def where(self) -> str:
        return f"{self.scope.path.name}:{self.definition.name}"


@functools.cache
def _module(name: str) -> ModuleScope:
    return read_module(HERE / f"{name}.py")


def candidates(name: str) -> list[Lowering]:
    """The functions that may serve ``name``, in order (empty when none does)."""
    out = []
    for ref in LOWERINGS.get(name, ()):
        module, function = ref.split(":")
        scope = _module(module)
        out.append(Lowering(name, scope.functions[function], scope))
    return out


def binds(definition: ast.FunctionDef, positional: int, keywords: set[str]) -> bool:
    """Whether a call with ``positional`` arguments and these keywords binds the function's parameters
    (every parameter without a default given once, no unknown keyword)."""
    params = [a.arg for a in [*definition.args.posonlyargs, *definition.args.args]]
    required = len(params) - len(definition.args.defaults)
    if positional > len(params) or not keywords <= set(params[positional:]):
        return False
    given = set(params[:positional]) | keywords
    return all(p in given for p in params[:required])
