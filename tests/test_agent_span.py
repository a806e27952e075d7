"""Span answers (generation/agent/span.py): the table's scale for a cell's number, the gate's answer type, the
paragraphs left out to fit the context window, and, with the real SmolLM2, that no answer ever carries a number
the evidence does not state (SmolLM2 is too small to be right; the mechanics are what is asserted)."""

from __future__ import annotations

import re

import pytest
from test_agent_tools import SALES
from test_llm import smol_gguf

from generation.agent.loop import table_evidence
from generation.agent.span import (
    answer_span,
    fit_paragraphs,
    question_type_of,
    quoted_scale,
    span_messages,
    years_only,
)
from generation.llm import LlamaCppBackend, LLMClient
from generation.llm.answer_line import extract_answer

IN_THOUSANDS = [["", "2019", "2018"], ["(in thousands)", "", ""], ["Revenue", "$669,094", "$612,100"]]


def test_a_cell_s_number_takes_the_table_s_scale_and_nothing_else_does():
    rows = table_evidence(IN_THOUSANDS)
    assert quoted_scale(extract_answer("Answer: $669,094"), rows) == "thousand"
    assert quoted_scale(extract_answer("Answer: 669094 | 612,100"), rows) == "thousand"
    assert quoted_scale(extract_answer("Answer: 1.1 billion"), rows) == "billion"  # the scale it wrote
    assert quoted_scale(extract_answer("Answer: 5,000"), rows) == ""  # not a cell of the table
    assert quoted_scale(extract_answer("Answer: 12.5%"), rows) == ""
    assert quoted_scale(extract_answer("Answer: Revenue"), rows) == ""
    assert quoted_scale(extract_answer("Answer: $1,452.4"), table_evidence(SALES)) == ""  # the table names none


def test_a_paragraph_s_number_takes_the_scale_word_written_after_it_there():
    text = ["Federal income tax was $36.5 million in fiscal 2019.", "Depreciation was 2.6 billion in 2018."]
    assert quoted_scale(extract_answer("Answer: $36.5"), [], text) == "million"
    assert quoted_scale(extract_answer("Answer: 2.6"), [], text) == "billion"
    assert quoted_scale(extract_answer("Answer: 36.5%"), [], text) == ""
    assert quoted_scale(extract_answer("Answer: 6.5"), [], text) == ""  # not the number written there
    # a cell of a table that names its scale takes the table's, before any paragraph
    assert quoted_scale(extract_answer("Answer: 669,094"), table_evidence(IN_THOUSANDS), ["669,094 million"]) == (
        "thousand"
    )


def test_which_years_answers_are_the_years():
    assert years_only("Which years does the table show?", ["Fiscal Year 2018", "FY 2017"]) == ["2018", "2017"]
    assert years_only("In which year was revenue larger?", ["2019"]) == ["2019"]
    assert years_only("Which years are shown?", ["2018 and 2019"]) == ["2018 and 2019"]  # two years: kept
    assert years_only("What was revenue?", ["Fiscal Year 2018"]) == ["Fiscal Year 2018"]


def test_the_gate_s_answer_type_follows_the_question_and_the_items():
    assert question_type_of("How many years are shown?", extract_answer("Answer: 3")) == "count"
    assert question_type_of("How many dollars were paid?", extract_answer("Answer: 3")) == "span"
    assert question_type_of("Which years?", extract_answer("Answer: 2019 | 2018")) == "multi-span"
    assert question_type_of("What was revenue?", extract_answer("Answer: $669,094")) == "span"


def test_the_memory_block_comes_first_and_its_absence_leaves_the_prompt_as_it_was():
    rows, text = table_evidence(SALES), ["Total sales increased in fiscal 2019."]
    plain = span_messages("Why did total sales increase?", rows, text)
    assert plain == span_messages("Why did total sales increase?", rows, text, examples="")
    assert plain[1]["content"].startswith("Table:\n")
    block = "Experience from similar answered questions:\n- Question: Why?\n  Answer: lower demand"
    shown = span_messages("Why did total sales increase?", rows, text, "too long", examples=block)
    body = shown[1]["content"]
    assert body.startswith(block + "\n\nTable:\n") and body.removeprefix(block + "\n\n").startswith(plain[1]["content"])
    assert body.endswith("Your previous answer was rejected: too long. Try again.")


@pytest.mark.model
def test_paragraphs_sharing_fewest_words_with_the_question_are_left_out_to_fit():
    client = LLMClient(LlamaCppBackend(smol_gguf(), n_ctx=512, n_threads=2))
    question = "Why did operating income decrease in fiscal 2019?"
    relevant = "Operating income decreased in fiscal 2019 primarily as a result of lower volume."
    filler = [f"Paragraph {i} describes the lease portfolio, its terms and the renewal options. " * 6 for i in range(6)]
    paragraphs = [filler[0], relevant, *filler[1:]]
    fitted = fit_paragraphs(client, question, table_evidence(SALES), paragraphs, max_tokens=64)
    assert 0 < fitted.paragraphs_trimmed < len(paragraphs)
    assert relevant in fitted.paragraphs and len(fitted.paragraphs) == len(paragraphs) - fitted.paragraphs_trimmed
    assert [p for p in paragraphs if p in fitted.paragraphs] == fitted.paragraphs  # their order is kept
    assert client.fits(fitted.messages, 64 + 64)
    assert not client.fits(span_messages(question, table_evidence(SALES), paragraphs), 64 + 64)


@pytest.mark.model
def test_a_span_answer_is_given_only_when_every_number_in_it_is_in_the_evidence():
    client = LLMClient(LlamaCppBackend(smol_gguf(), n_ctx=2048, n_threads=2))
    rows = table_evidence(SALES)
    text = ["Total sales increased in fiscal 2019 because of higher fixed-price volume."]
    stated = [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", " ".join(rows + text))]

    def is_stated(number: str) -> bool:  # as written, or in thousands/millions/billions of a stated one, rounded
        n, decimals = float(number.replace(",", "")), len(number.partition(".")[2])
        return any(round(s / 1000**k, decimals) == n for s in stated for k in range(4))

    for question in ("What were the total sales in 2018?", "Why did total sales increase?", "Which years are shown?"):
        out, scale = answer_span(client, question, rows, text, max_tokens=48)
        assert out.steps and out.steps[0].kind == "llm" and scale in ("", "thousand", "million", "billion", "percent")
        if out.answer is None:
            assert out.status in ("could not verify", "could not answer") and out.reasons
            continue
        assert out.status == "answered" and out.verdict is not None and out.verdict.passed
        assert all(is_stated(x) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", out.answer)), (question, out.answer)
        assert out.derivation == {}  # nothing was computed


def test_texts_are_ranked_by_the_distinct_words_they_share_with_the_question():
    from retrieval.text.overlap import by_shared_words

    texts = ["Cost of sales rose.", "Revenue in 2019 was $5 million.", "Revenue fell.", "Other income."]
    assert by_shared_words("What was the revenue in 2019?", texts) == [1, 2, 0, 3]  # ties keep their order
    assert by_shared_words("REVENUE revenue", ["revenue revenue revenue", "Revenue"]) == [0, 1]  # distinct words
    assert by_shared_words("anything", []) == []
