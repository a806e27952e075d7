"""The EDGAR filing index (``finkg fetch``): ``(:Company)-[:SUBMITTED]->(:Submission)``, one per filing EDGAR lists
for the company, its primary document's text ``(:Submission)-[:HAS_DOCUMENT]->(:Document)``, and the per-company,
per-form watermark ``(:Company)-[:FETCHED_UP_TO]->(:EdgarWatermark)`` that tells the next fetch what is new; and
the companyfacts watermark on the company (``companyfacts_sha256``: the response its facts were loaded from), which
lets a fetch skip a response it loaded before."""

from __future__ import annotations

MERGE_EDGAR_COMPANIES = (
    "UNWIND $rows AS row\n"
    "MERGE (c:Company {cik: row.cik})\n"
    "ON CREATE SET c.name = row.name\n"
    "RETURN count(c) AS companies"
)
"""The companies of ``$rows`` (``[{cik, name}]``); a company already in the graph keeps its name (the fact
loaders set it)."""

SET_COMPANY_TICKERS = (
    "UNWIND $rows AS row\n"
    "MATCH (c:Company {cik: row.cik})\n"
    "WHERE c.ticker IS NULL\n"
    "SET c.ticker = row.ticker\n"
    "RETURN count(c) AS companies"
)
"""The ticker a company was fetched by (``$rows``: ``[{cik, ticker}]``), on a company that has none yet: what
``finkg facts history --company TSLA`` and the analyst's company names read."""

COMPANYFACTS_LOADED = (
    "MATCH (c:Company {cik: $cik})\n"
    "WHERE c.companyfacts_sha256 = $sha256\n"
    "MATCH (r:IngestRun {id: $run})\n"
    "WHERE r.status = 'done'\n"
    "RETURN r.counts AS counts"
)
"""One row (the counts of the run that loaded it, JSON) when company ``$cik``'s facts were loaded from the
companyfacts response of SHA-256 ``$sha256`` by run ``$run``, finished; no row otherwise."""

SET_COMPANYFACTS_LOADED = (
    "MATCH (c:Company {cik: $cik})\n"
    "SET c.companyfacts_sha256 = $sha256, c.companyfacts_run = $run, c.companyfacts_loaded_at = $at\n"
    "RETURN count(c) AS companies"
)
"""Company ``$cik``'s companyfacts watermark: the SHA-256 of the response its facts were loaded from, the ingest run
that loaded it and when (``$at``, ISO UTC). Written once the run is recorded done."""

MERGE_SUBMISSIONS = (
    "UNWIND $rows AS row\n"
    "MATCH (c:Company {cik: row.cik})\n"
    "MERGE (s:Submission {adsh: row.adsh})\n"
    "SET s += row.props\n"
    "MERGE (c)-[r:SUBMITTED]->(s)\n"
    "RETURN count(r) AS written"
)
"""One ``(:Submission {adsh})`` per row (``[{cik, adsh, props: {form, filed, period, accepted, ...}}]``) with its
``SUBMITTED`` link from the company, written together (a reader of the index starts from the link)."""

EDGAR_SUBMISSIONS = (
    "MATCH (:Company {cik: $cik})-[:SUBMITTED]->(s:Submission)\n"
    "RETURN s.adsh AS adsh, s.form AS form, s.filed AS filed, EXISTS { (s)-[:HAS_DOCUMENT]->(:Document) } AS text\n"
    "ORDER BY s.filed, s.adsh"
)
"""The filings of company ``$cik`` in the index: accession, form, filed date and whether its text is loaded."""

LINK_SUBMISSION_DOCUMENTS = (
    "UNWIND $rows AS row\n"
    "MATCH (s:Submission {adsh: row.adsh})\n"
    "MATCH (:IngestRun {id: row.run})-[:LOADED]->(d:Document)\n"
    "MERGE (s)-[h:HAS_DOCUMENT]->(d)\n"
    "RETURN count(h) AS linked"
)
"""Link each filing of ``$rows`` (``[{adsh, run}]``) to the documents its text ingest run loaded."""

EDGAR_WATERMARKS = (
    "MATCH (:Company {cik: $cik})-[:FETCHED_UP_TO]->(w:EdgarWatermark)\n"
    "RETURN w.form AS form, w.accepted AS accepted, w.filed AS filed, w.adsh AS adsh\n"
    "ORDER BY form"
)
"""Company ``$cik``'s watermarks: per form, the acceptance time (ISO UTC), filed date and accession of the latest
filing fetched."""

SET_EDGAR_WATERMARKS = (
    "UNWIND $rows AS row\n"
    "MATCH (c:Company {cik: row.cik})\n"
    "MERGE (w:EdgarWatermark {id: row.id})\n"
    "SET w.cik = row.cik, w.form = row.form, w.accepted = row.accepted, w.filed = row.filed, w.adsh = row.adsh,\n"
    "    w.updated_at = row.at\n"
    "MERGE (c)-[:FETCHED_UP_TO]->(w)\n"
    "RETURN count(w) AS watermarks"
)
"""Set the watermarks of ``$rows`` (``[{id: "<cik>:<form>", cik, form, accepted, filed, adsh, at}]``)."""
