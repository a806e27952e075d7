"""The memo's peer picture (issue 20, part 4) on the real 2009q3 filings shipped in data/, against the real Neo4j.

The peer sets and ratios asserted here are computed independently from the archive's sub.txt and num.txt with
pandas (:func:`gold_points`): a filing has both ratios when it reports AssetsCurrent, LiabilitiesCurrent (not
zero) and Assets at its period end, and Liabilities or LiabilitiesAndStockholdersEquity with an equity total.
"""

from __future__ import annotations

import json
import zipfile
from functools import cache

import pandas as pd
import pytest
from PIL import Image
from test_cli import finkg
from test_memos import BBT, QUARTER, WALMART, loaded  # noqa: F401  (module fixture: the 2009q3 graph)

from finkg import plots
from generation.memo.peers import MAJOR_GROUP_LEVEL, MIN_PEERS, SIC_LEVEL, QuarterPeers
from kg.errors import EvaluationError
from retrieval.facts.fact_map import read_quarter_fact_maps

SOUTHWESTERN = "0000007332-09-000030"  # Southwestern Energy, SIC 1311 (crude petroleum & natural gas): 21 filers
EQUITY = ("StockholdersEquity", "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest")


@cache
def gold_points() -> pd.DataFrame:
    """One row per 2009q3 filing (the latest of a company's filings for a period): adsh, cik, sic, whether it
    has both ratios, its current ratio and its reported leverage (Liabilities / Assets; NaN when derived)."""
    with zipfile.ZipFile(QUARTER) as zf:
        sub = pd.read_csv(zf.open("sub.txt"), sep="\t", dtype=str, usecols=["adsh", "cik", "sic", "period", "accepted"])
        num = pd.read_csv(zf.open("num.txt"), sep="\t", dtype=str, usecols=["adsh", "tag", "ddate", "qtrs", "uom", "coreg", "value"])  # fmt: skip
    sub = sub.sort_values("accepted").drop_duplicates(["cik", "period"], keep="last")  # amendments supersede
    num = num[num["coreg"].isna() & (num["uom"] == "USD") & (num["qtrs"] == "0") & num["value"].notna()]
    num = num.merge(sub[["adsh", "period"]], on="adsh")
    num = num[num["ddate"] == num["period"]]
    wide = num.drop_duplicates(["adsh", "tag"]).pivot(index="adsh", columns="tag", values="value").astype(float)
    out = sub.set_index("adsh").join(wide, how="left")
    col = lambda tag: out[tag] if tag in out else pd.Series(float("nan"), index=out.index)  # noqa: E731
    equity = col(EQUITY[0]).notna() | col(EQUITY[1]).notna()
    leverage_known = col("Assets").gt(0) & (col("Liabilities").notna() | (col("LiabilitiesAndStockholdersEquity").notna() & equity))  # fmt: skip
    current_known = col("AssetsCurrent").notna() & col("LiabilitiesCurrent").notna() & col("LiabilitiesCurrent").ne(0)
    return pd.DataFrame(
        {
            "cik": out["cik"].astype(int),
            "sic": out["sic"].astype(float),
            "both": leverage_known & current_known,
            "current_ratio": col("AssetsCurrent") / col("LiabilitiesCurrent"),
            "leverage": col("Liabilities") / col("Assets"),
        }
    )


@pytest.fixture(scope="module")
def quarter(loaded):  # noqa: F811
    return QuarterPeers(QUARTER.name, read_quarter_fact_maps(loaded, QUARTER.name))


def gold_peers(adsh: str, digits: int) -> set[str]:
    g = gold_points()
    sic, cik = int(g.at[adsh, "sic"]), int(g.at[adsh, "cik"])
    code = lambda s: s.astype(int).astype(str).str.zfill(4).str[:digits]  # noqa: E731
    same = g[g["both"] & g["sic"].notna()]
    same = same[code(same["sic"]) == str(sic).zfill(4)[:digits]]
    return {str(a) for a in same[same["cik"] != cik].index}


def test_peers_are_the_quarters_other_same_sic_filers_with_both_ratios(quarter):
    filer = quarter.points[SOUTHWESTERN]
    group = quarter.group(filer)
    assert not isinstance(group, str), group
    assert (group.level, group.code) == (SIC_LEVEL, 1311)
    expected = gold_peers(SOUTHWESTERN, 4)
    assert len(expected) >= MIN_PEERS
    assert {p.adsh for p in group.peers} == expected
    assert {p.adsh for p in group.members} == expected | {SOUTHWESTERN}
    gold = gold_points()
    for p in (*group.peers, filer):
        assert p.current_ratio == pytest.approx(gold.loc[p.adsh, "current_ratio"], rel=1e-12)
        if not pd.isna(gold.loc[p.adsh, "leverage"]):  # reported Liabilities (a derived one: test_memos)
            assert p.leverage == pytest.approx(gold.loc[p.adsh, "leverage"], rel=1e-12)


def test_too_few_same_sic_peers_fall_back_to_the_major_group(quarter):
    filer = quarter.points[WALMART]  # SIC 5331: fewer than MIN_PEERS others with both ratios
    same_sic = gold_peers(WALMART, 4)
    assert len(same_sic) < MIN_PEERS
    group = quarter.group(filer)
    assert not isinstance(group, str), group
    assert (group.level, group.code, group.same_sic) == (MAJOR_GROUP_LEVEL, 53, len(same_sic))
    assert {p.adsh for p in group.peers} == gold_peers(WALMART, 2)
    assert "major group" in group.describe() and f"only {len(same_sic)} of the filer's own" in group.describe()


def test_memo_links_its_picture_and_a_bank_gets_the_reason_instead(loaded, tmp_path):  # noqa: F811
    out = finkg("memo", "-a", SOUTHWESTERN, "-a", BBT, "--out", str(tmp_path), "--redo")
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "structured"
    png = folder / f"{SOUTHWESTERN}.png"
    md = (folder / f"{SOUTHWESTERN}.md").read_text()
    assert f"]({SOUTHWESTERN}.png)" in md and "## Peers" in md
    assert md.index("## Peers") < md.index("## Evidence")
    assert f"the {len(gold_peers(SOUTHWESTERN, 4))} other filers of SIC 1311 in 2009q3.zip" in md
    with Image.open(png) as im:
        assert im.format == "PNG" and im.size == (700, 520)
        assert not {k for k in im.info if k not in ("transparency",)}  # no metadata: no time, no software
    rows = [json.loads(x) for x in (folder / "claims" / f"{SOUTHWESTERN}.jsonl").read_text().splitlines()]
    assert rows and {r["picture"] for r in rows} == {f"{SOUTHWESTERN}.png"}
    memo = loaded.read("MATCH (m:Memo {id: $id}) RETURN m.picture AS p", {"id": f"structured:{SOUTHWESTERN}"})
    assert memo == [{"p": f"{SOUTHWESTERN}.png"}]

    bank = (folder / f"{BBT}.md").read_text()
    assert not (folder / f"{BBT}.png").exists() and "](" not in bank.split("## Peers")[1].split("## Evidence")[0]
    assert "No peer picture: the filer's current ratio: the filer presents an unclassified balance sheet" in bank
    rows = [json.loads(x) for x in (folder / "claims" / f"{BBT}.jsonl").read_text().splitlines()]
    assert {r["picture"] for r in rows} == {None}

    first = png.read_bytes()
    again = finkg("memo", "-a", SOUTHWESTERN, "--out", str(tmp_path), "--redo")
    assert again.returncode == 0, again.stderr
    assert png.read_bytes() == first  # reproducible: the same figures give the same bytes


def test_peer_chart_clips_a_far_out_filing_and_refuses_an_empty_group(tmp_path):
    near = [plots.PeerDot(f"p{i}", 0.40 + 0.02 * i, 1.0 + 0.1 * i) for i in range(10)]
    far = plots.PeerDot("far", 0.5, 40.0)
    chart = plots.PeerChart([*near, far], caption="ten near, one far")
    x0, x1, y0, y1 = chart.limits
    assert chart.clipped and y1 < 40.0 and y0 <= 1.0 and y1 >= 1.9 and x0 <= 40.0 and x1 >= 58.0
    assert not plots.PeerChart(near, caption="ten near").clipped
    chart.draw(far, tmp_path / "far.png", title="far, off the axes")
    assert (tmp_path / "far.png").stat().st_size > 0
    with pytest.raises(EvaluationError):
        plots.PeerChart([], caption="nothing")


def test_pictures_off_write_no_picture_and_no_peers_section(loaded, tmp_path):  # noqa: F811
    out = finkg("memo", "-a", SOUTHWESTERN, "--out", str(tmp_path), "--redo", env={"FINKG_MEMO__PICTURES": "false"})
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "structured" / f"{SOUTHWESTERN}.md").read_text()
    assert "## Peers" not in md and not list((tmp_path / "structured").glob("*.png"))
