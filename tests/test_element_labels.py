"""Matching a question's words to an element's label (retrieval/facts/labels.py, issue 44): every content word of the
question in the label, the fewest other words, ties asked back. The labels are us-gaap standard labels as tag.txt
states them."""

from __future__ import annotations

from retrieval.facts.labels import (
    ElementLabels,
    content_words,
    element_rows,
    label_terms,
    label_words,
    match_label,
    narrows,
    question_words,
)
from retrieval.facts.measures import uncovered_words

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


PAYABLE = ElementLabels("AccountsPayableCurrent", ("Accounts Payable, Current",), ("Accounts payable",))
PAYABLE_CHANGE = ElementLabels(
    "IncreaseDecreaseInAccountsPayable",
    ("Increase (Decrease) in Accounts Payable",),
    ("Accounts payable",),  # the cash flow statement's line label, as filers write it
    duration=True,
)


def test_a_labels_operation_words_count_as_other_words():
    """ "Increase (Decrease) in" says which quantity a label is: "accrued liabilities" is the balance."""
    accrued = ElementLabels("AccruedLiabilitiesCurrent", ("Accrued Liabilities, Current",))
    change = ElementLabels("IncreaseDecreaseInAccruedLiabilities", ("Increase (Decrease) in Accrued Liabilities",))
    assert match_label({"accrued", "liability"}, [change, accrued]).found == accrued
    assert label_words("Increase (Decrease) in Accrued Liabilities") == {"increase", "decrease", "accrued", "liability"}


def test_the_questions_period_chooses_a_balance_or_a_flow_where_both_match():
    assert match_label({"account", "payable"}, [PAYABLE, PAYABLE_CHANGE], duration=False).found == PAYABLE
    assert match_label({"account", "payable"}, [PAYABLE, PAYABLE_CHANGE], duration=True).found == PAYABLE_CHANGE
    assert match_label({"account", "payable"}, [PAYABLE_CHANGE], duration=False).found is None  # a balance asked
    # no period: the balance, unless the question says a change (then both are asked back)
    assert match_label({"account", "payable"}, [PAYABLE, PAYABLE_CHANGE]).found == PAYABLE
    assert match_label({"account", "payable"}, [PAYABLE, PAYABLE_CHANGE], said={"change"}).tied == [
        PAYABLE,
        PAYABLE_CHANGE,
    ]


def test_two_question_words_are_not_matched_by_a_label_with_two_more():
    """ "net change in cash" (content words: net, cash) is not "Acquisitions, net of cash acquired"."""
    acquisitions = ElementLabels(
        "PaymentsToAcquireBusinessesNetOfCashAcquired",
        ("Payments to Acquire Businesses, Net of Cash Acquired",),
        ("Acquisitions, net of cash acquired",),
        duration=True,
    )
    assert match_label({"net", "cash"}, [acquisitions]).found is None
    assert match_label({"acquisition", "net", "cash"}, [acquisitions]).found == acquisitions


def test_analysts_abbreviations_and_stock_or_share_read_as_the_labels_say():
    eps = ElementLabels("EarningsPerShareDiluted", ("Earnings Per Share, Diluted",), duration=True)
    buybacks = ElementLabels(
        "PaymentsForRepurchaseOfCommonStock", ("Payments for Repurchase of Common Stock",), duration=True
    )
    sbc = ElementLabels("ShareBasedCompensation", ("Share-based Compensation",), duration=True)
    ppe = ElementLabels("PropertyPlantAndEquipmentNet", ("Property, Plant and Equipment, Net",))
    every = [eps, buybacks, sbc, ppe, GOODWILL]

    def found(question: str, company: str) -> ElementLabels | None:
        text = label_terms(question)
        words = content_words(text, [company])
        return match_label(words, every, said=question_words(text), per_share="per share" in text).found

    assert found("What was Abbott's diluted EPS in Q2 2009?", "Abbott") == eps
    assert found("How much did Abbott spend on stock buybacks in the first half?", "Abbott") == buybacks
    assert found("Abbott share repurchases, six months ended June 30, 2009", "Abbott") == buybacks
    assert found("What was Abbott's stock-based compensation in H1 2009?", "Abbott") == sbc
    assert found("What was Cummins' net PP&E as of June 28, 2009?", "Cummins") == ppe


def test_a_company_name_with_an_ampersand_is_dropped_whole():
    assert content_words("What was H&R Block's goodwill as of July 31, 2009?", ["h & r block"]) == {"goodwill"}
    assert content_words("What was Becton Dickinson &'s goodwill?", ["becton dickinson &"]) == {"goodwill"}


def test_words_no_catalog_phrase_reads_are_reported():
    """A catalog measure found inside a longer name ("retained earnings", "repayments of long-term debt") leaves
    words unread: the question is then read by the elements' labels, never answered with the catalog measure."""
    assert uncovered_words("What were Abbott's retained earnings as of June 30, 2009?", ["abbott"]) == {"retained"}
    assert uncovered_words("Abbott's repayments of long-term debt in H1 2009?", ["abbott"]) == {"repayment"}
    assert uncovered_words("What was Abbott's operating margin in Q2 2009?", ["abbott"]) == set()
    assert (
        uncovered_words("Which had the higher current ratio at June 30, 2009, Abbott or Pfizer?", ["abbott", "pfizer"])
        == set()
    )
    assert uncovered_words("Merck's R&D as a percentage of sales, second quarter of 2009", ["merck"]) == set()


def test_a_word_of_a_measures_label_is_read_next_to_its_phrase_only():
    """ "Exxon's equity income as a percentage of net income" was read as stockholders' equity over net income
    (2,698.53 %, gate passed): "income" counted as read because net income's label holds it, far from that phrase."""
    q = "What was Exxon's equity income as a percentage of net income in Q2 2009?"
    assert uncovered_words(q, ["exxon"]) == {"income"}
    for q in ("What was Amgen's R&D expense in Q2 2009?", "What was Amgen's expense for R&D in Q2 2009?"):
        assert uncovered_words(q, ["amgen"]) == set()


def test_a_flow_asked_where_only_a_balance_matches_closely_is_asked_back():
    """DTE's "dividends paid in the six months ended": "Dividends payable" (a balance, one other word) or the cash
    flow line "Dividends on common stock" (two): asked back, never the balance silently."""
    payable = ElementLabels("DividendsPayableCurrent", ("Dividends Payable, Current",), ("Dividends payable",))
    paid = ElementLabels(
        "PaymentsOfDividendsCommonStock",
        ("Payments of Ordinary Dividends, Common Stock",),
        ("Dividends on common stock",),
        duration=True,
    )
    got = match_label({"dividend"}, [payable, paid], duration=True, said={"paid"})
    assert got.found is None and got.tied == [payable, paid]
    assert match_label({"dividend"}, [payable, paid], duration=False).found == payable
    # a balance named by its whole standard label stands: "goodwill in Q2" is the balance at the quarter's end
    assert match_label({"goodwill"}, [GOODWILL, IMPAIRMENT], duration=True).found == GOODWILL


def test_the_primary_statements_come_before_the_statement_of_equity_and_per_share_needs_per_share():
    equity_line = ElementLabels(
        "AdjustmentsToAdditionalPaidInCapitalSharebasedCompensationRequisiteServicePeriodRecognitionValue",
        ("Adjustments to Additional Paid in Capital, Share-based Compensation, Requisite Service Period Recognition",),
        ("Stock-based compensation",),
        duration=True,
        statements=frozenset({"EQ"}),
    )
    cash_flow_line = ElementLabels(
        "ShareBasedCompensation",
        ("Share-based Compensation",),
        ("Stock-based compensation expense",),
        duration=True,
        statements=frozenset({"CF"}),
    )
    assert match_label({"share", "based", "compensation"}, [equity_line, cash_flow_line]).found == cash_flow_line
    per_share = ElementLabels("CommonStockDividendsPerShareDeclared", ("Dividends per share",), duration=True)
    paid = ElementLabels("PaymentsOfDividends", ("Payments of Dividends",), ("Dividends paid",), duration=True)
    assert match_label({"dividend"}, [per_share, paid], said={"paid"}).found == paid
    assert match_label({"dividend"}, [per_share, paid], per_share=True).found == per_share


def test_a_component_line_gives_way_to_the_total_stated_net_of_tax():
    """Cummins' 10-Q for 2010-03-28 (2010q2): its balance sheet shows AOCI's components, "Other" a filer's element
    whose standard label repeats the total's words; the total is stated "Net of Tax", the basis, not other words."""
    total = ElementLabels(
        "AccumulatedOtherComprehensiveIncomeLossNetOfTax",
        ("Accumulated Other Comprehensive Income (Loss), Net of Tax",),
        ("Total accumulated other comprehensive loss",),
        statements=frozenset({"BS"}),
    )
    other = ElementLabels(
        "AccumulatedOtherComprehensiveIncomeLossOther",
        ("Accumulated Other Comprehensive Income (Loss), Other",),
        ("Other",),
        custom=True,
        statements=frozenset({"BS"}),
    )
    words = {"accumulated", "other", "comprehensive", "income"}
    assert match_label(words, [other, total], duration=False).found == total
    assert match_label(words | {"net", "tax"}, [other, total], duration=False).found == total


def test_a_line_only_a_filer_labelled_with_the_words_is_asked_back_beside_one_whose_meaning_holds_them():
    """Helmerich & Payne's cash flow statement (2010q2) labels a change in other deferred liabilities "Deferred
    income taxes" beside its "Deferred income tax expense": "deferred income taxes" could be either, so both are
    asked back; the filer's words alone still find a line when nothing else holds them."""
    expense = ElementLabels(
        "DeferredIncomeTaxExpenseBenefit",
        ("Deferred Income Tax Expense (Benefit)",),
        ("Deferred income tax expense",),
        duration=True,
        statements=frozenset({"CF"}),
    )
    change = ElementLabels(
        "IncreaseDecreaseInOtherDeferredLiability",
        ("Increase (Decrease) in Other Deferred Liability",),
        ("Deferred income taxes",),
        duration=True,
        statements=frozenset({"CF"}),
    )
    words = {"deferred", "income", "tax"}
    assert match_label(words, [change, expense], duration=True).tied == [expense, change]
    assert match_label(words, [change], duration=True).found == change  # the filer's words alone still find it


def test_a_word_before_the_questions_words_narrows_the_quantity():
    """GrafTech's "Net change in restricted cash" is not its net change in cash; General Growth's "Total redeemable
    noncontrolling interests" is not its noncontrolling interest; "Total" and a grammar word do not narrow."""
    assert narrows("Net change in restricted cash", {"net", "cash"}, {"net", "cash", "change"})
    assert narrows("Total redeemable noncontrolling interests", {"noncontrolling", "interest"}, set())
    assert narrows("Preferred dividends", {"dividend"}, set())
    assert not narrows("Total accumulated other comprehensive loss", {"accumulated", "other"}, {"accumulated", "other"})
    words = {"noncontrolling", "interest"}
    assert not narrows("Stockholders' Equity Attributable to Noncontrolling Interest", words, words)
    restricted = ElementLabels(
        "IncreaseDecreaseInRestrictedCash", ("Increase (Decrease) in Restricted Cash",), ("Net change in restricted cash",),
        duration=True, statements=frozenset({"CF"}),
    )  # fmt: skip
    assert match_label({"net", "cash"}, [restricted], duration=True, said={"net", "change", "cash"}).found is None


def test_a_flow_asked_is_never_a_balance_whose_label_is_not_the_words():
    """ "Dividends paid in the three months ended ..." where only "Dividends payable" holds the word: nothing."""
    payable = ElementLabels("DividendsPayableCurrent", ("Dividends Payable, Current",), ("Dividends payable",))
    assert match_label({"dividend"}, [payable], duration=True, said={"dividend", "payment"}).found is None
    assert match_label({"goodwill"}, [GOODWILL], duration=True).found == GOODWILL  # its whole label: the balance


def test_dividends_paid_are_the_cash_flow_statements_line_not_the_equity_statements():
    """Loews (2010q2): the equity statement's "Dividends paid" (Dividends, Cash) and the cash flow statement's
    "Dividends paid" (Payments of Dividends, Common Stock): the primary statement's line."""
    equity = ElementLabels(
        "DividendsCash", ("Dividends, Cash",), ("Dividends paid",), duration=True, statements=frozenset({"EQ"})
    )
    paid = ElementLabels(
        "PaymentsOfDividendsCommonStock", ("Payments of Dividends, Common Stock",), ("Dividends paid",),
        duration=True, statements=frozenset({"CF"}),
    )  # fmt: skip
    said = question_words("What were Loews' dividends paid in the three months ended March 31, 2010?")
    assert match_label({"dividend"}, [equity, paid], duration=True, said=said).found == paid


def test_a_par_value_is_per_share_and_a_labels_par_value_description_is_not():
    """Goldman Sachs (2010q2): "Common stock held in treasury, at cost, par value $0.01 per share; ..." is the
    treasury stock, in USD; "Treasury stock, par value" is a per-share amount."""
    value = ElementLabels(
        "TreasuryStockValue", ("Treasury Stock, Value",), ("Common stock held in treasury, at cost, par value $0.01 per share",)
    )  # fmt: skip
    par = ElementLabels(
        "TreasuryStockParValue", ("Treasury Stock Par Value",), ("Treasury stock, par value",), custom=True
    )
    assert not value.per_share and par.per_share
    assert match_label({"treasury", "share"}, [par, value], duration=False).found == value


def test_a_question_that_says_only_a_labels_stated_basis_does_not_match_it():
    """ "Net of Cash Acquired" is the basis of the acquisitions line, not other words; but a question whose words are
    only the basis ("net change in cash": net, cash) names another quantity."""
    acquisitions = ElementLabels(
        "PaymentsToAcquireBusinessesNetOfCashAcquired",
        ("Payments to Acquire Businesses, Net of Cash Acquired",),
        duration=True,
    )
    gross = ElementLabels("PaymentsToAcquireBusinessesGross", ("Payments to Acquire Businesses, Gross",), duration=True)
    words = content_words(label_terms("What was the cash paid for acquisitions in the nine months?"))
    assert words == {"payment", "acquire", "business"}
    assert match_label(words, [gross, acquisitions], duration=True).found == acquisitions
    assert match_label({"net", "cash"}, [acquisitions], duration=True).found is None


def test_analysts_words_for_cash_flow_lines_and_the_equity_total():
    change = ElementLabels(
        "CashAndCashEquivalentsPeriodIncreaseDecrease",
        ("Cash and Cash Equivalents, Period Increase (Decrease)",),
        ("Decrease in cash and cash equivalents",),
        duration=True,
    )
    balance = ElementLabels("CashAndCashEquivalentsAtCarryingValue", ("Cash and Cash Equivalents, at Carrying Value",))
    text = label_terms("What was Wyeth's net change in cash in the six months ended June 30, 2009?")
    got = match_label(content_words(text, ["Wyeth"]), [balance, change], True, question_words(text))
    assert got.found == change
    options = ElementLabels(
        "ProceedsFromStockOptionsExercised", ("Proceeds from Stock Options Exercised",), duration=True
    )
    text = label_terms("Proceeds from stock option exercises in the first half?")
    assert match_label(content_words(text), [options], True, question_words(text)).found == options
    total = ElementLabels(
        "LiabilitiesAndStockholdersEquity", ("Liabilities and Equity",), ("Total Liabilities and Stockholders' Equity",)
    )
    text = "Total liabilities and shareholders' equity as of June 30, 2009?"
    assert match_label(content_words(text), [total], False, question_words(text)).found == total


def test_per_share_is_the_unit_asked_not_a_word_the_label_must_hold():
    """ "Common Stock, Dividends, Per Share, Declared": "common" before "share" would narrow the question's "share";
    the caller takes "per share" out of the words and asks for per-share elements only (``per_share``)."""
    dps = ElementLabels(
        "CommonStockDividendsPerShareDeclared", ("Common Stock, Dividends, Per Share, Declared",), duration=True
    )
    paid = ElementLabels("DividendsCommonStock", ("Dividends, Common Stock",), duration=True)
    said = question_words("dividends declared per share in the quarter")
    words = content_words("dividends declared in the quarter")
    assert match_label(words, [dps, paid], True, said, per_share=True).found == dps
    assert match_label(words, [dps, paid], True, said).found is None  # per-share elements only when per share is asked


def test_paid_never_reads_the_equity_statements_declared_dividends():
    """ "cash dividends paid" was Wyeth's "Cash dividends declared" (CashDividends, equity statement), gate passed."""
    declared = ElementLabels(
        "CashDividends", ("Cash Dividends",), ("Cash dividends declared",), True, False, frozenset({"EQ"})
    )
    payments = ElementLabels(
        "PaymentsOfDividends", ("Payments of Dividends",), ("Dividends paid",), True, False, frozenset({"CF"})
    )
    text = label_terms("What did Wyeth post in cash dividends paid in the six months ended June 30, 2009?")
    said = question_words(text)
    assert match_label(content_words(text, ["Wyeth"]), [declared, payments], True, said, paid=True).found == payments
    assert match_label({"cash", "dividend"}, [declared], True, said, paid=True).found is None


def test_an_unclassified_line_is_not_pushed_aside_by_a_cash_flow_line():
    """EOG's TreasuryStockValue is presented on a statement pre.txt calls ``UN``; a filer's "Treasury Stock Purchased"
    on the cash flow statement was answered instead for "the most recent treasury stock"."""
    value = ElementLabels("TreasuryStockValue", ("Treasury Stock, Value",), statements=frozenset({"UN"}))
    bought = ElementLabels(
        "TreasuryStockPurchased",
        ("Treasury Stock Purchased",),
        duration=True,
        custom=True,
        statements=frozenset({"CF"}),
    )
    assert match_label({"treasury", "share"}, [bought, value]).found == value


def test_a_question_with_no_period_never_picks_a_flow_over_a_balance_holding_its_words():
    """ "PG&E latest accounts payable?" was answered with the cash flow statement's line "Accounts payable" (the change,
    no other words) over the balance sheet's "Accounts Payable, Current": a question that says no change is not asked
    a balance's change. "General Growth latest noncontrolling interest?" was answered with "Allocation to
    noncontrolling interests" (a flow); the balance's labels hold the words with more other words: asked back."""
    change = ElementLabels(
        "IncreaseDecreaseInAccountsPayable",
        ("Increase (Decrease) in Accounts Payable",),
        ("Accounts payable",),
        duration=True,
        statements=frozenset({"CF"}),
    )
    balance = ElementLabels("AccountsPayableCurrent", ("Accounts Payable, Current",), statements=frozenset({"BS"}))
    assert match_label({"account", "payable"}, [change, balance]).found == balance
    assert match_label({"account", "payable"}, [change, balance], said={"change", "account", "payable"}).tied == [
        balance,
        change,
    ]
    assert match_label({"account", "payable"}, [change, balance], duration=True).found == change
    nci = ElementLabels("MinorityInterest", ("Stockholders' Equity Attributable to Noncontrolling Interest",))
    allocation = ElementLabels(
        "NetIncomeLossAttributableToNoncontrollingInterest",
        ("Net Income (Loss) Attributable to Noncontrolling Interest",),
        ("Allocation to noncontrolling interests",),
        duration=True,
        statements=frozenset({"IS"}),
    )
    got = match_label({"noncontrolling", "interest"}, [nci, allocation])
    assert got.found is None and got.tied == [nci, allocation]


def test_investing_and_financing_cash_flow_are_the_labels_net_cash_lines():
    line = ElementLabels(
        "NetCashProvidedByUsedInFinancingActivities",
        ("Net Cash Provided by (Used in) Financing Activities",),
        duration=True,
    )
    text = label_terms("What was Air Products' financing cash flow in the nine months ended June 30, 2009?")
    assert match_label(content_words(text, ["Air Products"]), [line], True, question_words(text)).found == line


def test_a_remainder_labelled_other_matches_only_a_question_that_says_other():
    """IBM's "total expenses" was answered with its "Other (income) and expense" line (USD -28,000,000)."""
    other = ElementLabels("OtherIncomeAndExpense", ("Other Income and Expense",), ("Other (income) and expense",), True)
    oci = ElementLabels("OtherComprehensiveIncomeLossNetOfTax", ("Other Comprehensive Income (Loss), Net of Tax",))
    assert match_label(content_words("What were IBM's total expenses?", ["IBM"]), [other]).found is None
    assert match_label({"comprehensive", "income"}, [oci]).found is None  # comprehensive income is not OCI
    assert match_label({"other", "expense"}, [other]).found == other
    assert match_label({"other", "comprehensive", "income"}, [oci]).found == oci


def test_r_and_d_and_sga_are_spelled_as_labels_spell_them():
    """ "revenue less R&D" read only "revenue" (one-letter words are dropped) and was answered with revenue."""
    assert content_words(label_terms("revenue less R&D")) == {"revenue", "research", "development"}
    assert content_words(label_terms("SG&A")) == {"selling", "general", "administrative"}


def test_a_label_ending_in_and_other_is_not_a_remainder():
    """Cabot Oil & Gas's "Stock-Based Compensation Expense and Other" is the compensation and more: found (the first
    remainder rule left it unread)."""
    sbc = ElementLabels(
        "ShareBasedCompensation",
        ("Share-based Payment Arrangement, Noncash Expense",),
        ("Stock-Based Compensation Expense and Other",),
        True,
    )
    words = content_words("What was Cabot Oil & Gas' stock-based compensation?", ["Cabot Oil & Gas"])
    assert match_label(words, [sbc], True).found == sbc
