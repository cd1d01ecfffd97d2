"""The warehouse's errors, apart from the connection so that the call journal (``llm_log``) can raise them
without importing ``db``, which imports the journal to recover it on open; and the stop of a run, which the CLI
catches without loading DuckDB."""


class WarehouseError(RuntimeError):
    """Terminal warehouse problem; the message says what to do."""


class WarehouseBusyError(WarehouseError):
    pass


class RunStopped(BaseException):
    """The process was asked to stop (SIGTERM from a scheduler, a timeout, a Prefect cancellation). A
    BaseException, like KeyboardInterrupt, so that no per-question ``except Exception`` swallows it."""

    def __init__(self, signal_name: str = "SIGTERM"):
        super().__init__(f"stopped by {signal_name}")
        self.signal_name = signal_name
