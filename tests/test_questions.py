"""Question sets: JSONL loading with per-line errors, document resolution, and the ``questions`` table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemas.contracts import QuestionRecord
from tasks.questions.load import (
    MissingDocumentError,
    ingest_questions,
    load_question_set,
    question_set_name,
    resolve_docs,
)
from warehouse.questions import (
    load_questions,
    question_sets,
    save_questions,
)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path) -> Path:
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "pdfs" / "a.pdf").write_bytes(b"%PDF-1.4 test")
    (tmp_path / "pdfs" / "b.pdf").write_bytes(b"%PDF-1.4 test")
    return tmp_path


def test_real_question_sets_load_with_their_documents(shared_data):
    mml = load_question_set(shared_data / "mmlongbench" / "questions.jsonl", data_root=shared_data)
    assert mml.name == "mmlongbench-questions"
    assert len(mml.records) == 355 and mml.errors == []
    docs = [p for ps in mml.docs.values() for p in ps or []]
    assert docs and all(p.is_absolute() and p.is_file() for p in docs)
    dg = load_question_set(shared_data / "docugami" / "questions.jsonl", data_root=shared_data)
    assert len(dg.records) == 195 and dg.errors == []
    assert all(len(dg.docs[r.qid]) >= 1 for r in dg.records)


def test_wrong_data_root_is_a_per_question_error_with_a_hint(shared_data):
    loaded = load_question_set(shared_data / "docugami" / "questions.jsonl")  # default root: the file's folder
    assert len(loaded.records) == 195 and len(loaded.errors) == 195
    err = loaded.errors[0]
    assert err.question_id == loaded.records[0].qid and err.line_no == 1
    assert err.subject == "docugami/questions.jsonl:1"
    assert "not found" in err.message and str(shared_data.resolve() / "docugami") in err.message
    assert f"they exist under {shared_data.resolve()}" in err.message


def test_malformed_lines_each_get_a_specific_error(tmp_path, corpus):
    path = _write(tmp_path / "set.jsonl", [
        json.dumps({"qid": "q1", "question": "What is the fee?", "doc": "pdfs/a.pdf"}),
        '{"qid": "q2", "question": "broken',
        json.dumps({"question": "Who signed?"}),
        json.dumps({"qid": "q4"}),
        json.dumps({"qid": "q5", "question": 42}),
        json.dumps({"qid": "q6", "question": "   "}),
        json.dumps({"qid": "q1", "question": "Again?"}),
        json.dumps({"qid": "q8", "question": "Which pages?", "gold_pages_0based": ["3"]}),
        json.dumps({"qid": "q9", "question": "Which doc?", "doc": 7}),
        "",
        json.dumps(["q11", "a list, not an object"]),
        json.dumps({"qid": 12, "question": "When did it start?", "doc": ["pdfs/a.pdf", "pdfs/b.pdf"], "answer": 2019,
                    "gold_pages_0based": [], "labels": {"kind": "date"}}),
        json.dumps({"qid": "q13", "question": "Is it fair?", "labels": ["x"]}),
        json.dumps({"qid": "q14", "question": "Is it null-safe?", "labels": None, "answer": None, "doc": None}),
    ])
    loaded = load_question_set(path, data_root=corpus)
    assert [r.qid for r in loaded.records] == ["q1", "12", "q14"]
    errors = {e.line_no: e for e in loaded.errors}
    expected = {
        2: "not valid JSON",
        3: "missing required field 'qid'",
        4: "missing required field 'question'",
        5: "'question' must be a string, got int",
        6: "'question' is empty",
        7: "duplicate qid 'q1' (first on line 1)",
        8: "'gold_pages_0based' must be a list of 0-based page numbers",
        9: "'doc' must be a non-empty path or list of paths",
        11: "expected a JSON object per line, got list",
        13: "'labels' must be an object, got list",
    }
    assert sorted(errors) == sorted(expected)
    for line_no, fragment in expected.items():
        err = errors[line_no]
        assert err.subject == f"set.jsonl:{line_no}"
        assert err.message.startswith(f"set.jsonl:{line_no}: ") and fragment in err.message
        assert err.question_id is None
    q12 = loaded.records[1]
    assert q12.answer == "2019" and q12.gold_pages_0based == [] and q12.labels == {"kind": "date"}
    assert loaded.docs["12"] == [(corpus / "pdfs" / "a.pdf").resolve(), (corpus / "pdfs" / "b.pdf").resolve()]


def test_missing_document_fails_only_that_question(tmp_path, corpus):
    path = _write(tmp_path / "claims.jsonl", [
        json.dumps({"qid": "ok", "question": "What is the fee?", "doc": "pdfs/a.pdf"}),
        json.dumps({"qid": "gone", "question": "What is the premium?", "doc": ["pdfs/a.pdf", "pdfs/missing.pdf"]}),
        json.dumps({"qid": "corpus", "question": "Who is the insurer?"}),
    ])
    loaded = load_question_set(path, data_root=corpus)
    assert loaded.name == "claims"
    assert [r.qid for r in loaded.records] == ["ok", "gone", "corpus"]
    assert loaded.docs["corpus"] is None
    (err,) = loaded.errors
    assert err.question_id == "gone" and err.line_no == 2
    assert str((corpus / "pdfs" / "missing.pdf").resolve()) in err.message and str(corpus.resolve()) in err.message
    with pytest.raises(MissingDocumentError, match="missing.pdf"):
        resolve_docs(QuestionRecord(qid="x", question="?", doc="pdfs/missing.pdf"), corpus)


def test_missing_question_file_says_what_to_pass(tmp_path):
    with pytest.raises(FileNotFoundError, match="pass the path of a .jsonl file"):
        load_question_set(tmp_path / "nope.jsonl")


def test_set_names():
    assert question_set_name(Path("/x/mmlongbench/questions.jsonl")) == "mmlongbench-questions"
    assert question_set_name(Path("/x/y/insurance_claims.jsonl")) == "insurance_claims"


def test_ingest_stores_rows_statuses_and_errors(wh, tmp_path, corpus):
    path = _write(tmp_path / "questions.jsonl", [
        json.dumps({"qid": "q1", "question": "How many employees were there in 2022?", "doc": "pdfs/a.pdf",
                    "answer": "120", "gold_pages_0based": [3, 4], "labels": {"answer_format": "Int"}}),
        json.dumps({"qid": "q2", "question": "Is the premium refundable?", "doc": "pdfs/none.pdf"}),
        "not json",
    ])
    loaded = ingest_questions(wh, "run1", path, data_root=corpus)
    rows = {r["question_id"]: r for r in load_questions(wh, "run1")}
    assert set(rows) == {"q1", "q2"}
    q1 = rows["q1"]
    assert q1["question_set"] == loaded.name == f"{tmp_path.name}-questions"
    assert q1["status"] == "loaded" and q1["error"] is None
    assert q1["docs"] == [str((corpus / "pdfs" / "a.pdf").resolve())]
    assert q1["gold_pages"] == [3, 4] and q1["labels"] == {"answer_format": "Int"} and q1["answer"] == "120"
    assert q1["answer_shape"] == "amount" and q1["parser"] == "rules-v1" and "employees" in q1["keywords_primary"]
    assert "employee" in q1["keywords_secondary"]
    assert rows["q2"]["status"] == "failed" and "none.pdf" in rows["q2"]["error"]
    assert rows["q2"]["answer_shape"] == "boolean"
    errors = wh.query(
        "SELECT subject, error FROM errors WHERE run_id = 'run1' AND stage = 'questions' ORDER BY subject"
    )
    subject = f"{tmp_path.name}/questions.jsonl"
    assert [e["subject"] for e in errors] == [f"{subject}:2", f"{subject}:3"]
    assert "not valid JSON" in errors[1]["error"]
    # a rerun replaces rows and errors instead of duplicating them
    ingest_questions(wh, "run1", path, data_root=corpus)
    assert wh.scalar("SELECT count(*) FROM questions WHERE run_id = 'run1'") == 2
    assert wh.scalar("SELECT count(*) FROM errors WHERE run_id = 'run1'") == 2


def _row(qid: str, **extra) -> dict:
    return {"question_id": qid, "text": f"What is {qid}?", "keywords_primary": [qid], "keywords_secondary": [],
            "answer_shape": "text", "decomposition": "single", "intent": "explain", "parser": "rules-v1", **extra}


def test_save_load_round_trip_and_idempotence(wh):
    rows = [_row("a", labels={"k": 1}, gold_pages=[]), _row("b", docs=["/x.pdf"])]
    assert save_questions(wh, "r1", "setA", rows) == 2
    assert save_questions(wh, "r1", "setB", [_row("c")]) == 1
    assert save_questions(wh, "r2", "setA", [_row("a")]) == 1
    assert [r["question_id"] for r in load_questions(wh, "r1")] == ["a", "b", "c"]
    assert [r["question_id"] for r in load_questions(wh, "r1", "setA")] == ["a", "b"]
    assert question_sets(wh, "r1") == ["setA", "setB"]
    a = load_questions(wh, "r1", "setA")[0]
    assert a["labels"] == {"k": 1} and a["gold_pages"] == [] and a["docs"] is None and a["status"] == "loaded"
    save_questions(wh, "r1", "setA", [_row("a", answer="new")])
    rows = load_questions(wh, "r1")
    assert len(rows) == 3 and next(r for r in rows if r["question_id"] == "a")["answer"] == "new"
    assert len(load_questions(wh, "r2")) == 1


def test_save_rejects_bad_rows_without_writing(wh):
    with pytest.raises(ValueError, match="unknown column"):
        save_questions(wh, "r1", "s", [_row("a", colour="red")])
    with pytest.raises(ValueError, match="duplicate question ids"):
        save_questions(wh, "r1", "s", [_row("a"), _row("a")])
    with pytest.raises(ValueError, match="status 'done'"):
        save_questions(wh, "r1", "s", [_row("a", status="done")])
    assert load_questions(wh, "r1") == []

