"""FOMC policy statements and implementation notes (plain text, one file per release date).

Input: ``.../statements/YYYYMMDD.txt`` and ``.../implementation_notes/YYYYMMDD.txt`` (the
collection in ../shared/data/fomc-statements; any extension is accepted after the date, because
the real collection holds ``20080916.xt``). The date comes from the file name; a name that is not
a valid date is an error.

Availability convention. The files carry no release time. FOMC statements were released at
about 14:15 Eastern time after regular meetings (1994 to 2012), at 12:30 on press-conference
days of 2011-2012, and at 14:00 from 2013; intermeeting statements came out earlier in the day
(2001-09-17 at 08:20, 2008-01-22 at 08:30, 2008-03-11 at 08:30). So a statement is taken as
available at **14:15 America/New_York on its date**, converted to UTC (19:15Z in winter, 18:15Z
in summer): never earlier than the true release for the statements of this collection, at most
a few hours late, and marked ``available_at_approx`` with basis ``fomc-release-convention``.
:data:`RELEASE_EXCEPTIONS` lists releases known to be later than 14:15 (1998-10-15, 15:15; not
in the shipped collection). Implementation notes are released with their statement and take the
same time. ``published_at`` is the same value: the source records no other.
"""

from __future__ import annotations

from datetime import date, datetime, time
from pathlib import Path
from zoneinfo import ZoneInfo

from ingest.text.documents import (
    FOMC_NAME,
    ReadResult,
    TextDocument,
    TextFormatError,
    decode,
    iso_utc,
    read_bytes,
    sha256_hex,
    unwrap,
)

NEW_YORK = ZoneInfo("America/New_York")
RELEASE_TIME = time(14, 15)
RELEASE_EXCEPTIONS: dict[str, time] = {"19981015": time(15, 15)}  # intermeeting cut, announced 3:15 pm
SOURCE = "fomc-statements"


def release_time_utc(day: str) -> str:
    """The availability time of a release on ``day`` (``YYYYMMDD``) as ISO UTC (convention above).

    >>> release_time_utc("20081216"), release_time_utc("20150917")
    ('2008-12-16T19:15:00Z', '2015-09-17T18:15:00Z')

    Raises:
        ValueError: ``day`` is not a calendar date.
    """
    d = datetime.strptime(day, "%Y%m%d").date()
    return iso_utc(datetime.combine(d, RELEASE_EXCEPTIONS.get(day, RELEASE_TIME), tzinfo=NEW_YORK))


def read_fomc_file(path: Path) -> TextDocument:
    """One statement or implementation note as a :class:`TextDocument` (one untitled section).

    ``doc_type`` is ``fomc_implementation_note`` when the file sits in a folder named
    ``implementation_notes``, else ``fomc_statement``; the id is ``fomc:<doc_type suffix>:YYYYMMDD``.

    Raises:
        TextFormatError: the name is not ``YYYYMMDD[.ext]`` or not a real date; the file is
            empty or not UTF-8 (the message names the line).
    """
    m = FOMC_NAME.match(path.name)
    if not m:
        raise TextFormatError(f"{path}: an FOMC file must be named YYYYMMDD.txt (the release date)")
    day = m.group(1)
    try:
        available = release_time_utc(day)
    except ValueError:
        raise TextFormatError(f"{path}: {day} in the file name is not a calendar date") from None
    data = read_bytes(path)
    text = unwrap(decode(path, data))
    note = path.parent.name == "implementation_notes"
    doc_type = "fomc_implementation_note" if note else "fomc_statement"
    iso_day = date(int(day[:4]), int(day[4:6]), int(day[6:])).isoformat()
    return TextDocument(
        id=f"fomc:{'implementation_note' if note else 'statement'}:{day}",
        source_family="central_bank",
        source=SOURCE,
        doc_type=doc_type,
        title=f"FOMC {'implementation note' if note else 'statement'} {iso_day}",
        available_at=available,
        available_at_approx=True,
        availability_basis="fomc-release-convention",
        published_at=available,
        sections=[("", text)],
        path=str(path.resolve()),
        sha256=sha256_hex(data),
        props={"release_date": iso_day},
    )


def read_fomc(files: list[Path]) -> ReadResult:
    """Every file of ``files`` as an FOMC document (see :func:`read_fomc_file`).

    Raises:
        TextFormatError: the first file that cannot be read.
    """
    return ReadResult(documents=[read_fomc_file(p) for p in files], files=list(files))
