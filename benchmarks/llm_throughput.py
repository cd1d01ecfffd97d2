"""Throughput of LLMClient + OpenAIProvider against the fake server with injected latency.

Starts ``tests/fake_openai.py`` in its own process (so the server does not compete for this one's GIL), sends
small structured calls from a thread pool at several ``max_in_flight`` settings, and prints calls per second
and the share of the ideal (concurrency / mean latency). Each setting runs with the DuckDB call log in a temp
dir (``sync``: each row durable before the call returns, the default: journaled and fdatasync'ed, inserted in
batches; ``batch``: ``durable_log=False``, rows inserted in batches without the journal) and without it
(``none``), to show what logging costs. It ends with the cost of one llm_calls insert and one journal write.

Each setting makes ``--rounds`` (32) calls per slot, e.g. 1024 at 32 in flight, so that the share measures the
steady state: the ramp-up and the last round's tail (slots idle while the slowest calls finish) cost about the same
time whatever the count, and weigh a quarter as much as with 8 rounds (measured at 32 in flight without logging:
89% of ideal with 256 calls, 94% with 1024). ``--requests N`` makes N calls per setting instead. About a minute.

    python benchmarks/llm_throughput.py [--latency 0.2 --jitter 0.05 --rounds 32 --concurrency 1 8 32]
    python benchmarks/llm_throughput.py --requests 1024 --concurrency 32
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from schemas.settings import LLMSettings  # noqa: E402
from tasks.llm.base import LLMRequest  # noqa: E402
from tasks.llm.client import LLMClient  # noqa: E402
from tasks.llm.openai_provider import OpenAIProvider  # noqa: E402
from warehouse.db import Warehouse  # noqa: E402


class SmallAnswer(BaseModel):
    answer: str
    found: bool


def start_server(latency: float, jitter: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "fake_openai.py"), "--latency", str(latency), "--jitter", str(jitter),
         "--content", json.dumps({"answer": "42", "found": True})],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline().strip()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"fake server did not start (said {line!r})")
    return proc, f"http://127.0.0.1:{line.split()[1]}/v1"


def run(base_url: str, concurrency: int, n: int, wh: Warehouse | None, run_id: str, durable: bool = True) -> dict:
    settings = LLMSettings(base_url=base_url, api_key="sk-bench", max_in_flight=concurrency, timeout_s=30.0)
    client = LLMClient(OpenAIProvider(settings), wh, run_id, settings, durable_log=durable)
    requests = [
        LLMRequest(stage="generate", question_id=f"q{i}", response_model=SmallAnswer, max_output_tokens=50,
                   messages=[{"role": "system", "content": "Answer the question from the passage, as JSON."},
                             {"role": "user", "content": f"Question {i}: what is the answer? Passage: it is 42."}])
        for i in range(n)
    ]
    client.complete(requests[0])  # warm the connection pool and the schema cache
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(client.complete, requests))
    client.flush()  # the timed window includes committing every row
    wall = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    assert all(r.parsed.answer == "42" for r in results)
    return {"wall": wall, "qps": n / wall, "cpu_share": cpu / wall}


def bench_record(i: int, run_id: str):
    from warehouse.db import utcnow
    from warehouse.llm_log import CallRecord

    return CallRecord(
        call_id=f"{run_id}-{i}", call_group=f"{run_id}-{i}", run_id=run_id, question_id=f"q{i}", stage="generate",
        regime="batch", step=1, provider="openai", model="gpt-4o-mini", request_hash="h" * 64,
        messages=json.dumps([{"role": "user", "content": "x" * 2000}]), response="{}" * 400, parsed="{}",
        input_tokens=1, cached_tokens=0, output_tokens=1, reasoning_tokens=0, tokens_counted=False, latency_ms=1.0,
        status="ok", error=None, attempt=1, batch_api=False, fallback_from=None, replay_of=None, created_at=utcnow(),
    )


def time_inserts(wh: Warehouse, n: int) -> tuple[float, float]:
    """Mean wall and CPU milliseconds of one single-row llm_calls insert."""
    from warehouse.llm_log import insert_calls

    records = [bench_record(i, "bench-insert") for i in range(n)]
    started, cpu = time.perf_counter(), time.process_time()
    for record in records:
        insert_calls(wh, [record])
    return (time.perf_counter() - started) / n * 1000, (time.process_time() - cpu) / n * 1000


def time_journal(wh: Warehouse, n: int) -> tuple[float, float]:
    """Mean wall and CPU milliseconds of one durable write by a lone writer (JSON line, append, fdatasync)."""
    from warehouse.llm_log import CallLog

    log = CallLog(wh, linger_s=3600)  # the insert waits for the flush below, outside the timing
    records = [bench_record(i, "bench-journal") for i in range(n)]
    started, cpu = time.perf_counter(), time.process_time()
    for record in records:
        log.write(record)
    wall, cpu = (time.perf_counter() - started) / n * 1000, (time.process_time() - cpu) / n * 1000
    log.close()
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--jitter", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=32, help="calls per slot and setting (16 calls at 1 in flight)")
    parser.add_argument("--requests", type=int, help="calls per setting instead of rounds x in flight")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    args = parser.parse_args()
    proc, base_url = start_server(args.latency, args.jitter)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            wh = Warehouse(Path(tmp) / "bench.duckdb")
            print(f"fake server {base_url}, latency {args.latency}s ± {args.jitter}s")
            print(f"{'in flight':>9} {'calls':>6} {'log':>5} {'wall s':>7} {'calls/s':>8} {'ideal':>7} "
                  f"{'share':>6} {'cpu':>5}")
            for concurrency in args.concurrency:
                n = args.requests or args.rounds * concurrency
                n = n if concurrency > 1 else min(n, 16)
                ideal = concurrency / args.latency
                for label, target, durable in (("sync", wh, True), ("batch", wh, False), ("none", None, True)):
                    r = run(base_url, concurrency, n, target, f"bench-{concurrency}-{label}", durable)
                    print(f"{concurrency:>9} {n:>6} {label:>5} {r['wall']:>7.2f} {r['qps']:>8.1f} {ideal:>7.1f} "
                          f"{r['qps'] / ideal:>6.1%} {r['cpu_share']:>5.0%}")
            insert_wall, insert_cpu = time_inserts(wh, 200)
            journal_wall, journal_cpu = time_journal(wh, 200)
            print(f"one llm_calls insert: {insert_wall:.2f} ms ({insert_cpu:.2f} ms CPU); one journal write + "
                  f"fdatasync: {journal_wall:.2f} ms ({journal_cpu:.2f} ms CPU) (rows logged: "
                  f"{wh.scalar('SELECT count(*) FROM llm_calls')})")
            wh.close()
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
