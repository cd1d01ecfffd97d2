"""Generation for one question: route, run the chosen regime(s), one ``answers`` row per regime (returned; the walk
hands them to the sink, ``tasks.pipeline``).

A regime whose stored row is already ``ok`` is not called again (the walk passes them as ``done``); a failed one is
redone. A not-found RetrievalResult gets an answer row with exit ``not_found`` and no call. A failed call gives a
row with status ``failed`` and the error; the other regime still runs. Generation reads each passage's own lines from the warehouse with ``context_lines`` on either side (same
pages only), so values printed next to the matched line (table cells, label/value pairs) are visible; a passage
that opens its page in the middle of a sentence also gets the previous page's end of that sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from schemas.contracts import (
    SINGLE_VALUE_SHAPES,
    AnswerWithEvidence,
    ParsedQuestion,
    RetrievalResult,
    RetrievedPassage,
)
from schemas.settings import GenerateSettings, Settings
from tasks.corpus.identity import load_identity
from tasks.generate.lists import BULLETS
from tasks.generate.loop import Completer, RegimeOutcome, run_regime
from tasks.generate.normalise import answer_matches, normalise_value
from tasks.generate.prompts import (
    GenerationPassage,
    PassageLine,
    generation_messages,
)
from tasks.generate.router import Budget, Route, budget_for, cap_at_batch, route
from tasks.generate.tables import MAX_WALK, cells_only, is_header, parse_row, table_line
from tasks.llm.tokens import count_messages
from warehouse.corpus import document_identity, lines_text
from warehouse.db import Warehouse

DEFAULT_CONTEXT_LINES = 2
MAX_PASSAGE_LINES = 40
CARRY_LINES = 4  # the previous page's lines a sentence carried over a page break may need
HEAD_ABOVE = 2  # lines above a table's header carried with it: its title, the scale "(in millions)"
TOKEN = re.compile(r"[A-Za-z]{2,}")
PROSE_WORDS = 4
LIST_RUN_LINES = 20  # the most lines a list the passage ends inside is read on for
_ITEM_MARK = re.compile(rf"^\s*(?:[{BULLETS}]|\(?\d{{1,2}}[.)]|\(?[a-h][.)])\s+\S")
REGIME_CHOICES = ("auto", "batch", "sequential", "both")


def generation_settings(settings: Settings | GenerateSettings) -> tuple[GenerateSettings, str]:
    """(generate settings, tokenizer name) from either the full settings or the generate group."""
    if isinstance(settings, GenerateSettings):
        return settings, "o200k_base"
    return settings.generate, settings.llm.tokenizer


def regimes_for(choice: str, routed: str) -> list[str]:
    if choice not in REGIME_CHOICES:
        raise ValueError(f"unknown regime choice {choice!r}; use one of {', '.join(REGIME_CHOICES)}")
    if choice == "auto":
        return [routed]
    return ["batch", "sequential"] if choice == "both" else [choice]


def _window(rows: list[dict[str, Any]], p: RetrievedPassage) -> list[dict[str, Any]]:
    """At most MAX_PASSAGE_LINES lines, centred on the first line of the retrieval text when the range is long."""
    if len(rows) <= MAX_PASSAGE_LINES:
        return rows
    first = (p.text.splitlines() or [""])[0].rstrip("…").strip()
    centre = next((i for i, r in enumerate(rows) if first and r["text"].startswith(first)), 0)
    start = max(0, min(centre - 2, len(rows) - MAX_PASSAGE_LINES))
    return rows[start:start + MAX_PASSAGE_LINES]


def _carried_over(wh: Warehouse, p: RetrievedPassage, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The previous page's last lines when the passage opens its page in the middle of a sentence ("introduces an
    innovative method ..." under the page number): the sentence's subject was printed there. Back to the line
    after the last sentence end, at most CARRY_LINES."""
    text = [r for r in rows if re.search(r"[A-Za-z]", r["text"] or "")]
    if not text or not re.match(r"^\s*[a-z]", text[0]["text"]):
        return []
    before = [r for r in rows if r["line_no"] < text[0]["line_no"]]
    if any(len(TOKEN.findall(r["text"] or "")) > 2 for r in before):
        return []  # the page's own lines come first: the sentence began on this page
    prev = lines_text(wh, p.doc_id, max(0, rows[0]["line_no"] - CARRY_LINES), rows[0]["line_no"] - 1)
    prev = [r for r in prev if r["page"] == text[0]["page"] - 1]
    start = max((i + 1 for i, r in enumerate(prev) if re.search(r"[.!?:]\s*$", r["text"] or "")), default=0)
    prose = [len(TOKEN.findall(r["text"] or "")) >= PROSE_WORDS for r in (prev[-1:] + text[:1])]
    return prev[start:] if len(prose) == 2 and all(prose) else []  # a sentence of prose on both sides of the break


def _table_head(wh: Warehouse, p: RetrievedPassage, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The header of the table a passage opens inside ("Technology and infrastructure 18,072 21,931 ..." under no
    column line): its header lines on the same page ("Three Months Ended", "June 30,", "2022 2023"), up to
    HEAD_ABOVE lines above them (the title and its scale, "(in millions)"), and the label-only line nearest above
    the passage ("Operating expenses:"), the rows between left out; or, for a passage that opens inside the header,
    the header lines above it. A cell is read only under a column its header dates; without it the row is a row of
    numbers. Nothing when a whole header or prose comes first in the passage, or when prose, another page or
    MAX_WALK lines come before a header."""
    texts = [(r["text"] or "").strip() for r in rows]
    first = next((i for i, t in enumerate(texts) if t), None)
    if first is None:
        return []
    top = rows[first]
    above = lines_text(wh, p.doc_id, max(0, top["line_no"] - MAX_WALK), top["line_no"] - 1)
    above = [r for r in above if r["page"] == top["page"]]
    if is_header(texts[first]):
        # the passage opens inside its table's header ("(In Millions) Oct 1, 2022 ..." under "Three Months Ended
        # Nine Months Ended"): the rest of the header block above it
        j = len(above)
        while j > 0 and is_header(above[j - 1]["text"] or ""):
            j -= 1
        opened = j < len(above) and any(parse_row(t) for t in texts[first:])
        return above[max(0, j - HEAD_ABOVE):] if opened else []
    if not any(parse_row(t) for t in texts[first:first + 3]):
        return []
    for i, t in enumerate(texts[first:], start=first):
        if is_header(t):
            return []  # the passage prints a header before its rows
        kind = table_line(t, texts[i + 1] if i + 1 < len(texts) else "")
        if kind == "prose":
            return []  # prose before the passage's rows: a table starts here, not above
        if kind == "row":
            break
    label: list[dict[str, Any]] = []
    below = texts[first]
    # a line of cells alone closes the block of the next label up (tables.cells_only): not this passage's heading
    skip = any(cells_only(t) for t in texts[first:i])
    for i in range(len(above) - 1, -1, -1):
        text = (above[i]["text"] or "").strip()
        if is_header(text):
            j = i
            while j > 0 and is_header(above[j - 1]["text"] or ""):
                j -= 1
            return above[max(0, j - HEAD_ABOVE):i + 1] + label
        kind = table_line(text, below) if text else "part"
        if kind == "prose":
            return []
        if kind == "label":
            label, skip = (label if skip else label or [above[i]]), False
        skip = skip or cells_only(text)
        below = text
    return []


def _list_run_on(wh: Warehouse, p: RetrievedPassage, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rest of a list the passage ends inside (its last line an item, or an item's lower-case continuation):
    the lines after it while they are items or continue one, over a page break (the new page's furniture before
    its first item, a running header or a number, left out), and the line that ends the list, at most
    LIST_RUN_LINES. A list's items are read, or counted, whole."""
    marks = [bool(_ITEM_MARK.match(r["text"] or "")) for r in rows[-2:]]
    if not marks or not (marks[-1] or (marks[0] and re.match(r"^\s*[a-z]", rows[-1]["text"] or ""))):
        return []
    out, skipped, page = [], 0, rows[-1]["page"]
    for r in lines_text(wh, p.doc_id, rows[-1]["line_no"] + 1, rows[-1]["line_no"] + LIST_RUN_LINES):
        text = r["text"] or ""
        if _ITEM_MARK.match(text) or (re.match(r"^\s*[a-z]", text) and r["page"] == page):
            out.append(r)
            page = r["page"]
        elif r["page"] != page and skipped < 2:
            skipped += 1  # the next page's furniture before the list goes on
        else:
            return out + [r] if out else []  # the line that ends the list: the list is seen to end
    return out


def fiscal_year_end(wh: Warehouse, doc_id: str, known: dict[str, int | None] | None = None) -> int | None:
    """The month the document's fiscal year ends in, from the identity ingest read (None when not known);
    ``known``: the months already read, per document (a question's passages share a few documents)."""
    if known is not None and doc_id in known:
        return known[doc_id]
    ident = load_identity(document_identity(wh, doc_id))
    month = int(ident.fiscal_year_end_month.value) if ident and ident.fiscal_year_end_month else None
    if known is not None:
        known[doc_id] = month
    return month


def prepare_passage(wh: Warehouse, p: RetrievedPassage, context_lines: int = DEFAULT_CONTEXT_LINES,
                    year_ends: dict[str, int | None] | None = None) -> GenerationPassage:
    """A passage with numbered lines: its range (plus context on the same pages) from ``lines``, or, when the
    warehouse has no lines for it, the retrieval text numbered from ``line_start`` (``lines_source`` says which).
    ``year_ends``: the fiscal year ends already read (:func:`fiscal_year_end`), filled as documents are met."""
    rows = lines_text(wh, p.doc_id, max(0, p.line_start - context_lines), p.line_end + context_lines)
    inner_pages = {r["page"] for r in rows if p.line_start <= r["line_no"] <= p.line_end}
    rows = [r for r in rows if p.line_start <= r["line_no"] <= p.line_end or r["page"] in inner_pages]
    if carried := _carried_over(wh, p, rows):
        # the page's furniture between the sentence's two halves (its number) is left out: the sentence reads whole
        first = next(r["line_no"] for r in rows if re.search(r"[A-Za-z]", r["text"] or ""))
        rows = carried + [r for r in rows if r["line_no"] >= first]
    rows = rows + _list_run_on(wh, p, rows) if inner_pages else rows
    source = "warehouse"
    if inner_pages:
        rows = _window(rows, p)
        lines = [PassageLine(line_no=r["line_no"], page=r["page"], text=r["text"])
                 for r in _table_head(wh, p, rows) + rows]
    else:
        source = "retrieval_text"
        lines = [PassageLine(line_no=p.line_start + i, page=p.page, text=t)
                 for i, t in enumerate(p.text.splitlines()) if t.strip()]
    year_end = fiscal_year_end(wh, p.doc_id, year_ends)
    return GenerationPassage(candidate_id=p.candidate_id, doc_id=p.doc_id, page=p.page, line_start=p.line_start,
                             line_end=p.line_end, section=p.section, role=p.role, relevance=p.relevance,
                             rewrite=p.rewrite, lines=lines, lines_source=source, fiscal_year_end_month=year_end)


def _not_found_answer(result: RetrievalResult) -> AnswerWithEvidence:
    reason = result.not_found_reason or f"retrieval found no passage (rule {result.rule})"
    return AnswerWithEvidence(value=None, evidence=[], answer_found=False, complete_answer_found=False,
                              confidence=0.0, caveats=[f"not found by retrieval: {reason}"], rule="retrieval_not_found")


def reading_order(passages: list[GenerationPassage], result: RetrievalResult) -> list[GenerationPassage]:
    """The order sequential reads the top-K in: the primaries whose lines state a value of the asked shape
    (``anchor_found``) first, then the other primaries, then the supporting passages, each in retrieval order; a
    reader that stops at the first sufficient passage should meet a value-bearing one first. For single typed
    values only: a list's items are not one value of its shape."""
    anchored = {p.candidate_id for p in result.passages() if p.anchor_found}
    rank = {"primary": 0}
    return sorted(passages, key=lambda p: (rank.get(p.role, 1), p.candidate_id not in anchored))


def join_adjacent(passages: list[GenerationPassage]) -> list[GenerationPassage]:
    """Passages on two pages whose lines run on into each other (same document, the next line or overlapping: a
    procedure or a list broken over the page) joined into the first of them, so a reader that sees one passage a
    step sees the whole of it; a primary among them makes the joined passage primary. Never past MAX_PASSAGE_LINES: a long
    joined passage would cost a step more than the budget leaves for it."""
    out: list[GenerationPassage] = []
    for p in passages:
        into = next((k for k in out if k.doc_id == p.doc_id and k.page != p.page and p.lines and k.lines
                     and p.lines[0].line_no <= k.lines[-1].line_no + 1
                     and k.lines[0].line_no <= p.lines[-1].line_no + 1
                     and len({ln.line_no for ln in [*k.lines, *p.lines]}) <= MAX_PASSAGE_LINES), None)
        if into is None:
            out.append(p)
            continue
        lines = {ln.line_no: ln for ln in [*into.lines, *p.lines]}
        merged = into.model_copy(update={
            "lines": [lines[n] for n in sorted(lines)], "line_start": min(into.line_start, p.line_start),
            "line_end": max(into.line_end, p.line_end), "role": "primary" if "primary" in (into.role, p.role)
            else into.role})
        out[out.index(into)] = merged
    return out


def sequential_budget(question: ParsedQuestion, passages: list[GenerationPassage], gen: GenerateSettings,
                      tokenizer: str) -> Budget:
    """The sequential regime's budget for a question, capped at the batch prompt over the same passages."""
    if not gen.seq_max_batch_share:
        return budget_for("sequential", len(passages), gen)
    # ``passages`` are the top-K already: the very passages batch sends in one prompt
    batch = generation_messages(question, passages, "batch", step=1, total=len(passages))
    first = generation_messages(question, passages[:1], "sequential", step=1, total=len(passages))
    return cap_at_batch(budget_for("sequential", len(passages), gen), count_messages(batch, tokenizer),
                        count_messages(first, tokenizer), gen)


def _row(run_id: str, question: ParsedQuestion, rt: Route, regime: str, out: RegimeOutcome,
         reference: str | None, budget: Budget | None = None) -> dict[str, Any]:
    a = out.answer
    value = a.value if a is not None else None
    correct = None
    if reference is not None and out.status == "ok":
        correct = answer_matches(value if a is not None and a.answer_found else None, reference, question.answer_shape)
    budget = {**(budget or rt.budget).model_dump(), "budget_hit": out.budget_hit, "steps": out.step_answers}
    return {
        "run_id": run_id, "question_id": question.question_id, "regime": regime, "routed": regime == rt.regime,
        "route_rule": rt.rule, "exit": out.exit, "steps": out.steps, "value": value,
        "answer": a.model_dump_json() if a is not None else None,
        "answer_found": a.answer_found if a is not None else None,
        "complete_answer_found": a.complete_answer_found if a is not None else None,
        "confidence": a.confidence if a is not None else None,
        "input_tokens": out.usage.input_tokens, "cached_tokens": out.usage.cached_tokens,
        "output_tokens": out.usage.output_tokens, "latency_ms": round(out.latency_ms, 3),
        "provider": out.provider, "model": out.model, "budget": budget, "status": out.status, "error": out.error,
        "answer_shape": question.answer_shape, "decomposition": question.decomposition,
        "value_norm": normalise_value(value, question.answer_shape) if a is not None and a.answer_found else None,
        "correct": correct, "call_ids": out.call_ids, "created_at": None, "routed_regime": rt.regime,
        # a model states no rule: its answers are the model's (the offline reader names each of its rules)
        "rule": (a.rule or "model") if a is not None else None,
    }


def generate(wh: Warehouse, run_id: str, question: ParsedQuestion, result: RetrievalResult, client: Completer,
             settings: Settings | GenerateSettings, regime_choice: str, done: dict[str, dict[str, Any]],
             reference: str | None, *, context_lines: int = DEFAULT_CONTEXT_LINES,
             on_row: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """The answer rows of the regime(s) asked, nothing written (``done``: regime -> its stored ``ok`` row, kept
    as is); ``on_row`` gets each new row as soon as its regime ran (to store it before the next regime's calls).
    Reads the passages' lines; the calls log themselves (``llm_calls``)."""
    gen, tokenizer = generation_settings(settings)
    if result.question_id != question.question_id:
        raise ValueError(f"RetrievalResult is for question {result.question_id!r}, not {question.question_id!r}")
    rt = route(question, result, gen)
    passages: list[GenerationPassage] | None = None
    rows = []
    for regime in regimes_for(regime_choice, rt.regime):
        if regime in done:
            rows.append(done[regime])
            continue
        budget = rt.budget
        if result.status != "found" or not result.passages():
            out = RegimeOutcome(regime=regime, exit="not_found", steps=0, answer=_not_found_answer(result))
        else:
            if passages is None:
                year_ends: dict[str, int | None] = {}
                passages = [prepare_passage(wh, p, context_lines, year_ends) for p in result.passages()[: gen.top_k]]
            shown = passages
            if regime == "sequential":  # one passage a step: passages that run on into each other read as one
                shown = join_adjacent(passages)
                if question.answer_shape in SINGLE_VALUE_SHAPES:
                    shown = reading_order(shown, result)
            budget = rt.budget if regime == "batch" else sequential_budget(question, shown, gen, tokenizer)
            out = run_regime(regime, client, question, shown, budget, gen.max_output_tokens, tokenizer)
        rows.append(_row(run_id, question, rt, regime, out, reference, budget))
        if on_row is not None:
            on_row(rows[-1])
    return rows
