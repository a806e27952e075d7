"""The one resume scheme of the evaluations: an append-only JSON-lines log of finished items beside a manifest.

An evaluation that asks an LLM item by item (TAT-QA answers, market-feedback predictions, LLM memos) keeps
its progress in an output folder:

- ``manifest.json`` (:func:`check_manifest`): what the run is (model, data, parameters). A rerun with the same
  folder must agree on the fields that decide the answers (e.g. the model); otherwise it is refused, naming
  the field and both values, so the answers of two models are never mixed.
- one :class:`ItemLog` per stream of answers: each finished item is appended as one JSON line and flushed
  at once, so a run killed at any moment keeps every item it finished. On resume, a last line cut off by an
  interrupted write is dropped (that item is asked again) and the file is rewritten without it before new
  lines are appended; a malformed line before the last is an error naming the file and the line (nothing
  is silently skipped, nothing is lost).

Derived outputs written to the graph (memos, report items) resume through the graph's item ledger
(:mod:`kg.ledger`) instead, and ingests through :mod:`ingest.runs`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kg.atomic import replacing
from kg.errors import EvaluationError

MANIFEST = "manifest.json"


class ItemLog:
    """An append-only JSON-lines file of finished items (module docstring).

    Args:
        path: the ``.jsonl`` file (created with its folder on first append).
        what: what one line is, for error messages (e.g. ``"a TAT-QA answer record"``).
        error: the :class:`kg.errors.EvaluationError` subclass raised for a malformed line.
    """

    def __init__(self, path: Path, what: str, error: type[EvaluationError] = EvaluationError) -> None:
        self.path, self.what, self.error = Path(path), what, error

    def read(self) -> list[dict[str, Any]]:
        """The records written so far, in file order (a missing file: none; a cut-off last line: dropped).

        Raises:
            EvaluationError (``error``): a line before the last is not a JSON object; the message names the
                file and the line.
        """
        if not self.path.is_file():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        out: list[dict[str, Any]] = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise TypeError(f"a JSON {type(record).__name__}, not an object")
            except (json.JSONDecodeError, TypeError) as exc:
                if n == len(lines):  # the write an interruption cut off
                    break
                raise self.error(
                    f"{self.path}:{n}: not {self.what} ({exc}); move the file away to start again"
                ) from exc
            out.append(record)
        return out

    def rewrite(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Replace the file with ``records``, one per line (written beside it, then renamed: never half-written)."""
        with replacing(self.path, suffix=".tmp") as tmp, tmp.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")

    @contextmanager
    def appending(self) -> Iterator[tuple[list[dict[str, Any]], Callable[[Mapping[str, Any]], None]]]:
        """Open for resuming: yields ``(earlier records, add)``; ``add(record)`` appends one line and flushes.

        The file is first rewritten without a cut-off last line, so new lines never follow half a line.

        Raises:
            EvaluationError (``error``): see :meth:`read`.
        """
        earlier = self.read()
        self.rewrite(earlier)
        with self.path.open("a", encoding="utf-8") as fh:

            def add(record: Mapping[str, Any]) -> None:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                fh.flush()

            yield earlier, add


def check_manifest(
    folder: Path,
    fields: Mapping[str, Any],
    must_match: Sequence[str],
    hint: str = "use another output folder",
    error: type[EvaluationError] = EvaluationError,
) -> None:
    """Check that an earlier ``folder/manifest.json`` (if any) agrees with ``fields`` on ``must_match``
    (module docstring); a field the earlier manifest lacks is not compared.

    Raises:
        EvaluationError (``error``): the manifest is not JSON, or has another value for one of ``must_match``;
            the message names the file, the field, both values and ``hint``.
    """
    path = folder / MANIFEST
    if not path.is_file():
        return
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise error(f"{path}: not JSON ({exc}); {hint}") from exc
    for key in must_match:
        if key in old and old[key] != fields.get(key):
            raise error(
                f"{path}: this folder's answers have {key} {old[key]!r}, this run's is {fields.get(key)!r} ({hint})"
            )


def read_manifest(folder: Path) -> dict[str, Any]:
    """``folder/manifest.json`` as a dict; ``{}`` when there is none.

    Raises:
        json.JSONDecodeError: the file is not JSON (:func:`check_manifest` names the file first).
    """
    path = folder / MANIFEST
    return dict(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else {}


def write_manifest(folder: Path, fields: Mapping[str, Any]) -> Path:
    """Write ``fields`` as ``folder/manifest.json`` (the folder created if missing); returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MANIFEST
    path.write_text(json.dumps(dict(fields), indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return path
