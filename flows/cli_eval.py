"""``arbiter eval``: the evaluation harness from the command line (registered by ``flows.cli``).

With ``--json`` stdout carries the summary and nothing else (logs go to stderr). Exit 0 whatever the metrics;
2 when the pipeline failed some questions; 1 when the run itself failed.

Each command imports its flow when it runs (the only lazy imports of the house, on purpose): importing the flows
loads Prefect, PyTorch and LanceDB, seconds that ``arbiter db path``, ``config`` and ``--help`` should not pay.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Optional

import typer

import flows  # noqa: F401  (offline defaults before prefect is imported)
from flows.cli_common import HomeOpt, echo_failures, echo_json
from tasks.evaluate.score import ANSWER_METHODS, PAGE_METHODS


def _pct(value: float | None) -> str:
    return "   –  " if value is None else f"{100 * value:5.1f}%"


def format_summary(s: dict[str, Any]) -> str:
    """A plain-text digest of an evaluation summary (methods x metrics)."""
    lines = [f"evaluate {s['run_id']} ({s.get('question_set')}): {s['n_questions']} questions, "
             f"{s['n_page_gold']} with page gold, {s['n_unanswerable']} unanswerable, "
             f"{s.get('n_no_page_gold', 0)} without page gold; {s.get('n_failed', 0)} failed; {s['seconds']}s",
             f"{'method':<12}{'hit@1':>8}{'hit@5':>8}{'MRR':>8}"]
    for m in PAGE_METHODS:
        mrr = s["mrr"][m]
        lines.append(f"{m:<12}{_pct(s['page_hit_at_1'][m]):>8}{_pct(s['page_hit_at_5'][m]):>8}"
                     f"{'   –' if mrr is None else f'{mrr:.3f}':>8}")
    lines.append(pool_line(s))
    nf = s["not_found"]
    lines.append(f"not found: precision {_pct(nf['precision'])}, recall {_pct(nf['recall'])} "
                 f"({nf['correct']}/{nf['predicted']} predicted, {nf['unanswerable']} unanswerable)")
    lines.append(f"{'regime':<12}{'accuracy':>10}{'precision':>11}{'coverage':>10}{'answerable':>12}"
                 f"{'1st pg gold':>12}{'unanswer.':>11}{'input tok':>12}{'output tok':>12}")
    for m in ANSWER_METHODS:
        tokens_in, tokens_out = s["input_tokens"][m], s["output_tokens"][m]
        lines.append(f"{m:<12}{_pct(s['answer_accuracy'][m]):>10}{_pct(s['answer_precision'][m]):>11}"
                     f"{_pct(s['answer_coverage'][m]):>10}{_pct(s['answer_accuracy_answerable'][m]):>12}"
                     f"{_pct(s['answer_accuracy_first_page_gold'][m]):>12}"
                     f"{_pct(s['answer_accuracy_unanswerable'][m]):>11}{'–' if tokens_in is None else tokens_in:>12}"
                     f"{'–' if tokens_out is None else tokens_out:>12}")
    lines.append("precision = correct / answered; coverage = answered / answerable; answerable, 1st pg gold "
                 "(arbiter's first page is gold) and unanswer. are accuracies on those questions")
    for m, rules in (s.get("answer_precision_by_rule") or {}).items():
        if m != "auto" and rules:
            lines.append(f"precision by rule ({m}): " + ", ".join(
                f"{rule} {v['right']}/{v['answered']}" for rule, v in rules.items() if v["answered"])
                + f"; abstained: {sum(v['questions'] - v['answered'] for v in rules.values())}")
    labels = s.get("by_label", {}).get("answer_format")
    if labels:
        lines.append("by answer_format: accuracy | precision | coverage (batch, sequential)")
        for cat, v in labels.items():
            lines.append(f"  {cat:<10}" + "   ".join(
                f"{m[:3]} {_pct(v['answer_accuracy'][m]).strip()} | {_pct(v['answer_precision'][m]).strip()} | "
                f"{_pct(v['answer_coverage'][m]).strip()}" for m in ("batch", "sequential")) + f"  (n={v['n_questions']})")
    if s.get("doc_hit_rate"):
        lines.append("document hit rate (top passage from a gold document): " + ", ".join(
            f"{m} {_pct(v).strip()}" for m, v in s["doc_hit_rate"].items()))
    if s.get("doc_hit_at_5"):
        lines.append("a gold document among the first five: " + ", ".join(
            f"{m} {_pct(v).strip()}" for m, v in s["doc_hit_at_5"].items()))
    if s.get("figure_only"):
        f = s["figure_only"]
        lines.append(f"figure/chart-only questions ({f['n_questions']}): arbiter hit@5 "
                     f"{_pct(f['page_hit_at_5']['arbiter']).strip()}, auto accuracy "
                     f"{_pct(f['answer_accuracy']['auto']).strip()}")
    return "\n".join(lines)


def pool_line(s: dict[str, Any]) -> str:
    """Pool recall@30: how often a gold page (corpus-wide: a gold document) is among the candidates the arbiter
    judges, the ceiling of any arbiter; a set with document gold only has the document figure alone."""
    page = s.get("pool_recall_at_30")
    text = (f"pool recall@30: {_pct(page).strip()} of {s.get('n_pool_recall', 0)} questions with page gold have a "
            f"gold page among the first 30 candidates" if page is not None else
            "pool recall@30: no question has page gold")
    if s.get("doc_pool_recall_at_30") is not None:
        text += (f"; {_pct(s['doc_pool_recall_at_30']).strip()} of {s['n_doc_pool_recall']} with document gold "
                 f"have a gold document's candidate")
    elif page is None:
        text += " (document gold only: its document-level pool recall is measured by a --corpus-wide run)"
    return text


def eval_cmd(
    questions: Path = typer.Argument(..., help="gold question set (JSONL: qid, question, doc, answer, "
                                               "gold_pages_0based, labels)"),
    data_root: Optional[Path] = typer.Option(None, "--data-root", help="folder the questions' `doc` paths are "
                                                                      "relative to (default: the file's folder)"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON on stdout (logs on stderr)"),
    regime: str = typer.Option("both", help="both | auto | batch | sequential (both measures every regime)"),
    arbiter: Optional[str] = typer.Option(None, help="rules | openai | replay | learned (default: settings)"),
    profile: Optional[str] = typer.Option(None, help="dispatcher profile: strict | balanced | lenient"),
    home: Optional[Path] = HomeOpt,
    limit: Optional[int] = typer.Option(None, min=1, help="evaluate only the first N questions"),
    corpus_wide: bool = typer.Option(False, "--corpus-wide", help="search the whole corpus for every question; "
                                                                  "`doc` stays the gold (document hit rate)"),
    run_id: Optional[str] = typer.Option(None, help="resume this evaluate run (skips finished questions)"),
) -> None:
    """Evaluate on a gold set: page hit@1/@5 and MRR (arbiter vs baselines), not-found precision/recall, answer
    accuracy and tokens per regime, by label. Exit 2 if the pipeline failed any question (or a line of the file)."""
    from flows.evaluate import REGIMES, evaluate_flow
    from schemas.settings import get_settings
    from tasks.providers import ARBITER_PROVIDERS

    if regime not in REGIMES:
        raise typer.BadParameter(f"regime must be one of {', '.join(REGIMES)}")
    if arbiter is not None and arbiter not in ARBITER_PROVIDERS:
        raise typer.BadParameter(f"arbiter must be one of {', '.join(ARBITER_PROVIDERS)}")
    t0 = time.perf_counter()
    settings = get_settings(home)
    try:
        summary = evaluate_flow(str(questions), data_root=str(data_root) if data_root else None,
                                home=str(settings.home), regime=regime, arbiter=arbiter, profile=profile,
                                limit=limit, corpus_wide=corpus_wide, run_id=run_id)
    except Exception as exc:
        typer.echo(f"evaluate failed: {type(exc).__name__}: {exc} (the run is recorded as failed; see "
                   "`arbiter runs list`; rerun with --run-id to resume)", err=True)
        raise typer.Exit(1) from exc
    summary["wall_seconds"] = round(time.perf_counter() - t0, 2)  # with Prefect's start-up
    if as_json:
        echo_json(summary)
    else:
        typer.echo(format_summary(summary))
    echo_failures(summary, settings)
    if summary.get("n_failed") or summary.get("failures"):
        raise typer.Exit(2)
