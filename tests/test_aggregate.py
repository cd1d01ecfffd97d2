"""Aggregation (merging, ids, snippets, RRF, pool cap), the detection warehouse round-trip, and the walk's detection
stage stored by the sink."""

from __future__ import annotations

import polars as pl
import pytest

from schemas.contracts import DetectorHit, ParsedQuestion
from schemas.settings import Settings
from tasks.corpus.embed import get_embedder
from tasks.detect.aggregate import MAX_POOL, aggregate, candidate_id, rrf_score
from tasks.detect.run import (
    CorpusCache,
    EmbedderMismatchError,
    run_detection,
)
from tasks.pipeline import PipelineContext, walk_question
from warehouse.detection import detection_rows, load_candidates, load_hits
from warehouse.questions import load_questions, save_questions
from warehouse.sink import QuestionSink, QuestionWrite, write_questions
from warehouse.vectors import VectorStore

DOC = "abcdef0123456789"


def lines_frame(pages: list[list[str]], doc_id: str = DOC) -> pl.DataFrame:
    rows = [(doc_id, p, text) for p, texts in enumerate(pages) for text in texts]
    return pl.DataFrame({"doc_id": [r[0] for r in rows], "page": [r[1] for r in rows],
                         "line_no": list(range(len(rows))), "text": [r[2] for r in rows]})


def toc_frame(sections: list[tuple[int, str, int, int, int, int | None]], doc_id: str = DOC) -> pl.DataFrame:
    """(section_id, title, page_start, line_start, line_end, parent_id) rows; level = 1 + depth."""
    levels: dict[int, int] = {}
    for sid, _, _, _, _, parent in sections:
        levels[sid] = 1 if parent is None else levels[parent] + 1
    return pl.DataFrame({
        "doc_id": [doc_id] * len(sections), "section_id": [s[0] for s in sections],
        "level": [levels[s[0]] for s in sections], "title": [s[1] for s in sections],
        "page_start": [s[2] for s in sections], "page_end": [s[2] for s in sections],
        "line_start": [s[3] for s in sections], "line_end": [s[4] for s in sections],
        "parent_id": [s[5] for s in sections], "source": ["headings"] * len(sections),
    }, schema_overrides={"parent_id": pl.Int64})


def hit(detector: str, rank: int, page: int, start: int, end: int, score: float = 1.0, kws=(), qid="q1",
        doc_id: str = DOC) -> DetectorHit:
    return DetectorHit(question_id=qid, detector=detector, rank=rank, raw_score=score, doc_id=doc_id, page=page,
                       line_start=start, line_end=end, matched_keywords=list(kws))


@pytest.fixture
def doc():
    page0 = ["1 Premiums", "The annual premium is 1,200 EUR.", "It is paid in January.", "2 Claims",
             "Claims are filed online.", "Claims take 30 days."]
    page1 = ["More on claims.", "A claim needs a receipt.", "Receipts are kept for 5 years.", "3 Contacts",
             "Write to the office.", "Phone us any day."]
    lines = lines_frame([page0, page1])
    toc = toc_frame([(0, "1 Premiums", 0, 0, 2, None), (1, "2 Claims", 0, 3, 8, None),
                     (2, "3 Contacts", 1, 9, 11, None)])
    return lines, toc


def test_hits_merge_per_page_and_section(doc):
    lines, toc = doc
    hits = [hit("toc", 1, 0, 0, 2, 12.0, ["premium"]), hit("keywords", 2, 0, 1, 2, 5.5, ["premium", "paid"]),
            hit("embeddings", 1, 0, 1, 1, 0.8, ["premium"]), hit("keywords", 1, 0, 4, 5, 7.0, ["claims"]),
            hit("keywords", 3, 1, 6, 8, 3.0, ["claims"])]
    out = aggregate("q1", hits, lines, toc, pool_size=30)
    by_id = {c.brief.candidate_id: c.brief for c in out}
    assert set(by_id) == {candidate_id(DOC, 0, 0, 2), candidate_id(DOC, 0, 4, 5), candidate_id(DOC, 1, 6, 8)}
    premium = by_id["abcdef01:0:l0-2"]
    assert premium.methods == ["toc", "keywords", "embeddings"]
    assert premium.ranks == {"toc": 1, "keywords": 2, "embeddings": 1}
    assert premium.raw_scores == {"toc": 12.0, "keywords": 5.5, "embeddings": 0.8}
    assert premium.matched_keywords == ["premium", "paid"]
    assert premium.section == "1 Premiums" and premium.section_id == 0
    # same section (2 Claims) but another page: another candidate, on the page of its anchor lines
    assert by_id["abcdef01:1:l6-8"].page == 1 and by_id["abcdef01:1:l6-8"].section_id == 1


def test_rrf_by_hand_and_order(doc):
    lines, toc = doc
    hits = [hit("toc", 1, 0, 0, 2), hit("keywords", 2, 0, 1, 2), hit("embeddings", 1, 0, 1, 1),
            hit("keywords", 1, 0, 4, 5), hit("keywords", 3, 1, 6, 8)]
    out = aggregate("q1", hits, lines, toc, pool_size=30, rrf_k=60)
    assert [c.brief.candidate_id for c in out] == ["abcdef01:0:l0-2", "abcdef01:0:l4-5", "abcdef01:1:l6-8"]
    assert out[0].brief.rrf_score == pytest.approx(1 / 61 + 1 / 62 + 1 / 61)
    assert out[1].brief.rrf_score == pytest.approx(1 / 61)
    assert out[2].brief.rrf_score == pytest.approx(1 / 63)
    assert [c.rrf_rank for c in out] == [1, 2, 3]
    assert rrf_score({"toc": 1, "keywords": 4}, k=10) == pytest.approx(1 / 11 + 1 / 14)


def test_pool_cap():
    lines = lines_frame([[f"line {i}" for i in range(10)] for _ in range(3)])
    hits = [hit("keywords", n + 1, 3 * n // 10, 3 * n, 3 * n) for n in range(10)]  # apart: one candidate each
    hits += [hit("embeddings", 1, 2, 29, 29), hit("toc", 1, 0, 0, 0)]
    toc_none = pl.DataFrame()
    out = aggregate("q1", hits, lines, toc_none, pool_size=4)
    assert len(out) == 11
    assert [c.in_pool for c in out] == [True] * 4 + [False] * 7
    assert out[0].brief.candidate_id == "abcdef01:0:l0-0" and out[0].brief.methods == ["toc", "keywords"]
    with pytest.raises(ValueError, match="pool_size"):
        aggregate("q1", hits, lines, toc_none, pool_size=0)


def test_pool_never_exceeds_200():
    lines = lines_frame([[f"line {i}" for i in range(10)] for _ in range(50)])
    hits = [hit("keywords", n + 1, 2 * n // 10, 2 * n, 2 * n) for n in range(250)]
    out = aggregate("q1", hits, lines, None, pool_size=500)
    assert len(out) == 250 and sum(c.in_pool for c in out) == MAX_POOL == 200


def test_deeper_hits_only_fill_the_places_left_empty(doc):
    """Deeper hits never merge into a candidate of the top hits (its ranks stay as they were); in a unit of their
    own they follow every top candidate, in RRF order, and are handed to the arbiter only where places are free."""
    lines, toc = doc
    top = [hit("keywords", 1, 0, 4, 5), hit("embeddings", 2, 0, 1, 1)]
    fill = [hit("keywords", 31, 0, 3, 3),  # page 0, section 2 Claims: the top candidate's unit, dropped
            hit("embeddings", 32, 1, 10, 11), hit("keywords", 33, 1, 10, 10),  # 3 Contacts: one new candidate
            hit("embeddings", 31, 1, 6, 7)]  # page 1 of 2 Claims: another new unit
    out = aggregate("q1", top, lines, toc, pool_size=3, fill=fill)
    assert [c.brief.candidate_id for c in out] == ["abcdef01:0:l4-5", "abcdef01:0:l1-1", "abcdef01:1:l10-11",
                                                    "abcdef01:1:l6-7"]
    assert out[0].brief.ranks == {"keywords": 1}  # the deeper keyword hit of its unit did not join it
    assert out[2].brief.ranks == {"keywords": 33, "embeddings": 32}
    assert [c.in_pool for c in out] == [True, True, True, False]
    assert [c.brief.candidate_id for c in aggregate("q1", top, lines, toc, pool_size=3)] == \
        [c.brief.candidate_id for c in out[:2]]  # the top candidates are the same with or without a fill
    sectionless = lines_frame([[f"line {i}" for i in range(12)]])
    out = aggregate("q1", [hit("keywords", 1, 0, 0, 3)], sectionless, None,
                    fill=[hit("keywords", 31, 0, 4, 5), hit("keywords", 32, 0, 7, 8)])  # touches: dropped
    assert [c.brief.candidate_id for c in out] == ["abcdef01:0:l0-3", "abcdef01:0:l7-8"]


def test_sectionless_hits_merge_when_adjacent():
    lines = lines_frame([[f"line {i}" for i in range(12)]])
    hits = [hit("keywords", 1, 0, 0, 3), hit("embeddings", 1, 0, 4, 5), hit("keywords", 2, 0, 8, 9)]
    out = aggregate("q1", hits, lines, None)
    assert sorted(c.brief.candidate_id for c in out) == ["abcdef01:0:l0-5", "abcdef01:0:l8-9"]
    assert out[0].brief.section == "" and out[0].brief.section_id is None


def test_snippet_centres_on_keyword_lines(doc):
    lines, toc = doc
    out = aggregate("q1", [hit("keywords", 1, 0, 3, 5, kws=["claims", "online"])], lines, toc)
    snippet = out[0].brief.snippet.split("\n")
    assert len(snippet) == 5 and "Claims are filed online." in snippet
    assert all(line in lines["text"].to_list() for line in snippet)


def test_snippet_centres_on_the_row_of_the_asked_measure_not_on_the_header_of_its_period():
    """A statement's header carries the question's period words ('nine months ended June 25, 2022'), its row the
    measure ('Net income'): the snippet, all the arbiter reads of a candidate, shows the row. With the period words
    counted alike the header won (five of the question's words on one line) and the row was never shown."""
    page = ["STATEMENTS OF OPERATIONS", "(In millions)", "Three Months Ended Nine Months Ended", "June 25, 2022",
            "Net sales $ 82,959 $ 304,182", "Cost of sales 47,074 174,957", "Gross margin 35,885 129,225",
            "Operating expenses 12,809 37,956", "Other income 10 (97)", "Income taxes 3,624 15,364",
            "Net income $ 19,442 $ 79,082", "Earnings per share 1.20 4.86"]
    lines = lines_frame([page])
    kws = ["net income", "net", "income", "nine months", "months", "ended", "june 25", "june", "2022"]
    out = aggregate("q1", [hit("keywords", 1, 0, 0, 11, kws=kws)], lines, None)
    snippet = out[0].brief.snippet.split("\n")
    assert "Net income $ 19,442 $ 79,082" in snippet and "Three Months Ended Nine Months Ended" not in snippet
    # with no measure word on any line, the period words still choose (the header, as before)
    out = aggregate("q1", [hit("keywords", 1, 0, 0, 11, kws=["nine months", "ended", "june 25"])], lines, None)
    assert "Three Months Ended Nine Months Ended" in out[0].brief.snippet.split("\n")


def test_hits_of_unknown_documents_are_refused(doc):
    lines, toc = doc
    with pytest.raises(ValueError, match="lines"):
        aggregate("q1", [hit("keywords", 1, 0, 0, 1)], None, None)


# -- warehouse ---------------------------------------------------------------------------------------------------
def save_detection(wh, run_id, qid, hits, cands):
    hit_rows, cand_rows = detection_rows(run_id, qid, hits, cands)
    write_questions(wh, run_id, [QuestionWrite(qid, "detected", hits=hit_rows, candidates=cand_rows)])


def test_save_and_load_round_trip_is_idempotent(wh, doc):
    lines, toc = doc
    hits = [hit("toc", 1, 0, 0, 2, 12.0, ["premium"]), hit("keywords", 1, 0, 4, 5, 7.0, ["claims"]),
            hit("keywords", 2, 1, 6, 8, 3.0, ["claims"])]
    cands = aggregate("q1", hits, lines, toc, pool_size=2)
    save_questions(wh, "run1", "set", [{"question_id": "q1", "text": "claims?"}])
    for _ in range(2):
        save_detection(wh, "run1", "q1", hits, cands)
    assert wh.scalar("SELECT count(*) FROM detector_hits") == 3
    assert wh.scalar("SELECT count(*) FROM candidates") == 3
    pool = load_candidates(wh, "run1", "q1")
    assert [c.candidate_id for c in pool] == [c.brief.candidate_id for c in cands[:2]]
    assert pool[0] == cands[0].brief
    everything = load_candidates(wh, "run1", "q1", in_pool_only=False)
    assert len(everything) == 3 and everything[2] == cands[2].brief
    assert load_hits(wh, "run1", "q1", "keywords") == hits[1:]
    assert load_hits(wh, "run1", "q1") == sorted(hits, key=lambda h: (h.detector, h.rank))
    assert load_candidates(wh, "other-run", "q1") == []


def test_save_refuses_rows_of_another_question(wh):
    with pytest.raises(ValueError, match="q2"):
        detection_rows("run1", "q1", [hit("keywords", 1, 0, 0, 1, qid="q2")], [])


# -- the walk's detection stage ----------------------------------------------------------------------------------
def test_the_walk_stores_hits_candidates_and_plan(wh, doc, tmp_path):
    lines, toc = doc
    settings = Settings(home=tmp_path, detect={"pool_size": 3, "top_k_per_detector": 5})
    cache = CorpusCache(settings=settings)
    corpus_doc = cache.add(DOC, lines, toc)
    embedder = get_embedder("hash")
    vectors = VectorStore(tmp_path / "lance")
    vectors.replace_doc(DOC, corpus_doc.windows, embedder.embed(corpus_doc.windows["text"].to_list()), embedder.name)
    question = ParsedQuestion(question_id="q1", text="How long do claims take?", keywords_primary=["claims"],
                              keywords_secondary=["claim"], answer_shape="text", decomposition="single",
                              intent="explain", parser="test")
    save_questions(wh, "run1", "set", [{"question_id": "q1", "text": question.text,
                                        "keywords_primary": question.keywords_primary,
                                        "keywords_secondary": question.keywords_secondary, "answer_shape": "text",
                                        "decomposition": "single", "intent": "explain", "parser": "test"}])
    ctx = PipelineContext(wh=wh, run_id="run1", settings=settings, corpus=cache, vectors=vectors, embedder=embedder,
                          arbiter=None, generator=None, stop_after="candidates", scopes={(): [DOC]})

    def detect():
        (row,) = load_questions(wh, "run1")
        walked = walk_question(ctx, dict(row, docs=None), "detect", QuestionSink(wh, "run1", "stage"))
        assert walked.status == "detected", walked.error
        return load_candidates(wh, "run1", "q1")

    pool = detect()
    assert 1 <= len(pool) <= 3
    fresh = run_detection(question, [DOC], cache, vectors, embedder, settings).pool()
    assert [c.candidate_id for c in pool] == [c.candidate_id for c in fresh]  # (a vector score's last float bits vary)
    assert any(c.section == "2 Claims" and "toc" in c.methods for c in pool)
    detectors, rule = wh.execute("SELECT detectors, detector_rule FROM questions WHERE question_id = 'q1'")[0]
    assert detectors == ["toc", "keywords", "embeddings"] and rule.startswith("all:")
    assert {h.detector for h in load_hits(wh, "run1", "q1")} == {"toc", "keywords", "embeddings"}
    assert detect() == pool
    assert wh.scalar("SELECT count(*) FROM candidates") == len(load_candidates(wh, "run1", "q1", False))


def test_detection_refuses_vectors_of_another_embedder(wh, doc, tmp_path):
    lines, toc = doc
    cache = CorpusCache(settings=Settings())
    corpus_doc = cache.add(DOC, lines, toc)
    vectors = VectorStore(tmp_path / "lance")
    short = get_embedder("hash").embed(corpus_doc.windows["text"].to_list())[:, :64]
    vectors.replace_doc(DOC, corpus_doc.windows, short, "truncated-hash")
    question = ParsedQuestion(question_id="q1", text="claims?", keywords_primary=["claims"], keywords_secondary=[],
                              answer_shape="text", decomposition="single", intent="explain", parser="test")
    with pytest.raises(EmbedderMismatchError, match="64-d"):
        run_detection(question, [DOC], cache, vectors, get_embedder("hash"), Settings())


def test_detection_fills_the_pool_with_deeper_hits_and_keeps_its_top(doc, tmp_path):
    lines, toc = doc
    question = ParsedQuestion(question_id="q1", text="How long do claims take?", keywords_primary=["claims"],
                              keywords_secondary=["claim"], answer_shape="text", decomposition="single",
                              intent="explain", parser="test")
    embedder = get_embedder("hash")
    vectors = VectorStore(tmp_path / "lance")

    def detect(fill_depth: int):
        settings = Settings(home=tmp_path, detect={"pool_size": 6, "top_k_per_detector": 1, "fill_depth": fill_depth})
        cache = CorpusCache(settings=settings)
        corpus_doc = cache.add(DOC, lines, toc)
        if not vectors.count():
            vectors.replace_doc(DOC, corpus_doc.windows, embedder.embed(corpus_doc.windows["text"].to_list()),
                                embedder.name)
        return run_detection(question, [DOC], cache, vectors, embedder, settings)

    alone, filled = detect(0), detect(4)
    assert all(h.rank == 1 for h in alone.hits) and max(h.rank for h in filled.hits) > 1
    assert len(filled.pool()) > len(alone.pool())
    top = [c.brief for c in alone.candidates]
    assert [c.brief for c in filled.candidates[:len(top)]] == top  # the same candidates first, ranks unchanged
    assert all(min(c.ranks.values()) > 1 for c in filled.pool()[len(top):])
