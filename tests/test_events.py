"""The Appendix A event-type mapper (seed 000) on real tweets and on the counting rule's edges.

The tweet texts are copied verbatim from ../shared/data/market/tweets (stocknet-dataset, MIT; see
data/NOTICE.md); each carries its file and its ``created_at`` in a comment.
"""

from __future__ import annotations

import pytest

from generation.feedback.events import CUES, EVENT_TYPES, OTHER_MIXED, classify_event, event_type, event_types

EARN, LEGAL, CAPITAL, MGMT = (
    "Earnings & Guidance",
    "Legal & Regulatory",
    "Capital & Transactions",
    ("Management & Operations"),
)


def test_cue_table_is_table_5():
    assert EVENT_TYPES == (EARN, LEGAL, CAPITAL, MGMT, OTHER_MIXED)
    assert OTHER_MIXED == "Other/Mixed"
    assert [len(CUES[t]) for t in (EARN, LEGAL, CAPITAL, MGMT)] == [18, 19, 20, 19]
    assert CUES[EARN][:3] == ("earnings", "EPS", "revenue") and CUES[EARN][-1] == "loss"
    assert "FDA approval" in CUES[LEGAL] and "consent order" in CUES[LEGAL]
    assert "M&A" in CUES[CAPITAL] and "spin-off" in CUES[CAPITAL] and CUES[CAPITAL][-1] == "investment"
    assert CUES[MGMT][0] == "CEO" and CUES[MGMT][-1] == "workforce"


@pytest.mark.parametrize(
    ("text", "expected", "counts"),
    [
        # MSFT/2014-01-23, Thu Jan 23 21:40:19 +0000 2014 (@FoxBusiness)
        (
            "#Microsoft scores big earnings beat as devices &amp; consumer sales pop 13%. $MSFT +3% "
            "after hours: http://t.co/UCGIAIq7QM via @MattMEgan5",
            EARN,
            {EARN: 3},
        ),
        # MSFT/2014-04-22, Tue Apr 22 20:15:36 +0000 2014 (@stockwire24): "quarterly results" and
        # "beat"; "quarter" does not match inside "quarterly"
        ("Microsoft Is Likely To Beat The Street On Quarterly Results $MSFT http://t.co/VUMJXLpjL4", EARN, {EARN: 2}),
        # GE/2014-02-13, Thu Feb 13 06:38:26 +0000 2014 (@snn_team)
        (
            "$GE - GE Lighting and CRS Electronics Settle Patent Infringement Lawsuit -&gt; "
            "http://t.co/hjXUCoV33L #stock #stocks #stockaction",
            LEGAL,
            {LEGAL: 1},
        ),
        # GE/2015-10-21, Wed Oct 21 21:04:16 +0000 2015 (@Consumer_SA): antitrust + settlement
        (
            "DoJ said to be skeptical of latest GE-Electrolux antitrust settlement offer "
            "https://t.co/AsIuYv9f0j $GE $ELUXF $ELUXY",
            LEGAL,
            {LEGAL: 3},  # "DoJ" matches DOJ; "offer" is not the cue "offering"
        ),
        # GE/2014-02-13, Thu Feb 13 18:59:07 +0000 2014 (@Nic_Wesley)
        ("$GE GE Completes API Healthcare Acquisition http://t.co/fK7XSsJQHY", CAPITAL, {CAPITAL: 1}),
        # GE/2014-03-29, Sat Mar 29 14:21:15 +0000 2014 (@Pennystocks24): plural "Dividends"
        (
            "$GE - Could A New Tax on Banks Destroy Your Dividends? -&gt; http://t.co/ocXU8MWgIR "
            "#stock #stocks #stockaction",
            CAPITAL,
            {CAPITAL: 1},
        ),
        # MSFT/2014-07-17, Thu Jul 17 14:34:33 +0000 2014 (@mrtoxo)
        (
            "$MSFT - [audio] Newscast: Up to 18,000 layoffs at Microsoft -&gt; http://t.co/OHY7IVolHL "
            "#stock #stocks #stockaction",
            MGMT,
            {MGMT: 1},
        ),
        # MSFT/2014-06-04, Wed Jun 04 17:15:49 +0000 2014 (@Top_Tech_Stocks): appoints + board
        (
            "GoPro Appoints Tony Bates as President And Member of the Board of Directors.. "
            "http://t.co/uzLqEU6SPR $MSFT #tech #stocks",
            MGMT,
            {MGMT: 2},
        ),
        # GE/2015-02-23, Mon Feb 23 18:06:03 +0000 2015 (@stockwire24): probe (legal) vs deal
        # (capital), one cue each: a tie -> Other/Mixed
        ("EU to opens probe into GE, Alstom deal $GE http://t.co/ocILaXUGWo", OTHER_MIXED, {LEGAL: 1, CAPITAL: 1}),
        # MSFT/2014-01-22, Wed Jan 22 17:28:31 +0000 2014 (@morganbrock64): CEO vs earnings, a tie
        (
            "Microsoft's New CEO And Earnings: A Look Ahead http://t.co/m5K8mlmRdt $MSFT, $AAPL",
            OTHER_MIXED,
            {EARN: 1, MGMT: 1},
        ),
        # MSFT/2014-01-02, Thu Jan 02 09:48:35 +0000 2014 (@stockwire24): no cue at all
        ("Microsoft Corporation : Microsoft Assigned Patent $MSFT http://t.co/m21LDJJfcp", OTHER_MIXED, {}),
    ],
)
def test_real_tweets(text, expected, counts):
    match = classify_event(text)
    assert match.event_type == expected
    assert {t: n for t, n in match.counts.items() if n} == counts


def test_real_tweet_matched_cues_are_named():
    # GE/2015-10-21 (@Consumer_SA): "offer" is not the cue "offering" (whole words only)
    match = classify_event(
        "DoJ said to be skeptical of latest GE-Electrolux antitrust settlement offer "
        "https://t.co/AsIuYv9f0j $GE $ELUXF $ELUXY"
    )
    assert match.matched == {LEGAL: ("settlement", "antitrust", "DOJ")}


def test_largest_count_wins_over_a_smaller_one():
    # 2 earnings cues (revenue, guidance) against 1 legal cue (lawsuit)
    m = classify_event("Revenue tops estimates, guidance steady despite lawsuit")
    assert m.event_type == EARN and m.counts[EARN] == 2 and m.counts[LEGAL] == 1


def test_tie_between_two_types_is_other_mixed_even_with_counts_two():
    m = classify_event("CEO resigns after merger and buyback")
    assert m.counts[MGMT] == 2 and m.counts[CAPITAL] == 2
    assert m.event_type == OTHER_MIXED


def test_no_cue_and_empty_text_are_other_mixed():
    assert event_type("Shares trade sideways on light volume") == OTHER_MIXED
    assert event_type("") == OTHER_MIXED


def test_case_does_not_matter():
    assert event_type("EARNINGS") == event_type("earnings") == event_type("EaRnInGs") == EARN
    assert event_type("fda approval") == event_type("FDA APPROVAL") == LEGAL


def test_word_boundaries():
    # substrings of longer words are not cues
    assert classify_event("Next steps for the mission; keyboard dealer finest").counts == {
        EARN: 0,
        LEGAL: 0,
        CAPITAL: 0,
        MGMT: 0,
    }
    # but punctuation, hashtags and cashtags are boundaries
    assert classify_event("#earnings!").counts[EARN] == 1
    assert classify_event("(EPS)").counts[EARN] == 1
    assert classify_event("big M&A week").counts[CAPITAL] == 1
    assert classify_event("big M&amp;A week").counts[CAPITAL] == 1  # HTML entity decoded


def test_plural_and_phrase_rules():
    assert classify_event("two lawsuits and new fines").matched[LEGAL] == ("lawsuit", "fine")
    assert classify_event("net losses widen").matched[EARN] == ("loss",)
    assert classify_event("CEO appointed").matched[MGMT] == ("CEO",)  # "appointed" is not "appoints"
    # a phrase cue counts together with its head word (both are in Table 5)
    assert classify_event("Company raises guidance").matched[EARN] == ("guidance", "raises guidance")
    assert classify_event("wins FDA approval").matched[LEGAL] == ("FDA", "FDA approval")
    # white space inside a phrase, hyphen variants of spin-off
    assert classify_event("class\n  action").matched[LEGAL] == ("class action",)
    for text in ("spin-off", "spin off", "spinoff"):
        assert classify_event(text).matched[CAPITAL] == ("spin-off",)


def test_fiscal_q_prefix_cue():
    assert classify_event("fiscal Q3 outlook").matched[EARN] == ("fiscal Q", "outlook")
    assert classify_event("fiscal quarter").matched[EARN] == ("quarter",)
    assert "fiscal Q" not in classify_event("fiscal Q9").matched.get(EARN, ())


def test_a_cue_counts_once_and_summary_counts_with_headline():
    assert classify_event("deal deal deal").counts[CAPITAL] == 1
    m = classify_event("Company news", summary="Settlement reached; CEO and CFO comment on probe")
    assert m.counts[LEGAL] == 2 and m.counts[MGMT] == 2 and m.event_type == OTHER_MIXED


def test_urls_are_not_text():
    assert event_type("see https://example.com/earnings-lawsuit-merger") == OTHER_MIXED


def test_batch_and_type_errors():
    assert event_types(["Q3 earnings beat", "no cue here"]) == [EARN, OTHER_MIXED]
    with pytest.raises(TypeError):
        classify_event(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        classify_event("x", summary=3)  # type: ignore[arg-type]
