"""The pipeline's typed contracts (DESIGN.md, "Contracts"): one pydantic model per table row or hand-off.

Closed vocabularies are ``Literal``s so that a stray value fails validation at the boundary.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

TocSource = Literal["outline", "headings", "pages"]
AnswerShape = Literal["amount", "date", "boolean", "entity", "text", "list", "comparison"]
# one typed value: what the router sends to the sequential regime, what the extractive generator calls complete
# once tied to the keywords, and what the regimes benchmark measures the -65% goal on
SINGLE_VALUE_SHAPES: tuple[str, ...] = ("amount", "date", "boolean", "entity")
Decomposition = Literal["single", "multi_part", "compare"]
DetectorName = Literal["toc", "keywords", "embeddings"]
Role = Literal["primary", "supporting", "tangential", "discarded"]
Decision = Literal["keep", "rewrite", "discard"]
Regime = Literal["batch", "sequential"]
RegimeChoice = Literal["auto", "batch", "sequential", "both"]
LoopExit = Literal["sufficiency", "exhaustion", "budget", "single_call", "not_found", "failed"]
Stage = Literal["arbiter", "generate"]
CallStatus = Literal["ok", "error", "retry"]
DocStatus = Literal["ok", "failed", "missing"]

DETECTORS: tuple[str, ...] = get_args(DetectorName)
ROLES: tuple[str, ...] = get_args(Role)

# Role <-> decision mapping (issue 8): discarded <=> discard; every kept role is keep or rewrite.
ROLE_DECISIONS: dict[str, tuple[str, ...]] = {
    "primary": ("keep", "rewrite"),
    "supporting": ("keep", "rewrite"),
    "tangential": ("keep", "rewrite"),
    "discarded": ("discard",),
}


class Line(BaseModel):
    """One text line of a PDF (a row of ``lines``)."""

    doc_id: str
    page: int = Field(ge=0, description="0-based page number")
    line_no: int = Field(ge=0, description="line number within the document")
    text: str
    bbox: list[float] = Field(min_length=4, max_length=4)
    font_size: float
    bold: bool
    block_no: int


class Section(BaseModel):
    """One structural unit of a document (a row of ``toc``)."""

    doc_id: str
    section_id: int
    level: int = Field(ge=1)
    title: str
    page_start: int
    page_end: int
    line_start: int
    line_end: int = Field(description="last line_no of the section, inclusive")
    parent_id: int | None = None
    source: TocSource


DocType = Literal["annual_report", "quarterly_report", "half_year_report", "current_report", "proxy_statement",
                  "registration_statement", "prospectus", "contract", "policy", "paper", "manual", "report"]


class IdentityField(BaseModel):
    """One fact of a document's identity and the line it was read from ('page 0 line 14: "Apple Inc."'), the PDF
    metadata field ('metadata subject: "..."') or what it was derived from ('derived: ...')."""

    value: str | int
    source: str


class DocumentIdentity(BaseModel):
    """What a document says it is, read from its first pages and its PDF metadata (``tasks.corpus.identity``);
    stored as JSON in ``documents.identity``. ``unread`` names the fields it could not read."""

    version: str
    title: IdentityField | None = None
    issuer: IdentityField | None = None
    parties: list[IdentityField] = Field(default_factory=list)
    tickers: list[IdentityField] = Field(default_factory=list)
    doc_type: IdentityField | None = None
    form: IdentityField | None = None
    period_end: IdentityField | None = None  # ISO date of the period the document reports on
    period_months: IdentityField | None = None  # 3 (a quarter), 6, 9, 12
    fiscal_year_end_month: IdentityField | None = None  # 1..12
    fiscal_year: IdentityField | None = None  # named by the calendar year it ends in, unless the document says else
    fiscal_period: IdentityField | None = None  # 'Q3', 'H1', 'FY'
    # how the document writes its own periods: 'fiscal' (a bare 'third quarter of 2023' is its fiscal quarter) or
    # 'explicit' (it writes 'fiscal year 2024'); None when its fiscal year is the calendar year or nothing says
    period_names: IdentityField | None = None
    date: IdentityField | None = None
    unread: list[str] = Field(default_factory=list)


class QuestionRecord(BaseModel):
    """One line of a question set (JSONL), as given by its author."""

    model_config = ConfigDict(extra="ignore")

    qid: str
    question: str
    doc: list[str] | None = None
    answer: str | None = None
    gold_pages_0based: list[int] | None = None
    labels: dict = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _doc_as_list(cls, data):
        if isinstance(data, dict) and isinstance(data.get("doc"), str):
            data = {**data, "doc": [data["doc"]]}
        if isinstance(data, dict) and data.get("qid") is not None:
            data = {**data, "qid": str(data["qid"])}
        return data


AskedClass = Literal["duration", "money", "percentage", "date", "count", "yesno", "entity", "list", "number", "text"]


class Asked(BaseModel):
    """What a question asks for, typed finer than its answer shape: the value class a reader must find (a duration
    question never gets a bare number, a money question never a section number), the unit it names (``days`` in
    "how many days"), the kind of name it asks (``number`` for a phone or case number), the physical quantity of a
    plain number, and whether it also asks something else (one extracted value may not answer every part). Typed
    by the question brick (``tasks.questions.asked``), read by generation."""

    model_config = ConfigDict(frozen=True)

    cls: AskedClass
    unit: str = ""
    entity_noun: str = ""
    multi_part: bool = False
    reasons: list[str] = Field(default_factory=list)
    dimension: str = ""  # the physical quantity a plain number asks for (temperature, weight, ...), if named

    @property
    def numeric(self) -> bool:
        return self.cls in ("duration", "money", "percentage", "count", "number")

    def describe(self) -> str:
        """The class in words, for caveats ("no duration stated near ...")."""
        names = {"duration": "duration", "money": "amount of money", "percentage": "percentage", "date": "date",
                 "count": "count", "yesno": "yes/no statement", "entity": "name", "list": "list of items",
                 "number": "number", "text": "statement"}
        return names[self.cls] if not self.unit or self.cls != "count" else f"number of {self.unit}"


class ParsedQuestion(BaseModel):
    """A question after the offline parser (a row of ``questions``, with the record's fields)."""

    question_id: str
    text: str
    keywords_primary: list[str]
    keywords_secondary: list[str]
    answer_shape: AnswerShape
    decomposition: Decomposition
    intent: str
    parser: str
    # The question apart from its framing (tasks.questions.framing): what it asks of the documents, the role-play,
    # instructions and answer-format text addressed to the reader, and the terms it defines (term -> definition).
    # Defaults keep rows stored before the split loadable; readers re-derive the split from ``text`` when empty.
    ask: str = ""
    framing: list[str] = Field(default_factory=list)
    definitions: dict[str, str] = Field(default_factory=dict)
    # What is asked, typed (``tasks.questions.asked``); None on a row stored before the question brick typed it,
    # and then ``tasks.questions.asked.asked_of`` types it from the text, shape and decomposition, as the parser does
    asked: Asked | None = None


class DetectorHit(BaseModel):
    """One proposal of one detector, on the detector's own score scale (never normalised)."""

    question_id: str
    detector: DetectorName
    rank: int = Field(ge=1)
    raw_score: float
    doc_id: str
    page: int
    line_start: int
    line_end: int
    section_id: int | None = None
    matched_keywords: list[str] = Field(default_factory=list)


class CandidateBrief(BaseModel):
    """One candidate passage as handed to the arbiter (a row of ``candidates``)."""

    question_id: str
    candidate_id: str = Field(description="stable id: doc8:page:l<start>-<end>")
    doc_id: str
    page: int
    line_start: int
    line_end: int
    section_id: int | None = None
    section: str = Field(description="TOC title path, ' > ' separated; '' when none")
    methods: list[DetectorName]
    ranks: dict[str, int] = Field(description="detector -> rank (1-based) of its best hit in this candidate")
    raw_scores: dict[str, float] = Field(description="detector -> raw score of its best hit")
    matched_keywords: list[str]
    snippet: str = Field(description="3-5 lines around the anchor, from lines")
    rrf_score: float = Field(description="reciprocal rank fusion (k=60); audit, pool cap and the rules arbiter's last tie-break (after detector agreement); never a decision on its own")
    # what the candidate's document says it is (DocumentIdentity.describe), and why detection searched it first
    # for this question (the issuer, period or type the question names; '' = not preferred, or no preference)
    document: str = Field("", description="the identity of the candidate's document, one line")
    preferred: str = Field("", description="why detection searched this document first; '' when it did not")
    preferred_group: int | None = Field(None, description="which of the named documents (a comparison names "
                                                          "several); None when not preferred")


class CandidateVerdict(BaseModel):
    """The arbiter's verdict on one candidate."""

    candidate_id: str
    role: Role
    decision: Decision = "keep"
    reason: str = Field(description="one plain line, goes to the audit trail")
    relevance: float = Field(ge=0.0, le=1.0)
    contradicts: list[str] = Field(default_factory=list)
    anchor_found: bool = False
    rewrite: str | None = Field(default=None, description="condensed restatement, kept beside the original lines")
    flagged: bool = Field(default=False, description="set by validation, e.g. missing from the arbiter's output")

    @model_validator(mode="after")
    def _role_decision(self):
        if self.decision not in ROLE_DECISIONS[self.role]:
            raise ValueError(f"decision {self.decision!r} is not allowed for role {self.role!r}")
        if self.decision == "rewrite" and not (self.rewrite or "").strip():
            raise ValueError("decision 'rewrite' needs a non-empty rewrite")
        self.reason = " ".join(self.reason.split())
        return self


class ArbiterOutput(BaseModel):
    """What one arbiter call returns for one question."""

    verdicts: list[CandidateVerdict]
    not_found: bool = False
    not_found_reason: str | None = None


class RetrievedPassage(BaseModel):
    """A kept candidate in a RetrievalResult, with its text and the arbiter's reason."""

    candidate_id: str
    doc_id: str
    page: int
    line_start: int
    line_end: int
    section: str
    text: str
    role: Role
    decision: Decision
    reason: str
    relevance: float
    anchor_found: bool
    rewrite: str | None = None
    rrf_score: float = 0.0
    methods: list[str] = Field(default_factory=list)
    matched_keywords: list[str] = Field(default_factory=list)


class Contradiction(BaseModel):
    candidate_ids: list[str]
    note: str


class RetrievalResult(BaseModel):
    """The contract handed from retrieval to generation (stored as JSON in ``retrieval_results``)."""

    question_id: str
    status: Literal["found", "not_found"]
    primary: list[RetrievedPassage] = Field(default_factory=list)
    supporting: list[RetrievedPassage] = Field(default_factory=list)
    contradictions: list[Contradiction] = Field(default_factory=list)
    rule: str = Field(description="the dispatcher rule that fired")
    not_found_reason: str | None = None
    profile: str = "balanced"
    guard_fired: bool = False
    arbiter_provider: str
    arbiter_model: str
    arbiter_call_id: str | None = None

    def passages(self) -> list[RetrievedPassage]:
        return [*self.primary, *self.supporting]


class EvidenceSpan(BaseModel):
    doc_id: str
    page: int
    line_start: int
    line_end: int
    quote: str


class AnswerWithEvidence(BaseModel):
    """A typed answer. The sequential loop reads the two booleans, never ``confidence``."""

    value: str | None
    evidence: list[EvidenceSpan] = Field(default_factory=list)
    answer_found: bool
    complete_answer_found: bool
    confidence: float = Field(ge=0.0, le=1.0)
    caveats: list[str] = Field(default_factory=list)
    # the reader rule that produced the value or the abstention (the offline reader's ``tasks.generate.rules``
    # names; the pipeline names a model's answer and a retrieval not-found): set by the code, never asked of a
    # model, so it stays out of the JSON schema a model is sent
    rule: SkipJsonSchema[str | None] = None

    @model_validator(mode="after")
    def _complete_implies_found(self):
        if self.complete_answer_found and not self.answer_found:
            raise ValueError("complete_answer_found requires answer_found")
        return self


class LLMUsage(BaseModel):
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    counted: bool = Field(default=False, description="True when counted locally (offline provider), not reported by an API")
