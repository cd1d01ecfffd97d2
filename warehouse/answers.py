"""``answers`` rows and the read side of the generation brick: regime figures, routing, failures, contradictions.

The rows are built here (:func:`answer_values`) and written by ``warehouse.sink``, replaced per (run_id,
question_id, regime). The cost
views (``answer_costs``, ``regime_comparison``, ``regime_summary``) are created by migration m003; they read
``llm_calls``, so the readers here flush queued call rows first (``warehouse.llm_log.flush_calls``).

Queries for cost analysts (paste into ``arbiter db shell`` / any DuckDB client)::

    -- input tokens and cost, sequential vs batch, per answer shape, for one run
    SELECT answer_shape, questions, batch_input_tokens, seq_input_tokens, seq_batch_input_ratio,
           input_savings, batch_reference_cost_usd, seq_reference_cost_usd
    FROM regime_summary WHERE run_id = ? ORDER BY answer_shape;

    -- questions where sequential cost more than batch (the loop exhausted K), with their route
    SELECT question_id, answer_shape, route_rule, seq_exit, seq_steps, batch_input_tokens, seq_input_tokens
    FROM regime_comparison WHERE run_id = ? AND seq_input_tokens > batch_input_tokens ORDER BY seq_input_tokens DESC;

    -- what this run's generation would cost on gpt-4.1-mini, per regime
    SELECT regime, sum(cost_usd) AS usd FROM answer_costs_at('gpt-4.1-mini') WHERE run_id = ? GROUP BY regime;

    -- disagreements between regimes and which side was right
    SELECT question_id, batch_value, seq_value, batch_correct, seq_correct
    FROM regime_comparison WHERE run_id = ? AND NOT values_agree;
"""

from __future__ import annotations

import json
from typing import Any

from warehouse.db import Warehouse, to_json, utcnow
from warehouse.llm_log import flush_calls

ANSWER_COLUMNS = (
    "run_id", "question_id", "regime", "routed", "route_rule", "exit", "steps", "value", "answer", "answer_found",
    "complete_answer_found", "confidence", "input_tokens", "cached_tokens", "output_tokens", "latency_ms",
    "provider", "model", "budget", "status", "error", "answer_shape", "decomposition", "value_norm", "correct",
    "call_ids", "created_at", "routed_regime", "rule",
)


def answer_values(row: dict[str, Any]) -> dict[str, Any]:
    """An answer row as the table stores it (JSON text, created_at), checked."""
    missing = [c for c in ("run_id", "question_id", "regime", "routed", "status") if row.get(c) is None]
    if missing:
        raise ValueError(f"answer row lacks {', '.join(missing)}: {row.get('question_id')!r}")
    values = {c: row.get(c) for c in ANSWER_COLUMNS}
    for c in ("answer", "budget"):
        if values[c] is not None and not isinstance(values[c], str):
            values[c] = to_json(values[c])
    values["created_at"] = values["created_at"] or utcnow()
    return values


def load_answers(wh: Warehouse, run_id: str, question_id: str | None = None) -> list[dict[str, Any]]:
    return wh.query_where(f"SELECT {', '.join(ANSWER_COLUMNS)} FROM answers",
                          {"run_id": run_id}, "question_id, regime", optional={"question_id": question_id})


def reference_answer(wh: Warehouse, run_id: str, question_id: str) -> str | None:
    """The question set's reference answer: this run's ``questions`` row, else the latest run that has one."""
    rows = wh.execute(
        "SELECT answer FROM questions WHERE question_id = ? AND answer IS NOT NULL "
        "ORDER BY (run_id = ?) DESC, run_id DESC LIMIT 1", [question_id, run_id])
    return rows[0][0] if rows else None


# -- report queries ----------------------------------------------------------------------------------------------
def run_answer_counts(wh: Warehouse, run_id: str) -> dict[str, Any]:
    """One run's questions, not-found exits, routing, input tokens per regime, failed answers and questions with
    a contradiction flagged: the figures `arbiter demo` prints."""
    row = wh.query(
        """
        SELECT count(DISTINCT question_id) AS questions,
               count(DISTINCT question_id) FILTER (exit = 'not_found') AS not_found,
               count(*) FILTER (routed AND regime = 'sequential') AS routed_sequential,
               count(*) FILTER (routed AND regime = 'batch') AS routed_batch,
               coalesce(sum(input_tokens) FILTER (regime = 'batch'), 0) AS batch_input_tokens,
               coalesce(sum(input_tokens) FILTER (regime = 'sequential'), 0) AS sequential_input_tokens,
               coalesce(sum(input_tokens) FILTER (routed), 0) AS auto_input_tokens,
               count(*) FILTER (status = 'failed') AS failed_answers
        FROM answers WHERE run_id = ?
        """,
        [run_id],
    )[0]
    row["contradictions"] = wh.scalar(
        "SELECT count(*) FROM retrieval_results WHERE run_id = ? AND json_array_length(result->'contradictions') > 0",
        [run_id],
    )
    return row


def graded_answers(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """The run's answers to questions that carry a reference answer, with that reference."""
    return wh.query(
        "SELECT a.regime, a.correct, a.answer_found, a.value, q.answer AS reference FROM answers a "
        "JOIN questions q USING (run_id, question_id) WHERE a.run_id = ? AND q.answer IS NOT NULL", [run_id])


def tokens_by_question(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """Input/output tokens per question and regime (rows of answer_costs), in question order."""
    flush_calls(wh)  # the cost views read llm_calls, whose rows may still be queued
    return wh.query(
        "SELECT question_id, regime, routed, answer_shape, exit, steps, input_tokens, output_tokens, cost_usd, "
        "reference_cost_usd, latency_ms, status FROM answer_costs WHERE run_id = ? ORDER BY question_id, regime",
        [run_id])


def regime_summary(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    flush_calls(wh)
    return wh.query("SELECT * FROM regime_summary WHERE run_id = ? ORDER BY answer_shape = '(all)', answer_shape",
                    [run_id])


def regime_totals(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """Per regime (every answer, paired or not): answers, token sums, costs, accuracy, routed count."""
    flush_calls(wh)
    return wh.query(
        "SELECT regime, count(*) AS answers, count(*) FILTER (WHERE routed) AS routed, "
        "sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd, "
        "sum(reference_cost_usd) AS reference_cost_usd, avg(latency_ms) AS latency_ms, "
        "avg(CAST(correct AS INTEGER)) AS accuracy, count(correct) AS judged, "
        "count(*) FILTER (WHERE status = 'failed') AS failed "
        "FROM answer_costs WHERE run_id = ? GROUP BY regime ORDER BY regime", [run_id])


def exit_distribution(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    return wh.query(
        "SELECT regime, exit, count(*) AS n FROM answers WHERE run_id = ? "
        "GROUP BY regime, exit ORDER BY regime, n DESC",
        [run_id])


def routing_decisions(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """One row per question: the routed regime and rule, with the question text when the run holds it."""
    return wh.query(
        "SELECT a.question_id, any_value(q.text) AS text, any_value(a.answer_shape) AS answer_shape, "
        "any_value(a.decomposition) AS decomposition, any_value(a.route_rule) AS route_rule, "
        "any_value(a.routed_regime) AS routed_regime, "
        "string_agg(a.regime, ', ' ORDER BY a.regime) AS regimes_run "
        "FROM answers a LEFT JOIN questions q ON q.run_id = a.run_id AND q.question_id = a.question_id "
        "WHERE a.run_id = ? GROUP BY a.question_id ORDER BY a.question_id", [run_id])


def not_found_questions(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """Questions retrieval called not found, and answers that found nothing (exhaustion / budget)."""
    return wh.query(
        "SELECT a.question_id, any_value(q.text) AS text, any_value(r.status) AS retrieval_status, "
        "any_value(json_extract_string(r.result, '$.not_found_reason')) AS reason, "
        "string_agg(a.regime || ':' || a.exit, ', ' ORDER BY a.regime) AS exits "
        "FROM answers a "
        "LEFT JOIN questions q ON q.run_id = a.run_id AND q.question_id = a.question_id "
        "LEFT JOIN retrieval_results r ON r.run_id = a.run_id AND r.question_id = a.question_id "
        "WHERE a.run_id = ? AND a.status = 'ok' AND NOT coalesce(a.answer_found, false) "
        "GROUP BY a.question_id ORDER BY a.question_id", [run_id])


def failures(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """Recorded errors (first line), plus failed answers and failed retrievals that have no ``errors`` row."""
    return wh.query(
        "SELECT stage, subject, error FROM ("
        "  SELECT stage, subject, split_part(error, chr(10), 1) AS error, created_at AS t FROM errors WHERE run_id = ?"
        "  UNION ALL SELECT 'generate:' || a.regime, a.question_id, a.error, a.created_at FROM answers a"
        "    WHERE a.run_id = ? AND a.status = 'failed' AND NOT EXISTS (SELECT 1 FROM errors e WHERE"
        "      e.run_id = a.run_id AND e.subject = a.question_id AND e.stage = 'generate')"
        "  UNION ALL SELECT 'retrieval', r.question_id, r.error, NULL FROM retrieval_results r"
        "    WHERE r.run_id = ? AND r.status = 'failed' AND NOT EXISTS (SELECT 1 FROM errors e WHERE"
        "      e.run_id = r.run_id AND e.subject = r.question_id AND e.stage IN ('arbiter', 'detect'))"
        ") GROUP BY stage, subject, error ORDER BY min(t) NULLS LAST, stage, subject",
        [run_id, run_id, run_id])


def contradictions(wh: Warehouse, run_id: str, limit: int = 20) -> list[dict[str, Any]]:
    """Contradicting candidate pairs from ``retrieval_results`` JSON, questions with the most pairs first."""
    rows = wh.query(
        "SELECT r.question_id, q.text, r.result FROM retrieval_results r "
        "LEFT JOIN questions q ON q.run_id = r.run_id AND q.question_id = r.question_id "
        "WHERE r.run_id = ? AND r.result IS NOT NULL "
        "AND json_array_length(json_extract(r.result, '$.contradictions')) > 0", [run_id])
    out = []
    for row in rows:
        items = json.loads(row["result"]).get("contradictions") or []
        for c in items:
            out.append({"question_id": row["question_id"], "text": row["text"], "pairs": len(items),
                        "candidate_ids": ", ".join(c.get("candidate_ids") or []), "note": c.get("note", "")})
    out.sort(key=lambda r: (-r["pairs"], r["question_id"], r["candidate_ids"]))
    return out[:limit]


def run_row(wh: Warehouse, run_id: str) -> dict[str, Any] | None:
    rows = wh.query("SELECT run_id, flow, started_at, finished_at, status, config FROM runs WHERE run_id = ?",
                    [run_id])
    return rows[0] if rows else None
