"""bench/ask_dev_exhaustive.py's questions (no Neo4j): one plain question per (development filing, measure) pair, or
``--phrasings N`` questions in the question sets' words, drawn reproducibly; never a test-half company, and a
question naming no period only where the company's latest period is the one asked."""

from __future__ import annotations

from collections import Counter

from conftest import bench_script

B = bench_script("ask_dev_exhaustive")
MQ = B.generator()


def test_phrasings_draw_n_questions_per_pair_in_the_sets_words_on_the_development_half_only():
    plain = B.items(MQ, ["ratio"])
    drawn = B.items(MQ, ["ratio"], phrasings=2, seed=7)
    assert len(drawn) == 2 * len(plain) and len({r["id"] for r in drawn}) == len(drawn)
    assert {MQ.split_of(r["cik"]) for r in drawn} == {"dev"}
    assert B.items(MQ, ["ratio"], phrasings=2, seed=7) == drawn  # the same seed, the same questions
    assert B.items(MQ, ["ratio"], phrasings=2, seed=8) != drawn
    # the pair's gold is the plain question's, whatever the words
    gold = {r["id"]: r["gold"] for r in plain}
    assert all(r["gold"] == gold[r["id"].rsplit(":", 1)[0]] for r in drawn)
    styles = Counter(r["style"] for r in drawn)
    assert set(styles) == {"quarter", "ytd", "instant", "latest"}
    later = MQ.later_ciks(MQ.read(MQ.DAILY, "sub.txt"))
    for r in drawn:
        if r["style"] == "latest":  # no period named: only a company whose latest period is 2009q3's, first ask
            assert r["cik"] not in later and r["id"].endswith(":0")
            assert not any(w in r["question"] for w in ("2009", "quarter", "June", "months"))
    # the words vary: more distinct question shapes than the one plain template
    assert len({r["question"].split()[0] for r in drawn}) > 5
