"""A work gate for concurrent questions: one question computes at a time, and its model calls wait outside it.

With 32 questions in flight in threads, the CPU work of each (detection, the arbiter's brief, dispatch, the
generation prompts) is Python under one interpreter lock. Left to the interpreter, every runnable thread gets a
5 ms slice in turn: 32 questions all progress slowly at once, each thread's working set is evicted by the
others', and a question that could already send its next call waits behind all of them (measured with
``benchmarks/throughput.py --fake-llm``: the question threads' CPU a question 1.6x what it is one at a time).
Held by the question's thread for its walk and let go inside :meth:`LLMClient.complete` (``released``), the gate
runs the work of one question to its next call, while the others wait on their calls, not on each other.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class WorkGate:
    def __init__(self):
        self._lock = threading.Lock()
        self._local = threading.local()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the gate for the block (a question's walk)."""
        with self._lock:
            self._local.held = True
            try:
                yield
            finally:
                self._local.held = False

    @contextmanager
    def released(self) -> Iterator[None]:
        """Let the gate go for the block (a model call), if this thread holds it; taken back after."""
        if not getattr(self._local, "held", False):
            yield
            return
        self._local.held = False
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()
            self._local.held = True
