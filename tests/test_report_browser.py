"""The report in a real browser: headless Chromium (Debian's `chromium`, installed by .ci/run)
loads the served index, follows a link to an op page with a mouse click, uses the filter,
takes screenshots, and the console stays clean (no errors, warnings, exceptions or failed loads).

Outside CI the test skips when Chromium is absent, saying how to install it; in CI
(``CI`` set) a missing Chromium is a failure, never a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from opgen.project import Project
from opgen.registry import Registry
from opgen.report import build_site
from opgen.report.serve import start, url
from tests.cdp import Browser, find_chromium
from tests.conftest import CHECKOUT
from tests.test_nightly_run import copy_entries

CHROMIUM = find_chromium()
# Where to keep the screenshots (read at import: the project fixture clears OPGEN_* variables).
SCREENSHOT_DIR = os.environ.get("OPGEN_SCREENSHOT_DIR")


def require_chromium(path: str | None, in_ci: bool) -> str:
    if path is None:
        if in_ci:
            pytest.fail("Chromium is not installed, and CI must run the browser test: .ci/run installs Debian's chromium")
        pytest.skip("Chromium is not installed; `apt-get install chromium` (Debian) to run the browser test")
    return path


@pytest.fixture
def chromium() -> str:
    return require_chromium(CHROMIUM, bool(os.environ.get("CI")))


PROJECT_ROOT: list[Path] = []  # the served project, for counting its entries


@pytest.fixture
def served(project: Path):
    copy_entries(project, {"numpy.exp", "operator.matmul", "operator.add"})
    PROJECT_ROOT[:] = [project]
    build_site(Project(project))
    server = start(project / "reports")
    yield url(server)
    server.shutdown()
    server.server_close()


def test_report_in_headless_chromium(chromium: str, served: str, tmp_path: Path):
    shots = Path(SCREENSHOT_DIR or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    with Browser(chromium) as b:
        b.navigate(served)
        assert b.evaluate("document.title") == "opgen · coverage"
        total = b.evaluate("document.querySelectorAll('#matrix tbody tr.op-row').length")
        assert total >= 10
        assert b.evaluate("document.getElementById('shown-count').textContent") == f"{total} of {total} overloads shown"
        b.screenshot(shots / "report-index.png")

        # The filter: text narrows to operator.matmul's four overloads (a bare "matmul" also finds
        # opgen.nn.int8_matmul); a status with no match shows the notice.
        b.type_into("#filter", "operator.matmul")
        visible = b.evaluate("Array.from(document.querySelectorAll('#matrix tbody tr.op-row'))"
                             ".filter(r => !r.hidden).map(r => r.dataset.op + ' ' + r.cells[1].textContent)")
        assert visible == ["operator.matmul f32", "operator.matmul f64", "operator.matmul f16", "operator.matmul bf16"]
        assert b.evaluate("location.hash") == "#q=operator.matmul"
        b.select("#status-filter", "failed")
        assert b.evaluate("document.getElementById('no-match').hidden") is False
        b.select("#status-filter", "verified")
        assert b.evaluate("document.querySelectorAll('#matrix tbody tr.op-row:not([hidden])').length") == 4
        b.screenshot(shots / "report-filtered.png")

        # Follow the (visible) link to the op page with a real click.
        b.click_and_wait_for_load("#matrix tbody tr.op-row:not([hidden]) a.op-link")
        assert b.evaluate("location.pathname").endswith("/ops/operator.matmul.html")
        assert b.evaluate("document.getElementById('op-title').textContent.trim()") == "operator.matmul"
        # One article per registry entry of the op (every target and variant copied above).
        entries = [e for e in Registry(PROJECT_ROOT[0] / "generated").entries() if e.op == "operator.matmul"]
        assert b.evaluate("document.querySelectorAll('article.entry').length") == len(entries) >= 2
        assert b.evaluate("document.querySelectorAll('.hl .k, .hl .kt').length") > 10  # highlighted C++
        b.screenshot(shots / "report-op.png")

        # The filter state survives a reload from the URL hash.
        b.navigate(served + "#q=exp&status=verified")
        assert b.evaluate("document.getElementById('filter').value") == "exp"
        assert b.evaluate("document.querySelectorAll('#matrix tbody tr.op-row:not([hidden])').length") == 2

        assert b.problems() == []
    for name in ("report-index.png", "report-filtered.png", "report-op.png"):
        data = (shots / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_missing_chromium_fails_in_ci_rather_than_skipping():
    """The guard above, checked directly: in CI the absence of Chromium must not hide the test."""
    with pytest.raises(pytest.fail.Exception, match="CI must run the browser test"):
        require_chromium(None, in_ci=True)
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        require_chromium(None, in_ci=False)
    assert require_chromium("/usr/bin/chromium", in_ci=True) == "/usr/bin/chromium"
