"""Array item assignment (a[mask] = v, a[i] = v, a[:, :k] = w) and where it is refused: Python writes
the array in place, compiled code binds a new array to the name (opgen.masked_fill,
opgen.assign_region), so the compiler accepts only what no other name can tell apart
(opgen.compiler.aliasing). What compiles is tested against Python in
examples/compile/realistic/assignment.py and writes.py (tests/test_compile_realistic.py); here,
every refusal names its line, the construct and the fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from opgen.compiler import CompileError, compile_function
from opgen.project import Project
from tests.compile_support import CHECKOUT

PRELUDE = """\
import numpy as np
import numpy.typing as npt
import torch
from typing import Annotated

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
T32 = Annotated[torch.Tensor, torch.float32]
"""

# (what, body, message, hint): the line marked "# <-" is where the error points (else the last).
REFUSED = [
    ("a parameter written", "def f(x: F32) -> F32:  # <-\n    x[x > 0] = 0.0\n    return x\n",
     "changing the parameter 'x' in place", "x.copy()"),
    ("another name for a parameter", "def f(x: F32) -> F32:\n    y = x\n    y[y > 0] = 0.0  # <-\n    return y\n",
     "y may be the parameter x", "copy first: y = x.copy()"),
    ("a view of a parameter", "def f(x: F32) -> F32:\n    y = x[1:]\n    y[y > 0] = 0.0  # <-\n    return y\n",
     "y may be the parameter x", "copy first"),
    ("a transpose of a parameter", "def f(x: F32) -> F32:\n    y = x.T\n    y[y > 0] = 0.0  # <-\n    return y\n",
     "y may be the parameter x", "copy first"),
    ("a reshape of a parameter", "def f(x: F32) -> F32:\n    y = np.reshape(x, (-1,))\n    y[y > 0] = 0.0  # <-\n"
     "    return y\n", "y may be the parameter x", "copy first"),
    ("a second name kept", "def f(x: F32) -> F32:\n    y = x.copy()\n    z = y\n    y[y > 0] = 0.0  # <-\n"
     "    return z\n", "z (line", "copy it: z = y.copy()"),
    ("a view kept", "def f(x: F32) -> F32:\n    y = x.copy()\n    row = y[0]\n    y[y > 0] = 0.0  # <-\n"
     "    return row\n", "row (line", "copy it"),
    ("a name from unpacking", "def f(x: F32) -> F32:\n    y = np.copy(x)\n    a, b = y, x\n    y[y > 0] = 0.0  # <-\n"
     "    return a\n", "a (line", "copy it"),
    ("a helper's result", "def f(x: F32) -> F32:\n    y = g(x)\n    y[y > 0] = 0.0  # <-\n    return y\n\n\n"
     "def g(a):\n    return a\n", "y may be the parameter x", "copy first"),
    ("a NumPy result that may be a scalar", "def f(x: F32) -> F32:\n    y = x * 2.0\n    y[y > 0] = 0.0  # <-\n"
     "    return y\n", "a NumPy scalar, not an array, where it is 0-d", "y = np.copy(...)"),
    ("an array stored", "def f(x: F32, m: I64) -> F32:\n    y = x * 2.0\n    y[m > 0] = x  # <-\n    return y\n",
     "assigning an array into y[mask]", "np.where"),
    ("a float into an int array", "def f(x: I64) -> I64:\n    y = x * 2\n    y[y > 0] = 0.5  # <-\n    return y\n",
     "storing a float into y[mask]", "int(v)"),
    ("a parameter written through a slice", "def f(x: F32) -> F32:  # <-\n    x[:, 0] = 0.0\n    return x\n",
     "changing the parameter 'x' in place", "x.copy()"),
    ("a view of a copy kept across a row write", "def f(x: F32) -> F32:\n    y = x.copy()\n    first = y[0]\n"
     "    y[1] = 2.0  # <-\n    return first\n", "first (line", "copy it"),
    ("integer-array indices", "def f(x: F32) -> F32:\n    y = x.copy()\n    y[[0, 2]] = 1.0  # <-\n    return y\n",
     "(integer-array indexing) is not supported", "bool mask"),
    ("an int array index", "def f(x: F32, i: I64) -> F32:\n    y = x.copy()\n    y[i] = 1.0  # <-\n    return y\n",
     "(integer-array indexing) is not supported", "bool mask"),
    ("an int array among slices", "def f(x: F32, i: I64) -> F32:\n    y = x.copy()\n    y[:, i] = 1.0  # <-\n"
     "    return y\n", "assigning through integer-array indices", "bool mask"),
    ("a list stored", "def f(x: F32) -> F32:\n    y = x.copy()\n    y[0] = [1.0, 2.0]  # <-\n    return y\n",
     "storing a list[float] into y[i]", "np.asarray"),
    ("a float into an int array's row", "def f(x: I64) -> I64:\n    y = x * 2\n    y = np.copy(y)\n"
     "    y[0] = 0.5  # <-\n    return y\n", "storing a float into y[i]", "int(v)"),
    ("a written array's rows looped over", "def f(x: F32) -> F32:\n    y = x.copy()\n    for row in y:\n"
     "        y[0] = 1.0  # <-\n    return y\n", "changing y while a for loop iterates over it", "y.copy()"),
    ("a written array's rows enumerated", "def f(x: F32) -> F32:\n    y = x.copy()\n    for i, row in enumerate(y):\n"
     "        y[i] = row * 2.0  # <-\n    return y\n", "changing y while a for loop iterates over it", "y.copy()"),
    ("a written array's rows zipped", "def f(x: F32, w: list[float]) -> F32:\n    y = x.copy()\n"
     "    for v, row in zip(w, y):\n        y[0] = v  # <-\n    return y\n", "changing y while a for loop iterates",
     "y.copy()"),
    ("a torch step below 1", "def f(x: T32) -> T32:\n    y = x.clone()\n    y[::-1] = 0.0  # <-\n    return y\n",
     "torch raises ValueError", "torch.flip"),
    ("a computed float into torch float32", "def f(x: T32, v: float) -> T32:\n    y = x.clone()\n"
     "    y[y > v] = v  # <-\n    return y\n", "torch raises RuntimeError", "torch.clamp"),
    ("copy of a torch tensor", "def f(x: T32) -> T32:\n    y = x.copy()  # <-\n    return y\n",
     "has no such copy", "t.clone()"),
]


@pytest.mark.parametrize("what,body,message,hint", REFUSED, ids=[r[0] for r in REFUSED])
def test_an_array_write_a_rebinding_cannot_stand_for_is_refused(tmp_path: Path, what: str, body: str, message: str,
                                                                hint: str) -> None:
    source = tmp_path / "f.py"
    source.write_text(PRELUDE + "\n\n" + textwrap.dedent(body))
    with pytest.raises(CompileError) as info:
        compile_function(Project(CHECKOUT), source, "f", tmp_path / "out")
    err = info.value
    assert message in err.message, err.render()
    assert hint in (err.hint or ""), err.render()
    lines = body.splitlines()
    line = next((i for i, text in enumerate(lines, 1) if text.endswith("# <-")), len(lines))
    assert err.where == f"{source}:{PRELUDE.count(chr(10)) + 2 + line}", err.render()
