"""What an operator's terminal shows: a progress bar per long stage, the failures, the summary; nothing else.

Prefect's own console lines (every task run's 'Finished in state Completed()', the temporary server's banner) are
off unless ``--verbose`` (:func:`configure`); they still reach the API, so the Prefect UI shows every flow run and
its logs. Warnings and errors always reach the terminal. On a TTY a stage is one bar redrawn in place; elsewhere
(cron, CI, a pipe) it is a plain line every ``PLAIN_EVERY_S`` seconds and one at the end.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any, TextIO

PLAIN_EVERY_S = 15.0
FAILURES_SHOWN = 5
# verbose None: not configured (flows called from Python: Prefect's console shows its INFO lines as it always did)
_state: dict[str, bool | None] = {"verbose": None, "quiet": False}
_lock = threading.Lock()
_bar: "Progress | None" = None  # the bar on screen, cleared before any other line is printed


def configure(verbose: bool = False, quiet: bool = False) -> None:
    """Prefect's console handler at WARNING (or, ``verbose``, everything as before); ``quiet``: no bars either.
    Set before Prefect is imported (its logging config reads the variable) and applied to handlers already made."""
    _state.update(verbose=verbose, quiet=quiet)
    level = "INFO" if verbose else "WARNING"
    os.environ["PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL"] = level
    if "prefect" in sys.modules:
        for handler in logging.getLogger().handlers:
            if type(handler).__name__ == "PrefectConsoleHandler":
                handler.setLevel(level)


def tee(log):
    """``log`` (a flow's Prefect logger, shown on the terminal only with ``--verbose``) that also says the line
    when the terminal would not show it otherwise: for the few lines an operator should always see."""
    def both(message: str) -> None:
        log(message)
        if log is not print and _state["verbose"] is False:
            say(message)
    return both


def _stream() -> TextIO:
    return sys.stderr


def say(message: str, stream: TextIO | None = None) -> None:
    """One operator line on stderr (stdout stays for ``--json``), below any bar on screen."""
    stream = stream or _stream()
    with _lock:
        if _bar is not None:
            _bar.clear()
        print(message, file=stream, flush=True)
        if _bar is not None:
            _bar.draw(force=True)


class Progress:
    """One long stage: ``update()`` per item; a bar on a TTY, a plain line now and then elsewhere."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None, tty: bool | None = None,
                 every_s: float = PLAIN_EVERY_S, unit: str = "") -> None:
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream or _stream()
        self.tty = self.stream.isatty() if tty is None else tty
        self.every_s = every_s
        self.done = 0
        self.note = ""
        self.t0 = self._last = time.monotonic()
        self._drawn = 0.0
        self.enabled = not _state["quiet"] and total > 0

    def __enter__(self) -> "Progress":
        return self.start()

    def start(self) -> "Progress":
        """Show the bar (a TTY); ``close()`` ends it (also as a context manager)."""
        global _bar
        if self.enabled and self.tty:
            with _lock:
                _bar = self
                self.draw(force=True)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def update(self, n: int = 1, note: str = "") -> None:
        self.done += n
        self.note = note or self.note
        if not self.enabled:
            return
        now = time.monotonic()
        with _lock:
            if self.tty:
                self.draw()
            elif now - self._last >= self.every_s and self.done < self.total:
                self._last = now
                print(self.line(), file=self.stream, flush=True)

    def line(self) -> str:
        elapsed = time.monotonic() - self.t0
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else None
        eta = f", {left:.0f}s left" if left is not None and self.done < self.total else ""
        note = f"  {self.note}" if self.note else ""
        return f"{self.label}: {self.done}/{self.total}{self.unit} ({rate:.1f}/s, {elapsed:.0f}s{eta}){note}"

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._drawn < 0.1 and self.done < self.total:
            return  # at most ten redraws a second
        self._drawn = now
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r\x1b[2K[{bar}] {self.line()}"[:200])
        self.stream.flush()

    def clear(self) -> None:
        self.stream.write("\r\x1b[2K")
        self.stream.flush()

    def close(self) -> None:
        global _bar
        if not self.enabled:
            return
        with _lock:
            if self.tty:
                self.draw(force=True)
                self.stream.write("\n")
                self.stream.flush()
            else:
                print(self.line(), file=self.stream, flush=True)
            if _bar is self:
                _bar = None
        self.enabled = False


def failure_lines(run_id: str, failures: list[dict[str, Any]], total: int, db_path: str) -> list[str]:
    """The first few failures of a run, one line each, then how many more and where to see them all."""
    lines = [f"{total} failure(s) in run {run_id}:"] if total else []
    for f in failures[:FAILURES_SHOWN]:
        error = str(f["error"])
        said = error if error.startswith(f"{f['subject']}:") else f"{f['subject']}: {error}"
        lines.append(f"  {f['stage']} {said}")
    if total:
        more = f"{total - FAILURES_SHOWN} more; " if total > FAILURES_SHOWN else ""
        lines.append(f"  {more}all of them: duckdb {db_path} -c \"SELECT stage, subject, error FROM errors WHERE "
                     f"run_id = '{run_id}'\"  (runs: arbiter runs list)")
    return lines
