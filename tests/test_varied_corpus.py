"""The scale benchmark's generated corpus (tasks/corpus/sample/varied.py): no two pages alike, few lines repeated,
the same documents whatever the size asked, and each question's gold page printing its answer."""

from __future__ import annotations

import json
from collections import Counter

import pymupdf
import pytest

from tasks.corpus.sample.generate import normalize_ws
from tasks.corpus.sample.varied import ensure_varied_corpus, varied_document, write_questions


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return ensure_varied_corpus(tmp_path_factory.mktemp("varied"), 120)


@pytest.fixture(scope="module")
def pages(corpus) -> list[list[str]]:
    """Each document's pages, as the lines PyMuPDF extracts."""
    out = []
    for pdf in corpus.pdfs:
        with pymupdf.open(pdf) as doc:
            out.append([[ln.strip() for ln in page.get_text().splitlines() if ln.strip()] for page in doc])
    return out


def test_the_corpus_holds_the_pages_asked_for(corpus, pages):
    assert corpus.pages >= 120
    assert sum(len(d) for d in pages) == corpus.pages
    assert len(corpus.pdfs) >= 3 and len(corpus.questions) == len(corpus.pdfs)


def test_no_two_pages_alike(pages):
    texts = [normalize_ws(" ".join(page)) for doc in pages for page in doc]
    assert len(set(texts)) == len(texts)


def test_few_lines_repeat(pages):
    """Dedup cannot flatter the corpus: the embedder runs blocks of a few consecutive lines, each distinct text
    once a process; nearly every such block is printed once. What repeats is a document's running header and footer
    and its tables' headers and years, as in real filings."""
    blocks = Counter(tuple(page[i:i + 4]) for doc in pages for page in doc for i in range(0, len(page), 4))
    assert sum(n for n in blocks.values() if n == 1) / sum(blocks.values()) > 0.98
    sentences = Counter(ln for doc in pages for page in doc for ln in page if len(ln.split()) >= 4)
    assert sum(n for n in sentences.values() if n == 1) / sum(sentences.values()) > 0.9
    titles = {normalize_ws(doc[0][0]).split(":")[0] for doc in pages}  # each title names its organisation
    assert len(titles) == len(pages)


def test_documents_are_the_same_whatever_the_size(corpus, tmp_path):
    small = ensure_varied_corpus(corpus.root, 30)
    assert small.pdfs == corpus.pdfs[:len(small.pdfs)] and small.pages >= 30
    spec, question = varied_document(1)
    assert (spec, question) == varied_document(1) and spec != varied_document(2)[0]
    fresh = ensure_varied_corpus(tmp_path, 30, workers=2)  # drawn again, by two processes: the same bytes
    assert [p.read_bytes() for p in fresh.pdfs] == [p.read_bytes() for p in small.pdfs]


def test_gold_pages_print_the_answer(corpus, pages):
    for q, doc in zip(corpus.questions, pages):
        assert q["doc"] == f"docs/{corpus.pdfs[corpus.questions.index(q)].name}"
        for page in q["gold_pages_0based"]:
            assert q["answer"] in normalize_ws(" ".join(doc[page]))


def test_question_set_spreads_over_the_documents(corpus, tmp_path):
    rows = [json.loads(line) for line in write_questions(corpus, tmp_path / "q.jsonl", 2).read_text().splitlines()]
    assert len(rows) == 2 and rows[0]["doc"] != rows[1]["doc"]
    assert {r["qid"] for r in rows} <= {q["qid"] for q in corpus.questions}
