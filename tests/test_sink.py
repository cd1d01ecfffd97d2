"""The one writer of a question's rows (``warehouse.sink``): what a write replaces and what it leaves, its checks,
and its two policies (each stage as it ends; a chunk of finished questions, written whole or question by question
with the failing one named)."""

from __future__ import annotations

import pytest

from warehouse import sink
from warehouse.db import WarehouseError
from warehouse.questions import load_questions, save_questions
from warehouse.sink import QuestionSink, QuestionWrite, write_questions


def _row(qid: str) -> dict:
    return {"question_id": qid, "text": f"What is {qid}?", "keywords_primary": [qid], "keywords_secondary": [],
            "answer_shape": "text", "decomposition": "single", "intent": "explain", "parser": "rules-v1"}


def _verdict(qid: str, cid: str) -> dict:
    return {"run_id": "r1", "question_id": qid, "candidate_id": cid, "role": "primary", "decision": "keep",
            "reason": "r", "relevance": 0.9, "contradicts": [], "anchor_found": True, "rewrite": None,
            "flagged": False, "provider": "rules", "model": "rules-v1", "call_id": None}


def _answer(qid: str, regime: str, value: str) -> dict:
    return {"run_id": "r1", "question_id": qid, "regime": regime, "routed": True, "status": "ok", "value": value,
            "created_at": None}


def _questions(wh) -> dict[str, dict]:
    return {r["question_id"]: r for r in load_questions(wh, "r1")}


def test_status_plan_and_rows_are_replaced_per_question(wh):
    save_questions(wh, "r1", "s", [_row("a"), _row("b")])
    write_questions(wh, "r1", [
        QuestionWrite("a", "detected", detectors=["keywords", "embeddings"],
                      detector_rule="no toc: document has no sections"),
        QuestionWrite("b", "failed", "no candidates", errors=[("detect", "no candidates")])])
    rows = _questions(wh)
    assert rows["a"]["status"] == "detected" and rows["a"]["error"] is None
    assert rows["a"]["detectors"] == ["keywords", "embeddings"]
    assert rows["a"]["detector_rule"] == "no toc: document has no sections"
    assert rows["b"]["status"] == "failed" and rows["b"]["error"] == "no candidates"
    assert wh.scalar("SELECT count(*) FROM errors WHERE subject = 'b'") == 1

    write_questions(wh, "r1", [QuestionWrite("a", "arbitrated", verdicts=[_verdict("a", "c1"), _verdict("a", "c2")],
                                             answers=[_answer("a", "batch", "1"), _answer("a", "sequential", "2")])])
    # a later write: None leaves a table as it is, a list replaces the question's rows (answers per regime)
    write_questions(wh, "r1", [QuestionWrite("a", "answered", answers=[_answer("a", "batch", "3")])])
    assert wh.scalar("SELECT count(*) FROM verdicts WHERE question_id = 'a'") == 2
    assert dict(wh.execute("SELECT regime, value FROM answers WHERE question_id = 'a'")) == {
        "batch": "3", "sequential": "2"}
    # the answer's reader rule lands with it (m010_answer_rule)
    write_questions(wh, "r1", [QuestionWrite("a", "answered", answers=[{**_answer("a", "batch", "3"),
                                                                        "rule": "value.cell"}])])
    assert wh.scalar("SELECT rule FROM answers WHERE question_id = 'a' AND regime = 'batch'") == "value.cell"
    assert _questions(wh)["a"]["detectors"] == ["keywords", "embeddings"]  # the plan stays when not re-planned
    write_questions(wh, "r1", [QuestionWrite("a", "arbitrated", verdicts=[])])
    assert wh.scalar("SELECT count(*) FROM verdicts WHERE question_id = 'a'") == 0  # no stale verdict lingers


def test_bad_rows_are_refused_and_nothing_is_written(wh):
    save_questions(wh, "r1", "s", [_row("a")])
    with pytest.raises(ValueError, match="not one of"):
        write_questions(wh, "r1", [QuestionWrite("a", "finished")])
    with pytest.raises(ValueError, match="unknown detector"):
        write_questions(wh, "r1", [QuestionWrite("a", "detected", detectors=["bm25"], detector_rule="x")])
    with pytest.raises(ValueError, match="needs the rule"):
        write_questions(wh, "r1", [QuestionWrite("a", "detected", detectors=["toc"], detector_rule=" ")])
    with pytest.raises(WarehouseError, match=r"\['zzz'\] are not in run 'r1'"):
        write_questions(wh, "r1", [QuestionWrite("a", "answered"), QuestionWrite("zzz", "answered")])
    with pytest.raises(WarehouseError, match="not in run 'r2'"):
        write_questions(wh, "r2", [QuestionWrite("a", "answered")])
    assert _questions(wh)["a"]["status"] == "loaded"  # all or nothing


def test_merge_folds_a_later_stage_in():
    walked = QuestionWrite("a", "detected", detectors=["toc"], detector_rule="r", candidates=[{"x": 1}],
                           answers=[{"regime": "batch", "v": 1}], errors=[("detect", "e1")])
    walked.merge(QuestionWrite("a", "failed", "boom", verdicts=[], answers=[{"regime": "batch", "v": 2},
                                                                             {"regime": "sequential", "v": 3}],
                               errors=[("generate", "e2")]))
    assert (walked.status, walked.error, walked.detectors, walked.candidates, walked.verdicts) == (
        "failed", "boom", ["toc"], [{"x": 1}], [])
    assert walked.answers == [{"regime": "batch", "v": 2}, {"regime": "sequential", "v": 3}]
    assert walked.errors == [("detect", "e1"), ("generate", "e2")]


def test_stage_policy_writes_each_stage_at_once(wh):
    save_questions(wh, "r1", "s", [_row("a")])
    stages = QuestionSink(wh, "r1", "stage")
    stages.stage(QuestionWrite("a", "detected", detectors=["toc"], detector_rule="r"))
    assert _questions(wh)["a"]["status"] == "detected"
    stages.finished(QuestionWrite("a", "answered"))  # already written stage by stage: nothing queued
    assert stages.pending == [] and _questions(wh)["a"]["status"] == "detected"


def test_chunk_policy_writes_finished_questions_a_chunk_at_a_time(wh, monkeypatch):
    monkeypatch.setattr(sink, "CHUNK_QUESTIONS", 2)
    save_questions(wh, "r1", "s", [_row(q) for q in "abc"])
    chunks = QuestionSink(wh, "r1", "chunk", seconds=3600)
    with chunks.open():
        chunks.stage(QuestionWrite("a", "detected"))  # a stage's rows wait for the question's end
        assert _questions(wh)["a"]["status"] == "loaded"
        chunks.finished(QuestionWrite("a", "answered"))
        assert _questions(wh)["a"]["status"] == "loaded"
        chunks.finished(QuestionWrite("b", "answered"))  # the chunk is full: written
        assert {q: r["status"] for q, r in _questions(wh).items()} == {"a": "answered", "b": "answered",
                                                                      "c": "loaded"}
        chunks.finished(QuestionWrite("c", "answered"))
    assert _questions(wh)["c"]["status"] == "answered"  # the last, part-filled chunk lands when the block ends


def test_a_question_whose_rows_cannot_be_written_fails_and_the_chunk_lands(wh):
    save_questions(wh, "r1", "s", [_row("a"), _row("b")])
    chunks = QuestionSink(wh, "r1", "chunk")
    with pytest.raises(RuntimeError, match="stopped"), chunks.open():
        chunks.finished(QuestionWrite("a", "answered"))
        chunks.finished(QuestionWrite("b", "answered", answers=[{**_answer("b", "batch", "1"), "bogus": 1}]))
        raise RuntimeError("stopped")  # the block ends early (a SIGTERM): what finished is still written
    rows = _questions(wh)
    assert rows["a"]["status"] == "answered"
    assert rows["b"]["status"] == "failed" and rows["b"]["error"].startswith("write: ")
    assert wh.scalar("SELECT count(*) FROM errors WHERE subject = 'b' AND stage = 'write'") == 1
    assert wh.scalar("SELECT count(*) FROM answers") == 0
