"""Text metrics (finkg/eval/metrics/text.py) with real parts: rouge-score, bert-score with the local
all-MiniLM-L6-v2 directory (`finkg models install`; nothing is downloaded) and SmolLM2-135M through
llama.cpp as the judge. The malformed judge answers are real raw answers stored in the real LLM cache
under the keys the client computes (the way tests/test_llm.py checks parsing after the cache).
"""

from __future__ import annotations

import json
import math

import pytest
from conftest import minilm_dir

from finkg import models
from finkg.config import load_settings
from finkg.eval.metrics.text import (
    JUDGE_SCHEMA,
    PRF,
    BertScoreModel,
    BertScoreUnavailable,
    JudgeVerdict,
    RougeTokenizer,
    bertscore_from_settings,
    judge_consistency,
    judge_messages,
    mean_judge_score,
    rouge_l,
    score_texts,
    summarize,
)
from generation.llm import Completion, LlamaCppBackend, LLMCache, LLMClient, cache_key

SMOL = "smollm2-135m-instruct-q4_1"

# Real FOMC statement sentences (data/fomc-statements: 2008-12-16 and 2015-12-16) as references.
CUT = (
    "The Federal Open Market Committee decided today to establish a target range for the federal funds rate "
    "of 0 to 1/4 percent."
)
HIKE = "The Committee decided to raise the target range for the federal funds rate to 1/4 to 1/2 percent."
CUT_PARAPHRASE = "The FOMC lowered its federal funds rate target to a range of zero to 0.25 percent."
UNRELATED = "Apple sold more iPhones in China during the June quarter than a year earlier."


def test_the_rouge_tokenizer_keeps_numbers_and_non_ascii_text():
    tok = RougeTokenizer()
    assert tok.tokenize("Revenue rose 12.5 % to $1,234.5 million in 2019.") == [
        "revenue",
        "rose",
        "12.5%",
        "to",
        "1234.5",
        "million",
        "in",
        "2019",
    ]
    assert tok.tokenize("营收增长12%") == ["营", "收", "增", "长", "12%"]
    assert tok.tokenize("Zürich's loss was -3.2%; 2018-2019") == ["zürich's", "loss", "was", "-3.2%", "2018", "2019"]
    assert tok.tokenize("ＧＤＰ　１２３") == ["gdp", "123"]  # NFKC: full-width letters and digits
    assert tok.tokenize("FY2019 Q4 covid-19") == ["fy2019", "q4", "covid", "19"]


def test_rouge_l_by_hand():
    # LCS of [revenue rose 12.5% in 2019] and [in 2019 revenue rose 12.5%] is "revenue rose 12.5%": 3 of 5 tokens
    (s,) = rouge_l(["Revenue rose 12.5% in 2019"], ["In 2019, revenue rose 12.5 %."])
    assert (round(s.precision, 6), round(s.recall, 6), round(s.f1, 6)) == (0.6, 0.6, 0.6)
    # Chinese: 4 characters, 2 in common in order -> 0.5 (rouge-score's default tokenizer sees no tokens at all)
    (zh,) = rouge_l(["营收增长"], ["营收下降"])
    assert math.isclose(zh.f1, 0.5)
    (num,) = rouge_l(["1,234.5"], ["1234.5"])
    assert num.f1 == 1.0
    # "funds rate": both tokens in the 23-token reference, in order (1/4 is two tokens, 1 and 4)
    (short,) = rouge_l(["funds rate"], [CUT])
    assert (short.precision, round(short.recall, 6), round(short.f1, 6)) == (1.0, round(2 / 23, 6), 0.16)
    with pytest.raises(ValueError, match="2 candidates but 1 references"):
        rouge_l(["a", "b"], ["a"])


@pytest.fixture(scope="module")
def bert():
    return BertScoreModel(minilm_dir(), num_layers=None, batch_size=2, device="cpu")


def test_bertscore_with_the_local_minilm_directory(bert):
    assert bert.num_layers == 6 and bert.description.startswith(f"{minilm_dir().name}, layer 6 of 6, no idf")
    cands = [CUT, CUT_PARAPHRASE, UNRELATED, HIKE, "营收增长"]
    refs = [CUT, CUT, CUT, CUT, "营收增长"]
    scores = bert.score(cands, refs)  # 5 pairs in batches of 2
    assert all(isinstance(s, PRF) for s in scores)
    assert scores[0].f1 > 0.999 and scores[4].f1 > 0.999  # identical texts
    assert scores[1].f1 > scores[2].f1 and scores[3].f1 > scores[2].f1  # on topic beats off topic
    alone = bert.score([CUT_PARAPHRASE], [CUT])[0]  # batching does not change a pair's score
    assert math.isclose(alone.f1, scores[1].f1, abs_tol=1e-5)
    assert bert.score([], []) == []
    # a failed (empty) answer scores 0 and does not stop the batch; its neighbours keep their scores
    mixed = bert.score(["", CUT_PARAPHRASE, "  "], [CUT, CUT, CUT])
    assert mixed[0] == mixed[2] == PRF(0.0, 0.0, 0.0) and math.isclose(mixed[1].f1, scores[1].f1, abs_tol=1e-5)


@pytest.mark.model
def test_bertscore_refuses_what_would_need_a_download_or_cannot_work(tmp_path):
    with pytest.raises(BertScoreUnavailable, match=r"set \[eval\] bertscore_model_path"):
        BertScoreModel(None)
    with pytest.raises(BertScoreUnavailable, match=r"roberta-large: no such directory \(nothing is downloaded"):
        BertScoreModel("roberta-large")  # a hub name is not a local directory
    with pytest.raises(BertScoreUnavailable, match=r"no readable config\.json"):
        BertScoreModel(tmp_path)
    with pytest.raises(BertScoreUnavailable, match=r"bertscore_num_layers 7: .* has layers 1\.\.6"):
        BertScoreModel(minilm_dir(), num_layers=7)


@pytest.mark.model
def test_bertscore_from_settings_reads_the_eval_section(monkeypatch, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        f'[eval]\nbertscore_model_path = "{minilm_dir()}"\nbertscore_num_layers = 3\n'
        f'bertscore_batch_size = 4\nbertscore_device = "cpu"\njudge = false\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("FINKG_CONFIG", str(config))
    s = load_settings()
    assert (s.eval.bertscore_num_layers, s.eval.bertscore_batch_size, s.eval.judge) == (3, 4, False)
    model = bertscore_from_settings(s)
    assert "layer 3 of 6" in model.description and model.batch_size == 4
    monkeypatch.setenv("FINKG_EVAL_BERTSCORE_MODEL_PATH", str(tmp_path / "nowhere"))
    with pytest.raises(BertScoreUnavailable, match="nowhere: no such directory"):
        bertscore_from_settings(load_settings())


@pytest.fixture(scope="module")
def smol():
    path = models.installed_path(SMOL) or models.install([SMOL])[0].path
    return LlamaCppBackend(path, n_ctx=2048, n_threads=2)


def test_the_judge_rates_with_a_real_llm(smol):
    client = LLMClient(smol)
    v = judge_consistency(client, CUT_PARAPHRASE, CUT, "conclusion", max_tokens=96)
    assert v.reference_kind == "conclusion"
    assert v.ok and v.error is None and 0 <= v.score <= 5, v
    assert json.loads(v.raw)["score"] == v.score and isinstance(v.reason, str)
    with pytest.raises(ValueError, match="reference_kind must be one of conclusion, text"):
        judge_consistency(client, CUT, CUT, "summary")


@pytest.mark.parametrize(
    "raw,error",
    [
        ("I would rate this a four out of five.", "no JSON"),
        ('{"score": 7, "reason": "very consistent"}', "score 7 is not an integer in 0..5"),
        ('{"score": "high", "reason": "x"}', "score"),
        ('{"reason": "forgot the score"}', "score"),
        ('{"score": 4, "reason": "cut o', None),  # cut off by max_tokens: json-repair closes it
    ],
)
def test_a_malformed_judge_answer_is_recorded_not_scored_zero(smol, tmp_path, raw, error):
    cache = LLMCache(tmp_path / "cache")
    client = LLMClient(smol, cache=cache)
    messages = judge_messages(UNRELATED, CUT, "text")
    params = {"max_tokens": 64, "temperature": 0.0, "json_schema": JUDGE_SCHEMA, "seed": 0}
    cache.put(cache_key(client.model_id, messages, params), Completion(raw, 50, 12))
    v = judge_consistency(client, UNRELATED, CUT, "text", max_tokens=64)
    if error is None:
        assert v.ok and v.score == 4
    else:
        assert v.score is None and not v.ok and error in v.error and v.raw == raw
    assert client.usage.calls == 0  # answered from the cache: no model call
    cache.close()


def test_means_skip_malformed_ratings_and_count_them():
    verdicts = [
        JudgeVerdict(4, "ok", "text", "{}"),
        JudgeVerdict(None, "", "text", "garbage", "no JSON"),
        JudgeVerdict(2, "ok", "text", "{}"),
    ]
    summary = mean_judge_score(verdicts)
    assert (summary.mean, summary.valid, summary.malformed) == (3.0, 2, 1)
    assert mean_judge_score([verdicts[1]]).mean is None


def test_all_metrics_together(bert, smol):
    client = LLMClient(smol)
    ticks = []
    scores = score_texts(
        [CUT_PARAPHRASE, UNRELATED],
        [CUT, HIKE],
        conclusions=["Rates were cut.", "Rates were raised."],
        bertscore=bert,
        judge=client,
        judge_max_tokens=96,
        progress=ticks.append,
    )
    assert ticks == [1, 1] and len(scores) == 2
    assert all(
        s.judge_conclusion.reference_kind == "conclusion" and s.judge_text.reference_kind == "text" for s in scores
    )
    row = summarize(scores)
    assert row["texts"] == 2
    assert math.isclose(row["rouge_l_f1"], round((scores[0].rouge_l.f1 + scores[1].rouge_l.f1) / 2, 4))
    assert math.isclose(row["bertscore_f1"], round((scores[0].bertscore.f1 + scores[1].bertscore.f1) / 2, 4))
    valid = [s.judge_text.score for s in scores if s.judge_text.ok]
    assert row["judge_text_malformed"] == 2 - len(valid)
    assert row["judge_text"] == (round(sum(valid) / len(valid), 4) if valid else None)
    no_extras = summarize(score_texts([CUT], [CUT]))
    assert no_extras["rouge_l_f1"] == 1.0 and no_extras["bertscore_f1"] is None and no_extras["judge_text"] is None
