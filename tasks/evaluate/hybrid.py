"""The user's alternative, as a baseline column of every evaluation: what a user builds in ten lines instead of
this pipeline. Each document's text cut into fixed passages of ``WORDS`` words (a new one every ``STRIDE`` words),
embedded with the pipeline's own embedder, and searched by LanceDB's own hybrid search (its full-text index and
the vectors, fused by RRF, k = 60) with the question's text; each passage stands for the page that holds most of its
words. No parse of the question, no detector, no arbiter: the anchor the arbiter must beat.

The passages of a document are embedded the first time an evaluation needs them and kept in the home's LanceDB
(``warehouse/passages.py``), so a corpus is embedded once per embedder.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from tasks.corpus.embed import get_embedder
from warehouse import corpus
from warehouse.db import Warehouse
from warehouse.passages import PassageStore

WORDS = 120
STRIDE = 90
K = 20  # pages a question's ranking keeps: the metrics read the first five


def passages(pages: Sequence[int], texts: Sequence[str]) -> list[tuple[int, str]]:
    """(page, text) of the fixed passages of a document's lines (in reading order): ``WORDS`` words, a new passage
    every ``STRIDE`` words, the last one reaching the end; each passage's page is the one holding most of its words
    (the first of them on a tie)."""
    words: list[tuple[str, int]] = [(w, p) for p, t in zip(pages, texts) for w in (t or "").split()]
    out = []
    for start in range(0, len(words), STRIDE):
        chunk = words[start:start + WORDS]
        counts = Counter(p for _, p in chunk)
        top = max(counts.values())
        page = next(p for _, p in chunk if counts[p] == top)
        out.append((page, " ".join(w for w, _ in chunk)))
        if start + WORDS >= len(words):
            break
    return out


class HybridBaseline:
    """Rankings of the hybrid baseline for one evaluation: documents' passages embedded on first need."""

    def __init__(self, wh: Warehouse, lance_dir, embedder_kind: str, device: str = "cpu", batch_size: int = 32,
                 log: Callable[[str], None] = print):
        self.wh, self.log = wh, log
        self.store = PassageStore(lance_dir)
        self.embedder = get_embedder(embedder_kind, device, batch_size)
        self._ready = self.store.docs(self.embedder.name)

    def ensure(self, doc_ids: Sequence[str]) -> None:
        """Embed and store the passages of the documents of ``doc_ids`` that have none yet."""
        missing = [d for d in doc_ids if d not in self._ready]
        if missing:
            self.log(f"hybrid baseline: embedding the passages of {len(missing)} document(s) with "
                     f"{self.embedder.name} (once per corpus)")
        for doc_id in missing:
            lines = corpus.load_lines(self.wh, [doc_id])
            cut = passages(lines["page"].to_list(), lines["text"].to_list())
            vectors = self.embedder.embed([t for _, t in cut])
            self.store.add(doc_id, [p for p, _ in cut], [t for _, t in cut], vectors, self.embedder.name)
            self._ready.add(doc_id)

    def ranking(self, question: str, doc_ids: list[str] | None) -> list[tuple[str, int]]:
        """(doc_id, page) in the baseline's order, deduplicated, for ``question`` over ``doc_ids`` (None = the
        whole current corpus)."""
        scope = doc_ids if doc_ids is not None else corpus.current_doc_ids(self.wh)  # not a changed file's old text
        self.ensure(scope)
        vector = self.embedder.embed([question])[0]
        hits = self.store.search(question, vector, scope, self.embedder.name, 5 * K)
        return list(dict.fromkeys(hits))[:K]


def hybrid_rankings(wh: Warehouse, questions: Sequence[dict], lance_dir, embedder_kind: str, device: str = "cpu",
                    batch_size: int = 32, log: Callable[[str], None] = print) -> dict[str, list[tuple[str, int]]]:
    """question_id -> the baseline's ranking, for ``questions`` (``questions`` rows: text, docs; a question without
    ``docs`` searches the whole corpus, one whose documents are not all ingested is left out)."""
    base = HybridBaseline(wh, lance_dir, embedder_kind, device, batch_size, log)
    ids = corpus.doc_ids_for_paths(wh, sorted({p for q in questions for p in q.get("docs") or []}))
    scopes = {}
    for q in questions:
        scope = None if not q.get("docs") else [ids.get(p) for p in q["docs"]]
        if scope is None or None not in scope:
            scopes[q["question_id"]] = sorted(set(scope)) if scope is not None else None
    # every document the questions search is embedded before the first search: BM25 weighs a term by how many of
    # the indexed passages hold it, so a search made while the table held some of the documents would rank
    # otherwise than the same search afterwards (MMLongBench dev hit@1 0.376 on a first run, 0.388 on the next)
    needed = {d for s in scopes.values() if s is not None for d in s}
    base.ensure(corpus.current_doc_ids(wh) if None in scopes.values() else sorted(needed))
    return {qid: base.ranking(q["text"], scopes[qid]) for q in questions if (qid := q["question_id"]) in scopes}
