"""``arbiter train-arbiter``: train the learned arbiter from gold pages or from a run's logged verdicts.

    arbiter train-arbiter --gold QUESTIONS.jsonl [--data-root DIR] [--pool-run RUN_ID] [--home DIR]
    arbiter train-arbiter --from-run RUN_ID [--home DIR]

``--gold``: the file's questions need candidate pools; they are detected in this training run (documents ingested
incrementally, questions stopped after detection), or taken from ``--pool-run`` (a run that detected them).
``--from-run``: the verdicts some arbiter (e.g. an OpenAI one) gave in that run are the labels.
Each training is a run (flow 'train-arbiter') and writes a new versioned model under ``<home>/models``; the
``learned`` arbiter provider loads the latest. Exit 1 when training failed.

Each command imports its flow when it runs (the only lazy imports of the house, on purpose): importing the flows
loads Prefect, PyTorch and LanceDB, seconds that ``arbiter db path``, ``config`` and ``--help`` should not pay.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable, Optional

import typer

import flows  # noqa: F401  (offline defaults before prefect is imported)
from flows.cli_common import HomeOpt, echo_json
from schemas.settings import Settings, get_settings


def _offline_pool_settings(settings: Settings) -> Settings:
    """The same settings with offline providers: a pool run stops after detection, but builds its clients."""
    out = settings.model_copy(deep=True)
    out.arbiter.provider, out.generate.provider, out.llm.fallback = "rules", "extractive", None
    return out


def train_arbiter(settings: Settings, *, from_run: str | None = None, gold: Path | None = None,
                  data_root: Path | None = None, pool_run: str | None = None, kind: str = "logreg",
                  log: Callable[[str], Any] = print) -> dict[str, Any]:
    """Train, save a new artifact, record the run; returns the artifact's metadata plus ``run_id``."""
    from flows.answer import answer_into, question_docs
    from flows.ingest import ingest_into
    from tasks.arbiter.learned import (
        pools_from_gold,
        pools_from_verdicts,
        save_artifact,
        train_learned_arbiter,
    )
    from tasks.questions.load import load_question_set
    from warehouse.db import Warehouse
    from warehouse.runs import fails_run, finish_run, start_run
    from warehouse.training import pool_rows, run_flow, verdict_rows

    if (from_run is None) == (gold is None):
        raise ValueError("give exactly one of --from-run RUN_ID (logged verdicts) or --gold QUESTIONS.jsonl")
    if from_run is not None and pool_run is not None:
        raise ValueError("--pool-run goes with --gold; --from-run already names the run whose pools are used")
    config = {"from_run": from_run, "gold": str(gold.resolve()) if gold else None, "pool_run": pool_run,
              "data_root": str(data_root.resolve()) if data_root else None, "kind": kind}
    with Warehouse(settings.duckdb_path) as wh:
        run_id = start_run(wh, "train-arbiter", config)
        with fails_run(wh, run_id):
            if from_run is not None:
                if run_flow(wh, from_run) is None:
                    raise LookupError(f"run {from_run!r} not found; see `arbiter runs list` for run ids")
                rows = verdict_rows(wh, from_run)
                if not rows:
                    raise ValueError(f"run {from_run!r} holds no verdicts (stopped before the arbiter?); train from "
                                     "a run that arbitrated its questions, or use --gold")
                pools = pools_from_verdicts(rows)
                source = {"labels": "verdicts", "run_id": from_run, "positive_roles": ["primary", "supporting"],
                          "arbiters": sorted({f"{r['provider']}/{r['model']}" for r in rows})}
            else:
                path = gold.resolve()
                loaded = load_question_set(path, data_root)
                pages = {r.qid: r.gold_pages_0based for r in loaded.records}
                if not any(p is not None for p in pages.values()):
                    raise ValueError(f"{path} has no question with gold_pages_0based; page gold is the label")
                if pool_run is not None:
                    if run_flow(wh, pool_run) is None:
                        raise LookupError(f"run {pool_run!r} not found; see `arbiter runs list` for run ids")
                    pool = pool_run
                else:
                    pool_settings = _offline_pool_settings(settings)
                    docs = question_docs(path, data_root)
                    if docs:
                        ingest_into(wh, run_id, docs, pool_settings, log=log)
                    answer_into(wh, run_id, path, pool_settings, data_root=data_root, regime="auto",
                                profile=settings.dispatch_profile, stop_after="candidates", log=log)
                    pool = run_id
                rows = [r for r in pool_rows(wh, pool) if r["question_id"] in pages]
                if not rows:
                    raise ValueError(f"run {pool!r} holds no candidates for the questions of {path.name}; detect "
                                     "them first (omit --pool-run to do it here)")
                pools = pools_from_gold(rows, pages)
                source = {"labels": "gold", "questions": str(path), "questions_sha256":
                          hashlib.sha256(path.read_bytes()).hexdigest(), "pool_run_id": pool}
            trained = train_learned_arbiter(pools, kind=kind, source={**source, "train_run_id": run_id})
            meta = save_artifact(trained, settings.models_dir)
        summary = {k: meta[k] for k in ("version", "model", "artifact", "kind", "pairs", "positive", "questions",
                                        "groups", "thresholds", "holdout", "source")}
        finish_run(wh, run_id, "ok", summary)
    return {**meta, "run_id": run_id, "path": str(settings.models_dir / meta["artifact"])}


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def train_arbiter_cmd(
    from_run: Optional[str] = typer.Option(None, "--from-run", help="label with the verdicts this run's arbiter gave "
                                                                    "(primary/supporting = keep)"),
    gold: Optional[Path] = typer.Option(None, "--gold", help="label with this question set's gold pages (JSONL)"),
    data_root: Optional[Path] = typer.Option(None, "--data-root", help="folder the gold questions' `doc` paths are "
                                                                      "relative to (default: the file's folder)"),
    pool_run: Optional[str] = typer.Option(None, "--pool-run", help="with --gold: take candidate pools from this run "
                                                                    "instead of detecting them"),
    kind: str = typer.Option("logreg", "--kind", help="logreg (default) | hgb"),
    home: Optional[Path] = HomeOpt,
    as_json: bool = typer.Option(False, "--json", help="print the model's metadata as JSON"),
) -> None:
    """Train the learned arbiter (scikit-learn, offline) and save it as a new version under <home>/models."""
    settings = get_settings(home)
    try:
        meta = train_arbiter(settings, from_run=from_run, gold=gold, data_root=data_root, pool_run=pool_run,
                             kind=kind, log=lambda m: typer.echo(m, err=True))
    except Exception as exc:
        typer.echo(f"train-arbiter failed: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(1) from exc
    if as_json:
        echo_json(meta)
        return
    h = meta["holdout"]
    typer.echo(f"{meta['model']} ({meta['kind']}) saved to {meta['path']}: {meta['pairs']} pairs "
               f"({meta['positive']} keep) from {meta['questions']} questions, {meta['source']['labels']} labels; "
               f"run {meta['run_id']}")
    if "page_hit_at_1" in h:
        what = "gold" if meta["source"]["labels"] == "gold" else "the logged arbiter's kept pages"
        typer.echo(f"out-of-fold by document, against {what}: page hit@1 {_pct(h['page_hit_at_1'])} "
                   f"(RRF {_pct(h['rrf_page_hit_at_1'])}), hit@5 {_pct(h['page_hit_at_5'])}, not found precision "
                   f"{_pct(h['not_found_precision'])} recall {_pct(h['not_found_recall'])}; floor "
                   f"{meta['thresholds']['floor']}")
    else:
        typer.echo(f"no holdout metrics: {h.get('method')}")
