"""Question throughput of the answer flow against the pure work it orchestrates.

Runs a question set (the MMLongBench dev set, or its first ``--limit`` questions) twice on a copy of an ingested
home:

1. **end to end**: ``answer_flow`` in this process, as ``arbiter answer`` runs it (Prefect, the warehouse writes,
   the call log), with every ``Warehouse`` statement timed and each one charged to the stage it ran in;
2. **pure work**: the same stage functions (detection, the arbiter's brief + call + dispatch, routing + the
   regime's generation) called directly with no Prefect and no writes (reads of lines stay: they are work).

It prints the per-question time by stage (detect, arbitrate, generate, warehouse writes, orchestration),
questions/s of both, and the ratio; the goal is end to end >= 0.8 x pure work (overhead <= 25% of the work).

    python benchmarks/throughput.py [--home DIR] [--data ../shared/data] [--limit N] [--regime auto] [--json]

With ``--fake-llm LATENCY`` it measures the other bound instead: arbiter and generator on the ``openai`` provider
against ``tests/fake_openai.py`` (in its own process, LATENCY seconds a call), ``--questions`` questions (the sample
corpus's, repeated under new ids) with ``ARBITER_LLM__MAX_IN_FLIGHT`` = ``--in-flight``, durable call logging on,
and prints questions/s against the ideal (in-flight slots / (calls a question x latency)) over the question loop
(first question submitted to last row written), and beside it over all of ``answer_into``, whose set-up before
the loop (parsing the question file, the first import of the SDK, ~0.4 s) is paid once a run:

    python benchmarks/throughput.py --fake-llm 0.2 --in-flight 32 --questions 256

The home: ``--home`` (an ingested home, e.g. the one ``benchmarks/arbiter_dev.py`` builds), else a hash-embedder
home ingested into a temp folder. It is copied first: the benchmark never writes the source.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import flows  # noqa: E402,F401  (offline defaults before prefect is imported)
from flows import answer as answer_mod  # noqa: E402
from flows.ingest import ingest_into  # noqa: E402
from schemas.contracts import ArbiterOutput  # noqa: E402
from schemas.settings import get_settings  # noqa: E402
from tasks import pipeline  # noqa: E402
from tasks.arbiter.brief import build_arbiter_request  # noqa: E402
from tasks.arbiter.dispatch import dispatch  # noqa: E402
from tasks.arbiter.run import passage_text  # noqa: E402
from tasks.arbiter.validate import complete_verdicts, make_validator  # noqa: E402
from tasks.detect.run import CorpusCache, question_embedder, run_detection  # noqa: E402
from tasks.generate.loop import run_regime  # noqa: E402
from tasks.generate.router import route  # noqa: E402
from tasks.generate.run import prepare_passage, regimes_for, sequential_budget  # noqa: E402
from tasks.llm.client import LLMClient  # noqa: E402
from tasks.providers import arbiter_provider, generator_provider  # noqa: E402
from warehouse.db import Warehouse  # noqa: E402

try:  # the one writer of a question's rows (an older tree, the figures before, wrote from tasks.pipeline)
    from warehouse import sink as sink_mod  # noqa: E402
except ImportError:
    sink_mod = None
from warehouse.questions import load_questions  # noqa: E402
from warehouse.runs import finish_run, start_run  # noqa: E402
from warehouse.vectors import VectorStore  # noqa: E402

STAGES = ("detect", "arbitrate", "generate", "write")
# the statements (``transaction`` is only a block around some of them)
WH_METHODS = ("execute", "query", "query_df", "insert_df", "insert_rows")


# -- instrumentation of the end-to-end run -----------------------------------------------------------------------
class Meter:
    """Wall time per (stage, kind): ``kind`` 'work' (the stage function less its warehouse statements) or
    'warehouse' (statements, outermost only). Statements of other threads (the call log's writer) are kept apart."""

    def __init__(self):
        self.local = threading.local()
        self.main = threading.get_ident()
        self.t: dict[tuple[str, str], float] = defaultdict(float)
        self.statements: dict[str, int] = defaultdict(int)

    def stage(self) -> str:
        return getattr(self.local, "stage", "loop")

    def wrap_stage(self, name: str, fn):
        def timed(*args, **kwargs):
            self.local.stage = name
            self.local.wh_in_stage = 0.0
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                total = time.perf_counter() - t0
                self.t[(name, "work")] += total - self.local.wh_in_stage
                self.local.stage = "loop"
        return timed

    def wrap_wh(self, fn):
        meter = self

        def timed(*args, **kwargs):
            depth = getattr(meter.local, "depth", 0)
            if depth:
                return fn(*args, **kwargs)
            meter.local.depth = 1
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                meter.local.depth = 0
                stage = meter.stage() if threading.get_ident() == meter.main else "call-log thread"
                meter.t[(stage, "warehouse")] += dt
                meter.statements[stage] += 1
                if stage in STAGES:
                    meter.local.wh_in_stage += dt
        return timed


def instrument(meter: Meter) -> None:
    for name in WH_METHODS:
        setattr(Warehouse, name, meter.wrap_wh(getattr(Warehouse, name)))
    # the stages of tasks.pipeline's one walk, and the sink's writes (the names an older tree, the figures before,
    # used are timed when it has them)
    for name, stage in (("detect_question", "detect"), ("run_detection", "detect"), ("arbitrate_question",
                        "arbitrate"), ("arbitrate", "arbitrate"), ("answer_question", "generate"),
                        ("generate", "generate"), ("_write", "write")):
        if hasattr(pipeline, name):
            setattr(pipeline, name, meter.wrap_stage(stage, getattr(pipeline, name)))
    if sink_mod is not None:
        sink_mod.write_questions = meter.wrap_stage("write", sink_mod.write_questions)
    inner = answer_mod.answer_into

    def timed_answer_into(*args, **kwargs):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            meter.t[("answer_into", "wall")] += time.perf_counter() - t0
            meter.t[("answer_into", "cpu")] += time.process_time() - c0
    answer_mod.answer_into = timed_answer_into
    name = "walk_questions" if hasattr(answer_mod, "walk_questions") else "process_concurrently"  # (older tree)
    walk = getattr(answer_mod, name)

    def timed_walk(*args, **kwargs):
        # the question loop alone: from the first question submitted to the last row written, without the set-up
        # answer_into does before it (parsing the question file, the first import of the model's SDK, the corpus)
        t0, c0, m0, k0 = time.perf_counter(), time.process_time(), machine_jiffies(), children_cpu()
        try:
            yield from walk(*args, **kwargs)
        finally:
            meter.t[("questions", "wall")] += time.perf_counter() - t0
            meter.t[("questions", "cpu")] += time.process_time() - c0
            m1, k1 = machine_jiffies(), children_cpu()
            meter.t[("machine", "busy")] = (m1[0] - m0[0]) / max(1, m1[1] - m0[1])
            for pid, (cpu, cmd) in k1.items():
                if pid in k0:
                    meter.t[("children", cmd)] += cpu - k0[pid][0]
    setattr(answer_mod, name, timed_walk)


def machine_jiffies() -> tuple[int, int]:
    """(busy, all) CPU ticks of the whole machine so far (Linux /proc/stat; zeros elsewhere)."""
    try:
        ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0, 0
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return sum(ticks) - idle, sum(ticks)


def children_cpu() -> dict[int, tuple[float, str]]:
    """CPU seconds so far of this process's child processes (the call processes), by pid, with their module."""
    found: dict[int, tuple[float, str]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
            if int(fields[1]) != os.getpid():
                continue
            cmd = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError):
            continue
        name = next((c.decode() for c in cmd if c.startswith(b"tasks.")),
                    "the fake server" if b"--serve-fake" in cmd else "other")
        found[int(stat.parent.name)] = ((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), name)
    return found


# -- the pure work ------------------------------------------------------------------------------------------------
def pure_work(wh: Warehouse, run_id: str, settings, regime: str, profile: str) -> tuple[dict[str, float], int]:
    """Every question of ``run_id`` through the stage functions, nothing written, no Prefect: seconds per stage."""
    vectors = VectorStore(settings.lance_dir)
    embedder = question_embedder(settings, vectors)
    corpus = CorpusCache(wh, settings)
    arb = LLMClient(arbiter_provider(settings.arbiter.provider, settings, wh), None, run_id, settings.llm)
    gen = LLMClient(generator_provider(settings.generate.provider, settings, wh), None, run_id, settings.llm)
    lines_text = passage_text(wh)
    overrides = settings.dispatch.overrides() or None
    t: dict[str, float] = defaultdict(float)
    rows = [r for r in load_questions(wh, run_id) if r["status"] == "answered"]
    for row in rows:
        question = pipeline.parsed_question(row)
        t0 = time.perf_counter()
        detection = run_detection(question, pipeline.scope_doc_ids(wh, row), corpus, vectors if embedder else None,
                                  embedder, settings)
        t1 = time.perf_counter()
        pool = detection.pool()
        ids = [c.candidate_id for c in pool]
        if pool:
            reply = arb.complete(build_arbiter_request(question, pool, detection.absent_terms),
                                 validate=make_validator(ids))
            output, _ = complete_verdicts(reply.parsed, ids)
            prov, model, call_id = reply.provider, reply.model, reply.call_id
        else:
            output, prov, model, call_id = ArbiterOutput(verdicts=[]), arb.provider.name, arb.provider.model, None
        result = dispatch(question.question_id, output, pool, profile, overrides, arbiter_provider=prov,
                          arbiter_model=model, arbiter_call_id=call_id, lines_text=lines_text)
        t2 = time.perf_counter()
        gs = settings.generate
        rt = route(question, result, gs)
        passages = None
        for reg in regimes_for(regime, rt.regime):
            if result.status != "found" or not result.passages():
                continue
            if passages is None:
                passages = [prepare_passage(wh, p) for p in result.passages()[: gs.top_k]]
            budget = rt.budget if reg == "batch" else sequential_budget(question, passages, gs, settings.llm.tokenizer)
            run_regime(reg, gen, question, passages, budget, gs.max_output_tokens, settings.llm.tokenizer)
        t3 = time.perf_counter()
        t["detect"] += t1 - t0
        t["arbitrate"] += t2 - t1
        t["generate"] += t3 - t2
    return t, len(rows)


# -- setup --------------------------------------------------------------------------------------------------------
def source_home(args, tmp: Path) -> tuple[Path, str]:
    if args.home:
        return Path(args.home), os.environ.get("ARBITER_EMBEDDER__KIND", "minilm")
    home = tmp / "hash-home"
    os.environ["ARBITER_EMBEDDER__KIND"] = "hash"
    settings = get_settings(home)
    print(f"no --home: ingesting the dev PDFs into {home} with the hash embedder", file=sys.stderr)
    with Warehouse(settings.duckdb_path) as wh:
        run_id = start_run(wh, "ingest", {"paths": [str(args.data / "mmlongbench" / "pdfs")]})
        s = ingest_into(wh, run_id, [args.data / "mmlongbench" / "pdfs"], settings, log=lambda m: None)
        finish_run(wh, run_id, "ok", s.as_dict())
    return home, "hash"


# -- the LLM-bound run ---------------------------------------------------------------------------------------------
def serve_fake(latency: float) -> None:
    """The fake server's process: an arbiter reply naming the brief's first candidate primary, an answer for
    generation, each after ``latency`` seconds; prints its port, serves until stdin closes."""
    sys.path.insert(0, str(REPO / "tests"))
    from fake_openai import FakeOpenAI, FakeResponse, completion  # noqa: PLC0415 (a test helper, this mode only)

    def respond(body: dict) -> FakeResponse:
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if name == "ArbiterOutput":
            user = next(m["content"] for m in body["messages"] if m["role"] == "user")
            ids = re.findall(r'"id":\s*"([^"]+)"', user)
            content = {"verdicts": [{"candidate_id": ids[0], "role": "primary", "reason": "fake: first candidate",
                                     "relevance": 0.9, "anchor_found": True}] if ids else [], "not_found": not ids}
        else:
            content = {"value": "42", "evidence": [], "answer_found": True, "complete_answer_found": True,
                       "confidence": 0.9, "caveats": []}
        return FakeResponse(body=completion(content), delay_s=latency)

    fake = FakeOpenAI(default=respond)
    fake.start()
    print(f"PORT {fake.port}", flush=True)
    try:
        sys.stdin.read()
    finally:
        fake.stop()


def fake_llm_run(args, tmp: Path) -> None:
    from tasks.corpus.sample.generate import generate_sample_corpus  # noqa: PLC0415 (this mode only)

    server = subprocess.Popen([sys.executable, __file__, "--serve-fake", str(args.fake_llm)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        port = server.stdout.readline().split()[1]
        sample = generate_sample_corpus(tmp / "sample")
        base = [json.loads(ln) for ln in sample.questions_path.read_text().splitlines() if ln.strip()]
        rows = [{**base[i % len(base)], "qid": f"{base[i % len(base)]['qid']}-{i}"} for i in range(args.questions)]
        questions = tmp / "questions.jsonl"
        questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
        os.environ.update({"ARBITER_EMBEDDER__KIND": "hash", "ARBITER_ARBITER__PROVIDER": "openai",
                           "ARBITER_GENERATE__PROVIDER": "openai", "ARBITER_LLM__BASE_URL": f"http://127.0.0.1:{port}/v1",
                           "ARBITER_LLM__API_KEY": "sk-bench", "ARBITER_LLM__MAX_IN_FLIGHT": str(args.in_flight),
                           "ARBITER_LLM__DURABLE_LOG": "true"})
        home = tmp / "home"
        meter = Meter()
        instrument(meter)
        summary = answer_mod.answer_flow(str(questions), data_root=str(sample.root), home=str(home),
                                         regime=args.regime)
        loop, setup = meter.t[("questions", "wall")], meter.t[("answer_into", "wall")]
        os.environ.update({"ARBITER_ARBITER__PROVIDER": "rules", "ARBITER_GENERATE__PROVIDER": "extractive"})
        offline = get_settings(home)
        with Warehouse(offline.duckdb_path) as wh:
            calls = wh.scalar("SELECT count(*) FROM llm_calls WHERE run_id = ? AND provider = 'openai'",
                              [summary["run_id"]])
            # the same questions' detection: CPU work in Python (one interpreter lock) that no number of calls in
            # flight overlaps, so a floor under the wall time (the offline stages stand in for the model's)
            work, n_work = pure_work(wh, summary["run_id"], offline, args.regime, offline.dispatch_profile)
        ideal = args.in_flight / (calls / summary["processed"] * args.fake_llm)
        qps = summary["processed"] / loop
        print(f"{summary['processed']} questions, statuses {summary['statuses']}, {calls} calls "
              f"({calls / summary['processed']:.2f} a question) at {args.fake_llm * 1000:.0f} ms, "
              f"{args.in_flight} in flight, durable logging on")
        floor = max(summary["processed"] / ideal, work["detect"])
        cpu = meter.t[("questions", "cpu")]
        print(f"questions/s {qps:.2f}, ideal {ideal:.2f} (slots / (calls a question x latency)): {qps / ideal:.0%} "
              f"of ideal (goal >= 80%); question loop {loop:.2f}s, {cpu:.1f}s CPU of this process (all threads)")
        beside = {cmd: t for (kind, cmd), t in meter.t.items() if kind == "children"}
        print("beside this process, CPU a question: " + (", ".join(
            f"{cmd} {1000 * t / summary['processed']:.1f} ms" for cmd, t in sorted(beside.items())) or "none")
            + f"; the machine's cores {meter.t[('machine', 'busy')]:.0%} busy over the loop")
        print(f"with answer_into's set-up before the loop (question file, SDK import, corpus): {setup:.2f}s, "
              f"{summary['processed'] / setup:.2f} q/s, {summary['processed'] / setup / ideal:.0%} of ideal")
        # the questions' Python work runs under one interpreter lock: one core's worth at most, whatever the slots
        cpu_ms = 1000 * cpu / summary["processed"]
        print(f"CPU {cpu_ms:.1f} ms a question ({cpu / loop:.0%} of the loop's wall): at one core the most is "
              f"{1000 / cpu_ms:.0f} q/s; 80% of ideal needs <= {1000 / (0.8 * ideal):.1f} ms; load average "
              f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        print(f"the same questions' detection alone (no writes, no Prefect, one after the other): "
              f"{work['detect']:.1f}s for {n_work}; with it as the floor, ideal {summary['processed'] / floor:.2f} "
              f"q/s, reached {qps * floor / summary['processed']:.0%}")
    finally:
        server.stdin.close()
        server.wait(10)


def main() -> None:
    if sys.argv[1:2] == ["--serve-fake"]:
        serve_fake(float(sys.argv[2]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", help="ingested home to copy (default: the bench home, else a fresh hash home)")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--limit", type=int, default=None, help="first N questions of the dev set")
    ap.add_argument("--regime", default="auto")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--fake-llm", type=float, default=None, metavar="LATENCY",
                    help="measure the openai path against the fake server with this latency (seconds) instead")
    ap.add_argument("--in-flight", type=int, default=32)
    ap.add_argument("--questions", type=int, default=256)
    args = ap.parse_args()
    if args.fake_llm is not None:
        with tempfile.TemporaryDirectory(prefix="arbiter-throughput-") as tmpdir:
            fake_llm_run(args, Path(tmpdir))
        return
    qfile = args.data / "mmlongbench" / "questions.jsonl"
    with tempfile.TemporaryDirectory(prefix="arbiter-throughput-") as tmpdir:
        tmp = Path(tmpdir)
        src, kind = source_home(args, tmp)
        os.environ["ARBITER_EMBEDDER__KIND"] = kind
        home = tmp / "home"
        shutil.copytree(src, home, ignore=shutil.ignore_patterns("*.jsonl", "reports", "*.wal"))
        questions = tmp / "mmlongbench" / "questions.jsonl"  # same set name as the original
        questions.parent.mkdir()
        lines = [ln for ln in qfile.read_text().splitlines() if ln.strip()][: args.limit]
        questions.write_text("\n".join(lines) + "\n")
        meter = Meter()
        instrument(meter)
        t0 = time.perf_counter()
        summary = answer_mod.answer_flow(str(questions), data_root=str(args.data), home=str(home),
                                         regime=args.regime)
        flow_wall = time.perf_counter() - t0
        instrumented = dict(meter.t)
        statements = dict(meter.statements)
        settings = get_settings(home)
        with Warehouse(settings.duckdb_path) as wh:
            pure, n_pure = pure_work(wh, summary["run_id"], settings, args.regime, settings.dispatch_profile)
    report(summary, instrumented, statements, flow_wall, pure, n_pure, args)


def report(summary, t, statements, flow_wall, pure, n_pure, args) -> None:
    n = max(summary["processed"], 1)
    loop = t.get(("answer_into", "wall"), 0.0)
    work = {s: t.get((s, "work"), 0.0) for s in STAGES}
    reads = sum(v for (stage, kind), v in t.items() if kind == "warehouse" and stage not in ("write",
                                                                                           "call-log thread"))
    writes = work.pop("write") + t.get(("write", "warehouse"), 0.0)
    thread = t.get(("call-log thread", "warehouse"), 0.0)
    orchestration = loop - sum(work.values()) - reads - writes
    pure_total, n_pure = sum(pure.values()), max(n_pure, 1)
    e2e_ms, pure_ms = 1000 * loop / n, 1000 * pure_total / n_pure
    ms = {"e2e": {**{s: 1000 * v / n for s, v in work.items()}, "warehouse reads": 1000 * reads / n,
                  "warehouse writes": 1000 * writes / n, "orchestration": 1000 * orchestration / n,
                  "total": e2e_ms},
          "pure": {**{s: 1000 * v / n_pure for s, v in pure.items()}, "total": pure_ms}}
    out = {
        "questions": summary["processed"], "statuses": summary["statuses"], "regime": args.regime,
        "per_question_ms": ms,
        "statements_per_question": {k: round(v / n, 1) for k, v in statements.items()},
        "call_log_thread_ms_per_question": 1000 * thread / n,
        "qps": {"e2e": 1000 / e2e_ms if e2e_ms else 0.0, "e2e_with_flow_startup": n / flow_wall,
                "pure": 1000 / pure_ms if pure_ms else 0.0},
        "ratio_e2e_over_pure": pure_ms / e2e_ms if e2e_ms else None,
        "overhead_of_work": (e2e_ms - pure_ms) / pure_ms if pure_ms else None,
        "flow_wall_s": flow_wall, "answer_loop_s": loop, "pure_s": pure_total,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    e, p = ms["e2e"], ms["pure"]
    print(f"{summary['processed']} questions (regime {args.regime}), statuses {summary['statuses']}; pure work on "
          f"{n_pure} answered")
    print(f"{'ms / question':<40}{'end to end':>12}{'pure work':>12}")
    for s in ("detect", "arbitrate", "generate"):
        print(f"{s + (' (less its statements)' if s == 'detect' else ''):<40}{e[s]:>12.1f}{p[s]:>12.1f}")
    print(f"{'warehouse statements in the stages':<40}{e['warehouse reads']:>12.1f}{'(in stages)':>12}")
    print(f"{'warehouse writes (chunks + llm_calls)':<40}{e['warehouse writes']:>12.1f}{'-':>12}")
    print(f"{'orchestration (Prefect, loop, bar)':<40}{e['orchestration']:>12.1f}{'-':>12}")
    print(f"{'total':<40}{e['total']:>12.1f}{p['total']:>12.1f}")
    print(f"statements/question by stage: {out['statements_per_question']}; call-log thread "
          f"{out['call_log_thread_ms_per_question']:.1f} ms/question of inserts beside the main thread")
    q = out["qps"]
    print(f"questions/s: end to end {q['e2e']:.2f} ({q['e2e_with_flow_startup']:.2f} with the flow's start-up, "
          f"{flow_wall:.1f}s in all), pure work {q['pure']:.2f}")
    print(f"ratio end to end / pure = {out['ratio_e2e_over_pure']:.2f} (goal >= 0.80); the pipeline's own time is "
          f"{out['overhead_of_work']:.0%} of the work (goal <= 25%)")


if __name__ == "__main__":
    main()
