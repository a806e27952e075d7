"""``finkg eval extraction``: precision and recall of triple extraction against a hand-checked gold set.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.1 (extraction, then an LLM verification
pass "to check the validation of extracted triples"); the paper reports no extraction metric, so
finkg measures what the verification pass buys: precision / recall / F1 of the triples **proposed**
(after the deterministic checks) and of the triples **verified** (kept or fixed), on the same
stored records, against ``tests/data/kg_gold.jsonl`` (87 triples from 10 FOMC statements, written
and checked by hand against the statement text).

Matching (one-to-one, greedy by score): a predicted triple matches a gold triple of the same
statement when the relations are equal and both the head and the tail are similar enough
(rapidfuzz ``token_set_ratio`` >= ``threshold``, 0-100, on lower-cased text; the extracted phrase
may be shorter or longer than the gold one, e.g. "federal funds rate" vs "the target for the
federal funds rate"). ``relation-free`` scores drop the relation condition (did the model find the
right pair?). Entity types are not part of the match; type accuracy on matched pairs is reported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from finkg.eval.results import write_result
from generation.kgbuild.extraction import Triple


@dataclass(frozen=True)
class GoldTriple:
    """One gold triple: the statement (``YYYYMMDD``) it comes from and its fields."""

    statement: str
    head: str
    head_type: str
    relation: str
    tail: str
    tail_type: str


def load_gold(path: Path) -> list[GoldTriple]:
    """Read the gold JSONL (one ``{"statement", "head", "head_type", "relation", "tail", "tail_type"}``
    per line).

    Raises:
        ValueError: a line is not JSON or lacks a field; the message names the file and line.
    """
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out.append(GoldTriple(**{k: row[k] for k in GoldTriple.__dataclass_fields__}))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{n}: not a gold triple ({exc})") from exc
    return out


def _sim(a: str, b: str) -> float:
    return fuzz.token_set_ratio(a.lower(), b.lower())


def match(
    predicted: Sequence[Triple], gold: Sequence[GoldTriple], threshold: float = 70.0, use_relation: bool = True
) -> list[tuple[int, int]]:
    """One-to-one matches ``(predicted index, gold index)``, greedy by the mean head/tail similarity."""
    pairs = []
    for i, p in enumerate(predicted):
        for j, g in enumerate(gold):
            if use_relation and p.relation != g.relation:
                continue
            h, t = _sim(p.head, g.head), _sim(p.tail, g.tail)
            if h >= threshold and t >= threshold:
                pairs.append(((h + t) / 2, i, j))
    used_p, used_g, out = set(), set(), []
    for _s, i, j in sorted(pairs, key=lambda x: (-x[0], x[1], x[2])):
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
            out.append((i, j))
    return out


def prf(n_pred: int, n_gold: int, n_match: int) -> dict[str, float]:
    """Precision, recall and F1 (0-1) from counts; 0 where undefined."""
    p = n_match / n_pred if n_pred else 0.0
    r = n_match / n_gold if n_gold else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def score(
    stages: dict[str, dict[str, list[Triple]]],
    gold: Sequence[GoldTriple],
    threshold: float = 70.0,
    results_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Rows for the table: per stage (proposed, verified) and matching (with / without relation),
    micro-averaged over the statements in ``stages`` (``{statement: {"proposed": [...], "verified": [...]}}``).
    With ``results_dir`` (e.g. ``bench/results``) the rows are also written there in the one results format
    (:mod:`finkg.eval.results`) as ``eval-extraction.json``."""
    by_statement: dict[str, list[GoldTriple]] = {}
    for g in gold:
        by_statement.setdefault(g.statement, []).append(g)
    rows = []
    for stage in ("proposed", "verified"):
        for use_relation in (True, False):
            n_pred = n_gold = n_match = typed = 0
            for statement, golds in by_statement.items():
                pred = stages.get(statement, {}).get(stage, [])
                m = match(pred, golds, threshold, use_relation)
                n_pred += len(pred)
                n_gold += len(golds)
                n_match += len(m)
                typed += sum(
                    pred[i].head_type == golds[j].head_type and pred[i].tail_type == golds[j].tail_type for i, j in m
                )
            row = {
                "stage": stage,
                "matching": "head+relation+tail" if use_relation else "head+tail",
                "statements": len(by_statement),
                "predicted": n_pred,
                "gold": n_gold,
                "matched": n_match,
                **{k: round(v, 3) for k, v in prf(n_pred, n_gold, n_match).items()},
                "types right (matched)": round(typed / n_match, 3) if n_match else 0.0,
            }
            rows.append(row)
    if results_dir is not None:
        write_result(
            "eval-extraction",
            {"threshold": threshold, "statements": len(by_statement), "gold_triples": len(gold)},
            {f"{r['stage']}_{r['matching']}_{m}": r[m] for r in rows for m in ("precision", "recall", "f1")},
            tables={"rows": rows},
            directory=results_dir,
        )
    return rows
