"""The analyst agent's tool registry: tool name -> (function, JSON schema the LLM sees).

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 ("The same tool set and calling schema are
shared across all configurations"). The graph and the question's table are bound here, once per question, so
that the LLM's arguments are exactly the schema's properties.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from generation.agent import arithmetic, evidence, facts, tables
from generation.agent.results import ToolResult
from kg import Graph
from retrieval.contract import AsOf, Retriever


@dataclass(frozen=True)
class Tool:
    """One tool: ``function(**arguments) -> ToolResult`` and the JSON schema of its arguments."""

    name: str
    function: Callable[..., ToolResult]
    schema: dict[str, Any]


def _scale(value: float, **kw: str) -> ToolResult:
    return arithmetic.scale(value, kw.get("from", ""), kw.get("to", ""))


def registry(
    graph: Graph | None = None,
    table: tables.Table | None = None,
    as_of: AsOf | None = None,
    sources: Sequence[Retriever] | None = None,
) -> dict[str, Tool]:
    """The tools available for one question.

    Args:
        graph: the Neo4j graph (``fact_lookup`` and ``ratio`` are offered only with one). table: the question's
            table, rows of cell strings (``table_cell``, ``table_column`` and ``table_count`` only with one). as_of: the
            question's date: the graph tools see only filings public by then. sources: the retrievers
            ``search_evidence`` searches (offered only with them; its cutoff never passes ``as_of``).

    Returns:
        name -> :class:`Tool`; always ``calculate``, ``compare``, ``date_diff``, ``scale``.
    """
    tools = [
        Tool("calculate", arithmetic.calculate, arithmetic.CALCULATE_SCHEMA),
        Tool("compare", arithmetic.compare, arithmetic.COMPARE_SCHEMA),
        Tool("date_diff", arithmetic.date_diff, arithmetic.DATE_DIFF_SCHEMA),
        Tool("scale", _scale, arithmetic.SCALE_SCHEMA),
    ]
    if graph is not None:
        tools.append(Tool("fact_lookup", partial(facts.fact_lookup, graph, as_of=as_of), facts.FACT_LOOKUP_SCHEMA))
        tools.append(Tool("ratio", partial(facts.ratio, graph, as_of=as_of), facts.RATIO_SCHEMA))
    if sources:
        search = partial(evidence.search_evidence, list(sources), ceiling=as_of)
        tools.append(Tool("search_evidence", search, evidence.SEARCH_EVIDENCE_SCHEMA))
    if table is not None:
        tools.append(Tool("table_cell", partial(tables.table_cell, table), tables.TABLE_CELL_SCHEMA))
        tools.append(Tool("table_column", partial(tables.table_column, table), tables.TABLE_COLUMN_SCHEMA))
        tools.append(Tool("table_count", partial(tables.table_count, table), tables.TABLE_COUNT_SCHEMA))
    return {t.name: t for t in tools}


def call(tools: dict[str, Tool], name: str, arguments: Any) -> ToolResult:
    """Call tool ``name`` with the LLM's ``arguments`` (a JSON object).

    Returns:
        the tool's result; an error result (never an exception) for an unknown tool, arguments that are not an
        object, or arguments the tool does not take (the schema's properties are named in the message).
    """
    args = arguments if isinstance(arguments, dict) else {}
    if name not in tools:
        return ToolResult(str(name), args, error=f"unknown tool {name!r}: use one of {', '.join(tools)}")
    tool = tools[name]
    if not isinstance(arguments, dict):
        return ToolResult(name, args, error=f"arguments must be a JSON object, got {type(arguments).__name__}")
    allowed = set(tool.schema.get("properties", {}))
    missing = [k for k in tool.schema.get("required", []) if k not in arguments]
    extra = [k for k in arguments if k not in allowed]
    if missing or extra:
        return ToolResult(
            name, args, error=f"{name} takes {', '.join(sorted(allowed))}; missing {missing}, unknown {extra}"
        )
    try:
        return tool.function(**arguments)
    except TypeError as exc:  # e.g. a number where a string was expected, reaching a tool's own check
        return ToolResult(name, args, error=f"bad arguments for {name}: {exc}")
