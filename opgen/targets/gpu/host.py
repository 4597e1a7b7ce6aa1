"""Generates the host code around a device kernel (pure: spec in, text out).

The LLM writes only the device kernel (``opgen.targets.gpu.device_abi``). This module writes what
a CPU kernel's shim does (the C-ABI function ``opgen_<op>__<overload>``, dtype checks, the
shape rule with its broadcasting, errors as status codes) plus what a GPU needs: every
input packed row-major over its aligned shape, the 32-bit range checks, device buffers,
the launch from the kernel's ``@launch`` line (``opgen_launch.hpp``, generated from the
source at build time), and the copy back. So the harness, the emitter and the pipelines
call a GPU kernel exactly as they call a CPU one.

Two renderings:

* ``render_emulated_host``: for the CPU execution layer (``opgen/targets/gpu/runtime``), compiled
  by g++ beside the kernel's own translation unit; the registry keeps it as the entry's shim.
* ``render_cuda_host``: for a CUDA device, compiled by nvcc in one translation unit with the
  kernel; host tensors are copied in and out, device tensors used in place.
"""

from __future__ import annotations

from opgen.spec.abi import c_declaration
from opgen.errors import SpecError
from opgen.targets.cpp.shim import HEADER, _rel, shape_rule_lines
from opgen.spec.model import Overload, Spec
from opgen.targets.gpu.device_abi import Contract, contract
from opgen.targets.gpu.dialect import dialect

CATCH = [
    "  } catch (const opgen::Error& e) {",
    "    return opgen::shim::fail(err, static_cast<int32_t>(e.kind), e.what());",
    "  } catch (const std::bad_alloc&) {",
    '    return opgen::shim::fail(err, OPGEN_INTERNAL_ERROR, "out of memory (std::bad_alloc)");',
    "  } catch (const std::exception& e) {",
    "    return opgen::shim::fail(err, OPGEN_INTERNAL_ERROR, e.what());",
    "  } catch (...) {",
    '    return opgen::shim::fail(err, OPGEN_INTERNAL_ERROR, "the kernel threw a non-standard exception");',
    "  }",
    "}",
    "",
]


def render_emulated_host(spec: Spec, overload: Overload, target: str) -> str:
    """The host code that runs the kernel on the CPU execution layer (the registry's shim.cpp)."""
    c = contract(spec, overload, dialect(target))
    lines = [
        HEADER.format(path=_rel(spec), op=spec.op, overload=overload.name),
        f"// Host code for the {c.dialect.language} kernel {c.name} ({c.dialect.kernel_file}) on opgen's CPU "
        "execution layer:",
        "// checks, shape rule, packing, device buffers, the launch from the kernel's @launch line, the copy back.",
        '#include "opgen_kernel.hpp"',
        '#include "opgen_gpu_emu_host.hpp"',
        '#include "opgen_launch.hpp"',
        "",
        "// The device kernel, compiled as C++ in its own translation unit.",
        c.host_declaration(),
        "",
        f'extern "C" __attribute__((visibility("default"))) {c_declaration(spec.op, overload.name, overload.sig)} {{',
        "  try {",
    ]
    body = _views(overload, "opgen::shim::check_dtype({t}, {code}, {bits}, \"{name}\");")
    body += shape_rule_lines(overload, [])
    body += _sizes(c)
    body.append("if (opgen_out.numel() == 0) return OPGEN_OK;  // nothing to write")
    for p in c.params:
        if p.role == "input":
            elem = p.host_type.removeprefix("const ").removesuffix("*")
            body.append(f'const std::vector<{elem}> opgen_h_{p.name} = opgen::gpu::pack<{elem}>(opgen_v_{p.name}, "{p.name}");')
            body.append(f'const opgen::gpu::Buffer<{elem}> opgen_d_{p.name}("{p.name}", opgen_h_{p.name}.data(), '
                        f"opgen_h_{p.name}.size());")
        elif p.role == "output":
            elem = p.host_type.removesuffix("*")
            # The device output starts as the caller's out (the verifier prefills it differently from
            # call to call): a kernel cannot tell a verification call by an all-NaN output, and what
            # it leaves unwritten stays wrong whatever the prefill.
            body.append(f'opgen::gpu::Buffer<{elem}> opgen_d_out("out", opgen_out.data<{elem}>(), '
                        f'opgen::gpu::count(opgen_out.numel(), "out"));')
    body.append(f"const opgen::gpu::Launch opgen_launch = opgen_launch_geometry({', '.join(c.launch_names)});")
    args = ", ".join(p.name if p.role == "size" else p.host_value for p in c.params)
    body.append(f"opgen::gpu::emu_launch(opgen_launch, [&] {{ {c.name}({args}); }});")
    body += [f"opgen_d_{p.name}.check_tail();" for p in c.params if p.role == "input"]
    out_elem = next(p.host_type.removesuffix("*") for p in c.params if p.role == "output")
    body.append(f"opgen_d_out.copy_out(opgen_out.data<{out_elem}>());")
    body.append("return OPGEN_OK;")
    return "\n".join(lines + ["    " + b for b in body] + CATCH)


def render_cuda_host(spec: Spec, overload: Overload) -> str:
    """The host code that runs the kernel on a CUDA device (one nvcc translation unit with kernel.cu)."""
    c = contract(spec, overload, dialect("cuda"))
    lines = [
        HEADER.format(path=_rel(spec), op=spec.op, overload=overload.name),
        f"// Host code for the CUDA kernel {c.name} on a CUDA device: host tensors are packed, copied in and the",
        "// result copied back; device tensors (all of them) are used in place and the launch is asynchronous.",
        '#include "opgen_kernel.hpp"',
        '#include "opgen_gpu_cuda_host.cuh"',
        '#include "kernel.cu"',
        '#include "opgen_launch.hpp"',
        "",
        "#include <type_traits>",
        f"static_assert(std::is_same<decltype(&{c.name}), {c.function_type()}>::value,",
        f'              "{c.name} must have exactly the parameter list opgen asked for: {c.function_type()}");',
        "",
        f'extern "C" __attribute__((visibility("default"))) {c_declaration(spec.op, overload.name, overload.sig)} {{',
        "  try {",
    ]
    tensors = [p.name for p in overload.sig.tensor_params]
    body = _views(overload, "const bool opgen_dev_{name} = opgen::gpu::check_tensor({t}, {code}, {bits}, \"{name}\");")
    sides = ", ".join(f"opgen_dev_{n}" for n in tensors + ["out"])
    body.append(f"const bool opgen_on_device = opgen::gpu::same_side({{{sides}}});")
    body += shape_rule_lines(overload, [])
    body += _sizes(c)
    body.append("if (opgen_out.numel() == 0) return OPGEN_OK;  // nothing to write")
    for p in c.params:
        if p.role in ("input", "output"):
            elem = p.host_type.removeprefix("const ").removesuffix("*")
            view = "opgen_out" if p.role == "output" else f"opgen_v_{p.name}"
            body.append(f'const opgen::gpu::DeviceArray<{elem}> opgen_d_{p.name}("{p.name}", {view}, opgen_on_device, '
                        f"{'true' if p.role == 'output' else 'false'});")
    body.append(f"const opgen::gpu::Launch opgen_launch = opgen_launch_geometry({', '.join(c.launch_names)});")
    body.append("opgen::gpu::check_grid(opgen_launch);")
    body.append("if (opgen::gpu::empty_grid(opgen_launch)) return OPGEN_OK;")
    args = ", ".join(p.name if p.role == "size" else p.host_value for p in c.params)
    body.append(f"{c.name}<<<opgen::gpu::grid_of(opgen_launch), opgen::gpu::block_of(opgen_launch)>>>({args});")
    body.append('opgen::gpu::cuda_check(cudaGetLastError(), "the kernel launch");')
    out_elem = next(p.host_type.removesuffix("*") for p in c.params if p.role == "output")
    body.append(f"if (!opgen_on_device) opgen_d_out.copy_out(opgen_out.data<{out_elem}>());")
    body.append("return OPGEN_OK;")
    return "\n".join(lines + ["    " + b for b in body] + CATCH)


def render_kernel_unit(c: Contract, source: str) -> str:
    """The kernel's translation unit on the CPU execution layer: the names header, the source
    with its device-library includes blanked (line numbers kept, diagnostics name the kernel
    file), and a check that the kernel has exactly the contract's parameter list."""
    blanked = []
    for line in source.splitlines():
        stripped = line.strip().replace(" ", "")
        if any(stripped in (f"#include<{h}>", f'#include"{h}"') for h in c.dialect.std_includes):
            line = ""
        blanked.append(line)
    return "\n".join([
        f'#include "{c.dialect.emulation_header}"',
        "#include <type_traits>",
        f'#line 1 "{c.dialect.kernel_file}"',
        *blanked,
        '#line 1 "opgen-contract-check"',
        f"static_assert(std::is_same<decltype(&{c.name}), {c.function_type()}>::value,",
        f'              "{c.name} must be declared exactly as opgen asked (same parameter types, in order): '
        f'{c.function_type()}");',
        "",
    ])


def launch_types(c: Contract) -> tuple[str, ...]:
    """C++ types of the launch geometry function's parameters (its names: ``c.launch_names``)."""
    return tuple("int64_t" for _ in c.launch_names)


def _views(overload: Overload, check: str) -> list[str]:
    out = []
    for p in overload.sig.params:
        if p.type.is_tensor:
            d = p.type.dtype
            out.append(check.format(t=p.name, code=d.dl_code, bits=d.bits, name=p.name))
            out.append(f"opgen::Tensor opgen_v_{p.name}(*{p.name});")
        elif p.type.kind != "scalar" or p.type.name == "str":
            raise SpecError(f"GPU kernels take tensors and int, float or bool scalars; {p.name} is {p.type}")
    d = overload.sig.returns.dtype
    out.append(check.format(t="out", code=d.dl_code, bits=d.bits, name="out"))
    out.append("opgen::Tensor opgen_out(*out);")
    return out


def _sizes(c: Contract) -> list[str]:
    out = [f'if ({cond}) throw opgen::Error(opgen::ErrorKind::Value, "{_c_string(msg)}");' for cond, msg in c.checks]
    return out + [f"const int {p.name} = {p.host_value};" for p in c.sizes]


def _c_string(text: str) -> str:
    return " ".join(text.split()).replace("\\", "\\\\").replace('"', '\\"')

