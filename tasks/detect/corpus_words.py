"""Every document's words and titles indexed once per run, so that a corpus-wide question reads only the documents
and titles its words lead to (issue #29): the same absent terms (``tasks.terms.absent_terms``), the same titles
scored by the TOC detector and the same named documents as reading every document, in a fraction of the time.

A document can carry a term only if it carries the term's first word as :func:`tasks.terms.carries` reads it: the
word itself, a word near it (a typo, a variant spelling, a longer word it starts: all start with its first
letter), a word run together with a period notation, or two adjacent words written as one. The documents holding
any of those words are the only ones :func:`tasks.terms.carries` is asked about, in the same order as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from tasks.detect.corpus_wide import DocSummary
from tasks.detect.keyword_index import TitleEntry
from tasks.terms import _near_words, carries, is_acronym, is_period_notation  # the matcher carries() itself uses
from tasks.words import content_tokens, stem, tokens


class CorpusWords:
    """The summaries of every document (sorted by doc_id), with word -> documents and title word -> titles."""

    def __init__(self, summaries: Sequence[DocSummary]):
        self.summaries = list(summaries)
        holders: dict[str, list[int]] = {}
        titles: dict[str, list[tuple[int, int]]] = {}
        for d, s in enumerate(self.summaries):
            for w in s.vocab:
                holders.setdefault(w, []).append(d)
            for t, title in enumerate(s.titles):
                for w in {*title.tokens, *title.parent_tokens, *([title.number] if title.number else [])}:
                    titles.setdefault(w, []).append((d, t))
        # positions as small arrays: a list of Python ints per word would hold more than the vocabularies
        self.holders = {w: np.array(ds, dtype=np.uint32) for w, ds in holders.items()}
        self.titles = titles
        self.by_letter: dict[str, set[str]] = {}
        for w in self.holders:
            self.by_letter.setdefault(w[:1], set()).add(w)

    def __contains__(self, word: str) -> bool:
        """Some document's vocabulary holds ``word``."""
        return word in self.holders

    def _docs(self, words: Iterable[str]) -> set[int]:
        return {int(d) for w in words if w in self.holders for d in self.holders[w]}

    def candidates(self, term: str) -> list[int] | None:
        """The documents that may carry ``term`` (sorted positions); None: any may (an acronym, which a document may
        spell out in words of any letter)."""
        if is_acronym(term):
            return None
        toks = content_tokens(term) or tokens(term)
        if not toks:
            return []
        t0 = toks[0]
        words = {t0} | {w for _, w in _near_words(t0, self.by_letter.get(t0[:1], set()))}
        if t0.isalnum() and len(t0) >= 5:  # run together with a period notation ('q3revenue')
            for i in range(2, len(t0) - 2):
                for notation, word in ((t0[:i], t0[i:]), (t0[i:], t0[:i])):
                    if is_period_notation(notation):
                        words.update((word, stem(word)))
        found = self._docs(words)
        for i in range(1, len(t0)):  # two adjacent words written as one ('netsales')
            a, b = t0[:i], t0[i:]
            if a in self.holders and b in self.holders:
                found |= self._docs([a]) & self._docs([b])
        return sorted(found)

    def absent(self, terms: list[str]) -> list[str]:
        """:func:`tasks.terms.absent_terms` over every document's vocabulary."""
        out = []
        for term in terms:
            docs = self.candidates(term)
            order = range(len(self.summaries)) if docs is None else docs
            if not any(carries(term, self.summaries[d].vocab) for d in order):
                out.append(term)
        return out

    def titles_sharing(self, words: set[str]) -> Iterator[tuple[int, TitleEntry]]:
        """(document position, title) of every title whose words, parents' words or number meet ``words``, in
        document then title order (the order the TOC detector reads them in, which breaks its ties)."""
        found = sorted({dt for w in words for dt in self.titles.get(w, ())})
        for d, t in found:
            yield d, self.summaries[d].titles[t]
