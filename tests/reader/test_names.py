"""Names and free text (rules ``name.<kind>``, ``text.<kind>``, ``abstain.no_role``): a name asked by its role
(a caption, a signature block, an apposition, a title, a defined term), a label's value, the row a quoted term or
a code keys, an acronym's expansion, an identifier, an e-mail address; on hand-made passages."""

from __future__ import annotations

import pytest

from schemas.contracts import AnswerWithEvidence
from tasks.generate import values as V
from tasks.generate.normalise import answer_matches
from tasks.generate.roles import asked_role
from tasks.questions.asked import asks_ranking
from tests.reader.kit import answer, numbered, passage, passage_at, q


def test_email_address_for_a_contact_question():
    p = numbered("c1", 7, [(70, "Mtre Laurent Nahmiash, Partner"), (71, "Email: lnahmiash@infavocats.com")])
    a = answer(q("What is the email of Mtre Laurent Nahmiash?", "entity", ["email", "laurent nahmiash"]), [p])
    assert a.value == "lnahmiash@infavocats.com"


def test_acronym_expansion():
    p = numbered("c1", 3, [(30, "Gadanki hosts the National Atmospheric Research Laboratory (NARL)."),
                          (31, "It studies the atmosphere.")])
    a = answer(q("What does NARL stand for?", "text", ["NARL"]), [p])
    assert a.value == "National Atmospheric Research Laboratory" and a.complete_answer_found


def test_label_value_identifier():
    p = numbered("c1", 0, [(1, "The Limes Residential Home"), (2, "Telephone: 01983 873655"),
                          (3, "Date of inspection: 4 May 2016")])
    a = answer(q("What is the telephone number of The Limes Residential Home?", "entity",
                 ["telephone", "limes", "residential home"]), [p])
    assert a.value == "01983 873655"


GOVERNING = passage("c3", 3, [
    "ARTICLE VIII - GOVERNING LAW AND DISPUTES",
    "8.1 Governing Law. This Agreement is governed by the laws of the State of Delaware, without regard to",
    "its conflict of laws rules."], start=93)


def test_which_state_law_is_the_state_not_the_heading():
    a = answer(q("Which state's law governs the services agreement?", "entity",
                 ["law", "governs", "services agreement", "agreement"]), [GOVERNING])
    assert a.value == "State of Delaware" and answer_matches(a.value, "Delaware", "entity")


TEMPLATES = passage("p1", 28, [
    "Table 21: Templates for the event labels.",
    "Event Template",
    "Transaction.Transfer The word {evt} triggers a TRANSFER event: an owner gives an",
    "artifact to another owner.",
    "Contact.Phone The word {evt} triggers a PHONE event: two or more parties talk by",
    "telephone or by radio.",
    "Life.Die The word {evt} triggers a DIE event: a person dies."], start=40)


def test_the_row_a_quoted_term_keys_with_its_continued_sentence():
    a = answer(q("Tell me the template used for label 'Contact.Phone' in this work.", "text",
                 ["template", "Contact.Phone"]), [TEMPLATES])
    assert a.answer_found
    assert a.value == "The word {evt} triggers a PHONE event: two or more parties talk by telephone or by radio."


def test_a_row_ended_by_its_sentence_takes_no_following_row():
    a = answer(q('Which template does the label "Life.Die" use?', "text", ["template", "Life.Die"]), [TEMPLATES])
    assert a.value == "The word {evt} triggers a DIE event: a person dies."


def test_a_quoted_term_no_line_opens_with_is_no_row():
    # the term stands inside a line, not at its start: nothing keys it
    a = answer(q("Tell me the template used for label 'PHONE event' in this work.", "text",
                 ["template", "PHONE event"]), [TEMPLATES])
    assert "telephone" not in (a.value or "")


CAPTION = passage("p1", 0, [
    "No. 24-10071", "ALICE FERNHOLT,", "an individual,", "RIVERBEND TENANTS UNION, INC.,", "a Vermont nonprofit corporation,",
    "Plaintiffs-Appellants-", "Cross Appellees,", "versus", "COUNTY OF ORLEN,", "a political subdivision,", "Defendant-Appellee."])


def test_the_company_of_a_caption_block_is_the_name_with_a_legal_form():
    a = answer(q("What company is a plaintiff?", "entity", ["company", "plaintiff"]), [CAPTION])
    assert (a.answer_found, a.value) == (True, "RIVERBEND TENANTS UNION, INC.")


def test_the_names_of_a_caption_block_take_the_role_line_under_them():
    a = answer(q("Who is the plaintiff?", "entity", ["plaintiff"]), [CAPTION])
    assert (a.value, a.caveats) == ("ALICE FERNHOLT; RIVERBEND TENANTS UNION, INC.", [])
    a = answer(q("Who is the defendant of this case?", "entity", ["defendant", "case"]),
               [passage("p1", 0, CAPTION.lines and [ln.text for ln in CAPTION.lines] + ["Case summary"])])
    assert a.value == "COUNTY OF ORLEN"


def test_a_name_beside_the_roles_word_in_prose_is_not_the_role():
    a = answer(q("Who is the defendant of this case?", "entity", ["defendant", "case"]),
               [passage("p1", 4, ["Walton represented Hanson and the other individual defendants in the Federal",
                                  "Case. Hanson testified about the ordinance."])])
    assert not a.answer_found


def test_counsel_for_a_party_is_not_the_party():
    a = answer(q("Who is the defendant?", "entity", ["defendant"]),
               [passage("p1", 9, ["Respectfully submitted,", "MARIA OSTROWSKI", "Counsel for Defendants"])])
    assert not a.answer_found
    a = answer(q("Who is the counsel for the defendants?", "entity", ["counsel", "defendants"]),
               [passage("p1", 9, ["Respectfully submitted,", "MARIA OSTROWSKI", "Counsel for Defendants"])])
    assert a.value == "MARIA OSTROWSKI"


def test_a_signature_block_role_and_the_questions_scope():
    cover = passage("p1", 0, ["Annual Plan 2016-2018", "Dana Whitfield", "GOVERNOR", "Page 1"])
    a = answer(q("What is the name of the governor as mentioned on the first page?", "entity", ["governor"]), [cover])
    assert a.value == "Dana Whitfield"
    # "on the last page" cannot be checked against a passage: 'last' is a term no passage names
    a = answer(q("What is the name of the governor as mentioned on the last page?", "entity", ["governor", "last"]),
               [cover])
    assert not a.answer_found


def test_a_defined_term_names_the_party_of_an_agreement():
    a = answer(q("Who is the client?", "entity", ["client"]), [passage("p1", 0, [
        'This Agreement is made between Harlow Freight, LLC, a Texas limited liability company ("Client"), and',
        'Nimbus Data Co. (the "Provider").'])])
    assert a.value == "Harlow Freight, LLC"


def test_a_title_before_the_name():
    a = answer(q("Who is the special agent?", "entity", ["special agent"]),
               [passage("p1", 12, ["I, Special Agent Dana Morrow, being duly sworn, state:"])])
    assert a.value == "Dana Morrow"


@pytest.mark.parametrize("text,role", [
    ("Who is the defendant of this case?", ["defendant"]), ("What company is a plaintiff?", ["plaintiff"]),
    ("What is the name of the governor?", ["governor"]), ("Who produced the report?", None),
    ("What is the name of the company that audits the fund?", None),
    ("What is the name of the branch that has the least leaves?", None), ("Who is the plaintiff's attorney?",
                                                                      ["plaintiff", "attorney"])])
def test_the_role_a_question_asks_a_name_by(text, role):
    got = asked_role(text)
    assert (got.words if got else None) == role


def test_a_legal_form_is_part_of_a_name_and_an_acronym_expands_within_one_phrase():
    assert [v.text for v in V.find_entities("signed by Acme Holdings, Inc. on behalf of", set())
            if v.kind == "name"] == ["Acme Holdings, Inc."]
    assert V.expand_acronym("The test is, according to PIC, if the conduct would", "PIC") is None
    assert V.expand_acronym("the Public Integrity Commission (PIC) found", "PIC").text == "Public Integrity Commission"


@pytest.mark.parametrize("line,name", [
    ("Mr. Rohan Mehta is the Chairman of the Board and a partner of a law firm.", "Mr. Rohan Mehta"),
    ("The auditor of the fund, Keller Brandt LLP, reviewed the accounts.", "Keller Brandt LLP"),
    ("The plaintiff is Harlow Freight, LLC, a shipping firm.", "Harlow Freight, LLC"),
])
def test_a_copula_or_an_article_states_the_role(line, name):
    role = {"Mr. Rohan Mehta": "chairman", "Keller Brandt LLP": "auditor", "Harlow Freight, LLC": "plaintiff"}[name]
    a = answer(q(f"Who is the {role}?", "entity", [role]), [passage("p1", 3, [line])])
    assert (a.answer_found, a.value) == (True, name)


def test_a_role_a_sentence_gives_another_name_is_not_the_asked_one():
    a = answer(q("Who is the chairman?", "entity", ["chairman"]),
               [passage("p1", 3, ["Mr. Rohan Mehta, who is the Secretary of the Chairman's office, spoke first."])])
    assert not a.answer_found


@pytest.mark.parametrize("label,role,ok", [
    ("Plaintiffs-Appellees-", "plaintiff", True), ("Individual Defendants", "defendant", False),
    ("Counsel for Defendants", "defendant", False), ("Attorney for Plaintiff", "plaintiff's attorney", True),
    ("Chairman of the Board", "chairman", True), ("Health Program Lead", "lead", False),
    ("Title: Chief Executive Officer", "chief executive officer", True)])
def test_a_role_label_names_the_role_unqualified(label, role, ok):
    from tasks.generate.roles import names_role
    assert names_role(asked_role(f"Who is the {role}?"), label) is ok


def test_a_group_defined_collectively_is_not_its_last_name():
    a = answer(q("Who is the defendant?", "entity", ["defendant"]), [passage("p1", 1, [
        "Mayor Dell Tush, David King, and Richard Hanewinckel (collectively, the \u201cDefendants\u201d) moved."])])
    assert a.value != "Richard Hanewinckel"


def test_a_name_wrapped_at_a_line_break_is_read_whole():
    a = answer(q("Which court heard the federal claims?", "entity", ["court", "federal claims"]), [passage("p1", 2, [
        "The town and its officers answered the federal claims before the United States District",
        "Court for the District of Delaware in July."])])
    assert a.value == "United States District Court for the District of Delaware"
    assert "Court for the District" in a.evidence[0].quote


def test_a_line_of_capitals_ends_its_name():
    a = answer(q("What type of court is noted on the cover page?", "entity", ["type", "court"]),
               [passage("p1", 0, ["C A N A D A", "SUPERIOR COURT", "(Class Action)", "PROVINCE OF ONTARIO"])])
    assert a.value == "SUPERIOR COURT"


def test_a_month_after_a_name_and_a_full_stop_are_not_the_names():
    assert [v.text for v in V.find_entities("It was heard by the District Court in July.", set())
            if v.kind == "name"] == ["District Court"]
    assert [v.text for v in V.find_entities("Walton represented the town in the Federal Case.", set())
            if v.kind == "name"] == ["Walton", "Federal Case"]


def test_a_signature_block_with_labels():
    block = passage("p1", 40, ["SIGNATURES", "Apex Widgets, Inc.", "By: /s/ Priya Raman", "Name: Priya Raman",
                               "Title: Senior Vice President, Chief Financial Officer", "Date: May 3, 2023"])
    a = answer(q("Who is the chief financial officer?", "entity", ["chief financial officer"]), [block])
    assert a.value == "Priya Raman"


CASE = ["Superior Court of Vermont.", "Re: Martin OKAFOR", "v.", "VERMONT STATE ETHICS", "COMMISSION.",
        "C.A. No. 19A-02-004.", "Dear Counsel:"]


@pytest.mark.parametrize("role,name", [("defendant", "VERMONT STATE ETHICS COMMISSION"), ("plaintiff", "Martin OKAFOR")])
def test_a_caption_names_the_plaintiff_then_the_defendant_around_its_v(role, name):
    a = answer(q(f"Who is the {role} of this case?", "entity", [role, "case"]), [passage("p1", 0, CASE)])
    assert (a.answer_found, a.value) == (True, name)


def test_a_cited_case_is_not_the_documents_caption():
    a = answer(q("Who is the defendant?", "entity", ["defendant"]), [passage("p1", 6, [
        "explained in our prior decision, see Anderson v. Celebrezze, 460 U.S. 780, 787 (1983), and"])])
    assert not a.answer_found


def test_a_role_after_a_dash_and_a_relative_clause_that_selects_by_deed():
    a = answer(q("Who is the chief executive officer?", "entity", ["chief executive officer"]),
               [passage("p1", 2, ["Leadership team", "Tomas Eriksen – Chief Executive Officer", "Lena Voss – Chair"])])
    assert a.value == "Tomas Eriksen"


def test_a_defined_term_wrapped_over_two_lines():
    a = answer(q("Who is the client?", "entity", ["client"]), [passage("p1", 0, [
        "This Services Agreement is entered into by Harlow Freight, LLC, a Texas limited",
        'liability company ("Client"), and Nimbus Data Co. ("Provider"), as of May 1, 2023.'])])
    assert a.value == "Harlow Freight, LLC"


def test_a_role_not_stated_says_so():
    a = answer(q("Who is the defendant of this case?", "entity", ["defendant", "case"]),
               [passage("p1", 4, ["Walton represented the individual defendants in the Federal Case."])])
    assert not a.answer_found and "stated as the defendant" in a.caveats[0]


def test_which_case_asks_a_case_name():
    statement = ["The board never determined whether her immunity defense would outweigh the conflict. FN54 The",
                 "board did conclude that she could argue it."]
    a = answer(q('Which case is related to the statement that "The board never determined whether her immunity '
                 'defense would outweigh the conflict."?', "entity", ["case", "board", "immunity", "defense"]),
               [passage("p1", 12, statement)])
    assert not a.answer_found
    a = answer(q("Which case held that the signature requirement was valid?", "entity",
                 ["case", "signature requirement", "valid"]),
               [passage("p1", 6, ["The signature requirement was held valid in Jenness v. Fortson, 403 U.S. 431."])])
    assert a.value == "Jenness v. Fortson"


def test_the_signer_is_the_name_the_text_marks_as_signed():
    page = passage("p1", 15, ["I declare under penalty of perjury that the foregoing is true.", "Respectfully submitted,",
                              "/s/ Marcus Linde", "Special Agent", "Federal Bureau of Investigation"])
    a = answer(q("Which officer verified and signed the complaint?", "entity", ["officer", "verified", "signed"]), [page])
    assert a.value == "Marcus Linde"


COVER = ["2019-2021", "Jane Doe", "MAYOR", "Tom Ray, PhD", "City Treasurer"]


def test_a_name_takes_the_role_line_under_it_on_the_first_page():
    a = answer(q("What is the name of the mayor as mentioned on the first page of the document?", "entity",
                 ["name", "mayor", "first page"]), [passage("p1", 0, COVER)])
    assert (a.answer_found, a.value) == (True, "Jane Doe")


@pytest.mark.parametrize("text,page", [
    ("What is the name of the mayor as mentioned on the first page of the document?", 4),  # not the first page
    ("What is the name of the mayor as mentioned on the last page of the document?", 0),  # 'last' cannot be checked
])
def test_a_name_elsewhere_than_the_page_asked_is_not_found(text, page):
    a = answer(q(text, "entity", ["name", "mayor", "last page" if "last" in text else "first page"]),
               [passage("p1", page, COVER)])
    assert not a.answer_found and a.value is None


def test_a_label_line_ending_in_a_colon_names_the_line_under_it():
    a = answer(q("Who published the plan?", "entity", ["published", "plan"]), [passage("p1", 1, [
        "Version 2.1", "Revised June 2020", "Published by:", "Riverside Water Board", "12 Elm Road"],
        section="Strategic Plan")])
    assert (a.answer_found, a.value) == (True, "Riverside Water Board")


def test_an_identifier_on_the_line_that_names_its_kind_under_the_asked_subject():
    a = answer(q("What is the telephone number for Oak House Care Home?", "text", ["telephone", "oak house care home"]),
               [passage("h1", 0, ["Oak House Care Home is registered to provide care for 30 people.",
                                  "Care provided at Oak House was safe.", "Oak House Care Home Limited",
                                  "12 Elm Road", "Tel: 01632 960123"], section="Oak House Care Home")])
    assert (a.answer_found, a.value) == (True, "01632 960123")


def test_the_email_address_that_carries_the_asked_name():
    a = answer(q("What is the email id of Ms Ann Lee?", "entity", ["email id", "ann lee"]), [passage("e1", 3, [
        "Counsel for the applicants: Mr John Smith and Ms Ann Lee, Smith Lee LLP,",
        "jsmith@smithlee.example, alee@smithlee.example"])])
    assert (a.answer_found, a.value) == (True, "alee@smithlee.example")


def test_a_kind_of_the_asked_noun_even_as_a_heading():
    a = answer(q("What type of court is noted on the cover page?", "entity", ["type", "court", "cover page"]),
               [passage("c1", 0, ["DISTRICT COURT", "COUNTY OF NORTHFIELD", "Case No. 21-0042"],
                        section="DISTRICT COURT")])
    assert isinstance(a, AnswerWithEvidence) and (a.answer_found, a.value) == (True, "DISTRICT COURT")


COVER_SCOPE = ["Annual Safety Report", "Revised March 2019", "Produced by:", "Harbor Transit Authority", "Page 1"]


def test_a_label_on_the_line_above_names_its_value():
    a = answer(q("Who produced the report that was revised in March 2019?", "entity", ["produced", "revised", "2019"]),
               [passage("p1", 0, COVER_SCOPE)])
    assert (a.answer_found, a.value) == (True, "Harbor Transit Authority")


ROWS = ["Region Name Code", "Northshore (NS)", "1. Lakeside North LK01", "2. Lakeside South LK02",
        "Westvale (WV)", "1. Old Town WV01"]


@pytest.mark.parametrize("code,name", [("LK02", "Lakeside South"), ("WV01", "Old Town")])
def test_the_row_a_named_code_keys_gives_the_name(code, name):
    a = answer(q(f"What's the region name for code {code}?", "entity", ["region name", code]),
               [passage("p1", 3, ROWS)])
    assert (a.answer_found, a.value) == (True, name)


SYLLABUS = [passage("p1", 3, ["Unit 2 Key Assignments:", "• Essay- Water Rights in the Modern West—due in week 3"]),
            passage("p2", 5, ["Unit 5 Key Assignments:", "• Case Study- Supply Chains Under Strain—submit online",
                              "• Quiz on units 4 and 5"])]


def test_the_title_printed_after_the_kind_asked_in_the_part_the_question_names():
    a = answer(q("What is the title of the case study given under unit 5?", "entity", ["title", "case study", "unit 5"]),
               SYLLABUS)
    assert (a.answer_found, a.value) == (True, "Supply Chains Under Strain")
    b = answer(q("What is the title of the essay given under unit 2?", "entity", ["title", "essay", "unit 2"]), SYLLABUS)
    assert (b.answer_found, b.value) == (True, "Water Rights in the Modern West")


def test_a_ranking_is_answered_only_where_the_text_states_it():
    assert asks_ranking("Which program has the longest time period?") == "longest"
    assert asks_ranking("How much warning must they give at least?") is None
    table = passage_at("p", 3, ["Leaders in Education Programme 6 months",
                             "Management and Leadership in Schools Programme 17 weeks"])
    a = answer(q("Which program has the longest time period among the leadership programmes?", "entity",
                 ["program", "longest", "time period", "leadership programmes"]), [table])
    assert not a.answer_found
    stated = passage_at("s", 3, ["The GPT-4 model performs the best on commonsensical data."])
    a = answer(q("Which model performs the best on commonsensical data?", "entity",
                 ["model", "performs", "commonsensical data"]), [stated])
    assert a.value == "GPT-4"
