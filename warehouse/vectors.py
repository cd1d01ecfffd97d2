"""LanceDB line-window vectors: one table, rows keyed by (doc_id, window_id), replaced per document.

Corpus-wide search is brute force (flat, exact) until the table holds ``ANN_ROWS`` rows, then through an ANN index
(:meth:`VectorStore.maintain`, after an ingest): below that, flat search is fast and exact and an IVF_PQ index was
probed and lost recall; above it, flat search grows with the corpus (issue #29: 0.8 s a question at 50k pages).
A BTREE index on ``doc_id`` serves the doc-scoped reads (a read scanned the table: 476 ms at 50k pages -> 7 ms).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import timedelta
from pathlib import Path

import lancedb
from lancedb.index import BTree, IvfPq
import numpy as np
import polars as pl
import pyarrow as pa
from threadpoolctl import ThreadpoolController

from schemas.settings import Settings

TABLE = "line_windows"
# The product runs on one BLAS thread. With OpenBLAS's own threads (one a core), each question's product left them
# spinning afterwards: measured on the Docugami home (2 cores), 4-8 ms of CPU a question burnt beside detection's
# ~9 ms, the same wall time. The lock keeps one thread's limit from being undone by another's exit.
_BLAS = ThreadpoolController()
_ONE_BLAS_THREAD = threading.Lock()
MAX_SCOPES = 16  # multi-document scopes whose concatenated vectors are kept
MAX_DOCS = 64  # documents whose vectors are kept for doc-scoped search (settings: detect.vector_documents)
# an ANN index from this many rows (Docugami's 20 10-Qs hold ~30k windows: exact, as before)
ANN_ROWS = 200_000
# IVF_PQ, a partition per ~4k rows, 48 partitions searched, 20 candidates re-ranked exactly per hit asked: probed on
# the 50k-page scale home (712k rows, 256 partitions: 40 searched -> recall@90 0.89 of flat search in 33 ms, 64 ->
# 0.92 in 45 ms, against 830 ms flat)
ANN_PARTITION_ROWS, ANN_NPROBES, ANN_REFINE = 4096, 48, 20
# versions older than this are deleted by maintain: a reader still on one fails, so not at once
KEEP_VERSIONS = timedelta(minutes=10)
# LanceDB's caches, per store (settings: lance_metadata_cache_mb, lance_index_cache_mb). Its defaults are 1 GB of
# metadata and 6 GB of index: an ingest writes a version a document, and the metadata cached for them grew with the
# square of the documents (104 MB after 500 generated documents, ~0.9 GB of RSS by the 50k pages' 2,002: issue #29)
METADATA_CACHE_MB = Settings.model_fields["lance_metadata_cache_mb"].default  # the settings' defaults, for a
INDEX_CACHE_MB = Settings.model_fields["lance_index_cache_mb"].default  # store opened without settings
_COLS = ["doc_id", "window_id", "page", "line_start", "line_end", "section_id", "text"]  # what a search returns


def _no_windows() -> pl.DataFrame:
    """An empty search result, with the columns and types of a full one."""
    return pl.DataFrame(schema={**{c: pl.Int64 for c in _COLS}, "doc_id": pl.String, "text": pl.String,
                                "_distance": pl.Float32})


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class VectorStore:
    def __init__(self, lance_dir: Path | str, max_docs: int = MAX_DOCS, metadata_cache_mb: int = METADATA_CACHE_MB,
                 index_cache_mb: int = INDEX_CACHE_MB):
        """``lance_dir``: a local folder (created) or an object-store URI (``s3://bucket/arbiter/lance``; LanceDB
        reads its credentials from the usual environment variables). ``max_docs``: documents whose vectors are kept
        in memory for doc-scoped search (least recently used dropped first). ``metadata_cache_mb``,
        ``index_cache_mb``: the bounds of LanceDB's own caches (file metadata; opened indexes)."""
        if isinstance(lance_dir, str) and "://" in lance_dir:
            self.dir = lance_dir
        else:
            self.dir = Path(lance_dir)
            self.dir.mkdir(parents=True, exist_ok=True)
        session = lancedb.Session(index_cache_size_bytes=index_cache_mb * 2**20,
                                  metadata_cache_size_bytes=metadata_cache_mb * 2**20)
        self.db = lancedb.connect(str(self.dir), session=session)
        self._lock = threading.RLock()
        self._table = None
        self._dim: int | None = None  # the stored vectors' dimension, read once (see dim)
        self._docs: OrderedDict[str, tuple[pl.DataFrame, np.ndarray]] = OrderedDict()  # doc_id -> (windows, vectors)
        self._max_docs = max_docs
        self._ann: bool | None = None  # whether the table has a vector index (read once)
        # the documents the table holds, once doc_embedders has read them (an ingest does, first): a new document's
        # replace_doc then skips its delete, a scan of every fragment's doc_id that an ingest paid a document
        self._stored: set[str] | None = None
        # a multi-document scope's windows and vectors, concatenated once rather than at every question of it
        self._scopes: OrderedDict[tuple[str, ...], tuple[pl.DataFrame, np.ndarray]] = OrderedDict()

    def _schema(self, dim: int) -> pa.Schema:
        return pa.schema(
            [
                pa.field("doc_id", pa.string()),
                pa.field("window_id", pa.int64()),
                pa.field("page", pa.int64()),
                pa.field("line_start", pa.int64()),
                pa.field("line_end", pa.int64()),
                pa.field("section_id", pa.int64()),
                pa.field("text", pa.string()),
                pa.field("embedder", pa.string()),
                pa.field("vector", pa.list_(pa.float32(), dim)),
            ]
        )

    def table(self):
        with self._lock:
            if self._table is None and TABLE in self.db.list_tables().tables:
                self._table = self.db.open_table(TABLE)
            return self._table

    def dim(self) -> int | None:
        """The stored vectors' dimension (None: no vectors yet). Read from the table's schema once: a LanceDB
        schema read is a round trip through its background event loop (~0.6 ms), which every question paid."""
        with self._lock:
            if self._dim is None:
                tbl = self.table()
                if tbl is not None:
                    self._dim = tbl.schema.field("vector").type.list_size
            return self._dim

    def replace_doc(self, doc_id: str, windows: pl.DataFrame, vectors: np.ndarray, embedder: str) -> int:
        """Delete the document's old vectors and add the new ones (a re-ingested, changed document)."""
        if windows.height != len(vectors):
            raise ValueError(f"{windows.height} windows but {len(vectors)} vectors for {doc_id}")
        dim = int(vectors.shape[1]) if len(vectors) else 0
        with self._lock:
            self._docs.pop(doc_id, None)
            self._scopes.clear()
            tbl = self.table()
            if tbl is not None and (self._stored is None or doc_id in self._stored):
                tbl.delete(f"doc_id = {_quote(doc_id)}")
            if windows.height == 0:
                self._forget(doc_id)
                return 0
            arrow = windows.select("doc_id", "window_id", "page", "line_start", "line_end", "section_id", "text")
            arrow = arrow.with_columns(pl.lit(embedder).alias("embedder")).to_arrow()
            flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
            arrow = arrow.append_column("vector", pa.FixedSizeListArray.from_arrays(flat, dim))
            arrow = arrow.cast(self._schema(dim))
            if tbl is None:
                self._table, self._dim = self.db.create_table(TABLE, data=arrow), None
            else:
                tbl.add(arrow)
            if self._stored is not None:
                self._stored.add(doc_id)
        return windows.height

    def _forget(self, doc_id: str) -> None:
        if self._stored is not None:
            self._stored.discard(doc_id)

    def delete_doc(self, doc_id: str) -> None:
        with self._lock:
            self._docs.pop(doc_id, None)
            self._scopes.clear()
            tbl = self.table()
            if tbl is not None:
                tbl.delete(f"doc_id = {_quote(doc_id)}")
            self._forget(doc_id)

    def doc_embedders(self) -> dict[str, set[str]]:
        """doc_id -> the names of the embedders its stored vectors came from (one, unless an ingest was torn)."""
        with self._lock:
            tbl = self.table()
            out: dict[str, set[str]] = {}
            if tbl is not None:
                # a scan of the two columns only (to_arrow would read every vector too)
                cols = tbl.search().select(["doc_id", "embedder"]).limit(None).to_arrow().to_pydict()
                for doc, name in zip(cols["doc_id"], cols["embedder"]):
                    out.setdefault(doc, set()).add(name)
            self._stored = set(out)  # what replace_doc must delete first; it keeps the set up to date
            return out

    def count(self, doc_id: str | None = None) -> int:
        tbl = self.table()
        if tbl is None:
            return 0
        return tbl.count_rows(f"doc_id = {_quote(doc_id)}" if doc_id else None)

    def search(self, vector: np.ndarray, doc_ids: list[str] | None, k: int) -> pl.DataFrame:
        """Top-k windows by cosine distance, restricted to ``doc_ids`` (None = whole corpus).

        Doc-scoped questions (the common case) are answered from the documents' vectors held in memory: an exact
        dot product over a few thousand unit vectors takes well under a millisecond, where a prefiltered LanceDB
        scan took ~50 ms a query. Corpus-wide questions go to LanceDB (exact, flat search).
        """
        tbl = self.table()
        if tbl is None:
            return _no_windows()
        if doc_ids is not None:
            return self._search_in_memory(np.asarray(vector, dtype=np.float32), doc_ids, k)
        q = tbl.search(np.asarray(vector, dtype=np.float32)).distance_type("cosine").select([*_COLS, "_distance"])
        if self._has_ann(tbl):
            q = q.nprobes(ANN_NPROBES).refine_factor(ANN_REFINE)
        with self._lock:
            return q.limit(k).to_polars()

    def _has_ann(self, tbl) -> bool:
        with self._lock:
            if self._ann is None:
                self._ann = any(i.columns == ["vector"] for i in tbl.list_indices())
            return self._ann

    def maintain(self, ann_rows: int = ANN_ROWS) -> dict:
        """After an ingest: merge the small fragments each document's write left (one a document) and delete
        versions older than :data:`KEEP_VERSIONS`, fold the new rows into the indexes, index ``doc_id`` (doc-scoped
        reads), and build the vector index once the table holds ``ann_rows`` rows. What it did, for the log."""
        with self._lock:
            tbl = self.table()
            if tbl is None:
                return {}
            done = {"rows": tbl.count_rows()}
            tbl.optimize(cleanup_older_than=KEEP_VERSIONS)
            names = {i.columns[0] for i in tbl.list_indices()}
            if "doc_id" not in names:
                tbl.create_index("doc_id", config=BTree())
                done["doc_id_index"] = True
            if "vector" not in names and done["rows"] >= ann_rows:
                tbl.create_index("vector", config=IvfPq(distance_type="cosine",
                                                        num_partitions=max(1, done["rows"] // ANN_PARTITION_ROWS),
                                                        num_sub_vectors=max(1, self.dim() // 8)))
                done["vector_index"] = True
            self._ann = None
            return done

    def _doc_vectors(self, doc_id: str) -> tuple[pl.DataFrame, np.ndarray]:
        with self._lock:
            if doc_id in self._docs:
                self._docs.move_to_end(doc_id)
            else:
                tbl = self.table()
                where = f"doc_id = {_quote(doc_id)}"
                n = tbl.count_rows(where)
                arrow = tbl.search().where(where).select([*_COLS, "vector"]).limit(max(n, 1)).to_arrow()
                frame = pl.from_arrow(arrow.drop_columns(["vector"])).sort("window_id")
                order = np.argsort(np.asarray(arrow.column("window_id").to_numpy()), kind="stable")
                vec = arrow.column("vector").combine_chunks()
                dim = vec.type.list_size if n else 0
                matrix = vec.flatten().to_numpy().reshape(-1, dim)[order] if n else np.zeros((0, 0), np.float32)
                self._docs[doc_id] = (frame, matrix.astype(np.float32, copy=False))
            found = self._docs[doc_id]
            while len(self._docs) > self._max_docs:
                self._docs.popitem(last=False)
            return found

    def _scope_vectors(self, doc_ids: list[str]) -> tuple[pl.DataFrame, np.ndarray] | None:
        """The scope's windows and vectors in scope order; None when it has none. Kept for the last
        ``MAX_SCOPES`` multi-document scopes (a question set asks many questions of the same filings)."""
        if len(doc_ids) == 1:
            frame, matrix = self._doc_vectors(doc_ids[0])
            return (frame, matrix) if frame.height else None
        key = tuple(doc_ids)
        with self._lock:
            if key in self._scopes:
                self._scopes.move_to_end(key)
                return self._scopes[key]
            parts = [(f, m) for f, m in (self._doc_vectors(d) for d in doc_ids) if f.height]
            if not parts:
                return None
            joined = (pl.concat([f for f, _ in parts]), np.concatenate([m for _, m in parts]))
            self._scopes[key] = joined
            while len(self._scopes) > MAX_SCOPES:
                self._scopes.popitem(last=False)
            return joined

    def _search_in_memory(self, vector: np.ndarray, doc_ids: list[str], k: int) -> pl.DataFrame:
        scope = self._scope_vectors(doc_ids)
        if scope is None:
            return _no_windows()
        frame, matrix = scope
        norm = float(np.linalg.norm(vector)) or 1.0
        with _ONE_BLAS_THREAD, _BLAS.limit(limits=1, user_api="blas"):
            dist = (1.0 - matrix @ (vector / norm)).astype(np.float32)
        top = np.argsort(dist, kind="stable")[:k]
        return frame[top.tolist()].with_columns(pl.Series("_distance", dist[top], dtype=pl.Float32))

