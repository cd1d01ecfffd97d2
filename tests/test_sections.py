"""Sections: toc ranges and parents, outline title matching, heading recovery on synthetic and real documents."""

from __future__ import annotations

import polars as pl
import pytest

from tasks.corpus.parse import parse_pdf
from tasks.corpus.sections import (
    TOC_SCHEMA,
    _key,
    _line_keys,
    _match_title,
    build_toc,
    outline_sections,
    page_sections,
    recover_sections,
)

BODY = "Revenue grew in every region while costs stayed flat over the period under review here."


def frame(rows: list[dict]) -> pl.DataFrame:
    """A ``lines`` frame from rows of text/page (+ size, bold, block, x): one block per line unless given."""
    cols: dict[str, list] = {k: [] for k in ("doc_id", "page", "line_no", "text", "bbox", "font_size", "bold", "block_no")}
    y: dict[int, float] = {}
    for n, r in enumerate(rows):
        page, size = r.get("page", 0), r.get("size", 10.0)
        top = r.get("y", y.get(page, 60.0))
        y[page] = top + size * 1.5
        x0 = r.get("x", 72.0)
        cols["doc_id"].append("d")
        cols["page"].append(page)
        cols["line_no"].append(n)
        cols["text"].append(r["text"])
        cols["bbox"].append([x0, top, x0 + 5.0 * len(r["text"]), top + size])
        cols["font_size"].append(size)
        cols["bold"].append(r.get("bold", False))
        cols["block_no"].append(r.get("block", n))
    return pl.DataFrame(cols, schema={**{k: v for k, v in TOC_SCHEMA.items() if k == "doc_id"},
                                      "page": pl.Int64, "line_no": pl.Int64, "text": pl.String,
                                      "bbox": pl.List(pl.Float64), "font_size": pl.Float64, "bold": pl.Boolean,
                                      "block_no": pl.Int64})


def para(page: int, n: int = 4, block: int | None = None) -> list[dict]:
    return [{"text": f"{BODY} ({k})", "page": page, "block": block} if block is not None else
            {"text": f"{BODY} ({k})", "page": page} for k in range(n)]


def heading(text: str, page: int, size: float = 10.0, bold: bool = True, **kw) -> dict:
    return {"text": text, "page": page, "size": size, "bold": bold, **kw}


def titles(toc: pl.DataFrame | None) -> list[str]:
    assert toc is not None
    return toc["title"].to_list()


# --- build_toc / pages -----------------------------------------------------------------------------------------


def test_build_toc_ranges_parents_and_same_line_entries():
    pages = [0, 0, 0, 1, 1, 1, 2, 2]
    toc = build_toc([(1, "A", 0), (2, "B", 2), (3, "C", 2), (1, "D", 5)], pages, "d", "outline")
    assert dict(toc.schema) == TOC_SCHEMA
    rows = toc.to_dicts()
    assert [(r["title"], r["line_start"], r["line_end"]) for r in rows] == [("A", 0, 1), ("B", 2, 2), ("C", 2, 4), ("D", 5, 7)]
    assert [r["parent_id"] for r in rows] == [None, 0, 1, None]
    assert [(r["page_start"], r["page_end"]) for r in rows] == [(0, 0), (0, 0), (0, 1), (1, 2)]
    assert set(toc["source"]) == {"outline"} and set(toc["doc_id"]) == {"d"}


def test_build_toc_sorts_by_line_and_skips_levels_for_parents():
    rows = build_toc([(1, "late", 4), (3, "deep", 2), (1, "first", 0)], [0] * 6, "d", "outline").to_dicts()
    assert [r["title"] for r in rows] == ["first", "deep", "late"]
    assert [r["parent_id"] for r in rows] == [None, 0, None]
    assert [r["section_id"] for r in rows] == [0, 1, 2]


def test_page_sections_one_per_page_with_text():
    lines = frame(para(0, 2) + para(2, 3) + para(3, 1))
    toc = page_sections(lines, "d")
    assert titles(toc) == ["Page 1", "Page 3", "Page 4"]
    assert toc["line_start"].to_list() == [0, 2, 5] and toc["line_end"].to_list() == [1, 4, 5]
    assert set(toc["level"]) == {1} and set(toc["source"]) == {"pages"}


# --- outline title matching ------------------------------------------------------------------------------------


def _match(title: str, texts: list[str], sizes: list[float] | None = None) -> int | None:
    keys = {i: _line_keys(t) for i, t in enumerate(texts)}
    return _match_title(title, keys, sizes or [10.0] * len(texts), 0, len(texts))


def test_match_title_tolerates_case_punctuation_and_ligatures():
    texts = ["Some body text here.", "3.2 ATTENTION:", "more body"]
    assert _match("3.2 Attention", texts) == 1
    assert _match("De\ufb01nitions", ["intro", "Definitions", "x"]) == 1
    assert _key("  Scaled  Dot-Product\u00a0Attention ") == "scaleddotproductattention"


def test_match_title_split_lines_and_separate_number():
    assert _match("3.2.1 Scaled Dot-Product Attention", ["body", "3.2.1 Scaled Dot-Product", "Attention", "x"]) == 1
    assert _match("3.2 Attention", ["body", "3.2", "Attention", "x"]) == 1
    assert _match("4 Why Self-Attention", ["body text", "Why Self-Attention", "x"]) == 1
    assert _match("Positional Encoding", ["body", "Positonal Encoding", "x"]) == 1  # fuzzy
    assert _match("Unrelated Title", ["body", "something else entirely"]) is None
    assert _match("NLI", ["body text", "B.3 NLI", "uses NLI models"]) == 1
    assert _match("New Modules", ["body", "1) New Modules: The Modular RAG framework adds", "x"]) == 1
    assert _match("How to Correct the Model with Feedback?", ["body", "2.5 How to Correct the Model", "with Feedback?"]) == 1


def test_match_title_prefers_the_larger_of_two_exact_matches():
    assert _match("Results", ["Results", "body", "Results"], [8.0, 10.0, 14.0]) == 2


def test_outline_falls_back_to_first_line_of_page_and_next_text_page():
    lines = frame(para(0, 3) + para(2, 3))  # page 1 has no text
    toc = outline_sections(lines, [[1, "Not Printed Anywhere", 1], [1, "Image Page", 2], [1, "Last", 3]], "d", 3)
    assert toc["line_start"].to_list() == [0, 3, 3]
    assert toc["page_start"].to_list() == [0, 2, 2]


# --- heading recovery: synthetic -------------------------------------------------------------------------------


def test_numbered_bold_headings_and_levels():
    rows = [heading("Abstract", 0)] + para(0, 3)
    rows += [heading("1 Introduction", 0)] + para(0, 3)
    rows += [heading("1.1 Background", 1)] + para(1, 3)
    rows += [heading("2 Method", 1)] + para(1, 3) + [heading("2.1 Data", 2)] + para(2, 4)
    toc = recover_sections(frame(rows), "d")
    assert titles(toc) == ["Abstract", "1 Introduction", "1.1 Background", "2 Method", "2.1 Data"]
    assert toc["level"].to_list() == [1, 1, 2, 1, 2]
    assert toc["parent_id"].to_list() == [None, None, 1, None, 3]
    assert set(toc["source"]) == {"headings"}


def test_bigger_font_tiers_give_levels_and_multiline_titles_merge():
    rows = [heading("Public views of the economy", 0, size=18, bold=False, block=100),
            heading("improve over the year", 0, size=18, bold=False, block=100)] + para(0, 4)
    rows += [heading("Regional detail", 0, size=13, bold=False)] + para(0, 3)
    rows += [heading("Methods", 1, size=18, bold=False)] + para(1, 4)
    toc = recover_sections(frame(rows), "d")
    assert titles(toc) == ["Public views of the economy improve over the year", "Regional detail", "Methods"]
    assert toc["level"].to_list() == [1, 2, 1]
    assert toc["line_start"].to_list() == [0, 6, 10]


def test_filing_hierarchy_part_item_note_subheading():
    rows = [heading("PART I — FINANCIAL INFORMATION", 0), heading("Item 1. Financial Statements", 0)] + para(0, 3)
    rows += [heading("Note 1 – Summary of Significant Accounting Policies", 1)] + para(1, 3)
    rows += [heading("Basis of Presentation", 1)] + para(1, 3)
    rows += [heading("Item 2. Management’s Discussion and Analysis", 2)] + para(2, 3)
    rows += [heading("PART II — OTHER INFORMATION", 3), heading("Item 1A. Risk Factors", 3)] + para(3, 3)
    toc = recover_sections(frame(rows), "d").to_dicts()
    level = {r["title"].split(" ")[0] + r["title"].split(" ")[1]: r["level"] for r in toc}
    assert level["PARTI"] < level["Item1."] < level["Note1"] < level["Basisof"]
    by_title = {r["title"]: r for r in toc}
    assert toc[by_title["Item 2. Management’s Discussion and Analysis"]["parent_id"]]["title"].startswith("PART I ")
    assert toc[by_title["Item 1A. Risk Factors"]["parent_id"]]["title"].startswith("PART II")
    assert toc[by_title["Basis of Presentation"]["parent_id"]]["title"].startswith("Note 1")


def test_noise_is_not_a_heading():
    rows = []
    names = ["Markets", "Products", "People", "Risks", "Outlook"]
    for p in range(5):
        rows.append(heading("ACME Corp Annual Report 2023", p, size=14))  # running header on every page
        rows.append(heading(f"Chapter {p + 1} {names[p]}", p, size=14))
        rows += para(p, 4)
        rows.append(heading(f"ACME Corp | Investor Pack | p{p + 1}", p, size=14, y=800.0))  # footer: differs by its number
        rows.append(heading(f"Page {p + 1} of 5", p, size=14, y=820.0))
    rows += [heading("2023 2022 2021 2020", 4), heading("Total revenue", 4, y=500.0), heading("1,234", 4, bold=False, x=400.0, y=500.0)]
    rows += [heading("continued from the previous page", 4, size=14), heading("Contents......... 3", 4, size=14)]
    rows += [heading(f"Bold paragraph line {k}", 4, block=77) for k in range(6)]
    toc = recover_sections(frame(rows), "d")
    assert titles(toc) == [f"Chapter {p + 1} {names[p]}" for p in range(5)]


def test_headings_differing_by_number_at_different_heights_are_kept():
    rows = []
    for p in range(4):
        rows += para(p, p + 1) + [heading(f"Note {p + 1}", p, size=14)] + para(p, 3)
    assert titles(recover_sections(frame(rows), "d")) == [f"Note {p + 1}" for p in range(4)]


def test_contents_page_entries_are_dropped():
    rows = [heading("Contents", 0, size=16)] + [heading(f"{t} {n}", 0, size=12) for t, n in (("Overview", 3), ("Results", 7), ("Outlook", 12))]
    rows += [heading("Overview", 1, size=16)] + para(1, 4) + [heading("Results", 2, size=16)] + para(2, 4)
    assert titles(recover_sections(frame(rows), "d")) == ["Contents", "Overview", "Results"]


def test_run_in_bold_lead_is_not_a_heading():
    rows = [heading("Method Overview", 0, size=14)] + para(0, 2)
    rows += [heading("Fact-Checking. Automated fact-checking has", 0, block=50),
             {"text": "been studied for years by many groups.", "page": 0, "block": 50}]
    rows += [heading("Results", 1, size=14)] + para(1, 3)
    assert titles(recover_sections(frame(rows), "d")) == ["Method Overview", "Results"]


def test_crowded_bold_style_is_formatting_not_structure():
    rows = []
    for p in range(3):
        rows += [heading(f"Label {chr(65 + k)}{p}", p) for k in range(12)] + para(p, 2)
    assert recover_sections(frame(rows), "d") is None


def test_fewer_than_two_headings_gives_none():
    assert recover_sections(frame([heading("Lonely Title", 0, size=20)] + para(0, 5) + para(1, 5)), "d") is None
    assert recover_sections(frame(para(0, 5)), "d") is None


# --- heading recovery: real documents without an outline -------------------------------------------------------


def _toc(path):
    doc = parse_pdf(path)
    assert not doc.has_outline and doc.toc_source == "headings"
    return doc.toc.to_dicts()


def test_sec_10q_headings(shared_data):
    toc = _toc(shared_data / "docugami" / "pdfs" / "2023 Q2 AAPL.pdf")
    by_title = {r["title"]: r for r in toc}
    for t in ("PART I — FINANCIAL INFORMATION", "Item 1. Financial Statements",
              "Note 1 – Summary of Significant Accounting Policies", "Note 10 – Segment Information and Geographic Data",
              "Item 2. Management’s Discussion and Analysis of Financial Condition and Results of Operations",
              "PART II — OTHER INFORMATION", "Item 1A. Risk Factors", "Item 6. Exhibits"):
        assert t in by_title, t
    part, item, note = by_title["PART I — FINANCIAL INFORMATION"], by_title["Item 1. Financial Statements"], by_title[
        "Note 1 – Summary of Significant Accounting Policies"]
    assert part["level"] < item["level"] < note["level"]
    assert item["parent_id"] == part["section_id"]
    assert part["page_start"] == 3 and by_title["Item 1A. Risk Factors"]["page_start"] == 22
    assert not any(r["title"] == "Apple Inc." for r in toc)  # running header of the statements


def test_paper_headings(shared_data):
    toc = _toc(shared_data / "mmlongbench" / "pdfs" / "2023.acl-long.386.pdf")
    by_title = {r["title"]: r for r in toc}
    for t in ("Abstract", "1 Introduction", "2 Related Work", "3 PROGRAMFC", "3.1 Problem Formulation", "4.1 Main Results",
              "5 Conclusion and Future Work", "References", "A.1 Pre-trained Models"):
        assert t in by_title, t
    assert toc[by_title["3.1 Problem Formulation"]["parent_id"]]["title"] == "3 PROGRAMFC"
    assert by_title["1 Introduction"]["level"] == by_title["3 PROGRAMFC"]["level"] < by_title["4.1 Main Results"]["level"]


def test_report_headings(shared_data):
    toc = _toc(shared_data / "mmlongbench" / "pdfs" / "PIP_Seniors-and-Tech-Use_040314.pdf")
    top = [r["title"] for r in toc if r["level"] == 1]
    assert top == ["Main Findings", "Usage and Adoption", "Attitudes, Impacts, and Barriers to Adoption",
                   "Appendix—Detailed Demographic Tables", "Methods"]
    lag = next(r for r in toc if r["title"] == "Seniors continue to lag in tech adoption")
    assert toc[lag["parent_id"]]["title"] == "Main Findings"
    assert next(r for r in toc if r["title"] == "Twitter usage for older adults")["page_start"] == 22


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("stereo_headset.pdf", ["Checking the package contents", "Location and function of parts", "Wearing the headset"]),
        ("ISEP_student_handbook_2020.pdf", ["Transfer of Credits", "Thesis Advisory Committee (TAC)", "PhD Qualifying Examination"]),
    ],
)
def test_manual_and_handbook_headings(shared_data, name, expected):
    toc = _toc(shared_data / "mmlongbench" / "pdfs" / name)
    got = [r["title"] for r in toc]
    assert len(got) >= 20 and all(t in got for t in expected)
    assert "Help Guide" not in got  # the headset manual's running header
