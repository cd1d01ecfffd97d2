"""Corpus brick end to end (without the Prefect engine): incremental ingest, replacement, bad files, vanished files."""

from __future__ import annotations

import shutil
import time
import types
from pathlib import Path

import pytest

from flows import ingest as flow_ingest
from flows.ingest import ingest_into
from schemas.settings import get_settings
from tasks.corpus.embed import HashEmbedder
from tasks.corpus.sample.generate import generate_sample_corpus, write_bad_files
from warehouse import corpus
from warehouse.db import Warehouse
from warehouse.vectors import VectorStore


@pytest.fixture
def settings(tmp_path):
    return get_settings(home=tmp_path / "home", embedder={"kind": "hash"})


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return generate_sample_corpus(tmp_path_factory.mktemp("sample"))


def _ingest(settings, inputs):
    with Warehouse(settings.duckdb_path) as wh:
        return ingest_into(wh, "run-test", [Path(p) for p in inputs], settings, log=lambda m: None)


def test_ingest_sample_then_rerun_skips_everything(settings, sample, tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(sample.root / "docs", docs)
    first = _ingest(settings, [docs])
    assert len(first.ingested) == len(sample.pdfs) and not first.failed
    assert first.windows > 0
    with Warehouse(settings.duckdb_path) as wh:
        rows = corpus.list_documents(wh)
        assert {r["status"] for r in rows} == {"ok"}
        assert {r["toc_source"] for r in rows} >= {"outline", "headings"}
        n_lines = wh.scalar("SELECT count(*) FROM lines")
        assert n_lines == sum(r["n_lines"] for r in rows)
    second = _ingest(settings, [docs])
    assert second.ingested == [] and len(second.skipped) == len(sample.pdfs)
    with Warehouse(settings.duckdb_path) as wh:
        assert wh.scalar("SELECT count(*) FROM lines") == n_lines  # no duplicates
    assert VectorStore(settings.lance_dir).count() == first.windows


def test_unchanged_files_embedded_by_another_model_are_embedded_again(settings, sample, tmp_path, monkeypatch):
    """A new embedder (a model upgrade) re-embeds unchanged files: their vectors must come from the model that
    embeds the questions; once they do, the next run skips them again."""
    docs = tmp_path / "docs"
    shutil.copytree(sample.root / "docs", docs)
    first = _ingest(settings, [docs])
    assert VectorStore(settings.lance_dir).doc_embedders().values() and all(
        names == {HashEmbedder.name} for names in VectorStore(settings.lance_dir).doc_embedders().values())
    monkeypatch.setattr(HashEmbedder, "name", "hash-bow-256-next")
    second = _ingest(settings, [docs])
    assert len(second.ingested) == len(sample.pdfs) and second.skipped == []
    store = VectorStore(settings.lance_dir)
    assert store.count() == first.windows  # replaced, not added
    assert set().union(*store.doc_embedders().values()) == {"hash-bow-256-next"}
    third = _ingest(settings, [docs])
    assert third.ingested == [] and len(third.skipped) == len(sample.pdfs)


def test_changed_file_replaces_rows_and_vectors(settings, sample, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    target = docs / "policy.pdf"
    shutil.copy(sample.root / "docs" / "insurance_policy.pdf", target)
    _ingest(settings, [docs])
    with Warehouse(settings.duckdb_path) as wh:
        old_id = corpus.get_document(wh, str(target.resolve()))["doc_id"]
    shutil.copy(sample.root / "docs" / "vendor_note.pdf", target)  # same path, new bytes
    again = _ingest(settings, [docs])
    assert again.ingested == [str(target.resolve())]
    with Warehouse(settings.duckdb_path) as wh:
        new_id = corpus.get_document(wh, str(target.resolve()))["doc_id"]
        assert new_id != old_id
        assert wh.scalar("SELECT count(*) FROM lines WHERE doc_id = ?", [old_id]) == 0
        assert wh.scalar("SELECT count(*) FROM toc WHERE doc_id = ?", [old_id]) == 0
        assert wh.scalar("SELECT count(*) FROM lines WHERE doc_id = ?", [new_id]) > 0
    store = VectorStore(settings.lance_dir)
    assert store.count(old_id) == 0 and store.count(new_id) > 0


def test_vanished_file_is_marked_missing(settings, sample, tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(sample.root / "docs", docs)
    _ingest(settings, [docs])
    gone = docs / "vendor_note.pdf"
    gone.unlink()
    summary = _ingest(settings, [docs])
    assert summary.missing == [str(gone.resolve())]
    with Warehouse(settings.duckdb_path) as wh:
        row = corpus.get_document(wh, str(gone.resolve()))
        assert row["status"] == "missing" and "no longer exists" in row["error"]
        assert str(gone.resolve()) not in corpus.doc_ids_for_paths(wh, [str(gone.resolve())]) or \
            corpus.doc_ids_for_paths(wh, [str(gone.resolve())])[str(gone.resolve())] is None


def test_bad_files_recorded_and_rest_ingested(settings, sample, tmp_path):
    bad = write_bad_files(tmp_path / "bad")
    inputs = [*bad.values(), sample.root / "docs" / "vendor_note.pdf", tmp_path / "does_not_exist.pdf"]
    summary = _ingest(settings, inputs)
    assert len(summary.ingested) == 1
    assert len(summary.failed) == len(bad) + 1
    with Warehouse(settings.duckdb_path) as wh:
        by_name = {Path(r["path"]).name: r for r in corpus.list_documents(wh)}
        errors = wh.query("SELECT subject, error FROM errors WHERE stage = 'ingest'")
    assert len(errors) == len(bad) + 1
    expect = {"corrupt.pdf": "corrupt", "encrypted.pdf": "encrypted", "empty.pdf": "empty",
              "image_only.pdf": "image_only", "not_a_pdf.pdf": "not_pdf", "does_not_exist.pdf": "missing"}
    for name, kind in expect.items():
        assert by_name[name]["status"] in ("failed", "missing")
        assert by_name[name]["error"].startswith(kind + ":"), by_name[name]["error"]
    assert by_name["vendor_note.pdf"]["status"] == "ok"


def test_local_threads_keep_few_documents_ahead_of_the_writer(monkeypatch):
    """Outcomes come in the order of the paths, and however slow the writer, at most ``AHEAD_PER_WORKER`` documents
    a thread are processed ahead of it (every document used to be submitted at once)."""
    started: list[int] = []
    monkeypatch.setattr(flow_ingest, "process_document",
                        types.SimpleNamespace(fn=lambda p, spec: started.append(p) or p))
    taken, ahead = [], 0
    for outcome in flow_ingest.local_threads(2)(list(range(40)), None):
        taken.append(outcome)
        ahead = max(ahead, len(started) - len(taken))
        time.sleep(0.002)  # a writer slower than the workers
    assert taken == list(range(40))
    assert ahead <= flow_ingest.AHEAD_PER_WORKER * 2


def test_task_runner_paths_keep_few_documents_submitted_ahead_of_the_writer(monkeypatch):
    """``arbiter ingest``/``eval`` (the flow's task runner) and the nightly's runner submit at most ``TASKS_AHEAD``
    documents not yet handed to the writer (they used to submit every document at once); every outcome comes."""
    import concurrent.futures as cf

    monkeypatch.setattr(flow_ingest, "as_completed", cf.as_completed)  # the same contract on plain futures
    submitted, taken, ahead = [], [], 0
    with cf.ThreadPoolExecutor(4) as pool:
        def submit(p):
            submitted.append(p)
            return pool.submit(lambda: p)

        for outcome in flow_ingest._bounded(submit, list(range(60)), ahead=5):
            taken.append(outcome)
            ahead = max(ahead, len(submitted) - len(taken))
            time.sleep(0.002)  # a writer slower than the workers
    assert sorted(taken) == list(range(60))
    assert ahead <= 5
