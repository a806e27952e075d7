"""Which text reader reads which input: expands folders, picks the reader by ``kind`` or file name.

``kind`` ``auto`` picks per file (:func:`ingest.text.documents.detect_kind`): ``YYYYMMDD[.ext]`` FOMC,
``.md`` Markdown, ``.htm(l)`` HTML, ``YYYY-MM-DD`` or ``.jsonl`` tweets; a file that fits none is
an error (nothing is skipped silently).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ingest.text import filing_text, fomc, tweets
from ingest.text.documents import KINDS, ReadResult, TextFormatError, detect_kind, expand


def plan(path: Path, kind: str = "auto") -> dict[str, list[Path]]:
    """The files under ``path`` grouped by reader kind, in path order.

    Raises:
        TextFormatError: ``path`` is missing or empty, ``kind`` unknown, or (auto) a file fits no reader.
    """
    if kind != "auto" and kind not in KINDS:
        raise TextFormatError(f"unknown kind {kind!r}: use auto, {', '.join(KINDS)}")
    groups: dict[str, list[Path]] = defaultdict(list)
    for f in expand(path):
        groups[kind if kind != "auto" else detect_kind(f)].append(f)
    return dict(groups)


def read_source(path: Path, kind: str = "auto", ticker: str | None = None, accepted: str | None = None) -> ReadResult:
    """Read every file under ``path`` with its reader.

    Args:
        kind: ``auto`` or one of :data:`ingest.text.documents.KINDS`.
        ticker: the ticker of a filing or of a tweet folder (filings default to their cover page's,
            tweets to their folder's name).
        accepted: a filing's EDGAR acceptance time as ISO UTC (one filing only).

    Returns:
        The documents of all files, the files read, skipped tweet lines and duplicate tweets.

    Raises:
        TextFormatError: as :func:`plan`, or the first file a reader cannot read (names file and line).
    """
    result = ReadResult()
    groups = plan(path, kind)
    if accepted and sum(len(files) for k, files in groups.items() if k in ("markdown", "html")) != 1:
        raise TextFormatError(
            f"{path}: --accepted names one filing's acceptance time; give exactly one Markdown or HTML filing with it"
        )
    for k, files in groups.items():
        if k == "fomc":
            part = fomc.read_fomc(files)
        elif k in ("markdown", "html"):
            part = filing_text.read_filings(files, k, accepted=accepted, ticker=ticker)
        else:
            part = tweets.read_tweets(files, ticker=ticker)
        result.documents.extend(part.documents)
        result.files.extend(part.files)
        result.bad_lines.extend(part.bad_lines)
        result.duplicates += part.duplicates
    return result
