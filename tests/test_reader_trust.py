"""The extractive reader answers what it can support and abstains otherwise (issue #15, third pass): deadlines vs
lengths, the only deadline in the passages, announced lists, counted steps, rankings, counts that are not counts,
the years and codes a question scopes a number to, identifiers written with digits, one side of a comparison, the
page a question points at; and the arbiter's and dispatcher's reading of numbers (hand-made passages only)."""

from __future__ import annotations

from schemas.contracts import AnswerWithEvidence, CandidateBrief, ParsedQuestion, RetrievalResult, RetrievedPassage
from tasks.arbiter import evidence as ev
from tasks.arbiter.rules import arbitrate
from tasks.generate.extractive import ExtractiveProvider
from tasks.generate.prompts import GenerationPassage, PassageLine, build_generation_request
from tasks.generate.run import reading_order
from tasks.generate.sentences import stem
from tasks.questions.asked import asked_class, asks_ranking

DOC = "d" * 64


def q(text: str, shape: str, primary: list[str], decomposition: str = "single") -> ParsedQuestion:
    return ParsedQuestion(question_id="q1", text=text, keywords_primary=primary, keywords_secondary=[],
                          answer_shape=shape, decomposition=decomposition, intent="t", parser="test")


def passage(cid: str, page: int, lines: list[str], section: str = "", start: int = 10) -> GenerationPassage:
    return GenerationPassage(candidate_id=cid, doc_id=DOC, page=page, line_start=start,
                             line_end=start + len(lines) - 1, section=section,
                             lines=[PassageLine(line_no=start + i, page=page, text=t) for i, t in enumerate(lines)])


def answer(question: ParsedQuestion, passages: list[GenerationPassage]) -> AnswerWithEvidence:
    request = build_generation_request(question, passages, "batch", step=1, total=len(passages))
    return AnswerWithEvidence.model_validate_json(ExtractiveProvider().send(request).text)


TERM = passage("t", 1, [
    "4.1 Term. This Agreement begins on the Effective Date and continues for an initial term of twenty-four",
    "(24) months, unless terminated earlier under this Article.",
    "4.2 Renewal. After the initial term, this Agreement renews automatically for successive periods of twelve",
    "(12) months unless either Party gives written notice of non-renewal at least sixty (60) days before the end",
    "of the then-current term.",
    "4.3 Termination for Convenience. Either Party may terminate this Agreement, or any SOW, for any",
    "reason by giving the other Party at least ninety (90) days' prior written notice."])


def test_a_length_question_gets_the_length_not_the_deadline():
    a = answer(q("How long is the initial term, and how long is each renewal?", "amount",
                 ["initial term", "term", "renewal"], "multi_part"), [TERM])
    assert a.value == "24 months; 12 months"


def test_a_notice_question_gets_the_notice_the_asked_noun_follows():
    a = answer(q("How much notice is needed to end the agreement without cause?", "amount",
                 ["notice", "end", "agreement", "cause"]), [TERM])
    assert a.value == "at least 90 days' prior written notice"


def test_doubled_consonant_inflections_match_their_canonical_word():
    assert stem("cancelling") == stem("cancel") == stem("cancelled") == stem("cancellation")
    assert stem("filled") == "fill"  # no canonical form: left alone


def test_the_only_deadline_in_the_passages_is_shown_but_not_complete():
    claims = passage("c", 5, [
        "In case of a loss to covered property, you must give us prompt notice, and in any event no later than",
        "60 days after the date of the loss. Notice may be given to us directly or to the agent who sold you",
        "this policy."])
    a = answer(q("How long do we have to tell the insurer about damage to the house?", "amount",
                 ["insurer", "damage", "house"]), [claims])
    assert (a.value, a.answer_found, a.complete_answer_found) == ("60 days after the date", True, False)
    assert "only time limit" in a.caveats[0]


HOLIDAYS = passage("h", 7, [
    "6.2 Public Holidays",
    "The company observes the following paid holidays each year. When a holiday falls on a",
    "Saturday it is observed on the Friday before.",
    "New Year's Day", "Memorial Day", "Independence Day", "Labor Day",
    "Employees who are scheduled to work on a public holiday are paid at one and a half times their rate.",
    "Northwind Logistics | Employee Handbook"], section="6. Time Off > 6.2 Public Holidays")


def test_an_announced_list_under_a_heading_takes_the_passage_as_its_context():
    a = answer(q("Which public holidays does Northwind give employees off?", "entity",
                 ["public holidays", "holidays", "northwind", "employees"]), [HOLIDAYS])
    assert a.value == "New Year's Day; Memorial Day; Independence Day; Labor Day"


def test_numbered_steps_under_the_task_are_counted():
    grille = passage("g", 16, ["Removing the base grille", "To remove the grille:", "1. Open both doors.",
                               "2. Pull base grille forward.", "To replace the grille:",
                               "1. Line up grille support tabs with metal", "clips.", "2. Push firmly to snap into place.",
                               "3. Close the doors."])
    a = answer(q("How many steps are required to replace the grille?", "amount",
                 ["steps", "required", "replace", "grille"]), [grille])
    assert (a.value, a.answer_found) == ("3", True)
    assert a.evidence[0].quote.startswith("To replace the grille:")


def test_a_ranking_is_answered_only_where_the_text_states_it():
    assert asks_ranking("Which program has the longest time period?") == "longest"
    assert asks_ranking("How much warning must they give at least?") is None
    table = passage("p", 3, ["Leaders in Education Programme 6 months",
                             "Management and Leadership in Schools Programme 17 weeks"])
    a = answer(q("Which program has the longest time period among the leadership programmes?", "entity",
                 ["program", "longest", "time period", "leadership programmes"]), [table])
    assert not a.answer_found
    stated = passage("s", 3, ["The GPT-4 model performs the best on commonsensical data."])
    a = answer(q("Which model performs the best on commonsensical data?", "entity",
                 ["model", "performs", "commonsensical data"]), [stated])
    assert a.value == "GPT-4"


def test_what_is_not_a_count():
    cases = {"3": "How many items are included in the package?",  # a number alone on its line
             "We select 1-5 examples from the training set.": "How many examples are selected from the training set?",
             "We use 50- and 100-shot datasets.": "How many datasets are used?"}
    for line, text in cases.items():
        p = passage("n", 2, ["Package contents", line] if line == "3" else [line])
        a = answer(q(text, "amount", [w for w in text.lower().strip("?").split()[2:]]), [p])
        assert not a.answer_found, (line, a.value)


def test_a_leading_clause_does_not_make_a_count_a_date():
    assert asked_class({"text": "When using GPT-4 as the base model, how many datasets does it win?",
                        "answer_shape": "amount"}).cls == "count"
    assert asked_class({"text": "When was the agreement signed?", "answer_shape": "date"}).cls == "date"


def test_a_number_scoped_to_a_year_or_a_code_needs_a_passage_that_names_it():
    prose = passage("y", 4, ["The hotel chain together earned Rs. 2444 crores in dividends over the decade."])
    a = answer(q("What is the total dividend of the hotel chain between 1999 to 2000?", "amount",
                 ["dividend", "hotel chain", "1999", "2000"]), [prose])
    assert not a.answer_found and "1999" in a.caveats[0]
    gains = passage("g", 8, ["The performance of the filter-then-rerank methods is 2.1% higher on the average dataset."])
    a = answer(q("What is the performance of filter-then-rerank methods on the TACREV dataset?", "amount",
                 ["performance", "filter-then-rerank", "methods", "tacrev", "dataset"]), [gains])
    assert not a.answer_found and "TACREV" in a.caveats[0]


def test_an_identifier_question_is_not_answered_with_a_name():
    p = passage("i", 1, ["The Care Quality Commission inspects the operation of the Deprivation of Liberty Safeguards."])
    a = answer(q("What is the telephone no for the Care Quality Commission?", "text",
                 ["telephone", "care quality commission"]), [p])
    assert not a.answer_found


def test_the_page_a_question_points_at_is_the_only_page_read():
    first = passage("a", 0, ["Report issued in July 2009 by the county office."])
    second = passage("b", 1, ["In 2002, the county office moved to a new building."])
    a = answer(q("What date is mentioned on the second page of the county report?", "date",
                 ["date", "county", "office"]), [first, second])
    assert a.value == "2002"  # page 1 (0-based) is the second page; July 2009 is on the first


def brief(cid: str, snippet: str, methods: tuple[str, ...], rrf: float) -> CandidateBrief:
    page = int(cid.split(":")[1])
    return CandidateBrief(question_id="q", candidate_id=cid, doc_id="a" * 64, page=page, line_start=page * 10,
                          line_end=page * 10 + 3, section="", methods=list(methods),
                          ranks={m: 1 for m in methods}, raw_scores={m: 1.0 for m in methods},
                          matched_keywords=["damage"], snippet=snippet, rrf_score=rrf)


def test_weak_evidence_on_a_how_long_question_prefers_the_passage_stating_a_duration():
    question = q("How long do we have to tell the insurer about damage to the house?", "amount",
                 ["insurer", "damage", "house"])
    liability = brief("a:2:l20-23", "We pay damages up to $300,000 for each occurrence.", ("keywords", "embeddings"),
                      0.0323)
    claims = brief("a:5:l50-53", "Give us notice no later than 60 days after the loss and describe the damage.",
                   ("keywords", "embeddings"), 0.0318)
    out = arbitrate(question, [liability, claims])
    roles = {v.candidate_id: v.role for v in out.verdicts}
    assert roles["a:5:l50-53"] == "primary" and roles["a:2:l20-23"] != "primary"


def test_arbiter_amounts_skip_the_day_of_a_date_and_page_counts():
    assert ev.amounts("This Agreement is dated as of March 1, 2024 between the Parties") == []
    assert ev.amounts("Master Services Agreement - Confidential Page 4 of 4") == []
    assert ev.amounts("a fixed monthly fee of $14,000, invoiced in advance") == ["$14000"]


def test_sequential_reads_value_bearing_primaries_first():
    def rp(cid: str, role: str, anchor: bool) -> RetrievedPassage:
        return RetrievedPassage(candidate_id=cid, doc_id=DOC, page=0, line_start=0, line_end=1, section="",
                                text="x", role=role, decision="keep", reason="r", relevance=0.8, anchor_found=anchor,
                                rrf_score=0.0, methods=["keywords"], matched_keywords=[])
    result = RetrievalResult(question_id="q", status="found", primary=[rp("title", "primary", False),
                                                                         rp("fees", "primary", True)],
                             supporting=[rp("other", "supporting", True)], rule="r", arbiter_provider="rules",
                             arbiter_model="rules-v1")
    shown = [passage(c, 0, ["x"]).model_copy(update={"candidate_id": c, "role": r})
             for c, r in (("title", "primary"), ("fees", "primary"), ("other", "supporting"))]
    assert [p.candidate_id for p in reading_order(shown, result)] == ["fees", "title", "other"]
