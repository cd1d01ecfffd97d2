"""One set of words (``tasks.words``): the stemmer every brick shares, and each brick's stopwords made of the same
groups, so that a word is never noise to one brick by accident and a term to another."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tasks import words
from tasks.detect.keyword_index import tokenize
from tasks.generate import sentences
from tasks.questions import lexicon
from tasks.questions.parser import parse_question
from tasks.terms import nearest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("a, b", [("running", "run"), ("encodings", "encode"), ("encoded", "encode"),
                                  ("paid", "pay"), ("children", "child"), ("setting", "set"), ("policies", "policy")])
def test_one_stem_meets_the_forms_of_a_word(a, b):
    assert words.stem(a) == words.stem(b)


@pytest.mark.parametrize("form", sorted(words.AMBIGUOUS_FORMS))
def test_forms_with_a_second_reading_are_verbs_to_the_reader_only(form):
    verb = words.AMBIGUOUS_FORMS[form]
    assert words.stem(form) != words.stem(verb)  # a search keeps 'left' (a side), 'LED' (a diode) apart
    assert sentences.stem(form) == sentences.stem(verb)  # 'revenue rose' answers 'did revenue rise'


def test_the_reader_reads_the_shared_stem_with_its_synonyms_and_adverbs():
    assert sentences.stem("Setting") == sentences.stem("set") == words.stem("set")
    assert sentences.stem("annually") == sentences.stem("yearly") == sentences.stem("annual")
    assert sentences.stem("quarterly") == sentences.stem("quarter")
    assert sentences.stem("ended") == sentences.stem("termination")
    assert sentences.same(sentences.stem("cancelled"), sentences.stem("cancel"))


def test_function_words_are_noise_to_every_brick():
    for w in words.FUNCTION_WORDS - words.INDEXED_ANYWAY:
        assert tokenize(w) == [], w
        assert w in sentences.STOPWORDS, w
        assert w in lexicon.STOPWORDS or w == "may", w  # 'may' is a month to the parser


def test_relational_words_are_noise_to_a_search_and_terms_to_the_reader():
    for w in ("before", "after", "not", "only", "between", "more"):
        assert tokenize(w) == [] and w in lexicon.STOPWORDS and w not in sentences.STOPWORDS


def test_asking_and_document_words():
    # 'state' and 'list' are how a question asks to a search, and nouns in a document to the reader
    assert tokenize("state listed") == [] and "state" not in sentences.STOPWORDS
    assert {"report", "page", "document"} <= sentences.STOPWORDS
    assert "approximately" in lexicon.STOPWORDS and tokenize("approximately") == ["approximately"]
    assert "approximately" not in parse_question("q", "What was approximately the revenue in 2023?").keywords_primary


def test_the_nearest_spelling_is_the_same_in_every_process():
    """Of several near spellings the closest, then the first alphabetically: the pool's words are a set, whose order
    Python salts per process, and an audit must get the same reason twice (the rules arbiter reads ``nearest``)."""
    assert nearest("revenu", {"revenues", "revenue", "revenued"}) == "revenue"
    assert nearest("micrsoft", {"microsofts", "microsoft"}) == "microsoft"
    assert nearest("aple", {"apples", "apple"}) == "apple"
    script = ("from tasks.terms import nearest; print(nearest('generat', set(['generated', 'generates', 'generate', "
              "'generating', 'generator', 'degenerate'])))")
    seen = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout.strip() for seed in (1, 2, 3, 4)}
    assert seen == {"generate"}
