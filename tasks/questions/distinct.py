"""What a question names that a passage answering it must name too: its distinctive terms (years, numbers, codes,
names), the keywords its ask states, and the terms whose absence from the documents says the subject is missing.

Functions of the question alone, so they live in the question brick: detection reads :func:`absence_terms` to
tell the arbiter which of them no searched document holds, and the arbiter's evidence reads the rest.
"""

from __future__ import annotations

import re
import unicodedata

from schemas.contracts import ParsedQuestion
from tasks.questions.framing import FORMULA_WORDS, Framing, frame_question, is_role
from tasks.questions.lexicon import MONTHS
from tasks.questions.parser import asked_measure
from tasks.terms import is_acronym, is_notation, stated
from tasks.words import tokens

YEAR_RE = re.compile(r"\b(?:19|20)\d{2}\b")
_REF_WORDS = frozenset("""figure fig table page pages section chapter appendix unit step item exhibit slide equation eq
note article clause part annex schedule""".split())
_PLACEHOLDER = re.compile(r"^[YMDHS]+(?:[-/:.][YMDHS]+)+$")


def _is_code(word: str) -> bool:
    """An identifier mixing capitals and digits ('CA03', 'GPT-4', 'Prover9'), not a structure reference
    ('Table1-1') nor an ordinal-like word ('top2')."""
    letters = re.match(r"[A-Za-z]+", word)
    return bool(letters) and any(c.isupper() for c in word) and any(c.isdigit() for c in word) \
        and letters.group(0).lower() not in _REF_WORDS
_SPECIFIC_NUMBER = re.compile(r"^\$?(?:(?:19|20)\d\d|\d{3,}|\d[\d,]*\.\d+|\d[\d,.]*%)$")


def question_framing(question: ParsedQuestion) -> Framing:
    """The question's ask, framing and definitions: the parser's, or split from the text for a question stored
    before the parser split it (the split is a function of the text, so both agree)."""
    if question.ask:
        return Framing(question.ask, list(question.framing), dict(question.definitions))
    return frame_question(question.text)


def question_terms(question: ParsedQuestion) -> list[str]:
    """:func:`distinctive_terms` of the question's ask, without the terms it defines."""
    framed = question_framing(question)
    return distinctive_terms(question.text, question.keywords_primary, framed.ask, list(framed.definitions))


def asked_keywords(question: ParsedQuestion, keywords: list[str]) -> list[str]:
    """The ``keywords`` that the question's ask, its definitions or its instructions state (an instruction may
    point to a source: 'relying on the cash flow statement'; a role given to the reader is no part of it),
    without notation words ('Q3 FY2023', 'USD millions' dropped; 'FCF YTD' -> 'FCF') and without the wording of
    a definition or an instruction itself ('defined', 'plus', 'relying')."""
    framed = question_framing(question)
    instructions = [s for s in framed.framing if not is_role(s)]
    scope = " ".join([framed.ask, *dict.fromkeys(framed.definitions.values()), *instructions]).lower()
    out = []
    for kw in keywords:
        words = [w for w in kw.split() if not is_notation(w) and w.lower() not in FORMULA_WORDS]
        if words and not is_notation(kw) and stated(scope, kw):
            out.append(" ".join(words))
    return out


def absence_terms(question: ParsedQuestion) -> list[str]:
    """The question's terms whose absence from a document says the subject is missing: :func:`question_terms`
    without an acronym naming the measure it asks for ('What was X's COGS ...', 'Compute X's DPO'), which is
    computed from the document as often as printed in it. Any other acronym stays: a document that lacks it
    and every spelling out of it (tasks.terms.carries) lacks the thing it names (a dataset, a programme)."""
    measure = {w.strip("%") for w in asked_measure(question.text)}
    return [t for t in question_terms(question) if not (is_acronym(t) and t.lower().strip("%") in measure)]


def distinctive_terms(question_text: str, keywords: list[str], ask: str | None = None,
                      defined: list[str] | None = None) -> list[str]:
    """The question's keywords that name something specific, which a passage answering it must carry.

    Taken from the parser's keywords (answer-format instructions are already gone there) that the question's
    ``ask`` states (the whole text when not given: role-play, instructions and definitions are not the ask):
    years, numbers of three digits or more, decimals and percentages; codes mixing letters and digits; names
    (words capitalised inside the question, or kept upper-case by the parser). Not terms: references to the
    document's own structure ('figure 3', 'page 14': the PDF's text rarely repeats them next to the answer);
    notations of a period, currency or scale ('FY2023Q1', 'USD mn', '$M', 'YTD': documents write their own,
    see :func:`tasks.terms.is_notation`), also as words of a longer term ('FCF YTD' -> 'FCF'); terms the
    question ``defined`` (computed, not printed). Terms inside a longer term are dropped ('4' inside 'GPT-4').
    """
    text = unicodedata.normalize("NFKC", ask if ask else question_text)
    letters = [c for c in text if c.isalpha()]
    shouting = bool(letters) and sum(c.isupper() for c in letters) > 0.6 * len(letters)
    asked = without_examples(text).lower()
    defined_keys = {tuple(tokens(d)) for d in defined or []}
    terms: list[str] = []
    for kw in keywords:
        words = [w for w in kw.split() if not is_notation(w)]
        if not words or words[0].lower() in _REF_WORDS or is_notation(kw):
            continue  # 'figure 3', 'table datasets': the layout, not the subject; 'Q3 FY2023', 'USD': a notation
        if len(words) < len(kw.split()):
            kw = " ".join(words)
        if tuple(tokens(kw)) in defined_keys or not stated(asked, kw):
            continue
        if any(ch.isdigit() for ch in kw):
            # a number quoted only in an answer-format example ('e.g. ["3.0", "2.0"]') is not asked about
            if len(words) == 1 and (_SPECIFIC_NUMBER.match(kw) or _is_code(kw)):
                terms.append(kw)
            continue
        if _PLACEHOLDER.match(kw):  # an answer format such as YYYY-MM-DD
            continue
        # a name: every word kept upper-case by the parser (an acronym) or capitalised inside the question
        if all(any(c.isupper() for c in w) or (not shouting and _capitalised_in(w, text)) for w in words) \
                and not (len(words) == 1 and kw.lower() in MONTHS):
            terms.append(kw)
    # a year the question states but the parse left out (e.g. one in a sentence read as a format instruction)
    terms += [y for y in YEAR_RE.findall(asked) if y not in terms]
    keys = {t: tuple(tokens(t)) for t in terms}
    out: list[str] = []
    for t in terms:
        key = keys[t]
        if not key or any(k != key and _contains(k, key) for k in keys.values()) or key in [keys[o] for o in out]:
            continue
        out.append(t)
    return out


_EXAMPLE = re.compile(
    r"\b(?:e\.g\.|for example|for instance|example)\s*[:,]?\s*(?:\[[^\]]*\]|\"[^\"]*\"|'[^']*'|[^.?!\n]*(?:[.?!](?!\s)[^.?!\n]*)*)",
    re.IGNORECASE,
)


_QUOTED_LIST = re.compile(r"\[\s*[\"'‘“][^\]]*\]")


def without_examples(question_text: str) -> str:
    """The question without its answer-format examples: 'e.g. ["3.0", "2.0"]', 'For example: 1883 Dec.7, 2 8 p.m.'
    (after such a cue, the quoted or bracketed example only, otherwise the rest of the sentence), and any bracketed
    list of quoted items ('in a list like ['2006', '2007']')."""
    return _QUOTED_LIST.sub(" ", _EXAMPLE.sub(" ", question_text))


def _capitalised_in(word: str, text: str) -> bool:
    """Every occurrence of ``word`` in ``text`` is capitalised, and not only because it opens a sentence."""
    # str.find with explicit word edges, not a regex per word: questions' words overflow re's pattern cache, and
    # compiling one pattern per word was 11% of a concurrent run's interpreter time (benchmarks/throughput.py)
    low, key, n = text.lower(), word.lower(), len(word)
    if len(low) != len(text):  # a letter whose lower case is longer shifts the offsets: match by regex instead
        found = [m.start() for m in re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE)]
    else:
        found = [i for i in _find_all(low, key) if not (i and _word_char(low[i - 1]))
                 and not (i + n < len(low) and _word_char(low[i + n]))]
    if not found or any(not text[i:i + 1].isupper() for i in found):
        return False
    return any(text[:i].rstrip()[-1:] not in ("", ".", "?", "!", ":", '"') for i in found)


def _find_all(text: str, key: str) -> list[int]:
    out, i = [], text.find(key)
    while i != -1:
        out.append(i)
        i = text.find(key, i + 1)
    return out


def _word_char(c: str) -> bool:
    return c.isalnum() or c in "_-"


def _contains(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    n = len(shorter)
    return len(longer) > n and any(longer[i : i + n] == shorter for i in range(len(longer) - n + 1))
