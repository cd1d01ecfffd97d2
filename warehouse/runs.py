"""``runs`` and ``errors``: lineage of every flow run and every recorded failure."""

from __future__ import annotations

import json
import os
import platform
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from warehouse.db import Warehouse, to_json, utcnow
from warehouse.errors import RunStopped
from warehouse.prices import load_prices


def new_run_id(flow: str) -> str:
    return f"{utcnow():%Y%m%dT%H%M%S}-{flow}-{secrets.token_hex(3)}"


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("arbiter", "prefect", "duckdb", "polars", "pymupdf", "lancedb", "openai", "pydantic"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def start_run(wh: Warehouse, flow: str, config: dict[str, Any], run_id: str | None = None,
              parent_run_id: str | None = None) -> str:
    """Create the run row, or mark an existing one running again (a resumed run keeps its id)."""
    run_id = run_id or new_run_id(flow)
    mark_interrupted(wh)
    load_prices(wh)  # the versioned price file in the repo is the source of truth; views recompute costs
    with wh.transaction():
        exists = wh.scalar("SELECT count(*) FROM runs WHERE run_id = ?", [run_id])
        if exists:
            wh.execute("UPDATE runs SET status = 'running', finished_at = NULL, error = NULL, host = ?, pid = ? "
                       "WHERE run_id = ?", [socket.gethostname(), os.getpid(), run_id])
        else:
            wh.execute(
                "INSERT INTO runs (run_id, flow, parent_run_id, started_at, status, config, versions, host, pid) "
                "VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?)",
                [run_id, flow, parent_run_id, utcnow(), to_json(config), to_json(package_versions()),
                 socket.gethostname(), os.getpid()],
            )
    return run_id


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def mark_interrupted(wh: Warehouse) -> list[str]:
    """Runs left 'running' by a process of this host that no longer exists -> 'interrupted' (killed, crashed).

    Only this host's runs are judged (a pid means nothing elsewhere); a live pid is never touched, even one
    reused by another program. The run keeps its rows: resume it with its id (``--run-id``).
    """
    host = socket.gethostname()
    stale = [
        r for r in wh.query("SELECT run_id, pid FROM runs WHERE status = 'running' AND host = ? AND pid IS NOT NULL",
                            [host])
        if r["pid"] != os.getpid() and not _alive(r["pid"])
    ]
    for r in stale:
        wh.execute(
            "UPDATE runs SET status = 'interrupted', error = ? WHERE run_id = ? AND status = 'running'",
            [f"process {r['pid']} on {host} ended without finishing this run (killed or crashed); its finished "
             f"work is kept: rerun with --run-id {r['run_id']} to resume", r["run_id"]],
        )
    return [r["run_id"] for r in stale]


def finish_run(wh: Warehouse, run_id: str, status: str, summary: dict[str, Any] | None = None,
               error: str | None = None) -> None:
    wh.execute(
        "UPDATE runs SET status = ?, finished_at = ?, summary = ?, error = ? WHERE run_id = ?",
        [status, utcnow(), to_json(summary or {}), error, run_id],
    )


def resume_command(wh: Warehouse, run_id: str) -> str:
    """The command that resumes ``run_id`` (from its flow and config), for its ``error`` and the terminal."""
    row = get_run(wh, run_id) or {}
    config = row.get("config") or {}
    config = json.loads(config) if isinstance(config, str) else config
    root = f" --data-root {config['data_root']}" if config.get("data_root") else ""
    flow = row.get("flow")
    if flow == "answer" and config.get("questions"):
        return f"arbiter answer {config['questions']}{root} --run-id {run_id}"
    if flow == "evaluate" and config.get("questions"):
        return f"arbiter eval {config['questions']}{root} --run-id {run_id}"
    if flow == "nightly" and config.get("config"):
        return f"arbiter nightly --config {config['config']} --run-id {run_id}"
    return f"rerun the same command with --run-id {run_id}"


def run_error(exc: BaseException) -> str:
    """How a run's ``error`` names the exception that ended it."""
    return f"{type(exc).__name__}: {exc}"


@contextmanager
def fails_run(wh: Warehouse, run_id: str) -> Iterator[None]:
    """The block is the run's work: if it raises, the run is finished ``failed`` with the error (``interrupted``
    with its resume command when the process was stopped: SIGTERM, Ctrl-C), and the exception goes on. The block's caller finishes the run itself when it does not raise."""
    try:
        yield
    except (RunStopped, KeyboardInterrupt) as exc:
        how = str(exc) if isinstance(exc, RunStopped) else "stopped by an interrupt (Ctrl-C)"
        resume = resume_command(wh, run_id)
        finish_run(wh, run_id, "interrupted", error=f"{how}; its finished work is kept, resume with: {resume}")
        if isinstance(exc, RunStopped):  # for the CLI: the outermost run's (a nightly resumes its children)
            exc.run_id, exc.resume = run_id, resume
        raise
    except BaseException as exc:
        finish_run(wh, run_id, "failed", error=run_error(exc))
        raise


def record_error(wh: Warehouse, run_id: str, stage: str, subject: str, error: str) -> None:
    wh.execute(
        "INSERT INTO errors (run_id, stage, subject, error, created_at) VALUES (?, ?, ?, ?, ?)",
        [run_id, stage, subject, error, utcnow()],
    )


def list_runs(wh: Warehouse, limit: int = 50) -> list[dict[str, Any]]:
    if not wh.read_only:
        mark_interrupted(wh)
    return wh.query(
        "SELECT run_id, flow, parent_run_id, started_at, finished_at, status, summary, error "
        "FROM runs ORDER BY started_at DESC LIMIT ?",
        [limit],
    )


def get_run(wh: Warehouse, run_id: str) -> dict[str, Any] | None:
    rows = wh.query("SELECT * FROM runs WHERE run_id = ?", [run_id])
    return rows[0] if rows else None
