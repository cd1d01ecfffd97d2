"""Corpus brick logic: find files, skip unchanged ones, parse and embed (one task per file), store atomically.

``process_document`` is the unit of work a task runner distributes: it reads the PDF by path (no bytes are
shipped), parses it and embeds its windows with the worker's own embedder (loaded once per process, never
pickled), and returns lines, toc, windows and vectors. Only the flow writes (DuckDB has one writer).

Order of writes for one document: vectors (LanceDB) first, then one DuckDB transaction. A crash in between
leaves the old ``documents`` row, so the next run sees a hash mismatch and redoes the document.
"""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
from prefect import task
from prefect.cache_policies import NO_CACHE

from schemas.settings import Settings
from tasks.corpus.blocks import block_cache, window_vectors
from tasks.corpus.embed import embed_unique, embedder_name, thread_embedder
from tasks.corpus.identity import CALENDAR_PAGES, frame_lines, identity_json, load_identity, read_identity
from tasks.corpus.parse import (
    PARSER_VERSION,
    DocumentError,
    MissingPdfError,
    ParsedDocument,
    parse_pdf,
    read_metadata,
)
from tasks.corpus.windows import build_windows
from tasks.files import sha256_file
from warehouse import corpus
from warehouse.db import Warehouse
from warehouse.runs import record_error
from warehouse.vectors import VectorStore


@dataclass(frozen=True)
class EmbedSpec:
    """What a worker needs to embed a document: settings only (small, picklable); the model is loaded there."""

    kind: str = "minilm"
    device: str = "cpu"
    batch_size: int = 32
    threads: int = 0
    window_lines: int = 4
    window_stride: int = 2
    block_lines: int = 4
    block_cache_mb: int = 64

    @classmethod
    def from_settings(cls, settings: Settings, threads: int | None = None) -> EmbedSpec:
        return cls(kind=settings.embedder.kind, device=settings.embedder.device,
                   batch_size=settings.ingest.embed_batch_size,
                   threads=settings.embedder.threads if threads is None else threads,
                   window_lines=settings.ingest.window_lines, window_stride=settings.ingest.window_stride,
                   block_lines=settings.ingest.embed_block_lines,
                   block_cache_mb=settings.ingest.embed_block_cache_mb)

    @property
    def embedder_name(self) -> str:
        return embedder_name(self.kind, self.device)


@dataclass
class ParseOutcome:
    path: Path
    doc_id: str | None
    n_bytes: int | None
    parsed: ParsedDocument | None = None
    error: DocumentError | None = None
    seconds: float = 0.0
    windows: pl.DataFrame | None = None   # the embedded windows (build_windows, as BM25's) ...
    vectors: np.ndarray | None = None     # ... and their unit vectors, row for row
    embedder: str | None = None
    embedded: int = 0                     # sequences run through the model (blocks, or distinct texts)
    embed_seconds: float = 0.0
    identity: str | None = None           # what the document says it is (DocumentIdentity JSON)


@dataclass
class IngestSummary:
    run_id: str
    files: int = 0
    ingested: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    identified: int = 0  # unchanged documents whose identity was read from their stored lines
    windows: int = 0
    embedded: int = 0
    pages: int = 0
    parse_seconds: float = 0.0
    embed_seconds: float = 0.0
    write_seconds: float = 0.0
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "run_id": self.run_id, "files": self.files, "ingested": len(self.ingested),
            "skipped_unchanged": len(self.skipped), "failed": len(self.failed), "missing": len(self.missing),
            "identified": self.identified,
            "windows": self.windows, "embedded": self.embedded, "pages": self.pages,
            "parse_seconds": round(self.parse_seconds, 2), "embed_seconds": round(self.embed_seconds, 2),
            "write_seconds": round(self.write_seconds, 2), "seconds": round(self.seconds, 2),
            "errors": self.failed,
        }


def discover(inputs: list[Path]) -> tuple[list[Path], list[Path]]:
    """Files to ingest (explicit files of any type, *.pdf inside folders) and the folders scanned."""
    files: list[Path] = []
    roots: list[Path] = []
    for item in inputs:
        item = item.expanduser().resolve()
        if item.is_dir():
            roots.append(item)
            files.extend(sorted(p for p in item.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf"))
        else:
            files.append(item)  # a missing or non-PDF file still gets its documents row and error
    seen: set[Path] = set()
    return [f for f in files if not (f in seen or seen.add(f))], roots


def is_unchanged(wh: Warehouse, path: Path, stored: dict[str, set[str]] | None = None,
                 embedder: str | None = None) -> bool:
    """Same bytes, same parser version, and the previous ingest finished (status ok). With ``stored`` (doc_id ->
    the embedder names of its vectors, :meth:`VectorStore.doc_embedders`) and ``embedder`` (the one this ingest
    uses), also embedded by that embedder: after a model change an unchanged file is embedded again, or its
    vectors would come from another model than the questions' (a document without windows has none to redo)."""
    row = corpus.get_document(wh, str(path))
    if not row or row["status"] != "ok" or row["parser_version"] != PARSER_VERSION or not path.is_file():
        return False
    if row["doc_id"] != sha256_file(path):
        return False
    names = (stored or {}).get(row["doc_id"])
    return embedder is None or not names or names == {embedder}


def parse_outcome(path: Path) -> ParseOutcome:
    """Parse one file; a bad file is an outcome with its error, never an exception that stops the run."""
    t0 = time.perf_counter()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        err = MissingPdfError(path, "file not found; check the path (ingest takes files or folders)")
        return ParseOutcome(path, None, None, error=err, seconds=time.perf_counter() - t0)
    doc_id = hashlib.sha256(data).hexdigest()
    try:
        parsed = parse_pdf(path, data=data)
    except DocumentError as exc:
        return ParseOutcome(path, doc_id, len(data), error=exc, seconds=time.perf_counter() - t0)
    identity = identity_json(read_identity(frame_lines(parsed.lines), parsed.metadata))
    return ParseOutcome(path, doc_id, len(data), parsed=parsed, seconds=time.perf_counter() - t0, identity=identity)


def worker_threads() -> int:
    """On a Dask worker, its thread count (a process worker with one thread must not start an onnxruntime pool
    over every core: two such workers on two cores would each run two threads); elsewhere 0 (one per thread)."""
    dist = sys.modules.get("distributed")  # only loaded where Dask runs; this module never imports it
    if dist is None:
        return 0
    try:
        return int(getattr(dist.get_worker(), "nthreads", 0) or 0)
    except ValueError:  # not inside a Dask worker
        return 0


def embed_outcome(outcome: ParseOutcome, spec: EmbedSpec) -> ParseOutcome:
    """Add the document's embedding windows and vectors (this thread's embedder, loaded on first use)."""
    doc = outcome.parsed
    if doc is None:
        return outcome
    t0 = time.perf_counter()
    embedder = thread_embedder(spec.kind, spec.device, spec.batch_size, spec.threads or worker_threads())
    busy = getattr(embedder, "busy_seconds", None)
    b0 = busy() if busy else 0.0
    windows = build_windows(doc.lines, doc.toc, spec.window_lines, spec.window_stride)  # BM25's own windows
    if hasattr(embedder, "token_states"):  # each line through the model once, pooled into the windows
        outcome.vectors, outcome.embedded = window_vectors(embedder, doc.lines, doc.toc, windows, spec.block_lines,
                                                           block_cache(spec.block_cache_mb))
    else:  # the torch (GPU) and hash embedders embed each window's text; repeated texts once
        outcome.vectors, outcome.embedded = embed_unique(embedder, windows["text"].to_list())
    outcome.windows, outcome.embedder = windows, embedder.name
    # forward-pass time only where the embedder keeps it: not the wait while another thread's batch runs
    outcome.embed_seconds = busy() - b0 if busy else time.perf_counter() - t0
    return outcome


@task(name="parse-embed-pdf", cache_policy=NO_CACHE, retries=0)
def process_document(path: Path | str, spec: EmbedSpec | None = None) -> ParseOutcome:
    """Parse one file by path and, with ``spec``, embed its windows: the task a runner sends to its workers."""
    outcome = parse_outcome(Path(path))
    return embed_outcome(outcome, spec) if spec is not None else outcome


def store_document(wh: Warehouse, vectors: VectorStore | None, run_id: str, outcome: ParseOutcome,
                   summary: IngestSummary) -> None:
    """Store one processed document (its vectors first, then lines and toc) or record its failure."""
    path = str(outcome.path)
    summary.parse_seconds += outcome.seconds
    summary.embed_seconds += outcome.embed_seconds
    t0 = time.perf_counter()
    if outcome.error is not None:
        err = outcome.error
        orphan = corpus.record_failed_document(
            wh, run_id, path=path, doc_id=outcome.doc_id, n_bytes=outcome.n_bytes,
            status=getattr(err, "status", "failed"), error=f"{getattr(err, 'kind', 'error')}: {err}",
            parser_version=PARSER_VERSION,
        )
        if orphan and vectors is not None:
            vectors.delete_doc(orphan)
        record_error(wh, run_id, "ingest", path, f"{getattr(err, 'kind', 'error')}: {err}")
        summary.failed[path] = f"{getattr(err, 'kind', 'error')}: {err}"
        summary.write_seconds += time.perf_counter() - t0
        return
    doc = outcome.parsed
    assert doc is not None
    if vectors is not None and outcome.windows is not None:
        vectors.replace_doc(doc.doc_id, outcome.windows, outcome.vectors, outcome.embedder)
        summary.windows += outcome.windows.height
        summary.embedded += outcome.embedded
    orphan = corpus.replace_document(
        wh, run_id, path=path, doc_id=doc.doc_id, n_bytes=doc.n_bytes, pages=doc.pages,
        has_outline=doc.has_outline, toc_source=doc.toc_source, lines=doc.lines, toc=doc.toc,
        parser_version=PARSER_VERSION, identity=outcome.identity,
    )
    if orphan and vectors is not None:
        vectors.delete_doc(orphan)
    summary.ingested.append(path)
    summary.pages += doc.pages
    summary.write_seconds += time.perf_counter() - t0


def vanished(wh: Warehouse, roots: list[Path], explicit: list[Path]) -> list[str]:
    """Documents previously ingested under a scanned folder that are no longer on disk."""
    gone = []
    for root in roots:
        gone.extend(p for p in corpus.documents_under(wh, root) if not Path(p).exists())
    return sorted(set(gone) - {str(p) for p in explicit})


def read_missing_identities(wh: Warehouse, paths: list[str]) -> int:
    """The identity of each ingested document among ``paths`` that has none (or one read by an older version of
    ``tasks.corpus.identity``), read from its stored first pages and the file's metadata: a home ingested before
    identities existed gains them without a parse or an embedding. Returns how many were read."""
    read = 0
    for row in corpus.identities_to_read(wh, paths):
        if load_identity(row["identity"]) is not None:
            continue
        lines = frame_lines(corpus.first_lines(wh, row["doc_id"], CALENDAR_PAGES))
        corpus.set_identity(wh, row["path"], identity_json(read_identity(lines, read_metadata(row["path"]))))
        read += 1
    return read
