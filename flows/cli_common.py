"""What every ``arbiter`` command module shares: the ``--home`` option and ``--json`` output."""

from __future__ import annotations

import json
from typing import Any

import typer

HOME_HELP = "warehouse home (default: ARBITER_HOME or ./.arbiter)"
HomeOpt = typer.Option(None, "--home", help=HOME_HELP)


def echo_json(obj: Any) -> None:
    """A command's ``--json`` output: indented, anything not JSON-native (paths, datetimes) as its string."""
    typer.echo(json.dumps(obj, indent=2, default=str))
