"""Withheld report claims (generation/verify/withhold.py, issue 44 item 3): a sentence the number check or the
answer gate marked is not published; it is listed whole with its reasons, and nothing else changes. The texts are
what finkg's demo reports printed (reports/cn-yields-2015q2.md and reports/fed-zero-2008-12.md before the change)."""

from __future__ import annotations

from generation.agent.gate import gate_report
from generation.verify.report_numbers import MARK
from generation.verify.withhold import withhold_claims

YIELDS = (
    "The China treasury yield curve decreased by 0.38 percentage points (37.9 bp) over three months from 3.28% on "
    "2015-03-30 to 3.00% [unverified] on 2015-06-30 [F3].\n"
    "M2 grew 10.8% year over year [F5].\n"
    "Conclusion: yields fell while M2 grew [F3, F5]."
)


def test_a_sentence_with_an_unverified_number_is_withheld_with_its_number():
    got = withhold_claims(YIELDS)
    assert got.published == "M2 grew 10.8% year over year [F5].\nConclusion: yields fell while M2 grew [F3, F5]."
    assert got.withheld == [
        {
            "claim": YIELDS.splitlines()[0].replace(MARK, ""),
            "reasons": ["no fact carries 3.00%"],
        }
    ]


def test_an_unsupported_claim_and_a_withheld_conclusion():
    answer = (
        "China's bond yields and money supply were moving downward [F1, F2, F3]. Yields fell [F1].\n"
        "Conclusion: cutting rates by 50 basis points lowered China's money supply [K3]."
    )
    cited = [("CGB10Y", "China 10-year treasury yield: 2.78% on 2008-12-31, a decrease of 0.9 points")]
    gated = gate_report(answer, [("50", "unverified")], cited)
    gated_text = gated.text.replace("by 50 basis", f"by 50{MARK} basis")
    got = withhold_claims(gated_text)
    assert got.published == "Yields fell [F1].\nConclusion: withheld (see Withheld claims)."
    assert got.withheld[0] == {
        "claim": "China's bond yields and money supply were moving downward [F1, F2, F3].",
        "reasons": ["no cited fact is about money supply"],
    }
    assert got.withheld[1]["claim"].startswith("Conclusion: cutting rates by 50 basis points")
    assert "no fact carries 50" in got.withheld[1]["reasons"]


def test_an_answer_without_marks_is_published_unchanged():
    clean = "Current assets were USD 35,494,000,000 [F3].\nConclusion: liquid [F3]."
    assert withhold_claims(clean).published == clean and withhold_claims(clean).withheld == []


def test_a_trend_no_cited_fact_states_is_withheld():
    """The demo's J&J report concluded 'liquidity and leverage are both improving' from levels alone (no cited fact
    states a change): the gate marks it, and it is withheld; a change a cited fact states is published."""
    levels = [
        ("measure:debt_to_equity", "debt to equity for 2009-06-30 was 0.18"),
        ("measure:net_margin", "net margin was 21.05%"),
    ]
    answer = (
        "Johnson & Johnson's net margin for the 3 months ended 2009-06-30 was 21.05% [F3].\n"
        "Conclusion: Johnson & Johnson's liquidity and leverage are both improving, with a debt to equity ratio of 0.18."
    )
    gated = gate_report(answer, [("21.05%", "verified"), ("0.18", "verified")], levels)
    assert not gated.passed and gated.unsupported[0]["why"] == "no cited fact states a change"
    got = withhold_claims(gated.text)
    assert got.published.startswith("Johnson & Johnson's net margin") and "improving" not in got.published
    assert got.withheld[0]["reasons"] == ["no cited fact states a change"]
    change = [("cn_treasury_yield_3y", "2.90% on 2015-06-30, a decrease of 0.38 percentage points over three months")]
    ok = gate_report("The 3-year yield fell 0.38 points [F1].", [("0.38", "verified")], change)
    assert ok.passed
