"""Reads behind ``arbiter diff RUN_A RUN_B``: two runs' verdicts, retrieval results, answers and spend, paired.

Each function returns one row per key present in either run (a FULL OUTER JOIN), with ``_a`` / ``_b`` columns;
``tasks/report/diff.py`` decides what counts as a change. Token and cost figures come from ``llm_call_costs`` (every
attempt, retries and fallbacks included), so a replayed run shows the tokens of the calls it replayed.
"""

from __future__ import annotations

from typing import Any

from warehouse.db import Warehouse
from warehouse.llm_log import flush_calls


def runs_exist(wh: Warehouse, run_ids: list[str]) -> list[str]:
    """The ids of ``run_ids`` that have no ``runs`` row and no rows in the tables a diff reads."""
    missing = []
    for run_id in run_ids:
        found = wh.scalar(
            "SELECT (SELECT count(*) FROM runs WHERE run_id = ?) + (SELECT count(*) FROM retrieval_results "
            "WHERE run_id = ?) + (SELECT count(*) FROM answers WHERE run_id = ?)", [run_id, run_id, run_id])
        if not found:
            missing.append(run_id)
    return missing


def question_pairs(wh: Warehouse, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """Questions of either run with their text and status in each."""
    return wh.query(
        "SELECT coalesce(a.question_id, b.question_id) AS question_id, coalesce(a.text, b.text) AS text, "
        "a.status AS status_a, b.status AS status_b, a.error AS error_a, b.error AS error_b "
        "FROM (SELECT * FROM questions WHERE run_id = ?) a "
        "FULL OUTER JOIN (SELECT * FROM questions WHERE run_id = ?) b ON a.question_id = b.question_id "
        "ORDER BY 1", [run_a, run_b])


def verdict_pairs(wh: Warehouse, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """Verdicts of either run paired by (question, candidate), with role, reason and relevance on each side."""
    return wh.query(
        "SELECT coalesce(a.question_id, b.question_id) AS question_id, "
        "coalesce(a.candidate_id, b.candidate_id) AS candidate_id, "
        "a.role AS role_a, b.role AS role_b, a.reason AS reason_a, b.reason AS reason_b, "
        "a.relevance AS relevance_a, b.relevance AS relevance_b, a.decision AS decision_a, b.decision AS decision_b "
        "FROM (SELECT * FROM verdicts WHERE run_id = ?) a "
        "FULL OUTER JOIN (SELECT * FROM verdicts WHERE run_id = ?) b "
        "ON a.question_id = b.question_id AND a.candidate_id = b.candidate_id "
        "ORDER BY 1, 2", [run_a, run_b])


def retrieval_pairs(wh: Warehouse, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """Retrieval results paired by question: status, rule and the primary passages' (doc, page) on each side."""
    primary = ("list_sort(list_distinct(list_transform(CAST(json_extract(result, '$.primary') AS JSON[]), "
               "lambda p: json_extract_string(p, '$.doc_id') || ':' || json_extract_string(p, '$.page'))))")
    return wh.query(
        "WITH r AS (SELECT run_id, question_id, status, rule, error, "
        f"CASE WHEN result IS NULL THEN [] ELSE {primary} END AS primary_pages FROM retrieval_results "
        "WHERE run_id IN (?, ?)) "
        "SELECT coalesce(a.question_id, b.question_id) AS question_id, a.status AS status_a, b.status AS status_b, "
        "a.rule AS rule_a, b.rule AS rule_b, a.primary_pages AS primary_pages_a, b.primary_pages AS primary_pages_b, "
        "a.error AS error_a, b.error AS error_b "
        "FROM (SELECT * FROM r WHERE run_id = ?) a FULL OUTER JOIN (SELECT * FROM r WHERE run_id = ?) b "
        "ON a.question_id = b.question_id ORDER BY 1", [run_a, run_b, run_a, run_b])


def answer_pairs(wh: Warehouse, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """Answers paired by (question, regime): value (raw and normalised), status, exit and the answer's tokens."""
    cols = ("value", "value_norm", "status", "exit", "steps", "answer_found", "correct", "input_tokens",
            "output_tokens", "provider", "model")
    select = ", ".join(f"a.{c} AS {c}_a, b.{c} AS {c}_b" for c in cols)
    return wh.query(
        "SELECT coalesce(a.question_id, b.question_id) AS question_id, coalesce(a.regime, b.regime) AS regime, "
        f"{select} FROM (SELECT * FROM answers WHERE run_id = ?) a "
        "FULL OUTER JOIN (SELECT * FROM answers WHERE run_id = ?) b "
        "ON a.question_id = b.question_id AND a.regime = b.regime ORDER BY 1, 2", [run_a, run_b])


def spend_pairs(wh: Warehouse, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """Per question and stage: attempts, input/output tokens, cost (NULL when a model is unpriced) and reference
    cost (the same tokens at the ``reference`` price row: what offline providers' calls would cost) per run."""
    flush_calls(wh)
    return wh.query(
        "WITH s AS (SELECT run_id, question_id, stage, count(*) AS attempts, "
        "sum(coalesce(input_tokens, 0)) AS input_tokens, sum(coalesce(output_tokens, 0)) AS output_tokens, "
        "CASE WHEN count(*) FILTER (WHERE cost_usd IS NULL) = 0 THEN sum(cost_usd) END AS cost_usd, "
        "sum(coalesce(reference_cost_usd, 0)) AS reference_cost_usd "
        "FROM llm_call_costs WHERE run_id IN (?, ?) AND question_id IS NOT NULL GROUP BY ALL) "
        "SELECT coalesce(a.question_id, b.question_id) AS question_id, coalesce(a.stage, b.stage) AS stage, "
        "a.attempts AS attempts_a, b.attempts AS attempts_b, a.input_tokens AS input_tokens_a, "
        "b.input_tokens AS input_tokens_b, a.output_tokens AS output_tokens_a, b.output_tokens AS output_tokens_b, "
        "a.cost_usd AS cost_usd_a, b.cost_usd AS cost_usd_b, "
        "a.reference_cost_usd AS reference_cost_usd_a, b.reference_cost_usd AS reference_cost_usd_b "
        "FROM (SELECT * FROM s WHERE run_id = ?) a FULL OUTER JOIN (SELECT * FROM s WHERE run_id = ?) b "
        "ON a.question_id = b.question_id AND a.stage = b.stage ORDER BY 1, 2", [run_a, run_b, run_a, run_b])


def answer_runs_between(wh: Warehouse, since: Any | None, until: Any | None,
                        flows: tuple[str, ...] = ("answer",)) -> list[dict[str, Any]]:
    """Finished answer runs started in [since, until) (either bound optional), oldest first: backfill sources."""
    sql = ("SELECT run_id, flow, started_at, status, config FROM runs WHERE flow IN (SELECT unnest(?)) "
           "AND status IN ('ok', 'partial')")
    params: list[Any] = [list(flows)]
    if since is not None:
        sql += " AND started_at >= ?"
        params.append(since)
    if until is not None:
        sql += " AND started_at < ?"
        params.append(until)
    return wh.query(sql + " ORDER BY started_at, run_id", params)


# what a backfill that starts its questions' walk at a stage copies from its source run: everything upstream of it
COPIED_FOR = {
    "detect": (),
    "arbitrate": ("detector_hits", "candidates"),
    "dispatch": ("detector_hits", "candidates", "verdicts"),
    "generate": ("detector_hits", "candidates", "verdicts", "retrieval_results"),
}


def copy_question_rows(wh: Warehouse, source_run_id: str, new_run_id: str, start: str) -> dict[str, int]:
    """Copy what a walk starting at ``start`` (detect, arbitrate, dispatch, generate) reads of a run's questions
    into ``new_run_id``, replacing the rows it already has; rows copied per table. The questions are reset to
    what the copied rows make them: 'loaded' with nothing, 'detected' with candidates, 'arbitrated' with a
    retrieval result; a question that failed before detection (e.g. its document is missing) stays failed with
    its error."""
    if start not in COPIED_FOR:
        raise ValueError(f"unknown start stage {start!r}; one of {', '.join(COPIED_FOR)}")
    tables = COPIED_FOR[start]
    status = "arbitrated" if "retrieval_results" in tables else "detected" if tables else "loaded"
    with wh.transaction():
        counts = {table: copy_table_rows(wh, table, source_run_id, new_run_id,
                                         "status <> 'failed'" if table == "retrieval_results" else "true")
                  for table in tables}
        wh.execute("DELETE FROM questions WHERE run_id = ?", [new_run_id])
        wh.execute(
            "INSERT INTO questions SELECT * REPLACE (? AS run_id, CASE "
            "  WHEN status = 'failed' AND question_id NOT IN (SELECT question_id FROM candidates WHERE run_id = ?) "
            "  THEN status"
            "  WHEN ? = 'arbitrated' AND question_id NOT IN (SELECT question_id FROM retrieval_results "
            "    WHERE run_id = ?) THEN 'detected'"
            "  ELSE ? END AS status, CASE "
            "  WHEN status = 'failed' AND question_id NOT IN (SELECT question_id FROM candidates WHERE run_id = ?) "
            "  THEN error END AS error) FROM questions WHERE run_id = ?",
            [new_run_id, source_run_id, status, new_run_id, status, source_run_id, source_run_id])
        counts = {"questions": wh.scalar("SELECT count(*) FROM questions WHERE run_id = ?", [new_run_id]), **counts}
    return counts


def copy_table_rows(wh: Warehouse, table: str, source_run_id: str, new_run_id: str, where: str = "true") -> int:
    """Replace ``new_run_id``'s rows of ``table`` with copies of ``source_run_id``'s (those ``where`` holds for),
    inside the caller's transaction; returns the rows ``new_run_id`` now has there."""
    wh.execute(f"DELETE FROM {table} WHERE run_id = ?", [new_run_id])
    wh.execute(f"INSERT INTO {table} SELECT * REPLACE (? AS run_id) FROM {table} WHERE run_id = ? AND ({where})",
               [new_run_id, source_run_id])
    return wh.scalar(f"SELECT count(*) FROM {table} WHERE run_id = ?", [new_run_id])


def failed_before_detection(wh: Warehouse, run_id: str) -> set[str]:
    """Questions that failed with no candidates (e.g. a missing document): nothing for a backfill to walk again."""
    return {r[0] for r in wh.execute(
        "SELECT question_id FROM questions q WHERE run_id = ? AND status = 'failed' AND NOT EXISTS "
        "(SELECT 1 FROM candidates c WHERE c.run_id = q.run_id AND c.question_id = q.question_id)", [run_id])}


def candidate_docs_without_lines(wh: Warehouse, run_id: str) -> list[str]:
    """Doc ids a run's candidates point at that ``lines`` no longer holds (the file changed or vanished since)."""
    return [r[0] for r in wh.execute(
        "SELECT DISTINCT c.doc_id FROM candidates c WHERE c.run_id = ? AND NOT EXISTS "
        "(SELECT 1 FROM lines l WHERE l.doc_id = c.doc_id) ORDER BY 1", [run_id])]


def doc_names(wh: Warehouse, doc_ids: list[str]) -> dict[str, str]:
    """doc_id -> the file name it was last ingested from (for readable page references)."""
    if not doc_ids:
        return {}
    rows = wh.execute(
        "SELECT doc_id, arg_max(path, ingested_at) FROM documents WHERE doc_id IN (SELECT unnest(?)) GROUP BY 1",
        [sorted(set(doc_ids))])
    return {doc_id: path.rsplit("/", 1)[-1] for doc_id, path in rows}


def child_runs(wh: Warehouse, parent_run_id: str, flow: str | None = None) -> list[dict[str, Any]]:
    """Runs recorded with ``parent_run_id`` (a nightly's ingest/answer runs, a run's backfills), oldest first."""
    return wh.query_where("SELECT run_id, flow, status, config, summary, started_at FROM runs",
                          {"parent_run_id": parent_run_id}, "started_at, run_id", optional={"flow": flow})
