"""Financial facts: the sentences F that the two-stage generator selects from (seed 004, sections 2 and 3.3).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 2 ("financial facts F": "the values and changes
of financial indicators", from AKShare) and section 3.3 (stage 1 selects F_select from F). A fact is one
sentence with an id, the numbers it states (what the verifier checks a report's numbers against) and the
graph nodes it comes from (what a report's citation resolves to in Neo4j Browser).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FinancialFact:
    """One financial fact, as shown to the LLM and as cited by a report.

    Attributes:
        id: deterministic and unique within a question's F, e.g.
            ``akshare:cn_treasury_10y:2015-06-30:level`` or an XBRL fact key ``adsh:cik:tag:ddate:uom``.
        text: the sentence, e.g. ``"China treasury yield, 10-year: 3.62 % on 2015-06-30."``.
        numbers: every number the sentence states, in the units the sentence states them (a report
            number is verified when it matches one of a cited fact's numbers).
        unit: the unit of the main value (``%``, ``pp``, ``CNY 100 million``, ``index``, ``USD``).
        date: ISO date of the observation (the period end for monthly series).
        indicator: the Indicator code or XBRL concept (tag).
        source: where the value comes from, e.g. ``akshare:bond_china_yield`` or ``sec:2009q3.zip``.
        cites: ``(label, key property, key)`` of each graph node behind the fact, e.g.
            ``(("Observation", "id", "cn_treasury_10y:2015-06-30"),)``; a report links to them.
    """

    id: str
    text: str
    numbers: tuple[float, ...]
    unit: str
    date: str
    indicator: str
    source: str
    cites: tuple[tuple[str, str, str], ...] = ()
