"""The report section of an evaluation run: methods side by side, and a per-label breakdown drawn as inline SVG.

Built from ``eval_results`` alone (through :func:`tasks.evaluate.score.evaluation_summary`), so it matches the run's
``--json`` summary. Self-contained HTML (no script, no network); classes follow the run report's CSS.
"""

from __future__ import annotations

from html import escape
from typing import Any

from tasks.evaluate.score import ANSWER_METHODS, PAGE_METHODS, evaluation_summary
from warehouse.db import Warehouse
from warehouse.evals import load_eval_results

COLORS = {"arbiter": "#e45756", "hybrid": "#eeca3b", "rrf": "#72b7b2", "keywords": "#b279a2", "embeddings": "#9d755d",
          "toc": "#bab0ac", "batch": "#4c78a8", "sequential": "#f58518", "auto": "#54a24b"}


def _esc(value: Any) -> str:
    return escape("" if value is None else str(value))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _num(value: Any, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _table(head: list[str], rows: list[list[str]]) -> str:
    """Cells are pre-formatted text; numbers (and dashes) right-aligned."""
    def cell(text: str) -> str:
        numeric = text == "–" or text.replace(",", "").replace(".", "").replace("%", "").lstrip("-").isdigit()
        return f'<td class="num">{_esc(text)}</td>' if numeric else f"<td>{_esc(text)}</td>"

    thead = "".join(f"<th>{_esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(cell(c) for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{thead}</tr></thead><tbody>{body}</tbody></table>"


def grouped_bars(categories: list[str], series: dict[str, list[float | None]], width: int = 760,
                 height: int = 230) -> str:
    """Grouped vertical bars of shares (0–1): one group per category, one bar per series, with a legend."""
    if not categories or not any(v is not None for vs in series.values() for v in vs):
        return '<p class="note">no data</p>'
    left, bottom, top = 44, 64, 10
    plot_h = height - bottom - top
    group_w = (width - left - 10) / len(categories)
    bar_w = max(2.0, min(22.0, group_w * 0.8 / max(1, len(series))))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + (1 - t) * plot_h
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{t:.0%}</text>')
    for i, cat in enumerate(categories):
        x0 = left + i * group_w + (group_w - bar_w * len(series)) / 2
        for j, (name, values) in enumerate(series.items()):
            v = values[i]
            if v is None:
                continue
            h = max(0.5, v * plot_h)
            parts.append(f'<rect x="{x0 + j * bar_w:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 1:.1f}" '
                         f'height="{h:.1f}" fill="{COLORS.get(name, "#888")}"><title>{_esc(cat)} · {_esc(name)}: '
                         f"{_pct(v)}</title></rect>")
        cx, cy = left + (i + 0.5) * group_w, top + plot_h + 12
        parts.append(f'<text x="{cx:.1f}" y="{cy:.1f}" text-anchor="end" transform="rotate(-30 {cx:.1f} {cy:.1f})">'
                     f"{_esc(cat[:24])}</text>")
    parts.append("</svg>")
    legend = "".join(f'<span><i style="background:{COLORS.get(n, "#888")}"></i>{_esc(n)}</span>' for n in series)
    return f'<div class="legend">{legend}</div>' + "".join(parts)


def side_by_side(s: dict[str, Any]) -> str:
    """Methods x metrics: page metrics for the arbiter and its baselines, accuracy and tokens per regime."""
    doc = s.get("doc_hit_rate") or {}
    head = ["method", "page hit@1", "page hit@5", "MRR", "not-found precision", "not-found recall",
            "answer accuracy", "answer precision", "answer coverage", "input tokens", "output tokens"] + (
        ["doc hit@1", "doc hit@5"] if doc else [])
    rows = []
    for m in (*PAGE_METHODS, *ANSWER_METHODS):
        page = m in PAGE_METHODS
        nf = s["not_found"] if m == "arbiter" else {}
        row = [m, _pct(s["page_hit_at_1"][m]) if page else "", _pct(s["page_hit_at_5"][m]) if page else "",
               _num(s["mrr"][m], 3) if page else "", _pct(nf.get("precision")) if nf else "",
               _pct(nf.get("recall")) if nf else "",
               "" if page else _pct(s["answer_accuracy"][m]), "" if page else _pct(s["answer_precision"][m]),
               "" if page else _pct(s["answer_coverage"][m]), "" if page else _num(s["input_tokens"][m]),
               "" if page else _num(s["output_tokens"][m])]
        if doc:
            row += [_pct(doc.get(m)), _pct(s["doc_hit_at_5"].get(m))] if page else ["", ""]
        rows.append(row)
    return _table(head, rows)


def _counts(s: dict[str, Any]) -> str:
    nf = s["not_found"]
    return (f'<p class="note">{s["n_questions"]} questions: {s["n_page_gold"]} with gold pages (page metrics), '
            f'{s["n_unanswerable"]} unanswerable (not-found metrics: {nf["correct"]} of {nf["predicted"]} '
            f'predicted not found were), {s["n_no_page_gold"]} without page gold (skipped for page metrics). '
            "Baselines rank the same candidate pool the arbiter judged; pages are deduplicated in rank order "
            "before cutting at k.</p>")


def label_block(key: str, cats: dict[str, dict[str, Any]]) -> str:
    names = list(cats)
    page = any(c["n_page_gold"] for c in cats.values())
    if page:
        chart = grouped_bars(names, {m: [cats[c]["page_hit_at_5"][m] for c in names] for m in PAGE_METHODS})
        what = "page hit@5 by method"
    elif any(c.get("doc_hit_rate") for c in cats.values()):
        chart = grouped_bars(names, {m: [(cats[c].get("doc_hit_rate") or {}).get(m) for c in names]
                                     for m in PAGE_METHODS})
        what = "document hit rate by method"
    else:
        chart = grouped_bars(names, {m: [cats[c]["answer_accuracy"][m] for c in names] for m in ANSWER_METHODS})
        what = "answer accuracy by regime"
    rows = [[c, str(v["n_questions"]), str(v["n_page_gold"]), _pct(v["page_hit_at_5"]["arbiter"]),
             _pct(v["page_hit_at_5"]["rrf"]), _pct(v["not_found"]["recall"]),
             *(_pct(v["answer_accuracy"][m]) for m in ANSWER_METHODS),
             *(_pct(v[k][m]) for m in ("batch", "sequential") for k in ("answer_precision", "answer_coverage"))]
            for c, v in cats.items()]
    head = ["category", "questions", "page gold", "arbiter hit@5", "rrf hit@5", "not-found recall",
            *(f"{m} accuracy" for m in ANSWER_METHODS),
            *(f"{m} {k}" for m in ("batch", "sequential") for k in ("precision", "coverage"))]
    return (f"<h3>By {_esc(key)}</h3><p class=\"note\">{_esc(what)}; a question with several values counts in "
            f"each.</p>" + chart + _table(head, rows))


def figure_block(s: dict[str, Any]) -> str:
    parts = [("figure/chart only", s["figure_only"]), ("all other questions", s["excluding_figure_only"])]
    rows = [[name, str(v["n_questions"]), _pct(v["page_hit_at_1"]["arbiter"]), _pct(v["page_hit_at_5"]["arbiter"]),
             _pct(v["page_hit_at_5"]["rrf"]), *(_pct(v["answer_accuracy"][m]) for m in ANSWER_METHODS)]
            for name, v in parts]
    head = ["questions", "n", "arbiter hit@1", "arbiter hit@5", "rrf hit@5",
            *(f"{m} accuracy" for m in ANSWER_METHODS)]
    return ("<h3>Figure- and chart-only evidence, apart</h3><p class=\"note\">Questions whose evidence is only a "
            "figure or chart: a text-only pipeline is not expected to answer them. They are in the figures above "
            "and reported apart here.</p>" + _table(head, rows))


def eval_section_html(wh: Warehouse, run_id: str) -> str:
    """The evaluation section of ``run_id``'s report ('' when the run has no ``eval_results``)."""
    rows = load_eval_results(wh, run_id)
    if not rows:
        return ""
    s = evaluation_summary(rows)
    parts = [f"<h3>Methods side by side ({_esc(rows[0]['question_set'])})</h3>", _counts(s), side_by_side(s),
             '<p class="note">Answer precision = correct ÷ answered (how often a value shown is right); answer '
             "coverage = answered ÷ answerable. A reader that abstains is less often right overall but more often "
             "right when it answers; the two together say which.</p>"]
    if s.get("figure_only"):
        parts.append(figure_block(s))
    for key, cats in s["by_label"].items():
        parts.append(label_block(key, cats))
    return '<div class="eval">' + "\n".join(parts) + "</div>"
