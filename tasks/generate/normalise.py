"""Answer normalisation and matching, shared by the regime comparison and the evaluation harness.

Numbers compare as numbers (thousands separators, currency, %, units and scale words such as "million" removed,
``1.2 million`` == ``1,200,000``); strings compare after case, accent-free punctuation and article folding, then
by normalised Levenshtein similarity >= 0.5 (the ANLS rule of MMLongBench-Doc's scorer, binarised); strings that
look like identifiers (contain digits, e-mail, URL) must match exactly. A list is right when its items match one
to one. A reference of "Not answerable" is matched by an answer that says nothing was found.
"""

from __future__ import annotations

import ast
import re
import unicodedata

NOT_ANSWERABLE = {"not answerable", "unanswerable", "not found", "none", "n a", "no answer", "not mentioned",
                  "not applicable", "cannot be determined"}

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
NUMBER_RE = re.compile(rf"(?<![\w.])[-+\u2212]?(?:{_NUM})(?![\d])")
SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "mln": 1e6, "billion": 1e9,
          "bn": 1e9, "b": 1e9, "trillion": 1e12, "tn": 1e12}
SCALE_RE = re.compile(r"^\s*(thousand|million|mln|mn|billion|bn|trillion|tn|k|m|b)\b", re.I)
WORD_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_WORD_NUMBER_RE = re.compile(r"^\s*(" + "|".join(WORD_NUMBERS) + r")\s*$", re.I)
_CURRENCY_RE = re.compile(r"(us\$|\$|€|£|¥|₹|\busd\b|\beur\b|\bgbp\b|\bjpy\b|\binr\b|\brs\.?)", re.I)
_LIST_SPLIT_RE = re.compile(r"\s*(?:;|\n|\|)\s*|\s*,\s*(?:and\s+|or\s+)?|\s+and\s+")
_ARTICLES_RE = re.compile(r"^(?:the|a|an)\s+")


def fold(text: str) -> str:
    """Lower case, accents and typographic quotes folded, punctuation to spaces (kept inside numbers)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.lower().replace("\u2019", "'").replace("\u2212", "-")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,234 -> 1234
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)  # keep decimal points only
    text = re.sub(r"[^\w.%$€£¥\s-]", " ", text)
    text = re.sub(r"(?<!\w)-|-(?!\w)", " ", text)
    text = " ".join(text.split())
    return _ARTICLES_RE.sub("", text)


def parse_number(text: str | None) -> tuple[float, bool] | None:
    """(value, is_percent) when ``text`` states exactly one number (currency, units and scale allowed), else None."""
    if text is None:
        return None
    raw = text.strip()
    word = _WORD_NUMBER_RE.match(raw)
    if word:
        return float(WORD_NUMBERS[word.group(1).lower()]), False
    cleaned = _CURRENCY_RE.sub(" ", raw)
    matches = list(NUMBER_RE.finditer(cleaned))
    if len(matches) != 1:
        return None
    m = matches[0]
    value = float(m.group(0).replace(",", "").replace("\u2212", "-"))
    rest = cleaned[m.end():]
    scale = SCALE_RE.match(rest)
    if scale:
        value *= SCALES[scale.group(1).lower()]
    is_percent = bool(re.match(r"^\s*(%|percent|per cent|percentage)", rest, re.I))
    # Anything else besides a short unit ("cm", "people", "years") makes the text more than a number.
    leftover = re.sub(r"[^a-z]", " ", (cleaned[: m.start()] + " " + rest).lower()).split()
    if len(leftover) > 3:
        return None
    return value, is_percent


def numbers_equal(a: tuple[float, bool], b: tuple[float, bool]) -> bool:
    """Equal within rounding to the coarser precision, or 1% relative; 0.29 matches 29% (fraction vs percent)."""
    (x, xp), (y, yp) = a, b
    candidates = [(x, y)]
    if xp != yp:
        candidates += [(x * 100, y), (x, y * 100)]
    return any(abs(p - q) <= max(1e-9, 0.01 * max(abs(p), abs(q)), 0.005 if _has_fraction(p, q) else 0)
               for p, q in candidates)


def _has_fraction(p: float, q: float) -> bool:
    return p != int(p) or q != int(q)


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _looks_exact(text: str) -> bool:
    return bool(re.search(r"\d|@|https?:|www\.|\.com\b", text))


def strings_match(predicted: str, reference: str) -> bool:
    p, r = fold(predicted), fold(reference)
    if not p or not r:
        return False
    if p == r:
        return True
    if _looks_exact(r):
        return p.replace(" ", "") == r.replace(" ", "")
    return 1 - levenshtein(p, r) / max(len(p), len(r)) >= 0.5


def split_items(text: str | list | None) -> list[str]:
    """Items of a list answer: a Python/JSON list literal, or text split on ; | newlines, commas and 'and'."""
    if text is None:
        return []
    if isinstance(text, list):
        return [str(t).strip() for t in text if str(t).strip()]
    raw = text.strip()
    if raw.startswith("[") and raw.endswith("]"):
        try:
            value = ast.literal_eval(raw)
            if isinstance(value, (list, tuple)):
                return [str(v).strip() for v in value if str(v).strip()]
        except (ValueError, SyntaxError):
            raw = raw[1:-1]
    return [p.strip(" '\"") for p in _LIST_SPLIT_RE.split(raw) if p and p.strip(" '\"")]


def is_not_answerable(text: str | None) -> bool:
    return text is None or not text.strip() or fold(text) in NOT_ANSWERABLE


def scalar_matches(predicted: str, reference: str) -> bool:
    pn, rn = parse_number(predicted), parse_number(reference)
    if pn is not None and rn is not None:
        return numbers_equal(pn, rn)
    return strings_match(predicted, reference)


def answer_matches(predicted: str | None, reference: str, shape: str | None = None) -> bool:
    """Whether ``predicted`` states the reference answer (see the module docstring for the rules)."""
    if is_not_answerable(reference):
        return is_not_answerable(predicted)
    if is_not_answerable(predicted):
        return False
    ref_items = split_items(reference) if (shape == "list" or reference.strip().startswith("[")) else []
    if len(ref_items) > 1:
        pred_items = split_items(predicted)
        if len(pred_items) != len(ref_items):
            return False
        unmatched = list(pred_items)
        for ref in ref_items:
            hit = next((p for p in unmatched if scalar_matches(p, ref)), None)
            if hit is None:
                return False
            unmatched.remove(hit)
        return True
    if len(ref_items) == 1:
        reference = ref_items[0]
        items = split_items(predicted) if predicted.strip().startswith("[") else [predicted]
        predicted = items[0] if len(items) == 1 else predicted
    return scalar_matches(predicted, reference)


def normalise_value(value: str | None, shape: str | None = None) -> str | None:
    """Canonical form of an answer value, for agreement between regimes (equal forms = same answer)."""
    if is_not_answerable(value):
        return None
    assert value is not None
    if shape == "list" or value.strip().startswith("["):
        items = split_items(value)
        if len(items) > 1:
            return " | ".join(sorted(normalise_value(i, None) or "" for i in items))
    num = parse_number(value)
    if num is not None:
        number, pct = num
        text = f"{number:.6g}"
        return text + "%" if pct else text
    return fold(value)
