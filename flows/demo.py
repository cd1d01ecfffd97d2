"""``arbiter demo``: the whole pipeline, offline, on the sample corpus the project generates itself:
ingest -> questions -> detect -> arbitrate -> generate in both regimes -> HTML report, then a short summary."""

from __future__ import annotations

from collections.abc import Callable

from flows import console
from flows.answer import answer_flow
from flows.report import report_flow
from schemas.settings import Settings
from tasks.corpus.sample.generate import generate_sample_corpus
from tasks.generate.normalise import is_not_answerable
from warehouse.answers import graded_answers, run_answer_counts
from warehouse.db import Warehouse


def demo_summary(wh: Warehouse, run_id: str) -> dict:
    row = run_answer_counts(wh, run_id)
    row["answers"] = answer_figures(graded_answers(wh, run_id))
    return row


def answer_figures(rows: list[dict]) -> dict[str, dict]:
    """Per regime, as a user feels it: accuracy (correct / questions with a reference), precision (correct /
    answered) and coverage (answered / answerable)."""
    out = {}
    for regime in ("batch", "sequential"):
        sel = [r for r in rows if r["regime"] == regime and r["correct"] is not None]
        answered = [r for r in sel if r["answer_found"] and r["value"] is not None]
        answerable = [r for r in sel if not is_not_answerable(r["reference"])]
        out[regime] = {
            "questions": len(sel), "correct": sum(bool(r["correct"]) for r in sel), "answered": len(answered),
            "answered_correct": sum(bool(r["correct"]) for r in answered),
            "answerable": len(answerable), "answerable_answered": sum(1 for r in answerable if r in answered)}
    return out


def _share(num: int, den: int) -> str:
    return f"{num / den:.0%} ({num}/{den})" if den else "–"


def run_demo(settings: Settings, echo: Callable[[str], None] = print) -> int:
    sample = generate_sample_corpus(settings.home / "sample")
    echo(f"sample corpus: {len(sample.pdfs)} PDFs and {sample.questions_path.name} in {sample.root}")
    summary = answer_flow(str(sample.questions_path), data_root=str(sample.root), home=str(settings.home),
                          regime="both")
    run_id = summary["run_id"]
    report = report_flow(run_id, home=str(settings.home))
    with Warehouse(settings.duckdb_path, read_only=True) as wh:
        s = demo_summary(wh, run_id)
    batch, seq = s["batch_input_tokens"], s["sequential_input_tokens"]
    echo("")
    echo(f"run {run_id}: {s['questions']} questions, {s['questions'] - s['not_found']} answered, "
         f"{s['not_found']} not found, {summary['statuses'].get('failed', 0)} failed")
    echo(f"routing (auto): {s['routed_sequential']} sequential, {s['routed_batch']} batch; "
         f"{s['contradictions']} question(s) with contradictions flagged")
    for regime, f in s["answers"].items():
        if f["questions"]:
            echo(f"{regime + ':':<11} accuracy {_share(f['correct'], f['questions'])}, precision "
                 f"{_share(f['answered_correct'], f['answered'])} (right when it answers), coverage "
                 f"{_share(f['answerable_answered'], f['answerable'])} (answerable questions answered)")
    if batch:
        echo(f"input tokens: batch {batch}, sequential {seq} ({seq / batch:.0%} of batch), auto {s['auto_input_tokens']}"
             f" ({1 - s['auto_input_tokens'] / batch:.0%} fewer than all-batch)")
    echo(f"report:    {report['path']}")
    echo(f"warehouse: {settings.duckdb_path.resolve()}   (duckdb {settings.duckdb_path} -c 'FROM regime_summary')")
    echo(f"audit one: arbiter audit {run_id} s01")
    for line in console.failure_lines(run_id, summary["failure_examples"], summary["failures"],
                                      str(settings.duckdb_path)):
        echo(line)
    return 0 if not summary["statuses"].get("failed") and not summary["failures"] else 2
