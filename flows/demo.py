"""``arbiter demo``: the whole pipeline, offline, on the sample corpus the project generates itself."""

from __future__ import annotations

from collections.abc import Callable

from schemas.settings import Settings


def run_demo(settings: Settings, echo: Callable[[str], None] = print) -> int:
    from flows.ingest import ingest_flow
    from tasks.sample_corpus import generate_sample_corpus

    sample = generate_sample_corpus(settings.home / "sample")
    echo(f"sample corpus: {len(sample.pdfs)} PDFs and {sample.questions_path} in {sample.root}")
    summary = ingest_flow([str(p) for p in sample.pdfs], home=str(settings.home))
    echo(f"ingest {summary['run_id']}: {summary['ingested']} ingested, {summary['skipped_unchanged']} unchanged, "
         f"{summary['failed']} failed, {summary['windows']} windows embedded ({summary['seconds']}s)")
    echo(f"warehouse: {settings.duckdb_path.resolve()}  vectors: {settings.lance_dir.resolve()}")
    return 0 if not summary["failed"] else 2
