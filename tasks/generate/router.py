"""The generation router: batch or sequential per question, by deterministic rules (no LLM; seed 002, section 2).

Rules, first match wins (the rule name is recorded on the answer row):

1. ``not_found``          retrieval said not found: no generation call in either regime (the regime is nominal).
2. ``decomposition:<d>``  multi_part / compare questions need every part visible at once -> batch.
3. ``shape:list``,
   ``shape:comparison``   every matching candidate counts, or two must meet in one call -> batch.
4. ``shape:text``         free text has no typed value whose completeness the model can check, so the sufficiency
                          exit rarely fires and sequential would pay K smaller calls plus K copies of the
                          instructions -> batch.
5. ``close_call``         the top two passages' relevance are within ``close_call_margin`` (relative: r2 >= r1 x
                          (1 - margin)) and sit on different pages or documents: retrieval cannot promote its top 1,
                          so let one call see all the evidence -> batch.
6. ``shape:<s>``          a single typed value (amount, date, boolean, entity) -> sequential, stopping at the first
                          sufficient candidate.

Budgets: batch sees at most ``top_k`` passages in one call; sequential steps over at most ``top_k`` passages
within ``seq_max_tokens`` input tokens and ``seq_max_seconds`` wall seconds. Once the passages are read,
:func:`cap_at_batch` lowers the sequential token budget to ``seq_max_batch_share`` of the batch prompt over the
same passages (default 0.65; 0 turns it off): a question that finds nothing in any passage would otherwise pay K prompts' fixed
instructions, more than batch, and auto would cost more than all-batch.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from schemas.contracts import (
    SINGLE_VALUE_SHAPES,
    ParsedQuestion,
    Regime,
    RetrievalResult,
)
from schemas.settings import GenerateSettings


class Budget(BaseModel):
    max_candidates: int = Field(description="passages the regime may read (top-K of the RetrievalResult)")
    max_input_tokens: int | None = Field(description="sequential: input tokens over all steps; None for batch")
    max_seconds: float | None = Field(description="sequential: wall seconds over all steps; None for batch")


class Route(BaseModel):
    regime: Regime
    rule: str
    budget: Budget


def close_call(result: RetrievalResult, margin: float) -> bool:
    """Top-2 passages within ``margin`` (relative) of each other and not on the same page of the same document."""
    passages = result.passages()
    if len(passages) < 2:
        return False
    a, b = passages[0], passages[1]
    hi, lo = max(a.relevance, b.relevance), min(a.relevance, b.relevance)
    if hi <= 0:
        return False
    return lo >= hi * (1 - margin) and (a.doc_id, a.page) != (b.doc_id, b.page)


def budget_for(regime: str, n_passages: int, settings: GenerateSettings) -> Budget:
    k = max(0, min(settings.top_k, n_passages))
    if regime == "sequential":
        return Budget(max_candidates=k, max_input_tokens=settings.seq_max_tokens, max_seconds=settings.seq_max_seconds)
    return Budget(max_candidates=k, max_input_tokens=None, max_seconds=None)


def route(question: ParsedQuestion, result: RetrievalResult, settings: GenerateSettings) -> Route:
    """The regime ``auto`` picks for ``question`` on ``result``; same input, same route."""
    n = len(result.passages())
    shape, decomposition = question.answer_shape, question.decomposition
    if result.status != "found" or n == 0:
        regime, rule = ("sequential" if shape in SINGLE_VALUE_SHAPES else "batch"), "not_found"
    elif decomposition in ("multi_part", "compare"):
        regime, rule = "batch", f"decomposition:{decomposition}"
    elif shape in ("list", "comparison", "text"):
        regime, rule = "batch", f"shape:{shape}"
    elif close_call(result, settings.close_call_margin):
        regime, rule = "batch", "close_call"
    else:
        regime, rule = "sequential", f"shape:{shape}"
    return Route(regime=regime, rule=rule, budget=budget_for(regime, n, settings))


def cap_at_batch(budget: Budget, batch_input_tokens: int, first_step_tokens: int, settings: GenerateSettings
                 ) -> Budget:
    """The sequential budget capped at ``seq_max_batch_share`` x the batch prompt's input tokens (same passages),
    never below the first step's prompt: sequential always reads its top passage (a one-passage batch prompt
    can be a few tokens shorter than the sequential one)."""
    if not settings.seq_max_batch_share or budget.max_input_tokens is None:
        return budget
    cap = max(int(batch_input_tokens * settings.seq_max_batch_share), first_step_tokens)
    return budget.model_copy(update={"max_input_tokens": min(budget.max_input_tokens, cap)})
