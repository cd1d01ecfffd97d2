"""The arbiter stage of a question's walk, nothing written: :func:`arbitrate` (brief -> one client call, validated
with one corrective retry inside the client -> missing ids completed -> dispatcher -> RetrievalResult) and
:func:`redispatch` (a stored arbiter output through the dispatcher again, no call). A failed call comes back as an
:class:`Arbitration` with its error, so the walk records it and goes on with the other questions.
"""

from __future__ import annotations

import logging
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
from warehouse.corpus import lines_text as corpus_lines
from warehouse.db import Warehouse

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


def redispatch(question_id: str, output: ArbiterOutput, source: dict[str, Any], candidates: list[CandidateBrief],
               profile: str | DispatchProfile, overrides: Mapping[str, Any] | None, lines_text) -> Arbitration:
    """A stored arbiter output through the dispatcher again (other thresholds or profile), no call: ``source`` is
    the output's provenance (provider, model, call_id), ``candidates`` the pool it judged."""
    judged = {v.candidate_id for v in output.verdicts}
    pool = [c for c in candidates if c.candidate_id in judged]
    result = dispatch(question_id, output, pool, profile, overrides, arbiter_provider=source["provider"],
                      arbiter_model=source["model"], arbiter_call_id=source["call_id"], lines_text=lines_text)
    return Arbitration(output, source["provider"], source["model"], source["call_id"], result)
