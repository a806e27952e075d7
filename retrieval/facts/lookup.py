"""Fact lookup under the retrieval contract (:class:`retrieval.contract.Retriever`).

Two retrievers return financial facts as :class:`retrieval.contract.Evidence` of kind ``fact``:

- :class:`CompanyFactRetriever`: the XBRL facts of a named company's latest filing public at ``as_of``
  (:func:`retrieval.facts.company.company_facts`: a filing is public at its EDGAR acceptance, else at the end
  of its filing date; later filings are left out before the latest is chosen);
- :class:`IndicatorFactRetriever`: AKShare indicator facts from the observations published by ``as_of``
  (:func:`retrieval.facts.indicators.indicator_facts`: the Cypher reads only observations with
  ``available_at <= as_of``).

They are lookups, not rankers: every fact found scores 1.0 and the order is the functions' (company and
concept order; indicator code and fact kind). Both raise :class:`retrieval.contract.AsOfRequired` when
``as_of`` is None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kg import Graph
from kg.errors import RetrievalError
from retrieval.contract import AsOf, Evidence, as_of_cutoff
from retrieval.facts.company import company_facts
from retrieval.facts.indicators import FinancialFact, dated_indicator_facts


def fact_evidence(fact: FinancialFact, available_at: str | None, family: str, retriever: str) -> Evidence:
    """A financial fact as :class:`Evidence` (kind ``fact``; ``source_key`` its id; its numbers, unit, date,
    indicator, source and cited nodes in ``metadata``)."""
    return Evidence(
        id=fact.id,
        text=fact.text,
        score=1.0,
        kind="fact",
        source_key=fact.id,
        available_at=available_at,
        source_family=family,
        metadata={
            "numbers": fact.numbers,
            "unit": fact.unit,
            "date": fact.date,
            "indicator": fact.indicator,
            "source": fact.source,
            "cites": fact.cites,
            "retriever": retriever,
        },
    )


def _check_filters(filters: Mapping[str, Any] | None, allowed: Sequence[str], who: str) -> dict[str, Any]:
    given = dict(filters or {})
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise RetrievalError(f"{who}: unknown filter(s) {unknown}; known: {', '.join(allowed)}")
    return given


class _FactLookup:
    """The shared ``search`` of the fact lookups: check ``as_of`` and the filters, then :meth:`_lookup`."""

    name = "facts"
    filter_names: tuple[str, ...] = ()

    def search(
        self, query: str, *, as_of: AsOf | None, k: int | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[Evidence]:
        """The facts public at ``as_of`` (at most ``k``), each scoring 1.0, in the lookup's order.

        Raises:
            AsOfRequired: ``as_of`` is None. RetrievalError: an unknown filter.
        """
        cutoff = as_of_cutoff(as_of)
        out = self._lookup(query, cutoff, _check_filters(filters, self.filter_names, self.name))
        return out if k is None else out[:k]

    def _lookup(self, query: str, cutoff: str, given: dict[str, Any]) -> list[Evidence]:
        raise NotImplementedError


class CompanyFactRetriever(_FactLookup):
    """XBRL facts of companies, as of a time: the facts of each named company's latest filing public at
    ``as_of``.

    ``search(query, as_of=...)``: ``query`` names one company (a CIK or part of its name) unless
    ``filters={"companies": [...]}`` names several.
    """

    name = "company-facts"
    filter_names = ("companies",)

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def _lookup(self, query: str, cutoff: str, given: dict[str, Any]) -> list[Evidence]:
        companies = list(given.get("companies") or ([query] if query.strip() else []))
        found = company_facts(self.graph, companies, cutoff)
        return [fact_evidence(f, found.available_at.get(f.id), "sec", self.name) for f in found.facts]


class IndicatorFactRetriever(_FactLookup):
    """AKShare indicator facts, as of a time: the indicator facts from observations published by ``as_of``.

    Args:
        codes: the Indicator codes (None: every indicator); ``filters={"codes": [...]}`` overrides them per call.
        max_age_days: leave out indicators whose latest available observation is older (see
            :func:`retrieval.facts.indicators.indicator_facts`).

    ``query`` does not select or rank (the report path ranks F by similarity to the question itself).
    """

    name = "indicator-facts"
    filter_names = ("codes",)

    def __init__(self, graph: Graph, codes: Sequence[str] | None = None, max_age_days: int | None = None) -> None:
        self.graph, self.codes, self.max_age_days = graph, codes, max_age_days

    def _lookup(self, query: str, cutoff: str, given: dict[str, Any]) -> list[Evidence]:
        codes = given.get("codes", self.codes)
        found = dated_indicator_facts(self.graph, cutoff, codes, self.max_age_days)
        return [fact_evidence(f, at, "akshare", self.name) for f, at in found]
