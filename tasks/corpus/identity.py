"""What a document says it is: title, issuer or parties, type, period (fiscal year and quarter), fiscal-year end and
date, read from its own first pages and its PDF metadata, each field with the line it came from.

A filing's cover states its form, its registrant and the period it reports on ('For the quarterly period ended
June 25, 2022'); its first notes state its fiscal calendar ('fiscal year is the 52- or 53-week period that ends on
the last Saturday of September'); a contract's first lines name its parties; a paper's metadata its title. Nothing
here guesses from a file name. A document whose identity cannot be read says which fields it lacks (``unread``),
and detection then simply does not prefer it: identity scopes a search, it never filters one.

Read from a document's lines (its first :data:`CALENDAR_PAGES` pages: at ingest from the parse, and for a document
ingested before identities existed from its stored lines, without parsing or embedding it again).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import get_args

import polars as pl

from schemas.contracts import DocType, DocumentIdentity, IdentityField
from tasks.corpus.fiscal import (
    CALENDAR_PAGES,
    DATE,
    Line,
    PageText,
    field,
    fiscal_label,
    line_source,
    named_year,
    parse_date,
    period_names,
    year_end,
)

IDENTITY_VERSION = "identity-1"
COVER_PAGES = 3  # title, issuer, type, period and date are on a document's first pages
DOC_TYPES: tuple[str, ...] = get_args(DocType)

# -- the cover: form, type, period, issuer, tickers, title, parties, date -------------------------------------------
_FORM = re.compile(r"\bform\s+(10-K|10-Q|8-K|20-F|40-F|6-K|S-1|S-3|S-4|F-1|DEF\s?14A|10-KT|10-QT|11-K|N-CSR)\b", re.I)
_FORM_TYPES = {"10-K": "annual_report", "10-KT": "annual_report", "20-F": "annual_report", "40-F": "annual_report",
               "11-K": "annual_report", "N-CSR": "annual_report", "10-Q": "quarterly_report",
               "10-QT": "quarterly_report", "8-K": "current_report", "6-K": "current_report",
               "DEF 14A": "proxy_statement", "DEF14A": "proxy_statement", "S-1": "registration_statement",
               "S-3": "registration_statement", "S-4": "registration_statement", "F-1": "registration_statement"}
# what a cover calls itself, first match wins (a report's cover also says 'agreement' less often than the reverse)
# what a document calls itself in its title or at the top of its first page, first match wins (words further down a
# cover, 'the Company's policy', 'this Agreement', say what it discusses, not what it is)
_TYPE_WORDS = (
    ("quarterly_report", r"\bquarterly (?:report|financial statements?|results)\b"),
    ("half_year_report", r"\b(?:half[- ]year(?:ly)?|semi[- ]annual|interim) (?:financial )?report\b"),
    ("annual_report", r"\b(?:annual|integrated) (?:financial )?report\b|\bannual accounts\b"),
    ("prospectus", r"\bprospectus\b"),
    ("contract", r"\b(?:agreement|contract|lease|memorandum of understanding|terms and conditions|statement of "
                 r"work|purchase order)\b"),
    ("policy", r"\b(?:policy|code of (?:business )?conduct|code of ethics|procedures|guidelines)\b"),
    ("manual", r"\b(?:user(?:'s)? (?:manual|guide)|owner(?:'s)? manual|manual|handbook|help guide|instructions for "
               r"use|installation guide)\b"),
)
TOP_LINES = 15  # the top of a first page: title, who issued it, what it is
# a paper: an 'Abstract' heading on its first page, beside the marks of a venue or a preprint server
_ABSTRACT = re.compile(r"^\s*abstract\b", re.I | re.M)
_VENUE = re.compile(r"\b(?:arxiv|doi|proceedings|conference|journal|university|institute|workshop)\b", re.I)
_STAMP = re.compile(r"^\s*(?:arxiv:|table of contents$|contents$|for (?:immediate )?release\b)", re.I)
# a period in a title or at the top of a first page: 'Q2 2023', '2023 Q2', 'Half-year report 2023'
_HEAD_PERIOD = re.compile(r"\bQ(?P<q>[1-4])\s*(?P<y>(?:19|20)\d\d)\b|\b(?P<y2>(?:19|20)\d\d)\s*Q(?P<q2>[1-4])\b|"
                          r"\bH(?P<h>[12])\s*(?P<y3>(?:19|20)\d\d)\b")
_PERIOD = re.compile(
    r"\bfor\s+the\s+(?P<kind>(?:fiscal\s+)?quarter(?:ly)?(?:\s+period)?|(?:fiscal\s+)?year|transition\s+period|"
    r"(?:three|six|nine|twelve)\s+months?|half[- ]year|(?:first|second)\s+half(?:\s+(?:of\s+the\s+)?year)?|"
    r"interim\s+period|period)\s+end(?:ed|ing):?\s*(?P<date>" + DATE + ")", re.I)
_KIND_MONTHS = (("quarter", 3), ("three", 3), ("six", 6), ("half", 6), ("nine", 9), ("twelve", 12), ("year", 12))
_REGISTRANT = re.compile(r"\(\s*exact name of (?:the )?registrant", re.I)
_LEGAL = r"(?:inc|incorporated|corp|corporation|company|co|ltd|limited|plc|llc|l\.l\.c|lp|l\.p|n\.v|s\.a|ag|se|gmbh|" \
         r"holdings|group|s\.p\.a|a/s|ab|asa|oyj|bank|university|foundation|association)"
# a line that is a name ending like an organisation's ('Northwind Traders Inc.', 'CONTOSO CORPORATION'), starting with
# a capital
_COMPANY = re.compile(rf"^(?-i:[A-Z])[\w&'’.,\- ]{{1,80}}?\b{_LEGAL}\.?$", re.I)
_TICKER_HEAD = re.compile(r"trading\s+symbol", re.I)
_TICKER_WORD = re.compile(r"(?<![\w$.&/-])[A-Z]{2,5}(?:\.[A-Z])?(?![\w&/-])")
_CHECK_MARK = re.compile(r"^\s*indicate\b", re.I)
_TICKER_INLINE = re.compile(r"\b(?:NASDAQ|NYSE|NYSE American|LSE|TSX|ASX|Euronext)\s*:\s*([A-Z]{1,5}(?:\.[A-Z])?)\b")
# exchange, currency and legal words that the rows under 'Trading Symbol(s)' write in capitals too
_NOT_TICKERS = {"NA", "NONE", "USA", "US", "LLC", "INC", "PLC", "CORP", "NYSE", "LSE", "TSX", "ASX", "CBOE", "ARCA",
                "USD", "EUR", "THE", "AND", "OF", "DUE", "ADS", "ADR", "PAR", "CLASS", "STOCK", "NOTES", "TITLE",
                "NAME"}
_PARTIES = re.compile(r"\bbetween\s+(?P<a>[A-Z][^,;()\n]{2,80}?)\s*(?:\([^)]{0,80}\))?\s*,?\s+and\s+"
                      r"(?P<b>[A-Z][^,;()\n]{2,80}?)\s*(?:\(|,|;|\.|\n|$)")
_FILED = re.compile(r"\bfiled\s+(?:on\s+)?(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{4})", re.I)
_DATED = re.compile(rf"\b(?:dated|effective date|date of (?:this )?(?:report|agreement)|date)\s*:?\s*(?:as of\s+)?"
                    rf"({DATE})", re.I)
# a metadata title that is a file name or an editor's placeholder, not the document's title ('Word - report.docx')
_META_NOISE = re.compile(r"^(?:untitled|document\d*|slide \d+)\b|\.(?:docx?|pdf|pptx?|xlsx?|odt|rtf|txt)$",
                         re.I)


_ANNUAL_YEAR = re.compile(r"\b(?:annual|integrated)\s+report\s+(?P<a>(?:19|20)\d\d)\b|"
                          r"\b(?P<b>(?:19|20)\d\d)\s+(?:annual|integrated)\s+report\b", re.I)


def _kind_months(kind: str) -> int:
    kind = kind.lower()
    return next((n for word, n in _KIND_MONTHS if word in kind), 3)


def _form(cover: PageText, metadata: Mapping[str, str]) -> IdentityField | None:
    m = _FORM.search(cover.text)
    if m:
        return field(" ".join(m.group(1).upper().split()), cover.source(m.start()))
    for key in ("subject", "keywords", "title"):
        m = re.search(r"\b(10-K|10-Q|8-K|20-F|40-F|6-K)\b", metadata.get(key) or "")
        if m:
            return field(m.group(1), f'metadata {key}: "{metadata[key]}"')
    return None


def _doc_type(form: IdentityField | None, head: PageText, first_page: PageText) -> IdentityField | None:
    """The form's type (a filing), else a paper (an 'Abstract' heading and a venue on the first page), else what
    the title or the top of the first page calls the document."""
    if form is not None and str(form.value) in _FORM_TYPES:
        return field(_FORM_TYPES[str(form.value)], f"form {form.value} ({form.source})")
    abstract = _ABSTRACT.search(first_page.text)
    if abstract and _VENUE.search(first_page.text):
        return field("paper", first_page.source(abstract.start()))
    for kind, pattern in _TYPE_WORDS:
        m = re.search(pattern, head.text, re.I)
        if m:
            return field(kind, head.source(m.start()))
    return None


def _head_period(head: PageText) -> tuple[IdentityField, IdentityField] | None:
    """(fiscal year, period) a report's title or first lines name ('Interim report Q2 2023'), without an end date."""
    m = _HEAD_PERIOD.search(head.text)
    if not m:
        return None
    src = head.source(m.start())
    if m.group("h"):
        return field(int(m.group("y3")), src), field(f"H{m.group('h')}", src)
    return field(int(m.group("y") or m.group("y2")), src), field(f"Q{m.group('q') or m.group('q2')}", src)


def _period(cover: PageText) -> tuple[IdentityField, IdentityField] | None:
    for m in cover.find(_PERIOD):
        if "transition" in m.group("kind").lower():
            continue
        end = parse_date(m.group("date"))
        if end is None:
            continue
        src = cover.source(m.start())
        return field(end.isoformat(), src), field(_kind_months(m.group("kind")), src)
    return None


def _clean_name(text: str) -> str:
    return " ".join(text.strip(" ,;:").split())


def _issuer(cover: PageText, metadata: Mapping[str, str]) -> IdentityField | None:
    lines = cover.lines
    for i, ln in enumerate(lines):  # a filing: the line above '(Exact name of registrant as specified ...)'
        if _REGISTRANT.search(ln.text):
            for prev in reversed(lines[max(0, i - 3):i]):
                name = _clean_name(_REGISTRANT.split(prev.text)[0])
                if sum(c.isalpha() for c in name) >= 2:
                    return field(name, line_source(prev))
    named = [ln for ln in lines if len(ln.text.split()) <= 8 and _COMPANY.match(_clean_name(ln.text))]
    if named:  # the most prominent line that ends like a company's name
        best = max(named, key=lambda ln: (ln.page == lines[0].page, round(ln.font_size, 1), -ln.line_no))
        return field(_clean_name(best.text), line_source(best))
    for key in ("title", "author", "subject"):
        value = metadata.get(key) or ""
        for part in re.split(r"\s+-\s+|\bfor\b|\bfiled\b|,\s+a division of\b", value):
            part = _clean_name(part)
            if part and len(part.split()) <= 8 and _COMPANY.match(part) and not _FORM.search(part):
                return field(part, f'metadata {key}: "{value}"')
    return None


def _tickers(cover: PageText) -> list[IdentityField]:
    """Trading symbols: the capitalised codes in the rows under a cover's 'Trading Symbol(s)' header (a row is often
    one merged line: 'Common Stock, par value $.01 per share AMZN Nasdaq Global Select Market'), and 'NYSE: XYZ'."""
    found: dict[str, IdentityField] = {}
    lines = cover.lines
    for i, ln in enumerate(lines):
        if _TICKER_HEAD.search(ln.text):
            for nxt in lines[i:i + 20]:
                if nxt.page != ln.page or _CHECK_MARK.search(nxt.text):
                    break
                tail = _TICKER_HEAD.split(nxt.text)[-1]
                for t in _TICKER_WORD.findall(tail):
                    if t not in _NOT_TICKERS and t not in found:
                        found[t] = field(t, line_source(nxt))
            break
    for m in cover.find(_TICKER_INLINE):
        found.setdefault(m.group(1), field(m.group(1), cover.source(m.start())))
    return list(found.values())[:3]


def _title(first: Sequence[Line], metadata: Mapping[str, str]) -> IdentityField | None:
    """The PDF's own title when it is words (not an accession number or a file name), else the largest line(s) at
    the top of the first page (not a preprint stamp or 'Contents')."""
    meta = _clean_name(metadata.get("title") or "")
    words = re.findall(r"[^\W\d_]{2,}", meta)
    if len(words) >= 2 and not _META_NOISE.search(meta):
        return field(meta, f'metadata title: "{metadata["title"]}"')
    lettered = [ln for ln in first if sum(c.isalpha() for c in ln.text) >= 3 and len(ln.text) <= 200
                and not _STAMP.search(ln.text)]
    if not lettered:
        return None
    biggest = max(round(ln.font_size, 1) for ln in lettered)
    top = [ln for ln in lettered if round(ln.font_size, 1) == biggest][:2]
    return field(_clean_name(" ".join(ln.text for ln in top)), line_source(top[0]))


def _parties(first_page: PageText) -> list[IdentityField]:
    m = _PARTIES.search(first_page.text)
    if not m:
        return []
    src = first_page.source(m.start())
    return [field(_clean_name(m.group(g)), src) for g in ("a", "b")]


def _date(cover: PageText, metadata: Mapping[str, str]) -> IdentityField | None:
    for key in ("subject", "title"):
        m = _FILED.search(metadata.get(key) or "")
        if m:
            d = parse_date(m.group(1))
            if d:
                return field(d.isoformat(), f'metadata {key}: "{metadata[key]}"')
    m = _DATED.search(cover.text)
    if m:
        d = parse_date(m.group(1))
        if d:
            return field(d.isoformat(), cover.source(m.start()))
    raw = metadata.get("creationDate") or ""
    m = re.match(r"D:(\d{4})(\d{2})(\d{2})", raw)
    if m:
        try:
            return field(date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat(),
                          f'metadata creationDate: "{raw}"')
        except ValueError:
            return None
    return None


# -- the identity ----------------------------------------------------------------------------------------------------
def read_identity(lines: Sequence[Line], metadata: Mapping[str, object] | None = None) -> DocumentIdentity:
    """A document's identity from its first pages' lines (``lines``: any order; pages past :data:`CALENDAR_PAGES`
    are ignored) and its PDF metadata (PyMuPDF's ``Document.metadata``). Never raises on odd input: a field that
    cannot be read is left out and named in ``unread``."""
    meta = {k: str(v) for k, v in (metadata or {}).items() if v}
    lines = sorted((ln for ln in lines if ln.text and ln.text.strip()), key=lambda ln: (ln.page, ln.line_no))
    pages = sorted({ln.page for ln in lines})[:CALENDAR_PAGES]
    kept = set(pages)
    lines = [ln for ln in lines if ln.page in kept]
    cover = PageText([ln for ln in lines if ln.page in set(pages[:COVER_PAGES])])
    first = [ln for ln in lines if pages and ln.page == pages[0]]
    first_page, body = PageText(first), PageText(lines)

    ident = DocumentIdentity(version=IDENTITY_VERSION)
    ident.form = _form(cover, meta)
    ident.title = _title(first, meta)
    head = PageText([*([Line(-1, -1, str(ident.title.value))] if ident.title else []), *first[:TOP_LINES]])
    ident.doc_type = _doc_type(ident.form, head, first_page)
    ident.issuer = _issuer(cover, meta)
    ident.tickers = _tickers(cover)
    if ident.doc_type is not None and ident.doc_type.value == "contract":
        ident.parties = _parties(first_page)
    ident.date = _date(cover, meta)
    period = _period(cover)
    end = months = None
    if period is not None:
        ident.period_end, ident.period_months = period
        end, months = date.fromisoformat(str(ident.period_end.value)), int(ident.period_months.value)
    elif ident.doc_type is not None and ident.doc_type.value == "annual_report" and _ANNUAL_YEAR.search(head.text):
        m = _ANNUAL_YEAR.search(head.text)
        src = head.source(m.start())
        ident.fiscal_year, ident.fiscal_period = field(int(m.group("a") or m.group("b")), src), field("FY", src)
    elif ident.doc_type is not None and "report" in str(ident.doc_type.value) and _head_period(head):
        ident.fiscal_year, ident.fiscal_period = _head_period(head)
    if end is not None and months is not None:
        ident.fiscal_year_end_month = year_end(body, end, months)
        fye = int(ident.fiscal_year_end_month.value)
        fiscal_year, label = fiscal_label(end, months, fye)
        named, named_src = named_year(body, fiscal_year, label)
        how = (f"derived: period ended {end.isoformat()} ({months} months), fiscal year ending in month {fye}"
               if named_src is None else f"named: {named_src}")
        ident.fiscal_year, ident.fiscal_period = field(named, how), field(label, how)
        ident.period_names = period_names(body, fye)
    who, when = ident.issuer or (ident.parties or None), ident.period_end or ident.fiscal_year
    ident.unread = [name for name, value in (("title", ident.title), ("issuer", who), ("type", ident.doc_type),
                                             ("period", when),
                                             ("date", ident.date)) if value is None]
    return ident


_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")


def describe(ident: DocumentIdentity | None) -> str:
    """One line: who, what, which period, when ('Northwind Traders Inc. (NWTR) · quarterly report (Form 10-Q) ·
    fiscal Q3 2023, period ended 2023-07-01 · fiscal year ends in September · dated 2023-08-04')."""
    if ident is None:
        return "identity not read"
    parts = []
    who = ident.issuer.value if ident.issuer else " and ".join(str(p.value) for p in ident.parties)
    if who:
        tickers = ", ".join(str(t.value) for t in ident.tickers)
        parts.append(f"{who} ({tickers})" if tickers else str(who))
    if ident.doc_type:
        kind = str(ident.doc_type.value).replace("_", " ")
        parts.append(f"{kind} (Form {ident.form.value})" if ident.form else kind)
    if ident.title and not ident.form:
        parts.append(f'"{ident.title.value}"')
    if ident.fiscal_period and ident.fiscal_year:
        label = f"fiscal {ident.fiscal_period.value} {ident.fiscal_year.value}"
        if ident.fiscal_period.value == "FY":
            label = f"fiscal year {ident.fiscal_year.value}"
        parts.append(label + (f", period ended {ident.period_end.value}" if ident.period_end else ""))
    elif ident.period_end:
        parts.append(f"period ended {ident.period_end.value}")
    if ident.fiscal_year_end_month and int(ident.fiscal_year_end_month.value) != 12:
        parts.append(f"fiscal year ends in {_MONTH_NAMES[int(ident.fiscal_year_end_month.value) - 1]}")
    if ident.date:
        parts.append(f"dated {ident.date.value}")
    if not parts:
        return "identity not read: " + ", ".join(ident.unread) + " not found on its first pages"
    return " · ".join(parts)


def reports_a_period(line: str) -> bool:
    """Whether a :func:`describe` line says which period its document reports (a periodic report: 'fiscal Q3 2023,
    period ended 2023-07-01', 'period ended 2023-07-01'), not only when it is dated."""
    return any(p.startswith(("period ended ", "fiscal ")) and not p.startswith("fiscal year ends in ")
               for p in line.split(" · "))


def frame_lines(lines: pl.DataFrame) -> list[Line]:
    """The lines of a document's first :data:`CALENDAR_PAGES` pages (a ``lines`` frame: parsed or stored), as
    :func:`read_identity` reads them."""
    first = lines.filter(pl.col("page") < CALENDAR_PAGES)
    sizes = first["font_size"].to_list() if "font_size" in first.columns else [0.0] * first.height
    return [Line(p, n, t, s or 0.0) for p, n, t, s in zip(first["page"].to_list(), first["line_no"].to_list(),
                                                         first["text"].to_list(), sizes)]


def identity_json(ident: DocumentIdentity) -> str:
    """How ``documents.identity`` stores it (fields not read are left out)."""
    return ident.model_dump_json(exclude_none=True)


def load_identity(stored: str | None) -> DocumentIdentity | None:
    """A stored identity; None when the document has none yet or it was read by another version of this module."""
    if not stored:
        return None
    ident = DocumentIdentity.model_validate_json(stored)
    return ident if ident.version == IDENTITY_VERSION else None
