"""Detection for one question: plan the detectors, run them, aggregate (nothing written: the walk hands the rows to
the sink, ``tasks.pipeline``).

The detectors are plain calls, one after the other, in the question's own thread: parallelism is across questions
(the answer flow). They used to be three Prefect task runs per question, which cost more than the detectors
themselves (benchmarks/throughput.py: 95 ms a question in detection end to end against 20 ms of detector work)
and printed three 'Finished in state Completed()' lines per question.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from schemas.contracts import CandidateBrief, DetectorHit, ParsedQuestion
from schemas.settings import Settings
from tasks.corpus.embed import Embedder, get_embedder
from tasks.detect.aggregate import MAX_POOL, AggregatedCandidate, aggregate
from tasks.detect.detectors import detect_embeddings, detect_keywords, detect_toc
from tasks.detect.cache import CorpusCache
from tasks.detect.corpus_wide import PostingsIndex
from tasks.detect.keyword_index import query_terms
from tasks.detect.plan import DetectorPlan, plan_detectors
from tasks.detect.scope import DocFacts, Preference, prefer_documents
from tasks.questions.distinct import absence_terms as question_absence_terms
from tasks.terms import absent_terms as terms_absent

__all__ = ["CorpusCache", "Detection", "EmbedderMismatchError", "absent_terms", "run_detection"]


@dataclass
class Detection:
    """Everything detection produced for one question, with wall times in seconds (per detector too)."""

    plan: DetectorPlan
    hits: list[DetectorHit]
    candidates: list[AggregatedCandidate]
    seconds: dict[str, float] = field(default_factory=dict)
    # the question's distinctive terms that occur in none of the searched documents (see :func:`absent_terms`)
    absent_terms: list[str] = field(default_factory=list)

    def pool(self) -> list[CandidateBrief]:
        return [c.brief for c in self.candidates if c.in_pool]


class EmbedderMismatchError(RuntimeError):
    """The query embedder cannot search the stored vectors (another model was used at ingest)."""


# questions are embedded one at a time: one onnxruntime thread does it in the same wall time, where a pool over every
# core spun between the model's nodes (benchmarks/detect_cpu.py, MiniLM sample home, 2 cores: detection 14.3 / 13.0
# -> 6.5 / 6.3 ms of CPU a question, wall 6.9 / 6.2 -> 6.1 / 5.9 ms, the same vectors)
QUESTION_EMBED_THREADS = 1
# the share of the pool kept for the documents a question does not name, when it names some: a wrong identity, or a
# question whose answer sits elsewhere, still reaches the arbiter
OTHERS_IN_POOL = 0.2


def question_embedder(settings: Settings, vectors) -> Embedder | None:
    """The embedder detection embeds questions with; None when no line window has vectors (``vectors``: a
    ``warehouse.vectors.VectorStore``)."""
    if not vectors.count():
        return None
    return get_embedder(settings.embedder.kind, settings.embedder.device, settings.ingest.embed_batch_size,
                        threads=QUESTION_EMBED_THREADS)


def _embedding_plan_input(corpus: CorpusCache, vectors, embedder, doc_ids: list[str]) -> bool:
    if vectors is None or embedder is None or not corpus.has_vectors(vectors, doc_ids):
        return False
    dim = vectors.dim()
    if dim is not None and dim != embedder.dim:
        raise EmbedderMismatchError(
            f"stored line-window vectors are {dim}-d but embedder {embedder.name!r} makes {embedder.dim}-d vectors: "
            f"set ARBITER_EMBEDDER__KIND to the embedder used at ingest, or re-ingest with this one"
        )
    return True


def absent_terms(question: ParsedQuestion, doc_ids: list[str] | None, corpus: CorpusCache) -> list[str]:
    """The distinctive terms of the question's ask whose absence says its subject is missing (a year, a number, a
    code, a name; not its framing, the terms it defines, notations of a period or currency, nor an acronym naming
    the measure asked for: ``tasks.questions.distinct.absence_terms``) that occur in none of the searched
    documents' lines or titles (``doc_ids`` None = the whole corpus), matched as the rules arbiter matches them on
    a candidate (up to a typo, a doubled letter, words run together). The arbiter reads it: a term missing from
    the pool but present in the document means retrieval missed the passage, not that the answer is absent."""
    terms = question_absence_terms(question)
    if not terms:
        return []
    if doc_ids is None:  # the documents that may carry each term, through the corpus's word index
        return corpus.corpus_words(corpus.doc_ids(None)).absent(terms)
    return terms_absent(terms, (d.vocabulary() for d in corpus.docs(doc_ids)))


def run_detection(question: ParsedQuestion, doc_ids: list[str] | None, corpus: CorpusCache, vectors, embedder,
                  settings: Settings) -> Detection:
    """Plan, run and aggregate the detectors for one question (no writes). ``doc_ids`` None = whole corpus.

    Over several documents, the documents the question names (issuer, period, type: ``tasks.detect.scope``) are
    searched first, each detector's hits there ranked before its hits in the others, which stay searchable: a part
    of the pool is kept for them (:data:`OTHERS_IN_POOL`)."""
    t0 = time.perf_counter()
    k = settings.detect.top_k_per_detector
    depth = max(k, settings.detect.fill_depth)
    scope = corpus.doc_ids(doc_ids)
    # corpus-wide: every document's summary, its full view loaded only where a hit falls (the cache bounds them)
    docs = corpus.views(scope) if doc_ids is None else corpus.docs(scope)
    plan = plan_detectors(question, {d.doc_id: d.toc_source for d in docs},
                          _embedding_plan_input(corpus, vectors, embedder, scope))
    words = corpus.corpus_words(scope) if doc_ids is None else None
    facts = corpus.identities.facts(scope)
    preference = None
    if len(scope) > 1:
        known = words.__contains__ if words is not None else lambda t: any(t in d.vocabulary() for d in docs)
        preference = prefer_documents(question.text, facts, known)
    if preference is not None:
        plan = DetectorPlan(detectors=plan.detectors, rule=f"{plan.rule}; {preference.rule}")
    terms = query_terms(question)
    qid, text = question.question_id, question.text
    search_scope = scope if doc_ids is not None else None
    lazy = {d.doc_id: d for d in docs}
    # corpus-wide: each hit anchored on the pages it falls on, read a batch of hits at a time (tasks.detect.pages)
    views = corpus.page_views(scope) if doc_ids is None else None
    doc_map = views if views is not None else lazy
    vector = embedder.embed([text])[0] if "embeddings" in plan.detectors else None
    t1 = time.perf_counter()
    hits: list[DetectorHit] = []
    fill: list[DetectorHit] = []  # ranked past k: they only fill the pool places the first k left empty
    timings: dict[str, float] = {}

    def call(name: str, ids: list[str] | None) -> list[DetectorHit]:
        """One detector over ``ids`` (None: the question's whole scope, searched as before scoping existed), ``depth``
        hits deep (its first ``k`` the same as at depth ``k``)."""
        if name == "toc":
            if ids is None and words is not None:  # corpus-wide: only the titles that share a word with it
                return detect_toc(qid, text, terms, docs, depth,
                                  titles=lambda w: ((docs[d], t) for d, t in words.titles_sharing(w)), views=views)
            return detect_toc(qid, text, terms, docs if ids is None else [lazy[d] for d in ids], depth, views=views)
        if name == "keywords":
            index = corpus.index(ids) if ids is not None else \
                corpus.corpus_index(scope) if doc_ids is None else corpus.index(scope)
            return detect_keywords(qid, terms, index, k, depth,
                                   views=views if isinstance(index, PostingsIndex) else None)
        return detect_embeddings(qid, text, terms, vectors, embedder, doc_map, search_scope if ids is None else ids,
                                 depth, vector=vector)

    for name in plan.detectors:
        started = time.perf_counter()
        if preference is None:
            found = call(name, None)
            hits.extend(found[:k])
            fill.extend(found[k:])
        else:
            groups, everywhere = [call(name, g) for g in preference.groups], call(name, None)
            top = scoped_hits([g[:k] for g in groups], everywhere[:k], preference.preferred)
            deeper = scoped_hits([g[k:] for g in groups], everywhere[k:], preference.preferred)
            hits.extend(top)
            fill.extend(h.model_copy(update={"rank": len(top) + h.rank}) for h in deeper)
        timings[name] = time.perf_counter() - started
    t2 = time.perf_counter()
    if views is not None:  # a hit anchored on its document whole (a named group's own index) has its page read too
        views.prefetch((h.doc_id, h.page, h.line_start, h.line_end) for h in [*hits, *fill])
    candidates = aggregate(qid, hits, None, None, settings.detect.pool_size, settings.detect.rrf_k, docs=doc_map,
                           fill=fill)
    candidates = with_identities(candidates, facts, preference, settings.detect.pool_size)
    t3 = time.perf_counter()
    absent = absent_terms(question, doc_ids, corpus)
    t4 = time.perf_counter()
    return Detection(plan=plan, hits=hits + fill, candidates=candidates, absent_terms=absent,
                     seconds={"plan": t1 - t0, **timings, "detectors": t2 - t1, "aggregate": t3 - t2,
                              "absent_terms": t4 - t3, "total": t4 - t0})


def scoped_hits(groups: list[list[DetectorHit]], everywhere: list[DetectorHit], preferred: set[str]
                ) -> list[DetectorHit]:
    """One detector's ranking with the named documents first: its hits in each group, taken in turn (a comparison
    reaches both of its documents), then its hits in every other document, re-ranked 1..n."""
    merged: list[DetectorHit] = []
    seen: set[tuple[str, int, int]] = set()
    for i in range(max((len(g) for g in groups), default=0)):
        for g in groups:
            if i < len(g) and (key := (g[i].doc_id, g[i].line_start, g[i].line_end)) not in seen:
                seen.add(key)
                merged.append(g[i])
    merged += [h for h in everywhere if h.doc_id not in preferred]
    return [h.model_copy(update={"rank": rank}) for rank, h in enumerate(merged, start=1)]


def with_identities(candidates: list[AggregatedCandidate], facts: list[DocFacts], preference: Preference | None,
                    pool_size: int) -> list[AggregatedCandidate]:
    """Each candidate with its document's identity and, when its document was searched first, why; the pool keeps
    :data:`OTHERS_IN_POOL` of it for the best candidates of the other documents, so that a wrong identity cannot
    hide the answer from the arbiter."""
    labels = {f.doc_id: f.label for f in facts}
    out = []
    for c in candidates:
        update = {"document": labels.get(c.brief.doc_id, "")}
        if preference is not None and c.brief.doc_id in preference.group_of:
            update |= {"preferred": preference.reasons[c.brief.doc_id],
                       "preferred_group": preference.group_of[c.brief.doc_id]}
        out.append(c._replace(brief=c.brief.model_copy(update=update)))
    if preference is None:
        return out
    cap = min(pool_size, MAX_POOL)
    reserve = min(max(1, round(cap * OTHERS_IN_POOL)), cap - 1)
    others = [c for c in out if c.brief.preferred_group is None]
    pooled_named = [c for c in out if c.in_pool and c.brief.preferred_group is not None]
    missing = [c for c in others[:reserve] if not c.in_pool][:len(pooled_named)]
    if not missing:
        return out
    drop = {id(c) for c in pooled_named[len(pooled_named) - len(missing):]}
    add = {id(c) for c in missing}
    return [c._replace(in_pool=(c.in_pool and id(c) not in drop) or id(c) in add) for c in out]
