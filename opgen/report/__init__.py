"""The coverage report: a static HTML site and a Markdown summary (``opgen report``)."""

from opgen.report.markdown import render_markdown
from opgen.report.model import collect
from opgen.report.site import build_site

__all__ = ["build_site", "collect", "render_markdown"]
