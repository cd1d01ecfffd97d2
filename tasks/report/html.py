"""The run report: one self-contained HTML file (inline CSS and SVG drawn here; no script, CDN or network).

Sections: regime totals, input tokens per question by regime, savings by answer shape, exit distribution,
routing decisions, not-found questions, failures, top contradictions. The evaluation harness adds its own
sections (e.g. a side-by-side table) through ``extra_sections``: HTML fragments, best built with :func:`section`,
inserted before the footer under "Evaluation".
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from warehouse import answers as store
from warehouse.db import Warehouse

MAX_BARS = 60  # questions beyond which the per-question chart becomes a batch-vs-sequential scatter
COLORS = {"batch": "#4c78a8", "sequential": "#f58518", "auto": "#54a24b", "other": "#9d755d"}
CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1180px;
color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#666;font-size:12px}.note{color:#666;font-size:12px;margin:4px 0}
table{border-collapse:collapse;margin:6px 0;font-size:12.5px;width:100%}
th,td{border:1px solid #e2e2e2;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f5f5f5;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:10px 0}.card{border:1px solid #ddd;border-radius:6px;
padding:8px 12px;min-width:150px}.card b{display:block;font-size:20px}.card span{color:#666;font-size:12px}
svg{display:block;margin:6px 0}svg text{font:11px system-ui,sans-serif;fill:#333}.legend span{display:inline-block;
margin-right:14px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
.scroll{max-height:420px;overflow:auto}table.narrow{width:auto;min-width:420px}
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def fmt(value: Any, digits: int = 0) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:,.{digits}f}"
    return str(value)


def _short(text: Any, limit: int = 300) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def section(title: str, body: str, anchor: str) -> str:
    """One report section; the hook for other bricks' sections (the evaluation harness's side-by-side table)."""
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>\n{body}\n</section>'


def table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]], digits: dict[str, int] | None = None,
          empty: str = "none", narrow: bool = False) -> str:
    """``columns``: (key, header) pairs; numbers right-aligned, ``digits`` per key (default 0)."""
    if not rows:
        return f'<p class="note">{esc(empty)}</p>'
    digits = digits or {}
    head = "".join(f"<th>{esc(h)}</th>" for _, h in columns)
    body = []
    for r in rows:
        cells = []
        for key, _ in columns:
            v = r.get(key)
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            cells.append(f'<td class="num">{fmt(v, digits.get(key, 0))}</td>' if num else f"<td>{esc(fmt(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cls = ' class="narrow"' if narrow else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def legend(names: Sequence[str]) -> str:
    return '<div class="legend">' + "".join(
        f'<span><i style="background:{COLORS.get(n, COLORS["other"])}"></i>{esc(n)}</span>' for n in names) + "</div>"


def nice_ticks(lo: float, hi: float, target: int = 4) -> list[float]:
    """Round tick values covering [lo, hi] (lo <= 0 <= hi), about ``target`` intervals."""
    span = hi - lo
    if span <= 0:
        return [0.0]
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step + 1e-9)
    return [round(i * step, 10) for i in range(first, math.ceil(hi / step - 1e-9) + 1)]


def bar_chart(categories: Sequence[str], series: dict[str, Sequence[float]], unit: str = "", width: int = 1100,
              height: int = 240, labels: bool = True, percent: bool = False) -> str:
    """Grouped vertical bars: one group per category, one bar per series; values may be negative (savings)."""
    n, k = len(categories), max(1, len(series))
    values = [v for vs in series.values() for v in vs if v is not None]
    if not n or not values:
        return '<p class="note">no data</p>'
    left, bottom, top_pad = 64, 70 if labels else 16, 12
    ticks = nice_ticks(min(0.0, *values), max(0.0, *values))
    lo, hi = min(ticks), max(ticks)
    span = (hi - lo) or 1.0
    plot_h = height - bottom - top_pad
    group_w = (width - left - 10) / n
    bar_w = max(1.0, min(28.0, group_w * 0.8 / k))

    def y(v: float) -> float:
        return top_pad + (hi - v) / span * plot_h

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    for t in ticks:
        label = f"{t:.0%}" if percent else f"{t:,.{0 if float(t).is_integer() else 1}f}{unit}"
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#eee"/>'
                     f'<text x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{esc(label)}</text>')
    parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#999"/>')
    for i, cat in enumerate(categories):
        x0 = left + i * group_w + (group_w - bar_w * k) / 2
        for j, (name, vs) in enumerate(series.items()):
            v = vs[i]
            if v is None:
                continue
            y1, y2 = sorted((y(v), y(0)))
            shown = f"{v:.1%}" if percent else f"{v:,.0f}{unit}"
            parts.append(f'<rect x="{x0 + j * bar_w:.1f}" y="{y1:.1f}" width="{bar_w - 0.5:.1f}" '
                         f'height="{max(0.5, y2 - y1):.1f}" fill="{COLORS.get(name, COLORS["other"])}">'
                         f"<title>{esc(cat)} {esc(name)}: {esc(shown)}</title></rect>")
        if labels:
            cx, cy = left + (i + 0.5) * group_w, height - bottom + 12
            parts.append(f'<text x="{cx:.1f}" y="{cy}" text-anchor="end" transform="rotate(-40 {cx:.1f} {cy})">'
                         f"{esc(cat[:18])}</text>")
    parts.append("</svg>")
    return legend(list(series)) + "".join(parts)


def _cards(totals: list[dict[str, Any]], summary_all: dict[str, Any] | None) -> str:
    cards = []
    for t in totals:
        acc = "" if t["accuracy"] is None else f", accuracy {t['accuracy']:.0%} of {t['judged']}"
        cards.append(f'<div class="card"><span>{esc(t["regime"])} input tokens</span><b>{fmt(t["input_tokens"])}</b>'
                     f'<span>{t["answers"]} answers ({t["routed"]} routed){esc(acc)}</span></div>')
    if summary_all and summary_all.get("seq_batch_input_ratio") is not None:
        cards.append(f'<div class="card"><span>sequential ÷ batch input</span>'
                     f'<b>{summary_all["seq_batch_input_ratio"]:.2f}</b><span>auto ÷ batch '
                     f'{fmt(summary_all["auto_batch_input_ratio"], 2)} over {summary_all["questions"]} paired'
                     "</span></div>")
    return '<div class="cards">' + "".join(cards) + "</div>"


def _tokens_section(rows: list[dict[str, Any]]) -> str:
    by_q: dict[str, dict[str, float]] = {}
    for r in rows:
        by_q.setdefault(r["question_id"], {})[r["regime"]] = r["input_tokens"]
    qids = sorted(by_q, key=lambda q: -max(by_q[q].values()))
    regimes = [g for g in ("batch", "sequential") if any(g in v for v in by_q.values())]
    series = {g: [by_q[q].get(g) for q in qids] for g in regimes}
    pairs = [(q, v["batch"], v["sequential"]) for q, v in by_q.items() if "batch" in v and "sequential" in v]
    if len(qids) > MAX_BARS and pairs:
        below = sum(s < b for _, b, s in pairs)
        note = (f"{len(pairs)} questions answered in both regimes, one dot each: batch input tokens (x) against "
                f"sequential (y). Below the diagonal sequential was cheaper ({below} of {len(pairs)}).")
        return f'<p class="note">{esc(note)}</p>' + scatter_chart(pairs)
    note = f"{len(qids)} questions, sorted by their largest input-token count; hover a bar for its figures."
    return f'<p class="note">{esc(note)}</p>' + bar_chart(qids, series, labels=len(qids) <= MAX_BARS)


def scatter_chart(points: Sequence[tuple[str, float, float]], size: int = 420) -> str:
    """(label, x, y) dots on equal axes from 0, with the y = x diagonal."""
    ticks = nice_ticks(0.0, max(max(x, y) for _, x, y in points) or 1.0)
    top, pad = max(ticks), 56

    def px(v: float) -> float:
        return pad + v / top * (size - pad - 24)

    def py(v: float) -> float:
        return size - pad - v / top * (size - pad - 24)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" role="img">']
    for t in ticks:
        parts.append(f'<line x1="{pad}" x2="{size - 24}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#eee"/>'
                     f'<text x="{pad - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{t:,.0f}</text>'
                     f'<text x="{px(t):.1f}" y="{size - pad + 16}" text-anchor="middle">{t:,.0f}</text>')
    parts.append(f'<line x1="{px(0):.1f}" y1="{py(0):.1f}" x2="{px(top):.1f}" y2="{py(top):.1f}" stroke="#999" '
                 'stroke-dasharray="4 3"/>')
    for label, x, y in points:
        color = COLORS["sequential"] if y < x else COLORS["batch"]
        parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}" fill-opacity="0.7">'
                     f"<title>{esc(label)}: batch {x:,.0f}, sequential {y:,.0f}</title></circle>")
    parts.append(f'<text x="{(pad + size) / 2:.0f}" y="{size - 8}" text-anchor="middle">batch input tokens</text>'
                 f'<text x="14" y="{(size - pad) / 2:.0f}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {(size - pad) / 2:.0f})">sequential input tokens</text></svg>')
    return "".join(parts)


def _savings_section(summary: list[dict[str, Any]]) -> str:
    if not summary:
        return ('<p class="note">No question was answered in both regimes in this run; rerun with '
                "<code>--regime both</code> to compare them.</p>")
    shapes = [s["answer_shape"] for s in summary]
    chart = bar_chart(shapes, {"sequential": [s["input_savings"] for s in summary],
                               "auto": [None if s["auto_batch_input_ratio"] is None else 1 - s["auto_batch_input_ratio"]
                                        for s in summary]},
                      percent=True, height=220, width=760)
    cols = [("answer_shape", "shape"), ("questions", "questions"), ("batch_input_tokens", "batch in"),
            ("seq_input_tokens", "sequential in"), ("auto_input_tokens", "auto in"),
            ("seq_batch_input_ratio", "seq ÷ batch"), ("input_savings", "savings"),
            ("batch_reference_cost_usd", "batch $ (ref)"), ("seq_reference_cost_usd", "seq $ (ref)"),
            ("agreement", "agree"), ("batch_accuracy", "batch acc"), ("seq_accuracy", "seq acc"),
            ("seq_sufficiency", "suff."), ("seq_exhaustion", "exh."), ("seq_budget", "budget")]
    digits = {"seq_batch_input_ratio": 2, "input_savings": 2, "batch_reference_cost_usd": 4,
              "seq_reference_cost_usd": 4, "agreement": 2, "batch_accuracy": 2, "seq_accuracy": 2}
    note = ("Savings = 1 − sequential ÷ batch input tokens (negative: sequential cost more). "
            "'auto' = the regime the router picked. Costs priced at the reference model.")
    return f'<p class="note">{esc(note)}</p>' + chart + table(summary, cols, digits)


def _exits_section(rows: list[dict[str, Any]]) -> str:
    exits = sorted({r["exit"] or "(none)" for r in rows})
    regimes = sorted({r["regime"] for r in rows})
    counts = {(r["regime"], r["exit"] or "(none)"): r["n"] for r in rows}
    series = {g: [counts.get((g, e), 0) for e in exits] for g in regimes}
    return bar_chart(exits, series, width=640, height=220) + table(
        rows, [("regime", "regime"), ("exit", "exit"), ("n", "answers")], narrow=True)


def render_report(wh: Warehouse, run_id: str, extra_sections: Sequence[str] | None = None) -> str:
    """The report of ``run_id`` as one HTML string."""
    run = store.run_row(wh, run_id)
    totals = store.regime_totals(wh, run_id)
    summary = store.regime_summary(wh, run_id)
    by_shape = [s for s in summary if s["answer_shape"] != "(all)"]
    overall = next((s for s in summary if s["answer_shape"] == "(all)"), None)
    routing = store.routing_decisions(wh, run_id)
    rules: dict[str, int] = {}
    for r in routing:
        key = f"{r['route_rule']} → {r['routed_regime']}"
        rules[key] = rules.get(key, 0) + 1
    config = json.loads(run["config"]) if run and run.get("config") else {}
    meta = (f"run {run_id} · flow {run['flow']} · status {run['status']} · started {run['started_at']}"
            if run else f"run {run_id} (no runs row)")
    parts = [
        f"<h1>Generation report</h1><p class=\"meta\">{esc(meta)}</p>",
        f'<p class="meta">{esc(", ".join(f"{k}={v}" for k, v in config.items() if v is not None))}</p>',
        section("Regimes", _cards(totals, overall) + table(totals, [
            ("regime", "regime"), ("answers", "answers"), ("routed", "routed"), ("input_tokens", "input tokens"),
            ("output_tokens", "output tokens"), ("reference_cost_usd", "$ (reference model)"),
            ("cost_usd", "$ (as run)"), ("latency_ms", "mean latency ms"), ("accuracy", "accuracy"),
            ("judged", "judged"), ("failed", "failed")],
            {"reference_cost_usd": 4, "cost_usd": 4, "latency_ms": 1, "accuracy": 2}), "regimes"),
        section("Input tokens per question", _tokens_section(store.tokens_by_question(wh, run_id)), "tokens"),
        section("Savings by answer shape", _savings_section(by_shape), "savings"),
        section("Exit distribution", _exits_section(store.exit_distribution(wh, run_id)), "exits"),
        section("Routing decisions", table([{"rule": k, "n": v} for k, v in sorted(rules.items())],
                                           [("rule", "rule → regime"), ("n", "questions")], narrow=True)
                + '<div class="scroll">' + table(routing, [
                    ("question_id", "question"), ("text", "text"), ("answer_shape", "shape"),
                    ("decomposition", "decomposition"), ("route_rule", "rule"), ("routed_regime", "routed"),
                    ("regimes_run", "regimes run")]) + "</div>", "routing"),
        section("Not-found questions", '<div class="scroll">' + table(store.not_found_questions(wh, run_id), [
            ("question_id", "question"), ("text", "text"), ("retrieval_status", "retrieval"),
            ("reason", "reason"), ("exits", "exits")]) + "</div>", "not-found"),
        section("Failures", table([{**f, "error": _short(f["error"])} for f in store.failures(wh, run_id)],
                                  [("stage", "stage"), ("subject", "subject"), ("error", "error")],
                                  empty="no failures"), "failures"),
        section("Top contradictions", table(store.contradictions(wh, run_id), [
            ("question_id", "question"), ("text", "text"), ("pairs", "pairs"), ("candidate_ids", "candidates"),
            ("note", "note")], empty="no contradictions flagged"), "contradictions"),
    ]
    if extra_sections:
        parts.append('<section id="evaluation"><h2>Evaluation</h2>' + "\n".join(extra_sections) + "</section>")
    parts.append('<p class="meta">arbiter · generated from the warehouse views answer_costs, regime_comparison, '
                 "regime_summary</p>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>arbiter report {esc(run_id)}</title>'
            f"<style>{CSS}</style></head><body>" + "\n".join(parts) + "</body></html>")


def write_report(wh: Warehouse, run_id: str, out_dir: Path | str, extra_sections: Sequence[str] | None = None
                 ) -> Path:
    """Write ``report-<run_id>.html`` into ``out_dir`` and return its path."""
    if store.run_row(wh, run_id) is None and not store.load_answers(wh, run_id):
        raise LookupError(f"run {run_id!r} has no runs row and no answers; list runs with `arbiter runs list`")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"report-{run_id}.html"
    path.write_text(render_report(wh, run_id, extra_sections), encoding="utf-8")
    return path
