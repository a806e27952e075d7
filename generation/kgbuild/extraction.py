"""LLM triple extraction and LLM verification of each triple against its source text.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.1: "In the second phase, we design
prompts with examples for each category in the schema. Through few-shot prompting, LLMs identify
and extract triplets that meet the target schema from input texts. In the third phase, we prompt
LLM to check the validation of extracted triples and modify the error-extracted ones with the
original text as a reference." The schema and its few-shot examples are :mod:`generation.kgbuild.schema`.

How finkg runs it (measured on FOMC statements with Qwen2.5-Coder-1.5B on 2 CPU threads, where one
prompt per whole statement ran past 700 tokens and made the Committee the head of every triple):

- **per sentence, several sentences per call**: a chunk's sentences are numbered and sent in groups of
  ``sentences_per_call``; each triple names its sentence number;
- **one shared prompt prefix**: the system prompt and the few-shot turns are identical on every call, so
  llama.cpp reuses their KV cache (it keeps the longest common token prefix between consecutive calls);
  the pipeline runs every extraction call first and every verification call after, so the prefix stays
  warm within each phase;
- **short, schema-constrained outputs**: one-letter JSON keys, enumerated types and relations, a JSON
  schema for constrained decoding where the backend has it (json-repair otherwise);
- **no wasted calls**: boilerplate sentences (the vote roll call, discount-rate approvals by Reserve
  Banks) are not sent (:func:`is_boilerplate`); candidates that fail the deterministic checks
  (:func:`check_candidate`: unknown type, empty or self-loop, entity words not in the sentence) are
  rejected with a reason before verification; a chunk with no candidate makes no verification call.

Every rejected, dropped or corrected triple is kept with its reason (:class:`ChunkExtraction`); a
malformed LLM answer that json-repair cannot fix is recorded with the raw answer, never dropped
silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from generation.kgbuild.schema import ENTITY_CODES, ENTITY_TYPES, EXAMPLES, RELATION_CODES, RELATIONS
from generation.llm import LLMAnswerError

# ------------------------------------------------------------------------------------------ prompts

EXTRACTION_SYSTEM = (
    "You extract a financial knowledge graph from sentences of central-bank and company texts.\n"
    "Entity types:\n" + "\n".join(f"- {c.code}: {c.name}; {c.definition}" for c in ENTITY_TYPES) + "\n"
    "Relations (head -> tail):\n" + "\n".join(f"- {c.code}: {c.definition}" for c in RELATIONS) + "\n"
    "Rules: extract only what a sentence states; head and tail are short noun phrases copied from the "
    "sentence (at most 12 words), never a bare verb or adjective; the Committee, the Federal Reserve, "
    "the Board and the like are not entities; no triple whose head equals its tail. Answer with JSON "
    '{"triples": [[sentence number, head, head type, relation, tail, tail type], ...]}; '
    '{"triples": []} when no sentence states such a relation.'
)

VERIFY_SYSTEM = (
    "You check triples extracted from a text. For each numbered triple decide, using only the text: "
    '"keep" when the text states it and the types fit; "fix" when the text states a relation between '
    "these things but a field is wrong (give the corrected head, head type, relation, tail, tail type); "
    '"drop" when the text does not state it, or an entity is vague or not a financial entity. Give a '
    "reason for fix and drop: not_stated, wrong_relation, wrong_direction, wrong_type, vague_entity, "
    "duplicate.\n"
    "Entity types: " + ", ".join(ENTITY_CODES) + ".\nRelations: " + ", ".join(RELATION_CODES) + ".\n"
    'Answer with JSON {"verdicts": [...]}, one verdict per triple: [number, "keep"], or [number, "drop", '
    'reason], or [number, "fix", reason, head, head type, relation, tail, tail type].'
)

REASONS = ("not_stated", "wrong_relation", "wrong_direction", "wrong_type", "vague_entity", "duplicate")

# Answers are JSON arrays, not objects: a triple as [s, h, ht, r, t, tt] costs about 20 completion
# tokens where {"s":..,"h":..,"ht":..,"r":..,"t":..,"tt":..} cost about 40 (generation is the
# bottleneck on CPU: about 12 tokens/s for a 1.5B model on 2 cores).
_STR: dict[str, Any] = {"type": "string"}
_TYPE: dict[str, Any] = {"type": "string", "enum": list(ENTITY_CODES)}
_REL: dict[str, Any] = {"type": "string", "enum": list(RELATION_CODES)}
_REASON: dict[str, Any] = {"type": "string", "enum": list(REASONS)}


def _tuple(*items: dict[str, Any]) -> dict[str, Any]:
    # prefixItems bounded by min/maxItems (no boolean "items": false, which llama-server's schema parser refuses)
    return {"type": "array", "prefixItems": list(items), "minItems": len(items), "maxItems": len(items)}


TRIPLE_FIELDS = ("s", "h", "ht", "r", "t", "tt")  # the positions of a triple array in an answer
MAX_TRIPLES_PER_SENTENCE = 2  # an answer holds at most 2 per sentence shown, plus 2 (the gold set: 0.7)


def _numbers(n: int) -> dict[str, Any]:
    return {"type": "integer", "enum": list(range(1, n + 1))}


def extraction_json_schema(n_sentences: int) -> dict[str, Any]:
    """The JSON schema of an extraction answer for ``n_sentences`` numbered sentences:
    ``{"triples": [[s, h, ht, r, t, tt], ...]}`` with ``s`` in 1..n, the types and relations
    enumerated, and at most ``MAX_TRIPLES_PER_SENTENCE * n + 2`` triples. The bounds matter with a
    small model: unbounded, Qwen2.5-Coder-1.5B sometimes repeats one triple with s = 2, 3, 4, ...
    until the completion cap (384 tokens spent on one call, measured)."""
    item = _tuple(_numbers(n_sentences), _STR, _TYPE, _REL, _STR, _TYPE)
    return {
        "type": "object",
        "properties": {
            "triples": {"type": "array", "items": item, "maxItems": MAX_TRIPLES_PER_SENTENCE * n_sentences + 2}
        },
        "required": ["triples"],
    }


def verify_json_schema(n_triples: int) -> dict[str, Any]:
    """The JSON schema of a verification answer for ``n_triples`` numbered triples: ``{"verdicts":
    [[i, "keep"] | [i, "drop", reason] | [i, "fix", reason, h, ht, r, t, tt], ...]}``, ``i`` in
    1..n, at most n verdicts."""
    i = _numbers(n_triples)
    return {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "maxItems": n_triples,
                "items": {
                    "anyOf": [
                        _tuple(i, {"type": "string", "enum": ["keep"]}),
                        _tuple(i, {"type": "string", "enum": ["drop"]}, _REASON),
                        _tuple(i, {"type": "string", "enum": ["fix"]}, _REASON, _STR, _TYPE, _REL, _STR, _TYPE),
                    ]
                },
            }
        },
        "required": ["verdicts"],
    }


def triple_item(item: Any) -> Any:
    """An answer's triple as a ``{"s","h","ht","r","t","tt"}`` dict: an array ``[s, h, ht, r, t, tt]``
    (the format asked for) is mapped by position; a dict (a backend without constrained decoding may
    answer with keys) is returned as it is; anything else unchanged (rejected as ``invalid_item``)."""
    if isinstance(item, list) and len(item) == len(TRIPLE_FIELDS):
        return dict(zip(TRIPLE_FIELDS, item))
    return item


def verdict_item(item: Any) -> dict[str, Any] | None:
    """An answer's verdict as ``{"i","v","why","h","ht","r","t","tt"}``: ``[i, "keep"]``,
    ``[i, "drop", reason]`` or ``[i, "fix", reason, h, ht, r, t, tt]``; a dict is returned as it is;
    anything else is None."""
    if isinstance(item, dict):
        return item
    if not isinstance(item, list) or len(item) < 2:
        return None
    out: dict[str, Any] = {"i": item[0], "v": item[1]}
    if len(item) > 2:
        out["why"] = item[2]
    if len(item) >= 8:
        out.update(zip(TRIPLE_FIELDS[1:], item[3:8]))
    return out


def _numbered(sentences: Sequence[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(sentences, 1))


def _compact(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _few_shot_turns() -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for ex in EXAMPLES:
        turns.append({"role": "user", "content": "Sentences:\n" + _numbered(ex.sentences)})
        turns.append({"role": "assistant", "content": _compact({"triples": [list(t) for t in ex.triples]})})
    return turns


_FEW_SHOT = _few_shot_turns()


def extraction_messages(sentences: Sequence[str]) -> list[dict[str, str]]:
    """Chat messages that ask for the triples of ``sentences`` (numbered from 1).

    The system prompt and the few-shot turns are the same for every call (a shared KV-cache prefix);
    only the last user turn changes.
    """
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM},
        *_FEW_SHOT,
        {"role": "user", "content": "Sentences:\n" + _numbered(sentences)},
    ]


_VERIFY_EXAMPLE_TEXT = (
    "Financial markets remain under considerable stress, and credit has tightened further "
    "for some businesses and households."
)
_VERIFY_EXAMPLE = [
    {
        "role": "user",
        "content": "Text:\n" + _VERIFY_EXAMPLE_TEXT + "\nTriples:\n"
        "1. stress in financial markets [market_status] -affect-> credit for businesses and households [indicator]\n"
        "2. credit [indicator] -belong_to-> tightened [indicator]\n"
        "3. businesses [indicator] -equal_to-> households [indicator]\n"
        "4. credit for businesses and households [indicator] -affect-> stress in financial markets [market_status]",
    },
    {
        "role": "assistant",
        "content": _compact(
            {
                "verdicts": [
                    [1, "keep"],
                    [2, "drop", "vague_entity"],
                    [3, "drop", "not_stated"],
                    [
                        4,
                        "fix",
                        "wrong_direction",
                        "stress in financial markets",
                        "market_status",
                        "affect",
                        "credit for businesses and households",
                        "indicator",
                    ],
                ]
            }
        ),
    },
]


def verification_messages(text: str, triples: Sequence[Triple]) -> list[dict[str, str]]:
    """Chat messages that ask for a keep / fix / drop verdict on each of ``triples`` given ``text``."""
    lines = [
        f"{i}. {t.head} [{t.head_type}] -{t.relation}-> {t.tail} [{t.tail_type}]" for i, t in enumerate(triples, 1)
    ]
    return [
        {"role": "system", "content": VERIFY_SYSTEM},
        *_VERIFY_EXAMPLE,
        {"role": "user", "content": "Text:\n" + text + "\nTriples:\n" + "\n".join(lines)},
    ]


# ------------------------------------------------------------------------------------ sentences

_BOILERPLATE = re.compile(
    r"^\s*(voting (for|against)|in taking (the discount rate|this) action)"
    r"|approved (the )?requests? submitted by|^\s*[A-Z][a-z]+ [A-Z]\. [A-Z][a-z]+[,;]",
    re.IGNORECASE,
)


def is_boilerplate(sentence: str) -> bool:
    """True for sentences that carry no financial relation: the FOMC vote roll call ("Voting for the
    FOMC monetary policy action were ..."), the discount-rate approvals by Reserve Banks' directors,
    and name lists. They are not sent to the LLM (counted as skipped sentences)."""
    return bool(_BOILERPLATE.search(sentence))


_FINANCIAL = re.compile(
    r"\d|%|\b(rates?|inflation\w*|deflation\w*|disinflation\w*|prices?|pricing|growth|econom\w*|markets?|credit|lending|loans?|debt|"
    r"employ\w*|unemploy\w*|jobs?|labou?r|payrolls?|wages?|spending|consum\w*|invest\w*|output|production|"
    r"demand|supply|polic(y|ies)|monetary|fiscal|fund\w*|treasur\w*|securities|bonds?|yields?|dollars?|"
    r"currenc(y|ies)|exchange|deposits?|banks?|banking|financ\w*|liquidity|capital|assets?|liabilit\w*|"
    r"balance sheet|purchases?|reserves?|housing|energy|oil|commodit\w*|trade|exports?|imports?|tax\w*|"
    r"stocks?|equit(y|ies)|shares?|revenues?|earnings|income|profits?|margins?|sales|expansion|recession|"
    r"recovery|slowdown|slack|stimulus|accommodat\w*|tighten\w*|eas(e|ed|ing)|firming|activity|business\w*|"
    r"industr\w*|manufactur\w*|productivity|costs?|inventor\w*|utiliz\w*|workers?|pressures?|targets?|expectations?|risks?|stability|volatil\w*|spreads?|"
    r"mortgages?|firms?|households?|investors?|gdp|cpi|basis points?|percent|percentage)\b",
    re.IGNORECASE,
)


def has_financial_content(sentence: str) -> bool:
    """A cheap filter in front of the extraction of seed 004 §3.1 (finkg's, not the paper's): True when
    ``sentence`` names a number or any word of a financial and macro-economic lexicon (rates, prices, growth,
    markets, credit, employment, policy, securities, ...). A sentence without one ("In addition, the Committee
    unanimously decided to expedite the release of its minutes.", FOMC 2004-12-14) states no relation between
    financial entities and is not sent to the LLM (``[extract] content_filter``); what it costs on the gold
    set is measured by ``bench/extraction_ladder.py`` (README, Extraction)."""
    return bool(_FINANCIAL.search(sentence))


def overlap(previous: Sequence[str] | None, sentences: Sequence[str]) -> int:
    """How many leading ``sentences`` repeat the trailing sentences of the previous chunk (chunks
    overlap by whole sentences, ingest/text/chunking.py); those were extracted with the previous chunk."""
    if not previous:
        return 0
    for k in range(min(len(previous), len(sentences)), 0, -1):
        if list(previous[-k:]) == list(sentences[:k]):
            return k
    return 0


def sentence_groups(
    sentences: Sequence[str],
    per_call: int,
    skip_first: int = 0,
    answered: Callable[[str], bool] | None = None,
    content_filter: bool = False,
) -> list[list[int]]:
    """Indexes (0-based, into ``sentences``) of the :func:`eligible_sentences` that ``answered`` (if given)
    does not already answer, in groups of at most ``per_call`` consecutive ones; one LLM call per group.

    Raises:
        ValueError: ``per_call`` < 1.
    """
    if per_call < 1:
        raise ValueError("sentences_per_call must be >= 1")
    keep = [
        i
        for i in eligible_sentences(sentences, skip_first, content_filter)
        if not (answered and answered(sentences[i]))
    ]
    return [keep[k : k + per_call] for k in range(0, len(keep), per_call)]


def eligible_sentences(sentences: Sequence[str], skip_first: int = 0, content_filter: bool = False) -> list[int]:
    """Indexes of the sentences extraction answers for: non-empty, not boilerplate, not in the overlap, and
    with ``content_filter`` only those with financial content (:func:`has_financial_content`)."""
    return [
        i
        for i, s in enumerate(sentences)
        if i >= skip_first and s.strip() and not is_boilerplate(s) and (not content_filter or has_financial_content(s))
    ]


# -------------------------------------------------------------------------------------- triples


@dataclass(frozen=True)
class Triple:
    """A candidate or accepted triple. ``sentence`` is its 0-based sentence index in the chunk."""

    sentence: int
    head: str
    head_type: str
    relation: str
    tail: str
    tail_type: str

    def key(self) -> tuple[str, str, str]:
        """(head, relation, tail) lower-cased: duplicates within a chunk share it."""
        return self.head.lower(), self.relation, self.tail.lower()


_WORD = re.compile(r"[a-z0-9]+(?:[./-][a-z0-9]+)*")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "by",
        "with",
        "at",
        "from",
        "as",
        "its",
        "their",
        "this",
        "that",
        "these",
        "those",
        "be",
        "is",
        "are",
        "was",
        "were",
        "been",
        "has",
        "have",
        "had",
        "will",
        "would",
        "should",
        "could",
        "may",
        "might",
    ]
)


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def grounded(entity: str, sentence: str, min_share: float = 0.5) -> bool:
    """True when at least ``min_share`` of the entity's content words occur in the sentence (a word
    matches on its first five letters, so "rising"/"rise" and "eased"/"easing" match)."""
    words = _content_words(entity)
    if not words:
        return False
    stems = {w[:5] for w in _content_words(sentence)}
    return sum(w[:5] in stems for w in words) / len(words) >= min_share


def clean_name(value: Any) -> str:
    """An entity surface form with whitespace collapsed and trailing punctuation removed ('' if not a str)."""
    if not isinstance(value, str):
        return ""
    return re.sub(r"\s+", " ", value).strip().strip(".,;:\"'").strip()


MAX_ENTITY_WORDS = 16
_BARE_ADJECTIVES = frozenset(
    [
        "tight",
        "weak",
        "strong",
        "low",
        "high",
        "elevated",
        "subdued",
        "moderate",
        "solid",
        "slow",
        "robust",
        "uncertain",
        "favorable",
        "unfavorable",
        "stable",
        "firm",
        "soft",
        "sluggish",
        "modest",
    ]
)


def is_noun_phrase(entity: str) -> bool:
    """False for a bare adjective or participle ("strained", "tight", "deteriorated"), which small
    models emit as a tail ("labor market conditions | indicate | deteriorated"); True otherwise."""
    words = entity.lower().split()
    return not (len(words) == 1 and (words[0].endswith("ed") or words[0] in _BARE_ADJECTIVES))


_INSTITUTION = re.compile(
    r"^(the )?(federal open market committee|fomc|committee|federal reserve( system| board)?|fed|"
    r"board( of governors)?( of the federal reserve( system)?)?|federal reserve bank( of [a-z. ]+)?|"
    r"reserve banks?)$"
)


def is_institution(entity: str) -> bool:
    """True for the policy institution itself ("the Committee", "Federal Open Market Committee", "the
    Board of Governors"): the schema's entities are what it acts on and observes, not the actor (the
    prompt says so; the check enforces it, measured: Qwen2.5-Coder-1.5B still heads triples with it)."""
    return bool(_INSTITUTION.match(" ".join(entity.lower().replace("'s", "").split())))


def check_candidate(item: Any, sentence_numbers: Sequence[int], sentences: Sequence[str]) -> tuple[Triple | None, str]:
    """Turn one item of an LLM answer, ``[s, h, ht, r, t, tt]`` or ``{"s","h","ht","r","t","tt"}``
    (:func:`triple_item`), into a :class:`Triple`.

    Args:
        item: the parsed JSON item.
        sentence_numbers: the chunk's sentence index (0-based) of each number the prompt showed (1-based).
        sentences: the chunk's sentences.

    Returns:
        ``(triple, "")`` when valid, else ``(None, reason)`` with reason one of ``invalid_item``,
        ``bad_sentence_number``, ``unknown_type``, ``unknown_relation``, ``empty_entity``,
        ``long_entity``, ``self_loop``, ``institution``, ``not_a_noun_phrase``, ``not_in_text``.
    """
    item = triple_item(item)
    if not isinstance(item, dict):
        return None, "invalid_item"
    s = item.get("s")
    if isinstance(s, str) and s.strip().isdigit():
        s = int(s)
    if not isinstance(s, int) or isinstance(s, bool) or not 1 <= s <= len(sentence_numbers):
        return None, "bad_sentence_number"
    idx = sentence_numbers[s - 1]
    head, tail = clean_name(item.get("h")), clean_name(item.get("t"))
    ht, tt, rel = item.get("ht"), item.get("tt"), item.get("r")
    if ht not in ENTITY_CODES or tt not in ENTITY_CODES:
        return None, "unknown_type"
    if rel not in RELATION_CODES:
        return None, "unknown_relation"
    if not head or not tail:
        return None, "empty_entity"
    if len(head.split()) > MAX_ENTITY_WORDS or len(tail.split()) > MAX_ENTITY_WORDS:
        return None, "long_entity"
    if head.lower() == tail.lower():
        return None, "self_loop"
    if is_institution(head) or is_institution(tail):
        return None, "institution"
    if not (is_noun_phrase(head) and is_noun_phrase(tail)):
        return None, "not_a_noun_phrase"
    if not (grounded(head, sentences[idx]) and grounded(tail, sentences[idx])):
        return None, "not_in_text"
    return Triple(idx, head, ht, rel, tail, tt), ""


def parse_triples(
    data: Any, sentence_numbers: Sequence[int], sentences: Sequence[str], seen: set[tuple[str, str, str]] | None = None
) -> tuple[list[Triple], list[dict[str, Any]]]:
    """The valid, de-duplicated triples of one extraction answer, and the rejected items with reasons.

    ``seen`` holds the :meth:`Triple.key` of triples accepted before (earlier answers for the same
    chunk); it is updated, so a triple repeated across answers is rejected as ``duplicate`` too.

    Raises:
        ValueError: ``data`` is not ``{"triples": [...]}`` (the caller records the raw answer).
    """
    if not isinstance(data, dict) or not isinstance(data.get("triples"), list):
        raise ValueError('the answer is not {"triples": [...]}')
    accepted: list[Triple] = []
    rejected: list[dict[str, Any]] = []
    seen = set() if seen is None else seen
    for item in data["triples"]:
        triple, reason = check_candidate(item, sentence_numbers, sentences)
        if triple is not None and triple.key() in seen:
            triple, reason = None, "duplicate"
        if triple is None:
            rejected.append({"item": item, "reason": reason})
            continue
        seen.add(triple.key())
        accepted.append(triple)
    return accepted, rejected


@dataclass
class Verdict:
    """What the verification pass decided for one candidate: ``keep``, ``fix`` (with the corrected
    triple in ``triple``), ``drop``, or ``no_verdict`` (the answer had none for it: dropped)."""

    candidate: Triple
    decision: str
    reason: str = ""
    triple: Triple | None = None


def apply_verdicts(data: Any, candidates: Sequence[Triple], sentences: Sequence[str]) -> list[Verdict]:
    """Apply a verification answer ``{"verdicts": [[i, "keep"], [i, "drop", why], [i, "fix", why, h, ht,
    r, t, tt], ...]}`` (or the same as ``{"i", "v", "why", ...}`` objects, :func:`verdict_item`) to ``candidates``.

    A ``fix`` whose corrected triple fails :func:`check_candidate` is recorded as a drop with reason
    ``bad_fix:<reason>``; a candidate the answer does not mention is dropped as ``no_verdict``; the first
    verdict per number counts.

    Raises:
        ValueError: ``data`` is not ``{"verdicts": [...]}``.
    """
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list):
        raise ValueError('the answer is not {"verdicts": [...]}')
    by_number: dict[int, dict[str, Any]] = {}
    for v in map(verdict_item, data["verdicts"]):
        if v is not None and isinstance(v.get("i"), int) and v["i"] not in by_number:
            by_number[v["i"]] = v
    out: list[Verdict] = []
    for n, cand in enumerate(candidates, 1):
        v = by_number.get(n)
        decision = v.get("v") if v else None
        reason = str(v.get("why") or "") if v else ""
        if decision == "keep":
            out.append(Verdict(cand, "keep", triple=cand))
        elif decision == "fix":
            assert v is not None, "a decision comes from a verdict"
            merged = {
                "s": 1,
                "h": v.get("h") or cand.head,
                "ht": v.get("ht") or cand.head_type,
                "r": v.get("r") or cand.relation,
                "t": v.get("t") or cand.tail,
                "tt": v.get("tt") or cand.tail_type,
            }
            fixed, why = check_candidate(merged, [cand.sentence], sentences)
            if fixed is None:
                out.append(Verdict(cand, "drop", f"bad_fix:{why}"))
            elif fixed == cand:
                out.append(Verdict(cand, "keep", reason or "fix_without_change", triple=cand))
            else:
                out.append(Verdict(cand, "fix", reason or "unspecified", triple=fixed))
        elif decision == "drop":
            out.append(Verdict(cand, "drop", reason or "unspecified"))
        else:
            out.append(Verdict(cand, "drop", "no_verdict"))
    return out


@dataclass
class ChunkExtraction:
    """Everything extraction and verification did for one chunk (stored as its ``(:Extraction)``).

    ``sentences_skipped`` counts boilerplate and overlap sentences not sent; ``sentences_reused`` the
    sentences answered from an identical sentence extracted before (:class:`SentenceMemo`), and
    ``verdicts_reused`` the verdicts taken over the same way; ``answered``: the indexes of the
    sentences that have an extraction answer (sent and answered, or reused).
    ``proposed``: triples the extraction calls proposed that passed the deterministic checks;
    ``rejected``: items that failed them (``{"item", "reason"}``); ``verdicts``: the verification pass
    (empty until it ran); ``failures``: calls whose answer could not be used (``{"stage", "error",
    "raw"}``); ``repairs``: answers json-repair mended (``{"stage", "raw"}``); token and time totals
    over the chunk's backend calls (``calls``; answers from the disk cache are ``cached_calls``).
    """

    chunk_id: str
    sentences_sent: int = 0
    sentences_skipped: int = 0
    sentences_reused: int = 0
    verdicts_reused: int = 0
    answered: list[int] = field(default_factory=list)
    proposed: list[Triple] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    repairs: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def accepted(self, verified: bool) -> list[Triple]:
        """The triples to write: after verification (``verified``), else the proposed ones."""
        if not verified:
            return list(self.proposed)
        return [v.triple for v in self.verdicts if v.triple is not None]

    def count(self, result: Any, stage: str) -> None:
        """Add one LLM call's usage (an ``LLMResult``); an answer json-repair had to mend is kept raw
        in :attr:`repairs` (a truncated answer repaired to fewer triples is visible, not silent)."""
        if result.repaired:
            self.repairs.append({"stage": stage, "raw": result.text[:2000]})
        if result.cached:  # answered from the disk cache: no backend call, no tokens spent
            self.cached_calls += 1
            return
        self.calls += 1
        self.prompt_tokens += int(result.prompt_tokens or 0)
        self.completion_tokens += int(result.completion_tokens or 0)
        self.seconds += float(result.seconds or 0.0)

    def record(self) -> dict[str, Any]:
        """JSON-serializable fields for the ``(:Extraction)`` node (lists as JSON strings)."""
        return {
            "sentences_sent": self.sentences_sent,
            "sentences_skipped": self.sentences_skipped,
            "sentences_reused": self.sentences_reused,
            "verdicts_reused": self.verdicts_reused,
            "answered": _compact(self.answered),
            "n_proposed": len(self.proposed),
            "n_rejected": len(self.rejected),
            "n_kept": sum(v.decision == "keep" for v in self.verdicts),
            "n_fixed": sum(v.decision == "fix" for v in self.verdicts),
            "n_dropped": sum(v.decision == "drop" for v in self.verdicts),
            "n_failures": len(self.failures),
            "n_repaired": len(self.repairs),
            "proposed": _compact([asdict(t) for t in self.proposed]),
            "rejected": _compact(self.rejected),
            "verdicts": _compact(
                [
                    {
                        "candidate": asdict(v.candidate),
                        "decision": v.decision,
                        "reason": v.reason,
                        "triple": asdict(v.triple) if v.triple else None,
                    }
                    for v in self.verdicts
                ]
            ),
            "failures": _compact(self.failures),
            "repairs": _compact(self.repairs),
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "llm_seconds": round(self.seconds, 3),
        }

    @classmethod
    def from_record(cls, chunk_id: str, rec: dict[str, Any]) -> ChunkExtraction:
        """Rebuild the proposal stage from a stored record (to resume at the verification stage);
        the verdicts too when the record has them (to seed a :class:`SentenceMemo`)."""
        out = cls(chunk_id)
        out.sentences_sent = int(rec.get("sentences_sent") or 0)
        out.sentences_skipped = int(rec.get("sentences_skipped") or 0)
        out.sentences_reused = int(rec.get("sentences_reused") or 0)
        out.answered = json.loads(rec.get("answered") or "[]")
        out.proposed = [Triple(**t) for t in json.loads(rec.get("proposed") or "[]")]
        out.rejected = json.loads(rec.get("rejected") or "[]")
        out.failures = json.loads(rec.get("failures") or "[]")
        out.repairs = json.loads(rec.get("repairs") or "[]")
        for k in ("calls", "cached_calls", "prompt_tokens", "completion_tokens"):
            setattr(out, k, int(rec.get(k) or 0))
        out.seconds = float(rec.get("llm_seconds") or 0.0)
        for v in json.loads(rec.get("verdicts") or "[]"):
            out.verdicts.append(
                Verdict(
                    Triple(**v["candidate"]),
                    v["decision"],
                    v.get("reason") or "",
                    Triple(**v["triple"]) if v.get("triple") else None,
                )
            )
        return out


def sentence_key(sentence: str) -> str:
    """A sentence with whitespace collapsed: identical sentences (FOMC statements repeat many word for
    word from one meeting to the next) share it."""
    return " ".join(sentence.split())


_Fields = tuple[str, str, str, str, str]  # head, head type, relation, tail, tail type


def _fields(t: Triple) -> _Fields:
    return t.head, t.head_type, t.relation, t.tail, t.tail_type


class SentenceMemo:
    """The answers already obtained for a sentence, so an identical sentence is not sent again.

    FOMC statements repeat sentences word for word from one meeting to the next (of the 1,890
    non-boilerplate sentences of the 159 statements in ../shared/data/fomc-statements, 1,168 are
    distinct); extracting such a sentence again would cost the same tokens for the same triples.
    The memo maps a sentence (:func:`sentence_key`) to the triples extracted from it (possibly none),
    and (sentence, triple) to the verification verdict. It is filled as calls are answered, and from
    stored records (:meth:`add`), so a resumed run reuses what the interrupted one extracted. A call
    whose answer failed is not remembered (the sentence is sent again next time).
    """

    def __init__(self) -> None:
        self.triples: dict[str, list[_Fields]] = {}
        self.verdicts: dict[tuple[str, _Fields], tuple[str, str, _Fields | None]] = {}

    def knows(self, sentence: str) -> bool:
        """True when an identical sentence has an extraction answer."""
        return sentence_key(sentence) in self.triples

    def proposals(self, sentence: str, index: int) -> list[Triple]:
        """The remembered triples of ``sentence``, as triples of sentence ``index`` of the current chunk."""
        return [Triple(index, *f) for f in self.triples.get(sentence_key(sentence), [])]

    def remember_proposals(self, sentence: str, triples: Sequence[Triple]) -> None:
        """Record the triples extracted from ``sentence`` (an empty list: it states none)."""
        self.triples[sentence_key(sentence)] = [_fields(t) for t in triples]

    def verdict(self, sentence: str, candidate: Triple) -> Verdict | None:
        """The remembered verdict on ``candidate`` for an identical sentence, re-pointed at ``candidate``."""
        got = self.verdicts.get((sentence_key(sentence), _fields(candidate)))
        if got is None:
            return None
        decision, reason, fixed = got
        return Verdict(candidate, decision, reason, Triple(candidate.sentence, *fixed) if fixed else None)

    def remember_verdict(self, sentence: str, verdict: Verdict) -> None:
        """Record a verdict (``no_verdict`` drops, the mark of a failed call, are not remembered)."""
        if verdict.reason != "no_verdict":
            self.verdicts[(sentence_key(sentence), _fields(verdict.candidate))] = (
                verdict.decision,
                verdict.reason,
                _fields(verdict.triple) if verdict.triple else None,
            )

    def add(self, sentences: Sequence[str], extraction: ChunkExtraction) -> None:
        """Remember a stored chunk's answers: the triples of each answered sentence and the verdicts."""
        for i in extraction.answered:
            if i < len(sentences):
                self.remember_proposals(sentences[i], [t for t in extraction.proposed if t.sentence == i])
        for v in extraction.verdicts:
            if v.candidate.sentence < len(sentences):
                self.remember_verdict(sentences[v.candidate.sentence], v)


# ------------------------------------------------------------------------------------ the passes


class TripleExtractor:
    """Runs the two LLM passes of seed 004 section 3.1 on chunks, through an ``LLMClient``.

    Args:
        client: a :class:`generation.llm.LLMClient` (cache, usage and budget live there).
        sentences_per_call: sentences per extraction call (>= 1).
        max_tokens: completion cap per extraction call; the verification call gets
            ``verify_tokens_per_triple`` per candidate plus 24.
        memo: a :class:`SentenceMemo` shared by the chunks of a run (identical sentences are answered
            from it); ``None`` sends every sentence.
        workers: LLM calls in flight at once (a ``llama-server`` backend with that many slots decodes them
            together); 1 sends one call at a time. content_filter: skip sentences without financial content
            (:func:`has_financial_content`; counted as skipped).

    Errors: an answer that is not usable JSON (after json-repair) is recorded in
    :attr:`ChunkExtraction.failures` with the raw answer; the other sentences of the chunk go on.
    ``LLMUnavailable`` and ``BudgetExceeded`` propagate (the batch stops; what is written stays).
    """

    def __init__(
        self,
        client: Any,
        sentences_per_call: int = 4,
        max_tokens: int = 384,
        verify_tokens_per_triple: int = 40,
        memo: SentenceMemo | None = None,
        workers: int = 1,
        content_filter: bool = False,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.client = client
        self.sentences_per_call = sentences_per_call
        self.max_tokens = max_tokens
        self.verify_tokens_per_triple = verify_tokens_per_triple
        self.memo = memo
        self.workers = workers
        self.content_filter = content_filter

    def _map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        """``[fn(x) for x in items]``, with up to ``workers`` calls in flight (a server with that many slots
        decodes them together); results in the order of ``items``; an exception propagates."""
        if self.workers <= 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(min(self.workers, len(items))) as pool:
            return list(pool.map(fn, items))

    def propose(self, chunk_id: str, sentences: Sequence[str], skip_first: int = 0) -> ChunkExtraction:
        """Phase 2 of seed 004 §3.1 for one chunk: :meth:`propose_many` of ``[(chunk_id, sentences, skip_first)]``."""
        return self.propose_many([(chunk_id, sentences, skip_first)])[0]

    def propose_many(self, chunks: Sequence[tuple[str, Sequence[str], int]]) -> list[ChunkExtraction]:
        """Phase 2 of seed 004 §3.1: few-shot extraction over each chunk's sentences.

        Args:
            chunks: ``(chunk id, sentences, skip_first)``; the first ``skip_first`` sentences (the overlap with
                the previous chunk, :func:`overlap`) are not sent, nor the sentences the memo already answers
                (their remembered triples are taken over).

        Returns:
            One :class:`ChunkExtraction` per chunk, in order.

        The calls of all the chunks go out together, up to ``workers`` at once; the result is the same as
        extracting the chunks one after another: a sentence identical to one an earlier chunk of the same
        call sends is not sent again but takes over that sentence's triples (if that call failed, the
        sentence stays unanswered and the failure is recorded).
        """
        memo = self.memo
        claimed: set[str] = set()  # sentences an earlier chunk of this call sends

        def answered(s: str) -> bool:
            return memo is not None and (memo.knows(s) or sentence_key(s) in claimed)

        plans: list[tuple[ChunkExtraction, Sequence[str], list[int], list[list[int]]]] = []
        for chunk_id, sentences, skip_first in chunks:
            out = ChunkExtraction(chunk_id)
            eligible = eligible_sentences(sentences, skip_first, self.content_filter)
            groups = sentence_groups(
                sentences, self.sentences_per_call, skip_first, answered if memo else None, self.content_filter
            )
            claimed.update(sentence_key(sentences[i]) for g in groups for i in g)
            out.sentences_sent = sum(len(g) for g in groups)
            out.sentences_skipped = sum(1 for s in sentences if s.strip()) - len(eligible)
            plans.append((out, sentences, eligible, groups))

        def ask(job: tuple[int, list[int]]) -> Any:
            k, group = job
            shown = [plans[k][1][i] for i in group]
            try:
                return self.client.chat(
                    extraction_messages(shown),
                    max_tokens=self.max_tokens,
                    temperature=0.0,
                    json_schema=extraction_json_schema(len(shown)),
                )
            except LLMAnswerError as exc:
                return exc

        jobs = [(k, g) for k, plan in enumerate(plans) for g in plan[3]]
        answers = iter(self._map(ask, jobs))
        for out, sentences, eligible, groups in plans:
            seen: set[tuple[str, str, str]] = set()
            sent = {i for g in groups for i in g}
            for i in eligible:
                if i in sent or memo is None:
                    continue
                if not memo.knows(sentences[i]):  # an identical sentence's call in this batch failed
                    out.failures.append(
                        {"stage": "extract", "sentences": [i], "error": "the call of an identical sentence failed"}
                    )
                    continue
                out.sentences_reused += 1  # an identical sentence was answered before
                out.answered.append(i)
                for t in memo.proposals(sentences[i], i):
                    if t.key() not in seen:
                        seen.add(t.key())
                        out.proposed.append(t)
            for group in groups:
                res = next(answers)
                if isinstance(res, LLMAnswerError):
                    out.failures.append(
                        {"stage": "extract", "sentences": group, "error": str(res)[:300], "raw": str(res.raw)[:2000]}
                    )
                    continue
                out.count(res, "extract")
                try:
                    triples, rejected = parse_triples(res.data, group, sentences, seen)
                except ValueError as exc:
                    out.failures.append(
                        {"stage": "extract", "sentences": group, "error": str(exc), "raw": res.text[:2000]}
                    )
                    continue
                out.proposed.extend(triples)
                out.rejected.extend(rejected)
                out.answered.extend(group)
                if memo is not None:
                    for i in group:
                        memo.remember_proposals(sentences[i], [t for t in triples if t.sentence == i])
            out.proposed.sort(key=lambda t: t.sentence)  # stable: in sentence order, as extracted within one
            out.answered.sort()
        return [p[0] for p in plans]

    def verify(self, extraction: ChunkExtraction, sentences: Sequence[str]) -> ChunkExtraction:
        """Phase 3 of seed 004 §3.1 for one chunk: :meth:`verify_many` of ``[(extraction, sentences)]``."""
        return self.verify_many([(extraction, sentences)])[0]

    def verify_many(self, items: Sequence[tuple[ChunkExtraction, Sequence[str]]]) -> list[ChunkExtraction]:
        """Phase 3 of seed 004 §3.1: keep / fix / drop each proposed triple against its chunk's text.

        Args:
            items: ``(extraction, the chunk's sentences)``; each extraction's ``verdicts`` are filled in place.

        Returns:
            The extractions, in order.

        The text shown is the sentences the candidates come from (in order), so the prompt stays short.
        Candidates the memo has a verdict for (same triple from an identical sentence, also one asked about
        by an earlier chunk of the same call) take it over and are not sent. A failed verification answer
        drops nothing silently: the candidates get the verdict ``no_verdict`` and the failure is recorded.
        The calls of all the chunks go out together, up to ``workers`` at once.
        """
        memo = self.memo
        claimed: set[tuple[str, _Fields]] = set()
        plans: list[tuple[list[Verdict | None], list[Triple]]] = []
        for extraction, sentences in items:
            known = [memo.verdict(sentences[c.sentence], c) if memo else None for c in extraction.proposed]
            todo, mine = [], set()
            for c, v in zip(extraction.proposed, known):
                key = (sentence_key(sentences[c.sentence]), _fields(c))
                if v is None and not (memo is not None and key in claimed):
                    todo.append(c)
                    mine.add(key)
            claimed |= mine
            plans.append((known, todo))

        def ask(k: int) -> list[Verdict]:
            extraction, sentences = items[k]
            return self._ask(extraction, plans[k][1], sentences)

        asked = self._map(ask, [k for k, (_, todo) in enumerate(plans) if todo])
        fresh_of = iter(asked)
        for (extraction, sentences), (known, todo) in zip(items, plans):
            fresh = iter(next(fresh_of) if todo else [])
            verdicts = []
            for c, v in zip(extraction.proposed, known):
                if v is not None:
                    verdicts.append(v)
                elif c in todo:
                    verdicts.append(next(fresh))
                else:  # asked by an earlier chunk of this call: its verdict, or a no_verdict if that call failed
                    got = memo.verdict(sentences[c.sentence], c) if memo else None
                    verdicts.append(got if got is not None else Verdict(c, "drop", "no_verdict"))
            extraction.verdicts = verdicts
            extraction.verdicts_reused = len(extraction.proposed) - len(todo)  # every verdict not asked for now
            if memo is not None:
                for v in extraction.verdicts:
                    memo.remember_verdict(sentences[v.candidate.sentence], v)
        return [x for x, _ in items]

    def _ask(self, extraction: ChunkExtraction, cands: Sequence[Triple], sentences: Sequence[str]) -> list[Verdict]:
        """One verification call for ``cands``; a failure is recorded and gives ``no_verdict`` drops."""
        text = " ".join(sentences[i] for i in sorted({t.sentence for t in cands}))
        try:
            res = self.client.chat(
                verification_messages(text, cands),
                max_tokens=24 + self.verify_tokens_per_triple * len(cands),
                temperature=0.0,
                json_schema=verify_json_schema(len(cands)),
            )
        except LLMAnswerError as exc:
            extraction.failures.append({"stage": "verify", "error": str(exc)[:300], "raw": str(exc.raw)[:2000]})
            return [Verdict(c, "drop", "no_verdict") for c in cands]
        extraction.count(res, "verify")
        try:
            return apply_verdicts(res.data, cands, sentences)
        except ValueError as exc:
            extraction.failures.append({"stage": "verify", "error": str(exc), "raw": res.text[:2000]})
            return [Verdict(c, "drop", "no_verdict") for c in cands]
