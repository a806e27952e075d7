"""The frozen reader (seed 000, section 3.2 and Appendix B) with the real SmolLM2 through llama.cpp: the schema
restricts cited ids to those shown, a cut-off answer is recorded as failed with its raw text (never turned
into a neutral prediction), and ids that were not shown are kept apart."""

from __future__ import annotations

import pytest
from test_llm import smol_gguf

from generation.feedback.reader import (
    HORIZONS,
    MAX_REASON_CHARS,
    SYSTEM,
    EventAnchor,
    EvidenceItem,
    FrozenReader,
    parse_reader_answer,
    reader_messages,
    reader_schema,
)
from generation.llm import LlamaCppBackend, LLMCache, LLMClient

# Real tweets (tests/data/feedback_tweets/MSFT, 2015-07-22): the anchor and two earlier tweets
ANCHOR = EventAnchor(
    "MSFT",
    "Microsoft: Send, Slack, And Power BI http://t.co/4PbU67cvEZ $MSFT #MICROSOFT #WINDOWS",
    "2015-07-22 17:38 New York (after hours)",
    "2015-07-23",
    "Other/Mixed",
)
EVIDENCE = [
    EvidenceItem(
        "text:a",
        "news",
        "RT @LizzyDuncan: Trading at Noon: Apple drags down markets: http://t.co/VInfPSJDdE $AAPL $MSFT $YHOO",
    ),
    EvidenceItem("text:b", "social", "$MSFT Microsoft Q4 revenue beats, cloud revenue up; shares rise after hours"),
]
CARD = "as_of: 2015-07-22 close; market_proxy: sp500\nMSFT returns: prior 1D -3.72%, prior 5D -2.10%, prior 20D +2.95%"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    cache = LLMCache(tmp_path_factory.mktemp("reader-cache"))
    return LLMClient(LlamaCppBackend(smol_gguf(), n_ctx=2048, n_threads=2), cache=cache)


def test_schema_restricts_cited_ids_to_those_shown():
    schema = reader_schema(3)
    assert schema["properties"]["cited_ids"]["items"]["enum"] == ["E1", "E2", "E3"]
    assert schema["properties"]["cited_ids"]["maxItems"] == 3
    assert all(schema["properties"][h] == {"type": "integer", "enum": [-1, 0, 1]} for h in HORIZONS)
    assert schema["properties"]["reason"]["maxLength"] == MAX_REASON_CHARS
    assert set(schema["required"]) == {*HORIZONS, "cited_ids", "reason"}
    assert reader_schema(0)["properties"]["cited_ids"] == {"type": "array", "maxItems": 0}
    system, user = reader_messages(ANCHOR, EVIDENCE, CARD)
    assert system == {"role": "system", "content": SYSTEM}
    assert "E1 [News]: RT @LizzyDuncan" in user["content"] and "E2 [Social]: $MSFT" in user["content"]
    assert "prediction_day: 2015-07-23" in user["content"] and CARD in user["content"]
    assert "from E1, E2" in user["content"]


def test_smollm2_answers_with_signals_and_only_shown_ids(client):
    answer = FrozenReader(client, max_tokens=128).read(ANCHOR, EVIDENCE, CARD)
    assert answer.evidence_ids == {"E1": "text:a", "E2": "text:b"}
    assert answer.ok, (answer.error, answer.raw)
    assert set(answer.predictions) == set(HORIZONS) and set(answer.predictions.values()) <= {-1, 0, 1}
    assert set(answer.cited_ids) <= {"text:a", "text:b"} and answer.invalid_ids == []
    assert answer.completion_tokens > 0 and not answer.cached and len(answer.reason) <= MAX_REASON_CHARS
    again = FrozenReader(client, max_tokens=128).read(ANCHOR, EVIDENCE, CARD)  # greedy + disk cache
    assert again.cached and again.predictions == answer.predictions and again.cited_ids == answer.cited_ids


def test_a_cut_off_answer_is_recorded_as_failed_with_its_raw_text(client):
    calls = client.backend.calls
    answer = FrozenReader(client, max_tokens=6).read(ANCHOR, EVIDENCE, CARD)
    assert client.backend.calls == calls + 1
    assert answer.status == "failed" and not answer.ok
    assert answer.predictions == {} and answer.cited_ids == []  # not a neutral prediction
    assert answer.raw.startswith("{") and len(answer.raw) < 40
    assert "does not fit the schema" in answer.error and "is missing" in answer.error


def test_parsed_answers_keep_invalid_ids_apart_and_reject_bad_signals():
    data = {"1D": 1, "3D": 0, "5D": -1, "cited_ids": ["E2", "E9", "E2", "N1"], "reason": "x" * 500}
    predictions, valid, invalid, reason = parse_reader_answer(data, EVIDENCE)
    assert predictions == {"1D": 1, "3D": 0, "5D": -1}
    assert valid == ["text:b"] and invalid == ["E9", "N1"] and len(reason) == MAX_REASON_CHARS
    for bad, message in (
        ({"1D": "+1", "3D": 0, "5D": 0}, "1D is '\\+1'"),
        ({"1D": True, "3D": 0, "5D": 0}, "1D is True"),
        ({"1D": 2, "3D": 0, "5D": 0}, "1D is 2"),
        ({"1D": 0, "3D": 0}, "no '5D' signal"),
        (["E1"], "not a JSON object"),
    ):
        with pytest.raises(ValueError, match=message):
            parse_reader_answer(bad, EVIDENCE)
    with pytest.raises(ValueError, match="max_tokens"):
        FrozenReader(object(), max_tokens=0)
