"""Read FinanceBench's open-source sample: questions over the pages of real 10-K / 10-Q filings, with gold answers.

Source: Islam et al., "FinanceBench: A New Benchmark for Financial Question Answering", arXiv 2311.11944 (data:
github.com/patronus-ai/financebench, ``data/financebench_open_source.jsonl``, 150 questions; CC BY-NC 4.0 per its
dataset card). Each line is one question ``{"financebench_id", "company", "doc_name", "question_type",
"question_reasoning", "question", "answer", "justification", "evidence": [{"evidence_text", "doc_name",
"evidence_page_num", "evidence_text_full_page"}]}``: the evidence pages are the PDF text of the filing's pages
(zero-indexed page numbers) that hold the answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kg.errors import IngestError


class FinanceBenchFormatError(IngestError):
    """The file is not FinanceBench's JSON lines; the message names the file and the line."""


@dataclass(frozen=True)
class EvidencePage:
    """One page of a filing as FinanceBench gives it: ``id`` ``"<doc_name>#p<page>"`` (zero-indexed page, as the
    dataset numbers it), the filing's ``doc_name`` (e.g. ``3M_2018_10K``), ``page`` and the page's full ``text``."""

    id: str
    doc_name: str
    page: int
    text: str


@dataclass(frozen=True)
class PageQuestion:
    """A FinanceBench question with its pages: ``uid`` (``financebench_id``), ``question``, gold ``answer`` (free
    text, e.g. ``"$1577.00"``, ``"30.8%"``), ``company``, ``doc_name``, ``question_type`` and the distinct evidence
    ``pages`` in the dataset's order."""

    uid: str
    question: str
    answer: str
    company: str
    doc_name: str
    question_type: str
    pages: tuple[EvidencePage, ...]


def read_financebench(path: Path) -> list[PageQuestion]:
    """The questions of a FinanceBench JSON-lines file, in file order.

    Raises:
        FinanceBenchFormatError: a line is not JSON or lacks a field; the message names the file and the line.
    """
    out: list[PageQuestion] = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            pages: dict[str, EvidencePage] = {}
            for e in r["evidence"]:
                doc, page = str(e["doc_name"]), int(e["evidence_page_num"])
                pid = f"{doc}#p{page}"
                pages.setdefault(pid, EvidencePage(pid, doc, page, str(e["evidence_text_full_page"])))
            out.append(
                PageQuestion(
                    str(r["financebench_id"]),
                    str(r["question"]),
                    str(r["answer"]),
                    str(r["company"]),
                    str(r["doc_name"]),
                    str(r["question_type"]),
                    tuple(pages.values()),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise FinanceBenchFormatError(f"{path}: line {n}: not a FinanceBench question ({exc})") from exc
    return out
