"""Terms as detection and the arbiter both read them: "does a document carry this term" (up to a typo, a variant
spelling, words run together, an acronym spelt out), and the notations of a period, a currency or a scale. Over the
words of ``tasks.words`` (tokens, stems, stopwords); neither imports a brick, so the detectors and the arbiter mean
the same by "a keyword is on a line" without importing each other.
"""

from __future__ import annotations

import re
import unicodedata

from tasks.words import content_tokens, stem, tokens


def near_token(token: str, vocabulary: set[str]) -> bool:
    """``token`` matches a word of ``vocabulary`` up to a typo or a variant spelling (see :func:`nearest`)."""
    return any(True for _ in _near_words(token, vocabulary)) or split_run(token, vocabulary) is not None


def nearest(token: str, vocabulary: set[str] | frozenset[str]) -> str | None:
    """The word of ``vocabulary`` that ``token`` matches up to a typo or a variant spelling: one edit (a swap of
    two neighbouring letters counts one) for words of five letters or more, two from ten ('Germen'/'german',
    'Companay'/'company', 'Microsfot'/'microsoft'), a doubled letter written once or twice ('Aple'/'apple',
    'Intell'/'intel'), a word starting with it ('program'/'programme', '500'/'500mhz'), or a word run together
    with a period notation ('Q3revenue', see :func:`split_run`); None when there is none. Of several, the
    closest (the fewest letters added or changed), then the first in alphabetical order: a set's order changes
    from one process to the next (string hashes are salted), and the arbiter's reasons must not."""
    found = min(_near_words(token, vocabulary), default=None)
    return found[1] if found else split_run(token, vocabulary)


def _near_words(token: str, vocabulary: set[str] | frozenset[str]):
    """(distance, word) of every word of ``vocabulary`` that ``token`` matches (see :func:`nearest`), lazily."""
    if token.isdigit():
        yield from ((len(v) - len(token), v) for v in vocabulary if v.startswith(token) and v[len(token) :].isalpha())
        return
    if len(token) < 3:
        return
    squeezed = _squeeze(token)
    if len(token) < 5:  # stems of short names ('aple' -> 'apl'): a doubled letter only, in a longer word
        yield from ((len(v) - len(token), v) for v in vocabulary if len(v) > len(token) and v[:1] == token[:1]
                    and _squeeze(v) == squeezed)
        return
    limit = 2 if len(token) >= 10 else 1
    for v in vocabulary:
        if v.startswith(token) and len(v) - len(token) <= 3:
            yield len(v) - len(token), v
        elif abs(len(v) - len(token)) <= limit and v[:1] == token[:1] and (d := _edits(token, v, limit)) <= limit:
            yield d, v
        elif v[:1] == token[:1] and len(v) >= 4 and _squeeze(v) == squeezed:
            yield abs(len(v) - len(token)), v


def split_run(token: str, vocabulary: set[str] | frozenset[str]) -> str | None:
    """The word of a period notation run together with it ('q3revenue' -> 'q3' + 'revenue'), when ``vocabulary``
    has it (two words run together are the document's adjacent words: :class:`Vocabulary`)."""
    if not token.isalnum() or len(token) < 5:
        return None
    for i in range(2, len(token) - 2):
        head, tail = token[:i], token[i:]
        for notation, word in ((head, tail), (tail, head)):
            if is_period_notation(notation):
                found = next((w for w in (word, stem(word)) if w in vocabulary), None)
                if found:
                    return found
    return None


def _squeeze(word: str) -> str:
    """``word`` with runs of one letter written once ('apple' -> 'aple')."""
    return re.sub(r"(.)\1+", r"\1", word)


def carries(term: str, vocabulary: set[str] | frozenset[str]) -> bool:
    """Every word of a distinctive term is in ``vocabulary`` ('English-to-German' across a line break counts),
    allowing for a misspelling in the question or the document (see :func:`near_token`); with a document's
    :class:`Vocabulary`, also two of its adjacent words run together in the question ('netsales') and an acronym
    whose expansion the document spells out ('PP&E': 'property, plant and equipment')."""
    joined = vocabulary.joined() if isinstance(vocabulary, Vocabulary) else frozenset()
    if is_acronym(term):
        letters = re.sub(r"[^a-z]", "", term.lower())
        if letters in vocabulary or (isinstance(vocabulary, Vocabulary) and vocabulary.expands(letters)):
            return True
    term_toks = content_tokens(term) or tokens(term)
    return bool(term_toks) and all(t in vocabulary or t in joined or near_token(t, vocabulary) for t in term_toks)


class Vocabulary(frozenset):
    """A document's tokens (a frozenset of them), and on demand two views :func:`carries` reads: adjacent tokens
    written as one ('net sales' -> 'netsal', as the question's 'netsales' stems) and the initials of runs of
    tokens ('property, plant and equipment' -> 'ppe'), built on first use from the lines' tokens."""

    # the lines' tokens kept as one string (tokens never hold a space): a corpus-wide run holds every document's
    # vocabulary, and a tuple of str objects per line was ~0.8 GB at 50k generated pages (issue #29)
    _text: str | None  # None: no line

    def __new__(cls, lines):
        lines = tuple(tuple(ts) for ts in lines)
        self = super().__new__(cls, (t for ts in lines for t in ts))
        self._text = "\n".join(" ".join(ts) for ts in lines) if lines else None
        return self

    @property
    def _lines(self) -> tuple[tuple[str, ...], ...]:
        """Each line's tokens, as given (read again from the kept string: only a question that needs them asks)."""
        if self._text is None:
            return ()
        return tuple(tuple(line.split(" ")) if line else () for line in self._text.split("\n"))

    def __reduce__(self):  # frozenset's own would rebuild it from its tokens, not from its lines
        return Vocabulary, (self._lines,)

    def joined(self) -> frozenset[str]:
        found = self.__dict__.get("_joined")
        if found is None:
            found = self.__dict__["_joined"] = frozenset(
                a + b for ts in self._lines for a, b in zip(ts, ts[1:]) if a.isalpha() and b.isalpha())
        return found

    def expands(self, letters: str) -> bool:
        """Some run of the document's words has these initials; a letter that stands for a function word ('o' of
        'of', 'a' of 'and') may be missing from the run ('COGS': 'cost of goods sold' -> c, g, s)."""
        found = self.__dict__.get("_initials")
        if found is None:
            found = self.__dict__["_initials"] = frozenset(
                "".join(w[0] for w in ts[i : i + n]) for ts in self._lines for n in range(2, 7)
                for i in range(len(ts) - n + 1) if all(w[0].isalpha() for w in ts[i : i + n]))
        if letters in found:
            return True
        return any(letters[:i] + letters[i + 1 :] in found for i in range(1, len(letters) - 1) if letters[i] in "oa")


def vocabulary(texts) -> Vocabulary:
    """Every token of ``texts`` (a document's lines and titles), as :func:`carries` reads them."""
    return Vocabulary(tokens(text) for text in texts)


def absent_terms(terms: list[str], vocabularies) -> list[str]:
    """The terms that no vocabulary carries (each vocabulary one searched document), in the terms' order."""
    if not terms:
        return []
    vocabularies = list(vocabularies)
    return [t for t in terms if not any(carries(t, v) for v in vocabularies)]


def _edits(a: str, b: str, limit: int) -> int:
    """Edit distance (insertions, deletions, substitutions, and swaps of two neighbouring letters), stopped early
    once it exceeds ``limit``."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i]
        for j, cb in enumerate(b, start=1):
            d = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                d = min(d, prev2[j - 2] + 1)
            cur.append(d)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


# -- notations -----------------------------------------------------------------------------------------------------
# Ways of writing a period, a currency, a scale or a unit. A question and a document spell them their own way
# ('FY2023Q1', 'Q22023', '3Q22', 'H1', '9M', 'YTD' where a filing writes 'three months ended ...', 'fiscal 2023',
# 'six months'; 'USD mn', '$M' where it writes '$' and '(in millions)'), so a notation missing from a document says
# nothing about whether the document holds the answer. A period mark, optionally with years on either side:
_PERIOD_MARK = r"(?:fy|cy|ytd|qtd|mtd|ttm|ltm|yoy|qoq|hoh|mom|q[1-4]|[1-4]q|h[12]|[12]h|(?:[1-9]|1[0-2])m)"
_YEAR_PART = r"(?:(?:19|20)\d\d|(?!00)\d\d)"  # '00' would read 'H100' (a product code) as H1 + 00
_PERIOD = re.compile(rf"'?(?:{_YEAR_PART}'?)?(?:{_PERIOD_MARK}'?{_YEAR_PART}?)+", re.I)
# the words that spell a period out ('first nine months of fiscal 2022', 'trailing twelve months')
_PERIOD_WORDS = frozenset("""fiscal year years yr quarter quarters quarterly half halves month months annual annually
    ended ending end period periods first second third fourth three six nine twelve trailing date todate prior
    current full calendar interim""".split())
_MONTH_WORDS = frozenset("""january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec""".split())
# 'current' also names a class of assets and liabilities ('total current liabilities'): not only a when
_WHEN_WORDS = (_PERIOD_WORDS - {"current"}) | _MONTH_WORDS
_WHEN_STEMS = frozenset(stem(w) for w in _WHEN_WORDS) | _WHEN_WORDS


def is_when_word(token: str) -> bool:
    """A detector token (lower case, stemmed: tasks.words.tokenize) that only says when: a number or year, a month,
    a period word ('nine', 'months', 'ended') or a period code ('q2', 'fy2023')."""
    return token[:1].isdigit() or token in _WHEN_STEMS or is_period_notation(token)


# ISO 4217 codes of the currencies most documents quote, the symbols, and the scale and unit words of an amount
CURRENCY_CODES = frozenset("""usd eur gbp jpy cny rmb chf cad aud nzd inr hkd sgd krw sek nok dkk brl mxn zar rub try
    pln czk huf ils aed sar twd thb idr myr php""".split())
_CURRENCY_SYMBOLS = frozenset("$€£¥₹₩")
SCALE_WORDS = frozenset("""thousand thousands million millions billion billions trillion trillions mn mm mln m bn bln
    b k tn dollars dollar cents euros pounds yen percent pct percentage bps bp basis points""".split())


def is_period_notation(word: str) -> bool:
    """A period written as a code: 'FY2018', 'FY23', 'Q2', 'H1', 'FY2023Q1', 'Q22023', '3Q22', '1H23', 'YTD', '9M'."""
    return bool(word) and not word.isdigit() and bool(_PERIOD.fullmatch(word))


def is_notation(term: str) -> bool:
    """A term that only says when, in what currency or at what scale: every word is a period code, a period word,
    a year, a currency code or symbol, or a scale or unit word ('Q3 FY2023', 'USD mn', '$M', 'FY22 YTD'), and at
    least one is a code or a unit word. Words alone ('annual', 'first nine months') and years stay terms: documents
    print them as they are."""
    words = [w for w in re.split(r"[\s,()/-]+|(?<=[$€£¥₹₩])(?=\w)", unicodedata.normalize("NFKC", term).lower()) if w]
    if not words:
        return False
    codes = 0
    for w in words:
        w = w.strip(".'’%")
        if not w:
            continue
        if is_period_notation(w) or w in CURRENCY_CODES or w in SCALE_WORDS or all(c in _CURRENCY_SYMBOLS for c in w) \
                or (w[:1] in _CURRENCY_SYMBOLS and w[1:] in SCALE_WORDS) or w in ("us$", "usd$"):
            codes += 1
        elif w not in _PERIOD_WORDS and not re.fullmatch(r"(?:19|20)\d\d", w):
            return False
    return codes > 0


_ACRONYM = re.compile(r"[A-Z](?:[A-Z&./]*[A-Z])?%?")


def is_acronym(term: str) -> bool:
    """An all-capitals token of two to six letters ('COGS', 'PP&E', 'SG&A', 'EBITDA', 'GM%'): when a document
    lacks it, it may well spell it out ('cost of sales', 'property, plant and equipment') or compute it, so its
    absence is no evidence that the subject is missing."""
    term = term.strip()
    letters = sum(c.isalpha() for c in term)
    return bool(_ACRONYM.fullmatch(term)) and 2 <= letters <= 6


def _stated_word_char(ch: str) -> bool:
    r"""What ``[\w&]`` matches in a str pattern: a Unicode letter or digit, ``_`` or ``&``."""
    return ch.isalnum() or ch in "_&"


def stated(asked: str, term: str) -> bool:
    r"""``term`` occurs in the (lower-cased) ask as whole words: ``(?<![\w&])term(?![\w&])`` as a regex, found
    with ``str.find`` instead (each question tests a dozen terms of its own, and compiling a pattern per term
    was a tenth of detection's time, tasks.arbiter.evidence)."""
    term = term.lower()
    i = asked.find(term)
    while i != -1:
        end = i + len(term)
        if (i == 0 or not _stated_word_char(asked[i - 1])) and \
                (end == len(asked) or not _stated_word_char(asked[end])):
            return True
        i = asked.find(term, i + 1)
    return False
