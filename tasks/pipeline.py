"""One walk of a question: detect -> arbitrate -> generate, from any starting stage, and the runs that drive it.

:func:`walk_question` is the only code that takes a question through the stages and the only code that decides a
question's status and records its failure: the answer flow, a resume, every backfill mode (re-detect,
re-arbitrate, re-dispatch, regenerate) and the Batch API backfill all walk their questions through it. Stage
functions compute and return rows; each stage's rows go to the run's sink (``warehouse.sink``), the one writer,
which writes them as the stage ends or with a chunk of finished questions, by policy. The same failure rule holds
everywhere: a question with a failed row (its arbiter call, an answer, a write) is ``failed``, and a resume or a
re-run of the backfill walks it again; rows are idempotent per (run_id, question_id), so a rerun never duplicates.

:func:`walk_questions` drives a run's questions: one at a time, each stage stored as it ends (a model over the
network: a paid result is kept at once); one at a time, stored a chunk at a time (offline, where the warehouse's
statements used to cost more than the work); or many in flight on a model, stored a chunk at a time.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from schemas.contracts import ArbiterOutput, Asked, ParsedQuestion
from schemas.settings import Settings
from tasks.arbiter.run import Arbitration, arbitrate, passage_text, redispatch
from tasks.detect.run import absent_terms, run_detection
from tasks.generate.run import generate
from tasks.llm.client import LLMClient
from tasks.llm.gate import WorkGate
from tasks.providers import calls_remote
from warehouse import corpus
from warehouse.answers import answer_values, load_answers, reference_answer
from warehouse.db import Warehouse
from warehouse.detection import detection_rows, load_candidates
from warehouse.retrieval import (
    load_arbiter_output,
    load_retrieval_result,
    load_retrieval_row,
    retrieval_row,
    verdict_rows,
)
from warehouse.sink import Policy, QuestionSink, QuestionWrite

# where a walk may start: detection, the arbiter's call over stored candidates, the dispatcher over stored verdicts
# (no call), generation from a stored retrieval result
STARTS = ("detect", "arbitrate", "dispatch", "generate")
# questions in flight on a model (walk_questions with calls): their rows land within a second of finishing; each
# call's row is journaled (durable) before it returns, so a SIGKILL loses no call's record, only (at most) the
# last second's question rows, whose questions a resume answers again
CONCURRENT_CHUNK_SECONDS = 1.0


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
    source_run_id: str | None = None  # a backfill's source run (a re-dispatch reads its failed arbiter calls)
    scopes: dict[tuple[str, ...], list[str]] = field(default_factory=dict)  # docs -> doc ids, for the run's walk


def parsed_question(row: dict[str, Any]) -> ParsedQuestion:
    """A ``questions`` row as the parser's question (its typed ask None on a row stored before it was typed)."""
    return ParsedQuestion(
        question_id=row["question_id"], text=row["text"], keywords_primary=list(row["keywords_primary"] or []),
        keywords_secondary=list(row["keywords_secondary"] or []), answer_shape=row["answer_shape"],
        decomposition=row["decomposition"], intent=row["intent"] or "", parser=row["parser"] or "",
        asked=Asked.model_validate_json(row["asked"]) if row.get("asked") else None,
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


def _scope(ctx: PipelineContext, row: dict[str, Any]) -> list[str] | None:
    """scope_doc_ids, remembered per document list: the corpus does not change while a run answers."""
    key = tuple(row.get("docs") or ())
    if not key:
        return None
    if key not in ctx.scopes:
        ctx.scopes[key] = scope_doc_ids(ctx.wh, row)
    return ctx.scopes[key]


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


def stored_arbitration(ctx: PipelineContext, qid: str) -> Arbitration:
    """The dispatch start: the arbiter output this run holds (copied from the backfill's source) through the
    dispatcher again. A question whose arbiter call failed in the source comes back failed with that error."""
    source = load_retrieval_row(ctx.wh, ctx.source_run_id, qid) if ctx.source_run_id else None
    if source is not None and source["status"] == "failed":
        return Arbitration(ArbiterOutput(verdicts=[]), source["arbiter_provider"], source["arbiter_model"], None,
                           error=f"source run {ctx.source_run_id}: {source['error']}")
    loaded = load_arbiter_output(ctx.wh, ctx.run_id, qid)
    if loaded is None and source is None:
        raise LookupError(f"no arbiter output to re-dispatch for {qid} (run {ctx.source_run_id or ctx.run_id} "
                          "never arbitrated it); backfill it with --mode rearbitrate")
    output, provenance = loaded or (ArbiterOutput(verdicts=[]), {
        "provider": source["arbiter_provider"], "model": source["arbiter_model"], "call_id": None})
    return redispatch(qid, output, provenance, load_candidates(ctx.wh, ctx.run_id, qid), ctx.profile,
                      ctx.settings.dispatch.overrides() or None, passage_text(ctx.wh))


def walk_question(ctx: PipelineContext, row: dict[str, Any], start: str = "detect",
                  sink: QuestionSink | None = None) -> QuestionWrite:
    """Walk one question from ``start`` (see :data:`STARTS`) to its end, or to ``ctx.stop_after``; a question whose
    retrieval this run already holds resumes at generation, and a regime already answered ``ok`` is kept. Each
    stage's rows go to ``sink.stage`` as the stage ends; returns all of them, merged (status and error included).
    Failures become rows (status ``failed``, the error, an ``errors`` row), never exceptions: one question never
    stops the run."""
    if start not in STARTS:
        raise ValueError(f"unknown start stage {start!r}; one of {', '.join(STARTS)}")
    qid, wh, run_id = row["question_id"], ctx.wh, ctx.run_id
    walked = QuestionWrite(question_id=qid, status=row["status"], error=row.get("error"))

    def emit(rows: QuestionWrite) -> None:
        walked.merge(rows)
        if sink is not None:
            sink.stage(rows)

    fresh = row["status"] == "loaded"  # a question with no rows of this run: nothing to resume from
    stage = start
    try:
        question = parsed_question(row)
        result = None if fresh else load_retrieval_result(wh, run_id, qid)
        if result is None and start == "generate":
            raise LookupError(f"run {run_id} holds no retrieval result for {qid} to generate from (its arbiter call "
                              "failed?); backfill it with --mode rearbitrate")
        if result is None:
            if start == "detect":
                detection = run_detection(question, _scope(ctx, row), ctx.corpus, ctx.vectors, ctx.embedder,
                                          ctx.settings)
                hits, candidates = detection_rows(run_id, qid, detection.hits, detection.candidates)
                emit(QuestionWrite(qid, "detected", detectors=list(detection.plan.detectors),
                                   detector_rule=detection.plan.rule, hits=hits, candidates=candidates))
                if ctx.stop_after == "candidates":
                    return walked
            stage = "arbiter"
            if start == "dispatch":
                a = stored_arbitration(ctx, qid)
            else:
                if start == "detect":
                    pool, absent = detection.pool(), detection.absent_terms
                else:
                    pool, absent = load_candidates(wh, run_id, qid), question_absent_terms(ctx, row, question)
                a = arbitrate(question, pool, ctx.arbiter, ctx.profile, ctx.settings.dispatch.overrides() or None,
                              absent, passage_text(wh))
            judged = QuestionWrite(
                qid, "arbitrated",
                verdicts=verdict_rows(run_id, qid, a.output.verdicts, provider=a.provider, model=a.model,
                                      call_id=a.call_id),
                retrieval=retrieval_row(run_id, qid, a.result, error=a.error, provider=a.provider, model=a.model))
            if a.error is not None:  # the call failed: the retrieval row holds the error, and a rerun retries it
                judged.status, judged.error = "failed", f"arbiter: {a.error}"
                judged.errors.append(("arbiter", a.error))
                emit(judged)
                return walked
            emit(judged)
            result = a.result
        if ctx.stop_after == "retrieval":
            return walked
        stage = "generate"
        done = {} if fresh else {r["regime"]: r for r in load_answers(wh, run_id, qid) if r["status"] == "ok"}
        reference = row.get("answer")
        if reference is None:
            reference = reference_answer(wh, run_id, qid)

        def answered(r: dict[str, Any]) -> None:  # each regime's row as it ends, before the next regime's calls
            errors = [("generate", f"{r['regime']}: {r.get('error')}")] if r["status"] == "failed" else []
            emit(QuestionWrite(qid, "arbitrated", answers=[answer_values(r)], errors=errors))

        rows = generate(wh, run_id, question, result, ctx.generator, ctx.settings, ctx.regime, done, reference,
                        on_row=answered)
        failed = [r for r in rows if r.get("status") == "failed"]
        if failed:  # the answer rows hold the error; the question shows it too, and a rerun retries it
            emit(QuestionWrite(qid, "failed", "generate: " + "; ".join(f"{r['regime']}: {r.get('error')}"
                                                                       for r in failed)))
        else:
            emit(QuestionWrite(qid, "answered"))
    except Exception as exc:  # one question's failure never stops the run
        message = f"{stage}: {type(exc).__name__}: {exc}"
        emit(QuestionWrite(qid, "failed", message, errors=[(stage, message + "\n" + traceback.format_exc(limit=3))]))
    return walked


def _walk_gated(gate: WorkGate, ctx: PipelineContext, row: dict[str, Any], start: str) -> QuestionWrite:
    with gate.held():
        return walk_question(ctx, row, start)


def walk_questions(ctx: PipelineContext, rows: Iterable[dict[str, Any]], start: str = "detect", *,
                   calls: int = 0, policy: Policy | None = None) -> Iterator[str]:
    """Walk ``rows`` from ``start``, yielding each question's final status as it finishes; how their rows land:

    - ``calls`` > 0 (the arbiter is a model behind an API): questions in flight, ``calls`` of their calls at once,
      stored a chunk at a time (:func:`_walk_concurrently`);
    - a model over the network, one question at a time: each stage stored as it ends (``policy`` 'stage');
    - offline: a chunk of finished questions at a time (``policy`` 'chunk': ``warehouse.sink.CHUNK_QUESTIONS`` or
      ``CHUNK_SECONDS``).

    ``policy`` None chooses by the run's providers. However the walk ends (done, or a SIGTERM between questions)
    the finished questions are written."""
    if calls > 0:
        yield from _walk_concurrently(ctx, list(rows), start, calls)
        return
    policy = policy or ("stage" if calls_remote(ctx.settings) else "chunk")
    with QuestionSink(ctx.wh, ctx.run_id, policy).open() as sink:
        for row in rows:
            walked = walk_question(ctx, row, start, sink)
            sink.finished(walked)
            yield walked.status


def _walk_concurrently(ctx: PipelineContext, rows: list[dict[str, Any]], start: str, calls: int) -> Iterator[str]:
    """Questions in flight on a model, ``calls`` of their calls at once (the clients' shared slots cap them), each
    walked with no write; the finished ones' rows land a chunk at a time (CHUNK_QUESTIONS or
    CONCURRENT_CHUNK_SECONDS), from this thread only: 32 threads each writing their stages would queue on the
    warehouse's one writer (~100 ms of statements a question). Stopped (SIGTERM), questions not started are
    dropped and those in flight finish and are written.

    Half as many questions again as call slots are walked at once: a question spends about a fifth of its time
    computing or waiting for the gate, between its calls, and with one question per slot that fifth of the slots
    stood empty (measured with ``benchmarks/throughput.py --fake-llm 0.2 --in-flight 32``: ~70% of the ideal
    questions/s with 32 questions, ~80% with 48; the calls in flight stay at 32)."""
    gate = WorkGate()  # one question computes at a time; the others wait on their calls (tasks/llm/gate.py)
    ctx.arbiter.gate = ctx.generator.gate = gate
    pool = ThreadPoolExecutor(calls + calls // 2, thread_name_prefix="question")
    futures = [pool.submit(_walk_gated, gate, ctx, r, start) for r in rows]
    collected: set = set()
    with QuestionSink(ctx.wh, ctx.run_id, "chunk", CONCURRENT_CHUNK_SECONDS).open() as sink:
        try:
            for fut in as_completed(futures):
                collected.add(fut)
                walked = fut.result()  # walk_question records failures as rows; it raises only on a stop
                sink.finished(walked)
                yield walked.status
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            ctx.arbiter.gate = ctx.generator.gate = None
            sink.pending += [f.result() for f in futures
                             if f not in collected and f.done() and not f.cancelled() and f.exception() is None]
