"""Client-side rate limiting: requests per minute and tokens per minute, as two token buckets (thread-safe).

Staying under the provider's limits beats hitting 429s and sleeping on Retry-After. Each bucket refills
continuously at ``per_minute / 60`` per second up to ``burst_s`` seconds' worth; a call blocks until both buckets
hold what it asks for. A request larger than a bucket's capacity waits for a full bucket and leaves it in debt,
so the long-run rate still holds. Token reservations are settled against the usage the API reports.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class _Bucket:
    def __init__(self, per_minute: float, burst_s: float, now: float):
        if per_minute <= 0:
            raise ValueError(f"rate limit must be positive, got {per_minute}/minute; use None for no limit")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` (capped at capacity) is available; 0 when it is now."""
        need = min(amount, self.capacity) - self.level
        return max(0.0, need / self.rate)


class RateLimiter:
    """Blocks callers so that at most ``requests_per_minute`` requests and ``tokens_per_minute`` tokens pass."""

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        burst_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        now = clock()
        self._requests = _Bucket(requests_per_minute, burst_s, now) if requests_per_minute else None
        self._tokens = _Bucket(tokens_per_minute, burst_s, now) if tokens_per_minute else None
        self.waited_s = 0.0  # total time callers spent blocked, for reports and tests

    @property
    def limits_tokens(self) -> bool:
        """Whether callers need to estimate tokens at all (counting costs time; skip it when unlimited)."""
        return self._tokens is not None

    @property
    def active(self) -> bool:
        return self._requests is not None or self._tokens is not None

    def acquire(self, tokens: int = 0) -> float:
        """Block until one request of ``tokens`` tokens may go; returns the seconds waited."""
        if not self.active:
            return 0.0
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                delay = 0.0
                for bucket, amount in ((self._requests, 1), (self._tokens, tokens)):
                    if bucket is not None:
                        bucket.refill(now)
                        delay = max(delay, bucket.wait_for(amount))
                if delay <= 0.0:
                    if self._requests is not None:
                        self._requests.level -= 1
                    if self._tokens is not None:
                        self._tokens.level -= tokens
                    self.waited_s += waited
                    return waited
            self._sleep(delay)
            waited += delay

    def settle(self, reserved_tokens: int, used_tokens: int) -> None:
        """Give back (or take) the difference between the tokens reserved and those the API reported."""
        if self._tokens is None or reserved_tokens == used_tokens:
            return
        with self._lock:
            self._tokens.refill(self._clock())
            self._tokens.level = min(self._tokens.capacity, self._tokens.level + reserved_tokens - used_tokens)
