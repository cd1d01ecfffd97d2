"""The ``replay`` provider: answers from the ``llm_calls`` log by request hash, for audits and reruns.

It serves the validated output (``parsed``) of the latest successful call with the same ``request_hash`` (in one
run when ``run_id`` is given; original calls are preferred over earlier replays). A miss is a terminal error:
replay never invents an answer and never falls back silently.

Its rows: provider and model ``replay`` (priced at 0: a replay spends nothing), ``replay_of`` = the call_id
of the original call, and the token columns repeat the original call's usage (``tokens_counted`` as it was), so
a replayed run shows what its answers cost when they were made; ``llm_costs_by_run_stage.replayed`` counts them.
"""

from __future__ import annotations

from schemas.contracts import LLMUsage
from tasks.llm.base import LLMRequest, ProviderReply, TerminalLLMError
from warehouse.db import Warehouse
from warehouse.llm_log import find_replayable


class ReplayProvider:
    name = "replay"
    model = "replay"
    offline = True

    def __init__(self, wh: Warehouse, run_id: str | None = None):
        self.wh = wh
        self.run_id = run_id

    def send(self, request: LLMRequest) -> ProviderReply:
        request_hash = request.request_hash()
        row = find_replayable(self.wh, request_hash, self.run_id)
        if row is None:
            scope = f"run {self.run_id}" if self.run_id else "any run"
            raise TerminalLLMError(
                f"no logged call with request hash {request_hash[:16]}... in {scope} (stage {request.stage}, "
                f"question {request.question_id}): replay cannot invent an answer; rerun with a live provider"
                + (" or replay from another run (ARBITER_ARBITER__REPLAY_RUN_ID)" if self.run_id else "")
            )
        usage = LLMUsage(
            input_tokens=row["input_tokens"] or 0,
            cached_tokens=row["cached_tokens"] or 0,
            output_tokens=row["output_tokens"] or 0,
            reasoning_tokens=row["reasoning_tokens"] or 0,
            counted=bool(row["tokens_counted"]),
        )
        return ProviderReply(text=row["parsed"], usage=usage, raw=row["response"],
                             replay_of=row["replay_of"] or row["call_id"])
