"""What every ``opgen`` command shares: the consoles, the exit codes, error printing, progress
reporting and ``--json`` output. Commands import from here; nothing here imports a command.

* Results go to stdout (``out``); messages, progress and errors to stderr (``console``).
* ``progress(...)`` shows a live rich bar when stderr is a terminal, and otherwise (CI logs, a pipe,
  a file) prints one plain, flushed line per finished item: what, its result, its seconds.
* ``json_output(as_json)`` sends everything written to stdout while the work runs (library prints,
  Hypothesis, tqdm bars, native printf) to stderr, so that ``emit_json`` writes the only bytes on
  stdout: one JSON document.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from opgen.errors import AwaitingAnswer, OpgenError

# The exit codes, as documented in opgen.cli's docstring, README.md and `opgen --help`.
EXIT_OK = 0
EXIT_FAILED = 1  # nothing admitted, a rejection, a stale or failing entry, an error found after parsing
EXIT_USAGE = 2  # click's own: the command line does not parse (unknown option, missing argument, bad value)
EXIT_AWAITING = 3  # the file exchange wrote a prompt and waits for its answer

console = Console(stderr=True, soft_wrap=True)
# Piped output (CI logs, files) is not cut at 80 columns: op names must stay whole.
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200)

RootOpt = typer.Option(None, "--root", help="Project root holding specs/ and generated/ (default: $OPGEN_ROOT or the current directory).")
JsonOpt = typer.Option(False, "--json", help="Only JSON on stdout (everything else goes to stderr).")


def fail(exc: OpgenError) -> NoReturn:
    """Print an opgen error (no traceback) on stderr and exit 1, or 3 when an answer is awaited."""
    console.print("[bold red]error:[/]", escape(exc.render()), highlight=False)
    raise typer.Exit(EXIT_AWAITING if isinstance(exc, AwaitingAnswer) else EXIT_FAILED)


def plain(text: str, console_: Console | None = None) -> None:
    """Print text as it is (no markup, no highlighting: signatures hold [brackets]) on stdout."""
    (console_ or out).print(text, markup=False, highlight=False)


# ------------------------------------------------------------------------------- progress


class Tracker:
    """The ``done`` side of ``progress()``: one task of a live bar, or plain lines on stderr."""

    def __init__(self, label: str, total: int | None, bar: Progress | None):
        self.label, self.total, self.bar = label, total, bar
        self.count = 0
        self.started = self.last = time.monotonic()
        self._step: str | None = None
        self._phases: dict[str, Tracker] = {}
        self.task = bar.add_task(escape(label), total=total) if bar is not None else None

    @property
    def live(self) -> bool:
        return self.bar is not None

    def done(self, item: str, result: str = "done", seconds: float | None = None) -> None:
        """One item finished: advance the bar, or print ``label [n/N] item: result, S s (elapsed E s)``.
        ``seconds`` defaults to the time since the previous item finished (or the start)."""
        now = time.monotonic()
        seconds = now - self.last if seconds is None else seconds
        self.last = now
        self.count += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=escape(f"{self.label}: {item}"))
            return
        of = f"{self.count}/{self.total}" if self.total else str(self.count)
        _line(f"{self.label} [{of}] {item}: {result}, {seconds:.1f} s (elapsed {now - self.started:.0f} s)")

    def note(self, text: str) -> None:
        """What is under way (``building 40 kernels``): the bar's description, or a plain line."""
        if self.bar is not None:
            self.bar.update(self.task, description=escape(f"{self.label}: {text}"))
        else:
            _line(f"{self.label}: {text}")

    def describe(self, text: str) -> None:
        """A passing detail: shown on the live bar only, never printed as a line."""
        if self.bar is not None:
            self.bar.update(self.task, description=escape(f"{self.label}: {text}"))

    def step(self, item: str) -> None:
        """For callers told when an item *starts*: the previous item is done, ``item`` begins."""
        self.finish()
        self._step = item
        self.last = time.monotonic()
        self.describe(item)

    def finish(self) -> None:
        """Close the pending ``step`` item, if any (``progress()`` does this on exit)."""
        if self._step is not None:
            item, self._step = self._step, None
            self.done(item)
        for phase in self._phases.values():
            phase.finish()

    def set_total(self, total: int | None) -> None:
        self.total = total or None
        if self.bar is not None:
            self.bar.update(self.task, total=self.total)

    def phase(self, name: str, total: int | None = None) -> "Tracker":
        """A sub-task (nightly's verify, corpus, bench) on the same bar; its lines say ``label name``."""
        if name not in self._phases:
            self._phases[name] = Tracker(f"{self.label} {name}", total, self.bar)
        return self._phases[name]


def _line(text: str) -> None:
    stream = sys.stderr
    stream.write(text + "\n")
    stream.flush()


@contextmanager
def progress(label: str, total: int | None = None, *, transient: bool = True, live: bool | None = None,
             own_task: bool = True) -> Iterator[Tracker]:
    """Report a long command's items as they finish.

    On a terminal (stderr) a rich progress bar (``transient``: gone when done); anywhere else one
    flushed line per finished item, so that a CI log shows ``opgen verify --all`` going, not 19 silent
    minutes. ``live`` forces either way (tests). ``own_task=False``: no task of its own on the bar,
    only the ``phase()`` ones (nightly)."""
    live = console.is_terminal if live is None else live
    if not live:
        tracker = Tracker(label, total, None)
        try:
            yield tracker
        finally:
            tracker.finish()
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=transient) as bar:
        tracker = Tracker(label, total, bar)
        if not own_task:
            bar.remove_task(tracker.task)
        try:
            yield tracker
        finally:
            tracker.finish()


# ----------------------------------------------------------------------------------- json


@contextmanager
def json_output(enabled: bool = True) -> Iterator[None]:
    """While the work runs, send stdout to stderr: Python's ``sys.stdout`` and, where it can, file
    descriptor 1 (native prints, child processes). Restored on the way out, also on an exit or an
    error; then ``emit_json`` writes the document to the real stdout."""
    if not enabled:
        yield
        return
    real = sys.stdout
    _flush(real)
    saved_fd: int | None = None
    try:
        saved_fd = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no fd 1 or 2 (an embedding host): the Python-level redirect still holds
        if saved_fd is not None:
            os.close(saved_fd)
        saved_fd = None
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _flush(sys.stderr)
        _flush_native()
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)
        sys.stdout = real


def emit_json(data: Any) -> None:
    """The command's one JSON document, on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _flush(stream: Any) -> None:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):
        pass


def _flush_native() -> None:
    """C stdio buffers what native code printed while fd 1 pointed at stderr: flush it there."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass
