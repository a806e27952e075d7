"""The retrieval contract: every path that serves a memo, a report or an answer retrieves as of a time.

Point-in-time retrieval (seed 000, ../shared/seeds/000_79d55a8598b40f79.txt, section 3.3: "future
documents are excluded before scoring"): an index keeps each item's availability time (when its source
became public: a chunk's ``available_at``, a filing's acceptance, an observation's publication); a
retrieval call names its ``as_of`` and everything available later is removed before any score is
computed, so it can influence neither the ranking nor TFR's cluster weights.

Times are compared as ``YYYY-MM-DDTHH:MM:SSZ`` strings (what the graph stores; string order is time
order). A date ``as_of`` means the end of that day, UTC. Items without an availability time are
*undated*: an index built from the graph drops them (nothing proves they were public), an index built
in memory from one question's own context (TAT-QA) keeps them (``undated="keep"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal, Protocol, runtime_checkable

from kg.errors import RetrievalError

Undated = Literal["keep", "drop"]


class AsOfRequired(RetrievalError):
    """A retrieval that serves a memo, a report or an answer was asked without an ``as_of`` time."""


AsOf = str | date | datetime


def as_of_cutoff(as_of: AsOf | None) -> str:
    """``as_of`` as the ISO UTC cutoff string items are compared with (``available_at <= cutoff``).

    Args:
        as_of: a datetime (naive means UTC), a date (the end of that day, UTC), or an ISO string of either.

    Raises:
        AsOfRequired: ``as_of`` is None.
        RetrievalError: a string that is not an ISO date or time.
    """
    if as_of is None:
        raise AsOfRequired(
            "retrieval for a memo, report or answer needs an as_of time (the question's date): "
            "evidence published after it must not reach the answer"
        )
    if isinstance(as_of, str):
        text = as_of.strip()
        try:
            as_of = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError as exc:
            raise RetrievalError(f"as_of {text!r} is not an ISO date or time") from exc
    if isinstance(as_of, datetime):
        moment = as_of if as_of.tzinfo else as_of.replace(tzinfo=UTC)
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{as_of.isoformat()}T23:59:59Z"


def available(available_at: str | None, cutoff: str, undated: Undated) -> bool:
    """Whether an item available at ``available_at`` (ISO UTC, or None when undated) may be used at ``cutoff``."""
    if available_at is None or available_at == "":
        return undated == "keep"
    return str(available_at) <= cutoff


@dataclass(frozen=True)
class Evidence:
    """One retrieved item, whatever retriever found it.

    Attributes:
        id: the item's id (a triple's relationship id, a chunk id, a fact id).
        text: what a generator is shown. score: the retriever's score (higher is better).
        kind: ``triple``, ``chunk`` or ``fact``. source_key: where it comes from (a triple's source chunk,
            the chunk itself, a fact's ``adsh:cik:tag:ddate:uom`` key or observation id).
        available_at: when it became available (ISO UTC), None when undated. source_family: e.g. ``fomc``.
        metadata: retriever-specific fields (a triple's cluster and TFR weight ...).
    """

    id: str
    text: str
    score: float
    kind: str
    source_key: str | None = None
    available_at: str | None = None
    source_family: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Retriever(Protocol):
    """The one retrieval contract: ``k`` items for ``query`` available at ``as_of``, best first.

    Implementations remove everything available after ``as_of`` before scoring and raise
    :class:`AsOfRequired` when ``as_of`` is None.
    """

    def search(
        self, query: str, *, as_of: AsOf | None, k: int | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[Evidence]: ...
