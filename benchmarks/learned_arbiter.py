"""Learned arbiter on MMLongBench-Doc, split by document: trained on the gold of ~60% of the documents, measured on
the questions of the others, beside the rules arbiter and RRF on the very same candidate pools.

    python benchmarks/learned_arbiter.py --data ../shared/data [--home DIR] [--kind logreg|hgb] [--train-share 0.6]

Pools: ``--home/arbiter_pools.jsonl`` as ``benchmarks/arbiter_dev.py`` caches them (built with it when missing:
ingest + detection of the 355 questions, slow), or any such file with ``--pools``. The split is a deterministic
hash of each question's document path, so no test document's questions (nor its pages) are seen in training.
The model is saved and reloaded through the artifact code (a temporary models folder) before scoring.

Figures on the test split: page hit@1/@5 over answerable questions (all, and text-evidence ones), for the learned
arbiter after the dispatcher (``--profile``), its raw ranking by p, the rules arbiter after the dispatcher, its
ranking, and RRF; not-found precision/recall; milliseconds per pool (learned: features + model).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from schemas.settings import Settings, offline_environment  # noqa: E402

from benchmarks.arbiter_dev import by_verdict, question_group  # noqa: E402


def in_train(doc: str, share: float, split: int = 0) -> bool:
    """Deterministic document split: the first 8 hex digits of sha256('<split>:<doc path>') as a fraction of 2**32
    (split 0 hashes the bare path)."""
    key = doc if split == 0 else f"{split}:{doc}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 2 ** 32 < share


def load_pools(pools_path: Path, questions_path: Path, share: float, split: int = 0):
    from schemas.contracts import CandidateBrief, ParsedQuestion
    from tasks.arbiter.learned import LabeledPool

    docs = {str(json.loads(ln)["qid"]): json.loads(ln)["doc"]
            for ln in questions_path.read_text(encoding="utf-8").splitlines() if ln.strip()}
    out: dict[str, list] = {"train": [], "test": []}
    for line in pools_path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["gold"] is None:
            continue
        cands = [CandidateBrief.model_validate(c) for c in rec["candidates"]]
        gold = set(rec["gold"])
        doc = docs[rec["qid"]]
        pool = LabeledPool(ParsedQuestion.model_validate(rec["question"]), cands,
                           [int(c.page in gold) for c in cands], doc, answerable=bool(gold))
        pool.kind = question_group(rec["gold"], rec["labels"])  # type: ignore[attr-defined]
        out["train" if in_train(doc, share, split) else "test"].append(pool)
    return out


def dedupe(pages):
    seen: set = set()
    return [p for p in pages if not (p in seen or seen.add(p))]


def evaluate(pools, provider, profile: str) -> dict:
    from tasks.arbiter.dispatch import dispatch
    from tasks.arbiter.rules import arbitrate
    from tasks.arbiter.validate import complete_verdicts

    stats: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    ms: dict[str, list[float]] = defaultdict(list)
    for p in pools:
        ids = [c.candidate_id for c in p.candidates]
        by_id = {c.candidate_id: c for c in p.candidates}
        gold = {c.page for c, lab in zip(p.candidates, p.labels) if lab} if p.answerable else set()
        ranked, not_found = {"rrf": dedupe(c.page for c in p.candidates)}, {}
        for name, fn in (("learned", lambda: provider.arbitrate(p.question, p.candidates)),
                         ("rules", lambda: arbitrate(p.question, p.candidates))):
            t0 = time.perf_counter()
            output = fn()
            ms[name].append(1000 * (time.perf_counter() - t0))
            if len(p.candidates) >= 30:
                ms[f"{name}_30"].append(ms[name][-1])
            output, _ = complete_verdicts(output, ids)
            result = dispatch(p.question.question_id, output, p.candidates, profile)
            ranked[name] = dedupe(x.page for x in result.passages()) if result.status == "found" else []
            ranked[f"{name}_rank"] = dedupe(by_id[v.candidate_id].page for v in by_verdict(output.verdicts, by_id))
            not_found[name] = result.status == "not_found"
        for group in ("all", p.kind):
            s = stats[group]
            s["n"].append(1)
            for name, nf in not_found.items():
                s[f"{name}_nf"].append(nf)
            if p.answerable:
                s["pool_recall"].append(bool(gold & {c.page for c in p.candidates}))
                for name, pages in ranked.items():
                    s[f"{name}@1"].append(bool(pages[:1]) and pages[0] in gold)
                    s[f"{name}@5"].append(bool(gold & set(pages[:5])))
    report: dict = {"groups": {}, "not_found": {}, "ms_per_pool": {}}
    for group, s in stats.items():
        report["groups"][group] = {"n": len(s["n"]), **{k: round(sum(v) / len(v), 3) for k, v in s.items()
                                                         if k != "n" and v}}
    for name in ("learned", "rules"):
        said = [(nf, p.answerable) for p, nf in zip(pools, stats["all"][f"{name}_nf"])]
        tp = sum(1 for nf, ans in said if nf and not ans)
        pred = sum(1 for nf, _ in said if nf)
        unans = sum(1 for _, ans in said if not ans)
        report["not_found"][name] = {"precision": round(tp / pred, 3) if pred else None,
                                     "recall": round(tp / unans, 3) if unans else None,
                                     "predicted": pred, "unanswerable": unans}
    for name, xs in ms.items():
        xs = sorted(xs)
        report["ms_per_pool"][name] = {"mean": round(statistics.fmean(xs), 2), "median": round(xs[len(xs) // 2], 2),
                                       "p95": round(xs[int(0.95 * (len(xs) - 1))], 2), "pools": len(xs)}
    return report


def print_report(r: dict) -> None:
    print(f"train: {r['train']['questions']} questions / {r['train']['documents']} documents, "
          f"{r['train']['pairs']} pairs; test: {r['test']['questions']} questions / {r['test']['documents']} "
          f"documents (no document in both); model {r['model']} ({r['kind']}), floor {r['floor']}, "
          f"profile {r['profile']}")
    cols = ["learned@1", "learned@5", "learned_rank@1", "learned_rank@5", "rules@1", "rules@5", "rules_rank@1",
            "rules_rank@5", "rrf@1", "rrf@5", "pool_recall"]
    print(f"{'test group':<14}{'n':>5}" + "".join(f"{c:>15}" for c in cols))
    for group, g in sorted(r["figures"]["groups"].items()):
        print(f"{group:<14}{g['n']:>5}" + "".join(f"{g.get(c, '-'):>15}" for c in cols))
    for name, nf in r["figures"]["not_found"].items():
        print(f"not found ({name}): precision {nf['precision']} recall {nf['recall']} "
              f"({nf['predicted']} predicted, {nf['unanswerable']} unanswerable)")
    for name, t in r["figures"]["ms_per_pool"].items():
        print(f"ms per pool ({name}): mean {t['mean']} median {t['median']} p95 {t['p95']} over {t['pools']} pools")
    print(f"training-split out-of-fold (by document): {json.dumps(r['train_holdout'])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--home", type=Path, default=REPO / ".arbiter" / "bench-arbiter")
    ap.add_argument("--pools", type=Path, help="cached pools (default: HOME/arbiter_pools.jsonl)")
    ap.add_argument("--embedder", default="minilm", help="when building pools: minilm | hash | none")
    ap.add_argument("--kind", default="logreg", help="logreg | hgb")
    ap.add_argument("--train-share", type=float, default=0.6)
    ap.add_argument("--profile", default="balanced")
    ap.add_argument("--splits", type=int, default=1, help="repeat on N different document splits (0..N-1)")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    args = ap.parse_args(argv)
    offline_environment()
    pools_path = args.pools or args.home / "arbiter_pools.jsonl"
    if not pools_path.exists():
        from benchmarks.arbiter_dev import build_pools

        args.home.mkdir(parents=True, exist_ok=True)
        embeddings = args.embedder != "none"
        build_pools(args.data, Settings(home=args.home, embedder={"kind": args.embedder if embeddings else "minilm"}),
                    pools_path, embeddings)
    questions = args.data / "mmlongbench" / "questions.jsonl"
    reports = [run_split(pools_path, questions, args, i) for i in range(args.splits)]
    if args.splits > 1:
        print_means(reports)
    if args.json:
        args.json.write_text(json.dumps(reports if args.splits > 1 else reports[0], indent=2))
    return 0


def run_split(pools_path: Path, questions: Path, args, index: int) -> dict:
    from tasks.arbiter.learned import LearnedArbiterProvider, save_artifact, train_learned_arbiter

    split = load_pools(pools_path, questions, args.train_share, index)
    assert not {p.group for p in split["train"]} & {p.group for p in split["test"]}
    t0 = time.perf_counter()
    trained = train_learned_arbiter(split["train"], kind=args.kind, source={
        "benchmark": "learned_arbiter", "pools": str(pools_path), "train_share": args.train_share, "split": index})
    train_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as models:
        meta = save_artifact(trained, Path(models))
        provider = LearnedArbiterProvider.load(Path(models))
    report = {
        "split": index, "model": provider.model, "kind": args.kind, "floor": provider.thresholds["floor"],
        "profile": args.profile, "train_seconds": round(train_s, 1), "train_holdout": meta["holdout"],
        "train": {"questions": len(split["train"]), "documents": len({p.group for p in split["train"]}),
                  "pairs": meta["pairs"]},
        "test": {"questions": len(split["test"]), "documents": len({p.group for p in split["test"]})},
        "figures": evaluate(split["test"], provider, args.profile),
    }
    print(f"== split {index}")
    print_report(report)
    return report


MEAN_COLS = ("learned@1", "learned_rank@1", "rules@1", "rules_rank@1", "rrf@1", "learned@5", "learned_rank@5",
             "rules@5", "rules_rank@5", "rrf@5")


def print_means(reports: list[dict]) -> None:
    print(f"== mean over {len(reports)} document splits (test groups 'all', answerable questions)")
    for col in MEAN_COLS:
        xs = [r["figures"]["groups"]["all"][col] for r in reports]
        print(f"{col:<16} mean {statistics.fmean(xs):.3f}  per split {xs}")
    for name in ("learned", "rules"):
        for k in ("precision", "recall"):
            xs = [r["figures"]["not_found"][name][k] for r in reports if r["figures"]["not_found"][name][k] is not None]
            print(f"not found {name} {k:<9} mean {statistics.fmean(xs):.3f}  per split {xs}")


if __name__ == "__main__":
    raise SystemExit(main())
