"""Evidence sentences: each fact rendered as one sentence that carries its audit key, stored as a chunk.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Dataset materialization and evidence base" and
Table 2: "A typical evidence sentence contains evidence_id, CIK, issuer name, accession number,
form type, quarter, XBRL tag, value, unit, statement, line number, period, and filed date." The
sentences are what the Text RAG systems retrieve (TF-IDF, top 30); the parallel fact table is what
the verifier checks against.

Graph: ``(:Chunk {id: "evidence:<fact key>", text, adsh, fact_key, kind: "evidence"})
-[:EVIDENCE_FOR]->(:Fact)``. Deterministic: the same fact always gives the same sentence and id.
"""

from __future__ import annotations

from typing import Any

from retrieval.facts.concepts import iso_date as iso

STATEMENTS = {
    "BS": "balance sheet",
    "IS": "income statement",
    "CF": "cash flow statement",
    "EQ": "equity statement",
    "CI": "comprehensive income statement",
    "UN": "unclassified",
}
CHUNK_PREFIX = "evidence:"


def period_phrase(ddate: str, qtrs: int | None) -> str:
    """``as of 2009-06-30`` for instants, ``for the 2 quarter(s) ended 2009-06-30`` for flows."""
    return f"as of {iso(ddate)}" if not qtrs else f"for the {qtrs} quarter(s) ended {iso(ddate)}"


def evidence_sentence(fact: dict[str, Any], filing: dict[str, Any], company: dict[str, Any], label: str | None) -> str:
    """The evidence sentence of one fact (all fields from the fact row, its filing and company).

    Example: ``Evidence 0001193125-09-189177:104169:Revenues:20090731:1:USD. WAL MART STORES INC
    (CIK 104169) 10-Q accession 0001193125-09-189177, fiscal 2009 Q2, filed 2009-09-09: Revenues
    (Revenues) = 100910000000 USD for the 1 quarter(s) ended 2009-07-31; income statement line 2.``
    The value is written at full scale without separators so it parses back exactly.
    """
    value = fact["value"]
    shown = "nil" if value is None else (f"{value:.0f}" if float(value).is_integer() else repr(float(value)))
    where = ""
    if fact.get("stmt"):
        where = f"; {STATEMENTS.get(fact['stmt'], fact['stmt'])}"
        if fact.get("line") is not None:
            where += f" line {fact['line']}"
    fiscal = " ".join(str(x) for x in (filing.get("fy"), filing.get("fp")) if x)
    return (
        f"Evidence {fact['citation']}. {company.get('name', '')} (CIK {fact['cik']}) {filing.get('form', '')} "
        f"accession {fact['adsh']}, fiscal {fiscal or 'n/a'}, filed {iso(filing.get('filed')) or 'n/a'}: "
        f"{label or fact['tag']} ({fact['tag']}) = {shown} {fact['uom']} "
        f"{period_phrase(fact['ddate'], fact.get('qtrs'))}{where}."
    )


def evidence_rows(
    facts: list[dict[str, Any]],
    filings: list[dict[str, Any]],
    companies: list[dict[str, Any]],
    concepts: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Chunk rows (``id, text, adsh, fact_key, kind``) for ``facts``, one per fact."""
    by_adsh = {f["adsh"]: f for f in filings}
    by_cik = {c["cik"]: c for c in companies}
    labels = {c["key"]: c.get("label") for c in concepts}
    return [
        {
            "id": CHUNK_PREFIX + f["key"],
            "kind": "evidence",
            "adsh": f["adsh"],
            "fact_key": f["key"],
            "text": evidence_sentence(
                f, by_adsh.get(f["adsh"], {}), by_cik.get(f["cik"], {}), labels.get(f["concept"])
            ),
        }
        for f in facts
    ]
