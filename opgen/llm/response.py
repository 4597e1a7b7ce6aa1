"""The structured answer an LLM gives: a kernel source, validated before it is built.

The rules live on the model (instructor's way): a validation failure becomes a
re-ask carrying the error, before anything is compiled.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from opgen.targets.gpu.launch import LaunchError, parse_launch

_FENCE = re.compile(r"^\s*```[A-Za-z0-9+]*\s*\n(.*?)\n\s*```\s*$", re.S)


class KernelAnswer(BaseModel):
    """One complete C++ source file implementing the requested kernel."""

    source: str = Field(
        description="The complete C++17 source file: includes, then the function inside namespace opgen::kernels. "
        "No extern \"C\", no main(), no markdown fences."
    )
    notes: str = Field(default="", description="One or two sentences on the approach (optional).")

    # Validation facts (the kernel name) bound by ``expecting``; a ``context`` passed to
    # model_validate takes precedence.
    expected: ClassVar[dict[str, Any]] = {}

    @classmethod
    def expecting(cls, context: dict[str, Any]) -> type["KernelAnswer"]:
        """This model with ``context`` built in, for instructor's ``response_model``.

        instructor's own ``context=`` argument cannot carry it: instructor also renders every
        message as a Jinja2 template with that context, which mangles C++ braces (``{{0}}``
        becomes ``0``) in the sources and diagnostics of a repair conversation, or raises on them.
        """
        return type(cls.__name__, (cls,), {"__module__": cls.__module__, "__doc__": cls.__doc__,
                                           "__qualname__": cls.__qualname__, "expected": dict(context)})

    language_name: ClassVar[str] = "C++"  # for messages

    @field_validator("source")
    @classmethod
    def _check(cls, v: str, info: ValidationInfo) -> str:
        m = _FENCE.match(v)
        if m:  # a fenced answer is still a usable answer
            v = m.group(1)
        if not v.strip():
            raise ValueError(f"source is empty; send the whole {cls.language_name} file")
        ctx = info.context or cls.expected
        return cls.check_source(v, ctx.get("kernel_name"), ctx)

    @classmethod
    def check_source(cls, v: str, name: str | None, ctx: dict[str, Any]) -> str:
        """The language's own checks of a non-empty source (each answer model has its own)."""
        if name and not re.search(rf"\b{re.escape(name)}\s*\(", v):
            raise ValueError(f"source does not define the function {name}(...) with the exact signature requested")
        if "namespace opgen" not in v:
            raise ValueError("the function must be defined inside namespace opgen::kernels")
        if re.search(r'extern\s+"C"', v):
            raise ValueError('do not write extern "C" code; opgen generates the C-ABI shim itself')
        if re.search(r"\bint\s+main\s*\(", v):
            raise ValueError("do not define main(); write only the kernel")
        return v


class RustKernelAnswer(KernelAnswer):
    """One complete Rust module implementing the requested kernel."""

    source: str = Field(
        description="The complete Rust module (edition 2021, std only): `use opgen::{...};`, then the requested "
        "pub fn. No unsafe, no extern, no #[no_mangle], no main(), no markdown fences."
    )
    language_name: ClassVar[str] = "Rust"

    @classmethod
    def check_source(cls, v: str, name: str | None, ctx: dict[str, Any]) -> str:
        return _check_rust(v, name)


def _check_rust(v: str, name: str | None) -> str:
    if re.search(r"^\s*#\s*include\b|\bnamespace\s+opgen\b|\bstd::vector\s*<", v, re.M):
        raise ValueError("this looks like C++; answer with the Rust module that was asked for")
    if "```" in v:
        raise ValueError("the source holds markdown fences; send only the Rust source")
    if name and not re.search(rf"\bfn\s+{re.escape(name)}\s*[<(]", v):
        raise ValueError(f"source does not define `pub fn {name}(...)` with the exact signature requested")
    if re.search(r'\bextern\s+"C"|#\s*\[\s*no_mangle', v):
        raise ValueError('do not write extern "C" or #[no_mangle] code; opgen generates the C-ABI shim itself')
    if re.search(r"\bfn\s+main\s*\(", v):
        raise ValueError("do not define main(); write only the kernel")
    return v


class _DeviceKernelAnswer(KernelAnswer):
    """What CUDA and Metal answers share: a device kernel and its launch line, no host code."""

    qualifier: ClassVar[str]  # before the kernel's name, as a pattern
    spelled: ClassVar[str]  # the same, as the kernel writes it

    @classmethod
    def check_source(cls, v: str, name: str | None, ctx: dict[str, Any]) -> str:
        return _check_gpu(v, name, cls.qualifier, cls.spelled, ctx.get("launch_names"))


class CudaKernelAnswer(_DeviceKernelAnswer):
    """One complete CUDA source file holding the requested device kernel and its launch line."""

    source: str = Field(
        description="The complete CUDA source: the requested __global__ kernel with exactly the given parameter "
        "list, any __device__ helpers, and one `// @launch grid=(...) block=(...)` line. No host code, no main(), "
        "no markdown fences."
    )
    language_name: ClassVar[str] = "CUDA"
    qualifier: ClassVar[str] = r"__global__\s+void"
    spelled: ClassVar[str] = "__global__ void"


class MetalKernelAnswer(_DeviceKernelAnswer):
    """One complete Metal Shading Language source holding the requested kernel and its launch line."""

    source: str = Field(
        description="The complete MSL source: #include <metal_stdlib>, using namespace metal;, the requested "
        "kernel with exactly the given parameter list, and one `// @launch grid=(...) block=(...)` line. No host "
        "code, no markdown fences."
    )
    language_name: ClassVar[str] = "Metal Shading Language"
    qualifier: ClassVar[str] = r"\bkernel\s+void"
    spelled: ClassVar[str] = "kernel void"


def _check_gpu(v: str, name: str | None, qualifier: str, spelled: str, launch_names: list[str] | None) -> str:
    if "```" in v:
        raise ValueError("the source holds markdown fences; send only the source")
    if name and not re.search(rf"{qualifier}\s+{re.escape(name)}\s*\(", v):
        raise ValueError(f"source does not define `{spelled} {name}(...)` with the exact parameter list requested")
    if re.search(r"\bint\s+main\s*\(|<<<", v):
        raise ValueError("write only the device kernel (no main(), no launches): opgen generates the host code")
    if launch_names is not None:
        try:
            parse_launch(v, tuple(launch_names))
        except LaunchError as exc:
            raise ValueError(str(exc)) from None
    return v
