"""Parameter defaults in spec signatures (``negative_slope: float = 0.01``): what a call that omits
the argument passes. The kernel still takes every argument; the compiler fills the default in; a
default outside the domain the gate draws from is a spec error; adding one leaves entries current."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from opgen.project import PACKAGE_ROOT
from opgen.spec.model import load_all, load_spec
from opgen.spec.nativetypes import REQUIRED, SignatureError, parse_signature

ROOT = PACKAGE_ROOT
LEAKY = ROOT / "specs" / "torch" / "nn" / "functional" / "leaky_relu.yaml"


def test_a_default_is_a_python_literal_of_the_parameter_type() -> None:
    sig = parse_signature("(x: tensor[float32], slope: float = 1, n: int = -2, on: bool = True, mode: str = 'tanh') -> tensor[float32]")
    assert [p.default for p in sig.params] == [REQUIRED, 1.0, -2, True, "tanh"]
    assert type(sig.params[1].default) is float  # an int literal for a float parameter is that float
    assert str(sig) == "(x: tensor[float32], slope: float = 1.0, n: int = -2, on: bool = True, mode: str = 'tanh') -> tensor[float32]"


@pytest.mark.parametrize("text,message", [
    ("(x: tensor[float32] = 0) -> tensor[float32]", "only scalar parameters"),
    ("(x: float = 0.1 + y) -> float", "is not a Python literal"),
    ("(x: int = 0.5) -> int", "is not a int"),
    ("(x: bool = 1) -> bool", "is not a bool"),
    ("(x: float = 0.5, y: float) -> float", "has no default but follows one that has"),
])
def test_a_bad_default_is_a_signature_error_naming_it(text: str, message: str) -> None:
    with pytest.raises(SignatureError, match=message):
        parse_signature(text)


@pytest.mark.parametrize("domain,message", [
    ("{choices: [0.2, 0.1]}", r"not one of domain.negative_slope.choices"),
    ("{min: 0.1, max: 1.0}", r"outside domain.negative_slope \[0.1, 1.0\]"),
])
def test_a_default_the_gate_never_draws_is_a_spec_error(tmp_path: Path, domain: str, message: str) -> None:
    text = LEAKY.read_text()
    text = text.replace("negative_slope: {choices: [0.01, 0.2, 0.1, 0.0, 1.0, 3.0, -0.5, -0.01]}",
                        f"negative_slope: {domain}", 1)
    path = tmp_path / "leaky_relu.yaml"
    path.write_text(text)
    with pytest.raises(Exception, match=message):
        load_spec(path)


def test_adding_a_default_leaves_the_overload_hash_alone(tmp_path: Path) -> None:
    with_default = load_spec(LEAKY)
    path = tmp_path / "leaky_relu.yaml"
    path.write_text(LEAKY.read_text().replace("negative_slope: float = 0.01", "negative_slope: float"))
    bare = load_spec(path)
    assert any(p.has_default for o in with_default.overloads for p in o.sig.params)
    assert all(bare.overload_hash(o) == with_default.overload_hash(w) for o, w in zip(bare.overloads, with_default.overloads))


def test_the_compiler_passes_the_default_of_an_omitted_argument(tmp_path: Path) -> None:
    """F.leaky_relu(x) compiles (negative_slope 0.01, as torch's default), as do the positional and
    keyword spellings; compiled, each gives what torch gives."""
    from opgen.compiler import compile_function
    from opgen.host import load_compiled

    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent('''\
        from typing import Annotated

        import torch
        import torch.nn.functional as F

        Tensor32 = Annotated[torch.Tensor, torch.float32]

        def f(x: Tensor32) -> Tensor32:
            return F.leaky_relu(x) + F.leaky_relu(x, 0.2) * F.leaky_relu(x, negative_slope=0.1)
        '''))
    from opgen.project import Project

    compile_function(Project(ROOT), path, "f", tmp_path / "out")
    compiled = load_compiled(tmp_path / "out")
    spec = importlib.util.spec_from_file_location("m", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((4, 7)).astype(np.float32))
    got = compiled(x)
    np.testing.assert_array_equal(np.asarray(got), module.f(x).numpy())


def test_every_shipped_default_lies_in_its_domain() -> None:
    # load_all would raise otherwise; this names the defaults the library ships, so the list is seen.
    specs = load_all(ROOT / "specs")
    shipped = {(op, o.name, p.name): p.default for op, s in specs.items() for o in s.overloads for p in o.sig.params
               if p.has_default}
    assert shipped[("torch.nn.functional.leaky_relu", "f32", "negative_slope")] == 0.01


def test_the_prompt_shows_the_signature_the_kernel_implements() -> None:
    # The kernel takes every argument, so the prompt (and the recording keyed by it) leaves defaults out.
    from opgen.prompts import facts

    spec = load_spec(LEAKY)
    shown = facts(spec, spec.overload("f32"), "cpp")["signature"]
    assert shown == "(input: tensor[float32], negative_slope: float) -> tensor[float32]"
