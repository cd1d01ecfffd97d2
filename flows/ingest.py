"""Prefect flow ``ingest``: PDFs -> lines, toc (DuckDB) + line-window vectors (LanceDB), incrementally.

Each file to (re)ingest is one ``process_document`` task (parse + embed, on whatever runs the tasks: two local
threads, the flow's task runner, or a Dask cluster of process workers); the flow alone writes what they return.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from flows import console
from schemas.settings import Settings, get_settings
from tasks.corpus.ingest import (
    EmbedSpec,
    IngestSummary,
    ParseOutcome,
    discover,
    is_unchanged,
    process_document,
    read_missing_identities,
    store_document,
    vanished,
)
from tasks.detect.corpus_wide import index_corpus
from warehouse import corpus
from warehouse.db import Warehouse
from warehouse.runs import fails_run, finish_run, start_run
from warehouse.vectors import VectorStore

# paths to process and the embedding to do (None: parse only) -> outcomes, in any order
ProcessMany = Callable[[list[Path], EmbedSpec | None], Iterable[ParseOutcome]]


# documents submitted ahead of the one being written, per thread: enough that a thread never waits for work while
# the writer stores a document, few enough that what is processed and not yet written stays a handful of documents
AHEAD_PER_WORKER = 4


def local_threads(workers: int = 2) -> ProcessMany:
    """Documents on ``workers`` threads of this process: one parses while another embeds (onnxruntime and
    PyMuPDF release the GIL; the embedder runs one forward pass at a time). Results come in the order of
    ``paths``, at most ``AHEAD_PER_WORKER * workers`` documents in flight: ``ThreadPoolExecutor.map`` submitted every
    document at once, and when parsing outran the writes the processed documents waited in memory (measured on a
    generated 10k-page corpus with the hash embedder: up to 271 documents, half the corpus; benchmarks/scale.py's
    ingest peak RSS grew ~35 MB per 1k pages)."""
    def process_many(paths: list[Path], spec: EmbedSpec | None) -> Iterable[ParseOutcome]:
        if workers <= 1 or len(paths) <= 1:
            yield from (process_document.fn(p, spec) for p in paths)
            return
        todo = iter(paths)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest") as pool:
            pending = deque(pool.submit(process_document.fn, p, spec)
                            for p in islice(todo, AHEAD_PER_WORKER * workers))
            try:
                while pending:
                    outcome = pending.popleft().result()
                    for p in islice(todo, 1):
                        pending.append(pool.submit(process_document.fn, p, spec))
                    yield outcome
            finally:  # stopped early: the documents not started are not processed
                for fut in pending:
                    fut.cancel()

    return process_many


# documents submitted to a task runner and not yet written: submitting every one at once let the processed ones
# (lines, windows, vectors) wait in memory for the writer, as local_threads did (issue #29)
TASKS_AHEAD = 16


def _bounded(submit: Callable[[Path], object], paths: list[Path], ahead: int = TASKS_AHEAD
             ) -> Iterable[ParseOutcome]:
    """Each path's outcome as its task finishes, at most ``ahead`` tasks submitted and not yet handed on."""
    todo = iter(paths)
    pending = [submit(p) for p in islice(todo, ahead)]
    try:
        while pending:
            fut = next(iter(as_completed(pending)))
            pending.remove(fut)
            pending.extend(submit(p) for p in islice(todo, 1))
            yield fut.result()
    finally:  # stopped early: the documents not started are not processed
        for fut in pending:
            fut.cancel()


def flow_tasks(paths: list[Path], spec: EmbedSpec | None) -> Iterable[ParseOutcome]:
    """Documents as tasks on the running flow's own task runner (threads, or Dask via ``with_options``)."""
    yield from _bounded(lambda p: process_document.submit(str(p), spec), paths)


def on_runner(runner) -> ProcessMany:
    """Documents as tasks on a task runner of their own (the nightly's ``[scale]`` Dask runner); None: the flow's."""
    def process_many(paths: list[Path], spec: EmbedSpec | None) -> Iterable[ParseOutcome]:
        if not paths:
            return
        if runner is None:
            yield from flow_tasks(paths, spec)
            return
        with runner.duplicate() as active:
            yield from _bounded(lambda p: active.submit(process_document, {"path": str(p), "spec": spec}), paths)

    return process_many


def ingest_into(wh: Warehouse, run_id: str, inputs: list[Path], settings: Settings,
                process_many: ProcessMany | None = None, log: Callable[[str], None] = print,
                embed: bool = True) -> IngestSummary:
    """Ingest files/folders into an open warehouse; shared by the flow, ``answer``/``evaluate`` and tests."""
    t0 = time.perf_counter()
    summary = IngestSummary(run_id=run_id)
    files, roots = discover(inputs)
    summary.files = len(files)
    vectors = VectorStore(settings.lance_dir, **settings.vector_store_options()) if embed else None
    spec = EmbedSpec.from_settings(settings) if embed else None
    stored = vectors.doc_embedders() if vectors is not None else None
    todo = []
    for path in files:
        if is_unchanged(wh, path, stored, spec.embedder_name if spec else None):
            summary.skipped.append(str(path))
        else:
            todo.append(path)
    # largest first: the last document to finish runs alone on one thread, so the small ones go last
    todo.sort(key=lambda p: p.stat().st_size if p.is_file() else 0, reverse=True)
    console.tee(log)(f"ingest: {len(files)} file(s), {len(summary.skipped)} unchanged, {len(todo)} to parse")
    summary.identified = read_missing_identities(wh, summary.skipped)
    if summary.identified:
        log(f"identity: {summary.identified} unchanged document(s) read from their stored first pages "
            "(no parse, no embedding)")
    process_many = process_many or local_threads(settings.ingest.parse_workers)
    bar = console.Progress("ingest", len(todo), unit=" files").start()
    for i, outcome in enumerate(process_many(todo, spec), start=1):
        store_document(wh, vectors, run_id, outcome, summary)
        bar.update(note=outcome.path.name)
        if outcome.error is not None:
            console.tee(log)(f"[{i}/{len(todo)}] FAILED {outcome.path.name}: {outcome.error}")
        else:
            doc = outcome.parsed
            n_win = outcome.windows.height if outcome.windows is not None else 0
            log(f"[{i}/{len(todo)}] {outcome.path.name}: {doc.pages} pages, {doc.lines.height} lines, "
                f"{doc.toc.height} sections ({doc.toc_source}), {n_win} windows; parse {outcome.seconds:.2f}s, "
                f"embed {outcome.embed_seconds:.2f}s")
    bar.close()
    summary.missing = corpus.mark_missing(wh, run_id, vanished(wh, roots, files))
    for path in summary.missing:
        log(f"missing: {path} is gone; marked, no longer searched")
    if todo or summary.missing:  # what corpus-wide detection searches, brought up to the documents written
        log(f"indexes: keyword postings {index_corpus(wh, settings)}, "
            f"vectors {vectors.maintain() if vectors is not None else {}}")
    summary.seconds = time.perf_counter() - t0
    return summary


@flow(name="ingest", task_runner=ThreadPoolTaskRunner(max_workers=2))
def ingest_flow(paths: list[str], home: str | None = None) -> dict:
    """Ingest PDF files or folders (recursive) into the warehouse at ``home`` (default ``ARBITER_HOME``)."""
    settings = get_settings(home)
    logger = get_run_logger()
    with Warehouse(settings.duckdb_path) as wh:
        run_id = start_run(wh, "ingest", {"paths": paths, "home": str(settings.home)})
        with fails_run(wh, run_id):
            summary = ingest_into(wh, run_id, [Path(p) for p in paths], settings, flow_tasks, logger.info)
        status = "partial" if summary.failed else "ok"
        finish_run(wh, run_id, status, summary.as_dict())
        logger.info(
            f"ingest {run_id}: {len(summary.ingested)} ingested, {len(summary.skipped)} unchanged, "
            f"{len(summary.failed)} failed, {len(summary.missing)} missing in {summary.seconds:.1f}s"
        )
        return summary.as_dict()
