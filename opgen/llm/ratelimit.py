"""One rate limiter for every request a run sends, whichever worker sends it.

Concurrent workers each hold an openai client, and the openai client retries a 429 on its own,
honouring Retry-After for the request that got it. Left at that, the other workers go on sending
into an endpoint that has just said "slow down", and a storm of 429s spends every worker's retry
budget at once. So every client's HTTP transport goes through one ``RateLimiter``:

* at most ``limit`` requests are in flight at once (``--jobs``);
* a 429 (or a 503 that says Retry-After) pauses *every* worker until the wait the server asked
  for has passed (exponential backoff when it did not say), and halves how many may be in flight;
* each success lets one more be in flight again, up to ``limit`` (additive increase,
  multiplicative decrease, as TCP does).

The limiter sits below the openai client's own retries, so each retry waits its turn as well.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Callable

from opgen.errors import Interrupted

try:  # openai >= 3 speaks through httpx2 (a fork of httpx with the same transport API); older ones through httpx
    import httpx2 as httpx
except ImportError:
    import httpx

# Statuses that mean "the endpoint is overloaded; come back later" rather than "this request is bad".
PAUSING_STATUSES = frozenset({429, 503})
MAX_PAUSE_S = 120.0   # a Retry-After beyond this is capped: a worker still re-checks its stop flag
FIRST_BACKOFF_S = 1.0  # a 429 without Retry-After: 1, 2, 4, ... seconds, reset by a success


@dataclass
class LimiterStats:
    requests: int = 0
    rate_limited: int = 0        # responses that paused everyone (429, or 503 with Retry-After)
    paused_s: float = 0.0        # wall time during which every worker was held back
    lowest_concurrency: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "rate_limited": self.rate_limited, "paused_s": round(self.paused_s, 3),
                "lowest_concurrency": self.lowest_concurrency}


class RateLimiter:
    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic):
        if limit < 1:
            raise ValueError(f"a rate limiter needs a limit of at least 1, not {limit}")
        self.limit = limit
        self.allowed = limit           # how many may be in flight now (shrinks after a 429)
        self.in_flight = 0
        self.not_before = 0.0          # no request starts before this (monotonic) time
        self._backoff = FIRST_BACKOFF_S
        self._clock = clock
        self._cond = threading.Condition()
        self.stats = LimiterStats(lowest_concurrency=limit)

    def acquire(self, stop: threading.Event | None = None) -> None:
        """Wait for a slot and for any pause to pass. Raises ``Interrupted`` if ``stop`` is set meanwhile."""
        with self._cond:
            while True:
                if stop is not None and stop.is_set():
                    raise Interrupted("the run was interrupted before this request was sent")
                wait = self.not_before - self._clock()
                if wait <= 0 and self.in_flight < self.allowed:
                    self.in_flight += 1
                    self.stats.requests += 1
                    return
                # Woken by a release; otherwise re-check at the end of the pause (or soon, to see stop).
                self._cond.wait(timeout=min(max(wait, 0.05), 0.5))

    def release(self, status: int | None, headers: httpx.Headers | dict[str, str] | None = None) -> None:
        """The request ended: with an HTTP status, or None when no response came (timeout, refused)."""
        with self._cond:
            self.in_flight -= 1
            pause = _retry_after(headers) if headers is not None else None
            if status in PAUSING_STATUSES and (status == 429 or pause is not None):
                if pause is None:
                    pause, self._backoff = self._backoff, min(self._backoff * 2, MAX_PAUSE_S)
                pause = min(pause, MAX_PAUSE_S)
                now = self._clock()
                until = now + pause
                if until > self.not_before:
                    self.stats.paused_s += until - max(self.not_before, now)
                    self.not_before = until
                self.allowed = max(1, self.allowed // 2)
                self.stats.rate_limited += 1
                self.stats.lowest_concurrency = min(self.stats.lowest_concurrency, self.allowed)
            elif status is not None and status < 400:
                self.allowed = min(self.limit, self.allowed + 1)
                self._backoff = FIRST_BACKOFF_S
            self._cond.notify_all()


def _retry_after(headers: httpx.Headers | dict[str, str]) -> float | None:
    """Seconds the server asked to wait: retry-after-ms, or Retry-After as seconds or an HTTP date."""
    get = headers.get
    ms = get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


class LimitedTransport(httpx.BaseTransport):
    """An httpx transport that takes a limiter slot around every request it sends."""

    def __init__(self, limiter: RateLimiter, stop: threading.Event | None = None,
                 inner: httpx.BaseTransport | None = None):
        self.limiter, self.stop = limiter, stop
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.limiter.acquire(self.stop)
        try:
            response = self.inner.handle_request(request)
        except BaseException:
            self.limiter.release(None)
            raise
        self.limiter.release(response.status_code, response.headers)
        return response

    def close(self) -> None:
        self.inner.close()
