"""A real small LLM (llama.cpp llama-server, Qwen2.5 Coder 0.5B Instruct Q4_K_M) as arbiter and generator, beside
the offline rules arbiter and extractive generator, on a fixed small slice of the MMLongBench-Doc dev set.

    python benchmarks/local_llm.py --data ../shared/data --home DIR [--limit 6] [--pool 4] [--top-k 3]

DIR must hold an ingested dev set (a copy of the bench home): both runs answer the same questions in both regimes
on the same ingest. The local server comes from ``arbiter llm serve``'s cache (built / fetched on first use, see
``tasks/llm/local_server.py``); it runs with one thread and is always stopped. Per provider: arbiter validity
(share of arbiter calls that ended with a valid reply), page hit@1 of the first primary passage, answer accuracy
per regime, seconds per model call, tokens, and the cached-token share of the input per regime (the server's
prompt cache). The model is far too weak to judge well: these figures are the real-model baseline, not a goal.
Writes ``local_llm.json`` under DIR.

Baseline (2026-12-01, defaults, one thread on a loaded 2-core machine, 621 s wall): rules/extractive hit@1 0.167,
accuracy 0/6 in both regimes; local model arbiter validity 1.0 after retries (7 attempts for 6 calls), hit@1 0.0
(4 of 6 not found), batch generation 1 of 2 valid (a finish_reason 'length' cut and evidence on unshown lines:
a recorded failure, the run went on), 64 s per arbiter attempt, cached input share 0.41 arbiter, 0.52 batch,
0.54 sequential.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from schemas.settings import Settings, offline_environment
from tasks.llm.local_server import LocalLlamaServer, build_llama_server, fetch_model

CALLS_SQL = """
SELECT stage, coalesce(regime, '-') AS regime, count(*) AS attempts, count(DISTINCT call_group) AS calls,
       count(DISTINCT call_group) FILTER (WHERE status = 'ok') AS valid_calls,
       round(avg(latency_ms) / 1000, 2) AS s_per_attempt, sum(input_tokens) AS input_tokens,
       sum(cached_tokens) AS cached_tokens, sum(output_tokens) AS output_tokens,
       round(sum(cached_tokens) / nullif(sum(input_tokens), 0), 4) AS cached_share,
       count(*) FILTER (WHERE error LIKE '%finish_reason%') AS truncated,
       string_agg(DISTINCT output_mode, ',') AS output_modes
FROM llm_calls WHERE run_id = ? GROUP BY ALL ORDER BY stage, regime
"""


def question_slice(data: Path, home: Path, limit: int) -> Path:
    """Every k-th dev question that has gold pages (fixed: the same slice on every run)."""
    rows = [json.loads(ln) for ln in (data / "mmlongbench" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
            if ln.strip()]
    rows = [r for r in rows if r.get("gold_pages_0based")]
    step = max(1, len(rows) // limit)
    out = home / "local-llm-slice.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows[::step][:limit]), encoding="utf-8")
    return out


def run(questions: Path, data: Path, settings: Settings, label: str) -> str:
    # the flows import Prefect and the pipeline: loaded once the server (if any) is up, not for --help
    from flows.answer import answer_into, question_docs
    from flows.ingest import ingest_into
    from warehouse.db import Warehouse
    from warehouse.runs import fails_run, finish_run, start_run

    def log(message: str) -> None:
        print(f"[{label}] {message}", file=sys.stderr, flush=True)

    with Warehouse(settings.duckdb_path) as wh:
        run_id = start_run(wh, "answer", {"questions": str(questions), "regime": "both", "benchmark": "local_llm",
                                          "arbiter": settings.arbiter.provider,
                                          "generator": settings.generate.provider})
        with fails_run(wh, run_id):
            ingest_into(wh, run_id, question_docs(questions, data), settings, log=log)
            summary = answer_into(wh, run_id, questions, settings, data_root=data, regime="both",
                                  profile=settings.dispatch_profile, log=log)
        finish_run(wh, run_id, "partial" if summary["statuses"].get("failed") else "ok", summary)
    return run_id


def figures(settings: Settings, run_id: str, questions: Path, wall_s: float) -> dict:
    from warehouse.db import Warehouse  # (as in run)

    gold = {str(r["qid"]): set(r["gold_pages_0based"]) for r in map(json.loads, questions.read_text().splitlines())}
    with Warehouse(settings.duckdb_path, read_only=True) as wh:
        calls = wh.query(CALLS_SQL, [run_id])
        retrieval = wh.query("SELECT question_id, status, result FROM retrieval_results WHERE run_id = ?", [run_id])
        answers = wh.query("SELECT regime, count(*) AS n, count(*) FILTER (WHERE correct) AS correct, "
                           "count(*) FILTER (WHERE status = 'failed') AS failed FROM answers WHERE run_id = ? "
                           "GROUP BY ALL ORDER BY regime", [run_id])
    hits = 0
    for r in retrieval:
        result = json.loads(r["result"]) if r["result"] else {}
        primary = result.get("primary") or []
        hits += bool(primary and primary[0]["page"] in gold.get(r["question_id"], set()))
    arbiter = [c for c in calls if c["stage"] == "arbiter"]
    arb_calls = sum(c["calls"] for c in arbiter)
    return {
        "run_id": run_id, "wall_s": round(wall_s, 1), "questions": len(gold),
        "arbiter_validity": round(sum(c["valid_calls"] for c in arbiter) / arb_calls, 4) if arb_calls else None,
        "retrieval_status": {s: sum(r["status"] == s for r in retrieval) for s in {r["status"] for r in retrieval}},
        "hit_at_1": round(hits / len(gold), 4) if gold else None,
        "accuracy": {a["regime"]: {"n": a["n"], "correct": a["correct"], "failed": a["failed"],
                                   "accuracy": round(a["correct"] / a["n"], 4) if a["n"] else None} for a in answers},
        "calls": calls,
    }


def render(label: str, f: dict) -> str:
    lines = [(f"{label}: run {f['run_id']}, {f['questions']} questions, {f['wall_s']} s; arbiter validity "
              f"{f['arbiter_validity']}, hit@1 {f['hit_at_1']}, retrieval {f['retrieval_status']}"),
             ("  accuracy " + ", ".join(f"{k} {v['correct']}/{v['n']} (failed {v['failed']})"
                                        for k, v in f["accuracy"].items()))]
    for c in f["calls"]:
        lines.append(f"  {c['stage']:<8} {c['regime']:<10} calls {c['calls']:>3} valid {c['valid_calls']:>3} "
                     f"attempts {c['attempts']:>3} truncated {c['truncated']:>2} s/attempt {c['s_per_attempt']:>6} "
                     f"in {c['input_tokens']} cached {c['cached_tokens']} ({c['cached_share']}) out "
                     f"{c['output_tokens']} modes {c['output_modes']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True, help="an ingested dev-set home (a copy of the bench home)")
    ap.add_argument("--limit", type=int, default=6, help="questions in the slice")
    ap.add_argument("--pool", type=int, default=4, help="arbiter pool (a verdict: ~100-150 output tokens)")
    ap.add_argument("--top-k", type=int, default=3, help="passages given to generation")
    ap.add_argument("--max-output-tokens", type=int, default=160, help="generation output cap")
    ap.add_argument("--text-chars", type=int, default=80, help="maxLength of free text (reasons, values)")
    args = ap.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the server's context manager stops it (it runs in its own process group)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    offline_environment()
    home = args.home.resolve()
    questions = question_slice(args.data, home, args.limit)

    def settings_for(provider: str, base_url: str | None = None, model: str | None = None) -> Settings:
        s = Settings(home=home)
        s.detect.pool_size, s.generate.top_k, s.generate.max_output_tokens = args.pool, args.top_k, args.max_output_tokens
        s.generate.seq_max_seconds = 600.0  # a 0.5B model on one thread: the budget is tokens, not seconds
        s.arbiter.provider = "rules" if provider == "offline" else "openai"
        s.generate.provider = "extractive" if provider == "offline" else "openai"
        if base_url:
            s.llm.base_url, s.llm.model, s.llm.timeout_s = base_url, model or "local", 600.0
            s.llm.max_in_flight, s.llm.max_attempts, s.llm.bound_text_chars = 1, 2, args.text_chars
        return s

    report: dict = {"slice": str(questions), "pool": args.pool, "top_k": args.top_k}
    t0 = time.perf_counter()
    offline = settings_for("offline")
    report["offline"] = figures(offline, run(questions, args.data, offline, "rules/extractive"), questions,
                                time.perf_counter() - t0)
    print(render("rules/extractive", report["offline"]), flush=True)
    with LocalLlamaServer(build_llama_server(), fetch_model(), ctx_size=8192) as server:
        report["server"] = {"model": server.model.name, "threads": server.threads, "ctx_size": server.ctx_size}
        local = settings_for("local", server.base_url, server.alias)
        t0 = time.perf_counter()
        run_id = run(questions, args.data, local, "local llm")
        report["local_llm"] = figures(local, run_id, questions, time.perf_counter() - t0)
    print(render("local llm (openai provider -> llama-server)", report["local_llm"]), flush=True)
    (home / "local_llm.json").write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
