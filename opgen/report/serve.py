"""``opgen report --serve``: the static site over http.server on localhost (nothing else)."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        pass  # the CLI prints the address; per-request lines would drown it


def start(directory: Path, port: int = 0, host: str = "127.0.0.1") -> http.server.ThreadingHTTPServer:
    """Serve ``directory`` in a background thread; ``port=0`` picks a free port
    (``server.server_address[1]``). Stop it with ``server.shutdown(); server.server_close()``."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer((host, port), handler)
    threading.Thread(target=server.serve_forever, name="opgen-report-server", daemon=True).start()
    return server


def url(server: http.server.ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/index.html"
