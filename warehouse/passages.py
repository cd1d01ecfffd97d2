"""LanceDB passages of the hybrid baseline (``tasks/evaluate/hybrid.py``): fixed passages of each document with their
vectors, searched by LanceDB's own hybrid search (its native full-text index and the vectors, fused by RRF).

One table, rows keyed by (doc_id, embedder, passage_no), added per document the first time an evaluation needs it
and kept: the passages are a function of the document's lines and the embedder, so a corpus is embedded once.
"""

from __future__ import annotations

import threading
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS
from lancedb.rerankers import RRFReranker

TABLE = "hybrid_passages"
RRF_K = 60  # the constant everybody uses (Cormack et al.), LanceDB's default too
POOL = 50  # passages each side of the fusion (full text, vectors) hands the reranker


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class PassageStore:
    def __init__(self, lance_dir: Path | str):
        if not (isinstance(lance_dir, str) and "://" in lance_dir):
            Path(lance_dir).mkdir(parents=True, exist_ok=True)
        self.db = lancedb.connect(str(lance_dir))
        self._lock = threading.Lock()
        self._indexed = False  # the full-text index covers every row (set once it is built after the last add)

    def _table(self):
        return self.db.open_table(TABLE) if TABLE in self.db.list_tables().tables else None

    def docs(self, embedder: str) -> set[str]:
        """The documents that have passages embedded by ``embedder``."""
        tbl = self._table()
        if tbl is None:
            return set()
        cols = tbl.search().where(f"embedder = {_quote(embedder)}").select(["doc_id"]).limit(None).to_arrow()
        return set(cols.column("doc_id").unique().to_pylist())

    def add(self, doc_id: str, pages: list[int], texts: list[str], vectors: np.ndarray, embedder: str) -> int:
        """The document's passages (replacing any of the same embedder); the full-text index is rebuilt on the
        next search."""
        if not (len(pages) == len(texts) == len(vectors)):
            raise ValueError(f"{len(pages)} pages, {len(texts)} texts, {len(vectors)} vectors for {doc_id}")
        dim = int(vectors.shape[1]) if len(vectors) else 0
        with self._lock:
            tbl = self._table()
            if tbl is not None:
                tbl.delete(f"doc_id = {_quote(doc_id)} AND embedder = {_quote(embedder)}")
            if not texts:
                return 0
            flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
            data = pa.table({"doc_id": pa.array([doc_id] * len(texts), pa.string()),
                             "embedder": pa.array([embedder] * len(texts), pa.string()),
                             "passage_no": pa.array(range(len(texts)), pa.int64()),
                             "page": pa.array(pages, pa.int64()), "text": pa.array(texts, pa.string()),
                             "vector": pa.FixedSizeListArray.from_arrays(flat, dim)})
            if tbl is None:
                self.db.create_table(TABLE, data=data)
            else:
                tbl.add(data)
            self._indexed = False
        return len(texts)

    def search(self, text: str, vector: np.ndarray, doc_ids: list[str] | None, embedder: str,
               k: int) -> list[tuple[str, int]]:
        """(doc_id, page) of the top ``k`` passages of LanceDB's hybrid search (full text + vectors, RRF) over the
        passages of ``embedder`` in ``doc_ids`` (None = every document)."""
        tbl = self._table()
        if tbl is None or not text.strip():
            return []
        with self._lock:
            if not self._indexed:
                tbl.create_index("text", config=FTS(), replace=True)
                self._indexed = True
        where = f"embedder = {_quote(embedder)}"
        if doc_ids is not None:
            where += f" AND doc_id IN ({', '.join(_quote(d) for d in doc_ids) or _quote('')})"
        query = (tbl.search(query_type="hybrid").vector(np.asarray(vector, dtype=np.float32)).text(text)
                 .where(where, prefilter=True).rerank(RRFReranker(K=RRF_K)).limit(max(k, POOL)))
        rows = query.to_arrow().select(["doc_id", "page"]).to_pylist()  # (a select on the query warns per call)
        return [(r["doc_id"], int(r["page"])) for r in rows[:k]]
