"""The embedder alone: windows/s and tokens/s of each MiniLM path on the same line windows, side by side.

    python benchmarks/embedder.py --data ../shared/data [--windows 800] [--kinds minilm,minilm-torch]

Windows are a seeded sample of the dev set's embedding windows (``build_embed_windows``) or, with ``--overlapping``,
of the 4-line stride-2 windows BM25 indexes (what was embedded before). Every configuration (embedder, batch 32/64,
length-sorted or not; 128-token cap throughout) embeds the same texts; the rounds alternate the order so no
configuration profits from a quieter moment of a shared machine. Also prints the cosine of the int8 vectors to
the torch ones when both run.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from schemas.settings import offline_environment  # noqa: E402
from tasks.corpus.embed import bundled_tokenizer, get_embedder  # noqa: E402
from tasks.corpus.parse import parse_pdf  # noqa: E402
from tasks.corpus.windows import build_embed_windows, build_windows  # noqa: E402


def sample_windows(pdfs: list[Path], n: int, overlapping: bool = False, seed: int = 0) -> list[str]:
    texts: list[str] = []
    for pdf in pdfs:
        doc = parse_pdf(pdf)
        w = build_windows(doc.lines, doc.toc) if overlapping else build_embed_windows(doc.lines, doc.toc)
        texts.extend(w["text"].to_list())
    random.Random(seed).shuffle(texts)
    return texts[:n]


def time_embed(embedder, texts: list[str], sort: bool = True) -> float:
    """Seconds to embed ``texts`` (``sort`` only applies to the onnxruntime path; torch sorts by itself)."""
    t0 = time.perf_counter()
    if hasattr(embedder, "token_counts"):
        embedder.embed(texts, sort=sort)
    else:
        embedder.embed(texts)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--windows", type=int, default=800)
    ap.add_argument("--pdfs", type=int, default=12, help="dev PDFs the windows are drawn from (every 3rd, sorted)")
    ap.add_argument("--kinds", default="minilm,minilm-torch")
    ap.add_argument("--batches", default="32,64")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--overlapping", action="store_true", help="sample the 4-line stride-2 windows instead")
    args = ap.parse_args(argv)
    offline_environment()
    pdfs = sorted((args.data / "mmlongbench" / "pdfs").glob("*.pdf"))[::3][: args.pdfs]
    if not pdfs:
        raise SystemExit(f"no PDF under {args.data / 'mmlongbench' / 'pdfs'}; pass --data")
    texts = sample_windows(pdfs, args.windows, args.overlapping)
    tokens = sum(len(e.ids) for e in bundled_tokenizer().encode_batch(texts))
    configs = []
    for kind in args.kinds.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            for sort in ((True, False) if kind == "minilm" else (True,)):
                configs.append((kind, batch, sort))
    vecs = {}
    for kind, batch, _ in configs:
        emb = get_embedder(kind, "cpu", batch)
        vecs.setdefault(kind, emb.embed(texts[:64]))  # warm-up (first-call allocations), and vectors to compare
    seconds: dict[tuple, list[float]] = {c: [] for c in configs}
    for r in range(args.rounds):
        for c in (configs if r % 2 == 0 else configs[::-1]):
            seconds[c].append(time_embed(get_embedder(c[0], "cpu", c[1]), texts, c[2]))
    print(f"embedder alone: {len(texts)} windows, {tokens} tokens (128-token cap), {len(pdfs)} dev PDFs, "
          f"{args.rounds} alternating rounds, best round; shared 2-core machine (ratios are the figure)")
    base = None
    for c in configs:
        s = min(seconds[c])
        base = base or s
        print(f"  {c[0]:13s} batch {c[1]:3d} {'sorted  ' if c[2] else 'unsorted'} {len(texts) / s:7.1f} windows/s "
              f"{tokens / s:8.0f} tokens/s  ({base / s:.2f}x the first row)")
    if "minilm" in vecs and "minilm-torch" in vecs:
        cos = (vecs["minilm"] * vecs["minilm-torch"]).sum(axis=1)
        print(f"  int8 vs torch cosine on the first 64: mean {cos.mean():.4f}, min {cos.min():.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
