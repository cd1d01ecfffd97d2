"""The whole pipeline on the generated sample corpus, without the Prefect engine: every table filled, reruns resume
without duplicates, a failing question does not stop the others."""

from __future__ import annotations

import json

import pytest

from flows.answer import answer_into, question_docs
from flows.ingest import ingest_into
from schemas.contracts import RetrievalResult
from schemas.settings import get_settings
from tasks.corpus.sample.generate import generate_sample_corpus
from warehouse.db import Warehouse
from warehouse.runs import start_run

KEYS = {
    "questions": ["run_id", "question_id"],
    "candidates": ["run_id", "question_id", "candidate_id"],
    "verdicts": ["run_id", "question_id", "candidate_id"],
    "retrieval_results": ["run_id", "question_id"],
    "answers": ["run_id", "question_id", "regime"],
}


@pytest.fixture(scope="module")
def pipeline_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipe")
    sample = generate_sample_corpus(root / "sample")
    settings = get_settings(home=root / "home", embedder={"kind": "hash"})
    wh = Warehouse(settings.duckdb_path)
    run_id = start_run(wh, "answer", {})
    ingest_into(wh, run_id, question_docs(sample.questions_path, None), settings, log=lambda m: None)
    summary = answer_into(wh, run_id, sample.questions_path, settings, data_root=None, regime="both",
                          profile="balanced", log=lambda m: None)
    yield wh, run_id, summary, sample, settings
    wh.close()


def test_every_question_is_answered_and_tables_are_filled(pipeline_run):
    wh, run_id, summary, sample, _ = pipeline_run
    n = sum(1 for _ in sample.questions_path.open())
    assert summary["questions"] == n
    assert summary["statuses"] == {"answered": n}, wh.query("SELECT subject, error FROM errors")
    for table in ("detector_hits", "candidates", "verdicts", "retrieval_results", "answers", "llm_calls"):
        assert wh.scalar(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id]) > 0, table
    # both regimes for every question, and exactly one of them is the routed one
    rows = wh.query("SELECT question_id, count(*) AS n, count(*) FILTER (routed) AS routed FROM answers "
                    "WHERE run_id = ? GROUP BY 1", [run_id])
    assert len(rows) == n and all(r["n"] == 2 and r["routed"] == 1 for r in rows)


def test_retrieval_results_are_valid_contracts_with_reasons(pipeline_run):
    wh, run_id, *_ = pipeline_run
    results = [RetrievalResult.model_validate_json(r[0]) for r in
               wh.execute("SELECT result FROM retrieval_results WHERE run_id = ?", [run_id])]
    found = [r for r in results if r.status == "found"]
    assert found and any(r.status == "not_found" for r in results)
    # s31 asks about a policy year that the documents lack: not found, and the arbiter says so
    s31 = next(r for r in results if r.question_id == "s31")
    assert s31.status == "not_found" and "nowhere in the searched documents" in (s31.not_found_reason or "")
    for r in found:
        assert r.primary and all(p.reason for p in r.primary) and r.rule


def test_rerun_of_same_run_adds_no_rows(pipeline_run):
    wh, run_id, _, sample, settings = pipeline_run
    before = {t: wh.scalar(f"SELECT count(*) FROM {t} WHERE run_id = ?", [run_id]) for t in KEYS}
    calls_before = wh.scalar("SELECT count(*) FROM llm_calls WHERE run_id = ?", [run_id])
    again = answer_into(wh, run_id, sample.questions_path, settings, data_root=None, regime="both",
                        profile="balanced", log=lambda m: None)
    assert again["processed"] == 0
    after = {t: wh.scalar(f"SELECT count(*) FROM {t} WHERE run_id = ?", [run_id]) for t in KEYS}
    assert after == before
    assert wh.scalar("SELECT count(*) FROM llm_calls WHERE run_id = ?", [run_id]) == calls_before
    for table, key in KEYS.items():
        cols = ", ".join(key)
        dupes = wh.scalar(f"SELECT count(*) FROM (SELECT {cols} FROM {table} GROUP BY {cols} HAVING count(*) > 1)")
        assert dupes == 0, table


def test_contradiction_between_contract_and_amendment_is_flagged(pipeline_run):
    wh, run_id, *_ = pipeline_run
    rows = wh.execute("SELECT result FROM retrieval_results WHERE run_id = ?", [run_id])
    contradictions = [c for (r,) in rows for c in json.loads(r)["contradictions"]]
    assert contradictions, "the amendment changes the monthly fee: some question must surface the contradiction"


def test_question_waiting_for_its_document_keeps_its_load_error_until_the_document_arrives(tmp_path):
    sample = generate_sample_corpus(tmp_path / "sample")
    first = json.loads(sample.questions_path.read_text(encoding="utf-8").splitlines()[0])
    late = sample.root / "late" / "policy.pdf"
    qpath = tmp_path / "set.jsonl"
    qpath.write_text(json.dumps(first) + "\n" + json.dumps({**first, "qid": "late", "doc": "late/policy.pdf"}) + "\n",
                     encoding="utf-8")
    settings = get_settings(home=tmp_path / "home", embedder={"kind": "hash"})
    with Warehouse(settings.duckdb_path) as wh:
        run_id = start_run(wh, "answer", {})

        def answer() -> dict:
            ingest_into(wh, run_id, question_docs(qpath, sample.root), settings, log=lambda m: None)
            return answer_into(wh, run_id, qpath, settings, data_root=sample.root, regime="auto",
                               profile="balanced", log=lambda m: None)

        def late_row() -> dict:
            return wh.query("SELECT status, error FROM questions WHERE run_id = ? AND question_id = 'late'",
                            [run_id])[0]

        assert answer()["statuses"] == {"answered": 1, "failed": 1}
        load_error = late_row()["error"]
        assert "late/policy.pdf" in load_error and "document(s) not found" in load_error
        errors = wh.scalar("SELECT count(*) FROM errors WHERE run_id = ?", [run_id])
        # resumed while the document is still missing: nothing processed, no new error row, the load error stays
        again = answer()
        assert again["processed"] == 0 and again["statuses"] == {"answered": 1, "failed": 1}
        assert wh.scalar("SELECT count(*) FROM errors WHERE run_id = ?", [run_id]) == errors
        assert late_row() == {"status": "failed", "error": load_error}
        # the document arrives: the same run ingests and answers it
        late.parent.mkdir()
        late.write_bytes(sample.pdfs[0].read_bytes())
        done = answer()
        assert done["processed"] == 1 and done["statuses"] == {"answered": 2}
        assert late_row() == {"status": "answered", "error": None}
