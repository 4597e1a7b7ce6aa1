"""Shared fixtures: a throwaway opgen project and a clean environment to run it in.

``project`` is a temp project root (copies of the checkout's specs/ and prompts/,
an empty generated/) with $OPGEN_ROOT pointing at it and every OPENAI_* / OPGEN_*
variable cleared, so nothing from the developer's shell (an endpoint, a model, an
example count) leaks into a test. The build cache stays shared (OPGEN_CACHE_DIR) so
an unchanged candidate is compiled once per machine, not once per test.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
CACHE_DIR = CHECKOUT / ".opgen-cache"
# Proxies would route the loopback server's traffic elsewhere (httpx honours them).
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def make_project(root: Path) -> Path:
    """A project root holding copies of the checkout's specs and prompts and an empty registry."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(CHECKOUT / "specs", root / "specs")
    shutil.copytree(CHECKOUT / "prompts", root / "prompts")
    (root / "generated").mkdir()
    return root


def isolate_env(mp: pytest.MonkeyPatch, root: Path) -> None:
    """Clear OPENAI_*/OPGEN_* (and proxies), then point opgen at ``root`` and the shared build cache."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "OPGEN_")) or name in _PROXY_VARS:
            mp.delenv(name, raising=False)
    mp.setenv("OPGEN_ROOT", str(root))
    mp.setenv("OPGEN_CACHE_DIR", str(CACHE_DIR))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path / "project")
    isolate_env(monkeypatch, root)
    return root

