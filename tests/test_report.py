"""`opgen report`: the static site from the shipped registry (no nightly run needed), its
links, the chart, the Markdown summary and the localhost server."""

from __future__ import annotations

import re
import shutil
import urllib.request
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag

import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.project import Project
from opgen.registry import Registry
from opgen.report import build_site, collect
from opgen.report.charts import ratio_chart
from opgen.report.model import entry_status, worst
from opgen.report.serve import start, url
from tests.conftest import CHECKOUT
from tests.test_nightly_run import copy_entries

runner = CliRunner()


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key):
                self.refs.append(a[key])


@pytest.fixture
def report_project(project: Path) -> Path:
    copy_entries(project, {"numpy.exp", "operator.add"})
    shutil.copytree(CHECKOUT / "verification", project / "verification")  # the corpus, for the op pages
    return project


def test_site_has_every_op_and_no_broken_links(report_project: Path):
    index = build_site(Project(report_project))
    out = index.parent
    data = collect(Project(report_project))
    pages = sorted(out.rglob("*.html"))
    assert {p.name for p in (out / "ops").iterdir()} == {f"{op}.html" for op in data["ops"]}
    parsed = {}
    for page in pages:
        p = _Links()
        p.feed(page.read_text())
        parsed[page] = p
    for page, p in parsed.items():
        for ref in p.refs:
            if ref.startswith(("http:", "https:", "data:", "mailto:")):
                assert not ref.startswith("http"), f"{page.name} loads {ref}: the report must work offline"
                continue
            target, frag = urldefrag(ref)
            dest = (page.parent / target).resolve() if target else page
            assert dest.exists(), f"{page.relative_to(out)} links to missing {ref}"
            if frag and dest.suffix == ".html" and dest in parsed and not frag.startswith(("q=", "status=")):
                assert frag in parsed[dest].ids, f"{page.relative_to(out)} links to missing anchor {ref}"


def test_index_matrix_counts_and_op_page_content(report_project: Path):
    build_site(Project(report_project))
    out = report_project / "reports"
    html = (out / "index.html").read_text()
    # every overload of every spec is a row; the shipped exp/add entries are verified
    data = collect(Project(report_project))
    rows = re.findall(r'<tr class="op-row"', html)
    assert len(rows) == sum(len(op["overloads"]) for op in data["ops"].values())
    copied = [e for e in Registry(report_project / "generated").entries() if e.target == "cpu-cpp"]
    assert data["counts"]["cpu-cpp"]["verified"] == len(copied) >= 5  # exp f32/f64, add int/float/str, ...
    assert data["ops"]["numpy.exp"]["overloads"]["f64"]["matrix"]["cpu-cpp"] == "verified"
    assert data["ops"]["numpy.exp"]["overloads"]["f64"]["matrix"]["metal"] == "n/a"
    page = (out / "ops" / "numpy.exp.html").read_text()
    assert 'class="hl"' in page  # highlighted spec and source
    assert "numpy_exp__f64" in page and "Verification evidence" in page and "Provenance" in page
    assert "Transcript (" in page and "worst abs error" in page
    assert "exp_f64_taylor_degree4" in page  # the corpus entries about this op, with their sources
    assert "No registry entry" in (out / "ops" / "numpy.sum.html").read_text()
    assert "No nightly run is recorded" in (out / "nightly.html").read_text()


def test_cell_status_rules():
    assert worst(["verified", "failed"]) == "failed" and worst(["emulated", "verified"]) == "emulated"
    assert worst([]) == "n/a"
    failing = {"result": "fail", "kernel_sha256": "abc"}
    assert entry_status("verified", failing, "abc") == "failed"
    assert entry_status("verified", failing, "def") == "verified"  # re-admitted since the failing run
    assert entry_status("stale", None, "abc") == "stale"
    assert entry_status("emulated", {"result": "no_hardware", "kernel_sha256": "abc"}, "abc") == "emulated"


def test_ratio_chart_is_valid_svg_with_a_point_per_run():
    svg = ratio_chart([("n1", 0.8), ("n2", 1.3), ("n<3>", 1.1)])
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}circle")) == 3 and root.find(f"{ns}polyline") is not None
    assert "n&lt;3&gt;: 1.1x" in svg
    assert ratio_chart([]) == "" and ET.fromstring(ratio_chart([("only", 2.0)])) is not None


def test_markdown_summary_without_a_nightly_run(report_project: Path):
    r = runner.invoke(app, ["report", "--markdown", "--root", str(report_project)])
    assert r.exit_code == 0, r.output
    assert "no nightly run recorded yet" in r.output
    verified = sum(e.target == "cpu-cpp" for e in Registry(report_project / "generated").entries())
    assert re.search(rf"\| cpu-cpp \| 0 \| 0 \| \d+ \| 0 \| 0 \| {verified} \|", r.output)
    assert (report_project / "reports" / "summary.md").exists()


def test_served_over_localhost(report_project: Path):
    build_site(Project(report_project))
    server = start(report_project / "reports")
    try:
        with urllib.request.urlopen(url(server), timeout=10) as resp:
            assert resp.status == 200 and b"Coverage" in resp.read()
        with urllib.request.urlopen(url(server).replace("index.html", "assets/report.js"), timeout=10) as resp:
            assert resp.status == 200
    finally:
        server.shutdown()
        server.server_close()
