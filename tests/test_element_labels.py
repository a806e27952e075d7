"""Matching a question's words to an element's label (retrieval/facts/labels.py, issue 44): every content word of the
question in the label, the fewest other words, ties asked back. The labels are us-gaap standard labels as tag.txt
states them."""

from __future__ import annotations

from retrieval.facts.labels import ElementLabels, content_words, element_rows, match_label

GOODWILL = ElementLabels("Goodwill", ("Goodwill",))
IMPAIRMENT = ElementLabels("GoodwillImpairmentLoss", ("Goodwill, Impairment Loss",), duration=True)
DEFERRED_CURRENT = ElementLabels("DeferredRevenueCurrent", ("Deferred Revenue, Current",))
DEFERRED_NONCURRENT = ElementLabels("DeferredRevenueNoncurrent", ("Deferred Revenue, Noncurrent",))
CUSTOM = ElementLabels("AbtGoodwill", ("Goodwill",), custom=True)
ALL = [GOODWILL, IMPAIRMENT, DEFERRED_CURRENT, DEFERRED_NONCURRENT]


def test_content_words_drop_names_periods_and_question_words():
    words = content_words("How much goodwill did Abbott have at the end of June 2009?", ["Abbott"])
    assert words == {"goodwill"}
    assert content_words("What were Pfizer's accrued liabilities in Q2 2009?", ["pfizer"]) == {"accrued", "liability"}


def test_the_label_with_the_fewest_other_words_wins():
    assert match_label({"goodwill"}, ALL).found == GOODWILL
    assert match_label({"goodwill", "impairment"}, ALL).found == IMPAIRMENT


def test_a_word_no_label_holds_matches_nothing():
    got = match_label({"goodwill", "amortization"}, ALL)
    assert got.found is None and got.tied == []
    assert match_label(set(), ALL).found is None


def test_elements_tied_for_the_words_are_asked_back():
    got = match_label(
        {"deferred", "revenue"},
        [DEFERRED_NONCURRENT, ElementLabels("DeferredRevenueOther", ("Deferred Revenue, Other",))],
    )
    assert got.found is None and [e.tag for e in got.tied] == ["DeferredRevenueNoncurrent", "DeferredRevenueOther"]


def test_a_custom_element_gives_way_to_a_us_gaap_one():
    assert match_label({"goodwill"}, [CUSTOM, GOODWILL]).found == GOODWILL
    assert match_label({"goodwill"}, [CUSTOM]).found == CUSTOM


def test_too_many_other_words_is_no_match():
    long = ElementLabels("X", ("Revenue Recognition Multiple Deliverable Arrangements Deferred",))
    assert match_label({"revenue"}, [long]).found is None


def test_rows_without_a_known_span_are_left_out():
    rows = [
        {"tag": "Goodwill", "labels": ["Goodwill"], "plabels": ["Goodwill, net"], "iord": ["I"], "custom": [False]},
        {"tag": "Odd", "labels": [], "plabels": ["Odd"], "iord": [], "custom": []},
    ]
    got = element_rows(rows)
    assert [(e.tag, e.duration, e.custom, e.label) for e in got] == [("Goodwill", False, False, "Goodwill")]
