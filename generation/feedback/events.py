"""The deterministic event-type mapper of seed 000, Appendix A ("Event-Type Mapping").

Source: ../shared/seeds/000_79d55a8598b40f79.txt, Appendix A and Table 5. Event types are assigned
before retrieval from the news anchor alone (headline and available summary text; never retrieved
evidence, market feedback or returns). The paper's rule, quoted: "we lowercase the headline and
available summary text and count matched keyword or phrase cues for each event type in Table 5.
The anchor is assigned to the event type with the largest cue count. If no event type has a
matched cue, or if the top count is tied across multiple event types, the anchor is assigned to
Other/Mixed."

:data:`CUES` is Table 5 exactly (same cues, same order, the paper's spelling). The paper leaves
the matching details open; finkg fixes them as follows (each is tested in tests/test_events.py):

- **What is counted.** A type's count is the number of its *distinct* cues that occur in the text
  (a cue that occurs twice counts once: "matched cues" are counted, not occurrences). Table 5
  lists overlapping cues on purpose ("guidance" and "raises guidance", "FDA" and "FDA approval",
  "offering" and "secondary offering"); both members of such a pair count when the longer one
  matches, so a specific phrase weighs more than its head word.
- **Word boundaries.** A cue matches only as whole words: "eps" does not match "steps", "miss" not
  "mission", "deal" not "dealer", "board" not "keyboard". Boundaries are "not a letter, digit or
  underscore" on either side, so "M&A" and "#earnings" match.
- **Plurals.** The last word of a cue may carry a plural "-s"/"-es" ("lawsuits", "layoffs",
  "losses", "fines", "CEOs"); other inflections do not match ("appointed" is not "appoints").
- **Phrases.** Words of a phrase cue are separated by any run of white space; the hyphen of
  "spin-off" also matches a space or nothing ("spin off", "spinoff").
- **"fiscal Q".** Table 5's cue is a prefix of a quarter name: it matches "fiscal Q" followed by a
  quarter digit 1-4 or a word end ("fiscal Q3", "fiscal q"), not "fiscal quarter" (which the
  "quarter" cue counts).
- **Text clean-up** before matching: HTML entities are decoded (tweets carry "&amp;"), URLs
  (``http://...``, ``https://...``) are removed (a link is not headline text), and the text is
  lowercased as the paper says.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

#: The paper's label for anchors with no cue, or with a tie at the top count (Table 5, last row).
OTHER_MIXED = "Other/Mixed"

#: Table 5 of seed 000 (Appendix A): event type -> keyword or phrase cues, exactly as printed.
CUES: Mapping[str, tuple[str, ...]] = {
    "Earnings & Guidance": (
        "earnings",
        "EPS",
        "revenue",
        "sales",
        "quarter",
        "quarterly results",
        "fiscal Q",
        "beat",
        "miss",
        "guidance",
        "outlook",
        "forecast",
        "raises guidance",
        "cuts guidance",
        "margin",
        "EBITDA",
        "profit",
        "loss",
    ),
    "Legal & Regulatory": (
        "lawsuit",
        "litigation",
        "class action",
        "investigation",
        "probe",
        "subpoena",
        "settlement",
        "fine",
        "penalty",
        "enforcement",
        "antitrust",
        "DOJ",
        "FTC",
        "FDA",
        "FDA approval",
        "regulatory approval",
        "recall",
        "compliance",
        "consent order",
    ),
    "Capital & Transactions": (
        "merger",
        "acquisition",
        "M&A",
        "takeover",
        "buyout",
        "deal",
        "divestiture",
        "spin-off",
        "IPO",
        "offering",
        "secondary offering",
        "debt",
        "notes",
        "refinancing",
        "credit facility",
        "buyback",
        "repurchase",
        "dividend",
        "stake",
        "investment",
    ),
    "Management & Operations": (
        "CEO",
        "CFO",
        "COO",
        "board",
        "appoints",
        "resigns",
        "departure",
        "management change",
        "partnership",
        "contract",
        "customer win",
        "product launch",
        "supply chain",
        "facility",
        "plant",
        "production",
        "layoffs",
        "restructuring",
        "workforce",
    ),
}

#: The four cue-bearing event types, in Table 5's order, then :data:`OTHER_MIXED`.
EVENT_TYPES: tuple[str, ...] = (*CUES, OTHER_MIXED)

_URL = re.compile(r"https?://\S+", re.IGNORECASE)
_BEFORE = r"(?<![0-9a-z_])"
_AFTER = r"(?![0-9a-z_])"


def _cue_pattern(cue: str) -> re.Pattern[str]:
    """The compiled matcher of one Table 5 cue under the module's documented rules."""
    lowered = cue.lower()
    if lowered == "fiscal q":
        return re.compile(_BEFORE + r"fiscal\s+q(?:[1-4])?" + _AFTER)
    words = [re.escape(word).replace(r"\-", "[-\\s]?") for word in lowered.split()]
    return re.compile(_BEFORE + r"\s+".join(words) + r"(?:e?s)?" + _AFTER)


_PATTERNS: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    event_type: tuple((cue, _cue_pattern(cue)) for cue in cues) for event_type, cues in CUES.items()
}


@dataclass(frozen=True)
class EventTypeMatch:
    """The mapper's decision for one anchor.

    Attributes:
        event_type: one of :data:`EVENT_TYPES` (the paper's labels).
        counts: event type -> number of distinct matched cues, for the four cue-bearing types
            (zeros included).
        matched: event type -> the matched cues, as spelled in Table 5 (types without a match are
            absent).
    """

    event_type: str
    counts: dict[str, int] = field(default_factory=dict)
    matched: dict[str, tuple[str, ...]] = field(default_factory=dict)


def normalize_anchor_text(headline: str, summary: str | None = None) -> str:
    """Headline and optional summary joined, HTML-unescaped, URLs removed and lowercased.

    Raises:
        TypeError: if ``headline`` (or a given ``summary``) is not a string.
    """
    if not isinstance(headline, str) or (summary is not None and not isinstance(summary, str)):
        raise TypeError("headline and summary must be strings (summary may be None)")
    text = headline if not summary else f"{headline}\n{summary}"
    return _URL.sub(" ", html.unescape(text)).lower()


def classify_event(headline: str, summary: str | None = None) -> EventTypeMatch:
    """Map one news anchor to its seed-000 event type (Appendix A counting rule).

    Args:
        headline: the anchor's headline (for a tweet anchor, its text).
        summary: optional summary text, counted together with the headline.

    Returns:
        The decision with per-type counts and matched cues. The type with the strictly largest
        count wins; no cue at all, or a tie at the top count, gives :data:`OTHER_MIXED`.

    Raises:
        TypeError: if the inputs are not strings.
    """
    text = normalize_anchor_text(headline, summary)
    counts: dict[str, int] = {}
    matched: dict[str, tuple[str, ...]] = {}
    for event_type, patterns in _PATTERNS.items():
        hits = tuple(cue for cue, pattern in patterns if pattern.search(text))
        counts[event_type] = len(hits)
        if hits:
            matched[event_type] = hits
    top = max(counts.values())
    leaders = [event_type for event_type, count in counts.items() if count == top]
    chosen = leaders[0] if top > 0 and len(leaders) == 1 else OTHER_MIXED
    return EventTypeMatch(chosen, counts, matched)


def event_type(headline: str, summary: str | None = None) -> str:
    """The event-type label of one anchor (see :func:`classify_event`)."""
    return classify_event(headline, summary).event_type


def event_types(headlines: Iterable[str]) -> list[str]:
    """Event-type labels of many anchors (headline only), in input order."""
    return [event_type(headline) for headline in headlines]
