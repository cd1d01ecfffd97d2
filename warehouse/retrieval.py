"""``verdicts`` and ``retrieval_results``: what the arbiter said and what the dispatcher handed to generation.

The rows are built here and written by ``warehouse.sink`` (replaced whole per (run_id, question_id)).
The arbiter's question-level ``not_found`` lives in its ``llm_calls`` row (``parsed``), the one record of the
call; :func:`load_arbiter_output` rebuilds the full output from there and the verdict rows.
"""

from __future__ import annotations

import json
from typing import Any

from schemas.contracts import ArbiterOutput, CandidateVerdict, RetrievalResult
from warehouse.db import Warehouse, WarehouseError
from warehouse.llm_log import flush_calls

VERDICT_COLUMNS = ("candidate_id", "role", "decision", "reason", "relevance", "contradicts", "anchor_found",
                   "rewrite", "flagged", "provider", "model", "call_id")


def verdict_rows(run_id: str, question_id: str, verdicts: list[CandidateVerdict], *, provider: str, model: str,
                 call_id: str | None) -> list[dict[str, Any]]:
    """The ``verdicts`` rows of one question."""
    return [
        {"run_id": run_id, "question_id": question_id, "candidate_id": v.candidate_id, "role": v.role,
         "decision": v.decision, "reason": v.reason, "relevance": v.relevance, "contradicts": list(v.contradicts),
         "anchor_found": v.anchor_found, "rewrite": v.rewrite, "flagged": v.flagged, "provider": provider,
         "model": model, "call_id": call_id}
        for v in verdicts
    ]


def retrieval_row(run_id: str, question_id: str, result: RetrievalResult | None, *, error: str | None = None,
                  provider: str | None = None, model: str | None = None) -> dict[str, Any]:
    """The ``retrieval_results`` row of one question: its result, or (None) its failed arbiter call's error (status
    'failed', no result: a rerun retries it)."""
    if result is None:
        return {"run_id": run_id, "question_id": question_id, "status": "failed", "rule": None, "result": None,
                "arbiter_provider": provider, "arbiter_model": model, "arbiter_call_id": None, "error": error}
    return {"run_id": run_id, "question_id": question_id, "status": result.status, "rule": result.rule,
            "result": result.model_dump_json(), "arbiter_provider": result.arbiter_provider,
            "arbiter_model": result.arbiter_model, "arbiter_call_id": result.arbiter_call_id, "error": None}


def load_retrieval_result(wh: Warehouse, run_id: str, question_id: str) -> RetrievalResult | None:
    """The stored result, or None when the question has none yet or its arbiter call failed (rerun it)."""
    row = load_retrieval_row(wh, run_id, question_id)
    if row is None or row["status"] == "failed" or row["result"] is None:
        return None
    return RetrievalResult.model_validate_json(row["result"])


def load_retrieval_row(wh: Warehouse, run_id: str, question_id: str) -> dict[str, Any] | None:
    """The raw ``retrieval_results`` row (failed ones included), for audits."""
    rows = wh.query("SELECT * FROM retrieval_results WHERE run_id = ? AND question_id = ?", [run_id, question_id])
    return rows[0] if rows else None


def load_verdicts(wh: Warehouse, run_id: str, question_id: str) -> list[dict[str, Any]]:
    """Verdict rows in the order they were stored (brief order), with provider, model and call id."""
    return wh.query(
        f"SELECT {', '.join(VERDICT_COLUMNS)} FROM verdicts WHERE run_id = ? AND question_id = ? ORDER BY rowid",
        [run_id, question_id],
    )


def load_arbiter_output(wh: Warehouse, run_id: str, question_id: str) -> tuple[ArbiterOutput, dict[str, Any]] | None:
    """The arbiter's output for a question (verdicts as stored, not_found from its call) and its provenance.

    Returns None when the question has no verdicts in ``run_id``. Raises WarehouseError when the verdicts name a
    call that ``llm_calls`` no longer holds, since the question-level not_found would be unknown.
    """
    rows = load_verdicts(wh, run_id, question_id)
    if not rows:
        return None
    verdicts = [
        CandidateVerdict(candidate_id=r["candidate_id"], role=r["role"], decision=r["decision"], reason=r["reason"],
                         relevance=r["relevance"], contradicts=list(r["contradicts"] or []),
                         anchor_found=r["anchor_found"], rewrite=r["rewrite"], flagged=r["flagged"])
        for r in rows
    ]
    source = {k: rows[0][k] for k in ("provider", "model", "call_id")}
    not_found, reason = False, None
    if source["call_id"] is not None:
        flush_calls(wh)  # the client logs calls in batches: read our own writes
        parsed = wh.scalar("SELECT parsed FROM llm_calls WHERE call_id = ?", [source["call_id"]])
        if parsed is None:
            raise WarehouseError(
                f"verdicts of question {question_id} in run {run_id} come from arbiter call {source['call_id']}, "
                "which llm_calls does not hold (pruned?); rerun the question with the arbiter instead"
            )
        data = json.loads(parsed)
        not_found, reason = bool(data.get("not_found")), data.get("not_found_reason")
    output = ArbiterOutput(verdicts=verdicts, not_found=not_found, not_found_reason=reason)
    return output, source


def run_results(wh: Warehouse, run_id: str) -> list[dict[str, Any]]:
    """Every ``retrieval_results`` row of a run (failed ones included), by question id."""
    return wh.query("SELECT * FROM retrieval_results WHERE run_id = ? ORDER BY question_id", [run_id])


# -- audit reads ----------------------------------------------------------------------------------------------------
def candidate_rows(wh: Warehouse, run_id: str, question_id: str) -> list[dict[str, Any]]:
    """The question's candidates as stored (pool flag and RRF rank included), best RRF first."""
    return wh.query("SELECT * FROM candidates WHERE run_id = ? AND question_id = ? ORDER BY rrf_rank, candidate_id",
                    [run_id, question_id])


def hit_counts(wh: Warehouse, run_id: str, question_id: str) -> dict[str, int]:
    return dict(wh.execute(
        "SELECT detector, count(*) FROM detector_hits WHERE run_id = ? AND question_id = ? GROUP BY 1 ORDER BY 1",
        [run_id, question_id]))


def arbiter_calls(wh: Warehouse, run_id: str, question_id: str, call_ids: list[str]) -> list[dict[str, Any]]:
    """Arbiter attempts of a question: those logged in ``run_id`` plus every attempt of the calls ``call_ids``
    (a redispatched run points at its source's call), with ``cost_usd`` when the ``llm_call_costs`` view exists."""
    flush_calls(wh)
    has_costs = bool(wh.scalar("SELECT count(*) FROM duckdb_views() WHERE view_name = 'llm_call_costs'"))
    cost = ", k.cost_usd" if has_costs else ""
    join = " LEFT JOIN llm_call_costs k ON k.call_id = c.call_id" if has_costs else ""
    return wh.query(
        f"SELECT c.call_id, c.call_group, c.run_id, c.provider, c.model, c.attempt, c.status, c.error, "
        f"c.input_tokens, c.cached_tokens, c.output_tokens, c.reasoning_tokens, c.tokens_counted, c.latency_ms, "
        f"c.fallback_from, c.created_at{cost} FROM llm_calls c{join} "
        "WHERE c.stage = 'arbiter' AND ((c.run_id = ? AND c.question_id = ?) OR c.call_id IN (SELECT unnest(?)) "
        "OR c.call_group IN (SELECT call_group FROM llm_calls WHERE call_id IN (SELECT unnest(?)))) "
        "ORDER BY c.created_at, c.attempt",
        [run_id, question_id, call_ids, call_ids],
    )
