"""The warehouse's errors, apart from the connection so that the call journal (``llm_log``) can raise them
without importing ``db``, which imports the journal to recover it on open."""


class WarehouseError(RuntimeError):
    """Terminal warehouse problem; the message says what to do."""


class WarehouseBusyError(WarehouseError):
    pass
