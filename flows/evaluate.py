"""Prefect flow ``evaluate``: a gold question set through the whole pipeline, scored against its gold.

Ingests the documents the questions name, answers every question (both regimes by default, so both are measured
and ``routed`` tells what auto picks), writes ``eval_results`` and records the run (flow 'evaluate') with the
summary. Metrics never fail a run; only pipeline failures make it ``partial``.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.task_runners import ThreadPoolTaskRunner

from flows import stop
from flows.answer import answer_config, answer_into, open_run, question_docs
from flows.ingest import ProcessMany, flow_tasks, ingest_into
from schemas.settings import Settings, get_settings
from tasks.evaluate.hybrid import hybrid_rankings
from tasks.evaluate.score import evaluation_summary, score_run
from tasks.providers import use_arbiter
from tasks.questions.load import ingest_questions, load_question_set
from warehouse import corpus
from warehouse.db import Warehouse
from warehouse.evals import save_eval_results, unscope_questions
from warehouse.questions import load_questions
from warehouse.runs import fails_run, finish_run

REGIMES = ("both", "auto", "batch", "sequential")


def limited_question_set(path: Path, limit: int | None, workdir: Path) -> Path:
    """The set itself, or a copy of its first ``limit`` questions that keeps the set's name (same file name in a
    folder named like the original's, see ``tasks.questions.load.question_set_name``)."""
    if limit is None:
        return path
    if limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()][:limit]
    out = workdir / path.resolve().parent.name / path.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def gold_doc_ids(wh: Warehouse, questions: Path, data_root: Path) -> dict[str, list[str]]:
    """qid -> doc ids of the documents its ``doc`` names (ingested ones only): document-level gold."""
    loaded = load_question_set(questions, data_root)
    paths = {qid: [str(p) for p in docs or []] for qid, docs in loaded.docs.items()}
    ids = corpus.doc_ids_for_paths(wh, sorted({p for ps in paths.values() for p in ps}))
    return {qid: sorted({ids[p] for p in ps if ids.get(p)}) for qid, ps in paths.items()}


def evaluate_into(wh: Warehouse, run_id: str, questions: Path, settings: Settings, *, data_root: Path | None,
                  regime: str = "both", profile: str | None = None, corpus_wide: bool = False,
                  limit: int | None = None, submit: bool = False,
                  process_many: ProcessMany | None = None,
                  log: Callable[[str], None] = print) -> dict[str, Any]:
    """Ingest, answer, score and summarise in an open warehouse (the flow's body; tests call it directly)."""
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {', '.join(REGIMES)}, got {regime!r}")
    t0 = time.perf_counter()
    questions = Path(questions).resolve()
    root = Path(data_root).resolve() if data_root else questions.parent
    profile = profile or settings.dispatch_profile
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="arbiter-eval-") as tmp:
        qpath = limited_question_set(questions, limit, Path(tmp))
        t = time.perf_counter()
        ingest = ingest_into(wh, run_id, question_docs(qpath, root), settings, process_many=process_many, log=log)
        timings["ingest"] = time.perf_counter() - t
        gold_docs = None
        if corpus_wide:
            if not load_questions(wh, run_id):
                for err in ingest_questions(wh, run_id, qpath, root).errors:
                    log(f"question file error {err.subject}: {err.message}")
            log(f"corpus-wide: {unscope_questions(wh, run_id)} question(s) search the whole corpus")
            gold_docs = gold_doc_ids(wh, qpath, root)
        t = time.perf_counter()
        pipeline = answer_into(wh, run_id, qpath, settings, data_root=root, regime=regime, profile=profile,
                               submit=submit, log=log)
        timings["pipeline"] = time.perf_counter() - t
    t = time.perf_counter()
    e = settings.embedder
    hybrid = hybrid_rankings(wh, load_questions(wh, run_id), settings.lance_dir, e.kind, e.device,
                             settings.ingest.embed_batch_size, log)
    timings["hybrid"] = time.perf_counter() - t
    t = time.perf_counter()
    rows = score_run(wh, run_id, regime, doc_level=corpus_wide, gold_docs=gold_docs, searched={"hybrid": hybrid})
    save_eval_results(wh, run_id, rows)
    summary = evaluation_summary(rows)
    timings["score"] = time.perf_counter() - t
    statuses = pipeline["statuses"]
    summary.update({
        "run_id": run_id, "question_set": rows[0]["question_set"] if rows else None, "regime": regime,
        "arbiter": settings.arbiter.provider, "generator": settings.generate.provider, "profile": profile,
        "corpus_wide": corpus_wide, "statuses": statuses, "n_failed": statuses.get("failed", 0),
        "failures": pipeline["failures"], "failure_examples": pipeline["failure_examples"],
        "ingest": {k: v for k, v in ingest.as_dict().items() if k not in ("run_id", "errors")},
        "timings": {k: round(v, 2) for k, v in timings.items()},
        "seconds": round(time.perf_counter() - t0, 2),
    })
    return summary


@flow(name="evaluate", task_runner=ThreadPoolTaskRunner(max_workers=2))
def evaluate_flow(questions: str, data_root: str | None = None, home: str | None = None, regime: str = "both",
                  arbiter: str | None = None, profile: str | None = None, limit: int | None = None,
                  corpus_wide: bool = False, run_id: str | None = None) -> dict[str, Any]:
    """Evaluate the pipeline on a gold question set (JSONL). Pass an existing ``run_id`` to resume it."""
    stop.install()
    t0 = time.perf_counter()
    settings = use_arbiter(get_settings(home), arbiter)
    logger = get_run_logger()
    qpath = Path(questions).resolve()
    root = Path(data_root).resolve() if data_root else None
    with Warehouse(settings.duckdb_path) as wh:
        config = answer_config(qpath, root, regime, profile or settings.dispatch_profile, settings, limit=limit,
                               corpus_wide=corpus_wide, embedder=settings.embedder.kind)
        run_id = open_run(wh, "evaluate", config, run_id, logger.info)
        with fails_run(wh, run_id):
            summary = evaluate_into(wh, run_id, qpath, settings, data_root=root, regime=regime, profile=profile,
                                    corpus_wide=corpus_wide, limit=limit,
                                    submit=settings.arbiter.provider == "openai", process_many=flow_tasks,
                                    log=logger.info)
        summary["seconds"] = round(time.perf_counter() - t0, 2)
        finish_run(wh, run_id, "partial" if summary["n_failed"] or summary["failures"] else "ok", summary)
        return summary
