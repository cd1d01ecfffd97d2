"""Corpus scale: a generated corpus at several sizes, each ingested into a fresh home and answered, doc-scoped and
corpus-wide; one table, and how each figure grows from one size to the next.

    python benchmarks/scale.py --pages 1000,10000[,50000] [--embedder minilm[,minilm,hash]] [--questions 100]

The corpus is ``tasks.corpus.sample.varied`` (varied documents, no two pages alike, one question per document with
its gold page), written once under ``--corpus`` (default /tmp/arbiter-scale-corpus) and reused: a larger size is a
smaller one plus more documents. Per size, three subprocesses, so that each peak RSS is its own: the ingest (a fresh
home under ``--work``), then the same ``--questions`` answered doc-scoped, then corpus-wide (``arbiter eval
--corpus-wide``'s scope: every question searches every document), each through the answer pipeline (rules arbiter,
extractive generation, everything written). Detection latency is each question's wall time in ``run_detection``
(plan, detectors, aggregate, absent terms); the first question of a run is apart (``cold``: it loads what the
corpus view needs, for a corpus-wide question every document and one keyword index over all of them), p50 / p95
are over the others. ``--embedder`` is one for every size or one per size (``hash`` for a size too large for MiniLM
on the machine: the table says which). On a shared machine the figures move with the load; the load average is
printed with them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import flows  # noqa: E402,F401  (offline defaults before prefect is imported)
from flows.answer import answer_into  # noqa: E402
from flows.ingest import ingest_into  # noqa: E402
from schemas.settings import get_settings, offline_environment  # noqa: E402
from tasks import pipeline  # noqa: E402
from tasks.corpus.sample.varied import ensure_varied_corpus, write_questions  # noqa: E402
from tasks.evaluate.score import evaluation_summary, score_run  # noqa: E402
from tasks.questions.load import ingest_questions  # noqa: E402
from warehouse.db import Warehouse  # noqa: E402
from warehouse.evals import unscope_questions  # noqa: E402
from warehouse.runs import finish_run, start_run  # noqa: E402

DEFAULT_CORPUS = Path("/tmp/arbiter-scale-corpus")
DEFAULT_WORK = Path("/tmp/arbiter-scale-work")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def disk_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20 if path.exists() else 0.0


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100); 0 for no value."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(q / 100 * len(ordered)))) - 1]


def ingest_child(home: Path, corpus: Path, pages: int, seed: int) -> dict:
    """Ingest the corpus's first ``pages`` pages into ``home`` (this process: its peak RSS is the ingest's)."""
    settings = get_settings(home=home)
    pdfs = ensure_varied_corpus(corpus, pages, seed).pdfs  # written by the parent: this only reads the manifest
    with Warehouse(settings.duckdb_path) as wh:
        t0, c0 = time.perf_counter(), time.process_time()
        s = ingest_into(wh, "scale-ingest", pdfs, settings, log=lambda m: None)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        stored = int(wh.scalar("SELECT coalesce(sum(pages), 0) FROM documents WHERE status = 'ok'"))
    return {"docs": len(s.ingested), "failed": len(s.failed), "pages": stored, "windows": s.windows,
            "embedded": s.embedded, "wall_s": wall, "cpu_s": cpu, "parse_s": s.parse_seconds,
            "embed_s": s.embed_seconds, "write_s": s.write_seconds, "peak_rss_mb": peak_rss_mb()}


def answer_child(home: Path, questions: Path, root: Path, scope: str) -> dict:
    """Answer ``questions`` on ``home`` (``scope`` 'doc': each in its document; 'corpus': every document), timing
    each question's detection; page hit@1 of the arbiter says the questions were answerable at all."""
    settings = get_settings(home=home)
    seconds: list[float] = []
    detect = pipeline.run_detection

    def timed(*args, **kwargs):
        d = detect(*args, **kwargs)
        seconds.append(d.seconds["total"])
        return d

    pipeline.run_detection = timed  # the walk's own call, timed from inside (no other work in the figure)
    try:
        with Warehouse(settings.duckdb_path) as wh:
            run_id = start_run(wh, "answer", {"questions": str(questions), "scope": scope})
            ingest_questions(wh, run_id, questions, root)
            if scope == "corpus":
                unscope_questions(wh, run_id)
            t0 = time.perf_counter()
            out = answer_into(wh, run_id, questions, settings, data_root=root, regime="batch",
                              profile=settings.dispatch_profile, log=lambda m: None)
            wall = time.perf_counter() - t0
            finish_run(wh, run_id, "ok", out)
            summary = evaluation_summary(score_run(wh, run_id, "batch"))
    finally:  # a test runs this in its own process: the walk gets its own call back
        pipeline.run_detection = detect
    return {"scope": scope, "questions": out["questions"], "statuses": out["statuses"], "wall_s": wall,
            "cold_s": seconds[0] if seconds else 0.0, "p50_s": percentile(seconds[1:], 50),
            "p95_s": percentile(seconds[1:], 95), "hit_at_1": (summary.get("page_hit_at_1") or {}).get("arbiter"),
            "peak_rss_mb": peak_rss_mb()}


def run_child(kind: str, params: dict) -> dict:
    """One child's work in this process, from its JSON parameters."""
    p = {k: Path(v) if k in ("home", "corpus", "questions", "root") else v for k, v in params.items()}
    return ingest_child(**p) if kind == "ingest" else answer_child(**p)


def spawn(kind: str, params: dict, embedder: str) -> dict:
    """One child in a subprocess of its own; its RESULT line."""
    cmd = [sys.executable, __file__, "--child", kind, "--params", json.dumps(params)]
    env = {**os.environ, "ARBITER_EMBEDDER__KIND": embedder}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise SystemExit(f"{kind} child failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def measure(pages: int, embedder: str, args: argparse.Namespace, run=spawn) -> dict:
    """Ingest and answer one size (``run``: how a child runs; a subprocess unless a test runs them in-process)."""
    t0 = time.perf_counter()
    corpus = ensure_varied_corpus(args.corpus, pages, args.seed, args.gen_workers)
    generated = time.perf_counter() - t0
    home = args.work / f"{pages}-{embedder}"
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    qpath = write_questions(corpus, home / "questions.jsonl", args.questions)
    root = {"home": str(home)}
    ingest = run("ingest", {**root, "corpus": str(args.corpus), "pages": pages, "seed": args.seed}, embedder)
    settings = get_settings(home=home)
    sizes = {"warehouse_mb": disk_mb(settings.duckdb_path) + disk_mb(Path(f"{settings.duckdb_path}.wal")),
             "lance_mb": disk_mb(Path(settings.lance_dir))}
    answers = {scope: run("answer", {**root, "questions": str(qpath), "root": str(args.corpus), "scope": scope},
                          embedder) for scope in ("doc", "corpus")}
    return {"target_pages": pages, "embedder": embedder, "docs": len(corpus.pdfs), "generate_s": generated,
            "ingest": ingest, **sizes, "answer": answers, "load_after": os.getloadavg()[0]}


ROWS = (  # label, how to read it off a size's result, format
    ("pages (documents)", lambda r: f"{r['ingest']['pages']} ({r['ingest']['docs']})", None),
    ("questions (each scope)", lambda r: r["answer"]["doc"]["questions"], None),
    ("embedder", lambda r: r["embedder"], None),
    ("line windows", lambda r: r["ingest"]["windows"], "{:,}"),
    ("ingest pages/s", lambda r: r["ingest"]["pages"] / r["ingest"]["wall_s"], "{:.1f}"),
    ("ingest wall s", lambda r: r["ingest"]["wall_s"], "{:.0f}"),
    ("ingest peak RSS MB", lambda r: r["ingest"]["peak_rss_mb"], "{:.0f}"),
    ("answer doc-scoped peak RSS MB", lambda r: r["answer"]["doc"]["peak_rss_mb"], "{:.0f}"),
    ("answer corpus-wide peak RSS MB", lambda r: r["answer"]["corpus"]["peak_rss_mb"], "{:.0f}"),
    ("detect doc-scoped p50 ms", lambda r: 1000 * r["answer"]["doc"]["p50_s"], "{:.1f}"),
    ("detect doc-scoped p95 ms", lambda r: 1000 * r["answer"]["doc"]["p95_s"], "{:.1f}"),
    ("detect corpus-wide p50 ms", lambda r: 1000 * r["answer"]["corpus"]["p50_s"], "{:.1f}"),
    ("detect corpus-wide p95 ms", lambda r: 1000 * r["answer"]["corpus"]["p95_s"], "{:.1f}"),
    ("detect corpus-wide cold (1st) ms", lambda r: 1000 * r["answer"]["corpus"]["cold_s"], "{:.0f}"),
    ("page hit@1 doc / corpus-wide", lambda r: f"{_pct(r['answer']['doc']['hit_at_1'])} / "
                                               f"{_pct(r['answer']['corpus']['hit_at_1'])}", None),
    ("warehouse MB on disk", lambda r: r["warehouse_mb"], "{:.1f}"),
    ("LanceDB MB on disk", lambda r: r["lance_mb"], "{:.1f}"),
)
GROWN = ("line windows", "ingest pages/s", "ingest peak RSS MB", "answer doc-scoped peak RSS MB",
         "answer corpus-wide peak RSS MB", "detect doc-scoped p50 ms", "detect corpus-wide p50 ms",
         "detect corpus-wide p95 ms", "warehouse MB on disk", "LanceDB MB on disk")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def table(results: list[dict]) -> str:
    """The figures of every size, one column a size."""
    width = max(len(label) for label, _, _ in ROWS) + 2
    head = "".join(f"{r['target_pages']:>14,}" for r in results)
    out = [f"{'target pages':<{width}}{head}"]
    for label, get, fmt in ROWS:
        out.append(f"{label:<{width}}" + "".join(f"{(fmt.format(get(r)) if fmt else str(get(r))):>14}"
                                                 for r in results))
    return "\n".join(out)


def growth(results: list[dict]) -> str:
    """How each figure grows from one size to the next: the ratio against the pages' ratio, and the change per 1,000
    pages (a figure that grows with the pages is one that the corpus, not the work in flight, bounds)."""
    getters = {label: get for label, get, _ in ROWS}
    out = []
    for a, b in zip(results, results[1:]):
        pa, pb = a["ingest"]["pages"], b["ingest"]["pages"]
        note = "" if a["embedder"] == b["embedder"] else f" (embedders differ: {a['embedder']} -> {b['embedder']})"
        out.append(f"{pa:,} -> {pb:,} pages (x{pb / pa:.1f}){note}:")
        for label in GROWN:
            va, vb = float(getters[label](a)), float(getters[label](b))
            ratio = f"x{vb / va:.2f}" if va else "n/a"
            out.append(f"  {label:<32} {va:>10.1f} -> {vb:>10.1f}  {ratio:>7}  {1000 * (vb - va) / (pb - pa):+.2f} "
                       f"per 1k pages")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", default="1000,10000", help="corpus sizes in pages, comma-separated")
    ap.add_argument("--embedder", default="minilm", help="one embedder for all sizes, or one per size (minilm|hash)")
    ap.add_argument("--questions", type=int, default=100, help="questions a size answers (each scope)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="where the generated corpus is kept")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="where each size's fresh home is made")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gen-workers", type=int, default=2, help="processes drawing the corpus")
    ap.add_argument("--json", type=Path, default=None, help="every figure, as JSON")
    ap.add_argument("--from-json", type=Path, nargs="+", default=None,
                    help="print the table of earlier runs' --json files (sizes in the order given), measuring nothing")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--params", default="{}", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    offline_environment()
    if args.child:
        print("RESULT " + json.dumps(run_child(args.child, json.loads(args.params))))
        return 0
    if args.from_json:
        results = [r for path in args.from_json for r in json.loads(path.read_text())]
        print(table(results))
        if len(results) > 1:
            print(growth(results))
        return 0
    sizes = [int(s) for s in args.pages.split(",")]
    embedders = args.embedder.split(",")
    if len(embedders) not in (1, len(sizes)):
        raise SystemExit("--embedder: one for every size, or one per size")
    embedders = embedders * len(sizes) if len(embedders) == 1 else embedders
    load0, results = os.getloadavg()[0], []
    for pages, embedder in zip(sizes, embedders):
        results.append(measure(pages, embedder, args))
        print(f"[{pages:,} pages done: ingest {results[-1]['ingest']['wall_s']:.0f} s]", file=sys.stderr)
        if args.json:  # each size as it ends: a long run stopped midway keeps what it measured
            args.json.write_text(json.dumps(results, indent=2))
    loads = ", ".join(f"{r['load_after']:.1f}" for r in results)
    print(f"scale benchmark: {os.cpu_count()} cores, load average {load0:.1f} at start, after each size: {loads}; "
          f"{args.questions} questions a size and scope")
    print(table(results))
    if len(results) > 1:
        print(growth(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
