"""SQL of the evaluation harness: its inputs (gold, pools, results, answers), ``eval_results`` and summaries.

``eval_results`` rows are replaced whole per run (a re-evaluation of the same run never duplicates rows).

Queries for analysts (``duckdb $(arbiter db path)``)::

    -- methods side by side for one run: METHOD_SUMMARY_SQL below

    -- questions the arbiter missed but the RRF baseline found in its top 5
    SELECT a.question_id, a.predicted_pages, a.gold_pages, r.predicted_pages AS rrf_pages
    FROM eval_results a JOIN eval_results r USING (run_id, question_id)
    WHERE a.run_id = ? AND a.method = 'arbiter' AND r.method = 'rrf' AND NOT a.hit_at_5 AND r.hit_at_5;
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from warehouse.db import Warehouse, to_json

EVAL_COLUMNS = ("run_id", "question_set", "question_id", "method", "hit_at_1", "hit_at_5", "reciprocal_rank",
                "predicted_pages", "gold_pages", "predicted_not_found", "unanswerable", "answer_correct",
                "input_tokens", "output_tokens", "labels", "answer_found", "rule")
_SCHEMA = {"run_id": pl.Utf8, "question_set": pl.Utf8, "question_id": pl.Utf8, "method": pl.Utf8,
           "hit_at_1": pl.Boolean, "hit_at_5": pl.Boolean, "reciprocal_rank": pl.Float64,
           "predicted_pages": pl.List(pl.Int32), "gold_pages": pl.List(pl.Int32), "predicted_not_found": pl.Boolean,
           "unanswerable": pl.Boolean, "answer_correct": pl.Boolean, "input_tokens": pl.Int64,
           "output_tokens": pl.Int64, "labels": pl.Utf8, "answer_found": pl.Boolean, "rule": pl.Utf8}

# One row per run and method: the side-by-side table. Page metrics over questions with page gold; not-found over
# questions whose answerability is known; accuracy over questions with a reference answer.
METHOD_SUMMARY_SQL = """
SELECT run_id, method,
       count(*) AS questions,
       count(*) FILTER (WHERE len(gold_pages) > 0) AS page_gold,
       avg(CAST(hit_at_1 AS DOUBLE)) FILTER (WHERE len(gold_pages) > 0) AS hit_at_1,
       avg(CAST(hit_at_5 AS DOUBLE)) FILTER (WHERE len(gold_pages) > 0) AS hit_at_5,
       avg(reciprocal_rank) FILTER (WHERE len(gold_pages) > 0) AS mrr,
       count(*) FILTER (WHERE predicted_not_found AND unanswerable) AS not_found_correct,
       count(*) FILTER (WHERE predicted_not_found AND unanswerable IS NOT NULL) AS not_found_predicted,
       count(*) FILTER (WHERE unanswerable) AS unanswerable,
       avg(CAST(answer_correct AS DOUBLE)) AS answer_accuracy,
       count(answer_correct) AS answers_judged,
       sum(input_tokens) AS input_tokens,
       sum(output_tokens) AS output_tokens
FROM eval_results
WHERE run_id = ?
GROUP BY run_id, method
ORDER BY method
"""


# -- inputs ------------------------------------------------------------------------------------------------------------
def eval_questions(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """The run's questions with their gold and the doc ids of their own documents (``doc_ids`` None = unscoped),
    in load order."""
    rows = wh.query(
        "SELECT q.question_set, q.question_id, q.answer, q.gold_pages, q.labels, q.answer_shape, q.status, q.docs, "
        "  (SELECT list(d.doc_id ORDER BY d.doc_id) FROM documents d "
        "   WHERE list_contains(q.docs, d.path) AND d.status = 'ok') AS doc_ids "
        "FROM questions q WHERE q.run_id = ? ORDER BY q.rowid", [run_id])
    for r in rows:
        r["labels"] = json.loads(r["labels"]) if r["labels"] else {}
        if r["docs"] is None:
            r["doc_ids"] = None
    return rows


def retrieval_rows(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    return wh.query("SELECT question_id, status, result FROM retrieval_results WHERE run_id = ?", [run_id])


def verdict_rows(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """Every verdict of a run (candidate_id, role, relevance), per question in the order stored (the brief's)."""
    return wh.query("SELECT question_id, candidate_id, role, relevance FROM verdicts WHERE run_id = ? "
                    "ORDER BY question_id, rowid", [run_id])


def pool_candidates(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """The candidates handed to the arbiter (``in_pool``), ``ranks`` decoded: the baselines' common pool."""
    rows = wh.query("SELECT question_id, candidate_id, doc_id, page, ranks, rrf_rank FROM candidates "
                    "WHERE run_id = ? AND in_pool ORDER BY question_id, rrf_rank", [run_id])
    for r in rows:
        r["ranks"] = json.loads(r["ranks"]) if r["ranks"] else {}
    return rows


def answer_rows(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    return wh.query("SELECT question_id, regime, routed, value, answer_found, status, input_tokens, output_tokens, rule "
                    "FROM answers WHERE run_id = ? ORDER BY question_id, regime", [run_id])


def unscope_questions(wh: Warehouse, run_id: str) -> int:
    """Search the whole corpus for every question of the run (corpus-wide evaluation); returns rows changed."""
    with wh.transaction():
        n = wh.scalar("SELECT count(*) FROM questions WHERE run_id = ? AND docs IS NOT NULL", [run_id])
        wh.execute("UPDATE questions SET docs = NULL WHERE run_id = ?", [run_id])
    return int(n or 0)


def question_statuses(wh: Warehouse, run_id: str) -> dict[str, int]:
    return dict(wh.execute("SELECT status, count(*) FROM questions WHERE run_id = ? GROUP BY 1 ORDER BY 1",
                           [run_id]))


# -- eval_results ------------------------------------------------------------------------------------------------------
def save_eval_results(wh: Warehouse, run_id: str, rows: list[dict[str, Any]]) -> int:
    """Replace the run's ``eval_results`` with ``rows`` (all or nothing)."""
    wrong = sorted({r["run_id"] for r in rows} - {run_id})
    if wrong:
        raise ValueError(f"save_eval_results for run {run_id!r} got rows of run(s) {wrong}")
    prepared = [{c: (to_json(r[c]) if c == "labels" and r[c] is not None else r[c]) for c in EVAL_COLUMNS}
                for r in rows]
    with wh.transaction():
        wh.execute("DELETE FROM eval_results WHERE run_id = ?", [run_id])
        if prepared:
            wh.insert_df("eval_results", pl.DataFrame(prepared, schema=_SCHEMA, orient="row"))
    return len(prepared)


def load_eval_results(wh: Warehouse, run_id: str, method: str | None = None) -> list[dict[str, Any]]:
    """Rows as stored, ``labels`` decoded, in insertion order (question order, then method)."""
    rows = wh.query_where(f"SELECT {', '.join(EVAL_COLUMNS)} FROM eval_results",
                          {"run_id": run_id}, "rowid", optional={"method": method})
    for r in rows:
        r["labels"] = json.loads(r["labels"]) if r["labels"] else {}
        for col in ("predicted_pages", "gold_pages"):
            if r[col] is not None:
                r[col] = list(r[col])
    return rows


def method_summary(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """Per method of a run: the side-by-side figures, computed in SQL from ``eval_results``."""
    return wh.query(METHOD_SUMMARY_SQL, [run_id])


def has_eval_results(wh: Warehouse, run_id: str) -> bool:
    return bool(wh.scalar("SELECT count(*) FROM eval_results WHERE run_id = ?", [run_id]))
