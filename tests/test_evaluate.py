"""Evaluation harness: exact metrics on hand-built warehouse rows (values worked out by hand in the comments),
the SQL summary against the Python one, the report section, and one end-to-end run on the sample corpus."""

from __future__ import annotations

import json

import pytest

from flows.cli_eval import format_summary, pool_line
from flows.evaluate import evaluate_into, limited_question_set
from schemas.contracts import RetrievalResult, RetrievedPassage
from schemas.settings import get_settings
from tasks.corpus.sample.generate import generate_sample_corpus
from tasks.evaluate.hybrid import passages
from tasks.evaluate.report import eval_section_html
from tasks.evaluate.score import (
    ANSWER_METHODS,
    PAGE_METHODS,
    POOL_DEPTH,
    Gold,
    dedupe,
    evaluation_summary,
    is_figure_only,
    question_rows,
    rank_metrics,
    score_run,
    summarise,
)
from tasks.questions.load import question_set_name
from warehouse.answers import answer_values
from warehouse.db import Warehouse
from warehouse.evals import load_eval_results, method_summary, save_eval_results
from warehouse.questions import save_questions
from warehouse.retrieval import retrieval_row
from warehouse.sink import QuestionWrite, write_questions

RUN = "run-eval"
PT, TAB, CH, FIG = "Pure-text (Plain-text)", "Table", "Chart", "Figure"


def _passage(page: int, role: str = "primary", doc: str = "docA") -> RetrievedPassage:
    return RetrievedPassage(candidate_id=f"{doc}:{page}:l0-1", doc_id=doc, page=page, line_start=0, line_end=1,
                            section="", text="t", role=role, decision="keep", reason="r", relevance=0.9,
                            anchor_found=False)


def _result(qid: str, primary=(), supporting=(), status: str = "found") -> RetrievalResult:
    return RetrievalResult(question_id=qid, status=status, primary=[_passage(p) for p in primary],
                           supporting=[_passage(p, "supporting") for p in supporting], rule="test",
                           arbiter_provider="rules", arbiter_model="rules")


def _cand(qid: str, n: int, page: int, rrf_rank: int, ranks: dict[str, int]) -> dict:
    return {"run_id": RUN, "question_id": qid, "candidate_id": f"docA:{page}:c{n}", "doc_id": "docA", "page": page,
            "line_start": n, "line_end": n, "section_id": None, "section": "", "methods": list(ranks),
            "ranks": json.dumps(ranks), "raw_scores": "{}", "matched_keywords": [], "snippet": "",
            "rrf_score": 1.0 / rrf_rank, "rrf_rank": rrf_rank, "in_pool": True}


def _answer(qid: str, regime: str, value, routed: bool, tokens: tuple[int, int], status: str = "ok") -> dict:
    return {"run_id": RUN, "question_id": qid, "regime": regime, "routed": routed, "value": value,
            "answer_found": value is not None, "status": status, "input_tokens": tokens[0],
            "output_tokens": tokens[1], "exit": "single_call"}


# q1 gold [2,4]   arbiter [4,7]          rrf [7,2,9]  keywords [7,9]  embeddings [7,2]  toc [2]
# q2 gold []      arbiter not found      (unanswerable, reference "Not answerable")
# q3 gold [0]     arbiter not found      rrf [5,0]    keywords [0]    embeddings [5]    toc []   figure only
# q4 gold null    arbiter [3]            (skipped for page metrics)
# q5 gold [6]     arbiter [8,8,6]->[8,6] empty pool                                              figure only
# q6 gold [1]     never reached retrieval (no rows at all: counts as a miss / wrong answer)
QUESTIONS = [
    ("q1", [2, 4], "42", {"answer_format": "Int", "evidence_sources": [PT]}),
    ("q2", [], "Not answerable", {"answer_format": "None", "evidence_sources": []}),
    ("q3", [0], "Paris", {"answer_format": "Str", "evidence_sources": [FIG]}),
    ("q4", None, "7", {"answer_format": "Int", "evidence_sources": [TAB, CH]}),
    ("q5", [6], "1,000", {"answer_format": "Int", "evidence_sources": [CH]}),
    ("q6", [1], "x", {"answer_format": "Str", "evidence_sources": [PT]}),
]


@pytest.fixture
def filled(wh):
    save_questions(wh, RUN, "handmade", [
        {"question_id": q, "text": f"question {q}?", "docs": None, "answer": a, "gold_pages": g, "labels": lab,
         "answer_shape": "entity", "status": "answered"} for q, g, a, lab in QUESTIONS])
    for r in (_result("q1", [4], [7]), _result("q2", status="not_found"), _result("q3", status="not_found"),
              _result("q4", [3]), _result("q5", [8, 8], [6])):
        write_questions(wh, RUN, [QuestionWrite(r.question_id, "answered", retrieval=retrieval_row(RUN, r.question_id, r))])
    wh.insert_rows("candidates", [
        _cand("q1", 1, 7, 1, {"keywords": 2, "embeddings": 1}), _cand("q1", 2, 7, 2, {"keywords": 1}),
        _cand("q1", 3, 2, 3, {"embeddings": 2, "toc": 1}), _cand("q1", 4, 9, 4, {"keywords": 3}),
        {**_cand("q1", 5, 2, 31, {"keywords": 4}), "in_pool": False},  # outside the pool: no baseline sees it
        _cand("q2", 1, 1, 1, {"keywords": 1}),
        _cand("q3", 1, 5, 1, {"embeddings": 1}), _cand("q3", 2, 0, 2, {"keywords": 1}),
    ])
    for a in (_answer("q1", "batch", "42", False, (100, 10)), _answer("q1", "sequential", "41", True, (50, 5)),
              _answer("q2", "batch", None, True, (0, 0)), _answer("q2", "sequential", None, False, (0, 0)),
              _answer("q3", "batch", None, False, (30, 3)), _answer("q3", "sequential", None, True, (40, 4)),
              _answer("q4", "batch", "7", False, (80, 8)), _answer("q4", "sequential", "8", True, (60, 6)),
              _answer("q5", "batch", None, True, (20, 0), status="failed"),
              _answer("q5", "sequential", "1000", False, (70, 7))):
        write_questions(wh, RUN, [QuestionWrite(a["question_id"], "answered", answers=[answer_values(a)])])
    rows = score_run(wh, RUN, "both")
    save_eval_results(wh, RUN, rows)
    return rows


def test_rank_metrics_and_dedupe():
    assert dedupe([3, 3, 1, 3, 2, 1]) == [3, 1, 2]
    assert rank_metrics([9, 8, 7, 6, 5, 4], {4}.__contains__) == (False, False, pytest.approx(1 / 6))
    assert rank_metrics([9, 8, 7, 6, 4], {4, 8}.__contains__) == (False, True, 0.5)
    assert rank_metrics([], {4}.__contains__) == (False, False, 0.0)


def test_headline_metrics_exact(filled):
    s = summarise(filled)
    assert (s["n_questions"], s["n_page_gold"], s["n_unanswerable"], s["n_no_page_gold"]) == (6, 4, 1, 1)
    # over q1, q3, q5, q6
    # (no verdicts stored here: the arbiter's order is what it kept; no hybrid search was run: NULL, not a miss)
    assert s["page_hit_at_1"] == {"arbiter": 0.25, "hybrid": None, "rrf": 0.0, "keywords": 0.25, "embeddings": 0.0,
                                  "toc": 0.25}
    assert s["page_hit_at_5"] == {"arbiter": 0.5, "hybrid": None, "rrf": 0.5, "keywords": 0.25, "embeddings": 0.25,
                                  "toc": 0.25}
    assert s["mrr"] == {"arbiter": 0.375, "hybrid": None, "rrf": 0.25, "keywords": 0.25, "embeddings": 0.125,
                        "toc": 0.25}
    # predicted not found: q2 (right), q3 (wrong); q6 never got a result, which is not a not-found prediction
    assert s["not_found"] == {"precision": 0.5, "recall": 1.0, "predicted": 2, "unanswerable": 1, "correct": 1}
    # batch: q1 q2 q4 right; q5 failed, q6 missing -> wrong.  sequential: q2 q5.  auto (routed): q2 only.
    assert s["answer_accuracy"] == {"batch": 0.5, "sequential": 0.3333, "auto": 0.1667}
    assert s["n_reference"] == {"batch": 6, "sequential": 6, "auto": 6}
    assert s["input_tokens"] == {"batch": 230, "sequential": 220, "auto": 170}
    assert s["output_tokens"] == {"batch": 21, "sequential": 22, "auto": 15}
    assert "doc_hit_rate" not in s
    # the pool holds a gold page for q1 (page 2, third) and q3 (page 0); not q5 (empty pool) nor q6 (never reached)
    assert (s["pool_recall_at_30"], s["n_pool_recall"]) == (0.5, 4) and "doc_pool_recall_at_30" not in s


def test_pool_recall_reads_the_first_30_candidates_in_the_briefs_order():
    """A gold page counts when it is among the first 30 candidates by RRF rank (the order the arbiter is handed
    them), whatever the pool's size; corpus-wide, a gold page of another document does not count, a candidate of a
    gold document counts for the document-level figure; a question with document gold only is not counted."""
    gold = Gold(question_id="q", question_set="s", answer=None, gold_pages=[7], gold_docs=frozenset({"A"}), labels={})
    cands = [{**_cand("q", n, 1, n, {}), "doc_id": "B", "ranks": {"keywords": n}} for n in range(1, 41)]
    cands[POOL_DEPTH] = {**cands[POOL_DEPTH], "doc_id": "A", "page": 7}  # 31st: one past the pool's depth
    cands[3] = {**cands[3], "page": 7}  # page 7, 4th, but of document B
    late = {r["method"]: r for r in question_rows(RUN, gold, None, list(reversed(cands)), [], "auto", True)}
    assert late["pool"]["reciprocal_rank"] == 0.0 and late["doc_pool"]["reciprocal_rank"] == 0.0
    cands[POOL_DEPTH - 1] = {**cands[POOL_DEPTH - 1], "doc_id": "A", "page": 7}  # 30th: inside
    inside = {r["method"]: r for r in question_rows(RUN, gold, None, cands, [], "auto", True)}
    assert inside["pool"]["reciprocal_rank"] > 0 and inside["doc_pool"]["reciprocal_rank"] > 0
    doc_only = Gold(question_id="d", question_set="s", answer=None, gold_pages=None, gold_docs=frozenset({"B"}),
                    labels={})
    s = summarise([*late.values(), *inside.values(),
                   *question_rows(RUN, doc_only, None, cands, [], "auto", True)])
    assert (s["pool_recall_at_30"], s["n_pool_recall"]) == (0.5, 2)  # q once out, once in; d has no page gold
    assert (s["doc_pool_recall_at_30"], s["n_doc_pool_recall"]) == (round(2 / 3, 4), 3)
    assert format_summary({**s, "run_id": "r", "seconds": 1}).count("pool recall@30: 50.0% of 2 questions") == 1
    none = summarise(question_rows(RUN, doc_only, None, cands, [], "auto", False))
    assert none["pool_recall_at_30"] is None and "doc_pool_recall_at_30" not in none
    assert "document gold only" in pool_line(none)


def test_rows_per_question_and_method(filled, wh):
    assert len(filled) == 6 * (len(PAGE_METHODS) + 1 + len(ANSWER_METHODS))  # + the pool's own row
    stored = load_eval_results(wh, RUN)
    assert stored == filled
    arb = {r["question_id"]: r for r in load_eval_results(wh, RUN, "arbiter")}
    assert arb["q5"]["predicted_pages"] == [8, 6] and arb["q5"]["reciprocal_rank"] == 0.5
    assert arb["q4"]["predicted_pages"] == [3] and arb["q4"]["hit_at_1"] is None and arb["q4"]["unanswerable"] is None
    assert arb["q2"]["hit_at_1"] is None and arb["q2"]["unanswerable"] is True
    kw = {r["question_id"]: r for r in load_eval_results(wh, RUN, "keywords")}
    assert kw["q1"]["predicted_pages"] == [7, 9]  # the out-of-pool candidate on page 2 is not ranked
    save_eval_results(wh, RUN, filled)  # idempotent
    assert len(load_eval_results(wh, RUN)) == len(filled)


def test_label_breakdown_and_figure_only_apart(filled):
    s = evaluation_summary(filled)
    fmt = s["by_label"]["answer_format"]
    assert sorted(fmt) == ["Int", "None", "Str"]
    assert (fmt["Int"]["n_questions"], fmt["Int"]["n_page_gold"]) == (3, 2)  # q1 q4 q5
    assert fmt["Int"]["page_hit_at_1"]["arbiter"] == 0.5 and fmt["Int"]["page_hit_at_5"]["arbiter"] == 1.0
    assert fmt["Int"]["answer_accuracy"]["batch"] == 0.6667
    ev = s["by_label"]["evidence_sources"]
    assert {k: v["n_questions"] for k, v in ev.items()} == {"(none)": 1, CH: 2, FIG: 1, PT: 2, TAB: 1}
    assert ev[CH]["n_no_page_gold"] == 1
    fig, rest = s["figure_only"], s["excluding_figure_only"]
    assert (fig["n_questions"], rest["n_questions"]) == (2, 4)  # q3 q5 vs q1 q2 q4 q6
    assert fig["page_hit_at_1"]["arbiter"] == 0.0 and fig["page_hit_at_5"]["arbiter"] == 0.5
    assert fig["answer_accuracy"] == {"batch": 0.0, "sequential": 0.5, "auto": 0.0}
    assert rest["mrr"]["arbiter"] == 0.5 and rest["not_found"]["precision"] == 1.0
    assert is_figure_only({"evidence_sources": [CH, FIG]}) and not is_figure_only({"evidence_sources": [FIG, TAB]})
    assert not is_figure_only({"evidence_sources": []}) and not is_figure_only({})


def test_sql_summary_matches_python(filled, wh):
    s = summarise(filled)
    sql = {r["method"]: r for r in method_summary(wh, RUN)}
    def r4(value):
        return None if value is None else round(value, 4)

    for m in PAGE_METHODS:
        assert sql[m]["page_gold"] == s["n_page_gold"]
        assert r4(sql[m]["hit_at_1"]) == s["page_hit_at_1"][m]
        assert r4(sql[m]["hit_at_5"]) == s["page_hit_at_5"][m]
        assert r4(sql[m]["mrr"]) == s["mrr"][m]
    assert sql["arbiter"]["not_found_correct"] == 1 and sql["arbiter"]["not_found_predicted"] == 2
    for m in ANSWER_METHODS:
        assert round(sql[m]["answer_accuracy"], 4) == s["answer_accuracy"][m]
        assert sql[m]["input_tokens"] == s["input_tokens"][m]


def test_document_gold_corpus_wide():
    gold = Gold(question_id="d1", question_set="s", answer=None, gold_pages=[3], gold_docs=frozenset({"A"}),
                labels={"question_type": "Multi-Doc"})
    result = RetrievalResult(question_id="d1", status="found", primary=[_passage(3, doc="B"), _passage(3, doc="A")],
                             rule="t", arbiter_provider="rules", arbiter_model="rules")
    cands = [{"question_id": "d1", "candidate_id": "c1", "doc_id": "A", "page": 9, "rrf_rank": 1,
              "ranks": {"keywords": 1}}]
    rows = question_rows(RUN, gold, {"status": "found", "result": result.model_dump_json()}, cands, [], "auto", True)
    by = {r["method"]: r for r in rows}
    # page 3 of the wrong document does not count; the same page of the gold document, second, does
    arb = by["arbiter"]
    assert (arb["hit_at_1"], arb["hit_at_5"], arb["reciprocal_rank"]) == (False, True, 0.5)
    assert (by["doc_arbiter"]["hit_at_1"], by["doc_arbiter"]["reciprocal_rank"]) == (False, 0.5)
    assert by["doc_rrf"]["hit_at_1"] is True and by["doc_toc"]["reciprocal_rank"] == 0.0
    assert by["auto"]["answer_correct"] is None  # no reference answer: not judged
    s = summarise(rows)
    assert s["doc_hit_rate"]["arbiter"] == 0.0 and s["doc_hit_rate"]["rrf"] == 1.0 and s["n_doc_gold"] == 1


def test_the_arbiter_is_scored_on_its_order_of_the_whole_pool():
    """hit@1 is what the dispatcher kept first; hit@5 and MRR read every candidate, by the verdicts' role and
    relevance after the kept ones; a not-found keeps nothing, and its order still ranks."""
    gold = Gold(question_id="q", question_set="s", answer=None, gold_pages=[7], gold_docs=None, labels={})
    cands = [{**_cand("q", n, page, n, {}), "ranks": {"keywords": n}} for n, page in enumerate((4, 5, 7, 9), start=1)]
    verdicts = [{"candidate_id": c["candidate_id"], "role": role, "relevance": rel}
                for c, (role, rel) in zip(cands, [("primary", 0.9), ("discarded", 0.0), ("tangential", 0.3),
                                                  ("tangential", 0.2)])]
    found = {"status": "found", "result": _result("q", primary=[4]).model_dump_json()}
    by = {r["method"]: r for r in question_rows(RUN, gold, found, cands, [], "auto", False, verdicts=verdicts)}
    assert by["arbiter"]["predicted_pages"] == [4, 7, 9, 5]
    assert (by["arbiter"]["hit_at_1"], by["arbiter"]["hit_at_5"], by["arbiter"]["reciprocal_rank"]) == (False, True, 0.5)
    missing = {"status": "not_found", "result": _result("q", status="not_found").model_dump_json()}
    by = {r["method"]: r for r in question_rows(RUN, gold, missing, cands, [], "auto", False, verdicts=verdicts)}
    assert (by["arbiter"]["hit_at_1"], by["arbiter"]["hit_at_5"], by["arbiter"]["predicted_not_found"]) == (
        False, True, True)


def test_a_search_baseline_is_scored_where_it_ran():
    gold = Gold(question_id="q", question_set="s", answer=None, gold_pages=[7], gold_docs=frozenset({"A"}), labels={})
    ran = {r["method"]: r for r in question_rows(RUN, gold, None, [], [], "auto", True, {"hybrid": [("A", 7)]})}
    assert (ran["hybrid"]["hit_at_1"], ran["doc_hybrid"]["hit_at_1"]) == (True, True)
    skipped = {r["method"]: r for r in question_rows(RUN, gold, None, [], [], "auto", True, {})}
    assert skipped["hybrid"]["hit_at_1"] is None and skipped["doc_hybrid"]["hit_at_1"] is None
    assert summarise(list(skipped.values()))["page_hit_at_1"]["hybrid"] is None


def test_hybrid_passages_are_fixed_windows_of_words_on_their_pages():
    words = [f"w{i}" for i in range(310)]
    texts = [" ".join(words[i:i + 10]) for i in range(0, 310, 10)]  # 31 lines of 10 words
    pages = [i // 10 for i in range(31)]  # 100 words a page
    cut = passages(pages, texts)
    assert [len(t.split()) for _, t in cut] == [120, 120, 120, 40]  # a new passage every 90 words, to the end
    assert [t.split()[0] for _, t in cut] == ["w0", "w90", "w180", "w270"]
    assert [p for p, _ in cut] == [0, 1, 2, 2]  # the page holding most of its words (w90..w209: page 1)
    assert len(passages(pages[:30], texts[:30])) == 3  # the third passage reaches the end: no fourth
    assert passages([], []) == [] and passages([0], ["one two"]) == [(0, "one two")]


def test_report_section(filled, wh):
    html = eval_section_html(wh, RUN)
    assert "Methods side by side" in html and html.count("<svg") == len(evaluation_summary(filled)["by_label"])
    assert "25.0%" in html and "Figure- and chart-only" in html
    assert "<script" not in html and "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert eval_section_html(wh, "no-such-run") == ""


# -- end to end ------------------------------------------------------------------------------------------------------
E2E_QIDS = ("s01", "s06", "s10", "s17", "s19", "s25", "s26", "s27", "s28")  # page gold, null gold, unanswerable


def test_evaluate_end_to_end_on_sample_corpus(tmp_path):
    sample = generate_sample_corpus(tmp_path / "sample")
    lines = [ln for ln in sample.questions_path.read_text().splitlines() if json.loads(ln)["qid"] in E2E_QIDS]
    qpath = tmp_path / "gold" / "questions.jsonl"
    qpath.parent.mkdir()
    qpath.write_text("\n".join(lines) + "\n")
    limited = limited_question_set(qpath, 3, tmp_path / "lim")
    assert question_set_name(limited) == question_set_name(qpath) and len(limited.read_text().splitlines()) == 3
    n = len(lines)
    settings = get_settings(home=tmp_path / "home", embedder={"kind": "hash"})
    with Warehouse(settings.duckdb_path) as wh:
        s = evaluate_into(wh, RUN, qpath, settings, data_root=sample.root, log=lambda m: None)
        stored = load_eval_results(wh, RUN)
        answers = wh.query("SELECT question_id, regime, routed, input_tokens, rule FROM answers WHERE run_id = ?",
                           [RUN])
        wide = evaluate_into(wh, "run-wide", qpath, settings, data_root=sample.root, regime="auto",
                             corpus_wide=True, limit=4, log=lambda m: None)
        wide_scope = wh.query("SELECT docs FROM questions WHERE run_id = 'run-wide'")
    json.dumps(s)
    for key in ("n_questions", "n_page_gold", "n_unanswerable", "page_hit_at_1", "page_hit_at_5", "mrr", "not_found",
                "answer_accuracy", "input_tokens", "seconds", "by_label", "figure_only", "n_no_page_gold", "run_id"):
        assert key in s, key
    assert (s["n_questions"], s["n_page_gold"], s["n_unanswerable"], s["n_no_page_gold"], s["n_failed"]) == \
        (n, 5, 2, 2, 0)
    assert s["ingest"]["ingested"] == 5 and s["question_set"] == "gold-questions"
    for metric in ("page_hit_at_1", "page_hit_at_5", "mrr"):
        assert set(s[metric]) == set(PAGE_METHODS)
    for m in PAGE_METHODS:  # the hybrid baseline too: searched over the same documents
        assert 0 <= s["page_hit_at_1"][m] <= s["page_hit_at_5"][m] <= 1
        assert s["page_hit_at_1"][m] <= s["mrr"][m] <= s["page_hit_at_5"][m] + (1 - s["page_hit_at_5"][m]) / 6
    assert set(s["answer_accuracy"]) == set(ANSWER_METHODS) and all(
        0 <= v <= 1 for v in s["answer_accuracy"].values())
    assert s["n_reference"] == {m: n for m in ANSWER_METHODS}
    # every answer row names the reader rule that produced it, and the summary counts answers per rule
    assert all(a["rule"] for a in answers)
    by_rule = s["answer_precision_by_rule"]["batch"]
    assert sum(v["questions"] for v in by_rule.values()) == n
    assert sum(v["answered"] for v in by_rule.values()) == s["n_answered"]["batch"]
    assert sorted(s["by_label"]) == ["answer_format", "kind"] and s["figure_only"] is None
    assert sum(c["n_questions"] for c in s["by_label"]["kind"].values()) == n
    assert len(stored) == n * (len(PAGE_METHODS) + 1 + len(ANSWER_METHODS))
    assert 0 < s["pool_recall_at_30"] <= 1 and s["pool_recall_at_30"] >= s["page_hit_at_5"]["rrf"]
    rebuilt = evaluation_summary(stored)
    assert {k: rebuilt[k] for k in ("page_hit_at_5", "mrr", "not_found", "answer_accuracy", "by_label")} == \
        {k: s[k] for k in ("page_hit_at_5", "mrr", "not_found", "answer_accuracy", "by_label")}
    assert s["input_tokens"]["batch"] == sum(a["input_tokens"] for a in answers if a["regime"] == "batch")
    assert s["input_tokens"]["auto"] == sum(a["input_tokens"] for a in answers if a["routed"])
    assert {a["question_id"] for a in answers if a["routed"]} == {r["question_id"] for r in stored}
    # corpus-wide: every question searched the whole corpus, its `doc` kept as the gold document
    assert wide["n_questions"] == 4 and wide["ingest"]["skipped_unchanged"] == 3 and wide["n_failed"] == 0
    assert all(r["docs"] is None for r in wide_scope)
    assert set(wide["doc_hit_rate"]) == set(PAGE_METHODS) and wide["n_doc_gold"] == 4
    assert wide["doc_hit_rate"]["hybrid"] is not None
    assert wide["doc_pool_recall_at_30"] >= wide["doc_hit_rate"]["rrf"] and wide["n_doc_pool_recall"] == 4
    assert wide["answer_accuracy"]["batch"] is None and wide["answer_accuracy"]["auto"] is not None


def _answer_eval_row(qid: str, method: str, correct: bool, found: bool, unanswerable: bool,
                     rule: str | None = None) -> dict:
    return {"rule": rule, "run_id": "r", "question_set": "s", "question_id": qid, "method": method, "hit_at_1": None,
            "hit_at_5": None, "reciprocal_rank": None, "predicted_pages": None,
            "gold_pages": [] if unanswerable else [1], "predicted_not_found": None, "unanswerable": unanswerable,
            "answer_correct": correct, "input_tokens": 1, "output_tokens": 1, "labels": {}, "answer_found": found}


def test_answer_precision_and_coverage_from_hand_made_rows():
    # batch: answers q1 right, q2 wrong, abstains on q3 (answerable) and q4 (unanswerable: right)
    rows = [_answer_eval_row("q1", "batch", True, True, False), _answer_eval_row("q2", "batch", False, True, False),
            _answer_eval_row("q3", "batch", False, False, False), _answer_eval_row("q4", "batch", True, False, True)]
    arbiter = {**_answer_eval_row("q1", "arbiter", False, False, False), "answer_correct": None, "hit_at_1": True,
               "hit_at_5": True, "reciprocal_rank": 1.0}
    s = summarise(rows + [arbiter])
    assert s["answer_accuracy"]["batch"] == 0.5
    assert s["answer_precision"]["batch"] == 0.5  # 1 right of 2 answered
    assert s["answer_coverage"]["batch"] == round(2 / 3, 4)  # 2 answered of 3 answerable
    assert s["answer_accuracy_answerable"]["batch"] == round(1 / 3, 4)
    assert s["answer_accuracy_unanswerable"]["batch"] == 1.0
    assert s["answer_accuracy_first_page_gold"]["batch"] == 1.0  # q1: the arbiter's first page is gold
    assert s["answer_precision"]["sequential"] is None and s["n_answered"]["batch"] == 2


def test_answer_precision_per_rule_from_hand_made_rows():
    rows = [_answer_eval_row("q1", "batch", True, True, False, "value.cell"),
            _answer_eval_row("q2", "batch", False, True, False, "value.cell"),
            _answer_eval_row("q3", "batch", True, True, False, "name.role"),
            _answer_eval_row("q4", "batch", False, False, False, "abstain.scope"),
            _answer_eval_row("q5", "batch", True, False, True, None),
            _answer_eval_row("q1", "sequential", True, True, False, "value.cell")]
    s = evaluation_summary(rows)
    assert s["answer_precision_by_rule"]["batch"] == {
        "value.cell": {"questions": 2, "answered": 2, "right": 1, "precision": 0.5},
        "name.role": {"questions": 1, "answered": 1, "right": 1, "precision": 1.0},
        "abstain.scope": {"questions": 1, "answered": 0, "right": 0, "precision": None},
        "(none)": {"questions": 1, "answered": 0, "right": 0, "precision": None}}
    assert s["answer_precision_by_rule"]["sequential"]["value.cell"]["precision"] == 1.0
    assert "auto" not in s["answer_precision_by_rule"]  # no auto rows: no breakdown
    text = format_summary({**s, "run_id": "r", "seconds": 0})
    assert "precision by rule (batch): name.role 1/1, value.cell 1/2; abstained: 2" in text
