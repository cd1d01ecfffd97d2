"""Answer normalisation and matching, shared by the regime comparison and the evaluation harness.

Numbers compare as numbers (thousands separators, currency, %, units and scale words such as "million" removed,
``1.2 million`` == ``1,200,000``, ``$1,842`` == ``$1,842.00``); an answer and a reference of one figure each
compare as an analyst would (``amounts.py``: scale and table headers, currency, percent vs points, signs, printed
precision). A reference is judged by its headline (:func:`headline`), and a long prose reference by the figures and
names a short answer states (:func:`states_within`); strings compare after case, accent-free punctuation
and article folding, then by normalised Levenshtein similarity >= 0.5 (the ANLS rule of MMLongBench-Doc's scorer,
binarised); strings that look like identifiers (contain digits, e-mail, URL) must match exactly. A phrase and a
reference that state values (``at least 30 days' written notice`` for ``30``, ``sixty (60) days`` for ``60 days``,
``1 March 2024`` for ``March 1, 2024``) match when they state the same key values: the same numbers (spelled-out
numbers count), the same month names and, where both say yes or no, the same polarity, nothing more and nothing
less (and no other time unit: "90 hours" is not "90 days"). A yes/no answer matches a reference that opens with the same yes or no ("No; it remains 90 days"). A short
prediction that contains the whole reference as words ("the State of Delaware" for "Delaware") matches. A list is
right when its items match one to one, in any order (commas inside parentheses do not split an item). A reference
of "Not answerable" is matched by an answer that says nothing was found.
"""

from __future__ import annotations

import ast
import re
import unicodedata

from tasks.generate.amounts import figures_match, read_amounts, same_figure

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
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i > 1}
_SPELLED_RE = re.compile(r"(?i)\b(?:(" + "|".join(_TENS) + r")(?:[-\s](" + "|".join(list(WORD_NUMBERS)[1:10]) + r"))?|("
                         + "|".join(WORD_NUMBERS) + r"))\b(?:\s*\((\d+)\))?")
_MONTHS_RE = re.compile(r"(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?=\s|,|$|\d)")
_TIME_UNIT_RE = re.compile(r"(?i)\b(second|minute|hour|day|week|month|quarter|year)s?\b")
_POLARITY_RE = re.compile(r"(?i)^\s*(yes|no)\b(?!\s+(?:one|longer|more|less|later|earlier)\b)")
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
    if _looks_exact(reference):  # judged on the raw text: folding drops the '@' of an address
        return p.replace(" ", "") == r.replace(" ", "")
    return 1 - levenshtein(p, r) / max(len(p), len(r)) >= 0.5


def _split_outside_brackets(raw: str) -> list[str]:
    """``_LIST_SPLIT_RE`` splits, except inside parentheses or brackets ("water damage (flood, surface water)")."""
    out, depth, start = [], 0, 0
    pos = 0
    while pos < len(raw):
        ch = raw[pos]
        depth += ch in "([{"
        depth -= ch in ")]}" and depth > 0
        m = _LIST_SPLIT_RE.match(raw, pos) if depth == 0 else None
        if m and m.end() > pos:
            out.append(raw[start:pos])
            start = pos = m.end()
            continue
        pos += 1
    out.append(raw[start:])
    return out


def split_items(text: str | list | None) -> list[str]:
    """Items of a list answer: a Python/JSON list literal, or text split on ; | newlines, commas and 'and'
    (never inside parentheses)."""
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
    return [p.strip(" '\"") for p in _split_outside_brackets(raw) if p and p.strip(" '\"")]


def is_not_answerable(text: str | None) -> bool:
    return text is None or not text.strip() or fold(text) in NOT_ANSWERABLE


def spelled_numbers(text: str) -> list[tuple[float, int, int]]:
    """Numbers written in words (``forty-five``, ``sixty (60)``): (value, start, end); a word number followed by
    its digits in parentheses is one number."""
    out = []
    for m in _SPELLED_RE.finditer(text):
        if m.group(1):
            value = _TENS[m.group(1).lower()] + (WORD_NUMBERS[m.group(2).lower()] if m.group(2) else 0)
        else:
            value = WORD_NUMBERS[m.group(3).lower()]
        out.append((float(value), m.start(), m.end()))
    return out


def key_values(text: str) -> tuple[list[tuple[float, bool]], set[str], str | None]:
    """What a phrase states: its numbers (digits, scale words and spelled-out numbers; a spelled-out number
    counts only when the text writes no number in digits, or when its digits follow it in parentheses), its
    month names and its opening yes/no."""
    numbers: list[tuple[float, bool]] = []
    cleaned = _CURRENCY_RE.sub(" ", text)
    for m in NUMBER_RE.finditer(cleaned):
        value = float(m.group(0).replace(",", "").replace("\u2212", "-"))
        rest = cleaned[m.end():]
        scale = SCALE_RE.match(rest)
        if scale and (scale.group(1).lower() not in ("m", "b", "k") or not re.match(r"^\s*[mbk]\w", rest, re.I)):
            value *= SCALES[scale.group(1).lower()]
        numbers.append((value, bool(re.match(r"^\s*(%|percent|per cent|percentage)", rest, re.I))))
    if not numbers:
        numbers = [(v, False) for v, _, _ in spelled_numbers(text)]
    unique: list[tuple[float, bool]] = []
    for n in numbers:
        if not any(numbers_equal(n, u) and n[1] == u[1] for u in unique):
            unique.append(n)
    months = {m.group(1).lower() for m in _MONTHS_RE.finditer(text)}
    polarity = _POLARITY_RE.match(text)
    return unique, months, polarity.group(1).lower() if polarity else None


def _decimals(x: float) -> int:
    text = f"{x:.6f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def _exactly_equal(a: tuple[float, bool], b: tuple[float, bool]) -> bool:
    """Equal at the coarser of the two precisions (18.3 == 18.29, 873655 != 873656); 0.29 == 29% still."""
    (x, xp), (y, yp) = a, b
    pairs = [(x, y)] + ([(x * 100, y), (x, y * 100)] if xp != yp else [])
    return any(round(p, min(_decimals(p), _decimals(q))) == round(q, min(_decimals(p), _decimals(q)))
               for p, q in pairs)


def _same_numbers(a: list[tuple[float, bool]], b: list[tuple[float, bool]]) -> bool:
    return all(any(_exactly_equal(x, y) for y in b) for x in a) and all(any(_exactly_equal(y, x) for x in a)
                                                                          for y in b)


def _is_bare_polarity(text: str) -> bool:
    return fold(text) in ("yes", "no")


def _units_differ(predicted: str, reference: str) -> bool:
    """Both name a time unit and none in common: "90 hours" does not state "90 days"."""
    p_units = {u.lower() for u in _TIME_UNIT_RE.findall(predicted)}
    r_units = {u.lower() for u in _TIME_UNIT_RE.findall(reference)}
    return bool(p_units and r_units and not p_units & r_units)


def values_match(predicted: str, reference: str) -> bool | None:
    """Key-value comparison (see the module docstring); None when the reference states no number, month or
    yes/no for it to judge on."""
    p_nums, p_months, p_pol = key_values(predicted)
    r_nums, r_months, r_pol = key_values(reference)
    if r_pol and p_pol and _is_bare_polarity(predicted):
        return p_pol == r_pol  # "Yes" answers "Yes, in four quarterly installments"
    if not r_nums:
        return None
    if p_pol and r_pol and p_pol != r_pol:
        return False
    return not _units_differ(predicted, reference) and bool(p_nums) and _same_numbers(p_nums, r_nums) and p_months == r_months


def _contains_reference(predicted: str, reference: str) -> bool:
    """The prediction is the reference plus at most a few words around it ("the State of Delaware")."""
    p, r = fold(predicted).split(), fold(reference).split()
    if not r or len(p) - len(r) > max(3, len(r)):
        return False
    return any(p[i:i + len(r)] == r for i in range(len(p) - len(r) + 1))


def scalar_matches(predicted: str, reference: str) -> bool:
    pn, rn = parse_number(predicted), parse_number(reference)
    if pn is not None and rn is not None:
        pa, ra = read_amounts(predicted), read_amounts(reference)
        if len(pa) == 1 and len(ra) == 1:  # figures: scale, currency, kind, sign and printed precision (amounts.py)
            return figures_match(predicted, reference, pa[0], ra[0]) and not _units_differ(predicted, reference)
        return numbers_equal(pn, rn) and not _units_differ(predicted, reference)
    if strings_match(predicted, reference):
        return True
    if _looks_exact(reference) and " " not in reference.strip():
        return False  # a code, an address or a one-token identifier: only the exact string (strings_match)
    judged = values_match(predicted, reference)
    if judged is not None:
        return judged
    return _contains_reference(predicted, reference)


_SOURCES_RE = re.compile(r"(?is)\s*\bSOURCES?(?:\(S\))?\s*:.*$")
_SCALE_HEADER_RE = re.compile(r"(?i)^\s*in\s+(thousands|millions|billions)\b")
PROSE_WORDS = 15  # a reference this long is an explanation, not a value: an answer is judged by what it states


def headline(reference: str) -> str:
    """The part of a reference an answer must state: without a trailing list of sources ("SOURCE(S): x.pdf") and,
    when it opens with a figure, without the explanation in parentheses after it ("6.1% ($18,654M / $304,182M)":
    the inputs of a computed figure are not the answer). A scale header in parentheses stays: it is the unit."""
    text = _SOURCES_RE.sub("", reference).strip()
    if text.endswith(")") and "(" in text:
        head, inside = text[: text.rindex("(")], text[text.rindex("(") + 1:-1]
        if read_amounts(head) and not _SCALE_HEADER_RE.match(inside) and head.count("(") == head.count(")"):
            return head.strip(" ;,")
    return text


def _entities(text: str) -> list[str]:
    """Names an answer states: capitalised words and acronyms, function words aside."""
    words = re.findall(r"[A-Za-z][\w&.-]*", text)
    return [w for w in words if any(c.isupper() for c in w) and fold(w) not in _FUNCTION_WORDS]


_FUNCTION_WORDS = {"the", "a", "an", "in", "of", "for", "and", "or", "it", "its", "was", "were", "is", "yes", "no"}


def states_within(predicted: str, reference: str) -> bool:
    """A short answer against a long reference: every figure it states is one the reference states (at the
    precision printed), every name it states is in the reference, and it states at least one of either."""
    p_amounts, r_amounts = read_amounts(predicted), read_amounts(reference)
    if any(not any(same_figure(p, r) for r in r_amounts) for p in p_amounts):
        return False
    ref_words = set(fold(reference).split())
    names = _entities(predicted)
    if any(not set(fold(n).split()) <= ref_words for n in names):
        return False
    return bool(p_amounts or names)


def answer_matches(predicted: str | None, reference: str, shape: str | None = None) -> bool:
    """Whether ``predicted`` states the reference answer (see the module docstring for the rules)."""
    if is_not_answerable(reference):
        return is_not_answerable(predicted)
    if is_not_answerable(predicted):
        return False
    reference = headline(reference)
    if len(reference.split()) >= PROSE_WORDS and not reference.lstrip().startswith("[") \
            and len(predicted.split()) < PROSE_WORDS:
        polarity = values_match(predicted, reference) if _is_bare_polarity(predicted) else None
        return polarity if polarity is not None else states_within(predicted, reference)
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
