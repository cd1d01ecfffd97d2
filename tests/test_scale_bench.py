"""benchmarks/scale.py at a tiny size (hash embedder, children in this process): every figure of the table is
measured, and the growth lines compare the sizes."""

from __future__ import annotations

import argparse

from benchmarks.scale import growth, measure, percentile, run_child, table


def test_percentile_is_nearest_rank():
    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 95) == 95.0
    assert percentile([5.0], 95) == 5.0


def test_table_and_growth_at_two_tiny_sizes(tmp_path, monkeypatch):
    monkeypatch.setenv("ARBITER_EMBEDDER__KIND", "hash")
    args = argparse.Namespace(corpus=tmp_path / "corpus", work=tmp_path / "work", seed=0, gen_workers=1, questions=2)
    results = [measure(pages, "hash", args, run=lambda kind, params, _: run_child(kind, params)) for pages in (50, 120)]
    small, large = results
    assert small["ingest"]["failed"] == 0 and large["ingest"]["pages"] > small["ingest"]["pages"] >= 50
    for r in results:
        assert r["warehouse_mb"] > 0 and r["lance_mb"] > 0
        for scope in ("doc", "corpus"):
            answered = r["answer"][scope]
            assert r["docs"] >= 2 and answered["questions"] == 2 and answered["peak_rss_mb"] > 0
            assert 0 < answered["p50_s"] <= answered["p95_s"] and answered["cold_s"] > 0
    shown = table(results)
    assert "ingest pages/s" in shown and "detect corpus-wide p95 ms" in shown and "LanceDB MB on disk" in shown
    assert all(len(line.split()) > 2 for line in shown.splitlines())
    grown = growth(results)
    assert f"{small['ingest']['pages']:,} -> {large['ingest']['pages']:,} pages" in grown
    assert "per 1k pages" in grown and "answer corpus-wide peak RSS MB" in grown
