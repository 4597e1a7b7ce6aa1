"""A minimal Chrome DevTools Protocol driver for headless Chromium (Debian's package).

Why not Selenium or Puppeteer: both would be a second process or a Node toolchain around
the same protocol; the test needs five things (navigate, evaluate, click, type, screenshot)
plus the console and exception events, which CDP gives directly over one websocket.
Chromium is started with an empty profile and no background networking (this machine's
network is closed; Chromium's own update and sync traffic would only produce noise).
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

FLAGS = ["--headless=new", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
         "--disable-extensions", "--mute-audio", "--window-size=1280,900", "--remote-debugging-port=0",
         "--remote-allow-origins=*"]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if path := shutil.which(name):
            return path
    return None


class Browser:
    """One headless Chromium with one page. Use as a context manager."""

    def __init__(self, executable: str, timeout: float = 30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="opgen-chromium-")
        args = [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = self._devtools_port()
        pages = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout).read())
        page = next(p for p in pages if p.get("type") == "page")
        # Entered as a context manager (newer websockets warn otherwise); close() exits it.
        self.ws = connect(page["webSocketDebuggerUrl"], max_size=64 << 20, open_timeout=timeout).__enter__()
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    def _devtools_port(self) -> int:
        deadline = time.monotonic() + self.timeout
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                break
            seen.append(line)
            if m := re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line):
                # Keep draining stderr: a full pipe would block Chromium.
                threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
                return int(m.group(1))
        self.close()
        raise RuntimeError("Chromium did not start its DevTools endpoint:\n" + "".join(seen[-20:]))

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_for(self, method: str, since: int = 0) -> dict[str, Any]:
        """The first event named ``method`` at or after index ``since`` of ``events``."""
        deadline = time.monotonic() + self.timeout
        while True:
            for e in self.events[since:]:
                if e["method"] == method:
                    return e
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {method} event within {self.timeout} s")
            msg = json.loads(self.ws.recv(timeout=remaining))
            if "method" in msg:
                self.events.append(msg)

    def navigate(self, url: str) -> None:
        mark = len(self.events)
        self.send("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired", since=mark)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the middle of the element."""
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                            "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
                            "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def click_and_wait_for_load(self, selector: str) -> None:
        mark = len(self.events)
        self.click(selector)
        self.wait_for("Page.loadEventFired", since=mark)

    def type_into(self, selector: str, text: str) -> None:
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", text=text)

    def select(self, selector: str, value: str) -> None:
        """Choose an option of a <select>, as a user's choice does: set it, fire change."""
        self.evaluate(f"(() => {{ const s = document.querySelector({json.dumps(selector)}); s.value = {json.dumps(value)}; "
                      "s.dispatchEvent(new Event('change', {bubbles: true})); })()")

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and failed loads seen so far."""
        self.send("Runtime.evaluate", expression="0")  # drain events already queued
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append(f"console.{p['type']}: " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif e["method"] == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(f"exception: {d.get('text')} {d.get('exception', {}).get('description', '')}")
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                entry = p["entry"]
                out.append(f"log {entry['level']}: {entry.get('text')} {entry.get('url', '')}")
        return out

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.__exit__(None, None, None)
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
