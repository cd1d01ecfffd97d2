"""Prefect flow ``ingest``: PDFs -> lines, toc (DuckDB) + line-window vectors (LanceDB), incrementally."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from flows import console
from schemas.settings import Settings, get_settings
from tasks.corpus.embed import get_embedder
from tasks.corpus.ingest import (
    IngestSummary,
    ParseOutcome,
    discover,
    is_unchanged,
    parse_document,
    store_document,
    vanished,
)
from warehouse import corpus
from warehouse.db import Warehouse
from warehouse.runs import fails_run, finish_run, start_run
from warehouse.vectors import VectorStore


def ingest_into(wh: Warehouse, run_id: str, inputs: list[Path], settings: Settings,
                parse_many: Callable[[list[Path]], Iterable[ParseOutcome]] | None = None,
                log: Callable[[str], None] = print, embed: bool = True) -> IngestSummary:
    """Ingest files/folders into an open warehouse; shared by the flow, ``answer``/``evaluate`` and tests."""
    t0 = time.perf_counter()
    summary = IngestSummary(run_id=run_id)
    files, roots = discover(inputs)
    summary.files = len(files)
    todo = []
    for path in files:
        if is_unchanged(wh, path):
            summary.skipped.append(str(path))
        else:
            todo.append(path)
    console.tee(log)(f"ingest: {len(files)} file(s), {len(summary.skipped)} unchanged, {len(todo)} to parse")
    vectors = embedder = None
    if todo and embed:
        vectors = VectorStore(settings.lance_dir)
        embedder = get_embedder(settings.embedder.kind, settings.embedder.device, settings.ingest.embed_batch_size)
    parse_many = parse_many or (lambda paths: (parse_document.fn(p) for p in paths))
    bar = console.Progress("ingest", len(todo), unit=" files").start()
    for i, outcome in enumerate(parse_many(todo), start=1):
        store_document(wh, vectors, embedder, run_id, outcome, settings, summary)
        bar.update(note=outcome.path.name)
        if outcome.error is not None:
            console.tee(log)(f"[{i}/{len(todo)}] FAILED {outcome.path.name}: {outcome.error}")
        else:
            doc = outcome.parsed
            log(f"[{i}/{len(todo)}] {outcome.path.name}: {doc.pages} pages, {doc.lines.height} lines, "
                f"{doc.toc.height} sections ({doc.toc_source}), {outcome.seconds:.2f}s")
    bar.close()
    summary.missing = corpus.mark_missing(wh, run_id, vanished(wh, roots, files))
    for path in summary.missing:
        log(f"missing: {path} is gone; marked, no longer searched")
    summary.seconds = time.perf_counter() - t0
    return summary


def _parallel_parse(paths: list[Path]) -> Iterable[ParseOutcome]:
    futures = [parse_document.submit(p) for p in paths]
    for fut in as_completed(futures):
        yield fut.result()


@flow(name="ingest", task_runner=ThreadPoolTaskRunner(max_workers=2))
def ingest_flow(paths: list[str], home: str | None = None) -> dict:
    """Ingest PDF files or folders (recursive) into the warehouse at ``home`` (default ``ARBITER_HOME``)."""
    settings = get_settings(home)
    logger = get_run_logger()
    with Warehouse(settings.duckdb_path) as wh:
        run_id = start_run(wh, "ingest", {"paths": paths, "home": str(settings.home)})
        with fails_run(wh, run_id):
            summary = ingest_into(wh, run_id, [Path(p) for p in paths], settings, _parallel_parse, logger.info)
        status = "partial" if summary.failed else "ok"
        finish_run(wh, run_id, status, summary.as_dict())
        logger.info(
            f"ingest {run_id}: {len(summary.ingested)} ingested, {len(summary.skipped)} unchanged, "
            f"{len(summary.failed)} failed, {len(summary.missing)} missing in {summary.seconds:.1f}s"
        )
        return summary.as_dict()
