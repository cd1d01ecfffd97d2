"""Parse benchmark: our ``parse_pdf`` against bare ``page.get_text("dict")`` over every PDF of the evaluation data.

Run from the repository root: ``python benchmarks/parse.py [--data ../shared/data] [--json out.json]``.
Goal: parse time <= 1.5x the bare extraction. Also counts toc sources and outline-less documents whose headings
were recovered (>= 3 sections). Sections for ingest/embedding timings can be added to :func:`main`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pymupdf

from tasks.corpus.parse import DocumentError, parse_pdf

REPO = Path(__file__).resolve().parents[1]
TEXT_FLAGS = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE


class Clock:
    """Wall and CPU seconds of a block (CPU time is robust to other processes sharing the machine)."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def bare_dict(data: bytes, flags: int | None = None) -> Clock:
    """Open the PDF and run ``get_text("dict")`` on every page (default flags unless given)."""
    with Clock() as clock:
        doc = pymupdf.open(stream=data, filetype="pdf")
        for page in doc:
            page.get_text("dict") if flags is None else page.get_text("dict", flags=flags)
        doc.close()
    return clock


def bench_parse(data_dir: Path) -> dict:
    """Per-corpus timings and toc statistics for every ``*.pdf`` under ``data_dir`` (corpus = first folder)."""
    files = sorted(data_dir.rglob("*.pdf"))
    if not files:
        raise SystemExit(f"no PDF under {data_dir}; pass --data pointing at the evaluation data folder")
    parse_pdf(files[0])  # warm-up: first-call costs (imports, regex compilation, polars pools) are not parsing
    totals: dict[str, Counter] = defaultdict(Counter)
    sources: Counter = Counter()
    recovered: Counter = Counter()
    failures: dict[str, str] = {}
    for n, path in enumerate(files):
        corpus = path.relative_to(data_dir).parts[0]
        data = path.read_bytes()
        if n % 2:  # alternate the order so that neither side profits from warm caches
            base, base_text = bare_dict(data), bare_dict(data, TEXT_FLAGS)
        try:
            with Clock() as ours:
                doc = parse_pdf(path, data)
        except DocumentError as exc:
            failures[str(path)] = f"{exc.kind}: {exc}"
            continue
        if not n % 2:
            base, base_text = bare_dict(data), bare_dict(data, TEXT_FLAGS)
        tot = totals[corpus]
        tot.update(docs=1, pages=doc.pages, lines=doc.lines.height)
        for name, clock in (("dict", base), ("dict_text", base_text), ("parse", ours)):
            tot[f"{name}_s"] += clock.wall
            tot[f"{name}_cpu_s"] += clock.cpu
        sources[doc.toc_source] += 1
        if doc.toc_source != "outline":
            ok = doc.toc_source == "headings" and doc.toc.height >= 3
            recovered.update({"outline_less": 1, f"{corpus}:outline_less": 1})
            recovered.update({"headings_ge3": ok, f"{corpus}:headings_ge3": ok})
    return {"corpora": {k: dict(v) for k, v in totals.items()}, "toc_sources": dict(sources),
            "recovered": dict(recovered), "failures": failures}


def print_parse(report: dict) -> None:
    print("wall seconds; ratios on wall (and CPU) time. dict = bare get_text('dict') with default flags (image bytes")
    print("included); dict(text) = the same with the parser's text-only flags.")
    print(f"{'corpus':12s} {'docs':>4s} {'pages':>5s} {'lines':>6s} {'dict':>6s} {'dict(text)':>10s} {'parse':>6s} "
          f"{'parse/dict':>16s} {'parse/dict(text)':>17s}")
    grand: Counter = Counter()
    for corpus, t in sorted(report["corpora"].items()):
        grand.update(t)
        _row(corpus, t)
    _row("ALL", grand)
    print("toc sources:", report["toc_sources"])
    rec = report["recovered"]
    print(f"outline-less documents: {rec.get('outline_less', 0)}, with >= 3 recovered sections: "
          f"{rec.get('headings_ge3', 0)}  " + ", ".join(f"{k}={v}" for k, v in sorted(rec.items()) if ":" in k))
    for path, err in report["failures"].items():
        print("FAILED", path, err)


def _row(name: str, t: Counter) -> None:
    r = t["parse_s"] / t["dict_s"], t["parse_cpu_s"] / t["dict_cpu_s"]
    rt = t["parse_s"] / t["dict_text_s"], t["parse_cpu_s"] / t["dict_text_cpu_s"]
    print(f"{name:12s} {t['docs']:4d} {t['pages']:5d} {t['lines']:6d} {t['dict_s']:6.2f} {t['dict_text_s']:10.2f} "
          f"{t['parse_s']:6.2f} {r[0]:8.2f}x ({r[1]:.2f}x) {rt[0]:9.2f}x ({rt[1]:.2f}x)")


def bench_ingest(pdf_dir: Path, embedder: str = "minilm") -> dict:
    """First ingest (parse + embed + store) of a folder into a fresh home, then re-ingest of the unchanged folder."""
    import tempfile

    from flows.ingest import ingest_into
    from schemas.settings import get_settings, offline_environment
    from warehouse.db import Warehouse

    offline_environment()
    with tempfile.TemporaryDirectory(prefix="arbiter-bench-ingest-") as home:
        settings = get_settings(home=Path(home), embedder={"kind": embedder})
        with Warehouse(settings.duckdb_path) as wh:
            t0 = time.perf_counter()
            first = ingest_into(wh, "bench-first", [pdf_dir], settings, log=lambda m: None)
            first_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = ingest_into(wh, "bench-again", [pdf_dir], settings, log=lambda m: None)
            again_s = time.perf_counter() - t0
    return {"folder": str(pdf_dir), "embedder": embedder, "files": first.files, "ingested": len(first.ingested),
            "failed": len(first.failed), "windows": first.windows, "first_s": round(first_s, 2),
            "parse_s": round(first.parse_seconds, 2), "embed_s": round(first.embed_seconds, 2),
            "reingest_s": round(again_s, 2), "reingest_skipped": len(again.skipped),
            "reingest_share": round(again_s / first_s, 4) if first_s else None}


def print_ingest(r: dict) -> None:
    print(f"\ningest of {r['folder']} ({r['embedder']} embedder): {r['ingested']}/{r['files']} files, "
          f"{r['windows']} windows in {r['first_s']} s (parse {r['parse_s']} s, embed {r['embed_s']} s)")
    print(f"re-ingest of the unchanged folder: {r['reingest_s']} s, {r['reingest_skipped']} skipped = "
          f"{r['reingest_share']:.2%} of the first ingest (goal <= 5%)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="folder of evaluation PDFs")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    ap.add_argument("--ingest", action="store_true",
                    help="also time ingest with embeddings of mmlongbench/pdfs and its unchanged re-ingest")
    ap.add_argument("--skip-parse", action="store_true", help="only the ingest figures")
    args = ap.parse_args(argv)
    report: dict = {}
    if not args.skip_parse:
        report["parse"] = bench_parse(args.data)
        print_parse(report["parse"])
    if args.ingest or args.skip_parse:
        report["ingest"] = bench_ingest(args.data / "mmlongbench" / "pdfs")
        print_ingest(report["ingest"])
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
