"""The coverage report: a static HTML site and a Markdown summary (``opgen report``)."""

from .markdown import render_markdown
from .model import collect
from .site import build_site

__all__ = ["build_site", "collect", "render_markdown"]
