"""Read TAT-QA (the hybrid table + text financial QA benchmark) into facts, passages and questions.

Source: Zhu et al., "TAT-QA: A Question Answering Benchmark on a Hybrid of Tabular and Textual
Content in Finance", ACL 2021 (data: github.com/NExTplusplus/TAT-QA, CC BY 4.0). The evaluation of
seed 004 (../shared/seeds/004_7a67e4eaf6285e0b.txt, sections 3.3 and 4) has the generator select
financial facts F and write from them; a TAT-QA context gives exactly that shape: its table cells
become :class:`retrieval.facts.indicators.FinancialFact` objects, its paragraphs passages, and its questions
come with gold answers that :mod:`finkg.eval.metrics.tatqa` scores.

The file is a JSON list of contexts ``{"table": {"uid", "table": [[cell, ...], ...]}, "paragraphs":
[{"uid", "order", "text"}], "questions": [{"uid", "order", "question", "answer", "derivation",
"answer_type", "answer_from", "scale", ...}]}``.

A table becomes facts like this (:func:`table_facts`):

- **header rows**: the leading rows whose first cell is empty, or (before any value row) whose other
  cells hold no number except years, and a caption row (first cell only) right above such a row, e.g. ``["", "2019", "2018"]`` or ``["Fiscal year", "2019",
  "2018"]``; a column's header is its header cells joined by spaces (``"Years Ended September 30,
  2018"`` when a spanning caption sits above that column);
- **section rows**: a row with only its first cell filled (``"Revenue:"``) names the section of the
  rows below it, until the next section row;
- every other non-empty cell after the first column is one fact: id ``tatqa:<table uid>:r<row>c<col>``
  (0-based row and column of the JSON table), text ``"<row header> | <column header>: <cell>"`` where
  the row header is ``"<section> / <first cell>"`` inside a section, numbers parsed from the cell
  (:func:`parse_numbers`: ``"(1,234)"`` is -1234, ``"12.5%"`` is 12.5, ``"$ 1,452.4"`` is 1452.4,
  ``"—"`` none), unit ``%`` or ``USD`` when the cell shows one (TAT-QA states a table's scale in
  its text, not per cell), indicator = the row header, source ``tatqa:<file name>``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg.errors import IngestError
from retrieval.facts.indicators import FinancialFact
from retrieval.facts.tables import column_headers, header_rows, parse_numbers

__all__ = ["Passage", "TatqaContext", "TatqaFormatError", "TatqaQuestion", "parse_numbers", "read_tatqa", "table_facts"]


class TatqaFormatError(IngestError):
    """The TAT-QA file is not JSON or not in TAT-QA's shape; the message names the file and the
    offending context index (and question index where one is at fault)."""


@dataclass(frozen=True)
class Passage:
    """One paragraph of a TAT-QA context: ``id`` ``tatqa:<paragraph uid>``, ``text``, ``order``
    (1-based position in the context)."""

    id: str
    text: str
    order: int


@dataclass(frozen=True)
class TatqaQuestion:
    """One TAT-QA question with its gold answer.

    Attributes:
        uid: the question's uid. question: its text.
        answer: the gold answer as the data has it: a list of strings (span, multi-span), a number
            (arithmetic) or a number or numeric string (count).
        answer_type: ``span``, ``multi-span``, ``arithmetic`` or ``count``.
        scale: ``""``, ``thousand``, ``million``, ``billion`` or ``percent`` (what the answer's number
            is in). derivation: how the answer follows from the context (e.g. ``"4,351-3,919"``).
        answer_from: ``table``, ``text`` or ``table-text``. order: position in the context.
        rel_paragraphs: the orders of the paragraphs TAT-QA marks as the question's evidence (empty when
            absent).
    """

    uid: str
    question: str
    answer: Any
    answer_type: str
    scale: str
    derivation: str
    answer_from: str
    order: int
    rel_paragraphs: tuple[int, ...] = ()

    def record(self) -> dict[str, Any]:
        """The fields :func:`finkg.eval.metrics.tatqa.score_question` reads."""
        return {"answer": self.answer, "answer_type": self.answer_type, "scale": self.scale}


@dataclass(frozen=True)
class TatqaContext:
    """One TAT-QA context: a table, its paragraphs and the questions asked about both.

    Attributes:
        index: position in the file (0-based). table_uid: the table's uid.
        table: the raw table rows (lists of cell strings).
        facts: the table cells as facts (see the module doc). passages: the paragraphs, in order.
        questions: the questions, in order.
    """

    index: int
    table_uid: str
    table: tuple[tuple[str, ...], ...]
    facts: tuple[FinancialFact, ...]
    passages: tuple[Passage, ...]
    questions: tuple[TatqaQuestion, ...]


def table_facts(table_uid: str, rows: Sequence[Sequence[str]], source: str) -> list[FinancialFact]:
    """The facts of one table (see the module doc for the header, section and text rules).

    Args:
        table_uid: the table's uid (part of every fact id). rows: the table's rows of cell strings.
        source: the fact's ``source`` (``tatqa:<file name>``).
    """
    n_header = header_rows(rows)
    col_header = column_headers(rows)
    facts: list[FinancialFact] = []
    section = ""
    for r in range(n_header, len(rows)):
        row = [c.strip() for c in rows[r]]
        if not row:
            continue
        if row[0] and not any(row[1:]):
            section = row[0].rstrip(":").strip()
            continue
        label = f"{section} / {row[0]}" if section and row[0] else (row[0] or section)
        for c in range(1, len(row)):
            cell = row[c]
            if not cell:
                continue
            unit = "%" if "%" in cell else "USD" if "$" in cell else ""
            facts.append(
                FinancialFact(
                    id=f"tatqa:{table_uid}:r{r}c{c}",
                    text=f"{label} | {col_header[c]}: {cell}",
                    numbers=parse_numbers(cell),
                    unit=unit,
                    date="",
                    indicator=label,
                    source=source,
                )
            )
    return facts


ANSWER_TYPES = ("span", "multi-span", "arithmetic", "count")
"""TAT-QA's answer types."""
SCALES = ("", "thousand", "million", "billion", "percent")
"""TAT-QA's answer scales (``""``: none)."""


def _shown(value: Any, chars: int = 60) -> str:
    """``value`` for a one-line message: its repr, cut to ``chars`` characters."""
    text = repr(value)
    return text if len(text) <= chars else text[: chars - 3] + "..."


def _field(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``obj[key]``, checked to be of ``kind`` (a bool is no int).

    Raises:
        TatqaFormatError: ``obj`` is no JSON object, ``key`` is missing, or its value is of another type.
    """
    if not isinstance(obj, dict):
        raise TatqaFormatError(f"{where}: must be a JSON object, not {type(obj).__name__} {_shown(obj)}")
    if key not in obj:
        raise TatqaFormatError(f"{where}: missing '{key}'")
    value, kinds = obj[key], kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise TatqaFormatError(f"{where}: '{key}' must be {names}, not {type(value).__name__} {_shown(value)}")
    return value


def _optional(obj: dict, key: str, kind: type | tuple[type, ...], where: str, default: Any) -> Any:
    """``obj[key]`` checked like :func:`_field`, or ``default`` when absent or null."""
    return default if obj.get(key) is None else _field(obj, key, kind, where)


def _order(obj: dict, where: str, default: int) -> int:
    """``obj["order"]``: an integer, or a string holding one (``default`` when absent or null).

    Raises:
        TatqaFormatError: any other value.
    """
    value = _optional(obj, "order", (int, str), where, default)
    try:
        return int(value)
    except ValueError:
        raise TatqaFormatError(f"{where}: 'order' must be an integer, not {_shown(value)}") from None


def _is_number(value: Any) -> bool:
    """Whether ``value`` is a finite JSON number, or a string holding one (``"2"``, ``"-67.6"``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return False
    try:
        return math.isfinite(float(value))
    except ValueError:
        return False


def check_answer(answer: Any, answer_type: str, where: str) -> None:
    """Refuse an ``answer`` that is not of its ``answer_type``'s shape: span and multi-span a non-empty list of
    strings, arithmetic and count a finite number (or a string holding one, as TAT-QA writes counts).

    Raises:
        TatqaFormatError: ``<where>: 'answer' ...`` (the field, the expected shape and the value found).
    """
    if answer_type in ("span", "multi-span"):
        if not (isinstance(answer, list) and answer and all(isinstance(a, str) for a in answer)):
            raise TatqaFormatError(
                f"{where}: 'answer' of a {answer_type} question must be a non-empty list of strings, "
                f"not {type(answer).__name__} {_shown(answer)}"
            )
    elif not _is_number(answer):
        raise TatqaFormatError(
            f"{where}: 'answer' of {'an' if answer_type[0] in 'aeiou' else 'a'} {answer_type} question must be a number, "
            f"not {type(answer).__name__} {_shown(answer)}"
        )


def parse_question(index: int, q: Any, where: str) -> TatqaQuestion:
    """One question of a context (``q``: the JSON object, ``index``: its position) as a :class:`TatqaQuestion`.

    Raises:
        TatqaFormatError: a field is missing or of the wrong type or shape; the message starts with
            ``where``, then names the question (``question <uid>``, or ``question <index>`` without a
            usable uid) and the field.
    """
    uid = q.get("uid") if isinstance(q, dict) else None
    at = f"{where}: question {uid}" if isinstance(uid, str) and uid.strip() else f"{where}: question {index}"
    uid = _field(q, "uid", str, at)
    kind = _field(q, "answer_type", str, at)
    if kind not in ANSWER_TYPES:
        raise TatqaFormatError(f"{at}: 'answer_type' must be one of {', '.join(ANSWER_TYPES)}, not {_shown(kind)}")
    if "answer" not in q:
        raise TatqaFormatError(f"{at}: missing 'answer'")
    check_answer(q["answer"], kind, at)
    scale = _optional(q, "scale", str, at, "")
    if scale not in SCALES:
        raise TatqaFormatError(f"{at}: 'scale' must be one of {', '.join(map(repr, SCALES))}, not {_shown(scale)}")
    try:
        rel_paragraphs = tuple(int(x) for x in _optional(q, "rel_paragraphs", list, at, []))
    except (TypeError, ValueError):
        raise TatqaFormatError(
            f"{at}: 'rel_paragraphs' must hold paragraph orders (integers), got {_shown(q.get('rel_paragraphs'))}"
        ) from None
    return TatqaQuestion(
        uid=uid,
        question=_field(q, "question", str, at),
        answer=q["answer"],
        answer_type=kind,
        scale=scale,
        derivation=_optional(q, "derivation", str, at, ""),
        answer_from=_optional(q, "answer_from", str, at, ""),
        order=_order(q, at, index + 1),
        rel_paragraphs=rel_paragraphs,
    )


def parse_context(index: int, raw: Any, source: str, where: str) -> TatqaContext:
    """One context of a TAT-QA file (``raw``: the JSON object) as a :class:`TatqaContext`.

    Raises:
        TatqaFormatError: a field is missing or of the wrong type; the message starts with
            ``where`` (``<file>: context <index>``) and names the field (and the paragraph index or the
            question's uid).
    """
    table = _field(raw, "table", dict, where)
    uid = _field(table, "uid", str, f"{where}: table")
    rows = _field(table, "table", list, f"{where}: table")
    for r, row in enumerate(rows):
        if not (isinstance(row, list) and all(isinstance(c, str) for c in row)):
            raise TatqaFormatError(
                f"{where}: table {uid}: 'table' row {r} must be a list of strings, not {_shown(row)}"
            )
    passages = []
    for i, p in enumerate(_field(raw, "paragraphs", list, where)):
        at = f"{where}: paragraph {i}"
        passages.append(Passage(f"tatqa:{_field(p, 'uid', str, at)}", _field(p, "text", str, at), _order(p, at, i + 1)))
    questions = [parse_question(i, q, where) for i, q in enumerate(_field(raw, "questions", list, where))]
    return TatqaContext(
        index,
        uid,
        tuple(tuple(r) for r in rows),
        tuple(table_facts(uid, rows, source)),
        tuple(sorted(passages, key=lambda p: p.order)),
        tuple(questions),
    )


def read_tatqa(path: Path, limit: int | None = None) -> list[TatqaContext]:
    """Read a TAT-QA JSON file (``tatqa_dataset_dev.json`` and the like) into contexts.

    Args:
        path: the JSON file. limit: read only the first ``limit`` contexts.

    Raises:
        FileNotFoundError: no such file.
        TatqaFormatError: not UTF-8 JSON, not a list, or a context not in TAT-QA's shape (a missing field, a
            field of the wrong type, an answer not of its answer type's shape); one line naming the file, the
            context index, the question's uid (or index) and the field.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TatqaFormatError(f"{path}: not JSON: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise TatqaFormatError(f"{path}: not UTF-8 text (byte {exc.start}): not a TAT-QA JSON file") from exc
    except IsADirectoryError:
        raise TatqaFormatError(f"{path}: a folder, not a TAT-QA JSON file") from None
    if not isinstance(data, list):
        raise TatqaFormatError(f"{path}: expected a JSON list of contexts, found {type(data).__name__}")
    source = f"tatqa:{path.name}"
    return [
        parse_context(i, raw, source, f"{path}: context {i}")
        for i, raw in enumerate(data[:limit] if limit is not None else data)
    ]


# --------------------------------------------------------------------------- retrieval corpus (seed 002 §4.2)
#
# For the retrieval evaluation (finkg.eval.retrieval, NDCG@10 as in seed 002 section 4.2) each TAT-QA
# context becomes one (:Document {id: "<corpus>/tatqa:context:<table uid>"}) with one chunk for its table
# (id "<corpus>/tatqa:table:<table uid>", kind "tatqa_table", the rows rendered one per line, cells joined
# by " | ") and one per paragraph (id "<corpus>/tatqa:<paragraph uid>", kind "tatqa_paragraph"), all
# carrying ``corpus`` (the corpus name; part of the ids, so two corpora never share a node) and linked (:Corpus {name})-[:HAS_DOCUMENT]->(:Document)-[:HAS_CHUNK]->(:Chunk).
# The source family is "annual_report" (TAT-QA's contexts come from companies' annual reports); TAT-QA
# gives no publication times, so the chunks have no ``available_at`` and only as-of-free queries see them.

TABLE_KIND, PARAGRAPH_KIND = "tatqa_table", "tatqa_paragraph"
SOURCE_FAMILY = "annual_report"


def table_chunk_id(table_uid: str) -> str:
    """The table chunk's id within a corpus, ``tatqa:table:<table uid>``."""
    return f"tatqa:table:{table_uid}"


def scoped_id(corpus: str, local_id: str) -> str:
    """A corpus node id: ``<corpus>/<local id>`` (the local id alone when ``corpus`` is empty)."""
    return f"{corpus}/{local_id}" if corpus else local_id


def table_text(context: TatqaContext) -> str:
    """The context's table as text: one row per line, non-empty cells joined by ``" | "``."""
    return "\n".join(
        " | ".join(c.strip() for c in row if c.strip()) for row in context.table if any(c.strip() for c in row)
    )


def split_contexts(contexts: Sequence[TatqaContext], seed: int = 0) -> tuple[list[TatqaContext], list[TatqaContext]]:
    """Split contexts in two halves **by context** (a context's table, paragraphs and questions go to one
    side only): contexts ordered by sha256(``"<seed>:<table uid>"``), the first ``n // 2`` are the training
    half, the rest the evaluation half; each half keeps file order. Deterministic for a seed and
    independent of the file's order.

    Returns:
        ``(train, evaluation)``.
    """
    import hashlib

    ranked = sorted(contexts, key=lambda c: hashlib.sha256(f"{seed}:{c.table_uid}".encode()).hexdigest())
    train = {c.table_uid for c in ranked[: len(ranked) // 2]}
    return ([c for c in contexts if c.table_uid in train], [c for c in contexts if c.table_uid not in train])


def question_gains(context: TatqaContext, question: TatqaQuestion, corpus: str = "") -> dict[str, int]:
    """Graded relevance of the context's chunks for one of its questions: gain 2 for its evidence (the
    table when ``answer_from`` is ``table`` or ``table-text``; the paragraphs whose order is in the
    question's ``rel_paragraphs``), gain 1 for the context's other chunks (same report, same topic); chunks of other
    contexts have gain 0 and are not listed. A question with no marked evidence gets gain 2 on every
    chunk of its context. Chunk ids are :func:`scoped_id` of ``corpus``."""
    gains = {table_chunk_id(context.table_uid): 1, **{p.id: 1 for p in context.passages}}
    evidence = []
    if question.answer_from in ("table", "table-text"):
        evidence.append(table_chunk_id(context.table_uid))
    wanted = set(question.rel_paragraphs)
    evidence.extend(p.id for p in context.passages if p.order in wanted)
    for cid in evidence or list(gains):
        gains[cid] = 2
    return {scoped_id(corpus, cid): g for cid, g in gains.items()}


def corpus_rows(contexts: Sequence[TatqaContext], corpus: str, source: str) -> dict[str, list[dict[str, Any]]]:
    """The graph rows of a TAT-QA retrieval corpus: ``corpus`` (one Corpus row), ``documents``, ``chunks``
    (``id, kind, text, corpus, document_id, source_family, seq``), ``has_document`` and ``has_chunk`` links
    (``{"start", "end", "props"}``), deterministic ids (see the block comment above)."""
    docs, chunks, has_doc, has_chunk = [], [], [], []
    for c in contexts:
        doc_id = scoped_id(corpus, f"tatqa:context:{c.table_uid}")
        docs.append(
            {
                "id": doc_id,
                "source_family": SOURCE_FAMILY,
                "source": source,
                "doc_type": "tatqa_context",
                "title": f"TAT-QA context {c.table_uid}",
                "corpus": corpus,
                "context_index": c.index,
            }
        )
        has_doc.append({"start": corpus, "end": doc_id})
        parts = [(scoped_id(corpus, table_chunk_id(c.table_uid)), TABLE_KIND, table_text(c))]
        parts += [(scoped_id(corpus, p.id), PARAGRAPH_KIND, p.text) for p in c.passages]
        for seq, (cid, kind, text) in enumerate(parts):
            chunks.append(
                {
                    "id": cid,
                    "kind": kind,
                    "text": text,
                    "corpus": corpus,
                    "document_id": doc_id,
                    "source_family": SOURCE_FAMILY,
                    "seq": seq,
                }
            )
            has_chunk.append({"start": doc_id, "end": cid, "props": {"seq": seq}})
    return {
        "corpus": [{"name": corpus, "source": source, "documents": len(docs), "chunks": len(chunks)}],
        "documents": docs,
        "chunks": chunks,
        "has_document": has_doc,
        "has_chunk": has_chunk,
    }
