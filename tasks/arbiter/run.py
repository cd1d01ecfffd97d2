"""Arbitrate one question (one LLM call, all candidates) and store it; re-dispatch a past run without any call.

``arbitrate_question`` is the arbiter stage of the pipeline: brief -> client call (validated, one retry with
feedback inside the client) -> missing ids completed -> verdicts stored -> dispatcher -> RetrievalResult stored.
A failed call is recorded (``retrieval_results.status = 'failed'``, question failed) and returns None, so the
caller goes on with other questions. ``redispatch_run`` replays the dispatcher over a run's stored verdicts with
other thresholds: a new linked run, no new LLM call.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schemas.contracts import (
    ArbiterOutput,
    CandidateBrief,
    ParsedQuestion,
    RetrievalResult,
)
from schemas.settings import DispatchProfile
from tasks.arbiter.brief import build_arbiter_request
from tasks.arbiter.dispatch import dispatch, resolve_profile
from tasks.arbiter.validate import complete_verdicts, make_validator
from tasks.llm.client import LLMCallFailed, LLMClient
from warehouse import retrieval as store
from warehouse.corpus import lines_text as corpus_lines
from warehouse.db import Warehouse
from warehouse.detection import load_candidates
from warehouse.questions import UnknownQuestionError, set_question_status
from warehouse.runs import fails_run, finish_run, get_run, record_error, start_run

log = logging.getLogger("arbiter.arbiter")


def passage_text(wh: Warehouse):
    """``lines_text`` for the dispatcher: the stored lines of a range, joined (None when not ingested)."""

    def text(doc_id: str, line_start: int, line_end: int) -> str | None:
        rows = corpus_lines(wh, doc_id, line_start, line_end)
        return "\n".join(r["text"] for r in rows) or None

    return text


@dataclass
class Arbitration:
    """One arbiter pass over a question's pool, nothing written: the verdicts' provenance and the dispatcher's
    RetrievalResult, or (``error``) the failed call, whose provider then names who failed."""

    output: ArbiterOutput
    provider: str
    model: str
    call_id: str | None
    result: RetrievalResult | None = None
    error: str | None = None


def arbitrate(question: ParsedQuestion, candidates: list[CandidateBrief], client: LLMClient,
              profile: str | DispatchProfile, overrides: Mapping[str, Any] | None, absent_terms: list[str] | None,
              lines_text) -> Arbitration:
    """Brief -> one client call (validated, one corrective retry inside the client) -> missing ids completed ->
    dispatcher. Writes nothing but the call's own ``llm_calls`` row (the client logs it)."""
    qid = question.question_id
    resolve_profile(profile, overrides)  # a bad profile fails before any call is spent
    provider, model = client.provider.name, client.provider.model
    if not candidates:
        output, call_id = ArbiterOutput(verdicts=[]), None
    else:
        ids = [c.candidate_id for c in candidates]
        request = build_arbiter_request(question, candidates, absent_terms)
        try:
            reply = client.complete(request, validate=make_validator(ids))
        except LLMCallFailed as exc:
            log.warning("arbiter failed for %s: %s", qid, exc)
            return Arbitration(ArbiterOutput(verdicts=[]), exc.provider, model, None, error=str(exc))
        output, missing = complete_verdicts(reply.parsed, ids)
        if missing:
            log.info("arbiter left %d of %d candidates unranked for %s", len(missing), len(ids), qid)
        provider, model, call_id = reply.provider, reply.model, reply.call_id
    result = dispatch(qid, output, candidates, profile, overrides, arbiter_provider=provider, arbiter_model=model,
                      arbiter_call_id=call_id, lines_text=lines_text)
    return Arbitration(output, provider, model, call_id, result)


def arbitrate_question(wh: Warehouse, run_id: str, question: ParsedQuestion, candidates: list[CandidateBrief],
                       client: LLMClient, profile: str | DispatchProfile = "balanced",
                       overrides: Mapping[str, Any] | None = None,
                       absent_terms: list[str] | None = None) -> RetrievalResult | None:
    """One arbiter call for ``question``; stores verdicts and the RetrievalResult. None when the call failed.
    ``absent_terms``: the question's distinctive terms that the searched documents lack (tasks.detect.run.absent_terms;
    None = not known), carried by the brief."""
    qid = question.question_id
    a = arbitrate(question, candidates, client, profile, overrides, absent_terms, passage_text(wh))
    # replaces the question's rows, also when this pass has none (no candidates, failed) so no stale verdict stays
    store.save_verdicts(wh, run_id, qid, a.output.verdicts, provider=a.provider, model=a.model, call_id=a.call_id)
    if a.error is not None:
        store.save_failed_retrieval(wh, run_id, qid, a.error, provider=a.provider, model=a.model)
        _set_status(wh, run_id, qid, "failed", f"arbiter: {a.error}")
        record_error(wh, run_id, "arbiter", qid, a.error)
        return None
    store.save_retrieval_result(wh, run_id, a.result)
    return a.result


def _set_status(wh: Warehouse, run_id: str, qid: str, status: str, error: str | None = None) -> None:
    """Question status, when the run holds the question (arbitrate_question also serves callers without one)."""
    try:
        set_question_status(wh, run_id, qid, status, error)
    except UnknownQuestionError:
        log.debug("question %s has no questions row in run %s; status %s not recorded there", qid, run_id, status)


def redispatch_run(wh: Warehouse, source_run_id: str, profile: str | None = None,
                   overrides: Mapping[str, Any] | None = None, new_run_id: str | None = None) -> str:
    """Dispatch ``source_run_id``'s stored verdicts again under other thresholds; returns the new run's id.

    The new run (flow 'redispatch', parent = source) gets copies of the source's questions, detector hits,
    candidates and verdicts, and fresh retrieval_results. No LLM is called; questions whose arbiter call failed
    stay failed. ``profile`` defaults to the one the source run used.
    """
    source = get_run(wh, source_run_id)
    if source is None:
        raise LookupError(f"run {source_run_id!r} not found; see `arbiter runs list` for run ids")
    config = source.get("config")
    if isinstance(config, str):
        config = json.loads(config)
    profile = profile or (config or {}).get("profile") or "balanced"
    profile_name, _ = resolve_profile(profile, overrides)
    new_run_id = start_run(wh, "redispatch", {"source_run_id": source_run_id, "profile": profile,
                                               "overrides": dict(overrides or {})},
                           run_id=new_run_id, parent_run_id=source_run_id)
    with fails_run(wh, new_run_id):
        copied = store.copy_run_rows(wh, source_run_id, new_run_id)
        statuses: Counter[str] = Counter()
        for row in store.run_results(wh, source_run_id):
            qid = row["question_id"]
            if row["status"] == "failed":
                store.save_failed_retrieval(wh, new_run_id, qid, f"source run {source_run_id}: {row['error']}",
                                            provider=row["arbiter_provider"], model=row["arbiter_model"])
                _set_status(wh, new_run_id, qid, "failed", "arbiter call failed in the source run")
                statuses["failed"] += 1
                continue
            loaded = store.load_arbiter_output(wh, new_run_id, qid)
            output, prov = loaded if loaded else (ArbiterOutput(verdicts=[]), {
                "provider": row["arbiter_provider"], "model": row["arbiter_model"], "call_id": None})
            judged = {v.candidate_id for v in output.verdicts}
            candidates = [c for c in load_candidates(wh, new_run_id, qid) if c.candidate_id in judged]
            result = dispatch(qid, output, candidates, profile, overrides, arbiter_provider=prov["provider"],
                              arbiter_model=prov["model"], arbiter_call_id=prov["call_id"],
                              lines_text=passage_text(wh))
            store.save_retrieval_result(wh, new_run_id, result)
            _set_status(wh, new_run_id, qid, "arbitrated")
            statuses[result.status] += 1
    summary = {"source_run_id": source_run_id, "profile": profile_name, "copied": copied, "statuses": dict(statuses)}
    finish_run(wh, new_run_id, "partial" if statuses.get("failed") else "ok", summary)
    return new_run_id
