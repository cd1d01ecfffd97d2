"""Detection benchmark on MMLongBench-Doc: candidate recall (gold page in the pool) and per-question latency.

    python benchmarks/detect.py --data ../shared/data [--home DIR]

Documents are parsed, windowed and embedded once into ``--home`` (parquet + LanceDB); reruns reuse them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from schemas.settings import Settings, offline_environment  # noqa: E402

TEXT_SOURCES = ("Pure-text", "Table", "Layout")


def ingest(pdfs: list[Path], settings: Settings) -> dict[str, str]:
    """path -> doc_id, through the ingest flow's ``ingest_into`` (incremental: unchanged files are skipped)."""
    from flows.ingest import ingest_into
    from warehouse import corpus
    from warehouse.db import Warehouse
    from warehouse.runs import fails_run, finish_run, start_run

    with Warehouse(settings.duckdb_path) as wh:
        run_id = start_run(wh, "ingest", {"paths": [str(p) for p in pdfs], "benchmark": "detect"})
        with fails_run(wh, run_id):
            summary = ingest_into(wh, run_id, pdfs, settings, log=lambda m: print(m, file=sys.stderr))
        finish_run(wh, run_id, "partial" if summary.failed else "ok", summary.as_dict())
        return {p: d for p, d in corpus.doc_ids_for_paths(wh, [str(p.resolve()) for p in pdfs]).items() if d}


def load_questions(data: Path) -> list[dict]:
    """MMLongBench questions with page gold, each tagged 'text' (Pure-text/Table/Layout evidence) or 'figure'."""
    out = []
    for line in (data / "mmlongbench" / "questions.jsonl").read_text().splitlines():
        row = json.loads(line)
        if not row.get("gold_pages_0based"):
            continue
        sources = row.get("labels", {}).get("evidence_sources", [])
        row["kind"] = "text" if any(k in s for s in sources for k in TEXT_SOURCES) else "figure"
        row["path"] = str((data / row["doc"]).resolve())
        out.append(row)
    return out


def page_bm25(doc) -> tuple[list[int], object]:
    """Page-level BM25 baseline: one BM25 document per page (same tokeniser as the detectors)."""
    from rank_bm25_rs import BM25Okapi

    by_page: dict[int, list[str]] = {}
    for page, toks in zip(doc.line_pages, doc.line_tokens):
        by_page.setdefault(page, []).extend(toks)
    pages = sorted(by_page)
    return pages, BM25Okapi([by_page[p] for p in pages])


def first_pages(items, n: int) -> set[int]:
    return {it.page for it in items[:n]}


def evaluate(rows: list[dict], doc_ids: dict[str, str], settings: Settings, embedder_kind: str) -> dict:
    """Per question: detection (timed) and the pages each method proposes; returns per-kind hit counts."""
    import numpy as np

    from tasks.detect.run import CorpusCache, run_detection
    from tasks.corpus.embed import get_embedder
    from tasks.detect.keyword_index import query_terms
    from tasks.questions.parser import parse_question
    from warehouse.db import Warehouse
    from warehouse.vectors import VectorStore

    wh = Warehouse(settings.duckdb_path, read_only=True)
    cache = CorpusCache(wh, settings)
    vectors = VectorStore(settings.lance_dir)
    embedder = get_embedder(embedder_kind)
    t0 = time.perf_counter()
    scoped = sorted({doc_ids[r["path"]] for r in rows if r["path"] in doc_ids})
    page_indexes = {}
    for d in scoped:
        cache.index([d])
        page_indexes[d] = page_bm25(cache.doc(d))
    cache.has_vectors(vectors, scoped)
    embedder.embed(["warm-up"])
    warm = time.perf_counter() - t0
    stats: dict[str, dict] = {}
    latencies: list[float] = []
    stages: dict[str, list[float]] = {}
    for row in rows:
        doc_id = doc_ids.get(row["path"])
        if doc_id is None:
            continue
        gold = set(row["gold_pages_0based"])
        q = parse_question(row["qid"], row["question"])
        det = run_detection(q, [doc_id], cache, vectors, embedder, settings)
        latencies.append(det.seconds["total"])
        for stage, sec in det.seconds.items():
            stages.setdefault(stage, []).append(sec * 1000)
        pool = [c.brief for c in det.candidates]
        found = {"pool@10": first_pages(pool, 10), "pool@30": first_pages(pool, 30)}
        for name in ("toc", "keywords", "embeddings"):
            mine = [h for h in det.hits if h.detector == name]
            found[f"{name}@10"] = first_pages(mine, 10)
            found[f"{name}@30"] = first_pages(mine, 30)
        pages, bm25 = page_indexes[doc_id]
        order = np.argsort(-bm25.get_scores(list(query_terms(q).bm25_query)), kind="stable")
        found["page_bm25@1"] = {pages[i] for i in order[:1]}
        found["page_bm25@5"] = {pages[i] for i in order[:5]}
        bucket = stats.setdefault(row["kind"], {"n": 0, "plans": {}})
        bucket["n"] += 1
        plan = "+".join(det.plan.detectors)
        bucket["plans"][plan] = bucket["plans"].get(plan, 0) + 1
        for key, got in found.items():
            bucket[key] = bucket.get(key, 0) + bool(gold & got)
    wh.close()
    lat = np.array(latencies) * 1000
    return {"stats": stats, "warm_s": warm, "p50_ms": float(np.percentile(lat, 50)),
            "p95_ms": float(np.percentile(lat, 95)), "n": len(latencies),
            "stages_p50_ms": {k: float(np.percentile(v, 50)) for k, v in stages.items()}}


def report(result: dict, settings: Settings) -> str:
    keys = ["pool@10", "pool@30", "toc@10", "toc@30", "keywords@10", "keywords@30", "embeddings@10",
            "embeddings@30", "page_bm25@1", "page_bm25@5"]
    out = [f"detection: {result['n']} questions, p50 {result['p50_ms']:.1f} ms, p95 {result['p95_ms']:.1f} ms "
           f"(warm-up {result['warm_s']:.1f}s: windows, BM25 indexes, embedder); "
           f"top_k_per_detector={settings.detect.top_k_per_detector}",
           "stage p50 (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in result["stages_p50_ms"].items()),
           "recall = share of questions with a gold page among the method's first N pages/candidates"]
    out.append(f"{'kind':8} {'n':>4} " + " ".join(f"{k:>13}" for k in keys))
    for kind, b in sorted(result["stats"].items(), key=lambda kv: kv[0] != "text"):
        out.append(f"{kind:8} {b['n']:>4} " + " ".join(f"{b.get(k, 0) / b['n']:>13.3f}" for k in keys))
        out.append(f"{'':8} plans: {b['plans']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--home", type=Path, default=REPO / ".arbiter" / "bench-detect")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--top-k", type=int, default=None, help="hits kept per detector (default: settings)")
    ap.add_argument("--pool-size", type=int, default=None, help="candidates in the pool (default: settings)")
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="torch intra-op threads for query embedding (one short sentence gains nothing from more)")
    args = ap.parse_args(argv)
    offline_environment()
    try:  # lazy and optional: only the torch embedder ('minilm-torch', the gpu extra) has a thread pool to cap here
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(args.torch_threads)
    detect = {k: v for k, v in {"top_k_per_detector": args.top_k, "pool_size": args.pool_size}.items() if v}
    settings = Settings(home=args.home, embedder={"kind": args.embedder}, detect=detect)
    pdfs = sorted((args.data / "mmlongbench" / "pdfs").resolve().glob("*.pdf"))
    doc_ids = ingest(pdfs, settings)
    result = evaluate(load_questions(args.data), doc_ids, settings, args.embedder)
    print(report(result, settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
