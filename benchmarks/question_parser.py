"""Agreement of the rules question parser with the datasets' own labels (MMLongBench, Docugami).

Run from the repository root:  python benchmarks/question_parser.py [--data-root ../shared/data]
MMLongBench ``answer_format`` (List / Int / Float / Str / None) is compared with ``answer_shape``; Docugami
``question_type`` with ``decomposition``. The labels were written by the datasets' authors, not by this project.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from pathlib import Path

from tasks.questions.parser import PARSER_NAME, parse_question

REPO = Path(__file__).resolve().parents[1]
EXPECTED_SHAPE = {"List": {"list"}, "Int": {"amount"}, "Float": {"amount"}}  # Str / None: no single expectation
HOW_MANY = re.compile(r"^\W*how many\b", re.I)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _rate(hits: int, total: int) -> str:
    return f"{hits:>3}/{total:<3} = {hits / total:.2f}" if total else "  n/a"


def mmlongbench(data_root: Path) -> None:
    rows = _rows(data_root / "mmlongbench" / "questions.jsonl")
    by_format: dict[str, Counter] = {}
    how_many = [0, 0]
    for r in rows:
        p = parse_question(r["qid"], r["question"])
        by_format.setdefault(str(r["labels"].get("answer_format")), Counter())[p.answer_shape] += 1
        if HOW_MANY.search(r["question"]):
            how_many[0] += p.answer_shape == "amount"
            how_many[1] += 1
    print(f"MMLongBench ({len(rows)} questions): answer_format -> answer_shape")
    for fmt, shapes in sorted(by_format.items()):
        total = sum(shapes.values())
        expected = EXPECTED_SHAPE.get(fmt)
        agree = _rate(sum(shapes[s] for s in expected), total) if expected else "  (no single expected shape)"
        dist = ", ".join(f"{s} {n}" for s, n in shapes.most_common())
        print(f"  {fmt:<6} n={total:<3} agreement {agree:<28} [{dist}]")
    list_or_amount = sum(sum(by_format.get(f, Counter())[s] for s in e) for f, e in EXPECTED_SHAPE.items())
    n_labelled = sum(sum(by_format.get(f, Counter()).values()) for f in EXPECTED_SHAPE)
    print(f"  List+Int+Float overall agreement {_rate(list_or_amount, n_labelled)}")
    print(f"  questions starting 'How many' -> amount: {_rate(*how_many)}")


def docugami(data_root: Path) -> None:
    rows = _rows(data_root / "docugami" / "questions.jsonl")
    by_type: dict[str, Counter] = {}
    for r in rows:
        p = parse_question(r["qid"], r["question"])
        by_type.setdefault(r["labels"].get("question_type", "?"), Counter())[p.decomposition] += 1
    print(f"Docugami ({len(rows)} questions): question_type -> decomposition (compare or multi_part)")
    for qtype, decomps in sorted(by_type.items()):
        total = sum(decomps.values())
        dist = ", ".join(f"{d} {n}" for d, n in decomps.most_common())
        rate = _rate(decomps["compare"] + decomps["multi_part"], total)
        print(f"  {qtype:<28} n={total:<3} compare|multi_part {rate:<16} [{dist}]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", type=Path, default=REPO.parent / "shared" / "data")
    args = ap.parse_args()
    if not args.data_root.is_dir():
        raise SystemExit(f"no evaluation data at {args.data_root}; pass --data-root (the folder with mmlongbench/)")
    t0 = time.perf_counter()
    print(f"parser {PARSER_NAME}\n")
    mmlongbench(args.data_root)
    print()
    docugami(args.data_root)
    print(f"\n{time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
