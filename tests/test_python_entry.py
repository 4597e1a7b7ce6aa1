"""The native CPython entry `opgen compile` builds beside a library (opgen/compiler/python_entry.py):
every parameter and result kind gives what the ctypes host gives, bad arguments and kernel errors
raise the same exceptions with the same messages, keywords and defaults bind as Python binds them,
arrays and tensors go in as views of their own memory, and result buffers are released."""

from __future__ import annotations

import gc
import json
import math
import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch

from opgen.errors import OpgenError
from opgen.host import load_compiled
from tests.compile_support import CHECKOUT, BothHosts, compile_data_functions

SOURCE = CHECKOUT / "tests" / "data" / "python_entry.py"
NAMES = ("kinds", "tables", "scaled", "counts_of", "lookup", "divide", "big", "halves")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return compile_data_functions(tmp_path_factory, SOURCE, NAMES, "python-entry")


def kinds_args() -> list:
    return [3, 1.5, True, "héllo", [1, -2], [0.5, -0.0], [True, False], ["a", "é"], {"b": 2, "a": 1},
            np.arange(6, dtype=np.float32).reshape(2, 3)]


def test_the_manifest_records_the_entry_and_auto_uses_it(built: dict[str, Path]) -> None:
    manifest = json.loads((built["kinds"] / "kinds.manifest.json").read_text())
    record = manifest["python_entry"]
    assert (built["kinds"] / record["file"]).exists() and record["module"] == "_opgen_entry_kinds"
    assert load_compiled(built["kinds"]).host == "native"
    assert load_compiled(built["kinds"], host="ctypes").host == "ctypes"


def test_every_kind_crosses_as_through_ctypes(built: dict[str, Path]) -> None:
    kinds = BothHosts(built["kinds"])
    n, x, flag, s, ints, floats, flags, words, counts, a = kinds(*kinds_args())
    assert (n, x, flag, s) == (4, 3.0, False, "héllo!")
    assert (ints, floats, flags, words) == ([1, -2], [0.5, -0.0], [True, False], ["a", "é", "héllo"])
    assert math.copysign(1, floats[1]) == -1 and list(counts.items()) == [("b", 2), ("a", 1)]
    assert a.dtype == np.float32 and a.tolist() == [[1, 2, 3], [4, 5, 6]]
    # Values the C side hands to the host's conversion: NumPy scalars, tuples, a strided view.
    args = kinds_args()
    args[:3] = np.int64(3), np.float32(1.5), np.bool_(True)
    args[4], args[9] = (1, 2), np.arange(12, dtype=np.float32).reshape(3, 4)[::2, ::2]
    assert kinds(*args)[0] == 4 and kinds(*args)[9].tolist() == [[1, 3], [9, 11]]
    assert kinds(True, *kinds_args()[1:])[0] == 2  # a bool is an int to Python, as to the ctypes host
    tables = BothHosts(built["tables"])
    assert tables({"p": 0.25}, {"q": "x"}, {"p": True}) == {"q": "x", "p": "0.25 True"}
    assert tables({}, {}, {}) == {}


def test_half_precision_arrays_cross_as_through_ctypes(built: dict[str, Path]) -> None:
    halves = BothHosts(built["halves"])
    a, h = np.array([1, 2.5], ml_dtypes.bfloat16), np.array([0.5, -3], np.float16)
    double_a, double_h = halves(a, h)
    assert (double_a.dtype, double_h.dtype) == (a.dtype, h.dtype)
    assert double_a.tolist() == [2, 5] and double_h.tolist() == [1, -6]
    assert halves.native._entry.pointers(a, h) == (a.ctypes.data, h.ctypes.data)
    with pytest.raises(TypeError):
        halves(h, a)


@pytest.mark.parametrize("call", [
    lambda f: f(*kinds_args()[:-1]),                                         # too few
    lambda f: f(*kinds_args(), 1),                                           # too many
    lambda f: f(*kinds_args()[:-1], a=np.zeros(2, np.float32), n=1),          # n twice
    lambda f: f(*kinds_args(), z=1),                                         # unknown keyword
    lambda f: f(1.0, *kinds_args()[1:]),                                     # float for int
    lambda f: f(2**63, *kinds_args()[1:]),                                   # past int64
    lambda f: f(3, "1", *kinds_args()[2:]),                                  # str for float
    lambda f: f(3, 1.0, 1, *kinds_args()[3:]),                               # int for bool
    lambda f: f(3, 1.0, True, b"s", *kinds_args()[4:]),                      # bytes for str
    lambda f: f(3, 1.0, True, "\ud800", *kinds_args()[4:]),                  # a lone surrogate
    lambda f: f(*kinds_args()[:4], [1, "2"], *kinds_args()[5:]),             # a bad list item
    lambda f: f(*kinds_args()[:4], [1, -2**63 - 1], *kinds_args()[5:]),      # a list item past int64
    lambda f: f(*kinds_args()[:4], "12", *kinds_args()[5:]),                 # a str for a list
    lambda f: f(*kinds_args()[:7], ["a", None], *kinds_args()[8:]),          # None in list[str]
    lambda f: f(*kinds_args()[:8], {"a": 1.5}, kinds_args()[9]),             # a float dict value
    lambda f: f(*kinds_args()[:8], {1: 1}, kinds_args()[9]),                 # a non-str key
    lambda f: f(*kinds_args()[:8], [("a", 1)], kinds_args()[9]),             # a list for a dict
    lambda f: f(*kinds_args()[:9], np.zeros(3, np.float64)),                 # another dtype
    lambda f: f(*kinds_args()[:9], np.zeros(3, ">f4")),                      # another byte order
    lambda f: f(*kinds_args()[:9], [1.0, 2.0]),                              # a list for an array
    lambda f: f(*kinds_args()[:9], np.zeros(3, [("x", "f4")])),              # a structured dtype
], ids=lambda c: "")
def test_bad_arguments_raise_as_through_ctypes(built: dict[str, Path], call) -> None:
    with pytest.raises((TypeError, ValueError, OverflowError, UnicodeError)):
        call(BothHosts(built["kinds"]))


def test_keywords_and_defaults_bind_as_python_binds_them(built: dict[str, Path]) -> None:
    lookup = BothHosts(built["lookup"])
    d = {"a": 2}
    assert lookup(d, "a") == lookup(d, key="a") == lookup(key="a", d=d) == lookup(d, "a", 1) == 2
    assert lookup(scale=3, key="a", d=d) == lookup(d, "a", scale=3) == 6
    counts_of = BothHosts(built["counts_of"])
    assert counts_of(np.arange(3)).tolist() == [0, 1, 2] and counts_of(a=np.arange(3), shift=2).tolist() == [2, 3, 4]


def test_a_nonzero_status_raises_the_exception_the_kernel_names(built: dict[str, Path]) -> None:
    with pytest.raises(KeyError):
        BothHosts(built["lookup"])({"a": 1}, "b")
    with pytest.raises(ZeroDivisionError):
        BothHosts(built["divide"])(1, 0)
    with pytest.raises(OverflowError):
        BothHosts(built["lookup"])({"a": 2**62}, "a", 4)
    assert BothHosts(built["divide"])(-7, 2) == -4


def test_arrays_and_tensors_go_in_as_views_of_their_own_memory(built: dict[str, Path]) -> None:
    kinds = load_compiled(built["kinds"])
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for a in (base, base[1:, ::2], base.T, np.zeros((0, 3), np.float32)):
        assert kinds._entry.pointers(*kinds_args()[:-1], a)[9] == a.ctypes.data
    scaled = load_compiled(built["scaled"])
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    for view in (t, t[1:, 1:], t.T, torch.nn.Parameter(t.clone())):
        assert scaled._entry.pointers(view) == (view.data_ptr(), None)
    assert scaled._entry.pointers(base) == (base.ctypes.data, None)  # a NumPy array where torch was declared


def test_torch_tensors_cross_as_through_ctypes(built: dict[str, Path]) -> None:
    scaled = BothHosts(built["scaled"])
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    out = scaled(t[:, 1:], k=0.5)
    assert isinstance(out, torch.Tensor) and out.tolist() == [[0.5, 1.0], [2.0, 2.5]]
    assert scaled(torch.ones(2, requires_grad=True)).tolist() == [2.0, 2.0]
    for bad in (t.double(), torch._neg_view(t), t.to_sparse(), t.numpy().tolist()):
        with pytest.raises((TypeError, RuntimeError, ValueError)):
            scaled(bad)


def test_result_buffers_are_released(built: dict[str, Path]) -> None:
    kinds = load_compiled(built["kinds"])
    a = np.ones((512, 512), np.float32)  # 1 MiB a result
    args = kinds_args()[:-1]
    out = kinds(*args, a)[9]
    assert out.base is not None and type(out.base).__name__ == "PyCapsule"
    del out
    big = load_compiled(built["big"])
    gc.collect()
    before = _resident_bytes()
    for _ in range(300):  # 300 MiB of tensors and 300 MiB of strings if either leaked
        kinds(*args, a)
        big(1000)
    gc.collect()
    assert _resident_bytes() - before < 100 * 2**20


def test_without_a_usable_entry_the_host_is_ctypes(built: dict[str, Path], tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(built["divide"], old)
    manifest = old / "divide.manifest.json"
    data = json.loads(manifest.read_text())
    record = data.pop("python_entry")
    manifest.write_text(json.dumps(data))  # as a library compiled before the entry existed
    fn = load_compiled(old)
    assert fn.host == "ctypes" and "records none" in fn.native_unavailable and fn(7, 2) == 3
    with pytest.raises(OpgenError, match="no usable native entry"):
        load_compiled(old, host="native")
    manifest.write_text(json.dumps({**data, "python_entry": {**record, "python": "cpython-27"}}))
    assert "built for cpython-27" in load_compiled(old).native_unavailable
    (old / record["file"]).write_bytes(b"not a library")
    manifest.write_text(json.dumps({**data, "python_entry": record}))
    assert "does not import" in load_compiled(old).native_unavailable


def _resident_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096
