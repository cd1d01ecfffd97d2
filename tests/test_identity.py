"""Documents that say what they are: identity read from a document's first pages and its PDF metadata, each field
with its source line (tasks.corpus.identity, tasks.corpus.fiscal), stored at ingest and read for documents
ingested before identities existed without a parse or an embedding."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.ingest import ingest_into
from schemas.settings import get_settings
from tasks.corpus.fiscal import closing_month, fiscal_label, parse_date
from tasks.corpus.identity import Line, describe, load_identity, read_identity, reports_a_period
from tasks.corpus.parse import parse_pdf
from tasks.corpus.sample.generate import generate_sample_corpus
from warehouse import corpus
from warehouse.db import Warehouse


def _lines(*pages: str) -> list[Line]:
    out, n = [], 0
    for p, text in enumerate(pages):
        for t in text.strip("\n").split("\n"):
            out.append(Line(p, n, t.strip(), 10.0))
            n += 1
    return out


QUARTERLY_COVER = """
UNITED STATES SECURITIES AND EXCHANGE COMMISSION
FORM 10-Q
QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the quarterly period ended
April 1, 2023
Commission File Number: 001-00001
Northwind Traders Inc.
(Exact name of Registrant as specified in its charter)
Title of each class Trading symbol(s) Name of each exchange on which registered
Common Stock, $0.01 par value per share NWTR The Nasdaq Stock Market LLC
Indicate by check mark whether the Registrant (1) has filed all reports required to be filed
"""
QUARTERLY_NOTES = """
Basis of Presentation
The Company's fiscal year is the 52- or 53-week period that ends on the last Saturday of September.
Unless otherwise stated, references to particular years, quarters, months and periods refer to the Company's
fiscal years ended in September and the associated quarters, months and periods of those fiscal years.
Net sales for the second quarter of 2023 decreased compared to the second quarter of 2022.
"""


def test_a_quarterly_filing_says_its_issuer_form_period_and_fiscal_calendar():
    ident = read_identity(_lines(QUARTERLY_COVER, "Contents", QUARTERLY_NOTES),
                          {"subject": "Form 10-Q filed on 2023-05-05 for the period ending 2023-04-01",
                           "title": "0000000000-23-000001"})
    assert ident.issuer.value == "Northwind Traders Inc." and "line 6" in ident.issuer.source
    assert [t.value for t in ident.tickers] == ["NWTR"]
    assert (ident.form.value, ident.doc_type.value) == ("10-Q", "quarterly_report")
    assert (ident.period_end.value, ident.period_months.value) == ("2023-04-01", 3)
    assert "For the quarterly period ended" in ident.period_end.source  # the date on the next line still counts
    assert ident.fiscal_year_end_month.value == 9 and "last Saturday of September" in ident.fiscal_year_end_month.source
    assert (ident.fiscal_year.value, ident.fiscal_period.value) == (2023, "Q2")
    assert ident.period_names.value == "fiscal"  # 'references to particular years ... refer to ... fiscal years'
    assert ident.date.value == "2023-05-05" and ident.date.source.startswith("metadata subject")
    assert ident.unread == []
    assert describe(ident).startswith("Northwind Traders Inc. (NWTR) · quarterly report (Form 10-Q) · fiscal Q2 2023")
    assert reports_a_period(describe(ident))


def test_the_fiscal_year_end_comes_from_a_quarterly_balance_sheet_when_nothing_else_says():
    cover = QUARTERLY_COVER.replace("April 1, 2023", "December 31, 2022")
    index = "Balance Sheets as of December 31, 2022 and June 30, 2022 5\nThe second quarter of fiscal year 2023"
    ident = read_identity(_lines(cover, index))
    assert ident.fiscal_year_end_month.value == 6 and "Balance Sheets" in ident.fiscal_year_end_month.source
    assert (ident.fiscal_year.value, ident.fiscal_period.value) == (2023, "Q2")
    assert ident.period_names.value == "explicit"  # it writes 'fiscal year 2023'


def test_without_a_stated_fiscal_calendar_the_calendar_year_is_assumed_and_said():
    ident = read_identity(_lines(QUARTERLY_COVER.replace("April 1, 2023", "September 30, 2023")))
    assert ident.fiscal_year_end_month.value == 12 and ident.fiscal_year_end_month.source.startswith("assumed")
    assert (ident.fiscal_year.value, ident.fiscal_period.value) == (2023, "Q3")
    assert ident.period_names is None


def test_an_annual_report_a_contract_and_a_paper():
    annual = read_identity(_lines("Contoso Holdings plc\nAnnual Report 2022\nStrategic report",
                                  "Consolidated statements for the year ended 31 December 2022"))
    assert annual.doc_type.value == "annual_report" and annual.issuer.value == "Contoso Holdings plc"
    assert (annual.period_end.value, annual.period_months.value) == ("2022-12-31", 12)
    assert (annual.fiscal_year.value, annual.fiscal_period.value) == (2022, "FY")
    assert annual.fiscal_year_end_month.value == 12

    contract = read_identity(_lines("MASTER SERVICES AGREEMENT\nThis Agreement is made between Fabrikam Ltd. "
                                    "(\"Supplier\") and Tailspin Toys LLC (\"Customer\").\n"
                                    "Effective Date: March 1, 2021"))
    assert contract.doc_type.value == "contract"
    assert [p.value for p in contract.parties] == ["Fabrikam Ltd.", "Tailspin Toys LLC"]
    assert contract.date.value == "2021-03-01"

    paper = read_identity(_lines("arXiv:2401.00001v1 [cs.CL] 1 Jan 2024\nA Study of Things\nSome Author\n"
                                 "Department of Things, Example University\nAbstract\nWe study things."),
                          {"title": "A Study of Things", "creationDate": "D:20240102120000Z"})
    assert paper.doc_type.value == "paper" and paper.title.value == "A Study of Things"
    assert paper.date.value == "2024-01-02" and paper.date.source.startswith("metadata creationDate")
    assert not reports_a_period(describe(paper))  # dated, but it reports no period
    assert not reports_a_period("Northwind Traders Inc. · manual · fiscal year ends in June · dated 2023-05-26")


def test_a_document_whose_identity_cannot_be_read_says_so():
    ident = read_identity([], {})
    assert set(ident.unread) == {"title", "issuer", "type", "period", "date"}
    assert describe(ident).startswith("identity not read")
    assert describe(None) == "identity not read"
    assert not reports_a_period(describe(None))


@pytest.mark.parametrize("end, months, fye, expected", [
    (date(2022, 12, 31), 3, 9, (2023, "Q1")),   # a September year end: December closes the first quarter
    (date(2023, 4, 1), 3, 9, (2023, "Q2")),     # 52/53 weeks: a period ending April 1 closes March
    (date(2022, 10, 30), 3, 1, (2023, "Q3")),   # a January year end: fiscal 2023 ends in January 2023
    (date(2023, 4, 30), 3, 1, (2024, "Q1")),
    (date(2022, 9, 30), 3, 6, (2023, "Q1")),    # a June year end
    (date(2022, 10, 1), 3, 12, (2022, "Q3")),
    (date(2023, 6, 30), 6, 12, (2023, "H1")),
    (date(2023, 9, 30), 9, 12, (2023, "9M")),
    (date(2023, 3, 31), 12, 3, (2023, "FY")),
])
def test_fiscal_labels(end, months, fye, expected):
    assert fiscal_label(end, months, fye) == expected


def test_dates_as_documents_write_them():
    assert parse_date("June 25, 2022") == date(2022, 6, 25)
    assert parse_date("25 June 2022") == date(2022, 6, 25)
    assert parse_date("Oct. 1, 2022") == date(2022, 10, 1)
    assert parse_date("filed 10/24/2022") == date(2022, 10, 24)
    assert parse_date("2023-07-01") == date(2023, 7, 1)
    assert parse_date("February 30, 2023") is None
    assert closing_month(date(2023, 7, 1)) == (2023, 6) and closing_month(date(2023, 10, 29)) == (2023, 10)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return generate_sample_corpus(tmp_path_factory.mktemp("sample"))


def test_ingest_stores_identities_and_reads_missing_ones_without_parsing_again(tmp_path, sample, monkeypatch):
    settings = get_settings(home=tmp_path / "home", embedder={"kind": "hash"})
    docs = tmp_path / "docs"
    shutil.copytree(sample.root / "docs", docs)
    with Warehouse(settings.duckdb_path) as wh:
        first = ingest_into(wh, "run-1", [docs], settings, log=lambda m: None)
        stored = {r["path"]: r["identity"] for r in corpus.list_documents(wh)}
        assert first.ingested and all(load_identity(i) is not None for i in stored.values())
        wh.execute("UPDATE documents SET identity = NULL")  # a home ingested before identities existed

        def no_parse(*a, **k):
            raise AssertionError("an unchanged document was parsed again")

        monkeypatch.setattr("tasks.corpus.ingest.parse_pdf", no_parse)
        second = ingest_into(wh, "run-2", [docs], settings, log=lambda m: None)
        assert second.ingested == [] and second.identified == len(stored)
        again = {r["path"]: r["identity"] for r in corpus.list_documents(wh)}
        # read from the stored lines, the same identity as from the parse
        assert {p: load_identity(i) for p, i in again.items()} == {p: load_identity(i) for p, i in stored.items()}
        third = ingest_into(wh, "run-3", [docs], settings, log=lambda m: None)
        assert third.identified == 0


def test_docugami_filings_say_their_fiscal_quarters(shared_data):
    pdfs = shared_data / "docugami" / "pdfs"
    expected = {"2022 Q3 MSFT.pdf": (2023, "Q1", 6), "2023 Q1 AAPL.pdf": (2023, "Q1", 9),
                "2023 Q3 NVDA.pdf": (2024, "Q3", 1), "2022 Q3 INTC.pdf": (2022, "Q3", 12)}
    for name, (fy, fp, fye) in expected.items():
        parsed = parse_pdf(Path(pdfs / name))
        ident = read_identity([Line(r["page"], r["line_no"], r["text"], r["font_size"])
                               for r in parsed.lines.iter_rows(named=True)], parsed.metadata)
        assert (ident.fiscal_year.value, ident.fiscal_period.value, ident.fiscal_year_end_month.value) == (fy, fp, fye)
        assert ident.doc_type.value == "quarterly_report" and ident.tickers and ident.issuer


def test_cli_lists_the_corpus_with_identities_and_reads_missing_ones(tmp_path, sample):
    settings = get_settings(home=tmp_path / "home", embedder={"kind": "hash"})
    with Warehouse(settings.duckdb_path) as wh:
        ingest_into(wh, "run-1", [sample.root / "docs"], settings, log=lambda m: None)
        wh.execute("UPDATE documents SET identity = NULL WHERE path LIKE '%contract%'")
    runner = CliRunner()
    out = runner.invoke(app, ["corpus", "--home", str(settings.home)])
    assert out.exit_code == 0, out.output
    assert "contract" in out.output and "without an identity" in out.output
    out = runner.invoke(app, ["corpus", "--home", str(settings.home), "--identify", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout[out.stdout.index("["):])
    assert rows and all(r["identity"] and r["identity"]["version"] for r in rows if r["status"] == "ok")
    name = Path(rows[0]["path"]).name
    out = runner.invoke(app, ["corpus", "--home", str(settings.home), "--show", name])
    assert out.exit_code == 0 and " <- " in out.output  # every field with the line it was read from
