"""Operators' commands (typer functions, registered by ``flows/cli.py``): diff, backfill, nightly, serve.

    app.command("diff")(diff_cmd)          arbiter diff RUN_A RUN_B [--json] [--exit-code]
    app.command("backfill")(backfill_cmd)  arbiter backfill --from-run RUN_ID --arbiter replay ...
    app.command("nightly")(nightly_cmd)    arbiter nightly [--config FILE]
    app.command("serve")(serve_cmd)        arbiter serve  (the deployments of deployments/prefect.yaml, locally)
    app.command("report")(report_cmd)      arbiter report RUN_ID [--out-dir DIR]

Each command imports its flow when it runs (the only lazy imports of the house, on purpose): importing the flows
loads Prefect, PyTorch and LanceDB, seconds that ``arbiter db path``, ``config`` and ``--help`` should not pay.
``arbiter serve`` is the one place above the flows: it serves the deployments, which import the flows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

import flows  # noqa: F401  (offline defaults before prefect is imported)
from flows.cli_common import HOME_HELP, HomeOpt, echo_failures, echo_json
from schemas.settings import get_settings

EXAMPLE_NIGHTLY = Path(__file__).resolve().parents[1] / "deployments" / "nightly.example.toml"


def parse_thresholds(items: list[str]) -> dict[str, float]:
    """``["min_relevance=0.8", "max_primary=2"]`` -> dict; integers stay integers."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"--threshold takes NAME=VALUE (e.g. min_relevance=0.8), not {item!r}")
        try:
            number = float(value)
        except ValueError:
            raise typer.BadParameter(f"--threshold {name}: {value!r} is not a number") from None
        out[name.strip()] = int(number) if number.is_integer() and "." not in value else number
    return out


def diff_cmd(run_a: str = typer.Argument(..., help="the earlier run (e.g. the backfill's source)"),
             run_b: str = typer.Argument(..., help="the run compared against it"),
             as_json: bool = typer.Option(False, "--json", help="machine-readable diff"),
             exit_code: bool = typer.Option(False, "--exit-code", help="exit 1 when the runs differ (like git diff)"),
             home: Optional[Path] = HomeOpt) -> None:
    """Verdicts and answers of two runs, per question: roles, found/not_found, primary pages, values, tokens, cost."""
    from tasks.report.diff import diff_runs, format_diff
    from warehouse.db import Warehouse

    with Warehouse(get_settings(home).duckdb_path, read_only=True) as wh:
        try:
            d = diff_runs(wh, run_a, run_b)
        except LookupError as exc:
            raise typer.BadParameter(str(exc)) from None
    if as_json:
        echo_json(d.as_json())
    else:
        typer.echo(format_diff(d))
    if exit_code and d.summary.questions_changed:
        raise typer.Exit(1)


def backfill_cmd(from_run: Optional[str] = typer.Option(None, "--from-run", help="the past run to rerun"),
                 since: Optional[str] = typer.Option(None, help="rerun answer runs started on/after (YYYY-MM-DD, UTC)"),
                 until: Optional[str] = typer.Option(None, help="... and before this date"),
                 arbiter: Optional[str] = typer.Option(None, help="rules | openai | replay | learned "
                                                                  "(default: the source run's)"),
                 generator: Optional[str] = typer.Option(None, help="extractive | openai | replay "
                                                                    "(default: the source's)"),
                 model: Optional[str] = typer.Option(None, help="LLM model for openai providers"),
                 profile: Optional[str] = typer.Option(None, help="dispatcher profile: strict | balanced | lenient"),
                 threshold: list[str] = typer.Option([], "--threshold", help="dispatcher override NAME=VALUE, "
                                                                            "e.g. min_relevance=0.8 (repeatable)"),
                 regime: Optional[str] = typer.Option(None, help="auto | batch | sequential | both "
                                                                 "(default: the source's)"),
                 mode: str = typer.Option("auto", help="auto | rearbitrate | redispatch | redetect | regenerate"),
                 redetect: bool = typer.Option(False, "--redetect", help="run the detectors again too"),
                 run_id: Optional[str] = typer.Option(None, help="resume this backfill run (with --from-run)"),
                 batch_api: bool = typer.Option(False, "--batch-api", help="send the arbiter calls as one OpenAI "
                                                "Batch API batch: half price, answered within 24 h"),
                 batch_poll_s: float = typer.Option(30.0, help="seconds between batch status polls"),
                 home: Optional[Path] = HomeOpt,
                 as_json: bool = typer.Option(False, "--json")) -> None:
    """Rerun arbitration and/or generation of past run(s) as new linked runs, then diff each against its source."""
    from flows.backfill import MODES, BackfillError, backfill_flow

    if mode not in MODES:
        raise typer.BadParameter(f"--mode must be one of {', '.join(MODES)}")
    settings = get_settings(home)
    try:
        out = backfill_flow(from_run=from_run, since=since, until=until, arbiter=arbiter, generator=generator,
                            model=model, profile=profile, thresholds=parse_thresholds(threshold) or None,
                            regime=regime, mode=mode, redetect=redetect, home=str(settings.home), run_id=run_id,
                            batch_api=batch_api, batch_poll_s=batch_poll_s)
    except BackfillError as exc:
        raise typer.BadParameter(str(exc)) from None
    if as_json:
        echo_json(out)
    else:
        if not out["backfills"]:
            typer.echo("no answer runs in that range; see `arbiter runs list`")
        for b in out["backfills"]:
            d = b["diff"]
            typer.echo(f"backfill {b['run_id']} of {b['source_run_id']} ({b['mode']}): {b['statuses']}; "
                       f"{d['questions_changed']} of {d['questions']} question(s) changed "
                       f"(roles {d['role_changes']}, status {sum(d['status_changes'].values())}, "
                       f"primary pages {d['primary_page_changes']}, answers {d['answer_value_changes']}); "
                       f"details: arbiter diff {b['source_run_id']} {b['run_id']}")
    if any(b["statuses"].get("failed") for b in out["backfills"]):
        raise typer.Exit(2)


def nightly_cmd(config: Path = typer.Option(EXAMPLE_NIGHTLY, "--config", help="nightly config (TOML or YAML)"),
                home: Optional[Path] = typer.Option(None, "--home", help=HOME_HELP + "; overrides the config's"),
                run_id: Optional[str] = typer.Option(None, help="resume this nightly run"),
                as_json: bool = typer.Option(False, "--json")) -> None:
    """Ingest the config's corpora, answer its question sets, write the reports (what the cron deployment runs)."""
    from flows.nightly import nightly_flow

    out = nightly_flow(str(config), home=str(home) if home else None, run_id=run_id)
    settings = get_settings(Path(out["home"]))
    if as_json:
        echo_json(out)
    else:
        typer.echo(f"nightly {out['run_id']}: ingest {out['ingest_run_id'] or '-'}; "
                   f"{len(out['answer_runs'])} question set(s) answered, {len(out['failed_sets'])} failed "
                   f"({out['seconds']}s)")
        for r in out["answer_runs"]:
            typer.echo(f"  {r['run_id']}  {r['questions']}  {r['statuses']}")
        for f in out["failed_sets"]:
            typer.echo(f"  FAILED {f['questions']}: {f['error']}", err=True)
        for path in out["reports"]:
            typer.echo(f"  report: {path}")
    for r in out["answer_runs"]:
        echo_failures(r, settings)
    if out["failed_sets"] or any(r["statuses"].get("failed") or r.get("failures") for r in out["answer_runs"]):
        raise typer.Exit(2)


def report_cmd(run_id: str = typer.Argument(..., help="the run to report (see `arbiter runs list`)"),
               out_dir: Optional[Path] = typer.Option(None, help="folder for the HTML (default: <home>/reports)"),
               home: Optional[Path] = HomeOpt) -> None:
    """Write the run's self-contained HTML report (regimes, tokens, routing, failures, evaluation if any)."""
    from flows.report import report_flow

    settings = get_settings(home)
    try:
        out = report_flow(run_id, home=str(settings.home), out_dir=str(out_dir) if out_dir else None)
    except LookupError as exc:
        raise typer.BadParameter(str(exc)) from None
    typer.echo(out["path"])


def serve_cmd(config: Optional[Path] = typer.Option(None, "--config", help="nightly config for the nightly "
                                                                          "deployment (default: prefect.yaml's)"),
              home: Optional[Path] = HomeOpt,
              no_schedule: bool = typer.Option(False, "--no-schedule", help="serve without the cron schedule")) -> None:
    """Serve the deployments of deployments/prefect.yaml from this process (Ctrl-C to stop); trigger them with
    `prefect deployment run 'backfill/backfill' -p from_run=RUN_ID` or from the UI."""
    from prefect import serve

    from deployments import runner_deployments

    params: dict[str, dict] = {"nightly": {}}
    if config:
        params["nightly"]["config"] = str(config.resolve())
    if home:
        for name in ("nightly", "backfill", "report"):
            params.setdefault(name, {})["home"] = str(home.resolve())
    deployments = runner_deployments(parameters=params, schedules=not no_schedule)
    typer.echo("serving " + ", ".join(f"{d.flow_name}/{d.name}" for d in deployments))
    serve(*deployments)
