"""SQL that reads training pairs for the learned arbiter: a run's candidate pools with their question, and either
the question's gold (``pool_rows``) or the verdicts an arbiter gave them (``verdict_rows``).

Rows come one per pooled candidate (``in_pool``: what the arbiter saw), questions in load order, candidates in RRF
order; ``ranks``/``raw_scores`` decoded, NULL texts and lists as empty ones (the fields of CandidateBrief and
ParsedQuestion are all there). ``doc_ids`` are the doc ids of the question's own documents (None when the
question is unscoped), for matching gold pages to the right document.
"""

from __future__ import annotations

import json
from typing import Any

from warehouse.db import Warehouse
from warehouse.llm_log import flush_calls

_COLUMNS = """
    c.question_id, c.candidate_id, c.doc_id, c.page, c.line_start, c.line_end, c.section_id,
    coalesce(c.section, '') AS section, coalesce(c.methods, []::VARCHAR[]) AS methods, c.ranks, c.raw_scores,
    coalesce(c.matched_keywords, []::VARCHAR[]) AS matched_keywords, coalesce(c.snippet, '') AS snippet,
    c.rrf_score, c.rrf_rank, coalesce(c.document, '') AS document, coalesce(c.preferred, '') AS preferred,
    c.preferred_group, q.text, coalesce(q.keywords_primary, []::VARCHAR[]) AS keywords_primary,
    coalesce(q.keywords_secondary, []::VARCHAR[]) AS keywords_secondary, q.answer_shape, q.decomposition,
    coalesce(q.intent, '') AS intent, coalesce(q.parser, '') AS parser, q.docs, q.gold_pages,
    (SELECT list(d.doc_id ORDER BY d.doc_id) FROM documents d
     WHERE list_contains(q.docs, d.path) AND d.status = 'ok') AS doc_ids"""

POOL_SQL = f"""
SELECT {_COLUMNS}
FROM candidates c
JOIN questions q ON q.run_id = c.run_id AND q.question_id = c.question_id
WHERE c.run_id = ? AND c.in_pool
ORDER BY q.rowid, c.rrf_rank, c.candidate_id
"""

VERDICT_SQL = f"""
SELECT {_COLUMNS},
       v.role, v.decision, v.flagged, v.relevance, v.provider, v.model, v.call_id,
       TRY_CAST(json_extract(l.parsed, '$.not_found') AS BOOLEAN) AS arbiter_not_found
FROM verdicts v
JOIN candidates c ON c.run_id = v.run_id AND c.question_id = v.question_id AND c.candidate_id = v.candidate_id
JOIN questions q ON q.run_id = v.run_id AND q.question_id = v.question_id
LEFT JOIN llm_calls l ON l.call_id = v.call_id AND l.status = 'ok'
WHERE v.run_id = ?
ORDER BY q.rowid, c.rrf_rank, c.candidate_id
"""


def _decode(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for r in rows:
        r["ranks"] = json.loads(r["ranks"]) if r["ranks"] else {}
        r["raw_scores"] = json.loads(r["raw_scores"]) if r["raw_scores"] else {}
        if r["docs"] is None:
            r["doc_ids"] = None
    return rows


def pool_rows(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """Every pooled candidate of ``run_id`` with its question's parse, scope and stored gold pages."""
    return _decode(wh.query(POOL_SQL, [run_id]))


def verdict_rows(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """Every verdict of ``run_id`` with its candidate, question, and the call's own not_found (None when unknown)."""
    flush_calls(wh)  # the client may log calls in batches: read our own writes
    return _decode(wh.query(VERDICT_SQL, [run_id]))


def run_flow(wh: Warehouse, run_id: str) -> str | None:
    """The flow that made ``run_id`` (None when the run does not exist)."""
    return wh.scalar("SELECT flow FROM runs WHERE run_id = ?", [run_id])
