"""What every ``arbiter`` command module shares: the ``--home`` option and ``--json`` output."""

from __future__ import annotations

import json
from typing import Any

import typer

from flows import console

HOME_HELP = "warehouse home (default: ARBITER_HOME or ./.arbiter)"
HomeOpt = typer.Option(None, "--home", help=HOME_HELP)


def echo_json(obj: Any) -> None:
    """A command's ``--json`` output: indented, anything not JSON-native (paths, datetimes) as its string."""
    typer.echo(json.dumps(obj, indent=2, default=str))


def echo_failures(summary: dict[str, Any], settings: Any) -> None:
    """A run summary's failures on stderr: the first few messages, then how many and the SQL to see them all."""
    for line in console.failure_lines(summary["run_id"], summary.get("failure_examples") or [],
                                      summary.get("failures") or 0, str(settings.duckdb_path)):
        typer.echo(line, err=True)
