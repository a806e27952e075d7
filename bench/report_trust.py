"""What a report batch publishes, checked again from its records: numbers verified / unverified and unsupported claims
in the published text, against the model's own answer in the same records (the baseline: what would have been
published before claims were withheld), and whether a company question cites knowledge about another subject.

Issue 44's measure ("the demo's report batch: numbers verified / unverified, unsupported claims"). Reads the two-stage
report records ``<id>.json`` a ``finkg report --batch`` wrote (the demo's are ``out/demo/reports``) and, per report,
re-runs the number check (:func:`generation.verify.report_numbers.check_numbers`) and the answer gate
(:func:`generation.agent.gate.gate_report`) on

- ``published``: the record's ``answer`` (the text the Markdown, the JSON and the Report node carry);
- ``model``: the record's ``answer_raw`` (the model's answer as it came, the baseline);

with the facts the report was given (``selected_facts``) and those it cites. It also counts, for a question naming
companies, the cited knowledge items that mention none of them (``off_subject_knowledge``: an FOMC triple in a
company report). No LLM and no graph: it reads files only.

    python bench/report_trust.py out/demo/reports [--name demo-reports]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finkg.eval.results import write_result  # noqa: E402
from generation.agent.gate import gate_report  # noqa: E402
from generation.report.two_stage import citation_refs  # noqa: E402
from generation.verify.report_numbers import check_numbers  # noqa: E402
from retrieval.facts.indicators import FinancialFact  # noqa: E402
from retrieval.facts.names import mentions_company  # noqa: E402


def _facts(rec: dict[str, Any]) -> list[FinancialFact]:
    return [
        FinancialFact(
            id=str(f["id"]),
            text=str(f["text"]),
            numbers=tuple(float(x) for x in f["numbers"]),
            unit=str(f["unit"]),
            date=str(f["date"]),
            indicator=str(f["indicator"]),
            source=str(f["source"]),
            cites=tuple((str(a), str(b), str(c)) for a, b, c in f.get("cites") or ()),
        )
        for f in rec["selected_facts"]
    ]


def check_text(text: str, rec: dict[str, Any], facts: list[FinancialFact]) -> dict[str, int]:
    """Numbers verified / context / unverified and unsupported claims of ``text`` under ``rec``'s facts."""
    short = {f"F{i}": f.id for i, f in enumerate(facts, 1)}
    marked, checks = check_numbers(text, rec["question"], facts, short)
    cited_ids = {short[r] for r in citation_refs(text) if r in short}
    cited = [(f.indicator, f.text) for f in facts if f.id in cited_ids]
    gate = gate_report(marked, [(c.text, c.status) for c in checks], cited)
    count = {s: sum(c.status == s for c in checks) for s in ("verified", "context", "unverified")}
    return {**count, "unsupported": len(gate.unsupported)}


def report_row(rec: dict[str, Any]) -> dict[str, Any]:
    """One report: the published text's and the model's counts, withheld claims, off-subject knowledge."""
    facts = _facts(rec)
    published = check_text(rec["answer"], rec, facts)
    model = check_text(rec["answer_raw"], rec, facts)
    k_cited = [k for k in rec["k2"] if k["id"] in set(rec["cited_knowledge"])]
    off = [k for k in k_cited if rec["companies"] and not mentions_company(k["text"], rec["companies"])]
    return {
        "report": rec["id"],
        "companies": ", ".join(rec["companies"]) or "-",
        "published_verified": published["verified"],
        "published_unverified": published["unverified"],
        "published_unsupported": published["unsupported"],
        "model_unverified": model["unverified"],
        "model_unsupported": model["unsupported"],
        "withheld_claims": len(rec.get("withheld") or []),
        "knowledge_shown": len(rec["k2"]),
        "off_subject_knowledge": len(off),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description="Re-check what a report batch published (issue 44).")
    ap.add_argument("folder", type=Path, help="a finkg report --batch --out folder (two-stage records <id>.json)")
    ap.add_argument("--name", default="demo-reports", help="results file name (bench/results/<name>.json)")
    a = ap.parse_args()
    records = []
    for path in sorted(a.folder.glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(rec, dict) and "answer_raw" in rec and rec.get("status") == "done":
            records.append(rec)
    if not records:
        print(f"{a.folder}: no two-stage report records", file=sys.stderr)
        return 2
    rows = [report_row(r) for r in records]
    keys = [k for k in rows[0] if k not in ("report", "companies")]
    figures = {k: sum(r[k] for r in rows) for k in keys} | {"reports": len(rows)}
    for r in rows:
        print("  ".join(f"{k}={v}" for k, v in r.items()))
    print("totals: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    model = {str(r["model_id"]) for r in records}
    write_result(a.name, {"folder": str(a.folder), "models": sorted(model)}, figures, tables={a.name: rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
