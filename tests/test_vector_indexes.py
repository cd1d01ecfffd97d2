"""warehouse.vectors after an ingest: the table compacted, doc_id indexed, a vector index from a size on (exact flat
search below it), and the doc-scoped vectors held for a bounded number of documents."""

from __future__ import annotations

import numpy as np
import polars as pl

from warehouse.vectors import VectorStore


def windows(doc_id: str, n: int) -> pl.DataFrame:
    return pl.DataFrame({"doc_id": [doc_id] * n, "window_id": list(range(n)), "page": [0] * n,
                         "line_start": list(range(n)), "line_end": list(range(n)), "section_id": [None] * n,
                         "text": [f"w{i}" for i in range(n)]}, schema_overrides={"section_id": pl.Int64})


def store(tmp_path, docs: int, n: int, **kw) -> VectorStore:
    vs = VectorStore(tmp_path / "lance", **kw)
    rng = np.random.default_rng(0)
    for d in range(docs):
        vs.replace_doc(f"d{d}", windows(f"d{d}", n), rng.standard_normal((n, 16)).astype(np.float32), "test")
    return vs


def test_maintain_indexes_doc_id_and_builds_the_vector_index_only_from_its_size(tmp_path):
    vs = store(tmp_path, 3, 200)
    flat = vs.search(np.ones(16, np.float32), None, 10)
    assert vs.maintain(ann_rows=10_000) == {"rows": 600, "doc_id_index": True}  # small: flat search, exact
    assert not vs._has_ann(vs.table())
    assert vs.search(np.ones(16, np.float32), None, 10).equals(flat)
    assert vs.maintain(ann_rows=500) == {"rows": 600, "vector_index": True}
    assert vs._has_ann(vs.table())
    found = vs.search(np.ones(16, np.float32), None, 10)
    assert found.height == 10 and set(found["doc_id"]) <= {"d0", "d1", "d2"}
    assert vs.count("d1") == 200  # doc-scoped reads through the doc_id index


def test_doc_scoped_vectors_are_kept_for_a_bounded_number_of_documents(tmp_path):
    vs = store(tmp_path, 5, 20, max_docs=2)
    q = np.ones(16, np.float32)
    for d in range(5):
        assert vs.search(q, [f"d{d}"], 3)["doc_id"].to_list() == [f"d{d}"] * 3
    assert list(vs._docs) == ["d3", "d4"]
    again = vs.search(q, ["d0"], 3)  # dropped, read again: the same windows
    assert again["doc_id"].to_list() == ["d0"] * 3 and list(vs._docs) == ["d4", "d0"]


def test_an_ingest_deletes_only_the_documents_the_table_holds_and_still_replaces_them(tmp_path, monkeypatch):
    vs = store(tmp_path, 2, 5)
    fresh = VectorStore(tmp_path / "lance", metadata_cache_mb=8, index_cache_mb=8)  # as an ingest opens it
    assert fresh.doc_embedders() == {"d0": {"test"}, "d1": {"test"}}
    deleted = []
    real = type(fresh.table()).delete
    monkeypatch.setattr(type(fresh.table()), "delete", lambda tbl, where: (deleted.append(where), real(tbl, where)))
    rng = np.random.default_rng(1)
    fresh.replace_doc("d2", windows("d2", 4), rng.standard_normal((4, 16)).astype(np.float32), "test")  # new
    fresh.replace_doc("d0", windows("d0", 3), rng.standard_normal((3, 16)).astype(np.float32), "test")  # held
    fresh.replace_doc("d2", windows("d2", 2), rng.standard_normal((2, 16)).astype(np.float32), "test")  # now held
    assert deleted == ["doc_id = 'd0'", "doc_id = 'd2'"]
    assert (fresh.count("d0"), fresh.count("d1"), fresh.count("d2")) == (3, 5, 2)
    fresh.delete_doc("d1")
    fresh.replace_doc("d1", windows("d1", 1), rng.standard_normal((1, 16)).astype(np.float32), "test")
    assert deleted[-1] == "doc_id = 'd1'" and fresh.count("d1") == 1  # deleted once, by delete_doc
