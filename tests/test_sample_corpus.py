"""The generated sample corpus: deterministic bytes, gold pages proven against the PDFs' own text, bad inputs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import pymupdf
import pytest

from schemas.contracts import QuestionRecord
from tasks.corpus.sample.generate import (
    DATASET,
    ENCRYPTED_USER_PASSWORD,
    INJECTION_LINE,
    generate_sample_corpus,
    layout,
    main,
    normalize_ws,
    write_bad_files,
)
from tasks.corpus.sample.texts import (
    DOCUMENTS,
    EMPLOYEE_HANDBOOK,
    HANDBOOK_HEADER,
    QUESTIONS,
)

ROW_KEYS = ["dataset", "qid", "doc", "question", "answer", "gold_pages_0based", "gold_source", "labels"]
KINDS = {"single", "list", "comparison", "unanswerable", "multi_doc"}
FORMATS = {"Int", "Float", "Str", "List", "None"}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return generate_sample_corpus(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def page_texts(corpus) -> dict[str, list[str]]:
    """Document stem -> whitespace-normalized text of each page, as PyMuPDF extracts it."""
    out = {}
    for pdf in corpus.pdfs:
        with pymupdf.open(pdf) as doc:
            out[pdf.stem] = [normalize_ws(page.get_text()) for page in doc]
    return out


@pytest.fixture(scope="module")
def rows(corpus) -> list[dict]:
    return [json.loads(line) for line in corpus.questions_path.read_text(encoding="utf-8").splitlines()]


def test_writes_expected_files(corpus):
    names = {p.relative_to(corpus.root).as_posix() for p in corpus.pdfs}
    assert names == {
        "docs/insurance_policy.pdf", "docs/services_contract.pdf", "docs/services_contract_amendment.pdf",
        "docs/employee_handbook.pdf", "docs/vendor_note.pdf",
    }
    assert corpus.questions_path == corpus.root / "questions.jsonl"


def test_generation_is_byte_identical(corpus, tmp_path):
    again = generate_sample_corpus(tmp_path / "again")
    for first, second in zip(corpus.pdfs + [corpus.questions_path], again.pdfs + [again.questions_path]):
        assert _sha(first) == _sha(second), f"{first.name} differs between two runs"


def test_page_counts_and_fixed_metadata(corpus):
    expected = {"insurance_policy": (6, 8), "services_contract": (3, 6), "services_contract_amendment": (1, 2),
                "employee_handbook": (15, 20), "vendor_note": (1, 2)}
    for pdf in corpus.pdfs:
        with pymupdf.open(pdf) as doc:
            low, high = expected[pdf.stem]
            assert low <= doc.page_count <= high, (pdf.stem, doc.page_count)
            assert doc.metadata["creationDate"] == doc.metadata["modDate"] == "D:20240916090000Z"


def test_outline_only_on_the_insurance_policy(corpus, page_texts):
    for pdf in corpus.pdfs:
        with pymupdf.open(pdf) as doc:
            toc = doc.get_toc()
        if pdf.stem != "insurance_policy":
            assert toc == [], f"{pdf.stem} must have no outline"
            continue
        assert {level for level, _, _ in toc} == {1, 2}
        titles = [title for _, title, _ in toc]
        for wanted in ("2. Definitions", "3. Coverage", "3.1 Dwelling (Coverage A)", "3.3 Personal Property (Coverage C)",
                       "4. Exclusions", "5. Premium and Payment", "6. Claims", "7. Cancellation and Nonrenewal"):
            assert wanted in titles
        for _, title, page in toc:  # each entry points at the page that prints its heading
            assert title in page_texts[pdf.stem][page - 1]


def test_handbook_has_running_header_footer_and_font_headings(corpus):
    with pymupdf.open(corpus.root / "docs" / "employee_handbook.pdf") as doc:
        n = doc.page_count
        headings = body = 0
        for i, page in enumerate(doc):
            text = page.get_text()
            assert HANDBOOK_HEADER in text and f"Page {i + 1} of {n}" in text
            for block in page.get_text("dict")["blocks"]:
                for line in block.get("lines", []):
                    for span in line["spans"]:
                        is_bold = bool(span["flags"] & pymupdf.TEXT_FONT_BOLD)
                        if re.match(r"^\d+(\.\d+)? [A-Z]", span["text"]) and is_bold:
                            headings += 1
                            assert span["size"] > EMPLOYEE_HANDBOOK.body_size
                        elif span["size"] == EMPLOYEE_HANDBOOK.body_size:
                            body += 1
                            assert not is_bold, span["text"]
    assert headings >= 40 and body > 200


def test_question_rows_follow_the_shared_format(corpus, rows):
    assert 20 <= len(rows) <= 32
    assert len({r["qid"] for r in rows}) == len(rows)
    for r in rows:
        assert list(r) == ROW_KEYS
        assert r["dataset"] == DATASET and r["gold_source"] == "generated"
        assert r["labels"]["kind"] in KINDS and r["labels"]["answer_format"] in FORMATS
        docs = [r["doc"]] if isinstance(r["doc"], str) else r["doc"]
        assert all((corpus.root / d).is_file() for d in docs)
        QuestionRecord.model_validate(r)
    kinds = [r["labels"]["kind"] for r in rows]
    assert kinds.count("unanswerable") >= 4
    assert {"single", "list", "comparison", "multi_doc"} <= set(kinds)


def test_gold_pages_are_the_pages_that_print_the_evidence(rows, page_texts):
    specs = {q.qid: q for q in QUESTIONS}
    for r in rows:
        q = specs[r["qid"]]
        if q.kind == "unanswerable":
            assert r["gold_pages_0based"] == [] and r["answer"] == "Not answerable"
            continue
        if len(q.docs) > 1:
            assert r["gold_pages_0based"] is None
        found: set[int] = set()
        for doc, text in q.evidence:
            pages = {i for i, page in enumerate(page_texts[doc]) if normalize_ws(text) in page}
            assert pages, f"{q.qid}: {text!r} is printed nowhere in {doc}"
            found |= pages
        if len(q.docs) == 1:
            assert r["gold_pages_0based"] == sorted(found), q.qid
            assert all(0 <= p < len(page_texts[q.docs[0]]) for p in r["gold_pages_0based"])


def test_unanswerable_questions_have_no_answer_in_their_documents(page_texts):
    for q in QUESTIONS:
        if q.kind != "unanswerable":
            continue
        assert q.absent, f"{q.qid} needs absent words to prove it is unanswerable"
        for doc in q.docs:
            text = " ".join(page_texts[doc])
            for word in q.absent:
                assert not re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE), (q.qid, doc, word)


def test_amendment_contradicts_the_contract_fee(page_texts):
    def fees(doc):
        return set(re.findall(r"monthly fee of (\$\d{1,3}(?:,\d{3})*)", " ".join(page_texts[doc])))

    assert fees("services_contract") == {"$12,500"}
    assert fees("services_contract_amendment") == {"$14,000"}


def test_vendor_note_carries_the_injection_line(page_texts):
    assert any(INJECTION_LINE in page for page in page_texts["vendor_note"])
    assert not any(INJECTION_LINE in page for doc, pages in page_texts.items() if doc != "vendor_note" for page in pages)


def test_bad_files_have_the_expected_defects(tmp_path):
    bad = write_bad_files(tmp_path / "bad")
    assert set(bad) == {"corrupt", "encrypted", "empty", "image_only", "not_a_pdf"}
    assert bad["corrupt"].read_bytes().startswith(b"%PDF-")
    with pytest.raises(pymupdf.FileDataError):
        pymupdf.open(bad["corrupt"])
    with pytest.raises(pymupdf.FileDataError):
        pymupdf.open(bad["not_a_pdf"])
    assert bad["empty"].stat().st_size == 0
    with pytest.raises(pymupdf.EmptyFileError):
        pymupdf.open(bad["empty"])
    with pymupdf.open(bad["encrypted"]) as doc:
        assert doc.needs_pass and not doc.is_repaired  # a well-formed file, not one MuPDF had to patch up
        assert not doc.authenticate("wrong password")
        assert doc.authenticate(ENCRYPTED_USER_PASSWORD)
        assert "Confidential renewal terms" in doc[0].get_text()
    with pymupdf.open(bad["image_only"]) as doc:
        assert doc.page_count == 1 and doc[0].get_text().strip() == ""
        assert len(doc[0].get_images()) == 1


def test_bad_files_are_byte_identical(tmp_path):
    first, second = write_bad_files(tmp_path / "a"), write_bad_files(tmp_path / "b")
    assert {k: _sha(p) for k, p in first.items()} == {k: _sha(p) for k, p in second.items()}


def test_cli_writes_corpus_and_bad_files(tmp_path, capsys):
    assert main([str(tmp_path / "out"), "--bad"]) == 0
    assert (tmp_path / "out" / "questions.jsonl").is_file()
    assert (tmp_path / "out" / "bad" / "encrypted.pdf").is_file()
    assert "vendor_note.pdf" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("Caf\u00e9 au lait.", "ASCII"),
        ("**Lead**, then text.", "followed by a space"),
        ("Text with **bold** inside.", "only allowed as a lead"),
        (" ".join(["word"] * 3000), "taller than a page"),
    ],
)
def test_layout_rejects_bad_markup(body, message):
    spec = dataclasses.replace(DOCUMENTS[-1], body=body)
    with pytest.raises(ValueError, match=message):
        layout(spec)
