"""Detectors on a real paper (Attention Is All You Need), the tokeniser, and the detector dispatcher's rules."""

from __future__ import annotations

import json
import random

import polars as pl
import pytest

from schemas.contracts import ParsedQuestion
from schemas.settings import Settings
from tasks.corpus.embed import get_embedder
from tasks.corpus.parse import parse_pdf
from tasks.detect.detectors import (
    _contains_run,
    cooccurrence_boost,
    detect_embeddings,
    detect_keywords,
    detect_toc,
    title_score,
)
from tasks.detect.cache import CorpusCache
from tasks.detect.keyword_index import (
    TitleEntry,
    query_terms,
    split_numbering,
    stem,
    tokenize,
)
from tasks.detect.plan import caption_label, exact_identifiers, figure_references, page_references, plan_detectors
from warehouse.vectors import VectorStore


def question(text: str, primary: list[str], secondary: list[str] | None = None, qid: str = "q1") -> ParsedQuestion:
    return ParsedQuestion(question_id=qid, text=text, keywords_primary=primary, keywords_secondary=secondary or [],
                          answer_shape="text", decomposition="single", intent="explain", parser="test")


@pytest.fixture(scope="module")
def attention(shared_data):
    doc = parse_pdf(shared_data / "attention" / "1706.03762v5.pdf")
    cache = CorpusCache(settings=Settings())
    cache.add(doc.doc_id, doc.lines, doc.toc)
    outline = json.loads((shared_data / "attention" / "toc_v5.json").read_text())
    pages = {title: page - 1 for _, title, page in outline}  # get_toc pages are 1-based
    return cache, doc.doc_id, pages


# -- tokeniser ---------------------------------------------------------------------------------------------------
def test_tokenize_keeps_numbers_and_drops_stopwords():
    assert tokenize("The revenue was 1,234.5 in 2023, up 12.5% (3.2 points)") == [
        "revenu", "1234.5", "2023", "12.5%", "3.2", "point"]


def test_stem_conflates_inflections():
    assert len({stem(w) for w in ("encoding", "encoded", "encode", "encodes")}) == 1
    assert stem("studies") == stem("study")
    assert stem("classes") == stem("class")
    assert stem("running") == "run"
    assert stem("bus") == "bus"


def test_stem_meets_irregular_forms():
    # "Can the premium be paid ...?" must meet "You may pay the premium ...": suffix stripping cannot reach them
    assert stem("paid") == stem("pay") == stem("paying")
    assert stem("children") == stem("child")
    assert stem("written") == stem("write") == stem("writes")
    assert stem("held") == stem("holds")
    # forms with a second common reading stay as written: a direction, a diode, a currency, 'founded'
    assert stem("left") == "left" and stem("led") == "led" and stem("won") == "won"
    assert stem("found") != stem("find")


def test_query_terms_fall_back_to_content_words():
    terms = query_terms(question("Which optimizer was used?", []))
    assert [kw for kw, _ in terms.primary] == ["optimizer", "used"]
    assert terms.bm25_query


# -- toc detector ------------------------------------------------------------------------------------------------
def test_split_numbering():
    assert split_numbering("3.2.1 Scaled Dot-Product Attention") == ("3.2.1", "Scaled Dot-Product Attention")
    assert split_numbering("Item 7A. Quantitative Disclosures") == ("7a", "Quantitative Disclosures")
    assert split_numbering("Introduction") == (None, "Introduction")


def test_toc_ranks_exact_title_first(attention):
    cache, doc_id, pages = attention
    q = question("How does the model use positional encoding?", ["model", "positional encoding", "positional",
                                                                 "encoding"], ["positional encodings"])
    hits = detect_toc("q1", q.text, query_terms(q), cache.docs(None), k=10)
    top = hits[0]
    doc = cache.doc(doc_id)
    assert doc.section_paths[top.section_id] == "3 Model Architecture > 3.5 Positional Encoding"
    assert top.page == pages["3.5 Positional Encoding"]
    assert top.rank == 1 and top.raw_score > hits[1].raw_score
    section = doc.toc.filter(pl.col("section_id") == top.section_id).row(0, named=True)
    assert top.line_start == section["line_start"] and top.line_end <= section["line_start"] + 4
    assert "positional encoding" in top.matched_keywords
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_toc_section_number_in_question(attention):
    cache, doc_id, _ = attention
    q = question("What does section 3.2.2 explain?", ["section 3.2.2"])
    hits = detect_toc("q1", q.text, query_terms(q), cache.docs(None), k=5)
    assert cache.doc(doc_id).section_paths[hits[0].section_id].endswith("3.2.2 Multi-Head Attention")


def test_toc_ignores_page_units():
    lines = pl.DataFrame({"doc_id": ["d"] * 3, "page": [0, 1, 2], "line_no": [0, 1, 2],
                          "text": ["Page one text", "Results of the survey", "More"]})
    toc = pl.DataFrame({"doc_id": ["d"] * 3, "section_id": [0, 1, 2], "level": [1] * 3,
                        "title": ["Page 1", "Page 2", "Page 3"], "page_start": [0, 1, 2], "page_end": [0, 1, 2],
                        "line_start": [0, 1, 2], "line_end": [0, 1, 2], "parent_id": [None] * 3,
                        "source": ["pages"] * 3}, schema_overrides={"parent_id": pl.Int64})
    cache = CorpusCache(settings=Settings())
    cache.add("d", lines, toc)
    q = question("What are the results of the survey?", ["results", "survey"])
    assert detect_toc("q1", q.text, query_terms(q), cache.docs(None), k=5) == []


def test_toc_proposes_pages_the_question_names():
    texts = ["Cover", "Contents", "- 1 -", "Intro text", "More text", "2", "Body", "Last words"]
    lines = pl.DataFrame({"doc_id": ["d"] * 8, "page": [0, 1, 1, 2, 2, 3, 3, 4], "line_no": list(range(8)),
                          "text": texts})
    cache = CorpusCache(settings=Settings())
    cache.add("d", lines, pl.DataFrame())
    q = question("What is written on page 2?", ["page 2"])
    hits = detect_toc("q1", q.text, query_terms(q), cache.docs(None), k=5)
    assert [h.page for h in hits] == [1, 3]  # physical page 2, and the page printed '2'
    assert all(h.raw_score == hits[0].raw_score for h in hits)
    q = question("What does the last page say?", ["last page"])
    assert [h.page for h in detect_toc("q1", q.text, query_terms(q), cache.docs(None), k=5)] == [4]


def test_toc_proposes_the_captions_of_figures_and_tables_the_question_names():
    texts = ["Intro. As Figure 2 shows, the loss falls.", "Figure 2 shows more below.", "Body text",
             "Figure 2: Loss curves of both models.", "Table 2. Scores", "Figure 12: Another one", "Last"]
    lines = pl.DataFrame({"doc_id": ["d"] * 7, "page": [0, 0, 1, 3, 4, 5, 5], "line_no": list(range(7)),
                          "text": texts})
    cache = CorpusCache(settings=Settings())
    cache.add("d", lines, pl.DataFrame())
    q = question("In Figure 2, which model has the lower loss?", ["figure 2", "loss"])
    hits = detect_toc("q1", q.text, query_terms(q), cache.docs(None), k=5)
    assert [(h.page, h.line_start) for h in hits] == [(3, 3)]  # the caption, not the pages that mention it
    q = question("What do fig. 12 and table 2 compare?", ["fig. 12", "table 2"])
    assert sorted(h.page for h in detect_toc("q1", q.text, query_terms(q), cache.docs(None), k=5)) == [4, 5]
    assert figure_references("Compare Figures 3 and Table 4.1 with fig.5") == [("figure", "3"), ("figure", "5")]
    assert caption_label("Fig. 7. Results") == ("figure", "7") and caption_label("Figure 7 shows") is None
    plan = plan_detectors(question("What does Table 3 list?", ["table 3"]), {"a": "pages"}, True)
    assert "toc" in plan.detectors and "a figure or a table" in plan.rule


# -- keywords detector -------------------------------------------------------------------------------------------
def test_keywords_find_bleu_of_big_model_on_results_page(attention):
    cache, doc_id, pages = attention
    q = question("What BLEU score does the big Transformer model reach on English-to-German translation?",
                 ["BLEU", "BLEU score", "big transformer model", "English-to-German", "translation"],
                 ["BLEU scores", "English to German"])
    hits = detect_keywords("q1", query_terms(q), cache.index([doc_id]), k=10)
    top = hits[0]
    assert top.detector == "keywords" and top.rank == 1
    assert top.page == pages["6.1 Machine Translation"]
    doc = cache.doc(doc_id)
    text = " ".join(doc.line_texts[doc.position(top.line_start):doc.position(top.line_end) + 1])
    assert "BLEU" in text and "big" in text
    assert {"BLEU", "big transformer model", "English-to-German"} <= set(top.matched_keywords)
    assert all(a.raw_score >= b.raw_score for a, b in zip(hits, hits[1:]))


def test_cooccurrence_lifts_windows_holding_several_keywords():
    texts = ["premium premium premium premium", "filler words here", "the premium is paid in euro", "nothing"]
    texts += [f"unrelated line number {i}" for i in range(12)]
    lines = pl.DataFrame({"doc_id": ["d"] * 16, "page": [0, 0, 1, 1] + [2] * 12, "line_no": list(range(16)),
                          "text": texts})
    cache = CorpusCache(settings=Settings(), window_lines=2, window_stride=2)
    cache.add("d", lines, pl.DataFrame())
    q = question("What premium is paid in euro?", ["premium", "euro"], ["paid"])
    index = cache.index(["d"])
    plain = index.scores(query_terms(q).bm25_query)
    assert plain[0] > 0  # BM25 alone likes the repeated word ...
    hits = detect_keywords("q1", query_terms(q), index, k=3)
    assert (hits[0].page, hits[0].line_start) == (1, 2)  # ... co-occurrence prefers premium + euro together
    assert hits[0].matched_keywords == ["premium", "euro", "paid"]
    assert cooccurrence_boost(2, 1) > cooccurrence_boost(1, 1) > cooccurrence_boost(1, 0) == 1.0


def test_keyword_hits_are_cut_to_one_page():
    lines = pl.DataFrame({"doc_id": ["d"] * 4, "page": [0, 0, 1, 1], "line_no": [0, 1, 2, 3],
                          "text": ["intro text", "still intro", "warranty period is two years", "warranty terms"]})
    cache = CorpusCache(settings=Settings(), window_lines=4, window_stride=2)
    cache.add("d", lines, pl.DataFrame())
    q = question("How long is the warranty period?", ["warranty period", "warranty"])
    hits = detect_keywords("q1", query_terms(q), cache.index(["d"]), k=5)
    assert (hits[0].page, hits[0].line_start, hits[0].line_end) == (1, 2, 3)


def test_corpus_wide_scope_spans_documents(attention):
    cache, doc_id, _ = attention
    assert cache.doc_ids(None) == sorted(cache.doc_ids(None))
    q = question("positional encoding sinusoid", ["positional encoding", "sinusoid"])
    assert detect_keywords("q1", query_terms(q), cache.index(None), k=3)[0].doc_id == doc_id


# -- embeddings detector -----------------------------------------------------------------------------------------
def test_embeddings_hits_rank_nearest_window_first(attention, tmp_path):
    cache, doc_id, _ = attention
    doc = cache.doc(doc_id)
    embedder = get_embedder("hash")
    store = VectorStore(tmp_path / "lance")
    store.replace_doc(doc_id, doc.windows, embedder.embed(doc.windows["text"].to_list()), embedder.name)
    target = doc.windows.filter(pl.col("text").str.contains("sinusoid")).row(0, named=True)
    q = question(target["text"], ["sinusoid", "positional"])
    hits = detect_embeddings("q1", q.text, query_terms(q), store, embedder, {doc_id: doc}, [doc_id], k=5)
    assert len(hits) == 5 and [h.rank for h in hits] == [1, 2, 3, 4, 5]
    assert (hits[0].line_start, hits[0].line_end) == (target["line_start"], target["line_end"])
    assert hits[0].raw_score == pytest.approx(1.0, abs=1e-5)
    assert hits[0].raw_score >= hits[1].raw_score
    assert "sinusoid" in hits[0].matched_keywords
    assert detect_embeddings("q1", q.text, query_terms(q), store, embedder, {doc_id: doc}, ["other"], k=5) == []


# -- dispatcher --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ('How many tables include "F1" as a metric?', ["F1"]),
    ("What is disclosed under Item 7A?", ["Item 7A"]),
    ("Was invoice INV-2023-001 paid?", ["INV-2023-001"]),
    ("What does section 4.2.1 require?", ["section 4.2.1"]),
    ("Which firmware does the RTX4090 ship with?", ["RTX4090"]),
    ("What was revenue in Q3 2023, up 12.5%?", []),
    ("What's the share of the author's votes in the 3rd round?", []),
    ("How does English-to-German translation compare?", []),
    ("What is the 50-shot accuracy on 25-May?", []),
    ("Is market CA03 in the Bay Area? Answer 'yes' or 'no'.", ["CA03"]),
    ("Which pages show the logo? Format the answer as a list like ['Page 2', 'Page 4']", []),
])
def test_exact_identifiers(text, expected):
    assert exact_identifiers(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("What date is on the second page?", [2]),
    ("What is at the beginning of page(1)?", [1]),
    ("What are the words at the top of page two?", [2]),
    ("What does the table on pages 4-5 show?", [4]),
    ("Who signed on the last page?", [-1]),
    ("How many pages does the report have?", []),
])
def test_page_references(text, expected):
    assert page_references(text) == expected


def test_plan_all_detectors():
    plan = plan_detectors(question("How is attention computed?", ["attention"]), {"a": "outline"}, True)
    assert plan.detectors == ["toc", "keywords", "embeddings"]
    assert plan.rule.startswith("all: ")


def test_plan_skips_toc_for_page_units_and_embeddings_for_identifiers():
    plan = plan_detectors(question('What does "clause 9" say?', ["clause 9"]), {"a": "pages", "b": "pages"}, True)
    assert plan.detectors == ["keywords"]
    assert "only page units" in plan.rule and "exact identifier" in plan.rule
    plan = plan_detectors(question("What is on page 3?", ["page 3"]), {"a": "pages"}, True)
    assert plan.detectors == ["toc", "keywords", "embeddings"] and "names a page" in plan.rule


def test_plan_without_vectors_and_mixed_sources():
    plan = plan_detectors(question("How is attention computed?", ["attention"]), {"a": "pages", "b": "headings"}, False)
    assert plan.detectors == ["toc", "keywords"]
    assert "no vectors" in plan.rule and "1/2 document(s)" in plan.rule
    assert plan == plan_detectors(question("How is attention computed?", ["attention"]),
                                  {"a": "pages", "b": "headings"}, False)


def test_title_score_reads_sets_as_the_formula_reads_sequences():
    """title_score takes a keyword's shares as set intersections and tests the phrase only when every word is in
    the title: the same score as the formula written over the token sequences, on random titles and keywords."""
    def formula(terms, question_tokens, title):
        toks, score = title.tokens, 0.0
        if not toks:
            return 0.0
        for weight, group in ((1.0, terms.primary), (0.5, terms.secondary)):
            for _, kw in group:
                if set(kw) == set(toks):
                    score += 10 * weight
                elif _contains_run(toks, kw):
                    score += 4 * weight
                else:
                    share = sum(t in set(toks) for t in kw) / len(kw)
                    parent = sum(t in title.parent_tokens for t in kw) / len(kw)
                    score += weight * (2 * share + 0.5 * max(parent - share, 0.0))
        if len(set(toks)) >= 2 and set(toks) <= question_tokens:
            score += 6
        if title.number and "." in title.number and title.number in question_tokens:
            score += 8
        return score

    rng = random.Random(3)
    vocab = ["revenu", "net", "sale", "cost", "incom", "tax", "segment", "oper", "cash", "flow"]
    for _ in range(3_000):
        words = rng.sample(vocab, rng.randint(0, 4)) + rng.sample(vocab, rng.randint(0, 2))
        parents = frozenset(rng.sample(vocab, rng.randint(0, 3)))
        title = TitleEntry(section_id=1, level=1, page_start=0, line_start=0, line_end=3,
                           number=rng.choice([None, "2.1", "3"]), tokens=tuple(words), parent_tokens=parents,
                           path_tokens=parents | set(words))
        kws = [" ".join(rng.sample(vocab, rng.randint(1, 3))) for _ in range(rng.randint(1, 4))]
        q = question(" ".join(kws), kws[:2], kws[2:])
        terms = query_terms(q)
        qtoks = set(rng.sample(vocab, 5)) | {"2.1"}
        assert title_score(terms, qtoks, title) == formula(terms, qtoks, title)
