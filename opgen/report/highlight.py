"""Syntax highlighting with pygments: static HTML spans, one stylesheet, no JavaScript."""

from __future__ import annotations

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CppLexer, CudaLexer, RustLexer, TextLexer, YamlLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

_FORMATTER = HtmlFormatter(cssclass="hl", wrapcode=True)
_BY_SUFFIX = {".cpp": CppLexer, ".hpp": CppLexer, ".h": CppLexer, ".cu": CudaLexer, ".cuh": CudaLexer,
              ".metal": CppLexer, ".rs": RustLexer, ".yaml": YamlLexer, ".yml": YamlLexer}


def source_html(text: str, filename: str) -> str:
    suffix = "." + filename.rsplit(".", 1)[-1] if "." in filename else ""
    lexer_cls = _BY_SUFFIX.get(suffix)
    if lexer_cls is not None:
        lexer = lexer_cls()
    else:
        try:
            lexer = get_lexer_for_filename(filename)
        except ClassNotFound:
            lexer = TextLexer()
    return highlight(text, lexer, _FORMATTER)


def stylesheet() -> str:
    return _FORMATTER.get_style_defs(".hl")
