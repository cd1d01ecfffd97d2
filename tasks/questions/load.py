"""Question sets: load a JSONL file line by line, resolve its documents, parse and store every question.

A bad line or a missing document costs that one question, never the set: each problem becomes a
:class:`QuestionLineError` naming the file, the line and the fix, and the good questions still load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from schemas.contracts import QuestionRecord
from tasks.questions.parser import parse_question
from warehouse.db import Warehouse
from warehouse.questions import clear_question_errors, save_questions
from warehouse.runs import record_error

# file stems that say nothing about the set: name it after the folder too ('mmlongbench-questions')
GENERIC_STEMS = frozenset({"questions", "question", "qa", "qna", "queries", "data", "dev", "test", "train", "gold"})


class MissingDocumentError(FileNotFoundError):
    """A question names documents that are not on disk."""

    def __init__(self, question_id: str, missing: list[Path], data_root: Path, hint: str = ""):
        self.question_id = question_id
        self.missing = missing
        self.data_root = data_root
        names = ", ".join(str(p) for p in missing)
        super().__init__(
            f"question {question_id!r}: document(s) not found: {names} (doc paths are resolved against data root "
            f"{data_root}); fix the 'doc' field or pass the folder they are relative to as data_root{hint}"
        )


@dataclass
class QuestionLineError:
    line_no: int  # 1-based line of the JSONL file
    subject: str  # 'questions.jsonl:17' (with the folder when the file name is generic)
    message: str
    question_id: str | None = None  # set when the line parsed but the question cannot run (missing documents)


@dataclass
class QuestionSetLoad:
    name: str
    path: Path
    data_root: Path
    records: list[QuestionRecord] = field(default_factory=list)
    errors: list[QuestionLineError] = field(default_factory=list)
    docs: dict[str, list[Path] | None] = field(default_factory=dict)  # qid -> absolute paths (None = whole corpus)
    line_nos: dict[str, int] = field(default_factory=dict)  # qid -> line it came from

    def doc_error(self, qid: str) -> QuestionLineError | None:
        return next((e for e in self.errors if e.question_id == qid), None)


def question_set_name(path: Path) -> str:
    stem = path.stem
    return f"{path.resolve().parent.name}-{stem}" if stem.lower() in GENERIC_STEMS else stem


def file_subject(path: Path) -> str:
    """How errors name the file: 'questions.jsonl', or 'mmlongbench/questions.jsonl' when the stem is generic."""
    return f"{path.resolve().parent.name}/{path.name}" if path.stem.lower() in GENERIC_STEMS else path.name


def resolve_docs(record: QuestionRecord, data_root: Path) -> list[Path] | None:
    """Absolute paths of the record's documents (None when it names none: the whole corpus)."""
    if record.doc is None:
        return None
    root = Path(data_root).resolve()
    paths = [(root / d).resolve() for d in record.doc]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        hint = ""
        for parent in list(root.parents)[:3]:
            if all((parent / d).is_file() for d in record.doc):
                hint = f" (they exist under {parent})"
                break
        raise MissingDocumentError(record.qid, missing, root, hint)
    return paths


def _type_problem(obj: dict[str, Any]) -> str | None:
    """A specific message for a field of the wrong type, or None."""
    qid, question = obj.get("qid"), obj.get("question")
    if qid is None:
        return "missing required field 'qid'"
    if isinstance(qid, bool) or not isinstance(qid, (str, int)):
        return f"'qid' must be a string or an integer, got {type(qid).__name__}"
    if not str(qid).strip():
        return "'qid' is empty"
    if question is None:
        return "missing required field 'question'"
    if not isinstance(question, str):
        return f"'question' must be a string, got {type(question).__name__}"
    if not question.strip():
        return "'question' is empty"
    doc = obj.get("doc")
    if doc is not None and not (isinstance(doc, str) and doc.strip()) and not (
            isinstance(doc, list) and doc and all(isinstance(d, str) and d.strip() for d in doc)):
        return f"'doc' must be a non-empty path or list of paths, got {json.dumps(doc)[:80]}"
    gold = obj.get("gold_pages_0based")
    if gold is not None and not (isinstance(gold, list) and all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in gold)):
        return f"'gold_pages_0based' must be a list of 0-based page numbers or null, got {json.dumps(gold)[:80]}"
    answer = obj.get("answer")
    if isinstance(answer, bool) or (answer is not None and not isinstance(answer, (str, int, float))):
        return f"'answer' must be a string, a number or null, got {type(answer).__name__}"
    if obj.get("labels") is not None and not isinstance(obj["labels"], dict):
        return f"'labels' must be an object, got {type(obj['labels']).__name__}"
    return None


def _parse_line(line: str) -> QuestionRecord | str:
    """One JSONL line as a record, or what is wrong with it."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at column {exc.colno}); fix the line or delete it"
    if not isinstance(obj, dict):
        return f"expected a JSON object per line, got {type(obj).__name__}; fix the line or delete it"
    if problem := _type_problem(obj):
        return f"{problem}; fix the line or delete it"
    if isinstance(obj.get("answer"), (int, float)):
        obj = {**obj, "answer": str(obj["answer"])}
    if "labels" in obj and obj["labels"] is None:
        obj = {k: v for k, v in obj.items() if k != "labels"}
    try:
        return QuestionRecord.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"invalid field {'.'.join(map(str, first['loc']))!r}: {first['msg']}; fix the line or delete it"


def load_question_set(path: Path, data_root: Path | None = None) -> QuestionSetLoad:
    """Read a JSONL question set; malformed lines and missing documents become errors, the rest loads."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"question set {path} not found; pass the path of a .jsonl file (one question a line)")
    root = Path(data_root).resolve() if data_root is not None else path.resolve().parent
    out = QuestionSetLoad(name=question_set_name(path), path=path.resolve(), data_root=root)
    base = file_subject(path)
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            subject = f"{base}:{line_no}"
            record = _parse_line(line)
            if isinstance(record, str):
                out.errors.append(QuestionLineError(line_no, subject, f"{subject}: {record}"))
                continue
            if record.qid in out.line_nos:
                message = (f"{subject}: duplicate qid {record.qid!r} (first on line {out.line_nos[record.qid]}); "
                           "give each question its own qid")
                out.errors.append(QuestionLineError(line_no, subject, message))
                continue
            out.records.append(record)
            out.line_nos[record.qid] = line_no
            try:
                out.docs[record.qid] = resolve_docs(record, root)
            except MissingDocumentError as exc:
                out.docs[record.qid] = [(root / d).resolve() for d in record.doc or []]
                out.errors.append(QuestionLineError(line_no, subject, f"{subject}: {exc}", record.qid))
    return out


def question_row(record: QuestionRecord, docs: list[Path] | None, error: str | None = None) -> dict[str, Any]:
    """The ``questions`` row for one record: the author's fields plus the parser's."""
    parsed = parse_question(record.qid, record.question)
    return {
        "question_id": record.qid,
        "text": record.question,
        "docs": None if docs is None else [str(p) for p in docs],
        "answer": record.answer,
        "gold_pages": record.gold_pages_0based,
        "labels": record.labels,
        "keywords_primary": parsed.keywords_primary,
        "keywords_secondary": parsed.keywords_secondary,
        "answer_shape": parsed.answer_shape,
        "decomposition": parsed.decomposition,
        "intent": parsed.intent,
        "parser": parsed.parser,
        "asked": parsed.asked.model_dump_json(),
        "status": "failed" if error else "loaded",
        "error": error,
    }


def ingest_questions(wh: Warehouse, run_id: str, path: Path, data_root: Path | None = None) -> QuestionSetLoad:
    """Load, parse and store a question set for a run; every problem goes to ``errors`` (idempotent per run)."""
    loaded = load_question_set(path, data_root)
    rows = []
    for record in loaded.records:
        doc_error = loaded.doc_error(record.qid)
        rows.append(question_row(record, loaded.docs.get(record.qid), doc_error.message if doc_error else None))
    save_questions(wh, run_id, loaded.name, rows)
    clear_question_errors(wh, run_id, file_subject(Path(path)))
    for err in loaded.errors:
        record_error(wh, run_id, "questions", err.subject, err.message)
    return loaded
