"""Prefect flow ``nightly``: ingest the configured corpora, answer every question set, write the reports.

One parent run (flow 'nightly') links its children through ``parent_run_id``: one ingest run for the corpora,
one answer run per question set, one report per answer run (HTML under ``<home>/reports/``). A failing question
set is recorded (its run 'failed') and the others go on. Pass the nightly's ``run_id`` again to resume a crashed
night: each question set resumes its own answer run; ingestion is incremental anyway.
The config is TOML or YAML (``deployments/nightly.example.toml``); relative paths are read from its folder.
"""

from __future__ import annotations

import json
import time
import tomllib
from pathlib import Path
from typing import Any, Literal

import yaml
from prefect import flow, get_run_logger
from pydantic import BaseModel, Field, model_validator

from flows import stop
from flows.answer import answer_config, answer_into, question_docs
from flows.ingest import ingest_into, on_runner
from flows.report import report_into
from schemas.settings import Settings, get_settings
from tasks.providers import use_arbiter
from warehouse import diff as runs_store
from warehouse.db import Warehouse
from warehouse.runs import fails_run, finish_run, get_run, run_error, start_run


class CorpusSpec(BaseModel):
    name: str | None = Field(None, description="label in logs and the run summary")
    paths: list[Path] = Field(description="PDF files or folders (searched recursively)")


class QuestionSetSpec(BaseModel):
    name: str | None = None
    questions: Path = Field(description="question set (JSONL)")
    data_root: Path | None = Field(None, description="folder the questions' `doc` paths are relative to")
    regime: str | None = Field(None, description="overrides the nightly's regime for this set")
    arbiter: str | None = Field(None, description="overrides the nightly's arbiter for this set")
    profile: str | None = Field(None, description="overrides the nightly's dispatcher profile for this set")


class ScaleSpec(BaseModel):
    """Where the ingest tasks (parse + embed, one per PDF) run; the warehouse has one writer, this flow."""

    task_runner: Literal["threads", "dask"] = "threads"
    dask_address: str | None = Field(None, description="scheduler of a running Dask cluster (tcp://host:8786); "
                                                       "None with 'dask' = a local cluster")
    dask_workers: int = Field(2, ge=1, description="local Dask cluster: process workers (one thread each) "
                                                   "when no address is given")


class NightlyConfig(BaseModel):
    home: Path | None = Field(None, description="warehouse home (default ARBITER_HOME)")
    regime: str = "auto"
    arbiter: str | None = Field(None, description="rules | openai | replay | learned (default: settings)")
    profile: str | None = Field(None, description="dispatcher profile (default: settings)")
    report: bool = True
    corpora: list[CorpusSpec] = Field(default_factory=list)
    question_sets: list[QuestionSetSpec] = Field(default_factory=list)
    scale: ScaleSpec = Field(default_factory=ScaleSpec)

    @model_validator(mode="after")
    def _something_to_do(self):
        if not self.corpora and not self.question_sets:
            raise ValueError("the nightly config names no corpora and no question_sets: nothing to do")
        return self

    def resolved(self, base: Path) -> "NightlyConfig":
        """Paths made absolute against ``base`` (the config file's folder)."""
        def r(p: Path | None) -> Path | None:
            return None if p is None else (p if p.expanduser().is_absolute() else base / p).expanduser().resolve()

        return self.model_copy(update={
            "home": r(self.home),
            "corpora": [c.model_copy(update={"paths": [r(p) for p in c.paths]}) for c in self.corpora],
            "question_sets": [q.model_copy(update={"questions": r(q.questions), "data_root": r(q.data_root)})
                              for q in self.question_sets],
        })


def load_config(path: Path | str) -> NightlyConfig:
    """Read a nightly config (.toml, .yaml/.yml or .json); errors name the file."""
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"nightly config {path} not found; start from deployments/nightly.example.toml")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text) or {}
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            raise ValueError(f"unknown config format {path.suffix!r}: use .toml, .yaml or .json")
        return NightlyConfig.model_validate(data).resolved(path.parent)
    except Exception as exc:
        raise ValueError(f"nightly config {path}: {exc}") from exc


def task_runner_for(scale: ScaleSpec):
    """The task runner the ingest tasks are submitted to (prefect-dask for 'dask': pip install prefect-dask).
    A local cluster has process workers: parsing and embedding are CPU-bound Python and native code, and one
    process per core is what runs them in parallel; each worker loads the embedder once."""
    if scale.task_runner == "threads":
        return None
    try:
        from prefect_dask import DaskTaskRunner
    except ImportError as exc:
        raise RuntimeError("scale.task_runner = 'dask' needs prefect-dask: pip install 'arbiter[scale]'") from exc
    if scale.dask_address:
        return DaskTaskRunner(address=scale.dask_address)
    return DaskTaskRunner(cluster_kwargs={"processes": True, "n_workers": scale.dask_workers,
                                          "threads_per_worker": 1})


def _child(wh: Warehouse, nightly_id: str, flow_name: str, key: str, value: str) -> str | None:
    """The id of an earlier child run of this nightly (resume) whose config[key] == value."""
    for row in runs_store.child_runs(wh, nightly_id, flow_name):
        config = json.loads(row["config"]) if isinstance(row["config"], str) else (row["config"] or {})
        if config.get(key) == value:
            return row["run_id"]
    return None


def nightly_into(wh: Warehouse, nightly_id: str, cfg: NightlyConfig, settings: Settings, *, submit: bool,
                 log=print) -> dict[str, Any]:
    """The nightly's work inside an open warehouse and a started parent run; returns the parent's summary."""
    t0 = time.perf_counter()
    out: dict[str, Any] = {"ingest_run_id": None, "answer_runs": [], "reports": [], "failed_sets": []}
    corpus_paths = [p for c in cfg.corpora for p in c.paths]
    if corpus_paths:
        ingest_id = _child(wh, nightly_id, "ingest", "stage", "corpora")
        ingest_id = start_run(wh, "ingest", {"stage": "corpora", "paths": [str(p) for p in corpus_paths]},
                              run_id=ingest_id, parent_run_id=nightly_id)
        with fails_run(wh, ingest_id):
            summary = ingest_into(wh, ingest_id, corpus_paths, settings, on_runner(task_runner_for(cfg.scale)), log)
        finish_run(wh, ingest_id, "partial" if summary.failed else "ok", summary.as_dict())
        out.update(ingest_run_id=ingest_id, ingest=summary.as_dict())
    for qs in cfg.question_sets:
        s = use_arbiter(settings.model_copy(deep=True), qs.arbiter or cfg.arbiter)
        regime, profile = qs.regime or cfg.regime, qs.profile or cfg.profile or s.dispatch_profile
        config = answer_config(qs.questions, qs.data_root, regime, profile, s, stop_after=None, question_set=qs.name)
        previous = _child(wh, nightly_id, "answer", "questions", str(qs.questions))
        run_id = start_run(wh, "answer", config, run_id=previous, parent_run_id=nightly_id)
        log(f"question set {qs.name or qs.questions.name}: answer run {run_id}" + (" (resumed)" if previous else ""))
        try:
            with fails_run(wh, run_id):  # a stop (SIGTERM) leaves the set's run 'interrupted', not 'running'
                docs = question_docs(qs.questions, qs.data_root)
                if docs:
                    ingest_into(wh, run_id, docs, s, on_runner(task_runner_for(cfg.scale)), log)
                summary = answer_into(wh, run_id, qs.questions, s, data_root=qs.data_root, regime=regime,
                                      profile=profile, submit=submit and s.arbiter.provider == "openai", log=log)
        except Exception as exc:  # one set's failure is recorded; the other sets still run
            finish_run(wh, run_id, "failed", error=run_error(exc))
            out["failed_sets"].append({"questions": str(qs.questions), "run_id": run_id, "error": run_error(exc)})
            log(f"question set {qs.questions} FAILED: {run_error(exc)}")
            continue
        finish_run(wh, run_id, "partial" if summary["statuses"].get("failed") or summary["failures"] else "ok",
                   summary)
        out["answer_runs"].append({"run_id": run_id, "questions": str(qs.questions), "statuses": summary["statuses"],
                                   "failures": summary["failures"], "failure_examples": summary["failure_examples"]})
        if cfg.report:
            path = report_into(wh, run_id, s.reports_dir)
            out["reports"].append(str(path))
            log(f"report: {path}")
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


@flow(name="nightly")
def nightly_flow(config: str, home: str | None = None, run_id: str | None = None) -> dict[str, Any]:
    """Ingest the config's corpora incrementally, answer each question set (one answer run each), write reports.
    Pass an earlier nightly's ``run_id`` to resume it."""
    stop.install()
    cfg = load_config(config)
    home_path = Path(home) if home else cfg.home
    settings = get_settings(home_path)
    logger = get_run_logger()
    with Warehouse(settings.duckdb_path) as wh:
        if run_id and (get_run(wh, run_id) or {}).get("flow", "nightly") != "nightly":
            raise ValueError(f"run {run_id} is not a nightly run; pass a nightly's run id to resume it")
        run_id = start_run(wh, "nightly", {"config": str(Path(config).resolve()), **cfg.model_dump(mode="json")},
                           run_id=run_id)
        logger.info(f"nightly run {run_id}: {len(cfg.corpora)} corpora, {len(cfg.question_sets)} question set(s)")
        with fails_run(wh, run_id):
            summary = nightly_into(wh, run_id, cfg, settings, submit=True, log=logger.info)
        failed = summary["failed_sets"] or any(r["statuses"].get("failed") or r["failures"]
                                               for r in summary["answer_runs"])
        finish_run(wh, run_id, "partial" if failed else "ok", summary)
    summary["run_id"] = run_id
    summary["home"] = str(settings.home)
    return summary
