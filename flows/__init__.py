"""Prefect flows. Importing this package sets offline, quiet defaults (no telemetry, no hub downloads, no
weights-loading bar: the operator's terminal shows one bar per long stage, see flows/console.py)."""

import os

from schemas.settings import offline_environment

offline_environment()
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' tqdm bars read it at import


def _bound_malloc_arenas(arenas: int = 2) -> None:
    """At most ``arenas`` glibc malloc arenas (unless MALLOC_ARENA_MAX says otherwise): each thread that allocates
    (ingest's, Prefect's, onnxruntime's) otherwise gets an arena of its own, up to 8 per core, and keeps what it
    freed. An eval that ingested the Docugami 10-Qs and answered corpus-wide peaked at 2,177 MB, 1,916 MB with two
    arenas, every figure the same. Not glibc (macOS, musl): nothing to do."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return
    try:
        import ctypes  # here: only this start-up call needs it

        ctypes.CDLL("libc.so.6").mallopt(-8, arenas)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


_bound_malloc_arenas()
