"""The deterministic parts of triple extraction (seed 004, section 3.1): the schema and its few-shot
examples, sentence selection, candidate checks and the application of verification verdicts, on
real FOMC sentences. The LLM passes themselves run against a real model in test_extraction.py."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from finkg.eval.kg import load_gold, match, prf, score
from generation.kgbuild import schema as kg_schema
from generation.kgbuild.extraction import (
    ChunkExtraction,
    SentenceMemo,
    Triple,
    TripleExtractor,
    Verdict,
    apply_verdicts,
    check_candidate,
    extraction_json_schema,
    extraction_messages,
    is_boilerplate,
    parse_triples,
    sentence_groups,
    verification_messages,
    verify_json_schema,
)

GOLD = Path(__file__).parent / "data" / "kg_gold.jsonl"
# 2008-12-16 FOMC statement (public domain), sentences as the chunker keeps them
S = [
    "The Federal Open Market Committee decided today to establish a target range for the federal funds rate "
    "of 0 to 1/4 percent.",
    "Financial markets remain quite strained and credit conditions tight.",
    "In light of the declines in the prices of energy and other commodities and the weaker prospects for "
    "economic activity, the Committee expects inflation to moderate further in coming quarters.",
    "Voting for the FOMC monetary policy action were: Ben S. Bernanke, Chairman; Christine M. Cumming; "
    "Elizabeth A. Duke; Richard W. Fisher.",
    "In a related action, the Board of Governors unanimously approved a 75-basis-point decrease in the "
    "discount rate to 1/2 percent.",
    "In taking this action, the Board approved the requests submitted by the Boards of Directors of the "
    "Federal Reserve Banks of New York, Cleveland, Richmond, Atlanta, Minneapolis, and San Francisco.",
]


def item(s=1, h="declines in the prices of energy", ht="indicator_change", r="affect", t="inflation", tt="indicator"):
    return {"s": s, "h": h, "ht": ht, "r": r, "t": t, "tt": tt}


def test_schema_has_the_papers_seven_types_and_five_relations_with_examples_for_each():
    assert len(kg_schema.ENTITY_CODES) == 7 and len(kg_schema.RELATION_CODES) == 5
    assert set(kg_schema.RELATIONSHIP_TYPES.values()) == {"AFFECT", "INDICATE", "BELONG_TO", "EQUAL_TO", "MAY_LEAD_TO"}
    used = {t for ex in kg_schema.EXAMPLES for tr in ex.triples for t in (tr[2], tr[3], tr[5])}
    assert set(kg_schema.ENTITY_CODES) | set(kg_schema.RELATION_CODES) <= used
    v = kg_schema.schema_version()
    assert v == kg_schema.schema_version() and v.startswith("kgs-") and len(v) == 16
    # the stored document round-trips through JSON (it is what (:KGSchema) keeps)
    assert json.loads(json.dumps(kg_schema.schema_document()))["prompt_revision"] == kg_schema.PROMPT_REVISION


def test_prompt_prefix_is_identical_across_calls_so_the_kv_cache_is_reused():
    a, b = extraction_messages(S[:2]), extraction_messages(S[2:3])
    assert a[:-1] == b[:-1] and a[-1] != b[-1]
    assert a[-1]["content"].startswith("Sentences:\n1. The Federal Open Market Committee")
    positions = extraction_json_schema(2)["properties"]["triples"]["items"]["prefixItems"]
    assert positions[0]["enum"] == [1, 2]
    assert positions[2]["enum"] == positions[5]["enum"] == list(kg_schema.ENTITY_CODES)
    assert positions[3]["enum"] == list(kg_schema.RELATION_CODES)
    # the few-shot answers are in the compact array format the schema asks for
    first_answer = json.loads(a[2]["content"])
    assert first_answer["triples"][0] == list(kg_schema.EXAMPLES[0].triples[0])


def test_array_answers_are_what_llama_cpp_grammar_enforces():
    # both schemas compile to llama.cpp grammars (prefixItems tuples, anyOf verdict shapes)
    from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

    for schema in (extraction_json_schema(4), verify_json_schema(3)):
        assert LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False) is not None
    # the sentence numbers and the answer's length are bounded (a small model otherwise loops to the cap)
    gbnf = json_schema_to_gbnf(json.dumps(extraction_json_schema(2)))
    assert 'triples-item-tuple-0 ::= "1" | "2"' in gbnf
    assert extraction_json_schema(2)["properties"]["triples"]["maxItems"] == 6


def test_boilerplate_sentences_are_not_sent():
    assert [is_boilerplate(s) for s in S] == [False, False, False, True, False, True]
    assert sentence_groups(S, 2) == [[0, 1], [2, 4]]
    assert sentence_groups(S, 2, skip_first=1) == [[1, 2], [4]]
    assert sentence_groups(S, 2, answered=lambda s: s.startswith("Financial")) == [[0, 2], [4]]
    with pytest.raises(ValueError):
        sentence_groups(S, 0)


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("not a dict", "invalid_item"),
        (item(s=9), "bad_sentence_number"),
        (item(s="x"), "bad_sentence_number"),
        (item(ht="company"), "unknown_type"),
        (item(r="causes"), "unknown_relation"),
        (item(h="  "), "empty_entity"),
        (item(t="Inflation"), None),
        (["1", "declines in the prices of energy", "indicator_change", "affect", "Inflation", "indicator"], None),
        ([1, "declines in the prices of energy", "affect", "inflation"], "invalid_item"),
        (item(t="declines in the prices of energy"), "self_loop"),
        (item(h="Federal Open Market Committee", ht="policy"), "institution"),
        (item(t="the Committee"), "institution"),
        (item(t="strained"), "not_a_noun_phrase"),
        (item(t="unemployment rate"), "not_in_text"),
        (item(h=" ".join(["energy"] * 20)), "long_entity"),
    ],
)
def test_candidate_checks_name_the_reason(bad, reason):
    triple, why = check_candidate(bad, [2], S)
    if reason is None:
        assert triple == Triple(
            2, "declines in the prices of energy", "indicator_change", "affect", "Inflation", "indicator"
        )
    else:
        assert triple is None and why == reason


def test_parse_keeps_every_rejected_item_with_its_reason():
    data = {
        "triples": [
            item(),
            item(),
            item(r="causes"),
            item(s=2, h="financial markets", ht="market_status", r="affect", t="credit conditions", tt="market_status"),
        ]
    }
    triples, rejected = parse_triples(data, [2, 1], S)
    assert [t.sentence for t in triples] == [2, 1]
    assert [r["reason"] for r in rejected] == ["duplicate", "unknown_relation"]
    seen: set = set()
    parse_triples({"triples": [item()]}, [2], S, seen)  # an earlier answer for the same chunk
    again, why = parse_triples({"triples": [item()]}, [2], S, seen)
    assert again == [] and [r["reason"] for r in why] == ["duplicate"]
    with pytest.raises(ValueError):
        parse_triples({"answer": []}, [2], S)


def test_verdicts_keep_fix_drop_and_missing():
    cands = [
        Triple(2, "declines in the prices of energy", "indicator_change", "affect", "inflation", "indicator"),
        Triple(1, "financial markets", "market_status", "indicate", "credit conditions", "market_status"),
        Triple(1, "financial markets", "market_status", "affect", "credit conditions", "market_status"),
        Triple(
            0,
            "target range for the federal funds rate",
            "indicator",
            "equal_to",
            "0 to 1/4 percent",
            "threshold_comparison",
        ),
    ]
    data = {
        "verdicts": [
            [1, "keep"],
            [
                2,
                "fix",
                "wrong_relation",
                "financial markets",
                "market_status",
                "affect",
                "credit conditions",
                "market_status",
            ],
            [3, "drop", "duplicate"],
            {"i": 3, "v": "keep"},
        ]
    }
    v = apply_verdicts(data, cands, S)
    assert [(x.decision, x.reason) for x in v] == [
        ("keep", ""),
        ("fix", "wrong_relation"),
        ("drop", "duplicate"),
        ("drop", "no_verdict"),
    ]
    assert v[1].triple.relation == "affect" and v[2].triple is None
    bad_fix = apply_verdicts({"verdicts": [{"i": 1, "v": "fix", "t": "unemployment rate"}]}, cands[:1], S)
    assert (bad_fix[0].decision, bad_fix[0].reason) == ("drop", "bad_fix:not_in_text")
    assert (
        "1. declines in the prices of energy [indicator_change] -affect-> inflation"
        in verification_messages(S[2], cands[:1])[-1]["content"]
    )


def test_gold_set_is_hand_checked_real_text(tmp_path):
    gold = load_gold(GOLD)
    assert len(gold) >= 50 and len({g.statement for g in gold}) == 10
    assert {g.head_type for g in gold} | {g.tail_type for g in gold} <= set(kg_schema.ENTITY_CODES)
    assert {g.relation for g in gold} == set(kg_schema.RELATION_CODES)
    for g in gold:  # every gold entity is grounded in its statement (the extractor's own rule, min share 0.5)
        text = Path(__file__).parent / "data" / "fomc-statements" / f"{g.statement}.txt"
        if text.exists():
            from generation.kgbuild.extraction import grounded

            body = " ".join(text.read_text(encoding="utf-8").split())
            assert grounded(g.head, body) and grounded(g.tail, body), g
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"statement": "1"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"g.jsonl:1"):
        load_gold(bad)


def test_matching_is_one_to_one_and_scores_add_up():
    gold = [g for g in load_gold(GOLD) if g.statement == "20081216"]
    exact = [Triple(0, g.head, g.head_type, g.relation, g.tail, g.tail_type) for g in gold]
    assert len(match(exact, gold)) == len(gold)
    assert len(match(exact + exact, gold)) == len(gold)  # duplicates do not match twice
    wrong_rel = [
        Triple(0, g.head, g.head_type, "belong_to" if g.relation != "belong_to" else "affect", g.tail, g.tail_type)
        for g in gold
    ]
    assert match(wrong_rel, gold) == [] and len(match(wrong_rel, gold, use_relation=False)) == len(gold)
    assert prf(10, 20, 5) == {"precision": 0.5, "recall": 0.25, "f1": pytest.approx(1 / 3)}
    rows = score({"20081216": {"proposed": exact + wrong_rel, "verified": exact}}, gold)
    by = {(r["stage"], r["matching"]): r for r in rows}
    assert by[("proposed", "head+relation+tail")]["precision"] == 0.5
    assert by[("verified", "head+relation+tail")]["f1"] == 1.0


class _Spy:
    """The real LLM client (SmolLM2 through llama.cpp), recording the last user turn of every call."""

    def __init__(self, client):
        self.client, self.prompts = client, []

    @property
    def model_id(self):
        return self.client.model_id

    def chat(self, messages, **kw):
        self.prompts.append(messages[-1]["content"])
        return self.client.chat(messages, **kw)


@pytest.fixture(scope="module")
def smol(tmp_path_factory):
    from test_llm import smol_gguf

    from finkg.config import load_settings
    from generation.llm import client_from_settings

    return client_from_settings(
        load_settings(
            llm_backend="llama-cpp",
            llm_model_path=smol_gguf(),
            llm_n_ctx=4096,
            llm_cache_dir=tmp_path_factory.mktemp("llm-cache"),
        )
    )


MARKETS = Triple(1, "financial markets", "market_status", "affect", "credit conditions", "market_status")


def test_identical_sentences_are_answered_from_the_memo_not_sent_again(smol):
    memo = SentenceMemo()
    # an earlier chunk answered S[1] (its triple, kept by verification)
    earlier = replace(MARKETS, sentence=0)
    memo.remember_proposals(S[1], [earlier])
    memo.remember_verdict(S[1], Verdict(earlier, "keep", triple=earlier))
    # a later chunk repeats S[1] (other whitespace) after a new sentence: only the new one is sent
    chunk = [S[0], S[1].replace(" ", "  ", 1)]
    spy = _Spy(smol)
    ex = TripleExtractor(spy, sentences_per_call=4, memo=memo)
    out = ex.propose("c2", chunk)
    assert spy.prompts == ["Sentences:\n1. " + S[0]]
    assert (out.sentences_sent, out.sentences_reused) == (1, 1) and 1 in out.answered
    assert MARKETS in out.proposed and all(t.sentence == 0 for t in out.proposed if t != MARKETS)
    assert memo.knows(S[0])  # the new sentence's answer is remembered (even an empty one)
    spy.prompts.clear()
    out.proposed = [MARKETS]
    ex.verify(out, chunk)
    assert spy.prompts == [] and out.verdicts_reused == 1 and out.verdicts[0].decision == "keep"
    # a stored record seeds a fresh memo (a resumed run): the same chunk costs no call
    rebuilt = ChunkExtraction.from_record("c2", out.record())
    assert rebuilt.verdicts == out.verdicts and rebuilt.answered == out.answered
    fresh = SentenceMemo()
    fresh.add(chunk, rebuilt)
    again = TripleExtractor(_Spy(smol), memo=fresh)
    redo = again.propose("c3", chunk)
    assert again.client.prompts == [] and MARKETS in redo.proposed


def test_failed_answers_are_recorded_and_not_remembered(smol):
    memo = SentenceMemo()
    ex = TripleExtractor(_Spy(smol), max_tokens=2, verify_tokens_per_triple=0, memo=memo)
    out = ex.propose("c1", S[1:2])  # two tokens cannot hold the answer: a failure with the raw text
    assert [f["stage"] for f in out.failures] == ["extract"] and "raw" in out.failures[0]
    assert not memo.knows(S[1]) and out.answered == [] and out.proposed == []
    # a failed verification call gives "no_verdict" drops: the memo keeps none of them
    memo.remember_verdict(S[1], Verdict(MARKETS, "drop", "no_verdict"))
    assert memo.verdict(S[1], MARKETS) is None


def test_calls_in_flight_together_give_the_one_at_a_time_result(smol):
    # three chunks that share sentences (as FOMC statements do): S[1] and S[2] each appear twice
    chunks = [("c1", [S[0], S[1]], 0), ("c2", [S[1], S[2]], 0), ("c3", [S[2], S[0].upper()], 0)]
    one, many = _Spy(smol), _Spy(smol)
    seq = TripleExtractor(one, sentences_per_call=1, memo=SentenceMemo(), workers=1)
    par = TripleExtractor(many, sentences_per_call=1, memo=SentenceMemo(), workers=4)
    a = [seq.propose(cid, sents, skip) for cid, sents, skip in chunks]
    b = par.propose_many(chunks)
    fields = ("proposed", "rejected", "answered", "sentences_sent", "sentences_reused", "failures")
    assert [[getattr(x, f) for f in fields] for x in a] == [[getattr(x, f) for f in fields] for x in b]
    # the same calls were made, no sentence twice: S[0], S[1], S[2] and the upper-cased S[0]
    assert sorted(one.prompts) == sorted(many.prompts) and len(many.prompts) == 4
    assert [x.sentences_reused for x in b] == [0, 1, 1]
    one.prompts.clear()
    many.prompts.clear()
    for x, (_, sents, _) in zip(a, chunks):
        seq.verify(x, sents)
    par.verify_many([(x, sents) for x, (_, sents, _) in zip(b, chunks)])
    assert [x.verdicts for x in a] == [x.verdicts for x in b]
    assert sorted(one.prompts) == sorted(many.prompts)
    assert [x.verdicts_reused for x in a] == [x.verdicts_reused for x in b]


def test_the_content_filter_skips_sentences_without_financial_content():
    from generation.kgbuild.extraction import eligible_sentences, has_financial_content

    # sentences of the FOMC statements in ../shared/data/fomc-statements
    assert all(has_financial_content(s) for s in S[:3])
    assert has_financial_content("Meanwhile, inflationary pressures have diminished appreciably.")
    assert has_financial_content("As always, the discount window is available as a source of funding.")
    assert not has_financial_content(
        "In addition, the Committee unanimously decided to expedite the release of its minutes."
    )
    assert not has_financial_content("; Roger W. Ferguson, Jr.")  # a roll-call fragment
    chunk = [S[0], "Accordingly, the full degree of adjustment is judged no longer necessary.", S[1]]
    assert eligible_sentences(chunk) == [0, 1, 2]
    assert eligible_sentences(chunk, content_filter=True) == [0, 2]
    assert sentence_groups(chunk, 4, content_filter=True) == [[0, 2]]
