"""Corpus brick logic: find files, skip unchanged ones, parse, embed line windows, store atomically.

Order of writes for one document: vectors (LanceDB) first, then one DuckDB transaction. A crash in between
leaves the old ``documents`` row, so the next run sees a hash mismatch and redoes the document.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from schemas.settings import Settings
from tasks.corpus.embed import Embedder
from tasks.corpus.parse import (
    PARSER_VERSION,
    DocumentError,
    MissingPdfError,
    ParsedDocument,
    parse_pdf,
)
from tasks.corpus.windows import build_windows
from warehouse import corpus
from warehouse.db import Warehouse
from warehouse.runs import record_error
from warehouse.vectors import VectorStore


@dataclass
class ParseOutcome:
    path: Path
    doc_id: str | None
    n_bytes: int | None
    parsed: ParsedDocument | None = None
    error: DocumentError | None = None
    seconds: float = 0.0


@dataclass
class IngestSummary:
    run_id: str
    files: int = 0
    ingested: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    windows: int = 0
    parse_seconds: float = 0.0
    embed_seconds: float = 0.0
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "run_id": self.run_id, "files": self.files, "ingested": len(self.ingested),
            "skipped_unchanged": len(self.skipped), "failed": len(self.failed), "missing": len(self.missing),
            "windows": self.windows, "parse_seconds": round(self.parse_seconds, 2),
            "embed_seconds": round(self.embed_seconds, 2), "seconds": round(self.seconds, 2),
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


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def is_unchanged(wh: Warehouse, path: Path) -> bool:
    """Same bytes, same parser version, and the previous ingest finished (status ok)."""
    row = corpus.get_document(wh, str(path))
    if not row or row["status"] != "ok" or row["parser_version"] != PARSER_VERSION or not path.is_file():
        return False
    return row["doc_id"] == sha256_file(path)


@task(name="parse-pdf", cache_policy=NO_CACHE, retries=0)
def parse_document(path: Path) -> ParseOutcome:
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
    return ParseOutcome(path, doc_id, len(data), parsed=parsed, seconds=time.perf_counter() - t0)


def store_document(wh: Warehouse, vectors: VectorStore | None, embedder: Embedder | None, run_id: str,
                   outcome: ParseOutcome, settings: Settings, summary: IngestSummary) -> None:
    """Embed and store one parsed document (or record its failure)."""
    path = str(outcome.path)
    summary.parse_seconds += outcome.seconds
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
        return
    doc = outcome.parsed
    assert doc is not None
    if vectors is not None and embedder is not None:
        t0 = time.perf_counter()
        windows = build_windows(doc.lines, doc.toc, settings.ingest.window_lines, settings.ingest.window_stride)
        vecs = embedder.embed(windows["text"].to_list())
        vectors.replace_doc(doc.doc_id, windows, vecs, embedder.name)
        summary.windows += windows.height
        summary.embed_seconds += time.perf_counter() - t0
    orphan = corpus.replace_document(
        wh, run_id, path=path, doc_id=doc.doc_id, n_bytes=doc.n_bytes, pages=doc.pages,
        has_outline=doc.has_outline, toc_source=doc.toc_source, lines=doc.lines, toc=doc.toc,
        parser_version=PARSER_VERSION,
    )
    if orphan and vectors is not None:
        vectors.delete_doc(orphan)
    summary.ingested.append(path)


def vanished(wh: Warehouse, roots: list[Path], explicit: list[Path]) -> list[str]:
    """Documents previously ingested under a scanned folder that are no longer on disk."""
    gone = []
    for root in roots:
        gone.extend(p for p in corpus.documents_under(wh, root) if not Path(p).exists())
    return sorted(set(gone) - {str(p) for p in explicit})
