"""The two generation regimes (seed 002): batch (one call, all top-K) and sequential (one passage per call).

Sequential reads the two booleans of AnswerWithEvidence, never a confidence threshold, and has three exits:
``sufficiency`` (``answer_found and complete_answer_found``), ``exhaustion`` (all K seen; the best partial answer,
or an answer with ``answer_found = False``, is returned as a first-class answer) and ``budget`` (a passage was
passed over because its step would pass the router's input-token cap, or the wall-time cap is spent; checked
before each step, so the cap is never exceeded). A passage too long for what is left of the cap is passed over,
not the end of the reading: a later, shorter one may still fit (on the filings set the answering table was often
a short passage behind a long one). Batch exits ``single_call``. Every step is one ``llm_calls`` row (stage
generate, regime, step), written by the client. A failed call ends the regime with exit ``failed`` and the error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

from schemas.contracts import AnswerWithEvidence, LLMUsage, ParsedQuestion
from tasks.generate.prompts import (
    GenerationPassage,
    build_generation_request,
    resolve_evidence,
)
from tasks.generate.router import Budget
from tasks.llm.base import LLMRequest, LLMResult, TerminalLLMError
from tasks.llm.tokens import count_messages


class Completer(Protocol):
    def complete(self, request: LLMRequest, validate=None) -> LLMResult: ...


@dataclass
class RegimeOutcome:
    """What one regime run produced: the answer (None when failed), how it ended, and what it spent."""

    regime: str
    exit: str
    steps: int
    answer: AnswerWithEvidence | None
    usage: LLMUsage = field(default_factory=LLMUsage)
    latency_ms: float = 0.0
    call_ids: list[str] = field(default_factory=list)
    provider: str | None = None
    model: str | None = None
    error: str | None = None
    budget_hit: str | None = None
    step_answers: list[dict] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "failed" if self.exit == "failed" else "ok"


def _add(total: LLMUsage, usage: LLMUsage | None) -> LLMUsage:
    if usage is None:
        return total
    return LLMUsage(input_tokens=total.input_tokens + usage.input_tokens,
                    cached_tokens=total.cached_tokens + usage.cached_tokens,
                    output_tokens=total.output_tokens + usage.output_tokens,
                    reasoning_tokens=total.reasoning_tokens + usage.reasoning_tokens,
                    counted=total.counted or usage.counted)


def _call(client: Completer, request: LLMRequest, passages: list[GenerationPassage], out: RegimeOutcome
          ) -> AnswerWithEvidence | None:
    """One call; its usage and id are added to ``out``. On failure ``out`` gets exit failed and the error."""
    started = time.perf_counter()
    try:
        result = client.complete(request, validate=lambda answer: resolve_evidence(answer, passages))
    except TerminalLLMError as exc:  # LLMCallFailed and other terminal errors, after the client's retries
        out.usage = _add(out.usage, exc.usage)
        out.latency_ms += (time.perf_counter() - started) * 1000
        out.exit, out.error, out.answer = "failed", f"{type(exc).__name__}: {exc}", None
        return None
    out.usage = _add(out.usage, result.usage)
    out.latency_ms += result.latency_ms
    out.call_ids.append(result.call_id)
    out.provider, out.model = result.provider, result.model
    answer = result.parsed
    out.step_answers.append({"step": request.step, "answer_found": answer.answer_found,
                             "complete_answer_found": answer.complete_answer_found, "value": answer.value})
    return answer


def run_batch(client: Completer, question: ParsedQuestion, passages: list[GenerationPassage], budget: Budget,
              max_output_tokens: int = 400) -> RegimeOutcome:
    """One call with the top ``budget.max_candidates`` passages."""
    shown = passages[: budget.max_candidates]
    out = RegimeOutcome(regime="batch", exit="single_call", steps=1, answer=None)
    request = build_generation_request(question, shown, "batch", step=1, total=len(shown),
                                       max_output_tokens=max_output_tokens)
    answer = _call(client, request, shown, out)
    if answer is not None:
        out.answer = answer
    return out


def _partial(answers: list[AnswerWithEvidence], note: str) -> AnswerWithEvidence:
    """The first (best-ranked) answer that found something; else the honest not-found answer that came closest
    (highest confidence: its passage as evidence, its reason as a caveat); ``note`` added to the caveats."""
    found = next((a for a in answers if a.answer_found), None)
    if found is not None:
        return found.model_copy(update={"caveats": [*found.caveats, note]})
    closest = max(answers, key=lambda a: a.confidence, default=None)  # max keeps the first of equals
    if closest is not None:
        return closest.model_copy(update={"caveats": [*closest.caveats, note]})
    return AnswerWithEvidence(value=None, evidence=[], answer_found=False, complete_answer_found=False,
                              confidence=0.0, caveats=[note], rule="no_step_read")


def run_sequential(client: Completer, question: ParsedQuestion, passages: list[GenerationPassage], budget: Budget,
                   max_output_tokens: int = 400, tokenizer: str = "o200k_base",
                   clock=time.monotonic) -> RegimeOutcome:
    """One passage per call in RetrievalResult order until sufficiency, exhaustion or budget; a passage the token
    cap has no room left for is passed over (``budget_hit`` names the first)."""
    shown = passages[: budget.max_candidates]
    out = RegimeOutcome(regime="sequential", exit="exhaustion", steps=0, answer=None)
    answers: list[AnswerWithEvidence] = []
    started = clock()
    for i, passage in enumerate(shown, start=1):
        request = build_generation_request(question, [passage], "sequential", step=out.steps + 1, total=len(shown),
                                           max_output_tokens=max_output_tokens)
        if budget.max_seconds is not None and clock() - started >= budget.max_seconds:
            out.exit, out.budget_hit = "budget", f"seconds: {clock() - started:.1f} s spent of {budget.max_seconds} s"
            break
        if budget.max_input_tokens is not None:
            estimate = count_messages(request.messages, tokenizer)
            if out.usage.input_tokens + estimate > budget.max_input_tokens:
                out.exit = "budget"
                out.budget_hit = out.budget_hit or (
                    f"tokens: {out.usage.input_tokens} spent + {estimate} for passage {i} > "
                    f"{budget.max_input_tokens}")
                continue  # passed over: a later, shorter passage may still fit
        out.steps += 1
        answer = _call(client, request, [passage], out)
        if answer is None:
            return out
        answers.append(answer)
        if answer.answer_found and answer.complete_answer_found:
            out.exit, out.answer = "sufficiency", answer
            return out
    if out.exit == "budget":
        out.answer = _partial(answers, f"sequential budget reached after {out.steps} step(s) ({out.budget_hit})")
    else:
        out.answer = _partial(answers, f"no single candidate was sufficient ({out.steps} of {len(shown)} seen)")
    return out


def run_regime(regime: str, client: Completer, question: ParsedQuestion, passages: list[GenerationPassage],
               budget: Budget, max_output_tokens: int = 400, tokenizer: str = "o200k_base") -> RegimeOutcome:
    if regime == "batch":
        return run_batch(client, question, passages, budget, max_output_tokens)
    if regime == "sequential":
        return run_sequential(client, question, passages, budget, max_output_tokens, tokenizer)
    raise ValueError(f"unknown regime {regime!r}; expected batch or sequential")
