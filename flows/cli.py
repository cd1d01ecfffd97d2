"""``arbiter`` command line: operators' entry point to the flows and the warehouse.

Each command imports its flow when it runs (the only lazy imports of the house, on purpose): importing the flows
loads Prefect, PyTorch and LanceDB, seconds that ``arbiter db path``, ``config`` and ``--help`` should not pay.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

import flows  # noqa: F401  (offline defaults before prefect is imported)
from flows import console, stop
from flows.cli_common import HomeOpt, echo_failures, echo_json
from schemas.settings import get_settings
from warehouse.errors import RunStopped


class _App(typer.Typer):
    """The command line; a run stopped by SIGTERM ends with a line saying how to resume it and exit 143."""

    def __call__(self, *args, **kwargs):
        try:
            return super().__call__(*args, **kwargs)
        except RunStopped as exc:  # the run is 'interrupted' with its resume command; Prefect's server stops at exit
            resume = getattr(exc, "resume", None)
            typer.echo(f"{exc}: run {getattr(exc, 'run_id', '?')} is 'interrupted'; what finished is kept"
                       + (f"; resume with: {resume}" if resume else ""), err=True)
            sys.exit(stop.EXIT_CODE)


app = _App(help="Auditable document RAG: detectors propose, the arbiter decides, the warehouse remembers.",
           no_args_is_help=True, pretty_exceptions_enable=False)
runs_app = typer.Typer(help="Flow runs recorded in the warehouse.", no_args_is_help=True)
db_app = typer.Typer(help="The DuckDB warehouse.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
app.add_typer(db_app, name="db")


@app.callback()
def main_options(verbose: bool = typer.Option(False, "--verbose", "-v", help="also print Prefect's lines (every "
                                                                           "flow and task run's state)"),
                 quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bars or lines")) -> None:
    """Runs before every command, so before Prefect is imported: its console shows warnings only by default."""
    console.configure(verbose=verbose, quiet=quiet)
    stop.install()


@app.command()
def ingest(paths: list[Path] = typer.Argument(..., help="PDF files or folders (searched recursively)"),
           home: Optional[Path] = HomeOpt, as_json: bool = typer.Option(False, "--json")) -> None:
    """Parse PDFs into lines/toc, embed line windows; unchanged files are skipped. Exit 2 if any file failed."""
    from prefect.task_runners import ThreadPoolTaskRunner

    from flows.ingest import ingest_flow

    settings = get_settings(home)
    runner = ThreadPoolTaskRunner(max_workers=settings.ingest.parse_workers)
    summary = ingest_flow.with_options(task_runner=runner)([str(p) for p in paths], home=str(settings.home))
    if as_json:
        echo_json(summary)
    else:
        typer.echo(f"run {summary['run_id']}: {summary['ingested']} ingested, {summary['skipped_unchanged']} "
                   f"unchanged, {summary['failed']} failed, {summary['missing']} missing "
                   f"({summary['seconds']}s)")
        for path, err in summary["errors"].items():
            typer.echo(f"  FAILED {path}: {err}", err=True)
    if summary["failed"]:
        raise typer.Exit(2)


@app.command()
def answer(questions: Path = typer.Argument(..., help="question set (JSONL: qid, question, doc, answer, gold_pages_0based)"),
           data_root: Optional[Path] = typer.Option(None, help="folder the questions' `doc` paths are relative to "
                                                          "(default: the question file's folder)"),
           regime: str = typer.Option("auto", help="auto | batch | sequential | both"),
           arbiter: Optional[str] = typer.Option(None, help="rules | openai | replay | learned (default: settings)"),
           profile: Optional[str] = typer.Option(None, help="dispatcher profile: strict | balanced | lenient"),
           run_id: Optional[str] = typer.Option(None, help="resume this run (skips finished questions)"),
           stop_after: Optional[str] = typer.Option(None, help="candidates | retrieval: stop early"),
           home: Optional[Path] = HomeOpt, as_json: bool = typer.Option(False, "--json")) -> None:
    """Answer a question set: ingest its documents, detect, arbitrate, generate. Exit 2 if any question (or a line
    of the question file) failed; the first failures are printed."""
    from flows.answer import answer_flow
    from tasks.generate.run import REGIME_CHOICES
    from tasks.providers import ARBITER_PROVIDERS

    if regime not in REGIME_CHOICES:
        raise typer.BadParameter(f"regime must be {', '.join(REGIME_CHOICES[:-1])} or {REGIME_CHOICES[-1]}")
    if arbiter is not None and arbiter not in ARBITER_PROVIDERS:
        raise typer.BadParameter(f"arbiter must be one of {', '.join(ARBITER_PROVIDERS)}")
    settings = get_settings(home)
    summary = answer_flow(str(questions), data_root=str(data_root) if data_root else None,
                          home=str(settings.home), regime=regime, arbiter=arbiter, profile=profile,
                          run_id=run_id, stop_after=stop_after)
    if as_json:
        echo_json(summary)
    else:
        typer.echo(f"run {summary['run_id']}: {summary['questions']} questions, {summary['statuses']} "
                   f"({summary['seconds']}s)")
    echo_failures(summary, settings)
    if summary["statuses"].get("failed") or summary.get("failures"):
        raise typer.Exit(2)


app.command("ask", help="Alias of `answer`.")(answer)


@runs_app.command("list")
def runs_list(home: Optional[Path] = HomeOpt, limit: int = 50, as_json: bool = typer.Option(False, "--json")) -> None:
    """Most recent runs first."""
    from warehouse.db import Warehouse
    from warehouse.runs import list_runs

    settings = get_settings(home)
    with Warehouse(settings.duckdb_path, read_only=True) as wh:
        rows = list_runs(wh, limit)
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        typer.echo(f"{r['run_id']}  {r['flow']:<10} {r['status']:<11} {r['started_at']:%Y-%m-%d %H:%M:%S}"
                   + (f"  parent={r['parent_run_id']}" if r["parent_run_id"] else ""))


@db_app.command("path")
def db_path(home: Optional[Path] = HomeOpt) -> None:
    """Print the DuckDB file path (open it with `duckdb $(arbiter db path)`)."""
    typer.echo(str(get_settings(home).duckdb_path.resolve()))


@app.command()
def demo(home: Optional[Path] = HomeOpt) -> None:
    """Generate the bundled sample corpus and run the pipeline on it, offline."""
    from flows.demo import run_demo

    code = run_demo(get_settings(home), echo=typer.echo)
    raise typer.Exit(code)


@app.command()
def audit(run_id: str = typer.Argument(...), question_id: str = typer.Argument(...), home: Optional[Path] = HomeOpt,
          as_json: bool = typer.Option(False, "--json")) -> None:
    """One question's decision trail: parse, detector plan, brief, verdicts with reasons, rule, LLM calls, answers."""
    from tasks.arbiter.audit import audit_question, render_audit
    from warehouse.db import Warehouse

    with Warehouse(get_settings(home).duckdb_path, read_only=True) as wh:
        try:
            data = audit_question(wh, run_id, question_id)
        except LookupError as exc:
            raise typer.BadParameter(str(exc)) from None
    echo_json(data) if as_json else typer.echo(render_audit(data))


@app.command()
def redispatch(run_id: str = typer.Argument(..., help="past run whose stored verdicts are re-dispatched"),
               profile: Optional[str] = typer.Option(None, help="strict | balanced | lenient"),
               min_relevance: Optional[float] = typer.Option(None, help="override the profile's min relevance"),
               max_primary: Optional[int] = typer.Option(None), max_supporting: Optional[int] = typer.Option(None),
               home: Optional[Path] = HomeOpt) -> None:
    """Re-dispatch a run's verdicts with other thresholds: a new linked run, no new LLM call."""
    from flows.backfill import redispatch_run
    from warehouse.db import Warehouse

    overrides = {k: v for k, v in {"min_relevance": min_relevance, "max_primary": max_primary,
                                   "max_supporting": max_supporting}.items() if v is not None}
    settings = get_settings(home)
    with Warehouse(settings.duckdb_path) as wh:
        new_run = redispatch_run(wh, run_id, profile=profile, overrides=overrides or None, settings=settings)
    typer.echo(new_run)


@app.command("config")
def config_cmd() -> None:
    """Every setting: environment variable, default, meaning (also readable from ./arbiter.toml)."""
    from schemas.settings import settings_reference

    for env, default, desc in settings_reference():
        typer.echo(f"{env:<44} {default:<22} {desc}")


def _register_extras() -> None:
    """Commands whose code lives beside their flows (evaluation, operations, learned arbiter)."""
    from flows import cli_corpus, cli_eval, cli_ops

    app.command("eval", help=cli_eval.eval_cmd.__doc__)(cli_eval.eval_cmd)
    app.command("corpus")(cli_corpus.corpus_cmd)
    app.command("report")(cli_ops.report_cmd)
    app.command("diff")(cli_ops.diff_cmd)
    app.command("backfill")(cli_ops.backfill_cmd)
    app.command("nightly")(cli_ops.nightly_cmd)
    app.command("serve")(cli_ops.serve_cmd)
    from flows.cli_llm import llm_app  # lazy like the others: `arbiter llm serve`, the local llama.cpp server

    app.add_typer(llm_app, name="llm")
    try:
        from flows import cli_learned
    except ImportError:  # pragma: no cover - the learned arbiter is optional
        return
    app.command("train-arbiter")(cli_learned.train_arbiter_cmd)


_register_extras()


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
