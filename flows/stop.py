"""A scheduler's stop (SIGTERM: a cron or Kubernetes timeout, a Prefect cancellation) ends a run cleanly.

The signal becomes :class:`warehouse.errors.RunStopped` in the main thread: the run's ``fails_run`` marks it
``interrupted`` with its resume command, what finished is already written (or flushed on the way out), the
warehouse closes (the call log lands), and the process exits through its normal path, so Prefect's exit hook
stops its temporary API server (a default SIGTERM ends Python without exit hooks and left that server behind).
"""

from __future__ import annotations

import signal
import threading

from warehouse.errors import RunStopped

EXIT_CODE = 128 + signal.SIGTERM  # what a shell reports for a process ended by SIGTERM


def _on_signal(signum: int, frame) -> None:
    signal.signal(signum, signal.SIG_DFL)  # a second SIGTERM ends the process at once (a SIGKILL's resume holds)
    raise RunStopped(signal.Signals(signum).name)


def install() -> None:
    """SIGTERM raises RunStopped in the main thread (signal handlers can only be set there; elsewhere a no-op)."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is not _on_signal:
        signal.signal(signal.SIGTERM, _on_signal)
