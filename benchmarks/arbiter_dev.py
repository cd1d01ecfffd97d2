"""Rules arbiter on the MMLongBench-Doc dev set: page hit@1/@5 of its primary passages vs RRF and each detector on
the same candidate pools, and not-found precision/recall on the unanswerable questions.

    python benchmarks/arbiter_dev.py --data ../shared/data [--home DIR] [--profile balanced] [--refresh]

Step 1 (slow, once): ingest the 44 PDFs into ``--home`` and run detection (doc-scoped, every detector the plan
chooses) for the 355 questions; the pools are cached in ``--home/arbiter_pools.jsonl``. Step 2 (seconds): the
rules arbiter and the dispatcher on every cached pool, then the figures. Text-answerable questions are those with
gold pages and a text, table or layout evidence source; the 46 figure/chart-only ones are reported apart. The
figures are printed per half of the set (by question number parity) as well, to show they are not tuned to one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.detect import TEXT_SOURCES  # noqa: E402
from schemas.settings import Settings, offline_environment  # noqa: E402
from tasks.arbiter.dispatch import verdict_order  # noqa: E402

DETECTORS = ("toc", "keywords", "embeddings")


def question_group(gold: list[int], labels: dict) -> str:
    """'unanswerable' (no gold page), 'text' (evidence in text, a table or the layout) or 'figure_only'."""
    if not gold:
        return "unanswerable"
    sources = labels.get("evidence_sources") or []
    return "text" if any(s in src for src in sources for s in TEXT_SOURCES) else "figure_only"


def by_verdict(verdicts: list, by_id: dict) -> list:
    """Verdicts best first as the arbiter ranked them (role, then relevance, then RRF: the pipeline's
    tasks.arbiter.dispatch.verdict_order over the brief's RRF order), before any dispatch."""
    brief = sorted(verdicts, key=lambda v: -by_id[v.candidate_id].rrf_score)
    by = {v.candidate_id: v for v in verdicts}
    return [by[c] for c in verdict_order([(v.candidate_id, v.role, v.relevance) for v in brief])]


DEV_QUESTIONS = Path("mmlongbench") / "questions.jsonl"


def load_rows(data: Path, questions: Path | None = None) -> list[dict]:
    """The question records of ``questions`` (default: the dev set under ``data``); docs are relative to ``data``."""
    path = questions if questions is not None else data / DEV_QUESTIONS
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def parse_corpus(data: Path, rows: list[dict]):
    """The questions' PDFs parsed in memory (no warehouse, no embeddings): a CorpusCache and path -> doc_id."""
    from tasks.corpus.parse import parse_pdf
    from tasks.detect.run import CorpusCache

    cache, doc_ids = CorpusCache(None), {}
    for pdf in sorted({(data / r["doc"]).resolve() for r in rows}):
        doc = parse_pdf(pdf)
        cache.add(doc.doc_id, doc.lines, doc.toc)
        doc_ids[str(pdf)] = doc.doc_id
    return cache, doc_ids


def pool_records(data: Path, rows: list[dict], cache, doc_ids: dict[str, str], settings: Settings,
                 vectors=None, embedder=None):
    """One record per question: its parse, doc-scoped pool of candidates (RRF order), plan and absent terms."""
    from tasks.detect.run import run_detection
    from tasks.questions.parser import parse_question

    for r in rows:
        doc_id = doc_ids.get(str((data / r["doc"]).resolve()))
        q = parse_question(str(r["qid"]), r["question"])
        record = {"qid": str(r["qid"]), "gold": r["gold_pages_0based"], "labels": r["labels"],
                  "question": q.model_dump(), "candidates": [], "rrf_ranks": [], "doc_ids": []}
        if doc_id is not None:
            det = run_detection(q, [doc_id], cache, vectors, embedder, settings)
            record["candidates"] = [a.brief.model_dump() for a in det.candidates if a.in_pool]
            record["plan"] = det.plan.detectors
            record["absent_terms"] = det.absent_terms
            record["doc_ids"] = [doc_id]
        yield record


def in_memory_report(data: Path, questions: Path | None = None, profile: str = "balanced",
                     trace: list | None = None) -> dict:
    """The figures without a home: the PDFs parsed in memory, TOC and keyword detectors only (no embeddings),
    doc-scoped; what the invariant test runs (tests/test_arbiter_invariant.py)."""
    rows = load_rows(data, questions)
    cache, doc_ids = parse_corpus(data, rows)
    return score(pool_records(data, rows, cache, doc_ids, Settings()), profile, cache, trace)


def build_pools(data: Path, settings: Settings, out: Path, embeddings: bool = True,
                questions: Path | None = None) -> None:
    """Detect every question (doc-scoped); write one JSON line per question with its pool of candidates.

    With ``embeddings``, the PDFs are ingested into the warehouse and LanceDB first (embedding is the slow part);
    without, they are parsed in memory and only the TOC and keyword detectors run.
    """
    from tasks.detect.run import CorpusCache

    rows = load_rows(data, questions)
    pdfs = sorted({(data / r["doc"]).resolve() for r in rows})
    vectors = embedder = wh = None
    if embeddings:
        from benchmarks.detect import ingest
        from tasks.corpus.embed import get_embedder
        from warehouse.db import Warehouse
        from warehouse.vectors import VectorStore

        doc_ids = ingest(pdfs, settings)
        vectors = VectorStore(settings.lance_dir)
        embedder = get_embedder(settings.embedder.kind, settings.embedder.device)
        wh = Warehouse(settings.duckdb_path)
        cache = CorpusCache(wh, settings)
    else:
        cache, doc_ids = parse_corpus(data, rows)
    t0 = time.perf_counter()
    with out.open("w", encoding="utf-8") as fh:
        for i, record in enumerate(pool_records(data, rows, cache, doc_ids, settings, vectors, embedder), start=1):
            fh.write(json.dumps(record) + "\n")
            if i % 50 == 0:
                print(f"[{i}/{len(rows)}] detected ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
    if wh is not None:
        wh.close()


def evaluate(pools: Path, profile: str, warehouse: Path | None = None, trace: list | None = None) -> dict:
    """The figures over the cached pools. Each question's ``absent_terms`` (its distinctive terms that its document
    lacks) is recomputed from the document's lines in ``warehouse`` (read-only) with the function detection uses,
    so a change to that function is measured without re-running detection; without a warehouse, the pool
    record's (None, not known, in pools cached before detection computed it)."""
    from tasks.detect.run import CorpusCache

    wh = None
    if warehouse is not None and warehouse.exists():
        from warehouse.db import Warehouse

        wh = Warehouse(warehouse, read_only=True)
    try:
        records = (json.loads(line) for line in pools.read_text(encoding="utf-8").splitlines())
        return score(records, profile, CorpusCache(wh) if wh is not None else None, trace)
    finally:
        if wh is not None:
            wh.close()


def score(records, profile: str, cache=None, trace: list | None = None) -> dict:
    """Rules arbiter + dispatch on each pool record, then hit@1/@5 per method, not-found precision/recall. With a
    ``cache`` (tasks.detect.run.CorpusCache holding the questions' documents), absent terms are recomputed;
    ``trace`` collects (qid, group, status, not-found reason, absent terms) per question."""
    from schemas.contracts import CandidateBrief, ParsedQuestion
    from tasks.arbiter.dispatch import dispatch
    from tasks.arbiter.rules import arbitrate
    from tasks.arbiter.validate import complete_verdicts
    from tasks.detect.run import absent_terms

    stats: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    t0 = time.perf_counter()
    n = 0
    for rec in records:
        gold = rec["gold"]
        if gold is None:
            continue
        q = ParsedQuestion.model_validate(rec["question"])
        cands = [CandidateBrief.model_validate(c) for c in rec["candidates"]]
        absent = rec.get("absent_terms")
        scope = rec.get("doc_ids") or sorted({c.doc_id for c in cands})
        if cache is not None and scope:
            absent = absent_terms(q, scope, cache)  # doc-scoped, as the pools were
        output, _ = complete_verdicts(arbitrate(q, cands, absent), [c.candidate_id for c in cands])
        result = dispatch(q.question_id, output, cands, profile)
        n += 1
        half = "even" if int("".join(ch for ch in rec["qid"] if ch.isdigit()) or 0) % 2 == 0 else "odd"
        group = question_group(gold, rec["labels"])
        gold_set = set(gold)
        by_id = {c.candidate_id: c for c in cands}

        def hits(pages: list[int]) -> tuple[bool, bool]:
            pages = list(dict.fromkeys(pages))
            return bool(pages[:1] and pages[0] in gold_set), bool(set(pages[:5]) & gold_set)

        kept = [p.page for p in result.passages()] if result.status == "found" else []
        order = [by_id[v.candidate_id].page for v in by_verdict(output.verdicts, by_id)]
        ranked = {
            # its decision first, then its order of the rest of the pool (tasks/evaluate/score.py); hit@1 is the
            # first kept passage, set below
            "arbiter": kept + order,
            "arbiter_rank": order,
            "rrf": [c.page for c in cands],
            **{d: [c.page for c in sorted((c for c in cands if d in c.ranks), key=lambda c: c.ranks[d])]
               for d in DETECTORS},
        }
        groups = [group] if group == "unanswerable" else [group, "answerable"]
        for key in (f"{g}/{scope_name}" for g in groups for scope_name in ("all", half)):
            s = stats[key]
            s["n"].append(1)
            s["not_found"].append(result.status == "not_found")
            s["pool_recall"].append(bool({c.page for c in cands} & gold_set))
            for method, pages in ranked.items():
                h1, h5 = hits(pages)
                s[f"{method}@1"].append(hits(kept)[0] if method == "arbiter" else h1)
                s[f"{method}@5"].append(h5)
        if trace is not None:
            trace.append((rec["qid"], group, result.status, result.not_found_reason, absent))
    seconds = time.perf_counter() - t0

    def mean(xs: list) -> float | None:
        return round(sum(xs) / len(xs), 3) if xs else None

    report: dict = {"profile": profile, "questions": n, "arbiter_seconds": round(seconds, 2), "groups": {}}
    for key, s in sorted(stats.items()):
        report["groups"][key] = {"n": len(s["n"]), **{m: mean(v) for m, v in s.items() if m != "n"}}
    for scope in ("all", "even", "odd"):
        una = stats[f"unanswerable/{scope}"]["not_found"]
        ans = stats[f"answerable/{scope}"]["not_found"]
        tp, fp = sum(una), sum(ans)
        report[f"not_found/{scope}"] = {
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / len(una), 3) if una else None, "predicted": tp + fp, "unanswerable": len(una),
        }
    return report


def print_report(report: dict) -> None:
    print(f"profile {report['profile']}: {report['questions']} questions, rules arbiter + dispatch "
          f"{report['arbiter_seconds']} s")
    cols = ["arbiter@1", "arbiter@5", "arbiter_rank@1", "rrf@1", "rrf@5", "toc@1", "keywords@1", "keywords@5",
            "embeddings@1", "pool_recall", "not_found"]
    print(f"{'group':<22}{'n':>5}" + "".join(f"{c:>15}" for c in cols))
    for key, g in report["groups"].items():
        print(f"{key:<22}{g['n']:>5}" + "".join(f"{'-' if g.get(c) is None else g[c]:>15}" for c in cols))
    for scope in ("all", "even", "odd"):
        nf = report[f"not_found/{scope}"]
        print(f"not found ({scope}): precision {nf['precision']} recall {nf['recall']} "
              f"({nf['predicted']} predicted, {nf['unanswerable']} unanswerable)")


def main(argv: list[str] | None = None, questions: Path | None = None, home: Path | None = None,
         embedder: str = "minilm") -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--questions", type=Path, default=questions,
                    help="questions JSONL (docs relative to --data); default: the MMLongBench dev set")
    ap.add_argument("--home", type=Path, default=home or REPO / ".arbiter" / "bench-arbiter")
    ap.add_argument("--embedder", default=embedder,
                    help="minilm | hash | none (no ingest: TOC + keywords only) | memory (as none, and nothing "
                         "written or cached)")
    ap.add_argument("--trace", action="store_true", help="print each question judged not found, with its reason")
    ap.add_argument("--profile", default="balanced")
    ap.add_argument("--refresh", action="store_true", help="re-run ingest and detection even if pools are cached")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    args = ap.parse_args(argv)
    offline_environment()
    pools = args.home / "arbiter_pools.jsonl"
    if args.embedder == "memory":
        trace: list = []
        report = in_memory_report(args.data, args.questions, args.profile, trace)
        _print(report, trace, args)
        return 0
    if args.refresh or not pools.exists():
        args.home.mkdir(parents=True, exist_ok=True)
        embeddings = args.embedder != "none"
        settings = Settings(home=args.home, embedder={"kind": args.embedder if embeddings else "minilm"})
        build_pools(args.data, settings, pools, embeddings, args.questions)
    trace = []
    report = evaluate(pools, args.profile, args.home / "warehouse.duckdb", trace)
    _print(report, trace, args)
    return 0


def _print(report: dict, trace: list, args) -> None:
    print_report(report)
    if args.trace:
        for qid, group, status, reason, absent in trace:
            if status == "not_found":
                print(f"  not found {qid} ({group}): {reason}; absent terms {absent}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    raise SystemExit(main())
