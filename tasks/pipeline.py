"""One question through the pipeline: detect -> arbitrate -> generate. Each stage's rows are idempotent per
(run_id, question_id), so a rerun of the same run resumes where it stopped and never duplicates rows.

Two ways to walk it, same rows: :func:`process_question` stores each stage as it finishes (for runs that call a
model over the network, where a finished call must be kept at once); :func:`process_questions` walks the same
stages with no write and stores a chunk of questions at a time (``warehouse.batch``), for offline runs, where the
warehouse's statements used to cost more than the work itself.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from schemas.contracts import ParsedQuestion
from schemas.settings import Settings
from tasks.arbiter.run import arbitrate, arbitrate_question, passage_text
from tasks.detect.run import absent_terms, detect_question, run_detection
from tasks.generate.run import answer_question, generate
from tasks.llm.client import LLMClient
from tasks.llm.gate import WorkGate
from warehouse import corpus
from warehouse.answers import answer_values, load_answers, reference_answer
from warehouse.batch import QuestionWrite, write_chunk
from warehouse.db import Warehouse
from warehouse.detection import detection_rows
from warehouse.llm_log import call_log, flush_calls
from warehouse.questions import set_question_status
from warehouse.retrieval import load_retrieval_result, retrieval_row, verdict_rows
from warehouse.runs import record_error

# an offline chunk is written after this many questions or seconds, whichever comes first: large enough that a
# statement's fixed cost is spread thin, small enough that a SIGKILL costs seconds of offline work
CHUNK_QUESTIONS = 64
CHUNK_SECONDS = 5.0
# questions in flight on a model (process_concurrently): their rows land within a second of finishing; each
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
    scopes: dict[tuple[str, ...], list[str]] = field(default_factory=dict)  # docs -> doc ids, for the run's walk


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


def _scope(ctx: PipelineContext, row: dict[str, Any]) -> list[str] | None:
    """scope_doc_ids, remembered per document list: the corpus does not change while a run answers."""
    key = tuple(row.get("docs") or ())
    if not key:
        return None
    if key not in ctx.scopes:
        ctx.scopes[key] = scope_doc_ids(ctx.wh, row)
    return ctx.scopes[key]


def walk_question(ctx: PipelineContext, row: dict[str, Any]) -> QuestionWrite:
    """process_question's stages with no write: the question's rows, for its chunk. Failures are kept as rows."""
    qid, wh, run_id = row["question_id"], ctx.wh, ctx.run_id
    w = QuestionWrite(question_id=qid, status=row["status"])
    fresh = row["status"] == "loaded"  # a chunk lands whole, so a 'loaded' question has no rows of this run
    stage = "detect"
    try:
        question = parsed_question(row)
        result = None if fresh else load_retrieval_result(wh, run_id, qid)  # resume: retrieval already done
        if result is None:
            detection = run_detection(question, _scope(ctx, row), ctx.corpus, ctx.vectors, ctx.embedder,
                                      ctx.settings)
            w.hits, w.candidates = detection_rows(run_id, qid, detection.hits, detection.candidates)
            w.detectors, w.detector_rule = list(detection.plan.detectors), detection.plan.rule
            w.status = "detected"
            if ctx.stop_after == "candidates":
                return w
            stage = "arbiter"
            a = arbitrate(question, detection.pool(), ctx.arbiter, ctx.profile,
                          ctx.settings.dispatch.overrides() or None, detection.absent_terms, passage_text(wh))
            w.verdicts = verdict_rows(run_id, qid, a.output.verdicts, provider=a.provider, model=a.model,
                                      call_id=a.call_id)
            w.retrieval = retrieval_row(run_id, qid, a.result, error=a.error, provider=a.provider, model=a.model)
            if a.error is not None:
                w.status, w.error = "failed", f"arbiter: {a.error}"
                w.errors.append(("arbiter", a.error))
                return w
            result = a.result
            w.status = "arbitrated"
        if ctx.stop_after == "retrieval":
            return w
        stage = "generate"
        done = {} if fresh else {r["regime"]: r for r in load_answers(wh, run_id, qid) if r["status"] == "ok"}
        reference = row.get("answer")
        if reference is None:
            reference = reference_answer(wh, run_id, qid)
        rows = generate(wh, run_id, question, result, ctx.generator, ctx.settings, ctx.regime, done, reference)
        new = [r for r in rows if r["regime"] not in done]
        w.answers = [answer_values(r) for r in new]
        w.errors += [("generate", f"{r['regime']}: {r.get('error')}") for r in new if r["status"] == "failed"]
        failed = [r for r in rows if r.get("status") == "failed"]
        if failed:  # the answer rows hold the error; the question shows it too, and a rerun retries it
            w.status = "failed"
            w.error = "generate: " + "; ".join(f"{r['regime']}: {r.get('error')}" for r in failed)
            return w
        w.status = "answered"
    except Exception as exc:  # one question's failure never stops the run
        message = f"{stage}: {type(exc).__name__}: {exc}"
        w.errors.append((stage, message + "\n" + traceback.format_exc(limit=3)))
        w.status, w.error = "failed", message
    return w


def _write(ctx: PipelineContext, items: list[QuestionWrite]) -> None:
    """The chunk in one transaction; if that fails, question by question, a question whose rows cannot be written
    failed with the reason (recorded as process_question records a failure). The chunk's llm_calls rows are
    committed first, so that every call id an answer or verdict names is in llm_calls when the chunk lands."""
    flush_calls(ctx.wh)
    try:
        write_chunk(ctx.wh, ctx.run_id, items)
        return
    except Exception:  # noqa: BLE001 - retried one by one below, where the failing question is named
        pass
    for item in items:
        try:
            write_chunk(ctx.wh, ctx.run_id, [item])
        except Exception as exc:
            message = f"write: {type(exc).__name__}: {exc}"
            record_error(ctx.wh, ctx.run_id, "write", item.question_id, message)
            set_question_status(ctx.wh, ctx.run_id, item.question_id, "failed", message)


class _Chunks:
    """Finished questions waiting for their chunk's write: CHUNK_QUESTIONS of them, or ``seconds`` after the
    chunk's first, whichever comes first; :meth:`flush` writes what is left."""

    def __init__(self, ctx: PipelineContext, seconds: float):
        self.ctx, self.seconds = ctx, seconds
        self.pending: list[QuestionWrite] = []
        self.started = time.monotonic()

    def add(self, item: QuestionWrite) -> None:
        self.pending.append(item)
        if len(self.pending) >= CHUNK_QUESTIONS or time.monotonic() - self.started >= self.seconds:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            _write(self.ctx, self.pending)
        self.pending, self.started = [], time.monotonic()


@contextmanager
def _calls_with_chunks(ctx: PipelineContext, seconds: float) -> Iterator[None]:
    """For the block, the calls' rows are inserted with their chunk (flushed by _write) rather than every 50 ms:
    one statement of a chunk's calls instead of one per call or two (measured with the fake server: the call
    log's inserts were 1.2 ms of CPU a question). Each row is still journaled first when durable_log is on."""
    log = call_log(ctx.wh)
    linger, log.linger_s = log.linger_s, 2 * seconds
    try:
        yield
    finally:
        log.linger_s = linger


def process_questions(ctx: PipelineContext, rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """Each question's final status as it finishes; its rows land with its chunk (CHUNK_QUESTIONS or
    CHUNK_SECONDS). The finished questions of the last chunk are written however the walk ends (a SIGTERM too)."""
    chunks = _Chunks(ctx, CHUNK_SECONDS)
    with _calls_with_chunks(ctx, CHUNK_SECONDS):
        try:
            for row in rows:
                item = walk_question(ctx, row)
                chunks.add(item)
                yield item.status
        finally:
            chunks.flush()


def _walk_gated(gate: WorkGate, ctx: PipelineContext, row: dict[str, Any]) -> QuestionWrite:
    with gate.held():
        return walk_question(ctx, row)


def process_concurrently(ctx: PipelineContext, rows: list[dict[str, Any]], calls: int) -> Iterator[str]:
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
    futures = [pool.submit(_walk_gated, gate, ctx, r) for r in rows]
    collected: set = set()
    chunks = _Chunks(ctx, CONCURRENT_CHUNK_SECONDS)
    with _calls_with_chunks(ctx, CONCURRENT_CHUNK_SECONDS):
        try:
            for fut in as_completed(futures):
                collected.add(fut)
                item = fut.result()  # walk_question records failures as rows; it raises only on a stop
                chunks.add(item)
                yield item.status
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            ctx.arbiter.gate = ctx.generator.gate = None
            chunks.pending += [f.result() for f in futures
                               if f not in collected and f.done() and not f.cancelled() and f.exception() is None]
            chunks.flush()
