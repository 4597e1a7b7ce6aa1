"""print() in compiled code writes what Python's print writes (each value's str(), sep, end), to the
process's standard output (or, with file=sys.stderr, standard error), flushed at each call: checked from
Python (both hosts) and from Node.js in child processes, whose whole output on each stream is compared
with the Python function's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opgen.compiler import compile_function
from opgen.project import Project
from tests.compile_support import CHECKOUT, NODE_CLIENT

SOURCE = textwrap.dedent('''
    import sys


    def report(names: list[str], scores: list[float], verbose: bool) -> int:
        print("scoring", len(names), "items,", "verbose" if verbose else "quiet")
        print("warning:", len(names), "names", file=sys.stderr)
        for n, s in zip(names, scores):
            print(f"{n:>8}: {s:.3f}", s > 0.5, s, sep=" | ")
        print("done", end="!\\n", flush=True)
        print()
        print(sep="-", end="")
        print("to stdout by name", file=sys.stdout)
        print(end="", file=sys.stderr, flush=True)
        print("last", sep="", file=sys.stderr)
        return len(names)
''')
ARGS = (["a", "bé", "日本"], [0.25, 0.75, -1e300], True)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("print")
    source = tmp / "report.py"
    source.write_text(SOURCE)
    compile_function(Project(CHECKOUT), source, "report", tmp / "out")
    return source, tmp / "out"


def _run(argv: list[str]) -> tuple[str, str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def _python_output(source: Path) -> tuple[str, str]:
    return _run([sys.executable, "-c", f"import runpy; f = runpy.run_path({str(source)!r})['report']; "
                                       f"print(f(*{ARGS!r}))"])


@pytest.mark.parametrize("host", ["native", "ctypes"])
def test_print_writes_what_python_writes_from_python(compiled: tuple[Path, Path], host: str) -> None:
    source, out = compiled
    got = _run([sys.executable, "-c", "import sys; from opgen.host import load_compiled; "
                                      f"f = load_compiled({str(out)!r}, host={host!r}); r = f(*{ARGS!r}); "
                                      "sys.stdout.flush(); print(r)"])
    assert got == _python_output(source)


def test_print_writes_what_python_writes_from_node(compiled: tuple[Path, Path]) -> None:
    source, out = compiled
    node = shutil.which("node")
    assert node, "node is not on PATH; install Node.js 18 or newer"
    names, scores, verbose = ARGS
    script = (f"const {{ loadCompiled }} = require({json.dumps(str(NODE_CLIENT / 'src' / 'compiled.js'))});"
              f"const f = loadCompiled({json.dumps(str(out))});"
              f"const r = f({json.dumps(names)}, {json.dumps(scores)}, {json.dumps(verbose)});"
              "process.stdout.write(String(r) + '\\n');")
    assert _run([node, "-e", script]) == _python_output(source)


def test_print_to_another_file_is_refused_naming_the_streams(tmp_path: Path) -> None:
    from opgen.compiler.errors import CompileError

    source = tmp_path / "log.py"
    source.write_text("import io\n\n\ndef log(n: int) -> int:\n    print('x', file=io.StringIO())\n    return n\n")
    with pytest.raises(CompileError, match=r"print\(file=io.StringIO\(\)\) is not supported(.|\n)*sys.stderr"):
        compile_function(Project(CHECKOUT), source, "log", tmp_path / "out")
