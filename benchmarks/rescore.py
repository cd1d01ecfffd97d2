"""What the scorer alone changes: a stored evaluate run's answers judged by today's scorer and by the scorer of an
earlier commit, side by side (no pipeline call; the answers are read from the warehouse).

    python benchmarks/rescore.py --home H --run RUN_ID [--old-ref 90b1e70] [--show]

Prints, per answer regime, answered / right / precision / coverage under each scorer, precision per reader rule,
and with --show every question whose judgement changed. The old scorer is
``tasks/generate/normalise.py`` as committed at ``--old-ref``, loaded as a module of its own.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import types
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tasks.generate.normalise import answer_matches  # noqa: E402
from warehouse import evals as store  # noqa: E402
from warehouse.db import Warehouse  # noqa: E402


def old_matcher(ref: str):
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:tasks/generate/normalise.py"], check=True,
                            capture_output=True, text=True).stdout
    module = types.ModuleType("old_normalise")
    exec(compile(source, f"{ref}:tasks/generate/normalise.py", "exec"), module.__dict__)  # noqa: S102
    return module.answer_matches


def judge(matcher, answer: dict, gold: dict) -> bool:
    ok = answer["status"] == "ok" and answer["answer_found"] and answer["value"] is not None
    return bool(ok and matcher(answer["value"], gold["answer"], gold["answer_shape"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, type=Path)
    ap.add_argument("--run", required=True)
    ap.add_argument("--old-ref", default="90b1e70")
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    old = old_matcher(args.old_ref)
    wh = Warehouse(next(args.home.glob("*.duckdb")), read_only=True)
    golds = {q["question_id"]: q for q in store.eval_questions(wh, args.run) if q["answer"] is not None}
    stats: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    rules: dict[tuple[str, str], list] = defaultdict(list)
    changed = []
    for a in store.answer_rows(wh, args.run):
        gold = golds.get(a["question_id"])
        if gold is None:
            continue
        answered = a["status"] == "ok" and bool(a["answer_found"]) and a["value"] is not None
        answerable = bool(gold["gold_pages"]) or (gold["gold_pages"] is None and gold["answer"].strip().lower()
                                                  not in ("not answerable",))
        before, after = judge(old, a, gold), judge(answer_matches, a, gold)
        s = stats[a["regime"]]
        s["answered"].append(answered)
        if answerable:
            s["answerable_answered"].append(answered)
        if answered:
            s["before"].append(before)
            s["after"].append(after)
            rules[(a["regime"], a["rule"] or "(none)")].append((before, after))
        if before != after:
            changed.append((a["regime"], a["question_id"], a["rule"], a["value"], gold["answer"][:90], before, after))
    print(f"run {args.run}: scorer at {args.old_ref} -> working tree")
    for regime, s in sorted(stats.items()):
        n = len(s["before"])
        cov = sum(s["answerable_answered"]) / len(s["answerable_answered"]) if s["answerable_answered"] else None
        print(f"  {regime:10s} answered {n:3d}  right {sum(s['before']):3d} -> {sum(s['after']):3d}  precision "
              f"{(sum(s['before']) / n if n else 0):.3f} -> {(sum(s['after']) / n if n else 0):.3f}  coverage "
              f"{cov if cov is None else round(cov, 3)}")
    for (regime, rule), pairs in sorted(rules.items()):
        b, a = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
        print(f"    {regime:10s} {rule:24s} answered {len(pairs):3d}  right {b:3d} -> {a:3d}")
    if args.show:
        for row in changed:
            print("  changed:", row)


if __name__ == "__main__":
    main()
