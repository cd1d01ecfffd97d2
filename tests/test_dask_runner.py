"""Past one machine: the ingest flow's parse + embed tasks on a Dask cluster of process workers, stored by the flow.

A real Prefect API server (``prefect server start`` on loopback, started and stopped here) because a process
worker runs its task runs against the API named by ``PREFECT_API_URL``, which the in-process ephemeral server is
not. A real deployment points ``DaskTaskRunner(address=...)`` (or the nightly config's ``scale.dask_address``) at a
running scheduler (docs/operations.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

pytest.importorskip("prefect_dask", reason="prefect-dask is not installed (pip install 'arbiter[scale]')")

from distributed import Client, LocalCluster  # noqa: E402
from prefect_dask import DaskTaskRunner  # noqa: E402

from flows.ingest import ingest_flow, ingest_into  # noqa: E402
from flows.nightly import ScaleSpec, task_runner_for  # noqa: E402
from flows.prefect_api import loopback_api  # noqa: E402
from schemas.settings import get_settings  # noqa: E402
from tasks.corpus import embed  # noqa: E402
from tasks.corpus.sample.generate import generate_sample_corpus  # noqa: E402
from warehouse.db import Warehouse  # noqa: E402
from warehouse.vectors import VectorStore  # noqa: E402


@pytest.fixture(scope="module")
def api_env(tmp_path_factory):
    """This process and the worker processes it spawns talk to a real server (environment, inherited)."""
    with loopback_api(tmp_path_factory.mktemp("prefect-home")) as url:
        yield url


def _tables(home: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    with Warehouse(home / "warehouse.duckdb", read_only=True) as wh:
        return tuple(wh.con.sql(f"SELECT * EXCLUDE (run_id) FROM {table} ORDER BY {order}").pl()
                     for table, order in (("lines", "doc_id, line_no"), ("toc", "doc_id, section_id")))


def _vectors(home: Path) -> tuple[pl.DataFrame, np.ndarray]:
    arrow = VectorStore(home / "lance").table().to_arrow()
    frame = pl.from_arrow(arrow.drop_columns(["vector"]))
    order = np.lexsort((frame["window_id"].to_numpy(), frame["doc_id"].to_numpy()))
    vec = arrow.column("vector").combine_chunks()
    matrix = vec.flatten().to_numpy().reshape(-1, vec.type.list_size)
    return frame[order.tolist()], matrix[order]


def _embedder_loads() -> int:
    """In a worker: how many embedders this process has built (one per thread; a worker has one thread)."""
    return embed.builds


def test_ingest_on_dask_process_workers_matches_single_process(tmp_path, api_env):
    sample = generate_sample_corpus(tmp_path / "sample")
    docs = sample.root / "docs"
    single = tmp_path / "single"
    settings = get_settings(home=single)
    with Warehouse(settings.duckdb_path) as wh:
        one = ingest_into(wh, "single-process", [docs], settings, log=lambda m: None)
    assert one.failed == {} and one.windows > 0

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        runner = DaskTaskRunner(address=cluster.scheduler_address)
        summary = ingest_flow.with_options(task_runner=runner)([str(docs)], home=str(tmp_path / "dask"))
        assert summary["ingested"] == len(sample.pdfs) and summary["failed"] == 0
        keys = {str(k) for k, *_ in cluster.scheduler.transition_log if str(k).startswith("process_document-")}
        assert len(keys) == len(sample.pdfs), f"expected one Dask task per PDF, the scheduler saw {keys}"
        with Client(cluster) as client:
            loads = client.run(_embedder_loads)
    assert len(loads) == 2 and all(n <= 1 for n in loads.values()), f"embedders built per worker: {loads}"
    assert sum(loads.values()) >= 1, "no worker embedded anything: the embedding ran in the flow's process"

    for a, b in zip(_tables(single), _tables(tmp_path / "dask")):
        assert a.equals(b)
    (wa, va), (wb, vb) = _vectors(single), _vectors(tmp_path / "dask")
    assert wa.equals(wb)
    assert va.shape == vb.shape and np.abs(va - vb).max() <= 1e-6


def test_nightly_scale_dask_uses_process_workers():
    """``[scale] task_runner = "dask"``: a local cluster of one-thread process workers, or the given scheduler."""
    runner = task_runner_for(ScaleSpec(task_runner="dask", dask_workers=2))
    assert isinstance(runner, DaskTaskRunner)
    assert runner.cluster_kwargs == {"processes": True, "n_workers": 2, "threads_per_worker": 1}
    assert task_runner_for(ScaleSpec(task_runner="dask", dask_address="tcp://sched:8786")).address == "tcp://sched:8786"
    assert task_runner_for(ScaleSpec()) is None
