"""``verdicts`` and ``retrieval_results``: what the arbiter said and what the dispatcher handed to generation.

Writes are idempotent per (run_id, question_id): a rerun replaces the question's rows in one transaction.
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
# Tables a redispatch copies from its source run: everything upstream of the dispatcher.
REDISPATCH_TABLES = ("questions", "detector_hits", "candidates", "verdicts")


def save_verdicts(wh: Warehouse, run_id: str, question_id: str, verdicts: list[CandidateVerdict], *,
                  provider: str, model: str, call_id: str | None) -> int:
    rows = verdict_rows(run_id, question_id, verdicts, provider=provider, model=model, call_id=call_id)
    with wh.transaction():
        wh.execute("DELETE FROM verdicts WHERE run_id = ? AND question_id = ?", [run_id, question_id])
        wh.insert_rows("verdicts", rows)
    return len(rows)


def verdict_rows(run_id: str, question_id: str, verdicts: list[CandidateVerdict], *, provider: str, model: str,
                 call_id: str | None) -> list[dict[str, Any]]:
    """The ``verdicts`` rows of one question (save_verdicts, or its chunk's batch write)."""
    return [
        {"run_id": run_id, "question_id": question_id, "candidate_id": v.candidate_id, "role": v.role,
         "decision": v.decision, "reason": v.reason, "relevance": v.relevance, "contradicts": list(v.contradicts),
         "anchor_found": v.anchor_found, "rewrite": v.rewrite, "flagged": v.flagged, "provider": provider,
         "model": model, "call_id": call_id}
        for v in verdicts
    ]


def save_retrieval_result(wh: Warehouse, run_id: str, result: RetrievalResult) -> None:
    _upsert_result(wh, run_id, result.question_id, status=result.status, rule=result.rule,
                   result=result.model_dump_json(), provider=result.arbiter_provider, model=result.arbiter_model,
                   call_id=result.arbiter_call_id, error=None)


def save_failed_retrieval(wh: Warehouse, run_id: str, question_id: str, error: str, *,
                          provider: str | None = None, model: str | None = None) -> None:
    """A question whose arbiter call failed: status 'failed', the error, no result (a rerun retries it)."""
    _upsert_result(wh, run_id, question_id, status="failed", rule=None, result=None, provider=provider, model=model,
                   call_id=None, error=error)


def retrieval_row(run_id: str, question_id: str, result: RetrievalResult | None, *, error: str | None = None,
                  provider: str | None = None, model: str | None = None) -> dict[str, Any]:
    """The ``retrieval_results`` row of one question: its result, or (None) its failed arbiter call's error."""
    if result is None:
        return {"run_id": run_id, "question_id": question_id, "status": "failed", "rule": None, "result": None,
                "arbiter_provider": provider, "arbiter_model": model, "arbiter_call_id": None, "error": error}
    return {"run_id": run_id, "question_id": question_id, "status": result.status, "rule": result.rule,
            "result": result.model_dump_json(), "arbiter_provider": result.arbiter_provider,
            "arbiter_model": result.arbiter_model, "arbiter_call_id": result.arbiter_call_id, "error": None}


def _upsert_result(wh: Warehouse, run_id: str, question_id: str, *, status: str, rule: str | None,
                   result: str | None, provider: str | None, model: str | None, call_id: str | None,
                   error: str | None) -> None:
    with wh.transaction():
        wh.execute("DELETE FROM retrieval_results WHERE run_id = ? AND question_id = ?", [run_id, question_id])
        wh.execute(
            "INSERT INTO retrieval_results (run_id, question_id, status, rule, result, arbiter_provider, "
            "arbiter_model, arbiter_call_id, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [run_id, question_id, status, rule, result, provider, model, call_id, error],
        )


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


def copy_run_rows(wh: Warehouse, source_run_id: str, new_run_id: str,
                  tables: tuple[str, ...] = REDISPATCH_TABLES) -> dict[str, int]:
    """Copy a run's rows of ``tables`` under ``new_run_id`` (replacing any already there); rows copied per table."""
    unknown = sorted(set(tables) - set(REDISPATCH_TABLES))
    if unknown:
        raise ValueError(f"copy_run_rows copies only {REDISPATCH_TABLES}, not {unknown}")
    with wh.transaction():
        return {table: copy_table_rows(wh, table, source_run_id, new_run_id) for table in tables}


def copy_table_rows(wh: Warehouse, table: str, source_run_id: str, new_run_id: str) -> int:
    """Replace ``new_run_id``'s rows of ``table`` with copies of ``source_run_id``'s, inside the caller's
    transaction; returns the rows ``new_run_id`` now has there."""
    wh.execute(f"DELETE FROM {table} WHERE run_id = ?", [new_run_id])
    wh.execute(f"INSERT INTO {table} SELECT * REPLACE (? AS run_id) FROM {table} WHERE run_id = ?",
               [new_run_id, source_run_id])
    return wh.scalar(f"SELECT count(*) FROM {table} WHERE run_id = ?", [new_run_id])


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
