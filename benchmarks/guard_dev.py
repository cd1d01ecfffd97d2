"""The rules arbiter on the guard set (benchmarks/guard/analyst_10q.jsonl: analyst-notation questions over the 20
Docugami 10-Qs, 44 answerable with hand-read gold pages, 6 unanswerable): the figures of benchmarks/arbiter_dev.py
(page hit@1/@5 of arbiter vs RRF and each detector on the same doc-scoped pools, not-found precision/recall, and
the not-found rate on answerable questions, the 'text' group's not_found column).

    python benchmarks/guard_dev.py --data ../shared/data [--home DIR] [--embedder hash|minilm|none] [--trace]

The hash embedder is the default: the not-found rule does not depend on embeddings, and MiniLM takes minutes.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.arbiter_dev import main as arbiter_dev_main  # noqa: E402

GUARD_QUESTIONS = REPO / "benchmarks" / "guard" / "analyst_10q.jsonl"


def main(argv: list[str] | None = None) -> int:
    return arbiter_dev_main(argv, questions=GUARD_QUESTIONS, home=REPO / ".arbiter" / "bench-guard", embedder="hash")


if __name__ == "__main__":
    raise SystemExit(main())
