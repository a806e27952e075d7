"""Issue 19 part 1 on a loaded quarter: how many filings each fix reaches (co-registrants, revenue from the income
statement, temporary equity, amendments, plausibility flags, insufficient data), Structured+Verifier memos.

Reads the quarter's filings from the configured Neo4j (load it first: ``finkg ingest sec
data/sec-fsds/2009q3.zip``), builds every filing's fact map and structured memo (nothing written), counts, prints
and writes ``bench/results/sec_trust.json`` (:mod:`finkg.eval.results` format) with the accessions behind each
count.

    python bench/sec_trust.py [--source 2009q3.zip]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from finkg.api import open_graph
from finkg.config import load_settings
from finkg.eval.results import RESULTS_DIR, write_result
from finkg.pipelines.memos import thresholds
from generation.memo.claims import INSUFFICIENT_DATA
from generation.memo.systems import MemoContext, generate_memo
from retrieval.facts.concepts import BY_NAME
from retrieval.facts.fact_map import list_filings, read_fact_maps, resolve_amendments


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default="2009q3.zip", help="filings loaded from this file")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = ap.parse_args()
    s = load_settings()
    g = open_graph(s)
    filings = list_filings(g, source=args.source)
    adshs = [f["adsh"] for f in filings]
    maps = list(read_fact_maps(g, adshs, s.memo.batch_size))
    ctx = MemoContext(thresholds(s))
    memos = {fm.adsh: generate_memo("structured", fm, ctx) for fm in maps}
    _, superseded = resolve_amendments(g, adshs)
    synonyms = set(BY_NAME["Revenues"].synonyms)

    def stated(adsh: str) -> int:
        return sum(1 for c in memos[adsh].claims if c.kind == "fact")

    coreg = [fm for fm in maps if fm.entity or fm.coregistrants]
    revenue = [fm for fm in maps if "Revenues" in fm.facts]
    from_is = [fm for fm in revenue if fm.facts["Revenues"].tag not in synonyms]
    derived = [fm for fm in maps if fm.facts.get("Liabilities") and fm.facts["Liabilities"].derived]
    mezzanine = [fm for fm in derived if "balance sheet:" in fm.facts["Liabilities"].basis]
    mezzanine = [fm for fm in mezzanine if not fm.facts["Liabilities"].basis.endswith(": none")]
    amended_later = [fm for fm in maps if fm.filing.get("amended_later")]
    flagged = [(fm.adsh, n, f.flag) for fm in maps for n, f in fm.facts.items() if f.flag]
    thin = [a for a, m in memos.items() if m.risk_label == INSUFFICIENT_DATA]
    figures = {
        "filings": len(maps),
        "coregistrant_filings": len(coreg),
        "coregistrant_filings_with_memo_facts": sum(1 for fm in coreg if stated(fm.adsh) > 0),
        "coregistrant_entity_parentcompany": sum(1 for fm in coreg if fm.entity == "ParentCompany"),
        "filings_with_revenue": len(revenue),
        "revenue_from_income_statement_line": len(from_is),
        "filings_without_canonical_revenue_tag": len(maps) - len(revenue) + len(from_is),
        "derived_liabilities": len(derived),
        "derived_liabilities_with_mezzanine_items": len(mezzanine),
        "prevrpt_filings": len(amended_later),
        "superseded_resolved_to_amendment": len(superseded),
        "amended_later_outside_graph": sum(1 for fm in amended_later if not fm.filing.get("superseded_by")),
        "plausibility_flags": len(flagged),
        "memos_insufficient_data": len(thin),
        "labels": {
            k: sum(1 for m in memos.values() if m.risk_label == k)
            for k in sorted({m.risk_label for m in memos.values()})
        },
        "memos_with_repairs": sum(1 for m in memos.values() if m.verification.counts()["repaired"]),
        "accessions": {
            "coregistrant": [fm.adsh for fm in coreg],
            "revenue_from_income_statement_line": {fm.adsh: fm.facts["Revenues"].tag for fm in from_is},
            "mezzanine": {fm.adsh: fm.facts["Liabilities"].formula for fm in mezzanine},
            "superseded": superseded,
            "plausibility_flags": [list(x) for x in flagged],
            "insufficient_data": thin,
        },
    }
    console = Console()
    for k, v in figures.items():
        if k != "accessions":
            console.print(f"{k}: {v}")
    path = write_result("sec_trust", {"source": args.source}, figures, directory=args.results_dir)
    console.print(f"results: {path}")
    g.close()


if __name__ == "__main__":
    main()
