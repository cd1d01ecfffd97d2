"""The reader's yes/no: Yes or No from the sentence that speaks about the asked subject, read for a negation or an
unchanged state; none when no sentence carries enough of the question's terms."""

from __future__ import annotations

import math
import re

from tasks.generate.typed import Pick, Reader

NEGATION_RE = re.compile(
    r"(?i)\b(?:not|no|never|none|neither|nor|cannot|can't|isn't|aren't|doesn't|don't|didn't|won't|wasn't|"
    r"weren't|hasn't|haven't|mustn't|shouldn't|prohibited|forbidden|excluded|unchanged|nothing)\b|"
    r"\bremains? (?:the same|unchanged|in (?:full )?(?:force|effect))\b")


_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def _of_the_years(r: Reader, best, cov: float, n: int, need: int):
    """A question that names its years ("during the quarter ended March 31, 2023") is answered by a sentence that
    names them, where one speaks about the subject: the sentence about the same event a year earlier ("We
    repurchased ... during the three months ended March 31, 2022") states another period's yes or no."""
    years = set(_YEAR.findall(r.q_text))
    if not years or years <= set(_YEAR.findall(best.text)):
        return best, cov, n
    dated = []
    for ss in r.sents:
        for s in ss:
            if not s.text.rstrip().endswith("?") and years <= set(_YEAR.findall(s.text)):
                c, k = r.coverage(s)
                if k >= max(1, need - 1):  # the sentence of the year may leave one word to its neighbour
                    dated.append(((k, c), s))
    if not dated:
        return best, cov, n
    (k, c), s = max(dated, key=lambda t: t[0])
    return s, c, k


def required_terms(n_words: int) -> int:
    """Question terms a cue sentence must carry to speak about the asked subject: all of up to three, else 60%."""
    return n_words if n_words <= 3 else math.ceil(0.6 * n_words)


def pick_yes_no(r: Reader) -> tuple[Pick | None, str]:
    """Yes or No from the sentence that speaks about the asked subject (most question terms), None with the
    reason when no sentence does."""
    best, cov, n = r.best_sentence(statements_only=True)
    need = required_terms(len(r.terms.words))
    if best is None or n < need:
        missing = r.missing_terms() or [w for w in r.terms.words if not r.terms.hits(best.stems if best else set())]
        missing = r.terms.as_written(missing[:3])
        return None, f"no sentence speaks about {', '.join(repr(m) for m in missing) or 'the asked subject'}"
    best, cov, n = _of_the_years(r, best, cov, n, need)
    change = re.search(r"\b(?:change|changed|modif\w+|amend\w*|alter\w*|differ\w*)\b", r.q_low)
    negated = bool(NEGATION_RE.search(best.text))
    if change and re.search(r"(?i)\b(?:same|identical|as before)\b", best.text):
        negated = True
    return Pick("No" if negated else "Yes", best.lines, 1.5 * cov, cov, n, "cue", 0.6), ""
