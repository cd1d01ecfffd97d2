"""Terms as detection and the arbiter both read them: tokens, stems, stopwords, and "does a document carry
this term" (up to a typo). One small module that imports no brick, so the detectors and the arbiter mean the same
by "a keyword is on a line" without importing each other.
"""

from __future__ import annotations

import re
import unicodedata

# Function words and question scaffolding: they carry no topic in a question and are noise in BM25.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below between
    both but by can could did do does doing done down during each few for from further had has have having he her here
    hers him his how i if in into is it its itself just me more most my no nor not of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there these they this those
    through to too under until up very was we were what when where which while who whom why will with would you your
    yours us may might must shall upon via per within without whether among amongst etc e g ie eg vs
    according mentioned mention described describe shown show shows stated state list listed given tell""".split()
)

# Numbers stay whole (thousands separators dropped, decimals and a trailing % kept); words are unicode letters+digits.
_TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|\d+(?:\.\d+)+%?|\d+%|[^\W_]+")
_VOWEL = re.compile(r"[aeiouy]")


def stem(token: str) -> str:
    """Light suffix stripping (plurals, -ing, -ed, final e) so 'encodings', 'encoded' and 'encode' meet."""
    if len(token) <= 3 or not token.isalpha():
        return token
    if token.endswith("ies") and len(token) > 4:
        token = token[:-3] + "y"
    elif token.endswith("sses"):
        token = token[:-2]
    elif token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    for suffix in ("ing", "ed"):
        base = token[: -len(suffix)]
        if token.endswith(suffix) and len(base) >= 3 and _VOWEL.search(base):
            token = base[:-1] if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz" else base
            break
    if len(token) > 3 and token.endswith("e"):
        token = token[:-1]
    return token


def tokenize(text: str) -> list[str]:
    """Lowercased, stemmed, stopword-free tokens; numbers kept (``1,000`` -> ``1000``, ``3.5``, ``25%``)."""
    out = []
    for raw in _TOKEN.findall(text.lower()):
        if raw[0].isdigit():
            out.append(raw.replace(",", "") if "," in raw else raw)
        elif raw not in STOPWORDS and (len(raw) > 1 or raw.isdigit()):
            out.append(stem(raw))
    return out


# Question scaffolding on top of the detectors' stopwords: words that say how to answer, not what about.
SCAFFOLD = frozenset(
    """many much how yes one ones document report paper article page figure table section give write answer
    please format number value total""".split()
)

def normalise(text: str) -> str:
    """NFKC (expands ligatures such as 'ﬁ') and lower case."""
    return unicodedata.normalize("NFKC", text).lower()


_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")


def tokens(text: str) -> list[str]:
    """The detectors' tokens (:func:`tasks.detect.keyword_index.tokenize`: stemmed, stopword-free, numbers whole), so that
    the arbiter and the detectors mean the same by "a keyword is on a line"; ligatures expanded and a possessive
    's dropped first ("Calloway's" -> "calloway")."""
    return tokenize(_POSSESSIVE.sub("", normalise(text)))


def content_tokens(text: str) -> list[str]:
    """Tokens without question scaffolding ('how many', 'page', 'answer')."""
    return [t for t in tokens(text) if t not in SCAFFOLD]


def near_token(token: str, vocabulary: set[str]) -> bool:
    """``token`` matches a word of ``vocabulary`` up to a typo or a variant spelling: one edit for words of five
    letters or more, two from ten ('Germen'/'german', 'Companay'/'company'), or a word starting with it
    ('program'/'programme', '500'/'500mhz')."""
    if token.isdigit():
        return any(v.startswith(token) and v[len(token) :].isalpha() for v in vocabulary)
    if len(token) < 5:
        return False
    limit = 2 if len(token) >= 10 else 1
    for v in vocabulary:
        if v.startswith(token) and len(v) - len(token) <= 3:
            return True
        if abs(len(v) - len(token)) <= limit and v[:1] == token[:1] and _edits(token, v, limit) <= limit:
            return True
    return False


def carries(term: str, vocabulary: set[str] | frozenset[str]) -> bool:
    """Every word of a distinctive term is in ``vocabulary`` ('English-to-German' across a line break counts),
    allowing for a misspelling in the question or the document (see :func:`near_token`)."""
    term_toks = content_tokens(term) or tokens(term)
    return bool(term_toks) and all(t in vocabulary or near_token(t, vocabulary) for t in term_toks)


def vocabulary(texts) -> frozenset[str]:
    """Every token of ``texts`` (a document's lines and titles), as :func:`carries` reads them."""
    return frozenset(t for text in texts for t in tokens(text))


def absent_terms(terms: list[str], vocabularies) -> list[str]:
    """The terms that no vocabulary carries (each vocabulary one searched document), in the terms' order."""
    if not terms:
        return []
    vocabularies = list(vocabularies)
    return [t for t in terms if not any(carries(t, v) for v in vocabularies)]


def _edits(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, stopped early once it exceeds ``limit``."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i]
        for j, cb in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > limit:
            return limit + 1
        prev = cur
    return prev[-1]
