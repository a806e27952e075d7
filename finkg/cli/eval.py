"""``finkg eval``: evaluations on the data in the graph (seeds 000, 002, 003, 004)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from finkg import api
from finkg.cli._common import YesOption, batch_cost, console, day, err, progress
from finkg.output import Format, render

app = typer.Typer(help="Evaluations on the data in the graph.", no_args_is_help=True)

#: ``generation.memo.systems.SYSTEMS``, repeated for the default of ``--system`` so that
#: ``finkg --help`` does not import the memo generators (tests/test_cli_startup.py checks they agree).
MEMO_SYSTEMS = ("no-rag", "text-rag", "verifier-rag", "structured")

# the experience memory's options, the same on `finkg eval tatqa` and `finkg eval agent`
MemoryThreshold = Annotated[
    float | None, typer.Option(help="Experience memory: cosine threshold (default 0.65, seed 001).")
]
MemoryTopK = Annotated[int | None, typer.Option(min=1, help="Experience memory: at most K entries (default 5).")]
MemorySolution = Annotated[
    str | None,
    typer.Option(
        help="Experience memory: how an entry's worked solution is shown: expression (the default: the expression "
        "over operand names, no values), program (operands with their values and the expression) or none (seed "
        "001's entry)."
    ),
]


@app.command("memos")
def eval_memos(
    system: Annotated[list[str], typer.Option("--system", "-s", help="Systems to compare (default: all four).")] = list(
        MEMO_SYSTEMS
    ),
    limit: Annotated[int | None, typer.Option(help="Only the first N memo tasks.")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the CSV tables and summary.json.")] = Path(
        "eval/memos"
    ),
    source: Annotated[str | None, typer.Option(help="Only filings loaded from this file, e.g. 2009q3.zip.")] = None,
) -> None:
    """The four-system evaluation of seed 003 on the filings in the graph (Tables 5-10, 12)."""
    from finkg.eval import memos as evaluation

    with progress() as p:
        result = api.eval_memos(systems=system, limit=limit, source=source, progress=p)
    console.print(
        f"memo tasks: {result.tasks} filings with all eight required facts; excluded: "
        + (", ".join(f"{k} ({v})" for k, v in sorted(result.excluded.items())) or "none")
    )
    render(evaluation.system_table(result.summary), Format.table, console, title="Memo reliability by system (Table 6)")
    render(
        evaluation.retrieval_table(result.scores),
        Format.table,
        console,
        title="Text retrieval of the required facts (Table 5)",
    )
    render(evaluation.ratio_table(result.scores), Format.table, console, title="Ratio accuracy (Table 7)")
    render(
        evaluation.taxonomy_table(result.summary),
        Format.table,
        console,
        title="Error taxonomy and risk labels (Tables 8, 12)",
    )
    render(evaluation.sic_table(result.scores), Format.table, console, title="Structured+Verifier by SIC (Table 10)")
    render(result.mutation, Format.table, console, title="Mutation test: wrong numbers injected into verified memos")
    paths = evaluation.save(result, out)
    console.print(f"saved {len(paths)} files in {out}")


@app.command("extraction")
def eval_extraction(
    gold: Annotated[Path, typer.Option(help="Gold triples (JSONL).", exists=True, dir_okay=False)] = Path(
        "tests/data/kg_gold.jsonl"
    ),
    threshold: Annotated[
        float, typer.Option(help="Head/tail similarity (rapidfuzz token_set_ratio, 0-100) for a match.")
    ] = 70.0,
    verify: Annotated[
        bool | None,
        typer.Option(
            "--verify/--no-verify",
            help="Score the records of a run with or without the verification pass (default: [extract] verify).",
        ),
    ] = None,
) -> None:
    """Precision / recall of the stored extraction (before and after verification) against the gold set."""
    rows, missing, model_id = api.eval_extraction(gold, threshold=threshold, verify=verify)
    if missing:
        err.print(
            f"[yellow]no extraction stored for statement(s) {', '.join(missing)}: ingest and extract them first "
            "(`finkg ingest text` then `finkg extract`)[/yellow]"
        )
    render(rows, Format.table, console, title=f"extraction vs {gold} ({model_id[:40]})")


@app.command("tatqa")
def eval_tatqa(
    path: Annotated[
        Path, typer.Argument(help="A TAT-QA JSON file, e.g. tatqa_dataset_dev.json.", exists=True, dir_okay=False)
    ],
    system: Annotated[
        list[str],
        typer.Option(
            "--system",
            "-s",
            help="Answerers to compare (default: all): "
            "two-stage, single-stage, facts-only (the two-stage generator: BM25 "
            "over the context's paragraphs), no-retrieval (the question alone), "
            "whole-context (every cell and paragraph), reader (seed 004's question + facts prompt that `finkg train "
            "reader` tunes), reader-calc (the same answer, its calculate thought run by the calculator), reader-form and "
            "reader-calc-form (the same with a prompt stating the thought's and answer's form: the untuned model's "
            "control), engine (the answer engine: the table_count tool on count questions, reader-calc on the "
            "others), agent (program of thought with the calculator and the "
            "answer gate for arithmetic questions; the others quoted from the table rows and text, gated), agent-memory (the agent with "
            "the experiences of `finkg experience learn` as few-shot examples), agent-shuffled (the control: "
            "each retrieved experience's content a random other one's).",
        ),
    ] = [],
    limit: Annotated[int | None, typer.Option(help="Only the first N questions.")] = None,
    half: Annotated[
        str, typer.Option(help="all, or the train / eval half of the contexts (split by a hash of the table uid).")
    ] = "all",
    sample: Annotated[
        int | None,
        typer.Option(
            min=1, help="A stratified sample of N questions (answer type x source), the same for every system."
        ),
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            help="Only the question uids listed in this file (one a line), e.g. the frozen test questions "
            "data/questions/tatqa-test-uids.txt (with --half eval; never tuned on).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    answer_type: Annotated[
        list[str],
        typer.Option(
            "--answer-type",
            help="Only questions of this answer type (span, multi-span, arithmetic, count; repeatable), of the sample "
            "when there is one: a stratum of the same questions.",
        ),
    ] = [],
    route: Annotated[
        list[str],
        typer.Option(
            "--route",
            help="Only questions the analyst agent answers by this route (count, program, span; repeatable): "
            "program and span read the experiences learned on them, count reads none.",
        ),
    ] = [],
    max_tokens: Annotated[int, typer.Option(help="Completion cap per answer.")] = 128,
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Folder for answers.jsonl, summary.json, eval-tatqa.json and the tatqa-em-f1.png chart."
        ),
    ] = Path("eval/tatqa"),
    threshold: MemoryThreshold = None,
    top_k: MemoryTopK = None,
    memory_solution: MemorySolution = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Questions asked at once (default: [llm] parallel with llama-server, else 1)."),
    ] = None,
    adapter: Annotated[
        Path | None,
        typer.Option(
            help="A LoRA adapter of the [llm] model (`finkg train reader`: a GGUF LoRA for llama-cpp / llama-server, "
            "a peft folder for transformers): each system is also run as `<system>+lora` by the tuned model, on the "
            "same questions, and compared with it (paired). The two models share the cores: with a local backend each "
            "gets [llm] threads, at most half the cores.",
            exists=True,
        ),
    ] = None,
    yes: YesOption = False,
) -> None:
    """TAT-QA exact match and F1 of LLM answerers ([llm] model) on a TAT-QA file (Zhu et al., ACL 2021):
    two-stage vs single-stage vs no retrieval (seed 004, 3.3). Answers are written as they come; a rerun
    with the same --out resumes. Before the first answer: the answers still to ask and the time they take at the
    rate measured for the model (a long run asks, or needs --yes when not run on a terminal; [batch] settings)."""
    with progress() as p:
        results, backend = api.eval_tatqa(
            path,
            systems=system,
            limit=limit,
            max_tokens=max_tokens,
            out=out,
            half=half,
            sample=sample,
            question_list=questions,
            answer_types=answer_type,
            routes=route,
            threshold=threshold,
            top_k=top_k,
            memory_solution=memory_solution,
            workers=workers,
            adapter=adapter,
            progress=p,
            cost=batch_cost("finkg eval tatqa", "question", yes),
        )
    render(results.rows(), Format.table, console, title=f"TAT-QA EM / F1 (%) on {path.name} ({backend})")
    if len(results.systems) > 1:
        render(results.differences(), Format.table, console, title="EM difference against the first system (points)")
    paths = results.save(out)
    console.print(f"saved {', '.join(str(p) for p in paths)}")
    if paths[-1].suffix == ".png":
        console.print(f"EM and F1 per system and answer type, with 95% intervals: {paths[-1]}")


@app.command("agent")
def eval_agent(
    tatqa: Annotated[
        Path | None,
        typer.Argument(
            help="A TAT-QA JSON file (its evaluation half is used), e.g. tatqa_dataset_dev.json; omit for the SEC "
            "questions only.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    sec: Annotated[
        Path | None,
        typer.Option(help="finkg's SEC questions (gold from the quarter's num.txt).", exists=True, dir_okay=False),
    ] = Path("data/questions/sec-agent.jsonl"),
    no_sec: Annotated[bool, typer.Option("--no-sec", help="Leave the SEC questions out.")] = False,
    quarter: Annotated[
        Path,
        typer.Option(help="The Financial Statement Data Sets zip the SEC questions are about.", exists=True),
    ] = Path("data/sec-fsds/2009q3.zip"),
    system: Annotated[
        list[str],
        typer.Option(
            "--system",
            "-s",
            help="TAT-QA systems (default: agent, two-stage, agent-memory, agent-shuffled; the differences are "
            "against the first).",
        ),
    ] = [],
    sample: Annotated[int, typer.Option(min=1, help="TAT-QA: a stratified sample of N questions.")] = 300,
    limit: Annotated[int | None, typer.Option(help="TAT-QA: only the first N questions of the sample.")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="TAT-QA: questions asked at once.")] = None,
    threshold: MemoryThreshold = None,
    top_k: MemoryTopK = None,
    memory_solution: MemorySolution = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for sec.jsonl, tatqa/ (resumable) and eval-agent.json.")
    ] = Path("eval/agent"),
    yes: YesOption = False,
) -> None:
    """The analyst agent's benchmark (issue 17, seed 001): finkg's SEC questions over the quarter in the graph
    (gold computed from its num.txt), the TAT-QA evaluation half (the agent, two-stage, the agent with experience
    memory and the shuffled-memory control on the same questions) and the targets, met or not. A rerun with the
    same --out resumes the TAT-QA answers."""
    with progress() as p:
        got = api.eval_agent(
            tatqa,
            sec_questions=None if no_sec else sec,
            quarter=quarter,
            systems=system,
            sample=sample,
            limit=limit,
            workers=workers,
            threshold=threshold,
            top_k=top_k,
            memory_solution=memory_solution,
            out=out,
            progress=p,
            cost=batch_cost("finkg eval agent", "question", yes),
        )
    if got.sec_summary:
        render(got.sec_summary, Format.table, console, title="SEC questions: exact answers per kind")
        wrong = [r for r in got.sec if not r["exact"]]
        for r in wrong:
            console.print(
                f"  not exact: {r['id']}: {r['answer']!r} (gold {r['gold']!r})", highlight=False, markup=False
            )
    if got.tatqa is not None:
        render(got.tatqa.rows(), Format.table, console, title="TAT-QA EM / F1 (%), evaluation half")
        render(got.tatqa.differences(), Format.table, console, title="EM difference against the agent (points)")
    render(got.targets, Format.table, console, title="issue 17's targets")
    console.print(f"saved {', '.join(str(x) for x in got.paths)}")


@app.command("reports")
def eval_reports(
    batch: Annotated[
        Path, typer.Option("--batch", "-b", help="Questions with 'reference' (and 'conclusion') analyses.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder: one sub-folder of reports per system, scores.json in each.")
    ] = Path("eval/reports"),
    system: Annotated[
        list[str],
        typer.Option(
            "--system",
            "-s",
            help="Retrieval systems to compare (default: all): tfr, dense-triples, bm25-docs, dense-docs, none.",
        ),
    ] = [],
    adapter: Annotated[
        Path | None,
        typer.Option(
            help="A LoRA adapter of the [llm] model (`finkg train reader`): each system is also written by the "
            "tuned model as `<system>+lora`, on the same questions, judged by the untuned model like the others. "
            "With a local backend each model gets [llm] threads, at most half the cores.",
            exists=True,
        ),
    ] = None,
    yes: YesOption = False,
) -> None:
    """TFR vs its baselines and no retrieval on the same questions (seed 004, Table 2): ROUGE-L, BERTScore
    ([eval] bertscore_model_path, a local model) and the LLM judge's 0-5 consistency ([eval] judge)."""
    with progress() as p:
        rows, model_id, bert = api.eval_reports(
            batch,
            systems=system,
            out=out,
            adapter=adapter,
            progress=p,
            cost=batch_cost("finkg eval reports", "report", yes),
        )
    render(
        rows,
        Format.table,
        console,
        title=f"reports vs references ({model_id[:32]}" + (f"; BERTScore {bert}" if bert else "; no BERTScore") + ")",
    )


@app.command("retrieval")
def eval_retrieval(
    path: Annotated[
        Path,
        typer.Argument(
            help="TAT-QA JSON file; its evaluation half (split by context) is the corpus.", exists=True, dir_okay=False
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for retrieval_eval.json.")] = Path("eval/retrieval"),
    rerank: Annotated[
        bool | None,
        typer.Option(help="Add hybrid + rerank (default: when [rerank] model_path is set or [rerank] backend is llm)."),
    ] = None,
    rerank_queries: Annotated[int, typer.Option(help="Questions reranked (a seeded sample; 0: all).")] = 100,
    seed: Annotated[int, typer.Option(help="Split and sampling seed.")] = 0,
    store: Annotated[bool, typer.Option(help="Store the swept alpha on (:Corpus {name}).")] = True,
) -> None:
    """NDCG@10 on TAT-QA for BM25, dense, hybrid (alpha swept in 0.025 steps) and hybrid + rerank (seed 002, 4.2-5.5)."""
    from finkg.eval import retrieval as retrieval_eval

    with progress() as p:
        result = api.eval_retrieval(
            path, rerank=rerank, rerank_queries=rerank_queries, seed=seed, store=store, progress=p
        )
    render(
        result["rows"],
        Format.table,
        console,
        title=f"TAT-QA NDCG@10 ({result['chunks']} chunks, {result['queries']} questions, alpha {result['alpha']})",
    )
    console.print(f"saved {retrieval_eval.save(result, out)}")


@app.command("feedback")
def eval_feedback(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for predictions/*.jsonl, metrics.json and the CSV tables.")
    ] = Path("eval/feedback"),
    start: Annotated[str, typer.Option(help="First anchor date (YYYY-MM-DD, UTC).")] = "2014-01-01",
    end: Annotated[str, typer.Option(help="Last anchor date (YYYY-MM-DD, UTC, inclusive).")] = "2015-12-31",
    tickers: Annotated[str | None, typer.Option(help="Comma-separated universe (default [feedback] tickers).")] = None,
    data: Annotated[
        Path | None,
        typer.Option(help="Folder with tweets/, prices/ and the market proxy (default [feedback] data_dir)."),
    ] = None,
    tweets: Annotated[Path | None, typer.Option(help="Tweets folder (TICKER/YYYY-MM-DD); default DATA/tweets.")] = None,
    prices: Annotated[Path | None, typer.Option(help="Price folder (`<TICKER>.csv`); default DATA/prices.")] = None,
    market: Annotated[
        Path | None, typer.Option(help="Market proxy price file; default DATA/[feedback] market_proxy.")
    ] = None,
    run: Annotated[
        str, typer.Option(help="Run id prefix of memory cells and selections (RUN.CONDITION).")
    ] = "feedback",
    conditions: Annotated[
        str, typer.Option(help="Comma-separated: no-memory, memory, shuffled-label, shuffled-event-type.")
    ] = "no-memory,memory,shuffled-label,shuffled-event-type",
    shuffles: Annotated[
        int | None, typer.Option(help="Seeds per shuffled control (default [feedback] shuffles).")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(help="At most this many anchors (the first in decision-time order).")
    ] = None,
    max_anchors_per_day: Annotated[
        int | None,
        typer.Option(
            help="Sampling: at most N anchors per ticker and prediction day (seeded hash; default [feedback] max_anchors_per_day)."
        ),
    ] = None,
    sample_seed: Annotated[int, typer.Option(help="Seed of the per-day sampling.")] = 0,
    ingest: Annotated[bool, typer.Option(help="Load the tweets into the graph first (idempotent).")] = True,
    redo: Annotated[
        bool, typer.Option("--redo", help="Start the run again: delete its predictions, memory and selections.")
    ] = False,
    yes: YesOption = False,
) -> None:
    """Prequential market-feedback evaluation (seed 000, 3.1-4.4): no memory, source memory and the shuffled
    controls with the frozen reader on real tweets and prices; event metrics, the fixed portfolio and the
    future-document audit. Resumable: a rerun skips done anchors (no LLM call). Before the first reader call: the
    answers still to make and the time they take at the rate measured for the model (a long run asks, or needs
    --yes when not run on a terminal; [batch] in the settings)."""
    from finkg.eval import feedback as feedback_eval

    first, last = day(start, "--start"), day(end, "--end")
    assert first is not None and last is not None
    options = api.feedback_options(
        out=out,
        start=first,
        end=last,
        tickers=tickers,
        data=data,
        tweets=tweets,
        prices=prices,
        market=market,
        run=run,
        conditions=conditions,
        shuffles=shuffles,
        limit=limit,
        max_anchors_per_day=max_anchors_per_day,
        sample_seed=sample_seed,
        ingest=ingest,
        redo=redo,
    )
    with progress() as p:
        summary, result = api.eval_feedback(options, progress=p, cost=batch_cost("finkg eval feedback", "answer", yes))
    render(summary.rows(), Format.table, console, title=f"finkg eval feedback: run {options.run}")
    events, portfolio, audit = feedback_eval.display_rows(result)
    render(events, Format.table, console, title="event-level prediction (seed 000, Tables 2-3)")
    if portfolio:
        render(
            portfolio,
            Format.table,
            console,
            title=f"fixed portfolio: top-{result['portfolio_top_k']} 3-day sleeves, "
            f"{result['cost_bps']:g} bps (seed 000, Table 4)",
        )
    render(audit, Format.table, console, title="point-in-time audit of the selected evidence")
    console.print(f"saved {escape(str(out / 'metrics.json'))} and the CSV tables")
    if result["audit"]["future"]:
        err.print(f"[red]error:[/red] {result['audit']['future']} selected passage(s) were future documents")
        raise typer.Exit(1)
