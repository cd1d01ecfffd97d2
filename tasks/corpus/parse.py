"""PDF -> ``lines`` and ``toc`` frames (DESIGN.md, corpus brick).

One ``page.get_text("dict")`` pass per page gives the lines (with the dominant span's size and weight, which heading
recovery needs); the table of contents comes from the PDF's outline, else from recovered headings, else one unit per
page. Unusable files raise a :class:`DocumentError` subclass whose message names the file and the remedy.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pymupdf

from tasks.corpus.sections import outline_sections, page_sections, recover_sections

PARSER_VERSION = "pymupdf-dict-1"

# Ligatures expanded and whitespace normalised by MuPDF; no image bytes (text only, and much faster).
_TEXT_FLAGS = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE
_BOLD_FLAG = 16
_BOLD_NAMES = ("bold", "black", "heavy")
# MuPDF is not thread-safe: calls into it are serialised so a thread-pool task runner cannot corrupt its state.
_MUPDF_LOCK = threading.Lock()
# MuPDF prints its errors and warnings ("MuPDF error: syntax error: could not parse color space") on the process's
# stdout, which corrupted `arbiter eval --json`. They are kept in its message store instead and logged per file.
pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.TOOLS.mupdf_display_warnings(False)
log = logging.getLogger("arbiter.parse")

LINE_SCHEMA = {
    "doc_id": pl.String,
    "page": pl.Int64,
    "line_no": pl.Int64,
    "text": pl.String,
    "bbox": pl.List(pl.Float64),
    "font_size": pl.Float64,
    "bold": pl.Boolean,
    "block_no": pl.Int64,
}


class DocumentError(Exception):
    """A file that cannot be ingested. ``kind`` is a short code; ``status`` is the ``documents.status`` value."""

    kind = "unreadable"
    status = "failed"

    def __init__(self, path: Path | str, message: str):
        self.path, self.message = str(path), message
        super().__init__(f"{self.path}: {message}")

    def __reduce__(self):  # picklable, for process-based task runners and persisted task results
        return type(self), (self.path, self.message)


class MissingPdfError(DocumentError):
    kind = "missing"
    status = "missing"


class NotAPdfError(DocumentError):
    kind = "not_pdf"


class CorruptPdfError(DocumentError):
    kind = "corrupt"


class EncryptedPdfError(DocumentError):
    kind = "encrypted"


class EmptyPdfError(DocumentError):
    kind = "empty"


class ImageOnlyPdfError(DocumentError):
    kind = "image_only"


@dataclass
class ParsedDocument:
    """One parsed PDF: ``lines`` (LINE_SCHEMA) and ``toc`` (sections.TOC_SCHEMA) frames plus document facts."""

    path: Path
    doc_id: str
    n_bytes: int
    pages: int
    has_outline: bool
    toc_source: str
    lines: pl.DataFrame
    toc: pl.DataFrame
    metadata: dict[str, str] = field(default_factory=dict)  # the PDF's own (title, author, subject, dates ...)


def parse_pdf(path: Path, data: bytes | None = None) -> ParsedDocument:
    """Parse one PDF (``data``: its bytes when already read) into lines and a toc; raises DocumentError subclasses."""
    path = Path(path)
    if data is None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise MissingPdfError(path, "file not found; check the corpus path or drop it from the input") from None
        except IsADirectoryError:
            raise NotAPdfError(path, "is a directory, not a PDF file; pass the PDF files it contains") from None
    if not data:
        raise EmptyPdfError(path, "file is empty (0 bytes); re-download or re-export it")
    if b"%PDF-" not in data[:1024]:
        head = data[:8]
        raise NotAPdfError(path, f"no %PDF- header (starts with {head!r}); convert it to PDF or leave it out")
    doc_id = hashlib.sha256(data).hexdigest()

    with _MUPDF_LOCK:
        pymupdf.TOOLS.mupdf_warnings(reset=True)
        try:
            doc = _open(path, data)
            try:
                columns = _extract_lines(doc, path)
                outline = doc.get_toc(simple=True)
                n_pages = doc.page_count
                metadata = _metadata(doc)
            finally:
                doc.close()
        finally:
            messages = [m for m in pymupdf.TOOLS.mupdf_warnings(reset=True).splitlines() if m.strip()]
    if messages:
        log.warning("%s: MuPDF reported %d problem(s) while reading it, e.g. %r", path.name, len(messages),
                    messages[0])

    if not columns["text"]:
        raise ImageOnlyPdfError(
            path, f"{n_pages} page(s) but no text layer (scanned or image-only); OCR it (`ocrmypdf in.pdf out.pdf`)"
        )
    lines = pl.DataFrame(columns).select(
        pl.lit(doc_id, dtype=pl.String).alias("doc_id"),
        pl.col("page").cast(pl.Int64),
        pl.int_range(pl.len(), dtype=pl.Int64).alias("line_no"),
        pl.col("text").cast(pl.String),
        pl.concat_list("x0", "y0", "x1", "y1").cast(pl.List(pl.Float64)).alias("bbox"),
        pl.col("font_size").cast(pl.Float64),
        pl.col("bold").cast(pl.Boolean),
        pl.col("block_no").cast(pl.Int64),
    )

    toc = outline_sections(lines, outline, doc_id, n_pages) if outline else None
    if toc is None:
        toc = recover_sections(lines, doc_id)
    if toc is None:
        toc = page_sections(lines, doc_id)
    return ParsedDocument(
        path=path,
        doc_id=doc_id,
        n_bytes=len(data),
        pages=n_pages,
        has_outline=bool(outline),
        toc_source=toc["source"][0],
        lines=lines,
        toc=toc,
        metadata=metadata,
    )


def _metadata(doc: pymupdf.Document) -> dict[str, str]:
    return {k: str(v) for k, v in (doc.metadata or {}).items() if v}


def read_metadata(path: Path | str) -> dict[str, str]:
    """A PDF's own metadata (title, author, subject, keywords, dates) without reading its pages: what the identity
    of a document ingested before identities existed needs beside its stored lines. Empty when the file is gone or
    unreadable (the identity then comes from its lines alone)."""
    with _MUPDF_LOCK:
        try:
            doc = pymupdf.open(str(path))
        except Exception:  # a missing or damaged file: no metadata, said by the identity's unread fields
            return {}
        try:
            return {} if doc.needs_pass else _metadata(doc)
        finally:
            doc.close()


def _open(path: Path, data: bytes) -> pymupdf.Document:
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except pymupdf.FileDataError as exc:
        msg = f"MuPDF cannot open it ({exc}); re-download or repair it (`qpdf in.pdf out.pdf`)"
        raise CorruptPdfError(path, msg) from exc
    if doc.needs_pass:
        doc.close()
        raise EncryptedPdfError(
            path, "password-protected; decrypt it first (e.g. `qpdf --decrypt --password=PASSWORD in.pdf out.pdf`)"
        )
    if doc.is_repaired and b"%%EOF" not in data[-1024:]:
        doc.close()  # MuPDF rebuilt a file cut short: its missing pages would come back silently empty
        raise CorruptPdfError(path, "truncated (no %%EOF marker; MuPDF had to rebuild it); re-download or re-export it")
    if doc.page_count == 0:
        repaired = doc.is_repaired
        doc.close()
        if repaired:
            raise CorruptPdfError(path, "damaged beyond repair (no readable page); re-download or re-export it")
        raise EmptyPdfError(path, "the PDF has no pages; re-export it from its source")
    return doc


def _extract_lines(doc: pymupdf.Document, path: Path) -> dict[str, list]:
    """Column lists of the document's lines, in extraction order; same-baseline fragments of a block are merged."""
    cols: dict[str, list] = {k: [] for k in ("page", "text", "x0", "y0", "x1", "y1", "font_size", "bold", "block_no")}
    for pno in range(doc.page_count):
        try:
            blocks = doc[pno].get_text("dict", flags=_TEXT_FLAGS)["blocks"]
        except Exception as exc:  # MuPDF raises FzErrorBase (a bare Exception) or RuntimeError on broken pages
            msg = f"page {pno} cannot be read ({exc}); repair it (`qpdf in.pdf out.pdf`)"
            raise CorruptPdfError(path, msg) from exc
        for block in blocks:
            prev = None  # [texts, x0, y0, x1, y1, best_chars, size, bold] of the pending line of this block
            for line in block.get("lines", ()):
                best_chars, size, bold, parts = 0, 0.0, False, []
                for span in line["spans"]:
                    t = span["text"]
                    parts.append(t)
                    n = len(t.strip())
                    if n > best_chars:
                        best_chars, size = n, span["size"]
                        bold = bool(span["flags"] & _BOLD_FLAG) or any(w in span["font"].lower() for w in _BOLD_NAMES)
                if not best_chars:
                    continue
                x0, y0, x1, y1 = line["bbox"]
                if prev is not None and line["dir"][1] == 0 and _same_row(prev, x0, y0, y1, size):
                    prev[0].append("".join(parts))
                    prev[1:5] = min(prev[1], x0), min(prev[2], y0), max(prev[3], x1), max(prev[4], y1)
                    if best_chars > prev[5]:
                        prev[5], prev[6], prev[7] = best_chars, size, bold
                    continue
                if prev is not None:
                    _emit(prev, cols, pno, block["number"])
                prev = [["".join(parts)], x0, y0, x1, y1, best_chars, size, bold]
                if line["dir"][1] != 0:  # rotated text is never merged
                    _emit(prev, cols, pno, block["number"])
                    prev = None
            if prev is not None:
                _emit(prev, cols, pno, block["number"])
    return cols


def _same_row(prev: list, x0: float, y0: float, y1: float, size: float) -> bool:
    """True when a line continues the pending one on the same baseline (a heading number split from its title)."""
    overlap = min(prev[4], y1) - max(prev[2], y0)
    return overlap >= 0.5 * min(prev[4] - prev[2], y1 - y0) and x0 >= prev[3] - 0.5 * size


def _emit(prev: list, cols: dict[str, list], pno: int, block_no: int) -> None:
    text = " ".join(" ".join(prev[0]).split())
    if not text:
        return
    cols["page"].append(pno)
    cols["text"].append(text)
    cols["x0"].append(prev[1])
    cols["y0"].append(prev[2])
    cols["x1"].append(prev[3])
    cols["y1"].append(prev[4])
    cols["font_size"].append(prev[6])
    cols["bold"].append(prev[7])
    cols["block_no"].append(block_no)
