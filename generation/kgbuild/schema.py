"""The financial knowledge-graph schema: entity types, relations, their definitions and few-shot examples.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.1 ("schema definition": "the set and
definitions of entity and relation categories in the financial domain"; "prompts with examples for
each category in the schema") and Appendix B.1 (the seven entity types and five relations). The
paper names the categories only; the definitions and examples below are finkg's, written from FOMC
statements that are *not* in the extraction gold set (tests/data/kg_gold.jsonl).

The schema is data: :data:`SCHEMA` is stored in the graph as ``(:KGSchema {version})`` and its
version (a hash of the definitions, the examples and :data:`PROMPT_REVISION`) is part of every
extraction record's id, so changing a definition or an example re-extracts every chunk, and an
unchanged schema skips chunks already done.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from generation.kgbuild.names import ENTITY_TYPES as STORED_ENTITY_TYPES
from kg.cypher import ENTITY_RELATION_TYPES

# Bump when the prompt wording in generation/kgbuild/extraction.py changes (it changes what is extracted).
PROMPT_REVISION = 2


@dataclass(frozen=True)
class Category:
    """One entity type or relation: its code (stored on nodes / as the relationship type), the
    paper's name and finkg's definition with typical examples."""

    code: str
    name: str
    definition: str


ENTITY_TYPES: tuple[Category, ...] = (
    Category(
        "indicator",
        "financial indicator",
        "a measurable economic or financial quantity or aggregate, named without a direction: "
        "federal funds rate, inflation, household spending, unemployment rate, energy prices, M2",
    ),
    Category(
        "indicator_change",
        "change of financial indicator",
        "a movement or trend of one indicator: rise in energy prices, slower job gains, "
        "deterioration in business conditions, decline in the federal funds rate",
    ),
    Category(
        "indicator_comparison",
        "comparison between indicators",
        "two indicators set against each other: long-term yields relative to short-term yields, "
        "wage growth outpacing productivity growth",
    ),
    Category(
        "indicator_composition",
        "composition of two indicators",
        "an aggregate formed of two (or more) named indicators: energy and commodity prices, "
        "fiscal and monetary stimulus, sales and production",
    ),
    Category(
        "threshold_comparison",
        "comparison of financial indicator and threshold",
        "an indicator compared with a number or a stated objective: federal funds rate at 0 to 1/4 "
        "percent, inflation below the 2 percent objective, unemployment rate above 6-1/2 percent",
    ),
    Category(
        "market_status",
        "market status",
        "a state or condition of a market or of the economy: tight credit conditions, strains in "
        "financial markets, housing contraction, moderate economic expansion",
    ),
    Category(
        "policy",
        "macro-economic control policy",
        "a monetary, fiscal or regulatory action or stance: lower the target for the federal funds "
        "rate by 50 basis points, purchases of agency mortgage-backed securities, accommodative "
        "stance of monetary policy",
    ),
)

RELATIONS: tuple[Category, ...] = (
    Category("affect", "affect", "the head causes or changes the tail (now or in the past)"),
    Category("indicate", "indicate", "the head is evidence or a signal of the tail"),
    Category("belong_to", "belong to", "the head is a part, component or sub-category of the tail"),
    Category("equal_to", "equal to", "the head and the tail are the same quantity, level or value"),
    Category(
        "may_lead_to", "may lead to", "the head is expected, intended or at risk to bring about the tail in the future"
    ),
)

ENTITY_CODES: tuple[str, ...] = tuple(c.code for c in ENTITY_TYPES)
RELATION_CODES: tuple[str, ...] = tuple(c.code for c in RELATIONS)
# Neo4j relationship type of each relation code (the graph model in DESIGN.md).
RELATIONSHIP_TYPES: dict[str, str] = {code: code.upper() for code in RELATION_CODES}


@dataclass(frozen=True)
class Example:
    """A few-shot example: numbered sentences and the triples a careful analyst extracts from them.

    ``triples`` rows are ``(sentence number, head, head type, relation, tail, tail type)``.
    """

    sentences: tuple[str, ...]
    triples: tuple[tuple[int, str, str, str, str, str], ...]


# Together the examples use every entity type and every relation at least once ("examples for each
# category in the schema"); sentences taken from, or modelled on, FOMC statements of 2008-01-30 and
# 2014-09-17 (none of the gold-set statements).
EXAMPLES: tuple[Example, ...] = (
    Example(
        (
            "Financial markets remain under considerable stress, and credit has tightened further for some "
            "businesses and households.",
            "Today's policy action, combined with those taken earlier, should help to promote moderate growth "
            "over time and to mitigate the risks to economic activity.",
            "The Federal Open Market Committee decided today to lower its target for the federal funds rate "
            "50 basis points to 3 percent.",
        ),
        (
            (
                1,
                "stress in financial markets",
                "market_status",
                "affect",
                "credit for businesses and households",
                "indicator",
            ),
            (2, "today's policy action", "policy", "may_lead_to", "moderate growth", "market_status"),
            (2, "today's policy action", "policy", "may_lead_to", "risks to economic activity", "indicator_change"),
            (
                3,
                "lower the target for the federal funds rate by 50 basis points",
                "policy",
                "affect",
                "federal funds rate",
                "indicator",
            ),
            (
                3,
                "target for the federal funds rate",
                "indicator",
                "equal_to",
                "federal funds rate at 3 percent",
                "threshold_comparison",
            ),
        ),
    ),
    Example(
        (
            "Household spending appears to be rising moderately and business fixed investment is advancing, "
            "while the recovery in the housing sector remains slow.",
            "Fiscal policy is restraining economic growth, although the extent of restraint is diminishing.",
            "Inflation has been running below the Committee's longer-run objective.",
        ),
        (
            (
                1,
                "moderate rise in household spending",
                "indicator_change",
                "belong_to",
                "economic activity",
                "indicator",
            ),
            (1, "slow recovery in the housing sector", "market_status", "indicate", "economic growth", "indicator"),
            (2, "fiscal policy", "policy", "affect", "economic growth", "indicator"),
            (
                3,
                "inflation below the longer-run objective",
                "threshold_comparison",
                "belong_to",
                "inflation",
                "indicator",
            ),
        ),
    ),
    Example(
        (
            "Recent information indicates that economic activity remains weak.",
            "Household and business spending has been subdued.",
            "The substantial easing of monetary policy to date, combined with ongoing measures to foster "
            "market liquidity, should help to promote moderate growth over time.",
            "Energy and other commodity prices have increased, and some indicators of inflation expectations "
            "have risen relative to long-term averages.",
        ),
        (
            (1, "recent information", "indicator", "indicate", "weak economic activity", "market_status"),
            (
                2,
                "household and business spending",
                "indicator_composition",
                "belong_to",
                "economic activity",
                "indicator",
            ),
            (3, "easing of monetary policy", "policy", "may_lead_to", "moderate growth", "market_status"),
            (
                4,
                "increase in energy and commodity prices",
                "indicator_change",
                "affect",
                "inflation expectations",
                "indicator",
            ),
            (
                4,
                "inflation expectations relative to long-term averages",
                "indicator_comparison",
                "indicate",
                "rise in inflation expectations",
                "indicator_change",
            ),
        ),
    ),
)


def _check() -> None:
    # the codes the graph stores (generation.kgbuild.names, kg.cypher) are these categories, in this order
    if tuple(STORED_ENTITY_TYPES) != ENTITY_CODES or tuple(RELATIONSHIP_TYPES[c] for c in RELATION_CODES) != tuple(
        ENTITY_RELATION_TYPES
    ):
        raise ValueError("the schema's categories differ from the stored entity / relationship types")
    for ex in EXAMPLES:
        for n, _h, ht, rel, _t, tt in ex.triples:
            if (
                not 1 <= n <= len(ex.sentences)
                or ht not in ENTITY_CODES
                or tt not in ENTITY_CODES
                or rel not in RELATION_CODES
            ):
                raise ValueError(f"bad few-shot triple {(n, ht, rel, tt)}")
    used_types = {t for ex in EXAMPLES for tr in ex.triples for t in (tr[2], tr[5])}
    used_rels = {tr[3] for ex in EXAMPLES for tr in ex.triples}
    missing = (set(ENTITY_CODES) - used_types) | (set(RELATION_CODES) - used_rels)
    if missing:
        raise ValueError(f"no few-shot example for: {sorted(missing)}")


_check()


def schema_document() -> dict:
    """The schema as one JSON-serializable mapping (types, relations, examples, prompt revision)."""
    return {
        "entity_types": [asdict(c) for c in ENTITY_TYPES],
        "relations": [asdict(c) for c in RELATIONS],
        "examples": [asdict(e) for e in EXAMPLES],
        "prompt_revision": PROMPT_REVISION,
    }


def schema_version() -> str:
    """``kgs-<12 hex>``: the sha256 of :func:`schema_document` (canonical JSON). Deterministic."""
    blob = json.dumps(schema_document(), sort_keys=True, ensure_ascii=False).encode()
    return "kgs-" + hashlib.sha256(blob).hexdigest()[:12]
