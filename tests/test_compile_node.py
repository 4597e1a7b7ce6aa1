"""The Node.js client package's own tests (clients/node/test, node's test runner), run on the
example collection this session compiled. CI installs the package with `npm ci` first."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.compile_support import NODE_CLIENT, compiled  # noqa: F401 (a fixture)


def test_node_client_tests_pass(compiled: dict[str, Path]) -> None:
    node = shutil.which("node")
    assert node, "node is not on PATH; install Node.js 18 or newer"
    assert (NODE_CLIENT / "node_modules" / "koffi").is_dir(), "run `npm ci` in clients/node first"
    directory = next(iter(compiled.values())).parent
    proc = subprocess.run([node, "--test", "test/"], cwd=NODE_CLIENT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OPGEN_COMPILED_DIR": str(directory)})
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    passed = re.search(r"^# pass (\d+)$", proc.stdout, re.M)
    assert "# fail 0" in proc.stdout and passed and int(passed.group(1)) >= 7, proc.stdout[-2000:]
