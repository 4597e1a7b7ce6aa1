"""The kernel ABI as data: names and native spellings of every kernel's interface.

One place answers "what does this overload look like natively?" for the prompt (the
exact C++ function the LLM must write), the shim generator (the C function around it),
the harness (ctypes argument types) and the registry (the signature the compiler's
type propagation reads).
"""

from __future__ import annotations

import re

from opgen.spec.nativetypes import NativeType, Signature

CPP_SCALARS = {"int": "int64_t", "float": "double", "bool": "bool", "str": "std::string"}
C_SCALARS = {"int": "int64_t", "float": "double", "bool": "uint8_t"}
RUST_SCALARS = {"int": "i64", "float": "f64", "bool": "bool", "str": "String"}
# Rust keywords a parameter name may be (the signature grammar already refuses C++ ones);
# they are spelled as raw identifiers (r#type).
RUST_KEYWORDS = frozenset(
    "abstract as async await become box const continue crate do dyn else enum extern false final fn for gen if impl "
    "in let loop macro match mod move mut override priv pub ref return static struct trait true try type typeof "
    "unsafe unsized use virtual where while yield".split()
)


def kernel_name(op: str, overload: str) -> str:
    """C++ function name inside namespace opgen::kernels, e.g. operator_matmul__f32."""
    return re.sub(r"[^A-Za-z0-9_]", "_", op) + "__" + overload


def c_symbol(op: str, overload: str) -> str:
    """Exported C symbol of the generated shim, e.g. opgen_operator_matmul__f32."""
    return "opgen_" + kernel_name(op, overload)


def cpp_type(t: NativeType, *, param: bool) -> str:
    if t.kind == "tensor":
        return "const opgen::Tensor&" if param else "opgen::Tensor&"
    if t.is_tensor_list:  # the shim builds the views from the C array (a parameter only)
        return "const std::vector<opgen::Tensor>&"
    if t.kind == "list":
        inner = f"std::vector<{CPP_SCALARS[t.elem.name]}>"
        return f"const {inner}&" if param else inner
    base = CPP_SCALARS[t.name]
    return f"const {base}&" if (param and t.name == "str") else base


def out_local(result: str) -> str:
    """The shims' local name of a result's out tensor: ``opgen_out`` for a single result (its C
    argument is ``out``), ``opgen_out_<name>`` for a tuple's named result (its C argument is ``<name>``)."""
    return "opgen_out" if result == "out" else f"opgen_out_{result}"


def cpp_declaration(op: str, overload: str, sig: Signature) -> str:
    """The exact C++ declaration the LLM implements (inside namespace opgen::kernels). Tensor results
    come last, one ``opgen::Tensor&`` each, named as the signature names them (``out`` for one)."""
    params = [f"{cpp_type(p.type, param=True)} {p.name}" for p in sig.params]
    if sig.tensor_results:
        params += [f"opgen::Tensor& {name}" for name, _ in sig.results]
        ret = "void"
    else:
        ret = cpp_type(sig.returns, param=False)
    return f"{ret} {kernel_name(op, overload)}({', '.join(params)})"


def rust_ident(name: str) -> str:
    """A parameter name as Rust spells it (raw identifier for a keyword)."""
    return f"r#{name}" if name in RUST_KEYWORDS else name


def rust_type(t: NativeType, *, param: bool) -> str:
    """The idiomatic Rust type: views for tensors, borrowed slices and str for inputs, owned results."""
    if t.kind == "tensor":
        return f"&TensorRef<{t.dtype.rust}>"
    if t.is_tensor_list:
        return f"&[TensorRef<{t.elem.dtype.rust}>]"
    if t.kind == "list":
        if param:
            return "&[&str]" if t.elem.name == "str" else f"&[{RUST_SCALARS[t.elem.name]}]"
        return f"Vec<{RUST_SCALARS[t.elem.name]}>"
    if t.name == "str":
        return "&str" if param else "String"
    return RUST_SCALARS[t.name]


def rust_declaration(op: str, overload: str, sig: Signature) -> str:
    """The exact Rust signature the LLM implements (in kernel.rs, after
    ``use opgen::{Error, ErrorKind, Result, TensorMut, TensorRef};``)."""
    params = [f"{rust_ident(p.name)}: {rust_type(p.type, param=True)}" for p in sig.params]
    if sig.tensor_results:
        params += [f"{rust_ident(name)}: &mut TensorMut<{t.dtype.rust}>" for name, t in sig.results]
        ret = "()"
    else:
        ret = rust_type(sig.returns, param=False)
    return f"pub fn {kernel_name(op, overload)}({', '.join(params)}) -> Result<{ret}>"


def c_params(sig: Signature) -> list[tuple[str, str]]:
    """(C type, name) of every shim parameter, in order: inputs, out (one per result of a tuple, each
    named as the result), err."""
    out: list[tuple[str, str]] = []
    for p in sig.params:
        t = p.type
        if t.kind == "tensor":
            out.append(("const opgen_tensor*", p.name))
        elif t.is_tensor_list:  # an array of views, one per element
            out += [("const opgen_tensor*", p.name), ("int64_t", f"{p.name}_len")]
        elif t.kind == "list":
            elem = "opgen_string" if t.elem.name == "str" else C_SCALARS[t.elem.name]
            out += [(f"const {elem}*", p.name), ("int64_t", f"{p.name}_len")]
        elif t.name == "str":
            out += [("const char*", p.name), ("int64_t", f"{p.name}_len")]
        else:
            out.append((C_SCALARS[t.name], p.name))
    r = sig.returns
    if sig.tensor_results:
        out += [("opgen_tensor*", name) for name, _ in sig.results]
    elif r.kind == "list":
        out.append(("opgen_list*", "out"))
    elif r.name == "str":
        out.append(("opgen_string*", "out"))
    else:
        out.append((f"{C_SCALARS[r.name]}*", "out"))
    out.append(("opgen_error*", "err"))
    return out


def c_declaration(op: str, overload: str, sig: Signature) -> str:
    params = ", ".join(f"{t} {n}" for t, n in c_params(sig))
    return f"int32_t {c_symbol(op, overload)}({params})"


def native_signature(op: str, overload: str, sig: Signature) -> dict:
    """What a registry entry records for the compiler: types in, type out, the C and C++
    spellings (a target adds its own declaration where it differs: ``Target.signature``)."""
    record = {
        "params": [{"name": p.name, "type": str(p.type)} for p in sig.params],
        "returns": str(sig.returns),
        "python": str(sig),
        "cpp": cpp_declaration(op, overload, sig),
        "c": c_declaration(op, overload, sig),
        "c_symbol": c_symbol(op, overload),
        "abi_version": 1,
    }
    if sig.returns.is_tuple:  # each result's name and type, in the order of the out arguments
        record["results"] = [{"name": name, "type": str(t)} for name, t in sig.results]
    return record
