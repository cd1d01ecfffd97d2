"""Test helpers that put a question's rows in a real warehouse the way a run does: through the one walk
(``tasks.pipeline.walk_question``) and the one writer (``warehouse.sink``), each stage written as it ends."""

from __future__ import annotations

from typing import Any

from schemas.contracts import ParsedQuestion, RetrievalResult
from schemas.settings import Settings
from tasks.pipeline import PipelineContext, walk_question
from warehouse.answers import load_answers
from warehouse.db import Warehouse
from warehouse.questions import load_questions, save_questions
from warehouse.retrieval import retrieval_row
from warehouse.sink import QuestionSink, QuestionWrite, write_questions


def question_row(wh: Warehouse, run_id: str, question: ParsedQuestion, answer: str | None = None) -> dict[str, Any]:
    """The question's ``questions`` row in ``run_id``, saved first when the run does not hold it."""
    rows = {r["question_id"]: r for r in load_questions(wh, run_id)}
    if question.question_id not in rows:
        save_questions(wh, run_id, "test", [{
            "question_id": question.question_id, "text": question.text, "answer": answer,
            "keywords_primary": question.keywords_primary, "keywords_secondary": question.keywords_secondary,
            "answer_shape": question.answer_shape, "decomposition": question.decomposition,
            "intent": question.intent, "parser": question.parser}])
        rows = {r["question_id"]: r for r in load_questions(wh, run_id)}
    return rows[question.question_id]


def store_retrieval(wh: Warehouse, run_id: str, question: ParsedQuestion, result: RetrievalResult | None,
                    error: str | None = None) -> None:
    """``result`` stored as the question's retrieval (None: a failed arbiter call with ``error``), as the arbiter
    stage would store it."""
    question_row(wh, run_id, question)
    qid = question.question_id
    status, message = ("arbitrated", None) if result is not None else ("failed", f"arbiter: {error}")
    write_questions(wh, run_id, [QuestionWrite(qid, status, message,
                                               retrieval=retrieval_row(run_id, qid, result, error=error))])


def answer_question(wh: Warehouse, run_id: str, question: ParsedQuestion, result: RetrievalResult, client,
                    settings=None, regime: str = "auto", answer: str | None = None) -> list[dict[str, Any]]:
    """``result`` stored as the question's retrieval, then the question walked from generation in ``regime`` (a
    regime already answered ``ok`` is kept); returns its answer rows as stored."""
    question_row(wh, run_id, question, answer)
    store_retrieval(wh, run_id, question, result)
    ctx = PipelineContext(wh=wh, run_id=run_id, settings=settings or Settings(), corpus=None, vectors=None,
                          embedder=None, arbiter=None, generator=client, regime=regime)
    row = question_row(wh, run_id, question)
    walk_question(ctx, row, "generate", QuestionSink(wh, run_id, "stage"))
    return load_answers(wh, run_id, question.question_id)
