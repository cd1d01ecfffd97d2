"""``runs`` and ``errors``: lineage of every flow run and every recorded failure."""

from __future__ import annotations

import platform
import secrets
from typing import Any

from warehouse.db import Warehouse, to_json, utcnow


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
    from warehouse.prices import load_prices

    run_id = run_id or new_run_id(flow)
    load_prices(wh)  # the versioned price file in the repo is the source of truth; views recompute costs
    with wh.transaction():
        exists = wh.scalar("SELECT count(*) FROM runs WHERE run_id = ?", [run_id])
        if exists:
            wh.execute("UPDATE runs SET status = 'running', finished_at = NULL, error = NULL WHERE run_id = ?", [run_id])
        else:
            wh.execute(
                "INSERT INTO runs (run_id, flow, parent_run_id, started_at, status, config, versions) "
                "VALUES (?, ?, ?, ?, 'running', ?, ?)",
                [run_id, flow, parent_run_id, utcnow(), to_json(config), to_json(package_versions())],
            )
    return run_id


def finish_run(wh: Warehouse, run_id: str, status: str, summary: dict[str, Any] | None = None,
               error: str | None = None) -> None:
    wh.execute(
        "UPDATE runs SET status = ?, finished_at = ?, summary = ?, error = ? WHERE run_id = ?",
        [status, utcnow(), to_json(summary or {}), error, run_id],
    )


def record_error(wh: Warehouse, run_id: str, stage: str, subject: str, error: str) -> None:
    wh.execute(
        "INSERT INTO errors (run_id, stage, subject, error, created_at) VALUES (?, ?, ?, ?, ?)",
        [run_id, stage, subject, error, utcnow()],
    )


def list_runs(wh: Warehouse, limit: int = 50) -> list[dict[str, Any]]:
    return wh.query(
        "SELECT run_id, flow, parent_run_id, started_at, finished_at, status, summary, error "
        "FROM runs ORDER BY started_at DESC LIMIT ?",
        [limit],
    )


def get_run(wh: Warehouse, run_id: str) -> dict[str, Any] | None:
    rows = wh.query("SELECT * FROM runs WHERE run_id = ?", [run_id])
    return rows[0] if rows else None
