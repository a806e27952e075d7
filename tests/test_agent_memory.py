"""The agent's experience memory (generation/agent/memory.py, finkg/eval/experience.py; seed 001, section 4.2):
distillation, the Neo4j vector index, threshold / top-k / fallback, near-duplicate merging, the shuffled control,
and the guarantee that no experience of an evaluation-half context is ever retrieved during evaluation.

Real data: tests/data/tatqa_dev_sample.json (5 TAT-QA dev contexts, CC BY 4.0); the real MiniLM encoder and
Neo4j; SmolLM2 for the learning loop's mechanics. Every experience a test writes is in a split of its own
(``t<hex>``) or listed, and deleted afterwards.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from test_cli import finkg
from test_llm import smol_gguf

from finkg.eval.experience import learn, learning_order
from finkg.eval.tatqa import agent_route, agent_systems
from generation.agent.arithmetic import calculate
from generation.agent.loop import AgentAnswer, Step
from generation.agent.memory import (
    Experience,
    ExperienceMemory,
    MemoryLeak,
    clear_experiences,
    derivation_shape,
    distill,
    distill_span,
    experience_id,
    list_experiences,
    memory_block,
    operation_of,
    query_text,
    span_goal,
    worked_program,
)
from generation.agent.tables import cell_name
from generation.agent.trajectory import read_run
from generation.llm import LlamaCppBackend, LLMClient
from ingest.datasets.tatqa import read_tatqa, split_contexts
from kg import cypher
from kg.errors import ConfigError

SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"


def answered(expression: str, operands: dict[str, float], answer: str) -> AgentAnswer:
    out = AgentAnswer(answer, "answered")
    out.derivation = {"operands": operands, "expression": expression, "result": float(answer)}
    return out


# ----------------------------------------------------------------------------------------- distillation


def test_a_success_becomes_a_finding_without_its_values_or_years():
    got = answered("(other_2019 - other_2018) / other_2018 * 100", {"other_2019": 44.1, "other_2018": 56.7}, "-22.22")
    strategy, caution = distill("What is the percentage change in Other in 2019 from 2018?", got, ["-22.22"], True)
    assert strategy == (
        "To compute a percentage change, copy the operands (other_later, other_earlier) from the table and evaluate "
        "(other_later - other_earlier) / other_earlier * 100."
    )
    assert caution == "" and "44.1" not in strategy and "2019" not in strategy


@pytest.mark.parametrize(
    ("answer", "gold", "question", "says"),
    [
        ("12.6", "-12.6", "What is the change in Other from 2018 to 2019?", "later - earlier"),
        ("0.2222", "22.22", "What is the percentage change in Other?", "multiply the fraction by 100"),
        ("2222", "22.22", "What is the ratio of Other to Total?", "do not multiply by 100"),
        ("7", "5", "What is the average Other in 2018 and 2019?", "divide by their count"),
        ("7", "5", "What is the change in Other?", "row and column the question names"),
    ],
)
def test_a_failure_becomes_a_caution_chosen_by_how_it_failed(answer, gold, question, says):
    got = answered("a - b", {"a": 1.0, "b": 2.0}, answer)
    strategy, caution = distill(question, got, [gold], False, "44.1-56.7")
    assert caution.startswith("When ") and says in caution
    assert strategy.endswith("the correct computation has the shape a-b.")


def test_a_failure_without_an_answer_names_its_kind():
    got = AgentAnswer(None, "could not answer", ["answer with JSON only"])
    got.steps.append(Step(0, "llm", "", None, "invalid JSON: cut off"))
    got.reasons.append("invalid JSON: cut off")
    assert "only the JSON object" in distill("What is the change?", got, ["1"], False)[1]
    got = AgentAnswer(None, "could not answer", ["operand(s) a=3 are not numbers in the table or facts"])
    assert "exactly as the table" in distill("What is the change?", got, ["1"], False)[1]


def test_shapes_operations_and_the_block():
    assert derivation_shape("(4,351 - 3,919) / 3,919") == "(a-b)/b"
    assert derivation_shape("(44.1+56.7+70.8)/3") == "(a+b+c)/d"
    assert operation_of("What is the percentage change in revenue?") == "a percentage change"
    assert operation_of("What is the average of X?") == "an average"
    assert memory_block([]) == ""  # the fallback: no memory block at all
    entry = Experience("exp:1", "Q?", "-12.6 million", "To compute a change, ...", "When ..., ...", "success", "t", "c")
    block = memory_block([entry])
    assert "Question: Q?" in block and "Answer: -12.6 million" in block and "ignore it" in block
    assert query_text("Q?", "x" * 1000) == "Q?\n" + "x" * 600


def quoted(answer: str | None) -> AgentAnswer:
    return AgentAnswer(answer, "answered" if answer is not None else "could not verify")


def test_a_span_success_becomes_the_quoting_method_of_its_answers_form():
    assert span_goal("In which year was revenue larger?", ["2019"]) == ("a year", "give the year alone")
    assert span_goal("What was revenue in 2019?", ["$ 4,351"])[0] == "a table value"
    assert span_goal("What are the segments?", ["A", "B", "C"])[1] == "give each of the 3 items, separated by ' | '"
    assert (
        span_goal("Why did revenue fall?", ["lower demand in Europe"])[1] == "quote the text's own words, about 4 words"
    )
    strategy, caution = distill_span("What was revenue in 2019?", quoted("$ 4,351"), ["$ 4,351"], True)
    assert strategy == "To answer with a table value, quote the cell exactly as the table shows it." and caution == ""


@pytest.mark.parametrize(
    ("answer", "gold", "says"),
    [
        (None, ["lower demand"], "exactly as the table or the text states them"),
        ("Products", ["Products", "Services"], "give every one of them"),
        ("Products | Services", ["Products"], "give only that one item"),
        ("Revenue fell because of lower demand in Europe", ["lower demand in Europe"], "shortest words"),
        ("lower demand", ["lower demand in Europe"], "the complete phrase"),
        ("4,351", ["3,919"], "the row and the column the question names"),
        ("higher costs", ["lower demand in Europe"], "answers exactly what the question asks"),
    ],
)
def test_a_span_failure_becomes_a_caution_chosen_by_how_the_quote_missed(answer, gold, says):
    strategy, caution = distill_span("What is it?", quoted(answer), gold, False)
    assert caution.startswith("When ") and says in caution
    assert strategy.startswith("To answer with ")  # the method that fits the gold answer, for a failure too


def test_span_entries_get_their_own_heading_and_no_solution_line():
    span = Experience("exp:2", "Why?", "lower demand", "To answer with ...", "", "success", "t", "c", route="span")
    block = memory_block([span])
    assert block.startswith("Experience from similar answered questions (follow the form of their answers")
    assert "Solution" not in block and "Answer: lower demand" in block
    program = replace(span, route="program", program='{"operands": {"a": 1.0}, "expression": "a"}')
    assert memory_block([program]).startswith("Experience from similar solved questions")


def test_the_learning_order_of_a_route_is_the_questions_the_agent_answers_on_it():
    train, _ = split_contexts(read_tatqa(SAMPLE))
    program = {q.uid for _, q in learning_order(train)}
    span = {q.uid for _, q in learning_order(train, "span")}
    assert program and span and not program & span
    every = {q.uid for c in train for q in c.questions}
    assert span <= every and program <= every
    with pytest.raises(ConfigError, match="unknown experience route 'count'"):
        learning_order(train, "count")  # the count route has no LLM: nothing to learn


TABLE = [
    ["", "2019", "2018"],
    ["Revenue", "$ 4,351", "3,919"],
    ["Cost of sales", "(1,200)", "1,100"],
    ["Other", "56.7", "56.7"],
]


def test_a_cell_names_the_operand_it_states():
    assert cell_name(TABLE, 4351) == "revenue_2019"
    assert cell_name(TABLE, -1200) == cell_name(TABLE, 1200) == "cost_sales_2019"  # sign aside
    assert cell_name(TABLE, 12.5) is None  # no cell states it
    assert cell_name(TABLE, 56.7) is None  # two cells, two names: ambiguous
    assert cell_name([["", "Fiscal 2019"], ["2018 Plan", "7"]], 7) == "v_2018_plan_2019"


def test_the_worked_program_is_the_solvers_own_form_and_reproduces_the_gold_answer():
    # a failed run: TAT-QA's derivation of the gold answer, operands named after their cells, equal values one name
    failed = AgentAnswer("10", "answered")
    text = worked_program(failed, False, "(4,351-3,919)/3,919", 11.02, TABLE)
    program = json.loads(text)
    assert program["operands"] == {"revenue_2019": 4351.0, "revenue_2018": 3919.0}
    assert program["expression"] == "((revenue_2019-revenue_2018)/revenue_2018) * 100"  # the * 100 the gold needs
    assert round(calculate(program["expression"], program["operands"]).value, 2) == 11.02
    # a number no cell states keeps its letter name; a derivation that is not arithmetic, or wrong, gives none
    assert json.loads(worked_program(failed, False, "4,351-17", 4334, TABLE))["operands"] == {
        "revenue_2019": 4351.0,
        "n2": 17.0,
    }
    average = json.loads(worked_program(failed, False, "(4,351+3,919)/2", 4135, TABLE))  # the count: a literal
    assert average == {
        "operands": {"revenue_2019": 4351.0, "revenue_2018": 3919.0},
        "expression": "(revenue_2019+revenue_2018)/2",
    }
    assert worked_program(failed, False, "the sum of the 2019 column", 5551, TABLE) == ""
    assert worked_program(failed, False, "4,351-3,919", 999, TABLE) == ""
    assert worked_program(failed, False, "", None, TABLE) == ""
    # a correct run: its own operands and expression
    got = answered("(a - b) / b * 100", {"a": 4351.0, "b": 3919.0}, "11.02")
    assert json.loads(worked_program(got, True, "", 11.02, TABLE)) == {
        "operands": {"a": 4351.0, "b": 3919.0},
        "expression": "(a - b) / b * 100",
    }
    entry = Experience("exp:1", "Q?", "11.02 percent", "", "When ..., ...", "failure", "t", "c", program=text)
    block = memory_block([entry], "program")
    assert f"Solution: {text}" in block and block.index("Solution:") < block.index("Answer: 11.02 percent")
    # the default: the method without another table's numbers, the expression over the operand names, no value
    assert memory_block([entry]) == memory_block([entry], "expression")
    block = memory_block([entry], "expression")
    assert "Solution expression: ((revenue_2019-revenue_2018)/revenue_2018) * 100" in block
    assert "4351" not in block and "3919" not in block and "Answer: 11.02 percent" in block
    # seed 001's entry as printed: no solution line at all
    block = memory_block([entry], "none")
    assert "Solution" not in block and "Answer: 11.02 percent" in block and "Cautions: When ..., ..." in block
    with pytest.raises(ValueError, match="unknown memory solution form 'values': choose from program, expression"):
        memory_block([entry], "values")


# ----------------------------------------------------------------------------------------- the store


@pytest.fixture
def split(graph):
    """A split name of this test's own; its experiences are deleted afterwards."""
    name = f"t{uuid.uuid4().hex[:10]}"
    yield name
    clear_experiences(graph, split=name)


@pytest.fixture
def bank(graph, embedder):
    return ExperienceMemory(graph, embedder)


def entry(split: str, question: str, context: str, strategy: str = "", caution: str = "") -> Experience:
    return Experience(
        experience_id(split, context, question), question, "1", strategy, caution, "success", split, context
    )


def test_the_vector_index_serves_threshold_top_k_and_dedup_by_context(graph, bank, split):
    base = "What is the percentage change in {} from 2018 to 2019?"
    items = ["revenue", "cost of sales", "gross profit", "operating income", "net income", "total assets"]
    for i, item in enumerate(items):
        bank.add(entry(split, base.format(item), f"ctx{i}", f"s{i}"), base.format(item))
    bank.add(entry(split, base.format("net sales"), "ctx0", "s6"), base.format("net sales"))  # ctx0 again
    assert any(
        r["name"] == cypher.EXPERIENCE_INDEX
        for r in graph.read(cypher.SHOW_VECTOR_INDEX, {"name": cypher.EXPERIENCE_INDEX})
    )
    got = bank.retrieve(base.format("revenues"), "", splits=(split,))
    assert 1 <= len(got) <= 5 and len({e.context_id for e in got}) == len(got)  # top-k 5, one per context
    assert got[0].question == base.format("revenue") and all(e.cosine is not None and e.cosine >= 0.65 for e in got)
    assert [e.cosine for e in got] == sorted([e.cosine for e in got], reverse=True)  # type: ignore[type-var]
    # the fallback: nothing similar enough, nothing retrieved
    assert bank.retrieve("Who chairs the audit committee of the board?", "", splits=(split,)) == []
    strict = ExperienceMemory(graph, bank.embedder, threshold=0.999)
    assert strict.retrieve(base.format("revenues"), "", splits=(split,)) == []
    # another split is never read
    assert bank.retrieve(base.format("revenue"), "", splits=(f"{split}x",)) == []


def test_a_near_duplicate_is_merged_into_the_stored_entry(graph, bank, split):
    q = "What was the change in other operating expenses from 2018 to 2019?"
    first = bank.add(entry(split, q, "ctxA", strategy="To compute a change, evaluate later - earlier."), q)
    second = bank.add(entry(split, q + " ", "ctxB", caution="When years look alike, check the column."), q + " ")
    assert second == first
    rows = [r for r in list_experiences(graph, split)]
    assert len(rows) == 1 and rows[0]["merged"] == 1
    assert rows[0]["strategy"] == "To compute a change, evaluate later - earlier."
    assert rows[0]["caution"] == "When years look alike, check the column."
    assert rows[0]["sources"] == [first, experience_id(split, "ctxB", q + " ")]


def test_the_worked_program_is_stored_retrieved_and_kept_when_merged(graph, bank, split):
    q = "What was the change in other operating expenses from 2018 to 2019?"
    program = '{"operands": {"other_2019": 5.0, "other_2018": 3.0}, "expression": "other_2019 - other_2018"}'
    first = bank.add(replace(entry(split, q, "ctxA"), program=program), q)
    bank.add(replace(entry(split, q + " ", "ctxB"), program='{"operands": {}, "expression": "1"}'), q + " ")
    rows = list_experiences(graph, split)
    assert [r["id"] for r in rows] == [first] and rows[0]["program"] == program  # the first entry's program stays
    got = bank.retrieve(q, "", splits=(split,))
    assert got and got[0].program == program


def test_the_shuffled_control_shows_other_entries_for_the_same_hits(graph, bank, split):
    questions = [
        "What is the average revenue for 2018 and 2019?",
        "How many shares were granted in 2019?",
        "What is the ratio of current assets to current liabilities?",
        "What is the total of fixed price and other sales?",
    ]
    for i, q in enumerate(questions):
        bank.add(entry(split, q, f"c{i}", strategy=f"strategy {i}"), q)
    shuffled = ExperienceMemory(graph, bank.embedder, shuffled=True, seed=3)
    plain = [bank.retrieve(q, "", splits=(split,)) for q in questions]
    mixed = [shuffled.retrieve(q, "", splits=(split,)) for q in questions]
    assert [len(a) for a in plain] == [len(b) for b in mixed]  # the same number of examples
    pairs = [(a.strategy, b.strategy) for pa, pb in zip(plain, mixed, strict=True) for a, b in zip(pa, pb, strict=True)]
    assert pairs and any(a != b for a, b in pairs)  # but other entries' content


def test_a_question_reads_only_the_experiences_of_its_own_route(graph, bank, split):
    q = "What was the revenue from products in 2019?"
    program = bank.add(replace(entry(split, q, "ctxP", strategy="program"), route="program"), q)
    span = bank.add(replace(entry(split, q, "ctxS", strategy="span"), route="span"), q)
    assert program != span  # the same question on two routes: two entries, never merged
    assert [e.id for e in bank.retrieve(q, "", splits=(split,))] == [program]  # the default route: program
    got = bank.retrieve(q, "", splits=(split,), route="span")
    assert [e.id for e in got] == [span] and got[0].route == "span"
    assert {r["id"]: r["route"] for r in list_experiences(graph, split)} == {program: "program", span: "span"}
    # the control permutes within a route: a span hit is shown another span entry (here, the only one)
    for i in range(3):
        other = f"What was the revenue from services in 201{i}?"
        bank.add(replace(entry(split, other, f"ctxS{i}", strategy=f"span {i}"), route="span"), other)
    shuffled = ExperienceMemory(graph, bank.embedder, shuffled=True, seed=1)
    mixed = shuffled.retrieve(q, "", splits=(split,), route="span")
    assert mixed and all(e.route == "span" and e.strategy.startswith("span") for e in mixed)
    with pytest.raises(ConfigError, match="unknown experience route 'count'"):
        bank.retrieve(q, "", splits=(split,), route="count")
    with pytest.raises(ConfigError, match="unknown experience route"):
        bank.add(replace(entry(split, q, "ctxX"), route="counting"), q)


def test_the_cli_lists_each_entry_s_route_and_refuses_an_unknown_route_to_learn(graph, bank, split):
    q = "Why did revenue decrease in 2019?"
    span = bank.add(replace(entry(split, q, "ctxS", strategy="To answer with a phrase..."), route="span"), q)
    out = finkg("experience", "list", "--split", split, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert [(r["id"], r["route"]) for r in json.loads(out.stdout)] == [(span, "span")]
    out = finkg("experience", "learn", str(SAMPLE), "--route", "count")
    assert out.returncode == 2 and "unknown experience route 'count': choose from program, span" in out.stderr


def test_no_experience_of_an_evaluation_half_context_is_ever_retrieved_during_evaluation(graph, bank, split):
    contexts = read_tatqa(SAMPLE)
    train, evaluation = split_contexts(contexts)
    assert train and evaluation
    held_out = {c.table_uid for c in evaluation}
    for c in train:
        for q in c.questions:
            bank.add(entry(split, q.question, c.table_uid, "train"), query_text(q.question, q.question))
    # poison: an entry for every evaluation question, from its own context: the nearest possible match
    for c in evaluation:
        for q in c.questions:
            bank.add(entry(split, q.question, c.table_uid, "leak"), query_text(q.question, q.question))
    hits = 0
    for c in evaluation:
        for q in c.questions:
            got = bank.retrieve(q.question, q.question, splits=(split,), exclude_contexts=sorted(held_out))
            assert not {e.context_id for e in got} & held_out
            assert all(e.strategy == "train" for e in got)
            hits += bool(got)
    assert hits > 0  # retrieval did return training experience: the filter, not an empty bank, kept the leak out
    # learning refuses an evaluation-half context outright (before any LLM call)
    with pytest.raises(MemoryLeak, match=evaluation[0].table_uid):
        learn(None, bank, [evaluation[0]], held_out)  # type: ignore[arg-type]


def question_of(graph, rid: str) -> str:
    found = read_run(graph, rid)
    assert found is not None, rid
    return found["run"]["question_uid"]


@pytest.fixture(scope="module")
def smol_client():
    return LLMClient(LlamaCppBackend(smol_gguf(), n_ctx=2048, n_threads=2))


@pytest.fixture
def sample_halves(graph):
    """The sample's contexts, training half, evaluation half and held-out table uids; the training half's
    experiences are deleted before (what another test of this run left: the suite's own server,
    tests/conftest.py) and after."""
    contexts = read_tatqa(SAMPLE)
    train, evaluation = split_contexts(contexts)
    mine = [experience_id("train", c.table_uid, q.question) for c in train for q in c.questions]
    clear_experiences(graph, ids=mine)
    yield contexts, train, evaluation, {c.table_uid for c in evaluation}
    clear_experiences(graph, ids=mine)


@pytest.mark.model
def test_learning_writes_graded_runs_and_experiences_used_as_examples(graph, embedder, smol_client, sample_halves):
    contexts, train, evaluation, held_out = sample_halves
    memory = ExperienceMemory(graph, embedder)
    summary = learn(smol_client, memory, train, held_out, limit=1, max_tokens=64, attempts=1)
    assert summary.learned == 1 and len(summary.experiences) == 1
    stored = {r["id"]: r for r in list_experiences(graph, "train")}
    row = stored[summary.experiences[0]]
    assert row["context_id"] in {c.table_uid for c in train} and row["outcome"] in ("success", "failure")
    assert (row["strategy"] or row["caution"]) and row["runs"]
    run = read_run(graph, row["runs"][0])
    assert run is not None and run["run"]["split"] == "train" and run["run"]["em"] in (0.0, 1.0)
    assert run["steps"] and run["steps"][0]["tool"] == "llm"
    # a rerun skips what is learned; two at once (workers=2) store both, each with its own graded run
    again = learn(smol_client, memory, train, held_out, limit=2, max_tokens=64, attempts=1, workers=2)
    assert again.skipped >= 1 and again.learned == 2
    stored = {r["id"]: r for r in list_experiences(graph, "train")}
    assert set(again.experiences) <= set(stored)
    learned = {question_of(graph, r) for e in again.experiences for r in stored[e]["runs"]}
    assert (
        len(learned - {question_of(graph, row["runs"][0])}) == 2
    )  # two questions more, each graded and linked to its experience
    # the bank is learning_order's prefix (what bench/memory_hit_rate.py's snapshots assume)
    assert learned | {question_of(graph, row["runs"][0])} == {q.uid for _, q in learning_order(train)[:3]}
    # evaluation: agent-memory on an evaluation question shows only training experience ids
    answer = agent_systems(
        smol_client, 64, {c.table_uid: c.table for c in contexts}, memory, exclude_contexts=held_out
    )["agent-memory"]
    c = evaluation[0]
    q = next(q for q in c.questions if q.answer_type == "arithmetic")
    line = answer(q.question, c.facts, c.passages).splitlines()[0]
    assert line.startswith("experiences: ")
    ids = [] if line.endswith("none") else line.removeprefix("experiences: ").split(", ")
    every = {r["id"]: r for r in list_experiences(graph)}  # the graph may hold other training experience too
    assert all(every[i]["split"] == "train" and every[i]["context_id"] not in held_out for i in ids)


@pytest.mark.model
def test_learning_the_span_route_stores_span_entries_read_by_span_questions(
    graph, embedder, smol_client, sample_halves
):
    contexts, train, evaluation, held_out = sample_halves
    memory = ExperienceMemory(graph, embedder)
    summary = learn(smol_client, memory, train, held_out, limit=2, max_tokens=48, attempts=1, route="span")
    assert summary.learned == 2
    stored = {r["id"]: r for r in list_experiences(graph, "train")}
    rows = [stored[e] for e in summary.experiences]
    assert all(r["route"] == "span" and not r["program"] and r["strategy"].startswith("To answer with ") for r in rows)
    # the learned questions are the span route's first two, each with its graded run
    learned = {question_of(graph, r["runs"][0]) for r in rows}
    assert learned == {q.uid for _, q in learning_order(train, "span")[:2]}
    run = read_run(graph, rows[0]["runs"][0])
    assert run is not None and run["run"]["route"] == "span" and run["steps"][0]["tool"] == "llm"
    # a span question of the evaluation half reads span experience only, and never an evaluation context
    answer = agent_systems(
        smol_client, 48, {c.table_uid: c.table for c in contexts}, memory, exclude_contexts=held_out
    )["agent-memory"]
    c = evaluation[0]
    paragraphs = [p.text for p in c.passages]
    q = next(q for q in c.questions if agent_route(q.question, c.table, paragraphs) == "span")
    line = answer(q.question, c.facts, c.passages).splitlines()[0]
    assert line.startswith("experiences: ")
    ids = [] if line.endswith("none") else line.removeprefix("experiences: ").split(", ")
    every = {r["id"]: r for r in list_experiences(graph)}
    assert all(every[i]["route"] == "span" and every[i]["context_id"] not in held_out for i in ids)
