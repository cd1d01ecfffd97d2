"""Prefect flow ``backfill``: rerun part of past answer runs, as new linked runs (and ``arbiter redispatch``).

Each source run gets a new run (flow 'backfill', ``parent_run_id`` = the source) that copies from the source what
its questions' walk does not redo (``warehouse.diff.copy_question_rows``), then walks every question through the
one walk (``tasks.pipeline.walk_question``) from the mode's stage:

- ``redetect``: the whole pipeline again from the copied questions;
- ``rearbitrate``: one arbiter call per question again (another provider, model or profile) over the copied
  candidates, then generation;
- ``redispatch``: the copied verdicts through the dispatcher under other thresholds (no arbiter call), then
  generation;
- ``regenerate``: generation again (another generator or model) from the copied retrieval results.

``mode='auto'`` re-dispatches when neither the arbiter nor the model changes, and re-arbitrates otherwise. The new
run's summary holds the diff against its source (``tasks/report/diff.py``). A backfill is resumable like an answer
run: pass its ``run_id`` again and finished questions are kept, while a failed one (an arbiter call or a
generation call that failed) is walked again.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import date, datetime
from typing import Any

from prefect import flow, get_run_logger
from prefect.context import FlowRunContext

from flows.answer import build_context, walk_all
from schemas.settings import DispatchProfile, Settings, get_settings
from tasks.arbiter.brief import build_arbiter_request
from tasks.arbiter.dispatch import resolve_profile
from tasks.detect.run import CorpusCache
from tasks.llm.base import InvalidOutputError, LLMResult
from tasks.llm.batch_api import run_batch
from tasks.pipeline import (
    PipelineContext,
    parsed_question,
    question_absent_terms,
    walk_questions,
)
from tasks.providers import make_clients
from tasks.report.diff import diff_runs
from warehouse import diff as diff_store
from warehouse.db import Warehouse
from warehouse.detection import load_candidates
from warehouse.questions import load_questions
from warehouse.retrieval import load_retrieval_result, run_results
from warehouse.runs import fails_run, finish_run, get_run, start_run

MODES = ("auto", "rearbitrate", "redispatch", "redetect", "regenerate")
# the stage each mode's walk starts at (tasks.pipeline.STARTS)
START = {"redetect": "detect", "rearbitrate": "arbitrate", "redispatch": "dispatch", "regenerate": "generate"}


class BackfillError(ValueError):
    """A backfill that cannot start as asked; the message says what to pass instead."""


def run_config(run: dict[str, Any]) -> dict[str, Any]:
    config = run.get("config")
    return json.loads(config) if isinstance(config, str) else dict(config or {})


def choose_mode(mode: str, *, arbiter: str | None, model: str | None, redetect: bool) -> str:
    if mode not in MODES:
        raise BackfillError(f"unknown backfill mode {mode!r}; choose one of {', '.join(MODES)}")
    if redetect:
        if mode not in ("auto", "redetect"):
            raise BackfillError(f"redetect conflicts with mode {mode!r}; pass one of them")
        return "redetect"
    if mode != "auto":
        return mode
    return "redispatch" if arbiter is None and model is None else "rearbitrate"


class PrefetchedClient:
    """The arbiter client of a Batch API backfill: serves the replies fetched in one batch (rows already logged
    with ``batch_api = true``); a request the batch did not answer, or whose reply fails the question's own
    validation (unknown ids), goes to the live client, with its retries, as its own logged call."""

    def __init__(self, live, results: dict[str, Any]):
        self.live, self.provider, self.results = live, live.provider, results

    @property
    def gate(self):
        return self.live.gate

    @gate.setter
    def gate(self, gate) -> None:  # questions in flight (tasks.pipeline): the live calls let the work gate go
        self.live.gate = gate

    def complete(self, request, validate=None):
        result = self.results.pop(request.request_hash(), None)
        if result is not None:
            try:
                if validate is not None:
                    validate(result.parsed)
                return result
            except InvalidOutputError:
                pass
        return self.live.complete(request, validate)

    def close(self) -> None:
        self.live.close()


def prefetch_arbiter_batch(ctx: PipelineContext, rows: list[dict[str, Any]], poll_s: float, log) -> PrefetchedClient:
    """Submit the arbiter requests of ``rows`` (those without a stored result) as one OpenAI batch and wait."""
    if ctx.arbiter.provider.name != "openai":
        raise BackfillError(f"--batch-api needs the openai arbiter, not {ctx.arbiter.provider.name!r}")
    requests = []
    for row in rows:
        qid = row["question_id"]
        candidates = load_candidates(ctx.wh, ctx.run_id, qid)
        if candidates and load_retrieval_result(ctx.wh, ctx.run_id, qid) is None:
            question = parsed_question(row)
            requests.append(build_arbiter_request(question, candidates, question_absent_terms(ctx, row, question)))
    results: dict[str, Any] = {}
    if requests:
        log(f"batch API: {len(requests)} arbiter request(s) submitted; polling every {poll_s:g}s (up to 24 h)")
        replies = run_batch(ctx.arbiter.provider, requests, ctx.wh, ctx.run_id, poll_interval_s=poll_s)
        results = {r.request_hash(): x for r, x in zip(requests, replies) if isinstance(x, LLMResult)}
        log(f"batch API: {len(results)} of {len(requests)} answered; the rest go live")
    return PrefetchedClient(ctx.arbiter, results)


def backfill_settings(base: Settings, source_cfg: dict[str, Any], source_run_id: str, *, arbiter: str | None,
                      generator: str | None, model: str | None) -> Settings:
    """Settings of one backfill: the source run's providers and model unless overridden; replay reads the source."""
    s = base.model_copy(deep=True)
    s.arbiter.provider = arbiter or source_cfg.get("arbiter") or s.arbiter.provider
    s.generate.provider = generator or source_cfg.get("generator") or s.generate.provider
    s.llm.model = model or source_cfg.get("model") or s.llm.model
    if "replay" in (s.arbiter.provider, s.generate.provider) and not s.arbiter.replay_run_id:
        s.arbiter.replay_run_id = source_run_id
    return s


def backfill_into(wh: Warehouse, source_run_id: str, settings: Settings, *, arbiter: str | None = None,
                  generator: str | None = None, model: str | None = None, profile: str | None = None,
                  thresholds: dict[str, Any] | None = None, regime: str | None = None, mode: str = "auto",
                  redetect: bool = False, run_id: str | None = None, submit: bool = False,
                  batch_api: bool = False, batch_poll_s: float = 30.0, log=print) -> dict[str, Any]:
    """One backfill of ``source_run_id`` into a new (or resumed) linked run; returns its summary with the diff."""
    t0 = time.perf_counter()
    source = get_run(wh, source_run_id)
    if source is None:
        raise BackfillError(f"run {source_run_id!r} not found; see `arbiter runs list` for run ids")
    if run_id is not None:
        existing = get_run(wh, run_id)
        if existing is not None and existing["parent_run_id"] != source_run_id:
            raise BackfillError(f"run {run_id} exists and is not a backfill of {source_run_id} "
                                f"(its parent is {existing['parent_run_id']}); pass another run id or none")
    src_cfg = run_config(source)
    mode = choose_mode(mode, arbiter=arbiter, model=model, redetect=redetect)
    if batch_api and mode != "rearbitrate":
        raise BackfillError(f"--batch-api batches the arbiter's calls, so it re-arbitrates (mode is {mode}): "
                            "pass --arbiter openai or --mode rearbitrate")
    s = backfill_settings(settings, src_cfg, source_run_id, arbiter=arbiter, generator=generator, model=model)
    profile = profile or src_cfg.get("profile") or s.dispatch_profile
    unknown = sorted(set(thresholds or {}) - set(DispatchProfile.model_fields))
    if unknown:
        raise BackfillError(f"unknown threshold(s) {unknown}; valid: {', '.join(DispatchProfile.model_fields)}")
    s.dispatch = s.dispatch.model_copy(update=thresholds or {})  # also what a redetect's pipeline reads
    overrides = s.dispatch.overrides() or None
    regime = regime or src_cfg.get("regime") or "auto"
    config = {"source_run_id": source_run_id, "mode": mode, "arbiter": s.arbiter.provider,
              "generator": s.generate.provider, "model": s.llm.model, "profile": profile, "overrides": overrides,
              "regime": regime, "questions": src_cfg.get("questions"), "data_root": src_cfg.get("data_root"),
              "replay_run_id": s.arbiter.replay_run_id, "batch_api": batch_api}
    resumed = bool(run_id and get_run(wh, run_id))
    run_id = start_run(wh, "backfill", config, run_id=run_id, parent_run_id=source_run_id)
    log(f"backfill {run_id} of {source_run_id} ({mode}, {'resumed' if resumed else 'new'}): arbiter "
        f"{s.arbiter.provider}, generator {s.generate.provider}, model {s.llm.model}, profile {profile}")
    with fails_run(wh, run_id):
        summary = _backfill_questions(wh, run_id, source_run_id, s, mode=mode, profile=profile, overrides=overrides,
                                      regime=regime, submit=submit,
                                      batch_poll_s=batch_poll_s if batch_api else None, log=log)
        diff = diff_runs(wh, source_run_id, run_id)
    summary.update(run_id=run_id, source_run_id=source_run_id, mode=mode, diff=diff.as_json()["summary"],
                   seconds=round(time.perf_counter() - t0, 2))
    finish_run(wh, run_id, "partial" if summary["statuses"].get("failed") else "ok", summary)
    log(f"backfill {run_id}: {summary['statuses']}; {diff.summary.questions_changed} of {diff.summary.questions} "
        f"question(s) changed against {source_run_id}")
    return summary


def _backfill_questions(wh: Warehouse, run_id: str, source_run_id: str, s: Settings, *, mode: str, profile: str,
                        overrides: dict[str, Any] | None, regime: str, submit: bool, batch_poll_s: float | None,
                        log) -> dict[str, Any]:
    start = START[mode]
    copied: dict[str, int] = {}
    if not load_questions(wh, run_id):  # a resumed backfill keeps what it has
        copied = diff_store.copy_question_rows(wh, source_run_id, run_id, start)
        log(f"copied from {source_run_id}: {copied}")
    stale = diff_store.candidate_docs_without_lines(wh, run_id)
    if stale:
        log(f"warning: {len(stale)} document(s) of the source's candidates are no longer in the warehouse "
            f"(changed or removed since): {', '.join(d[:12] for d in stale)}; their passages have no text")
    rows = load_questions(wh, run_id)
    skip = diff_store.failed_before_detection(wh, run_id)
    todo = [r for r in rows if r["status"] != "answered" and r["question_id"] not in skip]
    done: Counter[str] = Counter(r["status"] for r in rows if r not in todo)
    log(f"{len(rows)} question(s), {len(todo)} to process")
    if todo:
        ctx = _context(wh, run_id, source_run_id, s, mode, regime, profile)
        if batch_poll_s is not None:
            ctx.arbiter = prefetch_arbiter_batch(ctx, todo, batch_poll_s, log)
        walk_all(ctx, todo, start, done, calls=s.llm.max_in_flight if submit else 0, log=log)
    return {"questions": len(rows), "processed": len(todo), "statuses": dict(done), "copied": copied,
            "stale_docs": stale, "profile": profile, "overrides": overrides, "regime": regime}


def _context(wh: Warehouse, run_id: str, source_run_id: str, s: Settings, mode: str, regime: str,
             profile: str) -> PipelineContext:
    if mode == "redetect":
        ctx = build_context(wh, run_id, s, regime, profile)
    else:
        arb, gen = make_clients(s, wh, run_id)
        # the corpus (lines loaded lazily) gives the re-built arbiter briefs their absent_terms, as the first pass had
        ctx = PipelineContext(wh=wh, run_id=run_id, settings=s, corpus=CorpusCache(wh, s), vectors=None,
                              embedder=None, arbiter=arb, generator=gen, regime=regime, profile=profile)
    ctx.source_run_id = source_run_id
    return ctx


def redispatch_run(wh: Warehouse, source_run_id: str, profile: str | None = None,
                   overrides: dict[str, Any] | None = None, new_run_id: str | None = None,
                   settings: Settings | None = None) -> str:
    """Dispatch ``source_run_id``'s stored verdicts again under other thresholds; returns the new run's id.

    The new run (flow 'redispatch', parent = source) gets copies of the source's questions, detector hits,
    candidates and verdicts, and fresh retrieval_results: each question walked from the dispatch stage to its
    retrieval result. No LLM is called; questions whose arbiter call failed stay failed. ``profile`` defaults to
    the one the source run used."""
    source = get_run(wh, source_run_id)
    if source is None:
        raise LookupError(f"run {source_run_id!r} not found; see `arbiter runs list` for run ids")
    profile = profile or run_config(source).get("profile") or "balanced"
    profile_name, _ = resolve_profile(profile, overrides)
    new_run_id = start_run(wh, "redispatch", {"source_run_id": source_run_id, "profile": profile,
                                               "overrides": dict(overrides or {})},
                           run_id=new_run_id, parent_run_id=source_run_id)
    s = (settings or Settings()).model_copy(deep=True)
    s.dispatch = s.dispatch.model_copy(update=overrides or {})
    with fails_run(wh, new_run_id):
        copied = diff_store.copy_question_rows(wh, source_run_id, new_run_id, "dispatch")
        skip = diff_store.failed_before_detection(wh, new_run_id)
        ctx = PipelineContext(wh=wh, run_id=new_run_id, settings=s, corpus=None, vectors=None, embedder=None,
                              arbiter=None, generator=None, profile=profile, stop_after="retrieval",
                              source_run_id=source_run_id)
        for _ in walk_questions(ctx, [r for r in load_questions(wh, new_run_id) if r["question_id"] not in skip],
                                "dispatch"):
            pass
        statuses = Counter(r["status"] for r in run_results(wh, new_run_id))  # found, not_found, failed
    summary = {"source_run_id": source_run_id, "profile": profile_name, "copied": copied, "statuses": dict(statuses)}
    finish_run(wh, new_run_id, "partial" if statuses.get("failed") else "ok", summary)
    return new_run_id


def parse_day(value: str | date | datetime | None) -> datetime | None:
    """'2026-11-01' or an ISO timestamp -> naive UTC datetime (the warehouse stores naive UTC)."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    try:
        return datetime.fromisoformat(value).replace(tzinfo=None)
    except ValueError:
        raise BackfillError(f"bad date {value!r}: use YYYY-MM-DD or an ISO timestamp (UTC)") from None


def source_runs(wh: Warehouse, from_run: str | None, since: Any, until: Any) -> list[str]:
    if from_run and (since or until):
        raise BackfillError("pass either --from-run or --since/--until, not both")
    if from_run:
        return [from_run]
    if not (since or until):
        raise BackfillError("nothing to backfill: pass --from-run RUN_ID, or --since/--until dates")
    return [r["run_id"] for r in diff_store.answer_runs_between(wh, parse_day(since), parse_day(until))]


@flow(name="backfill")
def backfill_flow(from_run: str | None = None, since: str | None = None, until: str | None = None,
                  arbiter: str | None = None, generator: str | None = None, model: str | None = None,
                  profile: str | None = None, thresholds: dict[str, float] | None = None, regime: str | None = None,
                  mode: str = "auto", redetect: bool = False, home: str | None = None,
                  run_id: str | None = None, batch_api: bool = False, batch_poll_s: float = 30.0) -> dict[str, Any]:
    """Rerun arbitration and/or generation over ``from_run`` (or the answer runs started in [since, until)) with
    another arbiter / generator / model / profile / thresholds; each becomes a new run linked to its source.
    ``batch_api``: send the arbiter calls as one OpenAI Batch API batch (half price, up to 24 h), polled every
    ``batch_poll_s`` seconds."""
    settings = get_settings(home)
    logger = get_run_logger()
    submit = FlowRunContext.get() is not None
    with Warehouse(settings.duckdb_path) as wh:
        sources = source_runs(wh, from_run, since, until)
        if run_id and len(sources) != 1:
            raise BackfillError("--run-id resumes one backfill: use it with --from-run")
        logger.info(f"backfill of {len(sources)} run(s): {', '.join(sources) or '(none in range)'}")
        results = []
        for src in sources:
            providers = {arbiter or "", generator or "", run_config(get_run(wh, src) or {}).get("arbiter") or ""}
            results.append(backfill_into(
                wh, src, settings, arbiter=arbiter, generator=generator, model=model, profile=profile,
                thresholds=thresholds, regime=regime, mode=mode, redetect=redetect, run_id=run_id,
                submit=submit and "openai" in providers, batch_api=batch_api, batch_poll_s=batch_poll_s,
                log=logger.info))
    return {"backfills": results, "sources": sources}
