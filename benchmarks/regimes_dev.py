"""Batch vs sequential generation on the MMLongBench-Doc dev set (doc-scoped): tokens, routing, accuracy.

    python benchmarks/regimes_dev.py --data ../shared/data [--home DIR] [--limit N] [--run-id RUN]

Runs ingest -> questions -> detect -> arbiter -> generate with ``regime=both`` (every question answered in both
regimes, so the pair is compared on the same retrieval), then reads the warehouse views:

- input tokens sequential / batch on single-value questions (amount, date, boolean, entity; decomposition
  single), the seed's goal being <= 0.35 (-65%);
- overall input tokens with auto routing (the routed regime's tokens) / all-batch;
- answer accuracy of batch, sequential and auto per MMLongBench ``answer_format`` (``answers.correct``:
  ``tasks.generate.normalise.answer_matches`` against the reference answer);
- what a user feels per regime: answer precision (correct / answered), coverage (answered / answerable), accuracy
  on the answerable and unanswerable questions, and on the answerable ones whose first passage is on a gold page;
- the structure behind the single-value ratio: mean K, step-1 stops, the floor if every run stopped at step 1,
  and the ratio split by whether batch found a value at all (where no passage holds one, sequential reads all K).

Prints a table, writes ``regimes_dev.json`` and the HTML run report under ``--home``. Pass ``--run-id`` of a
finished run to re-read its figures without recomputing; rerunning with the same id resumes a partial run.
``--regenerate-from RUN`` answers again, in a new run, from RUN's stored retrieval results (frozen retrieval:
a generator change measured on exactly the same passages, in minutes instead of a full pipeline run).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from schemas.contracts import SINGLE_VALUE_SHAPES  # noqa: E402
from schemas.settings import Settings, offline_environment  # noqa: E402
from tasks.questions.asked import asked_class  # noqa: E402
from tasks.generate.normalise import fold, key_values, numbers_equal, split_items  # noqa: E402
from tasks.generate.sentences import stem  # noqa: E402


FIGURES_SQL = """
SELECT c.*, json_extract_string(q.labels, '$.answer_format') AS answer_format,
       CAST(json_extract(b.budget, '$.max_candidates') AS INTEGER) AS k, b.answer_found AS batch_answer_found,
       (SELECT sum(l.input_tokens) FROM llm_calls l WHERE l.run_id = c.run_id AND l.question_id = c.question_id
          AND l.stage = 'generate' AND l.regime = 'sequential' AND l.step = 1) AS seq_step1_input_tokens
FROM regime_comparison c
LEFT JOIN questions q ON q.run_id = c.run_id AND q.question_id = c.question_id
LEFT JOIN answers b ON b.run_id = c.run_id AND b.question_id = c.question_id AND b.regime = 'batch'
WHERE c.run_id = ?
"""


# What a user feels, per regime: precision (correct / answered), coverage (answered / answerable), accuracy on the
# answerable and the unanswerable questions apart, and on the answerable questions whose first retrieved passage is
# on a gold page (the reader's share when retrieval did its part). Retrieval is the run's own, or its parent's for
# a --regenerate-from run.
TRUST_SQL = """
WITH src AS (SELECT coalesce((SELECT parent_run_id FROM runs WHERE run_id = ? AND parent_run_id IS NOT NULL
                              AND EXISTS (SELECT 1 FROM retrieval_results r WHERE r.run_id = runs.parent_run_id)),
                             ?) AS run_id),
first AS (SELECT r.question_id, CAST(coalesce(json_extract(r.result, '$.primary[0].page'),
                                              json_extract(r.result, '$.supporting[0].page')) AS INTEGER) AS page
          FROM retrieval_results r, src WHERE r.run_id = src.run_id)
SELECT a.regime, a.answer_found, a.correct, len(q.gold_pages) > 0 AS answerable,
       coalesce(list_contains(q.gold_pages, f.page), false) AS first_page_gold
FROM answers a JOIN questions q ON q.run_id = a.run_id AND q.question_id = a.question_id
LEFT JOIN first f ON f.question_id = a.question_id
WHERE a.run_id = ? AND a.correct IS NOT NULL AND q.gold_pages IS NOT NULL
"""


def trust(rows: list[dict]) -> dict:
    out = {}
    for regime in ("batch", "sequential"):
        sel = [r for r in rows if r["regime"] == regime]
        answered = [r for r in sel if r["answer_found"]]
        answerable = [r for r in sel if r["answerable"]]
        unanswerable = [r for r in sel if not r["answerable"]]
        first = [r for r in answerable if r["first_page_gold"]]

        def acc(xs: list[dict]) -> dict:
            return {"n": len(xs), "correct": sum(bool(x["correct"]) for x in xs),
                    "share": _ratio(sum(bool(x["correct"]) for x in xs), len(xs))}
        out[regime] = {"precision": acc(answered), "answerable": acc(answerable), "unanswerable": acc(unanswerable),
                       "first_page_gold": acc(first),
                       "coverage": _ratio(sum(bool(r["answer_found"]) for r in answerable), len(answerable))}
    return out


# The first-page-gold questions one by one: what is left, per class of evidence and of ask, and whether the gold
# value is printed on a gold page's text layer at all (what an extractive reader could quote; a value printed only
# in a figure, or a count nobody printed, it cannot).
FIRST_GOLD_SQL = TRUST_SQL.split("SELECT a.regime")[0].replace(
    "AS INTEGER) AS page\n",
    "AS INTEGER) AS page,\n       coalesce(json_extract_string(r.result, '$.primary[0].doc_id'), "
    "json_extract_string(r.result, '$.supporting[0].doc_id')) AS doc_id\n") + """
SELECT a.regime, a.correct, q.text, q.answer, q.labels, q.gold_pages, f.doc_id
FROM answers a JOIN questions q ON q.run_id = a.run_id AND q.question_id = a.question_id
JOIN first f ON f.question_id = a.question_id
WHERE a.run_id = ? AND a.correct IS NOT NULL AND len(q.gold_pages) > 0 AND list_contains(q.gold_pages, f.page)
  AND a.regime IN ('batch', 'sequential')
"""
_FIGURE_SOURCES = ("chart", "figure", "image")


def evidence_class(text: str, labels: dict) -> tuple[str, str]:
    """(where the evidence is: figure/chart only, table, layout or text; what is asked: count, list, number or
    string), from the question's labels and its 'how many'."""
    sources = [str(s).lower() for s in labels.get("evidence_sources") or []]
    fmt = labels.get("answer_format")
    where = ("figure/chart only" if sources and all(any(f in s for f in _FIGURE_SOURCES) for s in sources)
             else "table" if any("table" in s for s in sources) else "layout" if any("layout" in s for s in sources)
             else "text")
    asked = ("count" if fmt == "Int" and re.search(r"(?i)\bhow many\b", text) else "list" if fmt == "List"
             else "number" if fmt in ("Int", "Float") else "string")
    return where, asked


def printed(gold: str, asked: str, page_text: str, unit: str = "") -> bool:
    """The gold value printed on the page: every item, a number among the page's numbers (a count: in digits
    before the counted noun, up to three words between, as '7 quality levels'), a string as folded text."""
    items = split_items(gold) if gold.strip().startswith("[") else [gold]
    page_numbers = key_values(page_text)[0]
    folded = fold(page_text)
    for item in (i for i in items if i.strip()):
        if asked == "count":
            noun = re.escape(stem(unit)[:5]) if unit else "[a-z]"
            if not re.search(rf"(?<![\d.,]){re.escape(item.strip())}\s+(?:[\w-]+\s+){{0,3}}{noun}", folded):
                return False
        elif re.fullmatch(r"[\s\d.,%$-]+", item):  # as the page prints it, or as its scale words make it
            bare = item.strip(" $%").replace(",", "")
            if not re.search(rf"(?<![\d.]){re.escape(bare)}(?![\d])", folded.replace(",", "")) and not all(
                    any(numbers_equal(n, m) for m in page_numbers) for n in key_values(item)[0]):
                return False
        elif fold(item) not in folded:
            return False
    return True


def first_gold_classes(wh, run_id: str) -> dict:
    """regime -> 'where, asked' -> {n, right, wrong_printed}: the first-page-gold questions by class."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    pages: dict[tuple[str, int], str] = {}
    for r in wh.query(FIRST_GOLD_SQL, [run_id, run_id, run_id]):
        labels = json.loads(r["labels"]) if isinstance(r["labels"], str) else r["labels"] or {}
        where, asked = evidence_class(r["text"], labels)
        cell = out.setdefault(r["regime"], {}).setdefault(f"{where}, {asked}",
                                                          {"n": 0, "right": 0, "wrong_printed": 0})
        cell["n"] += 1
        if r["correct"]:
            cell["right"] += 1
            continue
        for page in r["gold_pages"]:
            if (r["doc_id"], page) not in pages:
                rows = wh.query("SELECT DISTINCT line_no, text FROM lines WHERE doc_id = ? AND page = ? "
                                "ORDER BY line_no", [r["doc_id"], page])
                pages[(r["doc_id"], page)] = "\n".join(x["text"] or "" for x in rows)
        text = "\n".join(pages[(r["doc_id"], p)] for p in r["gold_pages"])
        cell["wrong_printed"] += printed(r["answer"], asked, text, asked_class({"text": r["text"]}).unit)
    return {regime: dict(sorted(cells.items(), key=lambda kv: -kv[1]["n"])) for regime, cells in out.items()}


def subset(data: Path, home: Path, limit: int | None) -> Path:
    """The question file: the whole set, or every k-th question (spread over documents) when ``limit`` is set."""
    src = data / "mmlongbench" / "questions.jsonl"
    if not limit:
        return src
    lines = [ln for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()]
    step = max(1, len(lines) // limit)
    out = home / "mmlongbench-dev.jsonl"
    home.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines[::step][:limit]) + "\n", encoding="utf-8")
    return out


def run(questions: Path, data: Path, settings: Settings, run_id: str | None) -> str:
    from flows.answer import answer_into, question_docs
    from flows.ingest import ingest_into
    from warehouse.db import Warehouse
    from warehouse.runs import fails_run, finish_run, start_run

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    with Warehouse(settings.duckdb_path) as wh:
        config = {"questions": str(questions), "regime": "both", "benchmark": "regimes_dev",
                  "arbiter": settings.arbiter.provider, "generator": settings.generate.provider}
        run_id = start_run(wh, "answer", config, run_id=run_id)  # (also loads the price table)
        with fails_run(wh, run_id):
            docs = question_docs(questions, data)
            ingest_into(wh, run_id, docs, settings, log=log)
            summary = answer_into(wh, run_id, questions, settings, data_root=data, regime="both",
                                  profile=settings.dispatch_profile, log=log)
        finish_run(wh, run_id, "partial" if summary["statuses"].get("failed") else "ok", summary)
    return run_id


def regenerate(source_run: str, settings: Settings) -> str:
    """A new run answering every question of ``source_run`` from its retrieval results: the backfill's regenerate
    mode (questions, candidates, verdicts and retrieval results copied; generation walked again in both regimes)."""
    from flows.backfill import backfill_into
    from warehouse.db import Warehouse

    with Warehouse(settings.duckdb_path) as wh:
        summary = backfill_into(wh, source_run, settings, generator=settings.generate.provider, regime="both",
                                mode="regenerate", log=lambda m: print(m, file=sys.stderr, flush=True))
    return summary["run_id"]


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 4) if den else None


def _acc(rows: list[dict], key: str) -> dict:
    judged = [r[key] for r in rows if r[key] is not None]
    return {"n": len(judged), "accuracy": round(sum(judged) / len(judged), 4) if judged else None}


def figures(settings: Settings, run_id: str) -> dict:
    from warehouse.db import Warehouse

    with Warehouse(settings.duckdb_path, read_only=True) as wh:  # the run's writer closed (and flushed) first
        rows = wh.query(FIGURES_SQL, [run_id])
        routes = wh.query("SELECT route_rule, routed_regime, count(DISTINCT question_id) AS n FROM answers "
                          "WHERE run_id = ? GROUP BY ALL ORDER BY n DESC", [run_id])
        statuses = wh.query("SELECT status, count(*) AS n FROM questions WHERE run_id = ? GROUP BY ALL", [run_id])
        retrieval = wh.query("SELECT status, count(*) AS n FROM retrieval_results WHERE run_id = ? GROUP BY ALL",
                             [run_id])
        trust_rows = wh.query(TRUST_SQL, [run_id, run_id, run_id])
        classes = first_gold_classes(wh, run_id)
    single = [r for r in rows if r["answer_shape"] in SINGLE_VALUE_SHAPES and r["decomposition"] == "single"]
    single_found = [r for r in single if r["batch_exit"] != "not_found"]

    def tokens(sel: list[dict]) -> dict:
        b = sum(r["batch_input_tokens"] for r in sel)
        s = sum(r["seq_input_tokens"] for r in sel)
        a = sum(r["auto_input_tokens"] for r in sel)
        return {"questions": len(sel), "batch_input_tokens": b, "seq_input_tokens": s, "auto_input_tokens": a,
                "seq_over_batch": _ratio(s, b), "auto_over_batch": _ratio(a, b)}

    formats = sorted({r["answer_format"] or "?" for r in rows})
    by_format = {f: {"batch": _acc(sel, "batch_correct"), "sequential": _acc(sel, "seq_correct"),
                     "auto": _acc(sel, "auto_correct")}
                 for f in formats for sel in [[r for r in rows if (r["answer_format"] or "?") == f]]}
    exits: dict[str, int] = {}
    for r in single_found:
        exits[r["seq_exit"]] = exits.get(r["seq_exit"], 0) + 1
    ks = [r["k"] or 0 for r in single_found]
    step1 = sum(r["seq_step1_input_tokens"] or 0 for r in single_found)
    structure = {
        "mean_k": round(sum(ks) / len(ks), 2) if ks else None,
        "k_distribution": {k: ks.count(k) for k in sorted(set(ks))},
        "stopped_at_step_1": sum(r["seq_exit"] == "sufficiency" and r["seq_steps"] == 1 for r in single_found),
        # if every sequential run stopped at its first passage: the floor the prompt and passage sizes allow
        "seq_over_batch_if_top1_always_sufficient": _ratio(step1, sum(r["batch_input_tokens"] for r in single_found)),
        "seq_over_batch_k3_plus": tokens([r for r in single_found if (r["k"] or 0) >= 3])["seq_over_batch"],
        # where batch found a value vs where no passage held one (sequential then reads all K: exhaustion)
        "seq_over_batch_batch_answered": tokens([r for r in single_found if r["batch_answer_found"]])["seq_over_batch"],
        "seq_over_batch_batch_not_answered": tokens(
            [r for r in single_found if not r["batch_answer_found"]])["seq_over_batch"],
        "batch_not_answered": sum(not r["batch_answer_found"] for r in single_found),
    }
    return {
        "run_id": run_id,
        "question_status": {r["status"]: r["n"] for r in statuses},
        "retrieval_status": {r["status"]: r["n"] for r in retrieval},
        "paired_questions": len(rows),
        "single_value": tokens(single),
        "single_value_retrieved": tokens(single_found),
        "single_value_seq_exits": exits,
        "single_value_structure": structure,
        "overall": tokens(rows),
        "routes": routes,
        "agreement": _ratio(sum(bool(r["values_agree"]) for r in rows), len(rows)),
        "accuracy_by_answer_format": by_format,
        "accuracy_all": {"batch": _acc(rows, "batch_correct"), "sequential": _acc(rows, "seq_correct"),
                         "auto": _acc(rows, "auto_correct")},
        "trust": trust(trust_rows),
        "first_page_gold_classes": classes,
    }


def render(f: dict) -> str:
    lines = [f"run {f['run_id']}: {f['paired_questions']} questions answered in both regimes; "
             f"questions {f['question_status']}, retrieval {f['retrieval_status']}"]
    for key, label in (("single_value", "single-value (all)"), ("single_value_retrieved", "single-value, found"),
                       ("overall", "overall")):
        t = f[key]
        lines.append(f"  {label:22} n={t['questions']:4}  batch {t['batch_input_tokens']:>9,}  seq "
                     f"{t['seq_input_tokens']:>9,}  auto {t['auto_input_tokens']:>9,}  seq/batch "
                     f"{t['seq_over_batch']}  auto/batch {t['auto_over_batch']}")
    lines.append(f"  sequential exits on single-value questions with passages: {f['single_value_seq_exits']}")
    lines.append(f"  single-value structure: {f['single_value_structure']}")
    lines.append(f"  answer agreement batch vs sequential: {f['agreement']}")
    lines.append("  accuracy by answer_format (n judged): batch | sequential | auto")
    for fmt_, acc in {**f["accuracy_by_answer_format"], "(all)": f["accuracy_all"]}.items():
        cells = " | ".join(f"{acc[g]['accuracy']} (n={acc[g]['n']})" for g in ("batch", "sequential", "auto"))
        lines.append(f"    {fmt_:6} {cells}")
    lines.append("  trust (correct/n): precision | coverage | answerable | unanswerable | first page gold")
    for regime, t in f["trust"].items():
        cells = [f"{t[k]['share']} ({t[k]['correct']}/{t[k]['n']})" for k in ("precision",)] + [str(t["coverage"])] + \
            [f"{t[k]['share']} ({t[k]['correct']}/{t[k]['n']})" for k in ("answerable", "unanswerable", "first_page_gold")]
        lines.append(f"    {regime:10} " + " | ".join(cells))
    lines.append("  first page gold by class (evidence, asked): n / right / wrong but the gold value printed on a "
                 "gold page's text layer")
    for regime, cells in f["first_page_gold_classes"].items():
        lines.append(f"    {regime}: " + "; ".join(f"{k} {c['n']}/{c['right']}/{c['wrong_printed']}"
                                               for k, c in cells.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--home", type=Path, default=REPO / ".arbiter" / "bench-regimes")
    ap.add_argument("--limit", type=int, default=None, help="answer every k-th question, about this many")
    ap.add_argument("--embedder", default=None, help="minilm (default) | hash")
    ap.add_argument("--run-id", default=None, help="resume this run, or re-read a finished one with --no-run")
    ap.add_argument("--no-run", action="store_true", help="only read the figures of --run-id")
    ap.add_argument("--regenerate-from", default=None, help="answer again from this run's retrieval results")
    args = ap.parse_args(argv)
    offline_environment()
    data = args.data.resolve()
    if not (data / "mmlongbench" / "questions.jsonl").is_file():
        print(f"no MMLongBench data under {data}; pass --data ../shared/data", file=sys.stderr)
        return 2
    settings = Settings(home=args.home.resolve())
    if args.embedder:
        settings.embedder.kind = args.embedder
    started = time.perf_counter()
    if args.no_run:
        if not args.run_id:
            ap.error("--no-run needs --run-id")
        run_id = args.run_id
    elif args.regenerate_from:
        run_id = regenerate(args.regenerate_from, settings)
    else:
        run_id = run(subset(data, settings.home, args.limit), data, settings, args.run_id)
    result = figures(settings, run_id)
    result["seconds"] = round(time.perf_counter() - started, 1)
    from tasks.report.html import write_report
    from warehouse.db import Warehouse

    with Warehouse(settings.duckdb_path, read_only=True) as wh:
        result["report"] = str(write_report(wh, run_id, settings.reports_dir))
    (settings.home / "regimes_dev.json").write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    print(render(result))
    print(f"report: {result['report']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
