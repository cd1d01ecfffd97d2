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
from tasks.detect.aggregate import AggregatedCandidate, aggregate
from tasks.detect.detectors import detect_embeddings, detect_keywords, detect_toc
from tasks.detect.keyword_index import CorpusCache, query_terms
from tasks.detect.plan import DetectorPlan, plan_detectors
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
    return terms_absent(terms, (d.vocabulary() for d in corpus.docs(corpus.doc_ids(doc_ids))))


def run_detection(question: ParsedQuestion, doc_ids: list[str] | None, corpus: CorpusCache, vectors, embedder,
                  settings: Settings) -> Detection:
    """Plan, run and aggregate the detectors for one question (no writes). ``doc_ids`` None = whole corpus."""
    t0 = time.perf_counter()
    k = settings.detect.top_k_per_detector
    scope = corpus.doc_ids(doc_ids)
    docs = corpus.docs(scope)
    plan = plan_detectors(question, {d.doc_id: d.toc_source for d in docs},
                          _embedding_plan_input(corpus, vectors, embedder, scope))
    terms = query_terms(question)
    qid, text = question.question_id, question.text
    search_scope = scope if doc_ids is not None else None
    doc_map = {d.doc_id: d for d in docs}
    t1 = time.perf_counter()
    hits: list[DetectorHit] = []
    timings: dict[str, float] = {}
    calls = {
        "toc": lambda: detect_toc(qid, text, terms, docs, k),
        "keywords": lambda: detect_keywords(qid, terms, corpus.index(scope), k),
        "embeddings": lambda: detect_embeddings(qid, text, terms, vectors, embedder, doc_map, search_scope, k),
    }
    for name in plan.detectors:
        started = time.perf_counter()
        hits.extend(calls[name]())
        timings[name] = time.perf_counter() - started
    t2 = time.perf_counter()
    candidates = aggregate(qid, hits, None, None, settings.detect.pool_size, settings.detect.rrf_k, docs=doc_map)
    t3 = time.perf_counter()
    absent = absent_terms(question, scope, corpus)
    t4 = time.perf_counter()
    return Detection(plan=plan, hits=hits, candidates=candidates, absent_terms=absent,
                     seconds={"plan": t1 - t0, **timings, "detectors": t2 - t1, "aggregate": t3 - t2,
                              "absent_terms": t4 - t3, "total": t4 - t0})
