"""Prefect flow ``answer``: a question set through detect -> arbitrate -> generate, resumable by run id."""

from __future__ import annotations

import contextlib
import gc
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from flows import console, stop
from flows.ingest import ingest_into
from schemas.settings import Settings, get_settings
from tasks.detect.run import CorpusCache, question_embedder
from tasks.llm.tokens import UnknownEncodingError, get_encoding
from tasks.pipeline import PipelineContext, walk_questions
from tasks.providers import make_clients, use_arbiter
from tasks.questions.load import ingest_questions, load_question_set, resolve_docs
from warehouse.answers import failures
from warehouse.db import Warehouse
from warehouse.questions import load_questions
from warehouse.runs import fails_run, finish_run, get_run, start_run
from warehouse.vectors import VectorStore


def question_docs(path: Path, data_root: Path | None) -> list[Path]:
    """Every document a question set names, so they are ingested (incrementally) before answering."""
    loaded = load_question_set(path, data_root)
    docs: set[Path] = set()
    for rec in loaded.records:
        try:
            docs.update(resolve_docs(rec, data_root or path.parent) or [])
        except Exception:  # reported per question when the set is loaded into the run
            continue
    return sorted(docs)


def answer_config(questions: Path, data_root: Path | None, regime: str, profile: str, settings: Settings,
                  **extra: Any) -> dict[str, Any]:
    """What a run that answers a question set records as its ``runs.config``: the inputs its results depend on."""
    return {"questions": str(questions), "data_root": str(data_root) if data_root else None, "regime": regime,
            "arbiter": settings.arbiter.provider, "generator": settings.generate.provider, "profile": profile,
            "model": settings.llm.model, **extra}


def open_run(wh: Warehouse, flow: str, config: dict[str, Any], run_id: str | None, log) -> str:
    """Start the run, or resume it when ``run_id`` names one this warehouse holds; says which."""
    resumed = bool(run_id and get_run(wh, run_id))
    run_id = start_run(wh, flow, config, run_id=run_id)
    console.tee(log)(f"{flow} run {run_id} ({'resumed' if resumed else 'new'})")
    return run_id


def documents_missing(row: dict[str, Any]) -> bool:
    """A question that failed at load because a document of its was not on disk, and one still is not: it keeps
    its load error and is not processed (a resume adds no error row for it). Once the documents are in place, a
    resume of the run ingests and answers it."""
    return row["status"] == "failed" and any(not Path(d).is_file() for d in row.get("docs") or [])


@contextlib.contextmanager
def collector_for_a_run(young: int = 10_000) -> Iterator[None]:
    """The garbage collector tuned for the question loop, and restored after it. The set-up's objects (corpus
    cache, parsed questions, the SDK's and Prefect's modules) live as long as the run and are never garbage: frozen
    out of the collector's view, so that the collections the run's short-lived objects trigger stop traversing them;
    and the youngest generation is collected every ``young`` allocations instead of 700. Measured with the fake
    server (``benchmarks/throughput.py --fake-llm 0.2``): collections took 14% of the loop's CPU, 3% frozen, 1%
    with both. Unfrozen after the loop, so that a process running several flows collects each run's leftovers."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], young), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def build_context(wh: Warehouse, run_id: str, settings: Settings, regime: str, profile: str,
                  stop_after: str | None = None) -> PipelineContext:
    vectors = VectorStore(settings.lance_dir, settings.detect.vector_documents, **settings.vector_store_options())
    embedder = question_embedder(settings, vectors)
    arb, gen = make_clients(settings, wh, run_id)
    # the token counter every generation budget uses, built here once (~0.2 s) rather than inside the first
    # question; a bad tokenizer setting still fails each count with its hint
    with contextlib.suppress(UnknownEncodingError):
        get_encoding(settings.llm.tokenizer)
    ctx = PipelineContext(wh=wh, run_id=run_id, settings=settings, corpus=CorpusCache(wh, settings),
                          vectors=vectors if embedder else None, embedder=embedder, arbiter=arb, generator=gen,
                          regime=regime, profile=profile, stop_after=stop_after)
    for client in (arb, gen):  # a call process started with its client has had the set-up above to get ready
        client.wait_ready()
    return ctx


def walk_all(ctx: PipelineContext, todo: list[dict[str, Any]], start: str, statuses: Counter[str], *, calls: int,
             log) -> None:
    """Walk ``todo`` from ``start`` (``tasks.pipeline.walk_questions``) with a progress bar, counting final statuses
    in ``statuses``; closes the run's clients. Stopped (SIGTERM) or done, questions not started are dropped and
    those finished or in flight land."""
    outcomes = walk_questions(ctx, todo, start, calls=calls)
    try:
        with collector_for_a_run(), console.Progress("questions", len(todo)) as bar:
            for i, status in enumerate(outcomes, start=1):
                statuses[status] += 1
                bar.update(note=", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
                if i % 25 == 0 or i == len(todo):
                    log(f"[{i}/{len(todo)}] questions processed: {dict(statuses)}")
    finally:
        outcomes.close()
        ctx.arbiter.close()
        ctx.generator.close()


def answer_into(wh: Warehouse, run_id: str, questions: Path, settings: Settings, *, data_root: Path | None,
                regime: str, profile: str, stop_after: str | None = None, submit: bool = False,
                log=print) -> dict[str, Any]:
    """Load the set (unless this run already holds it), then process every question not yet finished."""
    t0 = time.perf_counter()
    rows = load_questions(wh, run_id)
    if not rows:
        loaded = ingest_questions(wh, run_id, questions, data_root)
        for err in loaded.errors:
            log(f"question file error {err.subject}: {err.message}")
        rows = load_questions(wh, run_id)
    waiting = {r["question_id"] for r in rows if documents_missing(r)}
    todo = [r for r in rows if r["status"] not in ("answered",) and r["question_id"] not in waiting
            and not (stop_after == "candidates" and r["status"] == "detected")
            and not (stop_after == "retrieval" and r["status"] == "arbitrated")]
    console.tee(log)(f"{len(rows)} question(s) in run {run_id}, {len(todo)} to process"
                     + (f", {len(waiting)} failed at load whose documents are still missing (see errors)"
                        if waiting else ""))
    statuses: Counter[str] = Counter(r["status"] for r in rows if r not in todo)
    if todo:
        ctx = build_context(wh, run_id, settings, regime, profile, stop_after)
        # the arbiter a model behind an API: up to max_in_flight calls wait on it at once
        walk_all(ctx, todo, "detect", statuses, calls=settings.llm.max_in_flight if submit else 0, log=log)
    failed = failures(wh, run_id)
    return {"run_id": run_id, "questions": len(rows), "processed": len(todo), "statuses": dict(statuses),
            "failures": len(failed), "failure_examples": failed[:console.FAILURES_SHOWN],
            "seconds": round(time.perf_counter() - t0, 2)}


@flow(name="answer")
def answer_flow(questions: str, data_root: str | None = None, home: str | None = None, regime: str = "auto",
                arbiter: str | None = None, profile: str | None = None, run_id: str | None = None,
                stop_after: str | None = None, ingest: bool = True) -> dict[str, Any]:
    """Answer a question set (JSONL). Pass an existing ``run_id`` to resume a crashed or partial run."""
    stop.install()
    settings = use_arbiter(get_settings(home), arbiter)
    profile = profile or settings.dispatch_profile
    logger = get_run_logger()
    qpath = Path(questions).resolve()
    root = Path(data_root).resolve() if data_root else None
    with Warehouse(settings.duckdb_path) as wh:
        config = answer_config(qpath, root, regime, profile, settings, stop_after=stop_after)
        run_id = open_run(wh, "answer", config, run_id, logger.info)
        with fails_run(wh, run_id):
            if ingest:
                docs = question_docs(qpath, root)
                if docs:
                    ingest_into(wh, run_id, docs, settings, log=logger.info)
            summary = answer_into(wh, run_id, qpath, settings, data_root=root, regime=regime, profile=profile,
                                  stop_after=stop_after, submit=settings.arbiter.provider == "openai",
                                  log=logger.info)
        status = "partial" if summary["statuses"].get("failed") or summary["failures"] else "ok"
        finish_run(wh, run_id, status, summary)
        return summary
