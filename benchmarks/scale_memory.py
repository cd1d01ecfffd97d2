"""What holds memory, by part: ingest (RSS as the documents go in, with the embedding cache and DuckDB's own
accounting beside it) and answering (each cache a question run fills, filled one after the other on an ingested
home, with RSS after each and the bytes the cache itself holds).

    python benchmarks/scale_memory.py answer --home DIR        # a home ingested by benchmarks/scale.py
    python benchmarks/scale_memory.py ingest --home NEW --corpus DIR --pages 1000 [--steps 5]

``answer``: RSS after the imports, the question embedder (onnx model), every document's corpus view
(``CorpusCache.docs``: lines, tokens, windows, vocabulary), one keyword index over all of them (a corpus-wide
question's), every document's vectors held for doc-scoped search (``VectorStore._doc_vectors``), and a corpus-wide
LanceDB search; each with the bytes its Python objects hold (a deep size; polars frames by ``estimated_size``;
numpy by ``nbytes``; the BM25 index is Rust, seen in RSS only) and DuckDB's ``duckdb_memory()``. ``ingest``: the
corpus's documents ingested in ``--steps`` slices into a fresh home (the embedder is the environment's:
``ARBITER_EMBEDDER__KIND``), with RSS, peak RSS, the embedding cache's entries and DuckDB's memory after each.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import flows  # noqa: E402,F401  (offline defaults before prefect is imported)
from flows.ingest import ingest_into  # noqa: E402
from schemas.settings import get_settings, offline_environment  # noqa: E402
from tasks.corpus import embed  # noqa: E402
from tasks.corpus.sample.varied import ensure_varied_corpus  # noqa: E402
from tasks.detect.run import CorpusCache, question_embedder  # noqa: E402
from warehouse.db import Warehouse  # noqa: E402
from warehouse.vectors import VectorStore  # noqa: E402


def rss_mb() -> float:
    """Resident set now (``/proc/self/statm``), MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def deep_mb(obj, seen: set[int] | None = None) -> float:
    """Bytes an object graph holds (containers, strings, numbers, numpy arrays, polars frames), MB."""
    seen = set() if seen is None else seen
    stack, total = [obj], 0
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, pl.DataFrame):
            total += o.estimated_size()
        elif isinstance(o, np.ndarray):
            total += o.nbytes + sys.getsizeof(o) * (o.base is None)
        else:
            total += sys.getsizeof(o)
            if isinstance(o, dict):
                stack.extend(o.keys())
                stack.extend(o.values())
            elif isinstance(o, (list, tuple, set, frozenset)):
                stack.extend(o)
            elif hasattr(o, "__dict__") and not isinstance(o, type):
                stack.append(o.__dict__)
    return total / 2**20


def duckdb_mb(wh: Warehouse) -> float:
    return float(wh.scalar("SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()")) / 2**20


def answer_profile(home: Path) -> None:
    settings = get_settings(home=home)
    steps: list[tuple[str, float, float, str]] = []

    def step(name: str, held: float | None = None, note: str = "") -> None:
        steps.append((name, rss_mb(), held if held is not None else float("nan"), note))

    step("imports")
    with Warehouse(settings.duckdb_path, read_only=True) as wh:
        pages = int(wh.scalar("SELECT coalesce(sum(pages), 0) FROM documents WHERE status = 'ok'"))
        step("warehouse open", duckdb_mb(wh), "duckdb_memory()")
        vectors = VectorStore(settings.lance_dir)
        embedder = question_embedder(settings, vectors)
        embedder.embed(["warm-up question about the revenue of a unit"])
        step(f"question embedder ({settings.embedder.kind})")
        cache = CorpusCache(wh, settings)
        t0 = time.perf_counter()
        docs = cache.docs(None)
        loaded = time.perf_counter() - t0
        fields = {name: sum(deep_mb(getattr(d, name)) for d in docs) for name in
                  ("lines", "toc", "windows", "line_texts", "line_tokens", "window_tokens", "window_meta",
                   "line_nos", "line_pages", "line_sections", "titles", "section_paths")}
        step(f"corpus views of {len(docs)} documents", sum(fields.values()), f"loaded in {loaded:.1f} s")
        for d in docs:
            d.vocabulary()
        step("  + each document's vocabulary", sum(deep_mb(d.__dict__.get("_vocabulary")) for d in docs))
        t0 = time.perf_counter()
        index = cache.index(None)
        step("keyword index over all documents", deep_mb(index.token_sets) + deep_mb(index.refs),
             f"built in {time.perf_counter() - t0:.1f} s; its BM25 (Rust) is in RSS only")
        for d in docs:
            vectors._doc_vectors(d.doc_id)
        held = sum(deep_mb(v) for v in vectors._docs.values())
        step("vectors of every document (doc-scoped search)", held)
        for q in ("What was revenue at the unit in 1999?", "How many incidents concerned shift patterns?"):
            vectors.search(embedder.embed([q])[0], None, 90)
        step("corpus-wide LanceDB search (2 queries)")
        step("duckdb after all", duckdb_mb(wh), "duckdb_memory()")
    print(f"answering memory on {home}: {pages:,} pages, {len(docs)} documents, "
          f"{sum(d.windows.height for d in docs):,} windows, {sum(len(d.line_texts) for d in docs):,} lines")
    print(f"{'step':<50}{'RSS MB':>9}{'delta':>9}{'held MB':>10}  note")
    last = 0.0
    for name, rss, bytes_held, note in steps:
        print(f"{name:<50}{rss:>9.0f}{rss - last:>+9.0f}{bytes_held:>10.1f}  {note}")
        last = rss
    print("corpus views by field (MB): " + ", ".join(f"{k} {v:.1f}" for k, v in fields.items()))
    print(f"per 1,000 pages: corpus views {1000 * sum(fields.values()) / pages:.1f} MB, vectors held "
          f"{1000 * held / pages:.1f} MB; peak RSS {peak_mb():.0f} MB")


def ingest_profile(home: Path, corpus: Path, pages: int, steps: int) -> None:
    settings = get_settings(home=home)
    pdfs = ensure_varied_corpus(corpus, pages).pdfs
    per = -(-len(pdfs) // steps)
    print(f"ingest memory into {home}: {len(pdfs)} documents in {steps} slices, embedder {settings.embedder.kind}")
    print(f"{'after':<16}{'pages':>8}{'RSS MB':>9}{'peak MB':>9}{'embed cache':>13}{'cache MB':>10}{'duckdb MB':>11}"
          f"{'s':>7}")
    with Warehouse(settings.duckdb_path) as wh:
        print(f"{'start':<16}{0:>8}{rss_mb():>9.0f}{peak_mb():>9.0f}{len(embed._cache):>13}{0:>10.1f}"
              f"{duckdb_mb(wh):>11.1f}{0:>7}")
        for i in range(0, len(pdfs), per):
            t0 = time.perf_counter()
            ingest_into(wh, f"mem-{i}", pdfs[i:i + per], settings, log=lambda m: None)
            done = int(wh.scalar("SELECT coalesce(sum(pages), 0) FROM documents WHERE status = 'ok'"))
            cache = deep_mb(embed._cache)
            print(f"{f'docs {i + len(pdfs[i:i + per])}':<16}{done:>8}{rss_mb():>9.0f}{peak_mb():>9.0f}"
                  f"{len(embed._cache):>13}{cache:>10.1f}{duckdb_mb(wh):>11.1f}{time.perf_counter() - t0:>7.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("answer", "ingest"))
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, default=Path("/tmp/arbiter-scale-corpus"))
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    offline_environment()
    if args.what == "answer":
        answer_profile(args.home)
    else:
        ingest_profile(args.home, args.corpus, args.pages, args.steps)


if __name__ == "__main__":
    main()
