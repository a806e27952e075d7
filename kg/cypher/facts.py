"""The SEC facts subgraph (filings, facts, companies, fact history) and AKShare indicator facts."""

from __future__ import annotations

# --------------------------------------------------------------------------- memo reads

LIST_FILINGS = (
    "MATCH (c:Company)-[:FILED]->(f:Filing)\n"
    "WHERE ($adshs IS NULL OR f.adsh IN $adshs) AND ($source IS NULL OR f.source = $source)\n"
    "RETURN f.adsh AS adsh, f.form AS form, f.period AS period, c.cik AS cik, c.name AS name,\n"
    "       c.sic AS sic, f.filed AS filed, f.accepted AS accepted\n"
    "ORDER BY adsh"
)

FILING_SOURCES = (
    "MATCH (:Company)-[:FILED]->(f:Filing) WHERE f.source IS NOT NULL\n"
    "RETURN f.source AS source, count(f) AS filings ORDER BY source"
)

_CANDIDATES = (
    "WITH c, f, [(f)-[:REPORTS]->(x:Fact) WHERE x.tag IN $tags\n"
    "          AND x.period_role IN ['current', 'current_ytd'] AND x.uom = 'USD'\n"
    "        | x {.key, .citation, .tag, .value, .ddate, .qtrs, .period_role, .decimals, .coreg}] AS facts\n"
    "RETURN f {.adsh, .form, .period, .fy, .fp, .filed, .accepted, .source, .prevrpt} AS filing,\n"
    "       c {.cik, .name, .sic} AS company, facts,\n"
    "       [(c)-[:FILED]->(g:Filing) WHERE g.period = f.period AND g.adsh <> f.adsh\n"
    "        | g {.adsh, .form, .period, .filed, .accepted}] AS same_period"
)

FILING_FACT_CANDIDATES = "UNWIND $adshs AS adsh\nMATCH (c:Company)-[:FILED]->(f:Filing {adsh: adsh})\n" + _CANDIDATES
"""For each accession of ``$adshs``: the filing (with sub.txt's ``prevrpt``), its company, its candidate facts of
its own period with a tag of ``$tags`` (every legal entity: ``coreg`` null for the registrant) and the company's
other filings for the same period (an amendment and what it amends)."""

FILING_STATEMENT_FACTS = (
    "UNWIND $rows AS row\n"
    "MATCH (f:Filing {adsh: row.adsh})-[:REPORTS]->(x:Fact)\n"
    "WHERE x.stmt = row.stmt AND x.period_role IN ['current', 'current_ytd'] AND x.uom = 'USD'\n"
    "  AND x.value IS NOT NULL AND x.line IS NOT NULL AND coalesce(x.coreg, '') = coalesce(row.coreg, '')\n"
    "RETURN row.adsh AS adsh, row.stmt AS stmt,\n"
    "       collect(x {.key, .citation, .tag, .value, .ddate, .qtrs, .period_role, .decimals, .coreg, .report, .line,\n"
    "                  .plabel}) AS facts"
)
"""For each ``$rows`` item ``{adsh, stmt, coreg}``: the filing's own-period facts of statement ``stmt`` (pre.txt's
``BS``, ``IS`` ...) for legal entity ``coreg`` (null: the registrant), with their presentation (report, line,
plabel): where a filing's top revenue line and its items between liabilities and equity are found."""

QUARTER_FACT_CANDIDATES = (
    "MATCH (c:Company)-[:FILED]->(f:Filing {source: $source})\n"
    + _CANDIDATES
    + ",\n       CASE WHEN any(x IN facts WHERE x.tag = 'Liabilities' AND x.coreg IS NULL) THEN []\n"
    "       ELSE [(f)-[:REPORTS]->(y:Fact) WHERE y.stmt = 'BS' AND y.period_role IN ['current', 'current_ytd']\n"
    "               AND y.uom = 'USD' AND y.value IS NOT NULL AND y.line IS NOT NULL\n"
    "             | y {.key, .citation, .tag, .value, .ddate, .qtrs, .period_role, .decimals, .coreg, .report, .line,\n"
    "                  .plabel}] END AS balance_sheet\n"
    "ORDER BY filing.adsh"
)
"""Every filing loaded from file ``$source`` (an FSDS quarter), in one read: the columns of
:data:`FILING_FACT_CANDIDATES`, and ``balance_sheet``: its own-period balance-sheet facts with their presentation
(every legal entity; empty when the registrant reports ``Liabilities``), what a derived ``Liabilities`` needs.
The peer ratios of a memo's picture are computed from it."""

FILER_TAG_VALUES = (
    "UNWIND $rows AS row\n"
    "MATCH (:Company {cik: row.cik})-[:FILED]->(f:Filing)-[:REPORTS]->(x:Fact)\n"
    "WHERE x.tag IN row.tags AND x.uom = 'USD' AND x.value IS NOT NULL\n"
    "  AND coalesce(x.coreg, '') = coalesce(row.coreg, '')\n"
    "RETURN row.adsh AS adsh, collect(x {.tag, .ddate, .qtrs, .value, adsh: f.adsh}) AS facts"
)
"""For each ``$rows`` item ``{adsh, cik, coreg, tags}``: every value the filer (legal entity ``coreg``) reported
under ``tags``, in any filing and period (comparatives included): what a value's plausibility is judged against."""

# Readers of filings start from (:Company)-[:FILED]->(:Filing), the link an ingest writes last for a filing
# (ingest/runs.py): a filing whose ingest died half-way is not seen, nor are its evidence chunks.

EVIDENCE_CHUNKS_PAGE = (
    "MATCH (c:Chunk) WHERE c.kind = 'evidence' AND c.id > $after\n"
    "  AND EXISTS { (:Company)-[:FILED]->(:Filing {adsh: c.adsh}) }\n"
    "WITH c ORDER BY c.id LIMIT $limit\n"
    "OPTIONAL MATCH (f:Filing {adsh: c.adsh})\n"
    "RETURN c.id AS id, c.adsh AS adsh, c.fact_key AS fact_key, c.text AS text,\n"
    "       f.accepted AS accepted, f.filed AS filed\n"
    "ORDER BY c.id"
)
"""One page of evidence sentences (keyset on ``c.id``), each with its filing's ``accepted`` and ``filed``
(when the sentence became public: :func:`retrieval.facts.fact_map.filing_available_at`)."""

DELETE_FACTS_OF_FILINGS = (
    "UNWIND $adshs AS a\n"
    "MATCH (:Filing {adsh: a})-[:REPORTS]->(x:Fact)\n"
    "CALL (x) { OPTIONAL MATCH (c:Chunk)-[:EVIDENCE_FOR]->(x) DETACH DELETE c, x }\n"
    "IN TRANSACTIONS OF 5000 ROWS"
)

FILINGS_PRESENT = "UNWIND $adshs AS a\nMATCH (f:Filing {adsh: a})\nRETURN f.adsh AS adsh"
"""Which accession numbers of ``$adshs`` already have a ``(:Filing)`` (finished or not): only their facts can
conflict with a file about to be loaded (:mod:`ingest.sec.conflicts`)."""

FACT_VALUE_CONFLICTS = (
    "UNWIND $rows AS row\n"
    "MATCH (x:Fact {key: row.key})\n"
    "WHERE x.value <> row.value OR (x.value IS NULL) <> (row.value IS NULL)\n"
    "OPTIONAL MATCH (f:Filing {adsh: x.adsh})\n"
    "RETURN x.key AS key, x.adsh AS adsh, x.tag AS tag, x.ddate AS ddate, x.qtrs AS qtrs, x.uom AS uom,\n"
    "       x.coreg AS coreg, x.value AS value, row.value AS file_value,\n"
    "       coalesce(x.source_file, f.source) AS source\n"
    "ORDER BY key"
)
"""For each ``$rows`` item ``{key, value}`` (a fact about to be written): the fact of that key already in the graph
when it holds another value (or a value where the row has none, or none where it has one), with the file it came
from (``source_file``; the filing's ``source`` for facts written before facts recorded theirs)."""

RECORD_FACT_CONFLICTS = (
    "UNWIND $rows AS row\n"
    "MATCH (x:Fact {key: row.key})\n"
    "FOREACH (_ IN CASE WHEN row.resolution = 'replaced' THEN [1] ELSE [] END |\n"
    "  SET x.value = row.new_value, x.source_file = row.against)\n"
    "WITH x, row\n"
    "OPTIONAL MATCH (x)-[:HAS_CONFLICT]->(old:FactConflict {value_text: row.new_text})\n"
    "DETACH DELETE old\n"
    "WITH DISTINCT x, row\n"
    "MERGE (x)-[:HAS_CONFLICT]->(c:FactConflict {source_file: row.source_file, value_text: row.value_text})\n"
    "ON CREATE SET c.recorded_at = $at\n"
    "SET c.value = row.value, c.fact_key = row.key, c.resolution = row.resolution, c.against = row.against\n"
    "RETURN count(c) AS updated"
)
"""Record, for each ``$rows`` item ``{key, source_file, value, value_text, resolution, against, new_value,
new_text}``, the value of fact ``key`` that file ``source_file`` gave and the fact does not hold, as
``(:Fact)-[:HAS_CONFLICT]->(:FactConflict {source_file, value, recorded_at, resolution, against})`` (one node per
fact, file and value, told apart by ``value_text``; ``recorded_at`` is when it was first seen). ``resolution``
``kept``: the fact kept its value (from file ``against``) and ``source_file``'s is recorded; ``replaced``: file
``against`` replaced it, so the fact takes ``new_value`` (null removes the value) and ``source_file = against``
first. A record of the value the fact now holds (``new_text``) is no conflict any more and is removed."""

COMPANY_FILINGS = (
    "MATCH (c:Company)-[:FILED]->(f:Filing)\n"
    "WHERE c.cik = $cik OR toLower(c.name) CONTAINS toLower($name)\n"
    "RETURN c.cik AS cik, c.name AS name, f.adsh AS adsh, f.form AS form, f.period AS period, f.filed AS filed,\n"
    "       f.accepted AS accepted\n"
    "ORDER BY f.period DESC, f.filed DESC, f.adsh DESC"
)
"""The filings of the companies a question names, by CIK (``$cik``, an integer or null) or by a
case-insensitive part of the name, latest period first."""

COMPANY_CONCEPT_LABELS = (
    "UNWIND $ciks AS cik\n"
    "MATCH (:Company {cik: cik})-[:FILED]->(:Filing)-[:REPORTS]->(x:Fact)\n"
    "WHERE x.uom = 'USD' AND x.value IS NOT NULL AND (x.coreg IS NULL OR x.coreg = 'ParentCompany')\n"
    "WITH DISTINCT x.tag AS tag, x.concept AS concept, x.plabel AS plabel, x.stmt AS stmt\n"
    "OPTIONAL MATCH (k:Concept {key: concept})\n"
    "RETURN tag, collect(DISTINCT k.label) AS labels, collect(DISTINCT plabel) AS plabels,\n"
    "       collect(DISTINCT k.iord) AS iord, collect(DISTINCT k.custom) AS custom, collect(DISTINCT stmt) AS stmts\n"
    "ORDER BY tag"
)
"""The elements the companies ``$ciks`` report in USD (whole entity), each with its standard labels (tag.txt
``tlabel``), the filers' own line labels (pre.txt ``plabel``), instant or duration (``iord``) and whether it is a
filer's own extension (``custom``), and the statements it is presented on (pre.txt ``stmt``): what a question naming
an element by its label is matched against."""

COMPANY_CONCEPT_FACTS = (
    "MATCH (c:Company)-[:FILED]->(f:Filing)-[:REPORTS]->(x:Fact)\n"
    "WHERE (c.cik = $cik OR ($name IS NOT NULL AND toLower(c.name) CONTAINS toLower($name)))\n"
    "  AND x.tag IN $tags AND x.ddate = $ddate AND x.uom = $uom\n"
    "  AND (x.coreg IS NULL OR (x.coreg = 'ParentCompany'\n"
    "       AND NOT EXISTS { MATCH (f)-[:REPORTS]->(y:Fact) WHERE y.coreg IS NULL }))\n"
    "RETURN c.cik AS cik, c.name AS company, c.sic AS sic, f.adsh AS adsh, f.form AS form, f.filed AS filed,\n"
    "       f.accepted AS accepted, x.key AS key, x.citation AS citation, x.tag AS tag, x.value AS value,\n"
    "       x.ddate AS ddate, x.qtrs AS qtrs, x.uom AS uom, x.decimals AS decimals, x.period_role AS period_role,\n"
    "       x.coreg AS coreg\n"
    "ORDER BY cik, f.filed DESC, f.adsh DESC, key"
)
"""The facts with a tag of ``$tags`` at period end ``$ddate`` (``YYYYMMDD``) in unit ``$uom`` that the filings
of a company report, the company named by CIK (``$cik``, an integer or null) or by a case-insensitive part of its
name (``$name`` or null); comparatives included (a 10-Q states the prior year's figures too). The analyst agent's
``fact_lookup`` (:mod:`generation.agent.facts`) resolves synonyms and picks among them. The registrant's facts
(no ``coreg``); in a co-registrant filing with none, the ``ParentCompany`` facts, as the memo reads them
(:func:`retrieval.facts.statements.parent_entity`), returned with their ``coreg``."""


COMPANY_MATCHES = (
    "MATCH (c:Company) WHERE c.cik = $cik OR toLower(c.name) CONTAINS toLower($name)\n"
    "   OR toLower(coalesce(c.ticker, '')) = toLower($name)\n"
    "RETURN c.cik AS cik, c.name AS name ORDER BY c.name LIMIT 10"
)
"""Companies named by CIK (``$cik``, an integer or null), ticker, or a case-insensitive part of the name."""

FACT_HISTORY = (
    "MATCH (c:Company {cik: $cik})-[:FILED]->(f:Filing)-[:REPORTS]->(x:Fact)\n"
    "WHERE x.tag IN $tags AND ($uom IS NULL OR x.uom = $uom) AND x.coreg IS NULL\n"
    "RETURN x.key AS key, x.tag AS tag, x.ddate AS ddate, x.qtrs AS qtrs, x.uom AS uom, x.value AS value,\n"
    "       f.adsh AS adsh, f.form AS form, f.filed AS filed\n"
    "ORDER BY ddate, qtrs, filed, adsh"
)
"""Every fact of company ``$cik`` reported under one of ``$tags`` (in ``$uom``; null: any), with the filing
that reported it: a fact's history across filings (``finkg facts history``). Only filings linked by
``FILED`` (complete ones) count, and only the registrant's facts (a co-registrant's carry ``coreg``)."""


FACT_CONFLICTS = (
    "UNWIND $keys AS key\n"
    "MATCH (x:Fact {key: key})-[:HAS_CONFLICT]->(k:FactConflict)\n"
    "OPTIONAL MATCH (f:Filing {adsh: x.adsh})\n"
    "RETURN x.key AS key, x.value AS value, coalesce(x.source_file, f.source) AS source,\n"
    "       k.value AS other_value, k.source_file AS other_file, k.resolution AS resolution,\n"
    "       k.against AS against, k.recorded_at AS recorded_at\n"
    "ORDER BY key, recorded_at, other_file"
)
"""The conflict records of the facts ``$keys`` (:mod:`ingest.sec.conflicts`): per record, the fact's value and the
file it holds it from (``source``; the filing's ``source`` for facts written before facts recorded theirs), the
other file's value (``other_value``, null: that file gave none) and name (``other_file``), the ``resolution``
(``kept``: the fact kept its value; ``replaced``: file ``against`` replaced ``other_file``'s value), ``against`` and
``recorded_at`` (when first seen). Facts without a record return nothing (``finkg facts history``)."""

# --------------------------------------------------------------------------- AKShare indicators and financial facts
# (seed 004, sections 2 and 3.3: ingest/market/akshare.py, finkg/pipelines/indicators.py, retrieval/facts/indicators.py)

INDICATOR_SERIES = (
    "MATCH (i:Indicator {code: $code})-[:HAS_OBSERVATION]->(o:Observation)\n"
    "WHERE o.available_at <= $cutoff AND o.date >= date($start)\n"
    "RETURN i.name AS name, i.unit AS unit, i.frequency AS frequency, o.date AS date, o.value AS value\n"
    "ORDER BY o.date"
)
"""The observations of Indicator ``$code`` dated on or after ``$start`` (ISO date) and available at ``$cutoff``
(ISO UTC): ``name, unit, frequency, date, value`` by date (a report's chart of a cited indicator)."""

INDICATOR_FACT_ROWS = (
    "MATCH (i:Indicator) WHERE $codes IS NULL OR i.code IN $codes\n"
    "CALL (i) {\n"
    "  MATCH (i)-[:HAS_OBSERVATION]->(o:Observation) WHERE o.available_at <= $cutoff\n"
    "  WITH o ORDER BY o.date DESC LIMIT 1\n"
    "  WITH o WHERE $oldest IS NULL OR o.date >= date($oldest)\n"
    "  RETURN o\n"
    "}\n"
    "CALL (i, o) {\n"
    "  OPTIONAL MATCH (i)-[:HAS_OBSERVATION]->(p:Observation)\n"
    "  WHERE p.date < o.date AND p.available_at <= $cutoff\n"
    "  WITH p ORDER BY p.date DESC LIMIT 1\n"
    "  RETURN p {.id, .date, .value} AS previous\n"
    "}\n"
    "CALL (i, o) {\n"
    "  UNWIND $months AS m\n"
    "  CALL (i, o, m) {\n"
    "    WITH o.date - duration({months: m}) AS day, date.truncate('month', o.date) - duration({months: m}) AS month\n"
    "    OPTIONAL MATCH (i)-[:HAS_OBSERVATION]->(q:Observation)\n"
    "    WHERE q.available_at <= $cutoff AND CASE i.frequency\n"
    "      WHEN 'monthly' THEN date.truncate('month', q.date) = month\n"
    "      ELSE q.date <= day AND q.date >= day - duration({days: $max_gap_days}) END\n"
    "    WITH q ORDER BY q.date DESC LIMIT 1\n"
    "    RETURN q {.id, .date, .value, months: m} AS back\n"
    "  }\n"
    "  RETURN collect(back) AS lookbacks\n"
    "}\n"
    "RETURN i {.code, .name, .unit, .frequency, .category, .source_function} AS indicator,\n"
    "       o {.id, .date, .value, .available_at} AS latest, previous, lookbacks\n"
    "ORDER BY i.code"
)
"""For each Indicator of ``$codes`` (all when null): its latest Observation available at ``$cutoff`` (an ISO UTC
string; ``available_at <= $cutoff``), the observation before it, and for each ``m`` of ``$months`` the
observation ``m`` months earlier (monthly series: the same calendar month; daily series: the last one on or
before the day, at most ``$max_gap_days`` before it), each also available at ``$cutoff``. Indicators with no
available observation, or whose latest one is dated before ``$oldest`` (an ISO date; null: no limit), give no
row. Returns ``indicator``, ``latest``, ``previous`` (null when none) and
``lookbacks`` (``[{id, date, value, months}]``, missing ones left out)."""
