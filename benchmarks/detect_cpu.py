"""Detection's CPU a question, by part, on an answered home; optionally its outputs, to compare two checkouts.

    python benchmarks/detect_cpu.py --home DIR [--reps 3] [--dump detections.jsonl]

``--home`` is a home that has answered a question set (``arbiter eval`` / ``arbiter answer`` / ``arbiter demo``);
its newest answer or evaluate run's questions are detected again, nothing is written. The first pass over the
questions is *cold* (each document's corpus view, keyword index and vectors are built on first use, as in a
run); then ``--reps`` *warm* passes, whose CPU and per-part wall times (plan, each detector, aggregate,
absent terms) are printed. ``--dump`` writes each question's plan, hits, candidates and absent terms of the
first warm pass as sorted JSON lines: two checkouts' dumps are byte-identical when a change kept detection's
outputs. Side by side with another checkout's code (``git worktree add /tmp/old COMMIT``; a shared machine's
speed moves, so run the two alternately):

    PYTHONPATH=/tmp/old python benchmarks/detect_cpu.py --home H --dump /tmp/old.jsonl
    python benchmarks/detect_cpu.py --home H --dump /tmp/new.jsonl && cmp /tmp/old.jsonl /tmp/new.jsonl

The embedder is the home's (``ARBITER_EMBEDDER__KIND``, e.g. ``hash`` for a home ingested with it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))  # after PYTHONPATH: PYTHONPATH=OLD_CHECKOUT runs this file on that checkout's code

import flows  # noqa: E402,F401  (offline defaults before prefect is imported)
from schemas.settings import get_settings  # noqa: E402
from tasks import pipeline  # noqa: E402
from tasks.detect.run import CorpusCache, question_embedder, run_detection  # noqa: E402
from warehouse.db import Warehouse  # noqa: E402
from warehouse.questions import load_questions  # noqa: E402
from warehouse.vectors import VectorStore  # noqa: E402


def detection_record(qid: str, d) -> dict:
    return {"qid": qid, "plan": [list(d.plan.detectors), d.plan.rule],
            "hits": [h.model_dump(mode="json") for h in d.hits],
            "candidates": [[c.brief.model_dump(mode="json"), c.rrf_rank, c.in_pool] for c in d.candidates],
            "absent": d.absent_terms}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--reps", type=int, default=3, help="warm passes over the questions")
    ap.add_argument("--dump", type=Path, help="the first warm pass's detections, as JSON lines")
    ap.add_argument("--run", help="this answer or evaluate run's questions (default: the newest such run)")
    args = ap.parse_args()
    settings = get_settings(args.home)
    with Warehouse(settings.duckdb_path, read_only=True) as wh:
        run_id = args.run or wh.scalar("SELECT run_id FROM runs WHERE flow IN ('answer', 'evaluate') "
                                       "ORDER BY started_at DESC LIMIT 1")
        if run_id is None:
            sys.exit(f"{args.home} holds no answer or evaluate run: answer a question set there first")
        rows = load_questions(wh, run_id)
        vectors = VectorStore(settings.lance_dir)
        embedder = question_embedder(settings, vectors)
        corpus = CorpusCache(wh, settings)
        questions = [(pipeline.parsed_question(r), pipeline.scope_doc_ids(wh, r)) for r in rows
                     if r["status"] != "failed"]

        def detect(q, scope):
            return run_detection(q, scope, corpus, vectors if embedder else None, embedder, settings)

        c0 = time.process_time()
        for q, scope in questions:
            detect(q, scope)
        cold = time.process_time() - c0
        parts: dict[str, float] = defaultdict(float)
        out = args.dump.open("w") if args.dump else None
        c0 = time.process_time()
        for rep in range(args.reps):
            for q, scope in questions:
                d = detect(q, scope)
                for k, v in d.seconds.items():
                    parts[k] += v
                if out and rep == 0:
                    out.write(json.dumps(detection_record(q.question_id, d), sort_keys=True) + "\n")
        warm = time.process_time() - c0
        if out:
            out.close()
    n, total = len(questions), len(questions) * args.reps
    print(f"{args.home}: {n} questions of run {run_id}")
    print(f"cold pass (documents loaded on first use): {1000 * cold / n:.2f} ms CPU a question")
    print(f"warm, {args.reps} passes: {1000 * warm / total:.2f} ms CPU a question (all threads); wall by part: "
          + ", ".join(f"{k} {1000 * v / total:.2f}" for k, v in parts.items()))


if __name__ == "__main__":
    main()
