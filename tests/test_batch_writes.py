"""The one walk's two write policies (tasks.pipeline.walk_questions + warehouse.sink): a chunk of finished questions
at a time stores exactly the rows that each stage as it ends stores; a walk stopped mid-way writes what finished, and
a resume completes it with no duplicate and no change to the finished questions."""

from __future__ import annotations

import json

import pytest

from flows.answer import build_context, question_docs
from flows.ingest import ingest_into
from schemas.settings import get_settings
from tasks import pipeline
from tasks.corpus.sample.generate import generate_sample_corpus
from tasks.questions.load import ingest_questions
from warehouse import sink
from warehouse.db import Warehouse
from warehouse.errors import RunStopped
from warehouse.questions import load_questions
from warehouse.runs import start_run

# what differs between two runs of the same questions by nature: ids of the run and of its calls, times
VOLATILE = {"run_id", "created_at", "call_id", "call_ids", "arbiter_call_id", "latency_ms"}
TABLES = {"questions": "question_id", "detector_hits": "question_id, detector, rank",
          "candidates": "question_id, candidate_id", "verdicts": "question_id, candidate_id",
          "retrieval_results": "question_id", "answers": "question_id, regime", "errors": "subject, stage"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("batch")
    sample = generate_sample_corpus(root / "sample")
    settings = get_settings(home=root / "home", embedder={"kind": "hash"})
    wh = Warehouse(settings.duckdb_path)
    run_id = start_run(wh, "ingest", {})
    ingest_into(wh, run_id, question_docs(sample.questions_path, None), settings, log=lambda m: None)
    yield wh, sample, settings
    wh.close()


def new_run(wh, sample, settings, name: str):
    run_id = start_run(wh, "answer", {}, run_id=name)
    ingest_questions(wh, run_id, sample.questions_path, None)
    return run_id, build_context(wh, run_id, settings, "both", "balanced")


def rows(wh: Warehouse, run_id: str) -> dict[str, list[dict]]:
    out = {}
    for table, order in TABLES.items():
        got = wh.query(f"SELECT * EXCLUDE (run_id) FROM {table} WHERE run_id = ? ORDER BY {order}", [run_id])
        for r in got:
            for key in VOLATILE & set(r):
                r[key] = None
            if r.get("result"):
                r["result"] = {k: v for k, v in json.loads(r["result"]).items() if k != "arbiter_call_id"}
        out[table] = got
    return out


def test_chunked_writes_store_what_stage_writes_store(corpus, monkeypatch):
    wh, sample, settings = corpus
    staged, ctx = new_run(wh, sample, settings, "staged")
    statuses = list(pipeline.walk_questions(ctx, load_questions(wh, staged), policy="stage"))
    chunked, ctx = new_run(wh, sample, settings, "chunked")
    monkeypatch.setattr(sink, "CHUNK_QUESTIONS", 7)  # several chunks, the last one short
    assert list(pipeline.walk_questions(ctx, load_questions(wh, chunked), policy="chunk")) == statuses
    assert set(statuses) == {"answered"}
    a, b = rows(wh, staged), rows(wh, chunked)
    for table in TABLES:
        assert a[table] == b[table], table
    assert len(b["answers"]) == 2 * len(statuses)


def test_a_stopped_walk_keeps_what_finished_and_resumes(corpus, monkeypatch):
    wh, sample, settings = corpus
    run_id, ctx = new_run(wh, sample, settings, "stopped")
    monkeypatch.setattr(sink, "CHUNK_QUESTIONS", 4)
    todo = load_questions(wh, run_id)

    def stopped_after(n):  # the signal lands between two questions, with a chunk part-filled
        for i, row in enumerate(todo):
            if i == n:
                raise RunStopped("SIGTERM")
            yield row

    walk = pipeline.walk_questions(ctx, stopped_after(10), policy="chunk")
    with pytest.raises(RunStopped):
        for _ in walk:
            pass
    status = dict(wh.execute("SELECT question_id, status FROM questions WHERE run_id = ?", [run_id]))
    done = sorted(q for q, s in status.items() if s == "answered")
    assert len(done) == 10 and sum(s == "loaded" for s in status.values()) == len(todo) - 10
    before = {t: [r for r in v if r.get("question_id") in done] for t, v in rows(wh, run_id).items()}

    rest = [r for r in load_questions(wh, run_id) if r["status"] != "answered"]
    assert set(pipeline.walk_questions(ctx, rest, policy="chunk")) == {"answered"}
    after = rows(wh, run_id)
    assert {t: [r for r in v if r.get("question_id") in done] for t, v in after.items()} == before
    for table, key in (("answers", "question_id, regime"), ("verdicts", "question_id, candidate_id"),
                       ("retrieval_results", "question_id")):
        assert not wh.scalar(f"SELECT count(*) FROM (SELECT {key} FROM {table} WHERE run_id = ? GROUP BY ALL "
                             "HAVING count(*) > 1)", [run_id]), table
