"""Evaluation metrics: score a run against its question set's gold, per question and method, then summarise.

Per question, one ``eval_results`` row per method:
- page methods (``arbiter``; the baselines ``rrf``, ``keywords``, ``embeddings``, ``toc``, drawn from the same
  candidate pool the arbiter saw; and ``hybrid``, the user's alternative searched outside the pipeline,
  tasks/evaluate/hybrid.py): a ranked list of (doc, page), deduplicated in order before cutting at k; hit@1, hit@5
  and reciprocal rank against ``gold_pages`` (NULL when the question has no page gold or none to find, or the
  method was not run). The arbiter's list is its order of the whole pool: the primary then supporting passages
  the dispatcher kept, in RetrievalResult order, then the other candidates by role and relevance; its hit@1 is
  the first kept passage (its decision: a not-found keeps nothing), hit@5 and MRR read the whole order.
- document methods (``doc_<page method>``, corpus-wide runs only): the same ranking over documents, against the
  question's gold documents.
- the pool (``pool``; ``doc_pool`` corpus-wide): the first POOL_DEPTH candidates handed to the arbiter, in the
  brief's order (RRF rank), as (doc, page); its row's reciprocal rank is above 0 when one of them lies on a gold
  page (a gold document), and the share of such questions is ``pool_recall_at_30`` (``doc_pool_recall_at_30``):
  the ceiling of any arbiter, rules or model, that judges this pool.
- answer methods (``batch``, ``sequential``, ``auto`` = the regime the router picked): ``answer_correct`` by
  :func:`tasks.generate.normalise.answer_matches`, and the regime's tokens.

The summary is computed from those rows alone, so it can be rebuilt from the warehouse at any time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from schemas.contracts import DETECTORS, RetrievalResult
from tasks.arbiter.dispatch import verdict_order
from tasks.generate.normalise import answer_matches
from warehouse import evals as store
from warehouse.db import Warehouse

K = 5
# the baselines: the detectors' common pool in RRF order and each detector's own order, and the user's alternative
# (``hybrid``: fixed passages through LanceDB's hybrid search, tasks/evaluate/hybrid.py), ranked outside the pool
SEARCH_BASELINES: tuple[str, ...] = ("hybrid",)
PAGE_METHODS: tuple[str, ...] = ("arbiter", *SEARCH_BASELINES, "rrf", *DETECTORS)
DOC_METHODS: tuple[str, ...] = tuple(f"doc_{m}" for m in PAGE_METHODS)
POOL_METHOD = "pool"  # the pool itself: what any arbiter can choose from (pool recall), not a ranking to compare
POOL_DEPTH = 30  # pool recall@30: a gold page among the first 30 candidates the arbiter is handed
ANSWER_METHODS: tuple[str, ...] = ("batch", "sequential", "auto")
TEXT_EVIDENCE = ("text", "table", "layout")  # evidence_sources fragments a text-only pipeline can read
MAX_LABEL_VALUES = 20  # a label with more distinct values is free text, not a category: no breakdown


@dataclass(frozen=True)
class Gold:
    """What the question set says about one question."""

    question_id: str
    question_set: str
    answer: str | None
    gold_pages: list[int] | None  # None = no page gold; [] = unanswerable
    gold_docs: frozenset[str] | None  # doc ids the gold pages / answer come from; None = unknown
    labels: dict[str, Any]
    answer_shape: str | None = None


def answer_methods_for(regime: str) -> tuple[str, ...]:
    """The answer methods a run in ``regime`` measures (``auto`` is the routed regime's row)."""
    return {"both": ANSWER_METHODS, "auto": ("auto",), "batch": ("batch",), "sequential": ("sequential",)}[regime]


# -- rankings --------------------------------------------------------------------------------------------------------
def dedupe(items: Iterable[Hashable]) -> list:
    seen: set = set()
    return [x for x in items if not (x in seen or seen.add(x))]


def rank_metrics(ranked: Sequence[Hashable], is_gold: Callable[[Any], bool], k: int = K
                 ) -> tuple[bool, bool, float]:
    """(hit@1, hit@k, reciprocal rank) of an already deduplicated ranking; RR is 0 when nothing is gold."""
    first = next((i for i, item in enumerate(ranked, start=1) if is_gold(item)), None)
    return first == 1, first is not None and first <= k, 1.0 / first if first else 0.0


def arbiter_ranking(result: RetrievalResult | None) -> list[tuple[str, int]]:
    """(doc_id, page) of the primary then supporting passages; not found (or no result) ranks nothing."""
    if result is None or result.status != "found":
        return []
    return dedupe((p.doc_id, p.page) for p in result.passages())


def arbiter_full_ranking(kept: list[tuple[str, int]], verdicts: Sequence[dict[str, Any]],
                         candidates: Sequence[dict[str, Any]]) -> list[tuple[str, int]]:
    """The arbiter's order of its whole pool: what the dispatcher kept, then every other candidate in the
    verdicts' order (``tasks.arbiter.dispatch.verdict_order``: role, relevance, brief order)."""
    where = {c["candidate_id"]: (c["doc_id"], c["page"]) for c in candidates}
    order = verdict_order([(v["candidate_id"], v["role"], v["relevance"]) for v in verdicts])
    return dedupe([*kept, *(where[c] for c in order if c in where)])


def baseline_rankings(candidates: Sequence[dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
    """Per baseline, the pool's (doc_id, page) in that baseline's order: RRF rank, or a detector's own rank
    (ties by RRF rank); a detector ranks only the candidates it proposed."""
    def key(c: dict[str, Any]) -> tuple:
        return c["rrf_rank"], c["candidate_id"]

    out = {"rrf": dedupe((c["doc_id"], c["page"]) for c in sorted(candidates, key=key))}
    for det in DETECTORS:
        seen = [c for c in candidates if det in (c.get("ranks") or {})]
        seen.sort(key=lambda c: (c["ranks"][det], *key(c)))
        out[det] = dedupe((c["doc_id"], c["page"]) for c in seen)
    return out


def pool_ranking(candidates: Sequence[dict[str, Any]], depth: int = POOL_DEPTH) -> list[tuple[str, int]]:
    """(doc_id, page) of the first ``depth`` candidates handed to the arbiter, in the brief's order (RRF rank, the
    order detection hands them over), deduplicated."""
    brief = sorted(candidates, key=lambda c: (c["rrf_rank"], c["candidate_id"]))[:depth]
    return dedupe((c["doc_id"], c["page"]) for c in brief)


# -- per-question rows -----------------------------------------------------------------------------------------------
def _base(run_id: str, gold: Gold, method: str) -> dict[str, Any]:
    return {"run_id": run_id, "question_set": gold.question_set, "question_id": gold.question_id, "method": method,
            "hit_at_1": None, "hit_at_5": None, "reciprocal_rank": None, "predicted_pages": None,
            "gold_pages": gold.gold_pages, "predicted_not_found": None,
            "unanswerable": None if gold.gold_pages is None else not gold.gold_pages,
            "answer_correct": None, "input_tokens": None, "output_tokens": None, "labels": gold.labels,
            "answer_found": None, "rule": None}


def _is_gold_page(gold: Gold, item: tuple[str, int]) -> bool:
    return item[1] in set(gold.gold_pages or ()) and (gold.gold_docs is None or item[0] in gold.gold_docs)


def page_row(run_id: str, gold: Gold, method: str, ranking: list[tuple[str, int]] | None) -> dict[str, Any]:
    """``ranking`` None: the method was not run for this question (its metrics stay NULL)."""
    row = _base(run_id, gold, method)
    if ranking is None:
        return row
    row["predicted_pages"] = [page for _, page in ranking]
    if gold.gold_pages:
        row["hit_at_1"], row["hit_at_5"], row["reciprocal_rank"] = rank_metrics(
            ranking, lambda item: _is_gold_page(gold, item))
    return row


def doc_row(run_id: str, gold: Gold, method: str, ranking: list[tuple[str, int]] | None) -> dict[str, Any]:
    row = _base(run_id, gold, f"doc_{method}")
    if gold.gold_docs and ranking is not None:
        docs = dedupe(doc for doc, _ in ranking)
        row["hit_at_1"], row["hit_at_5"], row["reciprocal_rank"] = rank_metrics(docs, gold.gold_docs.__contains__)
    return row


def answer_row(run_id: str, gold: Gold, method: str, answer: dict[str, Any] | None) -> dict[str, Any]:
    """A missing or failed answer counts as wrong (the pipeline failed it), never as skipped."""
    row = _base(run_id, gold, method)
    if answer is not None:
        row["input_tokens"], row["output_tokens"] = answer["input_tokens"] or 0, answer["output_tokens"] or 0
        row["rule"] = answer.get("rule")
    ok = answer is not None and answer["status"] == "ok"
    row["answer_found"] = bool(ok and answer["answer_found"] and answer["value"] is not None)
    if gold.answer is not None:
        value = answer["value"] if ok and answer["answer_found"] else None
        row["answer_correct"] = ok and answer_matches(value, gold.answer, gold.answer_shape)
    return row


def question_rows(run_id: str, gold: Gold, retrieval: dict[str, Any] | None, candidates: Sequence[dict[str, Any]],
                  answers: Sequence[dict[str, Any]], regime: str, doc_level: bool,
                  searched: dict[str, list[tuple[str, int]] | None] | None = None,
                  verdicts: Sequence[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Every method's row for one question. ``retrieval``: its ``retrieval_results`` row (None = never reached);
    ``searched``: the rankings of the search baselines (SEARCH_BASELINES) for it, a missing one left NULL;
    ``verdicts``: its verdict rows in the brief's order (the arbiter's order of the whole pool)."""
    result = None
    if retrieval is not None and retrieval.get("result") and retrieval["status"] != "failed":
        result = RetrievalResult.model_validate_json(retrieval["result"])
    kept = arbiter_ranking(result)
    rankings = {"arbiter": arbiter_full_ranking(kept, verdicts or [], candidates), **baseline_rankings(candidates),
                **{m: (searched or {}).get(m) for m in SEARCH_BASELINES}}
    rankings[POOL_METHOD] = pool_ranking(candidates)
    rows = [page_row(run_id, gold, m, rankings[m]) for m in (*PAGE_METHODS, POOL_METHOD)]
    rows[0]["predicted_not_found"] = result is not None and result.status == "not_found"
    if doc_level:
        rows += [doc_row(run_id, gold, m, rankings[m]) for m in (*PAGE_METHODS, POOL_METHOD)]
    # the arbiter's hit@1 is its decision, what it kept first (a not-found keeps nothing); hit@5 and MRR read its
    # order of the whole pool
    for row in rows:
        if row["method"] in ("arbiter", "doc_arbiter") and row["hit_at_1"] is not None:
            ranked = kept if row["method"] == "arbiter" else dedupe(doc for doc, _ in kept)
            row["hit_at_1"] = bool(ranked) and (
                _is_gold_page(gold, ranked[0]) if row["method"] == "arbiter" else ranked[0] in gold.gold_docs)
    by_regime = {a["regime"]: a for a in answers}
    routed = next((a for a in answers if a["routed"]), None)
    for method in answer_methods_for(regime):
        rows.append(answer_row(run_id, gold, method, routed if method == "auto" else by_regime.get(method)))
    return rows


# -- a run ------------------------------------------------------------------------------------------------------------
def gold_from_warehouse(wh: Warehouse, run_id: str, gold_docs: dict[str, list[str]] | None = None) -> list[Gold]:
    """Gold of every question the run loaded. ``gold_docs`` (qid -> doc ids) overrides the questions' own scope,
    for corpus-wide runs whose questions were unscoped for retrieval."""
    out = []
    for q in store.eval_questions(wh, run_id):
        docs = gold_docs.get(q["question_id"]) if gold_docs is not None else q["doc_ids"]
        out.append(Gold(question_id=q["question_id"], question_set=q["question_set"], answer=q["answer"],
                        gold_pages=None if q["gold_pages"] is None else list(q["gold_pages"]),
                        gold_docs=frozenset(docs) if docs else None, labels=q["labels"],
                        answer_shape=q["answer_shape"]))
    return out


def score_run(wh: Warehouse, run_id: str, regime: str = "both", *, doc_level: bool = False,
              gold_docs: dict[str, list[str]] | None = None,
              searched: dict[str, dict[str, list[tuple[str, int]]]] | None = None) -> list[dict[str, Any]]:
    """Score every question of a run (rows in question order); write them with ``warehouse.evals``. ``searched``:
    search baseline -> question_id -> its ranking (tasks/evaluate/hybrid.py)."""
    golds = gold_from_warehouse(wh, run_id, gold_docs)
    retrieval = {r["question_id"]: r for r in store.retrieval_rows(wh, run_id)}
    pools: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in store.pool_candidates(wh, run_id):
        pools[c["question_id"]].append(c)
    answers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for a in store.answer_rows(wh, run_id):
        answers[a["question_id"]].append(a)
    verdicts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for v in store.verdict_rows(wh, run_id):
        verdicts[v["question_id"]].append(v)
    rows = []
    for g in golds:
        rows += question_rows(run_id, g, retrieval.get(g.question_id), pools[g.question_id],
                              answers[g.question_id], regime, doc_level,
                              {m: ranks.get(g.question_id) for m, ranks in (searched or {}).items()},
                              verdicts[g.question_id])
    return rows


# -- summaries --------------------------------------------------------------------------------------------------------
def _mean(values: list) -> float | None:
    return round(sum(float(v) for v in values) / len(values), 4) if values else None


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Headline metrics of a set of eval rows (all methods of some questions)."""
    by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    gold: dict[str, list[int] | None] = {}
    for r in rows:
        by_method[r["method"]].append(r)
        gold.setdefault(r["question_id"], r["gold_pages"])
    out: dict[str, Any] = {
        "n_questions": len(gold),
        "n_page_gold": sum(1 for g in gold.values() if g),
        "n_unanswerable": sum(1 for g in gold.values() if g == []),
        "n_no_page_gold": sum(1 for g in gold.values() if g is None),
    }
    for key, col in (("page_hit_at_1", "hit_at_1"), ("page_hit_at_5", "hit_at_5"), ("mrr", "reciprocal_rank")):
        # (a search baseline that was not run for a question leaves its metrics NULL: it is not a miss)
        out[key] = {m: _mean([r[col] for r in by_method[m] if r["gold_pages"] and r[col] is not None])
                    for m in PAGE_METHODS}
    out.update(pool_recall(by_method))
    judged = [r for r in by_method["arbiter"] if r["gold_pages"] is not None]
    predicted = sum(1 for r in judged if r["predicted_not_found"])
    actual = sum(1 for r in judged if r["unanswerable"])
    both = sum(1 for r in judged if r["predicted_not_found"] and r["unanswerable"])
    out["not_found"] = {"precision": _ratio(both, predicted), "recall": _ratio(both, actual),
                        "predicted": predicted, "unanswerable": actual, "correct": both}
    out["answer_accuracy"] = {m: _mean([r["answer_correct"] for r in by_method[m] if r["answer_correct"] is not None])
                              for m in ANSWER_METHODS}
    out["n_reference"] = {m: sum(1 for r in by_method[m] if r["answer_correct"] is not None) for m in ANSWER_METHODS}
    out.update(answer_trust(by_method, {r["question_id"] for r in by_method["arbiter"] if r["hit_at_1"]}))
    for key, col in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens")):
        out[key] = {m: sum(r[col] or 0 for r in by_method[m]) if by_method[m] else None for m in ANSWER_METHODS}
    if any(by_method[m] for m in DOC_METHODS):
        for key, col in (("doc_hit_rate", "hit_at_1"), ("doc_hit_at_5", "hit_at_5"), ("doc_mrr", "reciprocal_rank")):
            out[key] = {m[4:]: _mean([r[col] for r in by_method[m] if r[col] is not None]) for m in DOC_METHODS}
        out["n_doc_gold"] = sum(1 for r in by_method["doc_arbiter"] if r["hit_at_1"] is not None)
    return out


def pool_recall(by_method: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Share of the questions with page gold whose pool (first POOL_DEPTH candidates) holds a gold page, and, where
    document rows exist (corpus-wide runs), of the questions with document gold whose pool holds a gold document's
    candidate; None where no question has that gold (a set with document gold only has no page-level figure)."""
    pages = [r["reciprocal_rank"] > 0 for r in by_method[POOL_METHOD]
             if r["gold_pages"] and r["reciprocal_rank"] is not None]
    out: dict[str, Any] = {"pool_recall_at_30": _mean(pages), "n_pool_recall": len(pages)}
    if by_method[f"doc_{POOL_METHOD}"]:
        docs = [r["reciprocal_rank"] > 0 for r in by_method[f"doc_{POOL_METHOD}"] if r["reciprocal_rank"] is not None]
        out |= {"doc_pool_recall_at_30": _mean(docs), "n_doc_pool_recall": len(docs)}
    return out


def answer_trust(by_method: dict[str, list[dict[str, Any]]], first_page_gold: set[str]) -> dict[str, Any]:
    """The answer metrics a user feels, per answer method: ``answer_precision`` (correct / answered: how often a
    value shown is right), ``answer_coverage`` (answered / answerable), accuracy on the answerable and on the
    unanswerable questions apart, and on the answerable questions whose arbiter first page is a gold page (the
    reader's share when retrieval did its part). Answerable = a reference answer and page gold that is not empty."""
    out: dict[str, dict[str, Any]] = {k: {} for k in (
        "answer_precision", "answer_coverage", "answer_accuracy_answerable", "answer_accuracy_unanswerable",
        "answer_accuracy_first_page_gold", "n_answered")}
    for m in ANSWER_METHODS:
        judged = [r for r in by_method[m] if r["answer_correct"] is not None]
        answered = [r for r in judged if r.get("answer_found")]
        answerable = [r for r in judged if r["unanswerable"] is False]
        unanswerable = [r for r in judged if r["unanswerable"]]
        out["answer_precision"][m] = _mean([r["answer_correct"] for r in answered])
        out["answer_coverage"][m] = _ratio(sum(1 for r in answerable if r.get("answer_found")), len(answerable))
        out["answer_accuracy_answerable"][m] = _mean([r["answer_correct"] for r in answerable])
        out["answer_accuracy_unanswerable"][m] = _mean([r["answer_correct"] for r in unanswerable])
        out["answer_accuracy_first_page_gold"][m] = _mean(
            [r["answer_correct"] for r in answerable if r["question_id"] in first_page_gold])
        out["n_answered"][m] = len(answered)
    return out


def precision_by_rule(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per reader rule (``answers.rule``; '(none)' for rows written before rules were recorded): how many of the
    judged questions it decided, how many it answered, how many of those were right, and its precision."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["answer_correct"] is not None:
            groups[r.get("rule") or "(none)"].append(r)
    out = {}
    for rule in sorted(groups):
        answered = [r for r in groups[rule] if r.get("answer_found")]
        right = sum(1 for r in answered if r["answer_correct"])
        out[rule] = {"questions": len(groups[rule]), "answered": len(answered), "right": right,
                     "precision": _ratio(right, len(answered))}
    return out


def label_values(value: Any) -> list[str]:
    """The categories one label value puts a question in (a list label puts it in each; empty list: '(none)')."""
    if isinstance(value, list):
        return [str(v) for v in value] or ["(none)"]
    if isinstance(value, dict) or value is None:
        return []
    return [str(value)]


def is_figure_only(labels: dict[str, Any]) -> bool:
    """Evidence is only figures or charts: ``evidence_sources`` is set and names no text, table or layout source."""
    sources = labels.get("evidence_sources")
    sources = [sources] if isinstance(sources, str) else sources
    if not isinstance(sources, list) or not sources:
        return False
    return not any(frag in str(s).lower() for s in sources for frag in TEXT_EVIDENCE)


def by_label(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """label -> category -> summary, for every label of the set with at most MAX_LABEL_VALUES categories."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for key, value in (r["labels"] or {}).items():
            for cat in label_values(value):
                groups[key][cat].append(r)
    return {key: {cat: summarise(cats[cat]) for cat in sorted(cats)}
            for key, cats in sorted(groups.items()) if len(cats) <= MAX_LABEL_VALUES}


def evaluation_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The headline, the per-label breakdown and the figure-only questions apart (with the rest beside them)."""
    out = summarise(rows)
    by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_method[r["method"]].append(r)
    out["answer_precision_by_rule"] = {m: precision_by_rule(by_method[m]) for m in ANSWER_METHODS if by_method[m]}
    out["by_label"] = by_label(rows)
    figure = [r for r in rows if is_figure_only(r["labels"] or {})]
    out["figure_only"] = summarise(figure) if figure else None
    out["excluding_figure_only"] = summarise([r for r in rows if not is_figure_only(r["labels"] or {})]) \
        if figure else None
    return out

