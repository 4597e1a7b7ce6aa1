"""What `opgen compile` produces: the CLI's account of every op, the manifest, a library that
exports only its entry point, C++ that reads beside the Python, sealed kernels, the Python
host's calling conventions, and --synthesize-missing through a scripted OpenAI-compatible
server."""

from __future__ import annotations

import ctypes
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from opgen.build.cpp import BuildJob, build
from opgen.cli import app
from opgen.compiler.link import entry_hash
from opgen.compiler.emit_cpp import Kernel
from opgen.host import load_compiled
from opgen.registry import Registry
from opgen.spec.model import load_all
from tests.compile_support import CHECKOUT, EXAMPLES, compiled, compiled_rust  # noqa: F401 (fixtures)
from tests.conftest import isolate_env, make_project
from tests.fake_openai import FakeOpenAI, reply_tool_call

runner = CliRunner()


def run_compile(*args: str) -> str:
    result = runner.invoke(app, ["compile", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_prints_where_every_op_came_from_and_writes_the_manifest(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = run_compile(f"{EXAMPLES / 'numeric.py'}:horner", "-o", str(tmp_path), "--root", str(CHECKOUT))
    manifest = json.loads((tmp_path / "horner.manifest.json").read_text())
    registry, specs = Registry(CHECKOUT / "generated"), load_all(CHECKOUT / "specs")
    assert [(k["op"], k["overload"]) for k in manifest["kernels"]] == [("operator.mul", "float"), ("operator.add", "float")]
    for k in manifest["kernels"]:
        entry = registry.lookup(k["op"], ["float", "float"], specs, "cpu-cpp")
        spec = specs[k["op"]]
        assert k["entry_hash"] == entry_hash(Kernel(spec, spec.overload(k["overload"]), entry))
        assert k["kernel_sha256"] == entry.data["files"]["kernel"]["sha256"]
        assert k["variant"] == entry.variant and k["target"] == "cpu-cpp"
        row = next(line for line in out.splitlines() if k["op"] in line)
        for cell in (k["overload"], "cpu-cpp", k["variant"], k["entry_hash"][:12], k["entry"]):
            assert cell in row, row
    assert "compiled" in out and "(xs: list[float], coeffs: list[float]) -> list[float]" in out
    assert manifest["params"] == [{"name": "xs", "type": "list[float]"}, {"name": "coeffs", "type": "list[float]"}]
    assert manifest["returns"] == {"type": "list[float]"}
    assert manifest["symbol"] == "opgen_compiled_horner"
    assert manifest["c_declaration"] == ("int32_t opgen_compiled_horner(const double* arg_xs, int64_t arg_xs_len, "
                                         "const double* arg_coeffs, int64_t arg_coeffs_len, opgen_list* out, "
                                         "opgen_error* err)")
    assert manifest["error_kinds"]["6"] == "KeyError"
    # A second compile of the unchanged function is a cache hit.
    assert "(cached build)" in run_compile(f"{EXAMPLES / 'numeric.py'}:horner", "-o", str(tmp_path / "again"))


def test_library_exports_only_its_entry_point_and_opgen_free(compiled: dict[str, Path]) -> None:
    lib = compiled["attend"] / "libattend.so"
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True).stdout
    strong = sorted(line.split()[-1] for line in symbols.splitlines() if line.split()[1] == "T")
    assert strong == ["opgen_compiled_attend"]  # the kernels' shims are linked in, hidden
    assert re.search(r" W opgen_free$", symbols, re.M)


def test_rust_kernels_ship_beside_the_library_and_load_on_first_use(compiled_rust: dict[str, Path]) -> None:
    out = compiled_rust["attend"]
    manifest = json.loads((out / "attend.manifest.json").read_text())
    assert [(k["op"], k["target"], k["library"]) for k in manifest["kernels"]] == [
        ("torch.nn.functional.softmax", "cpu-rust", "kernels/libopgen_torch_nn_functional_softmax__f32.so"),
        ("operator.matmul", "cpu-rust", "kernels/libopgen_operator_matmul__f32.so")]
    for k in manifest["kernels"]:
        exported = subprocess.run(["nm", "-D", "--defined-only", str(out / k["library"])], capture_output=True,
                                  text=True, check=True).stdout
        assert re.search(rf" T {k['c_symbol']}$", exported, re.M)
    lib = out / "libattend.so"
    needed = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    assert "opgen_" not in needed  # not a link-time dependency: found beside the library when first called
    cpp = (out / "attend.cpp").read_text()
    assert 'kernel_symbol("libopgen_operator_matmul__f32.so", "opgen_operator_matmul__f32")' in cpp
    assert attend_shape(load_compiled(out)) == (2, 4)


def attend_shape(attend) -> tuple[int, ...]:
    return tuple(attend(torch.zeros(2, 3), torch.ones(3, 4)).shape)


def test_emitted_cpp_reads_beside_the_python(compiled: dict[str, Path]) -> None:
    cpp = (compiled["prefix_queries"] / "prefix_queries.cpp").read_text()
    assert cpp.startswith("// @generated by opgen compile from examples/compile/prompts.py (function prefix_queries).")
    body = cpp[cpp.index("// ---- prefix_queries ----"):cpp.index("// ---- C-ABI entry point")]
    assert "// 14: prefix = TASK_PREFIXES[task]" in body
    assert "// 15: return [prefix + s for s in text]" in body
    # One statement per node: the table lookup, the comprehension, one kernel call per `+`.
    assert re.search(r"std::string t\d+ = table_TASK_PREFIXES\(\)\.at\(task\);", body)
    assert re.findall(r"= operator_add__str\(prefix, s\);  // operator.add \[str\]", body) != []
    assert 'std::string("task: search result | query: ", 29)' in cpp
    attend = (compiled["attend"] / "attend.cpp").read_text()
    assert "// out: gufunc (m,k),(k,n)->(m,n)" in attend
    assert 'shape_gufunc({{&a, {"m", "k"}}, {&b, {"k", "n"}}}, {"m", "n"})' in attend
    assert "t1 = torch_nn_functional_softmax__f32(scores, INT64_C(-1));" in attend


def test_constant_keys_are_looked_up_at_compile_time(compiled: dict[str, Path]) -> None:
    cpp = (compiled["prefix_for_search"] / "prefix_for_search.cpp").read_text()
    assert "table_" not in cpp  # TASK_PREFIXES["query"] was folded into a literal
    assert 'operator_add__str(std::string("task: search result | query: ", 29), s)' in cpp


def test_python_host_keeps_the_python_signature_and_types(compiled: dict[str, Path]) -> None:
    prefix = load_compiled(compiled["prefix_queries"])
    assert str(prefix.__signature__) == "(text, task='query')"
    assert prefix(text=["é"]) == ["task: search result | query: é"]
    with pytest.raises(KeyError) as info:
        prefix(["x"], "poetry")
    assert info.value.args == ("poetry",)
    with pytest.raises(TypeError, match="text must hold str"):
        prefix([1])
    sum_exp = load_compiled(compiled["sum_exp_over_axes"] / "sum_exp_over_axes.manifest.json")
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 10
    view = x[:, ::-1, ::2]  # strided, reversed: handed over as it is
    np.testing.assert_allclose(sum_exp(view, [0]), np.exp(view).sum(axis=0), rtol=1e-13)
    with pytest.raises(TypeError, match="x must have dtype float64, got float32"):
        sum_exp(x.astype(np.float32), [])
    result = sum_exp(x, [])
    assert result.base is not None and not result.flags.owndata  # the library's buffer, no copy
    attend = load_compiled(compiled["attend"] / "libattend.so")
    out = attend(torch.zeros(2, 3), torch.ones(3, 4))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32 and tuple(out.shape) == (2, 4)


def test_kernels_are_sealed_so_their_helpers_never_merge(tmp_path: Path) -> None:
    """Two kernels that both define opgen::kernels::helper (differently) in one library: each
    must keep its own. Without sealing the link fails, or worse, one helper silently wins."""
    unit = """\
#include <cstdint>
namespace opgen::kernels {
inline int64_t helper(int64_t x) { return x + ADD; }  // same mangled name in both units
template <class T> T twice(T x) { return helper(x) * 2; }
}
extern "C" __attribute__((visibility("default"))) int64_t NAME(int64_t x) { return opgen::kernels::twice(x); }
"""
    sources = {"a.cpp": unit.replace("ADD", "1").replace("NAME", "first"),
               "b.cpp": unit.replace("ADD", "100").replace("NAME", "second")}
    (result,) = build([BuildJob(name="sealed-test", sources=sources, sealed=(("a.cpp",), ("b.cpp",)))])
    assert result.ok, result.diagnostics
    lib = ctypes.CDLL(str(result.library))
    assert (lib.first(5), lib.second(5)) == (12, 210)


def test_a_kernel_linked_into_several_libraries_is_compiled_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sealed unit (a kernel and its shim) is built once per cache and linked by every library
    that holds it; a unit that does not compile fails only the libraries that link it, with its
    diagnostics."""
    monkeypatch.setenv("OPGEN_CACHE_DIR", str(tmp_path / "cache"))
    kernel = ('extern "C" __attribute__((visibility("default"))) long long twice(long long x) { return 2 * x; }\n')
    broken = 'extern "C" long long broken(long long x) { return x +; }\n'

    def library(name: str, body: str, unit: str = kernel) -> BuildJob:
        own = f'extern "C" long long twice(long long);\nextern "C" __attribute__((visibility("default"))) long long {name}(long long x) {{ {body} }}\n'
        return BuildJob(name=name, sources={"own.cpp": own, "k.cpp": unit}, sealed=(("k.cpp",),))

    first, second = build([library("plus_one", "return twice(x) + 1;")])[0], None
    assert first.ok and not first.cached, first.diagnostics
    units = [p.parent.name for p in (tmp_path / "cache" / "build").glob("*/sealed.o")]
    assert len(units) == 1
    unit_object = tmp_path / "cache" / "build" / units[0] / "k.cpp.o"
    compiled_at = unit_object.stat().st_mtime_ns
    second, failing = build([library("minus_one", "return twice(x) - 1;"), library("other", "return 0;", broken)])
    assert second.ok and not second.cached, second.diagnostics
    assert unit_object.stat().st_mtime_ns == compiled_at  # linked, not compiled again
    assert not (second.directory / "k.cpp.o").exists()
    assert len(list((tmp_path / "cache" / "build").glob("*/sealed.o"))) == 1  # the broken unit sealed nothing
    assert not failing.ok and failing.library is None and "error" in failing.diagnostics
    assert (ctypes.CDLL(str(first.library)).plus_one(5), ctypes.CDLL(str(second.library)).minus_one(5)) == (11, 9)


def test_synthesize_missing_admits_the_op_through_the_provider_and_goes_on(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")  # every spec, an empty registry
    source = tmp_path / "shift.py"
    source.write_text("def shift(xs: list[int], k: int) -> list[int]:\n    return [x + k for x in xs]\n")
    answer = (CHECKOUT / "answers" / "cpp" / "operator.add__int.cpp").read_text()
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp, root)
        without = runner.invoke(app, ["compile", f"{source}:shift", "-o", str(tmp_path / "out")])
        assert without.exit_code == 1
        assert "run `opgen synthesize operator.add --overload int --target cpp`" in without.output
        with FakeOpenAI([reply_tool_call({"source": answer, "notes": "scripted"}, model="scripted-coder")]) as server:
            mp.setenv("OPENAI_BASE_URL", server.base_url)
            mp.setenv("OPENAI_API_KEY", "test")
            mp.setenv("OPGEN_MODEL", "requested-model")
            out = run_compile(f"{source}:shift", "-o", str(tmp_path / "out"), "--synthesize-missing",
                              "--provider", "openai", "--examples", "30")
        assert len(server.requests) == 1 and server.remaining == 0
    assert "synthesizing operator.add [int] for cpu-cpp" in out
    manifest = json.loads((tmp_path / "out" / "shift.manifest.json").read_text())
    (kernel,) = manifest["kernels"]
    assert kernel["synthesized_by_this_compile"] is True
    assert kernel["provenance"]["model"] == "scripted-coder"
    assert (root / "generated" / "cpp" / "operator.add" / "int" / "entry.json").exists()
    shift = load_compiled(tmp_path / "out")
    assert shift([1, -2, 2**62], 3) == [4, 1, 2**62 + 3]
    with pytest.raises(OverflowError):
        shift([2**63 - 1], 1)


def test_synthesis_waits_for_the_types_an_abandoned_guess_would_have_asked_for(tmp_path: Path) -> None:
    """``out[-1] * 2`` is typed while ``out = []`` is still guessed list[int]; the append then shows it
    holds floats and typing starts again. Only the overloads of the settled typing are synthesized:
    never operator.mul [int], which only the abandoned guess called."""
    from opgen.compiler import compile_function
    from opgen.project import Project

    root = make_project(tmp_path / "project")  # an empty registry: every op is missing
    shipped, specs = Registry(CHECKOUT / "generated"), load_all(CHECKOUT / "specs")
    asked = []

    def synthesize(spec, overload):  # stands in for the provider: the shipped entry, asked for once each
        asked.append((spec.op, overload.name))
        return shipped.lookup(spec.op, [str(p.type) for p in overload.sig.params], specs)

    source = tmp_path / "running.py"
    source.write_text("def running(xs: list[float]) -> list[float]:\n"
                      "    out = []\n"
                      "    for x in xs:\n"
                      "        prev = out[-1] * 2 if out else 0.0\n"
                      "        out.append(x + prev)\n"
                      "    return out\n")
    compile_function(Project(root), source, "running", tmp_path / "out", synthesize=synthesize)
    assert sorted(asked) == [("operator.add", "float"), ("operator.mul", "float")]
    assert load_compiled(tmp_path / "out")([1.0, 2.0, 0.5]) == [1.0, 4.0, 8.5]
