"""Past one machine: the ingest flow's parse tasks on a Dask cluster (prefect-dask), results stored by the flow.

The cluster here is in-process (threads) so the test needs no network; a real deployment points
``DaskTaskRunner(address=...)`` (or the nightly config's ``scale.dask_address``) at a running scheduler.
"""

from __future__ import annotations

import pytest

pytest.importorskip("prefect_dask", reason="prefect-dask is not installed (pip install 'arbiter[scale]')")

from distributed import LocalCluster  # noqa: E402
from prefect_dask import DaskTaskRunner  # noqa: E402

from flows.ingest import (
    ingest_flow,  # noqa: E402
    ingest_into,
)
from flows.nightly import ScaleSpec, parse_with, task_runner_for
from schemas.settings import get_settings
from tasks.corpus.sample.generate import generate_sample_corpus  # noqa: E402
from warehouse import corpus  # noqa: E402
from warehouse.db import Warehouse  # noqa: E402

CLUSTER_KWARGS = {"processes": False, "n_workers": 1, "threads_per_worker": 2}
CLUSTERS: list[LocalCluster] = []


def make_cluster(**kwargs) -> LocalCluster:
    """``cluster_class`` for DaskTaskRunner: builds the LocalCluster and keeps it, to read its scheduler's log.
    (Module level on purpose: Dask pickles the flow context, and a module function pickles by reference.)"""
    cluster = LocalCluster(**kwargs)
    CLUSTERS.append(cluster)
    return cluster


def test_ingest_parse_tasks_run_on_dask(tmp_path, monkeypatch, prefect_server):
    monkeypatch.setenv("ARBITER_EMBEDDER__KIND", "hash")
    sample = generate_sample_corpus(tmp_path / "sample")
    home = tmp_path / "home"
    CLUSTERS.clear()
    runner = DaskTaskRunner(cluster_class=make_cluster, cluster_kwargs=CLUSTER_KWARGS)

    summary = ingest_flow.with_options(task_runner=runner)([str(sample.root / "docs")], home=str(home))

    assert summary["ingested"] == len(sample.pdfs) and summary["failed"] == 0
    assert len(CLUSTERS) == 1, "the Dask runner did not start its cluster"
    scheduler = CLUSTERS[0].scheduler
    parse_keys = {str(k) for k, *_ in scheduler.transition_log if str(k).startswith("parse_document-")}
    assert len(parse_keys) == len(sample.pdfs), f"expected one Dask task per PDF, the scheduler saw {parse_keys}"
    assert CLUSTERS[0].status.name == "closed"  # the runner shut its cluster down with the flow
    with Warehouse(home / "warehouse.duckdb", read_only=True) as wh:
        docs = corpus.list_documents(wh, status="ok")
        assert {d["path"] for d in docs} == {str(p.resolve()) for p in sample.pdfs}
        assert all(d["n_lines"] > 0 for d in docs)


def test_nightly_scale_config_parses_on_dask(tmp_path, monkeypatch, prefect_server):
    """``[scale] task_runner = "dask"``: the nightly's parse step submits to a DaskTaskRunner of its own."""
    from prefect import flow

    runner = task_runner_for(ScaleSpec(task_runner="dask", dask_workers=2))
    assert isinstance(runner, DaskTaskRunner) and runner.cluster_kwargs == CLUSTER_KWARGS
    assert task_runner_for(ScaleSpec(task_runner="dask", dask_address="tcp://sched:8786")).address == "tcp://sched:8786"
    assert task_runner_for(ScaleSpec()) is None

    monkeypatch.setenv("ARBITER_EMBEDDER__KIND", "hash")
    sample = generate_sample_corpus(tmp_path / "sample")
    settings = get_settings(home=tmp_path / "home")
    CLUSTERS.clear()

    @flow(name="nightly-parse-step")
    def parse_step() -> int:
        with Warehouse(settings.duckdb_path) as wh:
            dask = DaskTaskRunner(cluster_class=make_cluster, cluster_kwargs=CLUSTER_KWARGS)
            summary = ingest_into(wh, "dask-run", [sample.root / "docs"], settings, parse_with(dask), log=print)
        return len(summary.ingested)

    assert parse_step() == len(sample.pdfs)
    (cluster,) = CLUSTERS
    assert len({str(k) for k, *_ in cluster.scheduler.transition_log if str(k).startswith("parse_document-")}) == 5
