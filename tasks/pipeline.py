"""One question through the pipeline: detect -> arbitrate -> generate. Each stage's rows are idempotent per
(run_id, question_id), so a rerun of the same run resumes where it stopped and never duplicates rows."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

from schemas.contracts import ParsedQuestion
from schemas.settings import Settings
from tasks.arbiter.run import arbitrate_question
from tasks.detect.run import absent_terms, detect_question
from tasks.generate.run import answer_question
from tasks.llm.client import LLMClient
from warehouse import corpus
from warehouse.db import Warehouse
from warehouse.questions import set_question_status
from warehouse.retrieval import load_retrieval_result
from warehouse.runs import record_error


@dataclass
class PipelineContext:
    wh: Warehouse
    run_id: str
    settings: Settings
    corpus: Any            # tasks.detect.run.CorpusCache
    vectors: Any           # warehouse.vectors.VectorStore | None
    embedder: Any          # tasks.corpus.embed.Embedder | None
    arbiter: LLMClient
    generator: LLMClient
    regime: str = "auto"   # auto | batch | sequential | both
    profile: str = "balanced"
    stop_after: str | None = None  # None | "candidates" | "retrieval"


def parsed_question(row: dict[str, Any]) -> ParsedQuestion:
    return ParsedQuestion(
        question_id=row["question_id"], text=row["text"], keywords_primary=list(row["keywords_primary"] or []),
        keywords_secondary=list(row["keywords_secondary"] or []), answer_shape=row["answer_shape"],
        decomposition=row["decomposition"], intent=row["intent"] or "", parser=row["parser"] or "",
    )


def scope_doc_ids(wh: Warehouse, row: dict[str, Any]) -> list[str] | None:
    """The question's documents (doc-scoped) or None for the whole current corpus."""
    if not row.get("docs"):
        return None
    found = corpus.doc_ids_for_paths(wh, list(row["docs"]))
    missing = [p for p, d in found.items() if d is None]
    if missing:
        raise LookupError(f"documents not ingested (or failed to ingest): {', '.join(missing)}; "
                          "see `arbiter runs list` and the documents table for their errors")
    return sorted(set(found.values()))


def question_absent_terms(ctx: PipelineContext, row: dict[str, Any], question) -> list[str] | None:
    """The arbiter's ``absent_terms`` for a question whose stored candidates are arbitrated again: recomputed from
    the documents (a function of the question and the documents only), so the rebuilt brief is the one first sent;
    None when the documents cannot be read (then the arbiter judges from the pool alone)."""
    if ctx.corpus is None:
        return None
    try:
        return absent_terms(question, scope_doc_ids(ctx.wh, row), ctx.corpus)
    except (LookupError, KeyError):
        return None


def answered_regimes(wh: Warehouse, run_id: str, question_id: str) -> set[str]:
    return {r[0] for r in wh.execute(
        "SELECT regime FROM answers WHERE run_id = ? AND question_id = ? AND status = 'ok'", [run_id, question_id])}


def process_question(ctx: PipelineContext, row: dict[str, Any]) -> str:
    """Run one question; returns its final status. Failures are recorded, never raised."""
    qid = row["question_id"]
    wh, run_id = ctx.wh, ctx.run_id
    stage = "detect"
    try:
        question = parsed_question(row)
        result = load_retrieval_result(wh, run_id, qid)  # resume: retrieval already done
        if result is None:
            doc_ids = scope_doc_ids(wh, row)
            detection = detect_question(wh, run_id, question, doc_ids, ctx.corpus, ctx.vectors, ctx.embedder,
                                        ctx.settings)
            set_question_status(wh, run_id, qid, "detected")
            if ctx.stop_after == "candidates":
                return "detected"
            stage = "arbiter"
            result = arbitrate_question(wh, run_id, question, detection.pool(), ctx.arbiter, ctx.profile,
                                        overrides=ctx.settings.dispatch.overrides() or None,
                                        absent_terms=detection.absent_terms)
            if result is None or getattr(result, "status", None) == "failed":
                return "failed"
            set_question_status(wh, run_id, qid, "arbitrated")
        if ctx.stop_after == "retrieval":
            return "arbitrated"
        stage = "generate"
        rows = answer_question(wh, run_id, question, result, ctx.generator, ctx.settings, ctx.regime)
        failed = [r for r in rows if r.get("status") == "failed"]
        if failed:  # the answer rows hold the error; the question shows it too, and a rerun retries it
            set_question_status(wh, run_id, qid, "failed",
                                "generate: " + "; ".join(f"{r['regime']}: {r.get('error')}" for r in failed))
            return "failed"
        set_question_status(wh, run_id, qid, "answered")
        return "answered"
    except Exception as exc:  # one question's failure never stops the run
        message = f"{stage}: {type(exc).__name__}: {exc}"
        record_error(wh, run_id, stage, qid, message + "\n" + traceback.format_exc(limit=3))
        set_question_status(wh, run_id, qid, "failed", message)
        return "failed"
