"""Amounts as a reader states them: value, scale, currency, percent or percentage points, sign, printed precision.

What an analyst accepts as "the same figure" (tasks.generate.normalise uses it to score answers):
- scale words and table headers scale the number: ``$6.8 billion``, ``6,797 million``, ``6,797M``, ``6,797 (in
  millions)``; a bare ``6,797`` is not ``$6,797 million`` (a value in thousands read as units is a wrong answer);
- currency: ``$``, ``USD``, ``US$`` are one currency; two answers that both name a currency must name the same one;
- ``%`` and ``percent`` are percent; ``percentage points``, ``pp`` and ``basis points`` (/100) are points, and a
  percent is not a point (a margin that moved 2 points did not move 2%);
- sign: ``-175``, ``(175)``, ``$(175)`` are negative; so is a figure stated beside a word of loss or decline
  ("a net loss of $2.8 billion", "decreased 5%"). Words of gain or growth make it positive. An answer that states no
  direction at all ("$175 million") is not a reference that states one explicitly ("-$175 million");
- precision: two figures are equal when they agree at the coarser of the precisions they print (``18.3%`` is
  ``18.29%``, ``$6.80 billion`` is ``$6,797 million``) and the answer prints at least three significant digits, or
  as many as the reference: ``$6.8 billion`` is not ``$6,797 million``, ``$6,760 million`` is not either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_CURRENCIES = {"$": "USD", "us$": "USD", "usd": "USD", "dollars": "USD", "dollar": "USD", "€": "EUR", "eur": "EUR",
               "euros": "EUR", "£": "GBP", "gbp": "GBP", "¥": "JPY", "jpy": "JPY", "yen": "JPY", "₹": "INR",
               "inr": "INR", "rs": "INR", "rs.": "INR"}
_CUR = r"(?:US\$|\$|€|£|¥|₹|\b(?:USD|EUR|GBP|JPY|INR)\b)"
SCALES = {"thousand": 1e3, "thousands": 1e3, "k": 1e3, "million": 1e6, "millions": 1e6, "mn": 1e6, "m": 1e6,
          "mm": 1e6, "mln": 1e6, "billion": 1e9, "billions": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12, "tn": 1e12}
_SCALE = r"(?:thousands?|millions?|billions?|trillion|mln|mn|bn|tn|mm|[kmb](?![a-z]))"
AMOUNT_RE = re.compile(
    rf"(?P<open>\(\s*)?(?P<sign>[-+\u2212\u2013])?\s*(?P<cur>{_CUR})?\s*(?P<inner>\(\s*)?(?P<sign2>[-\u2212])?"
    rf"(?<![\w.])(?P<num>{_NUM})(?![\d])"
    rf"(?:\s*(?P<close>\)))?"
    rf"(?:\s*(?P<scale>{_SCALE})\b)?"
    rf"(?:\s*(?P<header>\(?\s*in\s+(?P<hscale>thousands|millions|billions)(?:\s+of\s+dollars)?\s*\)?))?"
    rf"(?:\s*(?P<cur2>\b(?:USD|EUR|GBP|JPY|INR|dollars|euros|yen)\b))?"
    rf"(?:\s*(?P<pct>%|percent\b|per\s*cent\b|percentage\s+points?\b|pp\b|p\.p\.|points?\b|basis\s+points?\b|bps\b))?",
    re.I)
NEGATIVE_WORDS = re.compile(
    r"(?i)\b(loss(?:es)?|decreas\w*|declin\w*|fell|fall(?:s|ing)?|down|lower|drop(?:ped|s)?|reduc\w*|negative|"
    r"used\s+in|cash\s+used|outflows?|deficit|shrank|contract(?:ed|ion))\b")
POSITIVE_WORDS = re.compile(r"(?i)\b(increas\w*|gr[eo]w\w*|rose|rise[sn]?|up|higher|gain(?:ed|s)?|improv\w*)\b")
_YEAR = re.compile(r"^(19|20)\d{2}$")


@dataclass(frozen=True)
class Amount:
    """One figure: its signed, scaled value; what it is (percent / points); its currency; how precisely it was
    printed (``quantum``: the value of one unit in its last printed digit, scaled; ``digits``: significant digits)."""

    value: float
    percent: bool = False
    points: bool = False
    currency: str | None = None
    quantum: float = 1.0
    digits: int = 1
    explicit_sign: bool = False  # a minus or parentheses, not a word


def _printed_precision(num: str, scale: float) -> tuple[float, int]:
    digits = num.replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    significant = len(digits.replace(".", "").lstrip("0")) or 1
    if decimals == 0:  # an integer's trailing zeros may be rounding (5,000 million; 1,200,000): not counted
        significant = max(1, len(digits.lstrip("0").rstrip("0")))
    return scale * 10.0 ** -decimals, significant


def read_amounts(text: str) -> list[Amount]:
    """Every figure ``text`` states, in order (years standing alone are dates, not figures)."""
    out: list[Amount] = []
    stripped = text.strip()
    for m in AMOUNT_RE.finditer(text):
        num = m.group("num")
        scale_word = (m.group("scale") or m.group("hscale") or "").lower()
        if _YEAR.match(num) and not (scale_word or m.group("cur") or m.group("cur2") or m.group("pct")):
            continue
        scale = SCALES.get(scale_word, 1.0)
        value = float(num.replace(",", "")) * scale
        # parentheses negate only a figure that is money or the whole answer ("$(175)", "(175)"), never "sixty (60)"
        paren = bool((m.group("open") or m.group("inner")) and m.group("close"))
        paren_negative = paren and (bool(m.group("cur") or m.group("cur2")) or m.group(0).strip() == stripped)
        minus = (m.group("sign") or m.group("sign2") or "") in ("-", "\u2212", "\u2013")
        negative = minus or paren_negative
        pct = (m.group("pct") or "").lower()
        points = bool(re.search(r"point|pp|p\.p\.|bps", pct))
        if pct.startswith(("basis", "bps")):
            value /= 100
        quantum, digits = _printed_precision(num, scale)
        if pct.startswith(("basis", "bps")):
            quantum /= 100
        cur = (m.group("cur") or m.group("cur2") or "").lower()
        out.append(Amount(-value if negative else value, percent=bool(pct) and not points,
                          points=points, currency=_CURRENCIES.get(cur), quantum=quantum, digits=digits,
                          explicit_sign=negative))
    return out


def direction(text: str, amount: Amount) -> str | None:
    """How ``text`` signs ``amount``: "minus" (a minus or parentheses), "down" (a word of loss or decline),
    "up" (a word of growth), or None when it says nothing."""
    if amount.explicit_sign:
        return "minus"
    if NEGATIVE_WORDS.search(text):
        return "down"
    if POSITIVE_WORDS.search(text):
        return "up"
    return None


def signs_agree(pred_dir: str | None, ref_dir: str | None) -> bool:
    """A reference that states a direction is matched only by an answer that states the same one or, for a
    direction in words, by one that states none (the question asked "by how much did it decline")."""
    negative = {"minus", "down"}
    if ref_dir == "minus":
        return pred_dir in negative
    if ref_dir == "down":
        return pred_dir in (*negative, None)
    if ref_dir == "up":
        return pred_dir in ("up", None)
    return pred_dir in (None, "up", "down")


def same_figure(p: Amount, r: Amount) -> bool:
    """``p`` states ``r``: same kind (percent, points), same currency when both name one, equal magnitude at the
    coarser printed precision, with enough digits (see the module docstring). A fraction matches a percent
    (0.29 is 29%)."""
    if (p.points and r.percent) or (p.percent and r.points):
        return False
    if p.currency and r.currency and p.currency != r.currency:
        return False
    if p.digits < min(3, r.digits):
        return False
    pairs = [(abs(p.value), p.quantum, abs(r.value), r.quantum)]
    if p.percent != r.percent and not (p.points or r.points):
        if p.percent:  # 29% against 0.29
            pairs.append((abs(p.value) / 100, p.quantum / 100, abs(r.value), r.quantum))
        else:
            pairs.append((abs(p.value) * 100, p.quantum * 100, abs(r.value), r.quantum))
    for pv, pq, rv, rq in pairs:
        quantum = max(pq, rq)
        if abs(pv - rv) <= quantum / 2 * (1 + 1e-9) + 1e-12 and not (pv == 0) != (rv == 0):
            return True
    return False


def figures_match(predicted: str, reference: str, p: Amount, r: Amount) -> bool:
    """Two answers of one figure each: the same figure, signed alike (magnitudes compared, signs by direction)."""
    if not same_figure(p, r):
        return False
    return signs_agree(direction(predicted, p), direction(reference, r))
