"""Shared fixtures. Tests that read ../shared/data skip with a reason when it is absent (a user's clone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schemas.settings import offline_environment
from warehouse.db import Warehouse

offline_environment()

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("ARBITER_SHARED_DATA", REPO.parent / "shared" / "data"))


def pytest_collection_modifyitems(config, items):
    skip_live = pytest.mark.skip(reason="live API test: set ARBITER_LIVE_TESTS=1 and an API key to run")
    skip_local = pytest.mark.skip(reason="local-LLM tier (minutes on a CPU): set ARBITER_LOCAL_LLM_TESTS=1, or run "
                                  ".ci/run, which builds llama-server and fetches the model first")
    skip_eval = pytest.mark.skip(reason="evaluation tier (the dev and guard sets embedded and answered: ~20 min on "
                                 "2 cores): set ARBITER_EVAL_TESTS=1, or run .ci/run")
    for item in items:
        if "live" in item.keywords and os.environ.get("ARBITER_LIVE_TESTS") != "1":
            item.add_marker(skip_live)
        if "local_llm" in item.keywords and os.environ.get("ARBITER_LOCAL_LLM_TESTS") != "1":
            item.add_marker(skip_local)
        if "eval_tier" in item.keywords and os.environ.get("ARBITER_EVAL_TESTS") != "1":
            item.add_marker(skip_eval)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"evaluation data not found at {SHARED_DATA} (only CI and developer machines have ../shared/data)")
    return SHARED_DATA


@pytest.fixture
def wh(tmp_path):
    w = Warehouse(tmp_path / "warehouse.duckdb")
    yield w
    w.close()


@pytest.fixture(scope="session")
def prefect_server():
    """The process-wide ephemeral Prefect server: in-process flows use it, subprocesses get its URL
    (``PREFECT_API_URL``) instead of starting their own."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_LOGGING_TO_API_ENABLED, temporary_settings

    server = SubprocessASGIServer()
    owner = not server.running
    server.start(timeout=240)
    # flow logs stay on the console: shipping every task's lines to the API would only load the shared 2 cores
    with temporary_settings(updates={PREFECT_LOGGING_TO_API_ENABLED: False}):
        yield server
    if owner:
        try:  # flush what is queued for the API before it goes, as prefect_test_harness does
            APILogWorker.instance().drain()
        except RuntimeError:
            pass
        EventsWorker.drain_all()
        server.stop()
