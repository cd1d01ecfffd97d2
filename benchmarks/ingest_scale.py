"""Corpus-scale ingest: every PDF under ``--data`` from a clean home, single process and on a Dask cluster of
process workers, against the embedder alone on the same windows.

    python benchmarks/ingest_scale.py --data ../shared/data [--modes single,dask] [--every 1] [--workers 2] [--keep DIR]

Each mode runs in a subprocess of its own (a clean home, a cold embedding cache, its own peak RSS) and prints
pages/s, windows/s, seconds per stage (parse, embed = model time, write), peak RSS and the unchanged re-ingest
time. Right after its ingest, the same subprocess runs the embedder alone on the blocks (each line once) that
ingest ran: the limit the ingest is judged against (goal: ingest wall <= 1.1x that), measured a minute later
rather than at the end of the whole run, so a shared machine's load moves both alike. Process CPU seconds are
printed beside wall seconds (a Dask mode's workers are other processes: their CPU is not in it). On a shared
machine the ratios measured in one run are the figures to quote, not the absolute rates.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# --baseline-src runs a child on another checkout's code (e.g. `git archive <commit>`): the before, side by side
sys.path.insert(0, os.environ.get("ARBITER_BENCH_SRC") or str(REPO))

from schemas.settings import get_settings, offline_environment  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pdfs_under(data: Path, every: int) -> list[Path]:
    files = sorted(data.rglob("*.pdf"))[::every]
    if not files:
        raise SystemExit(f"no PDF under {data}; pass --data pointing at the evaluation data folder")
    return files


def run_mode(mode: str, pdfs: list[Path], home: Path, workers: int) -> dict:
    """One ingest from a clean ``home`` and the unchanged re-ingest, in this process. ``baseline``: the
    single-process ingest of whatever code ``ARBITER_BENCH_SRC`` holds (its summary may lack newer fields)."""
    from flows.ingest import ingest_into
    from warehouse.db import Warehouse

    settings = get_settings(home=home)
    process_many, cluster, api = None, None, None
    if mode == "dask":
        # lazy: only the dask mode needs these (and prefect-dask, the 'scale' extra, installed)
        from distributed import Client, LocalCluster
        from prefect_dask import DaskTaskRunner

        from flows.prefect_api import loopback_api

        from flows.ingest import on_runner

        stack = ExitStack()
        api = stack.enter_context(loopback_api(home / "prefect"))
        cluster = stack.enter_context(LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                                   dashboard_address=None))
        process_many = on_runner(DaskTaskRunner(address=cluster.scheduler_address))
    with Warehouse(settings.duckdb_path) as wh:
        t0, c0 = time.perf_counter(), time.process_time()
        first = ingest_into(wh, f"bench-{mode}", pdfs, settings, process_many, log=lambda m: None)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        again = ingest_into(wh, f"bench-{mode}-again", pdfs, settings, process_many, log=lambda m: None)
        reingest = time.perf_counter() - t0
        pages = wh.con.execute("SELECT coalesce(sum(pages), 0) FROM documents WHERE status = 'ok'").fetchone()[0]
    out = {"mode": mode, "files": first.files, "ingested": len(first.ingested), "failed": len(first.failed),
           "pages": int(pages), "windows": first.windows, "embedded": getattr(first, "embedded", first.windows),
           "wall_s": wall, "cpu_s": cpu, "parse_s": first.parse_seconds, "embed_s": first.embed_seconds,
           "write_s": getattr(first, "write_seconds", 0.0),
           "reingest_s": reingest, "reingest_skipped": len(again.skipped), "peak_rss_mb": peak_rss_mb()}
    if cluster is not None:
        with Client(cluster) as client:
            out["worker_peak_rss_mb"] = sorted(client.run(peak_rss_mb).values())
        stack.close()
    return out


def embedder_alone(home: Path) -> dict:
    """The blocks ``home``'s ingest ran through the model (rebuilt from its lines and toc), run again as ingest
    runs them (``ingest.parse_workers`` threads, each with its own embedder, the blocks dealt out in turn): the
    model's work alone, nothing else of ingest."""
    from tasks.corpus.blocks import line_blocks
    from tasks.corpus.embed import bundled_tokenizer, thread_embedder
    from warehouse.db import Warehouse

    settings = get_settings(home=home)
    spec = (settings.embedder.kind, settings.embedder.device, settings.ingest.embed_batch_size,
            settings.embedder.threads)
    tokenizer = bundled_tokenizer()
    blocks: list[str] = []
    with Warehouse(settings.duckdb_path, read_only=True) as wh:
        for (doc_id,) in wh.con.execute("SELECT doc_id FROM documents WHERE status = 'ok'").fetchall():
            lines = wh.con.sql(f"SELECT line_no, page, text FROM lines WHERE doc_id = '{doc_id}'").pl()
            toc = wh.con.sql(f"SELECT * FROM toc WHERE doc_id = '{doc_id}'").pl()
            blocks.extend(line_blocks(tokenizer, lines, toc, settings.ingest.embed_block_lines)[1])
    n = max(1, settings.ingest.parse_workers)
    ready = threading.Barrier(n + 1)

    def run(part: list[str]) -> None:
        embedder = thread_embedder(*spec)
        embedder.embed(part[:32])  # warm-up: first-call allocations are not throughput
        ready.wait()
        embedder.token_states(part)

    threads = [threading.Thread(target=run, args=(blocks[i::n],)) for i in range(n)]
    for t in threads:
        t.start()
    ready.wait()
    t0, c0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.join()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    tokens = sum(len(e.ids) for e in tokenizer.encode_batch(blocks))
    return {"texts": len(blocks), "tokens": tokens, "seconds": seconds, "cpu_s": cpu, "threads": n}


def child(args: argparse.Namespace) -> int:
    offline_environment()
    mode = "single" if args.child == "baseline" else args.child
    result = run_mode(mode, pdfs_under(args.data, args.every), args.home, args.workers)
    result["mode"] = args.child
    if args.child != "baseline":  # the baseline's code may predate blocks; its limit is not the one judged
        result["alone"] = embedder_alone(args.home)
    print("RESULT " + json.dumps(result))
    return 0


def spawn(args: argparse.Namespace, what: str, home: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", what, "--home", str(home), "--data", str(args.data),
           "--every", str(args.every), "--workers", str(args.workers)]
    env = dict(os.environ)
    if what == "baseline":
        env["ARBITER_BENCH_SRC"] = env["PYTHONPATH"] = str(args.baseline_src.resolve())
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise SystemExit(f"{what} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def show(r: dict) -> str:
    out = (f"{r['mode']:8s} {r['ingested']}/{r['files']} files, {r['pages']} pages, {r['windows']} windows "
           f"({r['embedded']} model inputs) in {r['wall_s']:.1f} s (CPU {r.get('cpu_s', 0):.1f} s): "
           f"{r['pages'] / r['wall_s']:.2f} pages/s, {r['windows'] / r['wall_s']:.1f} windows/s\n"
           f"         stages (summed over documents; they overlap): parse {r['parse_s']:.1f} s, embed (model) "
           f"{r['embed_s']:.1f} s, write {r['write_s']:.1f} s; peak RSS {r['peak_rss_mb']:.0f} MB")
    if "worker_peak_rss_mb" in r:
        out += f" (+ workers {', '.join(f'{m:.0f}' for m in r['worker_peak_rss_mb'])} MB)"
    out += f"\n         unchanged re-ingest: {r['reingest_s']:.2f} s ({r['reingest_skipped']} skipped)"
    alone = r.get("alone")
    if alone:
        tok = f", {alone['tokens'] / alone['seconds']:.0f} tokens/s" if alone["tokens"] else ""
        out += (f"\n         embedder alone ({alone.get('threads', 1)} threads), same process, next: "
                f"{alone['texts']} blocks in {alone['seconds']:.1f} s "
                f"(CPU {alone['cpu_s']:.1f} s; {alone['texts'] / alone['seconds']:.1f} blocks/s{tok}, "
                f"{r['pages'] / alone['seconds']:.2f} pages/s); ingest wall / embedder alone = "
                f"{r['wall_s'] / alone['seconds']:.2f}x (goal <= 1.1x)")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--modes", default="single,dask", help="single (threads of one process) and/or dask")
    ap.add_argument("--workers", type=int, default=2, help="Dask process workers (one thread each)")
    ap.add_argument("--every", type=int, default=1, help="every n-th PDF only (a quicker sample)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--baseline-src", type=Path, default=None,
                    help="an earlier checkout: its single-process ingest of the same PDFs runs first, for the ratio")
    ap.add_argument("--keep", type=Path, default=None,
                    help="leave each mode's home under this folder (to evaluate what it ingested), not in a temp one")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--home", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    results: dict = {"pdfs": len(pdfs_under(args.data, args.every)), "modes": {}}
    load0 = results["load_at_start"] = os.getloadavg()[0]
    modes = (["baseline"] if args.baseline_src else []) + args.modes.split(",")
    with tempfile.TemporaryDirectory(prefix="arbiter-ingest-scale-") as tmp:
        for mode in modes:
            home = (args.keep or Path(tmp)) / mode
            if home.exists():
                raise SystemExit(f"{home} exists: ingest_scale starts each mode from a clean home")
            results["modes"][mode] = spawn(args, mode, home)
            results["modes"][mode]["load_after"] = os.getloadavg()[0]
    loads = ", ".join(f"{m} {r['load_after']:.1f}" for m, r in results["modes"].items())
    print(f"ingest of {results['pdfs']} PDFs under {args.data} from a clean home; {os.cpu_count()} cores, load "
          f"average {load0:.1f} at start, after each mode: {loads} (a loaded machine: compare this run's ratios)")
    for r in results["modes"].values():
        print(show(r))
    if "baseline" in results["modes"]:
        b = results["modes"]["baseline"]
        for m in (m for m in results["modes"] if m != "baseline"):
            print(f"{m} vs baseline ({args.baseline_src}): {b['wall_s'] / results['modes'][m]['wall_s']:.2f}x "
                  f"the throughput (same PDFs, same run)")
    if {"single", "dask"} <= set(results["modes"]):
        s, d = results["modes"]["single"], results["modes"]["dask"]
        print(f"dask ({args.workers} process workers) / single wall: {d['wall_s'] / s['wall_s']:.2f}x "
              "(on 2 cores no gain is expected: one process already keeps both busy)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
