"""The registry: atomic admission, hashes, computed status, lookup by argument types."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from opgen.spec.abi import native_signature
from opgen.registry import Registry, sha256_file
from opgen.spec.model import Spec, load_spec

ROOT = Path(__file__).resolve().parents[1]
KERNEL = "// kernel\nint64_t f(int64_t a, int64_t b) { return a + b; }\n"
SHIM = "// @generated shim\n"


@pytest.fixture
def spec_file(tmp_path) -> Path:
    """A private copy of the shipped operator.add spec, free to edit."""
    path = tmp_path / "specs" / "operator" / "add.yaml"
    path.parent.mkdir(parents=True)
    shutil.copy(ROOT / "specs" / "operator" / "add.yaml", path)
    return path


@pytest.fixture
def spec(spec_file) -> Spec:
    return load_spec(spec_file)


@pytest.fixture
def registry(tmp_path) -> Registry:
    return Registry(tmp_path / "generated")


def entry_data(spec: Spec, overload: str) -> dict:
    o = spec.overload(overload)
    return {
        "op": spec.op,
        "overload": overload,
        "target": "cpu-cpp",
        "status": "verified",
        "signature": native_signature(spec.op, overload, o.sig),
        "spec": {"path": "specs/operator/add.yaml", "hash": spec.overload_hash(o)},
        "evidence": {"examples": 400},
    }


def admit(registry: Registry, spec: Spec, overload: str = "int", kernel: str = KERNEL, extra: dict | None = None):
    files = {"kernel": ("kernel.cpp", kernel), "shim": ("shim.cpp", SHIM), **(extra or {})}
    return registry.admit(spec.op, overload, "cpu-cpp", files, entry_data(spec, overload))


def test_admit_writes_the_entry_and_hashes_its_files(registry, spec):
    entry = admit(registry, spec)
    d = registry.root / "cpp" / "operator.add" / "int"
    assert entry.path == d
    assert sorted(p.name for p in d.iterdir()) == ["entry.json", "kernel.cpp", "shim.cpp"]
    assert (d / "kernel.cpp").read_text() == KERNEL
    data = json.loads((d / "entry.json").read_text())
    assert data["files"] == {
        "kernel": {"path": "kernel.cpp", "sha256": hashlib.sha256(KERNEL.encode()).hexdigest()},
        "shim": {"path": "shim.cpp", "sha256": hashlib.sha256(SHIM.encode()).hexdigest()},
    }
    assert data["files"]["kernel"]["sha256"] == sha256_file(d / "kernel.cpp")
    assert data["signature"]["returns"] == "int"
    assert entry.file("kernel") == d / "kernel.cpp"
    assert (entry.op, entry.overload, entry.target) == ("operator.add", "int", "cpu-cpp")


def test_a_fresh_entry_is_verified(registry, spec):
    entry = admit(registry, spec)
    assert entry.status(spec) == ("verified", [])
    assert registry.get("operator.add", "int", "cpu-cpp").status(spec) == ("verified", [])


def test_an_edited_kernel_makes_the_entry_stale(registry, spec):
    entry = admit(registry, spec)
    entry.file("kernel").write_text(KERNEL + "// a hand edit\n")
    status, reasons = registry.get("operator.add", "int", "cpu-cpp").status(spec)
    assert status == "stale"
    assert reasons == ["kernel file kernel.cpp changed since admission (sha256 differs)"]


def test_a_missing_file_makes_the_entry_stale(registry, spec):
    entry = admit(registry, spec)
    entry.file("shim").unlink()
    status, reasons = entry.status(spec)
    assert status == "stale"
    assert reasons == ["shim file shim.cpp is missing"]


def test_a_changed_tolerance_in_the_spec_makes_the_entry_stale(registry, spec, spec_file):
    admit(registry, spec, "float")
    text = spec_file.read_text()
    assert "float64: {rtol: 0.0, atol: 0.0," in text
    spec_file.write_text(text.replace("float64: {rtol: 0.0, atol: 0.0,", "float64: {rtol: 1.0e-15, atol: 0.0,", 1))
    changed = load_spec(spec_file)
    status, reasons = registry.get("operator.add", "float", "cpu-cpp").status(changed)
    assert (status, reasons) == ("stale", ["the spec changed since admission"])


def test_an_unrelated_overload_change_keeps_the_entry_verified(registry, spec, spec_file):
    admit(registry, spec, "int")
    spec_file.write_text(spec_file.read_text().replace("a: {max_len: 64}", "a: {max_len: 32}"))
    assert registry.get("operator.add", "int", "cpu-cpp").status(load_spec(spec_file)) == ("verified", [])


def test_a_removed_spec_or_overload_makes_the_entry_stale(registry, spec, tmp_path):
    entry = admit(registry, spec, "str")
    assert entry.status(None) == ("stale", ["its spec no longer exists"])
    other = tmp_path / "other.yaml"
    other.write_text(
        'op: operator.add\nsummary: s\nreference: operator.add\n'
        'overloads:\n  - name: int\n    signature: "(a: int, b: int) -> int"\n')
    assert entry.status(load_spec(other)) == ("stale", ["overload 'str' is gone from the spec"])


def test_readmission_replaces_the_entry_atomically(registry, spec):
    admit(registry, spec, extra={"transcript": ("transcript.json", "{}\n")})
    d = registry.root / "cpp" / "operator.add" / "int"
    assert (d / "transcript.json").exists()
    new_kernel = KERNEL.replace("a + b", "b + a")
    entry = admit(registry, spec, kernel=new_kernel)
    assert sorted(p.name for p in d.iterdir()) == ["entry.json", "kernel.cpp", "shim.cpp"]  # old files gone
    assert (d / "kernel.cpp").read_text() == new_kernel
    assert sorted(p.name for p in d.parent.iterdir()) == ["int"]  # no staged or old directories left
    assert entry.status(spec) == ("verified", [])
    assert [e.path for e in registry.entries()] == [d]


def test_entries_skip_leftover_staged_directories(registry, spec):
    admit(registry, spec, "int")
    admit(registry, spec, "str")
    # What a process killed mid-admission leaves behind: a complete-looking staged entry.
    staged = registry.root / "cpp" / "operator.add" / ".int.staged-abc123"
    staged.mkdir()
    (staged / "entry.json").write_text(json.dumps(entry_data(spec, "int")))
    assert [(e.op, e.overload) for e in registry.entries()] == [("operator.add", "int"), ("operator.add", "str")]


def test_lookup_by_argument_types(registry, spec):
    admit(registry, spec, "int")
    admit(registry, spec, "str")
    specs = {spec.op: spec}
    entry = registry.lookup("operator.add", ["int", "int"], specs)
    assert entry.overload == "int"
    assert entry.signature["returns"] == "int"
    assert [p["type"] for p in entry.signature["params"]] == ["int", "int"]
    assert registry.lookup("operator.add", ["str", "str"], specs).signature["returns"] == "str"


def test_lookup_of_unknown_types_names_the_fix(registry, spec):
    admit(registry, spec, "int")
    specs = {spec.op: spec}
    with pytest.raises(LookupError) as info:
        registry.lookup("operator.add", ["str", "int"], specs)
    assert str(info.value) == ("no verified cpu-cpp kernel for operator.add(str, int); "
                               "run `opgen synthesize operator.add --target cpp`")


def test_lookup_of_an_overload_without_an_entry(registry, spec):
    with pytest.raises(LookupError, match=r"no verified cpu-cpp kernel for operator\.add\(float, float\); "
                                          r"run `opgen synthesize operator\.add --target cpp`"):
        registry.lookup("operator.add", ["float", "float"], {spec.op: spec})


def test_lookup_of_an_op_without_a_spec(registry):
    with pytest.raises(LookupError, match=r"no spec for numpy\.tanh; add specs/numpy/tanh\.yaml"):
        registry.lookup("numpy.tanh", ["tensor[float32]"], {})


def test_lookup_refuses_a_stale_entry(registry, spec):
    entry = admit(registry, spec, "int")
    entry.file("kernel").write_text("tampered\n")
    with pytest.raises(LookupError) as info:
        registry.lookup("operator.add", ["int", "int"], {spec.op: spec})
    assert str(info.value) == (
        "operator.add (int, int) for cpu-cpp is stale: kernel file kernel.cpp changed since admission "
        "(sha256 differs); run `opgen verify operator.add` or `opgen synthesize operator.add`"
    )
