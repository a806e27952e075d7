"""``finkg eval memos``: the paper's four-system evaluation, on the real filings in the graph.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Numeric verification and evaluation metrics"
and Tables 5-12. Memo tasks are the filings whose eight required facts all resolve (derived
Liabilities counts; see :data:`retrieval.facts.concepts.REQUIRED`). Definitions (claim level):

- **retrieval recall@k / precision@k** (text systems): a required concept is recalled at k when
  all its gold fact keys (the components, for a derived figure) are among the top-k sentences;
  recall = recalled / 8; precision = gold sentences in the top k / k.
- **numeric exactness**: fact and ratio claims whose final value is within tolerance of gold
  (facts: max($1, 0.01%), XBRL decimals; ratios: 0.0005), over those that have a gold value.
- **citation precision**: fact and ratio claims whose cited keys are exactly the gold keys (the
  paper checks accession and tag; finkg's key also fixes the period), over the same claims.
- **ratio MAE** (and per-ratio MAE and 95th percentile absolute error).
- **unsupported claims / memo**: fact and ratio claims that cite no evidence.
- **hallucinated claims / memo**: a fact off by more than the tolerance, a ratio off by more than
  0.025, or a wrong risk label.
- **risk-label accuracy** against the label the gold facts imply; **latency** mean and 95th pct.
- **error taxonomy**: numeric error, citation error and unsupported-claim rates per claim.
- **mutation test** (structured memos): wrong numbers injected into the text (a changed digit, a
  wrong scale word, a flipped sign, a swapped period end, a swapped span) must all be caught, and
  the repair must restore the original text.
"""

from __future__ import annotations

import csv
import json
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from finkg.config import Settings
from finkg.eval.results import write_result
from finkg.pipelines.memos import build_context
from generation.memo.claims import HALLUCINATED_RATIO_ERROR, RATIOS, number
from generation.memo.systems import SYSTEM_NAMES, SYSTEMS, MemoContext, MemoResult, generate_memo
from generation.verify.claims import fact_tolerance, gold_for_claims, verify_body
from generation.verify.numbers import find_numbers
from kg import Graph
from kg.progress import StageProgress
from retrieval.facts import concepts as cc
from retrieval.facts.fact_map import FactMap, list_filings, read_fact_maps

KS = (5, 10, 20, 30)
SCALE_SWAP = {"million": "billion", "billion": "million", "thousand": "million"}


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100, linear interpolation) of ``values``; 0.0 when empty."""
    if not values:
        return 0.0
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = int(pos), min(int(pos) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass
class MemoScore:
    """Claim-level outcomes of one memo (see the module docstring for the definitions)."""

    system: str
    adsh: str
    sic: int | None
    numeric: int = 0
    exact: int = 0
    cited_correct: int = 0
    unsupported: int = 0
    hallucinated: int = 0
    claims: int = 0
    label_correct: bool = False
    label: str = ""
    latency_ms: float = 0.0
    ratio_errors: dict[str, float] = field(default_factory=dict)
    recall: dict[int, float] = field(default_factory=dict)
    precision: dict[int, float] = field(default_factory=dict)


def score_memo(memo: MemoResult, fm: FactMap, ctx: MemoContext) -> MemoScore:
    """Score one memo's final claims against the filing's gold facts."""
    golds = gold_for_claims(memo.claims, fm, ctx.thresholds)
    s = MemoScore(memo.system, fm.adsh, fm.filing.get("sic"), latency_ms=memo.latency_ms)
    for c in memo.claims:
        g = golds[c.n]
        s.claims += 1
        if c.kind == "label":
            s.label = str(c.value)
            s.label_correct = c.value == g.value
            s.hallucinated += 0 if s.label_correct else 1
            continue
        if c.kind not in ("fact", "ratio") or g.value is None:
            continue
        s.numeric += 1
        value, gold = number(c.value), float(g.value)
        if c.kind == "fact":
            ok = abs(value - gold) <= fact_tolerance(gold, g.decimals)
            s.hallucinated += 0 if ok else 1
        else:
            err = abs(value - gold)
            s.ratio_errors[c.name] = err
            ok = err <= 0.0005
            s.hallucinated += 1 if err > HALLUCINATED_RATIO_ERROR else 0
        s.exact += ok
        s.cited_correct += bool(c.citations) and set(c.citations) == set(g.keys)
        s.unsupported += not c.citations
    if memo.hits:
        gold_keys = {name: set(fm.facts[name].cited_keys) for name in cc.REQUIRED if name in fm.facts}
        all_gold = set().union(*gold_keys.values()) if gold_keys else set()
        for k in KS:
            top = {h.fact_key for h in memo.hits[:k]}
            s.recall[k] = sum(keys <= top for keys in gold_keys.values()) / len(cc.REQUIRED)
            s.precision[k] = len(top & all_gold) / k
    return s


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def summarize(scores: Sequence[MemoScore]) -> dict[str, dict[str, Any]]:
    """Per system: Table 6 figures plus the taxonomy and label distribution (raw numbers)."""
    out: dict[str, dict[str, Any]] = {}
    for system in SYSTEMS:
        ss = [s for s in scores if s.system == system]
        if not ss:
            continue
        numeric = sum(s.numeric for s in ss)
        claims = sum(s.claims for s in ss)
        ratio_errs = [e for s in ss for e in s.ratio_errors.values()]
        lat = [s.latency_ms for s in ss]
        out[system] = {
            "memos": len(ss),
            "numeric_exact": sum(s.exact for s in ss) / numeric if numeric else 0.0,
            "citation_precision": sum(s.cited_correct for s in ss) / numeric if numeric else 0.0,
            "ratio_mae": statistics.fmean(ratio_errs) if ratio_errs else 0.0,
            "unsupported_per_memo": sum(s.unsupported for s in ss) / len(ss),
            "hallucinated_per_memo": sum(s.hallucinated for s in ss) / len(ss),
            "risk_label_accuracy": sum(s.label_correct for s in ss) / len(ss),
            "latency_ms_mean": statistics.fmean(lat),
            "latency_ms_p95": percentile(lat, 95),
            "numeric_error_rate": 1 - (sum(s.exact for s in ss) / numeric if numeric else 0.0),
            "citation_error_rate": 1 - (sum(s.cited_correct for s in ss) / numeric if numeric else 0.0),
            "unsupported_rate": sum(s.unsupported for s in ss) / claims if claims else 0.0,
            "labels": dict(Counter(s.label for s in ss)),
        }
    return out


def retrieval_table(scores: Sequence[MemoScore]) -> list[dict[str, Any]]:
    """Table 5: mean recall and precision at k of the text retriever (Text RAG memos)."""
    ss = [s for s in scores if s.system == "text-rag" and s.recall]
    return (
        [
            {
                "k": k,
                "mean recall": _pct(statistics.fmean(s.recall[k] for s in ss)),
                "mean precision": _pct(statistics.fmean(s.precision[k] for s in ss)),
            }
            for k in KS
        ]
        if ss
        else []
    )


def system_table(summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 6: overall memo reliability by system."""
    return [
        {
            "system": SYSTEM_NAMES[k],
            "memos": v["memos"],
            "numeric exact": _pct(v["numeric_exact"]),
            "citation precision": _pct(v["citation_precision"]),
            "ratio MAE": f"{v['ratio_mae']:.4f}",
            "unsupported/memo": f"{v['unsupported_per_memo']:.2f}",
            "hallucinated/memo": f"{v['hallucinated_per_memo']:.2f}",
            "risk label acc.": _pct(v["risk_label_accuracy"]),
            "latency ms mean": f"{v['latency_ms_mean']:.2f}",
            "latency ms p95": f"{v['latency_ms_p95']:.2f}",
        }
        for k, v in summary.items()
    ]


def ratio_table(scores: Sequence[MemoScore]) -> list[dict[str, Any]]:
    """Table 7: MAE and 95th percentile absolute error by system and ratio."""
    rows = []
    for system in SYSTEMS:
        for r in RATIOS:
            errs = [s.ratio_errors[r.name] for s in scores if s.system == system and r.name in s.ratio_errors]
            if errs:
                rows.append(
                    {
                        "system": SYSTEM_NAMES[system],
                        "ratio": r.name,
                        "n": len(errs),
                        "MAE": f"{statistics.fmean(errs):.4f}",
                        "p95 abs. error": f"{percentile(errs, 95):.4f}",
                    }
                )
    return rows


def taxonomy_table(summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 8 (claim-level error taxonomy), with Table 12's label distribution."""
    return [
        {
            "system": SYSTEM_NAMES[k],
            "numeric error": _pct(v["numeric_error_rate"]),
            "citation error": _pct(v["citation_error_rate"]),
            "unsupported claim": _pct(v["unsupported_rate"]),
            "High": v["labels"].get("High", 0),
            "Medium": v["labels"].get("Medium", 0),
            "Low": v["labels"].get("Low", 0),
        }
        for k, v in summary.items()
    ]


def sic_table(scores: Sequence[MemoScore], system: str = "structured", top: int = 10) -> list[dict[str, Any]]:
    """Table 10: one system's results for the ``top`` most frequent SIC codes."""
    by_sic: dict[Any, list[MemoScore]] = defaultdict(list)
    for s in scores:
        if s.system == system:
            by_sic[s.sic].append(s)
    rows = []
    for sic, ss in sorted(by_sic.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))[:top]:
        numeric = sum(s.numeric for s in ss)
        errs = [e for s in ss for e in s.ratio_errors.values()]
        rows.append(
            {
                "SIC": sic,
                "memos": len(ss),
                "numeric exact": _pct(sum(s.exact for s in ss) / numeric),
                "citation precision": _pct(sum(s.cited_correct for s in ss) / numeric),
                "ratio MAE": f"{statistics.fmean(errs) if errs else 0.0:.4f}",
            }
        )
    return rows


# --------------------------------------------------------------------------- mutation test


def mutations(body: str) -> list[tuple[str, int, str]]:
    """Wrong-number variants of a verified memo body: ``(kind, sentence line, mutated body)``.

    For every bullet that states an amount or a ratio: the leading digit changed (by 4 or 5, so
    the value moves by far more than the tolerance), a wrong scale word (million <-> billion), a
    flipped sign (not for zero), a period end moved back one year, and (flows) a swapped span
    ("three months" <-> "six months").
    """
    lines = body.split("\n")
    out = []
    for i, line in enumerate(lines):
        if not line.startswith("- ") or "[" not in line:
            continue
        mentions = [m for m in find_numbers(line) if m.kind in ("currency", "percent", "ratio")]
        if not mentions:
            continue
        m = mentions[0]
        j = next(j for j in range(m.start, m.end) if line[j].isdigit())
        d = int(line[j])
        variants = [("digit", line[:j] + str(d + 5 if d < 5 else d - 4) + line[j + 1 :])]
        word = re.search(r"\b(million|billion|thousand)\b", line[m.start : m.end])
        if word:
            a, b = m.start + word.start(), m.start + word.end()
            variants.append(("scale", line[:a] + SCALE_SWAP[word.group(1)] + line[b:]))
        if m.value != 0:  # -0 is 0: not a wrong number
            variants.append(
                (
                    "sign",
                    line[: m.start]
                    + (
                        line[m.start + 1 : m.end]
                        if m.negative and line[m.start] == "-"
                        else "-" + line[m.start : m.end]
                    )
                    + line[m.end :],
                )
            )
        date = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", line)
        if date:
            moved = f"{int(date.group(1)) - 1}-{date.group(2)}-{date.group(3)}"
            variants.append(("period", line[: date.start()] + moved + line[date.end() :]))
        span = re.search(r"\b(three|six) months\b", line)
        if span:
            swapped = "six months" if span.group(1) == "three" else "three months"
            variants.append(("span", line[: span.start()] + swapped + line[span.end() :]))
        for kind, changed in variants:
            out.append((kind, i, "\n".join([*lines[:i], changed, *lines[i + 1 :]])))
    return out


def mutation_test(memos: Iterable[tuple[MemoResult, FactMap]], ctx: MemoContext) -> list[dict[str, Any]]:
    """Inject every :func:`mutations` variant into each verified memo and verify it again.

    Returns one row per mutation kind: injected, caught (some number not exact), restored (the
    repaired body equals the original body).
    """
    tally: dict[str, Counter] = defaultdict(Counter)
    for memo, fm in memos:
        for kind, _, mutated in mutations(memo.body):
            claims = [
                type(c)(**{**c.__dict__, "citations": list(c.citations), "citation_labels": list(c.citation_labels)})
                for c in memo.claims
            ]
            v = verify_body(mutated, claims, fm, ctx.thresholds, repair=True)
            tally[kind]["injected"] += 1
            tally[kind]["caught"] += any(c.status != "exact" for c in v.checks)
            tally[kind]["restored"] += v.body == memo.body
    return [{"mutation": k, **{x: t[x] for x in ("injected", "caught", "restored")}} for k, t in sorted(tally.items())]


# --------------------------------------------------------------------------- the run


@dataclass
class EvalResult:
    """Everything ``finkg eval memos`` prints and saves."""

    tasks: int
    excluded: dict[str, int]
    scores: list[MemoScore]
    summary: dict[str, dict[str, Any]]
    mutation: list[dict[str, Any]]


def evaluate(
    graph: Graph,
    settings: Settings,
    systems: Sequence[str] = SYSTEMS,
    limit: int | None = None,
    source: str | None = None,
    progress: StageProgress | None = None,
) -> EvalResult:
    """Run the systems over every complete filing in the graph (only those loaded from ``source``,
    e.g. ``2009q3.zip``; the first ``limit``) and score them. The prior and the evidence index
    cover the whole graph, as they would in use, each read as of the memo's filing; undated filings are
    excluded when a system retrieves (they have no as-of time)."""
    filings = list_filings(graph, source=source)
    maps = list(read_fact_maps(graph, [f["adsh"] for f in filings], settings.memo.batch_size))
    excluded: Counter = Counter()
    tasks = []
    retrieving = any(s != "structured" for s in systems)
    for fm in maps:
        missing = fm.missing()
        if retrieving and fm.available_at is None:  # nothing can be retrieved as of an undated filing
            excluded["undated: no acceptance or filing time (an XBRL instance)"] += 1
        elif fm.complete():
            tasks.append(fm)
        else:
            excluded["not applicable: " + ", ".join(sorted(fm.not_applicable))] += bool(fm.not_applicable)
            excluded["missing: " + ", ".join(missing)] += bool(missing)
    excluded = Counter({k: v for k, v in excluded.items() if v})
    if limit:
        tasks = tasks[:limit]
    ctx = build_context(graph, settings, systems, progress)
    scores: list[MemoScore] = []
    structured: list[tuple[MemoResult, FactMap]] = []
    for system in systems:
        tick = progress(f"eval {system}", len(tasks)) if progress else None
        for fm in tasks:
            memo = generate_memo(system, fm, ctx)
            scores.append(score_memo(memo, fm, ctx))
            if system == "structured":
                structured.append((memo, fm))
            if tick:
                tick(1)
    mutation = mutation_test(structured, ctx) if structured else []
    return EvalResult(len(tasks), dict(excluded), scores, summarize(scores), mutation)


def save(result: EvalResult, out: Path, results_dir: Path | None = None) -> list[Path]:
    """Write the tables as CSV and the summary as JSON under ``out``; returns the paths. The system table
    is also written in the one results format (:mod:`finkg.eval.results`) as ``eval-memos.json`` in
    ``results_dir`` (e.g. ``bench/results``), else in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    tables = {
        "systems": system_table(result.summary),
        "retrieval": retrieval_table(result.scores),
        "ratios": ratio_table(result.scores),
        "taxonomy": taxonomy_table(result.summary),
        "sic": sic_table(result.scores),
        "mutation": result.mutation,
        "memo_scores": [
            {k: (json.dumps(v) if isinstance(v, dict) else v) for k, v in s.__dict__.items()} for s in result.scores
        ],
    }
    paths = []
    for name, rows in tables.items():
        if not rows:
            continue
        p = out / f"{name}.csv"
        with open(p, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        paths.append(p)
    p = out / "summary.json"
    p.write_text(
        json.dumps(
            {
                "tasks": result.tasks,
                "excluded": result.excluded,
                "systems": result.summary,
                "mutation": result.mutation,
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    paths.append(p)
    write_result(
        "eval-memos",
        {"systems": list(result.summary)},
        {"tasks": result.tasks, "excluded": result.excluded, "mutations": len(result.mutation)},
        tables={"systems": tables["systems"], "taxonomy": tables["taxonomy"]},
        directory=results_dir or out,
    )
    return paths
