"""The reader's page furniture: a running header or footer (a line printed again on other pages but for its page
number) and a copyright notice are not statements of their passage, so a date in them is not the answer to a
question about the passage; a question about the document's own edition still reads them (hand-made passages)."""

from __future__ import annotations

from tasks.generate.prompts import GenerationPassage, PassageLine
from tasks.generate.sentences import PLine, furniture_lines
from tests.test_reader_examples import answer, q

DOC = "d" * 64
FOOTER = "Issue 01 (2020-09-07) Copyright © Example Technologies Co., Ltd. {}"


def page(n: int, lines: list[str], start: int) -> GenerationPassage:
    lines = lines + [FOOTER.format(n + 1)]
    return GenerationPassage(candidate_id=f"c{n}", doc_id=DOC, page=n, line_start=start,
                             line_end=start + len(lines) - 1, section="5.5 Setting watch faces",
                             lines=[PassageLine(line_no=start + i, page=n, text=t) for i, t in enumerate(lines)])


def test_a_running_footer_and_a_copyright_notice_are_furniture():
    lines = [PLine(0, {}, i, p, t) for i, (p, t) in enumerate([
        (3, "Annual Report 2023 | Example Corp | 4"), (7, "Annual Report 2023 | Example Corp | 8"),
        (3, "Revenue was $4.2 million in 2023."), (7, "Revenue was $4.2 million in 2023."),  # repeated, not running
        (3, "Three Months Ended 2022"), (5, "Three Months Ended 2023"),  # a table's header: a year is no page number
        (3, "14"), (7, "15"),  # page numbers alone are no header
        (9, "© 2021 Example Corp. All rights reserved.")])]
    assert {lines.index(ln) for ln in lines if id(ln) in furniture_lines(lines)} == {0, 1, 8}


def test_a_date_in_the_footer_is_not_the_answer():
    passages = [page(33, ["5.5 Setting watch faces", "Open the app and touch Devices, then Watch faces."], 1230),
                page(9, ["Touch and hold the home screen to set the watch face."], 415)]
    question = q("What is the time on the gallery screenshot when setting watch faces?", "date",
                 ["time", "gallery screenshot", "setting", "watch faces"])
    for regime, shown in (("batch", passages), ("sequential", passages[:1])):
        a = answer(question, shown, regime)
        assert (a.value, a.answer_found) == (None, False), regime


def test_a_question_about_the_edition_reads_the_footer():
    question = q("What is the issue date of the copyright notice?", "date", ["issue date", "copyright"])
    a = answer(question, [page(33, ["Open the app and touch Devices."], 1230)])
    assert a.value == "2020-09-07" and a.answer_found
