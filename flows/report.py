"""Prefect flow ``report``: a run's self-contained HTML report under ``<home>/reports/`` (tasks/report/html.py).

The evaluation section is added when the run has ``eval_results``. Each report is recorded as a run
(flow 'report', parent = the reported run) whose summary holds the file path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from schemas.settings import get_settings
from tasks.evaluate.report import eval_section_html
from tasks.report.html import write_report
from warehouse.db import Warehouse
from warehouse.runs import fails_run, finish_run, start_run


def report_into(wh: Warehouse, run_id: str, out_dir: Path) -> Path:
    """Write ``report-<run_id>.html`` into ``out_dir`` (with the evaluation section when there is one)."""
    extra = eval_section_html(wh, run_id)
    return write_report(wh, run_id, out_dir, [extra] if extra else None)


@flow(name="report")
def report_flow(run_id: str, home: str | None = None, out_dir: str | None = None) -> dict[str, Any]:
    """Write the HTML report of ``run_id``; returns ``{"run_id", "report_run_id", "path"}``."""
    settings = get_settings(home)
    target = Path(out_dir) if out_dir else settings.reports_dir
    logger = get_run_logger()
    with Warehouse(settings.duckdb_path) as wh:
        report_run = start_run(wh, "report", {"run_id": run_id, "out_dir": str(target)}, parent_run_id=run_id)
        with fails_run(wh, report_run):
            path = report_into(wh, run_id, target)
        finish_run(wh, report_run, "ok", {"path": str(path)})
    logger.info(f"report of {run_id}: {path}")
    return {"run_id": run_id, "report_run_id": report_run, "path": str(path)}
