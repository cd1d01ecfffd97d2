"""A Prefect API server on loopback, for runs whose tasks execute in other processes.

Dask process workers report their task runs to the API named by ``PREFECT_API_URL``; the ephemeral server a
flow starts for itself lives inside the flow's process and is not reachable from them. Tests and benchmarks that
run on a ``LocalCluster(processes=True)`` start this one; a deployment points at its own ``prefect server``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_LOGGING_TO_API_ENABLED,
    temporary_settings,
)

from tasks.llm.local_server import free_port


@contextmanager
def loopback_api(home: Path, start_timeout_s: float = 240.0) -> Iterator[str]:
    """``prefect server start`` on a free loopback port with its own ``PREFECT_HOME`` (SQLite) under ``home``;
    while open, this process and the processes it spawns use it (environment and Prefect settings).
    Yields the API URL; stops the server on exit."""
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{free_port()}/api"
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
           "PREFECT_SERVER_UI_ENABLED": "false", "PREFECT_API_URL": url}
    prefect = Path(sys.executable).with_name("prefect")
    port = url.rsplit(":", 1)[1].split("/")[0]
    cmd = [str(prefect) if prefect.exists() else "prefect", "server", "start", "--host", "127.0.0.1",
           "--port", port, "--no-services"]
    log_path = home / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        saved = {k: os.environ.get(k) for k in ("PREFECT_API_URL", "PREFECT_LOGGING_TO_API_ENABLED")}
        try:
            _wait_healthy(url, proc, log_path, time.monotonic() + start_timeout_s)
            os.environ["PREFECT_API_URL"] = url
            os.environ["PREFECT_LOGGING_TO_API_ENABLED"] = "false"  # task logs stay on the workers' consoles
            with temporary_settings(updates={PREFECT_API_URL: url, PREFECT_LOGGING_TO_API_ENABLED: False}):
                yield url
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(url: str, proc: subprocess.Popen, log_path: Path, deadline: float) -> None:
    while True:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"prefect server on {url} did not start: {log_path.read_text()[-2000:]}")
        time.sleep(0.5)
