"""The HTML run report: sections and figures parsed from the file, and a headless-Chromium render when installed."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from schemas.contracts import (
    Contradiction,
    ParsedQuestion,
    RetrievalResult,
    RetrievedPassage,
)
from schemas.settings import GenerateSettings, LLMSettings
from tasks.generate.extractive import ExtractiveProvider
from tasks.llm.base import TerminalLLMError
from tasks.llm.client import LLMClient
from tasks.report.html import nice_ticks, scatter_chart, section, write_report
from tests.walks import answer_question, store_retrieval
from warehouse.prices import load_prices
from warehouse.runs import record_error, start_run

DOC = "e" * 64
FILLER = [f"Unrelated note {i} about office furniture and the weather in the region." for i in range(4)]
QUESTIONS = [
    ("q1", "What was the total revenue in 2023?", "amount", "single", ["total revenue", "2023"],
     [["Total revenue in 2023 reached $4.2 million.", *FILLER], ["Revenue by segment: retail 2.1 million", *FILLER]]),
    ("q2", "When does the policy take effect?", "date", "single", ["policy", "effect"],
     [["This policy takes effect from January 1, 2026.", *FILLER], ["Policy history: first issued 2019.", *FILLER]]),
    ("q3", "What are the uses of the satellite constellation?", "list", "single", ["uses", "satellite constellation"],
     [["Uses of the satellite constellation:", "• Drought monitoring", "• Forest fire", *FILLER],
      ["Satellite constellation uses include flood mapping and fisheries.", *FILLER]]),
    ("q4", "How many employees work at the plant?", "amount", "single", ["employees", "plant"],
     [["The plant was renovated last spring.", *FILLER], ["The plant has a cafeteria.", *FILLER]]),
]


class Sections(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.svgs, self.tags, self.text = [], 0, set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "section":
            self.ids.append(dict(attrs).get("id"))
        self.svgs += tag == "svg"

    def handle_data(self, data):
        self.text.append(data)


def passage(qid: str, i: int, lines: list[str]) -> RetrievedPassage:
    start = 100 * int(qid[1:]) + 20 * i
    return RetrievedPassage(candidate_id=f"{DOC[:8]}:{i}:l{start}-{start + len(lines) - 1}", doc_id=DOC, page=i,
                            line_start=start, line_end=start + len(lines) - 1, section="", text="\n".join(lines),
                            role="primary", decision="keep", reason="r", relevance=0.9 - 0.3 * i, anchor_found=True)


@pytest.fixture
def report_run(wh):
    load_prices(wh)
    run_id = start_run(wh, "answer", {"regime": "both", "generator": "extractive"})
    client = LLMClient(ExtractiveProvider(), wh, run_id, LLMSettings())
    for qid, text, shape, decomposition, kws, texts in QUESTIONS:
        question = ParsedQuestion(question_id=qid, text=text, keywords_primary=kws, keywords_secondary=[],
                                  answer_shape=shape, decomposition=decomposition, intent="t", parser="test")
        passages = [passage(qid, i, lines) for i, lines in enumerate(texts)]
        contradictions = [Contradiction(candidate_ids=[passages[0].candidate_id, passages[1].candidate_id],
                                        note="p.1 and p.2 state different values")] if qid == "q1" else []
        result = RetrievalResult(question_id=qid, status="found", primary=passages, contradictions=contradictions,
                                 rule="primary", arbiter_provider="rules", arbiter_model="rules")
        answer_question(wh, run_id, question, result, client, GenerateSettings(), "both")
    nf = RetrievalResult(question_id="q5", status="not_found", rule="no_primary", not_found_reason="no candidate "
                         "names the warranty", arbiter_provider="rules", arbiter_model="rules")
    q5 = ParsedQuestion(question_id="q5", text="What is the warranty period?", keywords_primary=["warranty"],
                        keywords_secondary=[], answer_shape="date", decomposition="single", intent="t", parser="t")
    answer_question(wh, run_id, q5, nf, client, GenerateSettings(), "both")
    q6 = ParsedQuestion(question_id="q6", text="Who audits the accounts?", keywords_primary=["audit"],
                        keywords_secondary=[], answer_shape="entity", decomposition="single", intent="t", parser="t")
    store_retrieval(wh, run_id, q6, None, "LLMCallFailed: arbiter timed out")
    record_error(wh, run_id, "arbiter", "q6", "LLMCallFailed: arbiter timed out\ntraceback...")

    class Failing:
        name, model, offline = "broken", "broken-1", True

        def send(self, request):
            raise TerminalLLMError("HTTP 400: context length exceeded")

    q7 = ParsedQuestion(question_id="q7", text="What is the fee?", keywords_primary=["fee"], keywords_secondary=[],
                        answer_shape="amount", decomposition="single", intent="t", parser="t")
    r7 = RetrievalResult(question_id="q7", status="found", primary=[passage("q7", 0, ["The fee is $5."])],
                         rule="primary", arbiter_provider="rules", arbiter_model="rules")
    answer_question(wh, run_id, q7, r7, LLMClient(Failing(), wh, run_id, LLMSettings()), GenerateSettings(), "batch")
    return run_id


def test_report_sections_and_figures(wh, report_run, tmp_path):
    extra = section("Side by side", "<table><tr><td>harness-table</td></tr></table>", "side-by-side")
    path = write_report(wh, report_run, tmp_path, extra_sections=[extra])
    html = path.read_text(encoding="utf-8")
    parsed = Sections()
    parsed.feed(html)
    assert parsed.ids == ["regimes", "tokens", "savings", "exits", "routing", "not-found", "failures",
                          "contradictions", "evaluation", "side-by-side"]
    assert parsed.svgs == 3 and "script" not in parsed.tags
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in html
    text = " ".join(parsed.text)
    batch_in = wh.scalar("SELECT sum(input_tokens) FROM answers WHERE run_id = ? AND regime = 'batch'", [report_run])
    assert f"{batch_in:,}" in text
    ratio = wh.scalar("SELECT seq_batch_input_ratio FROM regime_summary WHERE run_id = ? AND answer_shape = '(all)'",
                      [report_run])
    assert f"{ratio:.2f}" in text
    assert "shape:amount → sequential" in text and "shape:list → batch" in text
    assert "not_found → sequential" in text
    assert "no candidate names the warranty" in text          # not-found table
    assert "arbiter timed out" in text and "context length exceeded" in text  # failures: errors + failed answer
    assert "p.1 and p.2 state different values" in text       # contradictions from retrieval_results JSON
    assert "harness-table" in text
    assert "traceback" not in text                            # only the first line of a recorded error


def test_report_without_paired_answers_says_how_to_compare(wh, tmp_path):
    run_id = start_run(wh, "answer", {})
    html = write_report(wh, run_id, tmp_path).read_text(encoding="utf-8")
    assert "--regime both" in html and "no failures" in html


def test_report_unknown_run(wh, tmp_path):
    with pytest.raises(LookupError, match="runs list"):
        write_report(wh, "nope", tmp_path)


def test_scatter_and_ticks():
    svg = scatter_chart([("q1", 1000, 400), ("q2", 800, 1200), ("q3", 0, 0)])
    assert svg.count("<circle") == 3 and "stroke-dasharray" in svg
    assert "q1: batch 1,000, sequential 400" in svg
    assert nice_ticks(0, 1234) == [0, 500, 1000, 1500]
    assert nice_ticks(-0.55, 0.22) == [-0.6, -0.4, -0.2, 0, 0.2, 0.4]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium(wh, report_run, tmp_path):
    path = write_report(wh, report_run, tmp_path)
    shot = tmp_path / "report.png"
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
         f"--screenshot={shot}", "--window-size=1280,2000", path.resolve().as_uri()],
        capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a blank page compresses to a few KB
