"""Text metrics of generated analyses against reference texts: ROUGE-L, BERTScore and an LLM judge.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 4.1 ("Dataset and Metrics"): GLM-4-Score,
BERTScore (Zhang et al., 2019) and ROUGE-L (Lin, 2004). The paper's GLM-4-Score is an LLM's 0-5 rating
of "the consistency of opinions between the generated text and both the reference conclusion and
reference text"; :func:`judge_consistency` asks the configured LLM (``[llm]``) for that rating, once
against the reference conclusion and once against the reference text.

- **ROUGE-L** (:func:`rouge_l`): precision, recall and F1 of the longest common subsequence of tokens,
  computed by ``rouge-score`` with :class:`RougeTokenizer`: lower-cased NFKC text; a number is one
  token with its thousands separators dropped (``1,234.5`` -> ``1234.5``, ``12.5%`` stays one token);
  every CJK character is a token (Chinese text has no spaces; ``rouge-score``'s own tokenizer drops
  all non-ASCII characters); other letters form words (``Zürich`` stays a word, ``FY2019`` too).
- **BERTScore** (:class:`BertScoreModel`): greedy cosine matching of contextual token embeddings
  (``bert-score``), from a **local** model directory only (``[eval] bertscore_model_path``; e.g. an
  all-MiniLM-L6-v2 or all-mpnet-base-v2 sentence-transformers folder) at ``[eval] bertscore_num_layers``
  (default: the model's last layer); nothing is downloaded (the Hugging Face hub is switched to offline
  mode before the model loads). No IDF weighting and no baseline rescaling (baselines exist only for
  hub model names). :attr:`BertScoreModel.description` names the model directory, the layer and the
  library version: report it with the scores. Texts longer than the model's window (512 tokens for
  MiniLM and mpnet) are truncated by ``bert-score``.
- **LLM judge** (:func:`judge_consistency`): the answer must be JSON ``{"score": 0-5 integer,
  "reason": string}``; an answer that is not (no JSON, a missing key, a score outside 0-5) is kept as
  a :class:`JudgeVerdict` with ``score=None`` and the error and raw answer: it is counted as malformed,
  never as 0. :func:`mean_judge_score` averages the valid scores and counts the malformed ones.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generation.llm import LLMAnswerError, LLMClient
from kg.errors import ModelError
from kg.progress import Tick

# ------------------------------------------------------------------------------------------ ROUGE-L

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(
    rf"(?<![A-Za-z0-9_.])[-+]?\d+(?:[.,]\d+)*(?:\s?%)?"  # numbers (a sign only at a word start), percent
    rf"|[{_CJK}]"  # one CJK character
    rf"|[^\W\d_{_CJK}][^\W_{_CJK}]*(?:['’][^\W_{_CJK}]+)*"
)  # words (any script; "fy2019"), apostrophes


class RougeTokenizer:
    """Tokens for ROUGE (see the module doc): ``tokenize("Revenue rose 12.5 % to $1,234.5 million")``
    -> ``["revenue", "rose", "12.5%", "to", "1234.5", "million"]``; ``tokenize("营收增长")`` ->
    ``["营", "收", "增", "长"]``."""

    def tokenize(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text or "").lower()
        return [_normalize_number(t) if t[-1].isdigit() or t.endswith("%") else t for t in _TOKEN.findall(text)]


def _normalize_number(token: str) -> str:
    token = token.replace(" ", "")
    if re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?", token):
        token = token.replace(",", "")
    return token


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 (each 0..1) of one candidate against one reference."""

    precision: float
    recall: float
    f1: float


def rouge_l(candidates: Sequence[str], references: Sequence[str]) -> list[PRF]:
    """ROUGE-L of each candidate against its reference (same length and order; see the module doc).

    Raises:
        ValueError: the two lists differ in length.
    """
    from rouge_score import rouge_scorer

    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} references")
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=RougeTokenizer())
    out = []
    for cand, ref in zip(candidates, references):
        s = scorer.score(ref, cand)["rougeL"]  # rouge-score's order: (target, prediction)
        out.append(PRF(s.precision, s.recall, s.fmeasure))
    return out


# ---------------------------------------------------------------------------------------- BERTScore


class BertScoreUnavailable(ModelError):
    """BERTScore cannot run: no model directory configured, the directory is missing or is not a
    Hugging Face model folder, or the layer is out of range; the message names the setting."""


def _model_layers(path: Path) -> int:
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BertScoreUnavailable(
            f"[eval] bertscore_model_path {path}: no readable config.json, so not a "
            f"Hugging Face model directory ({exc})"
        ) from exc
    layers = config.get("num_hidden_layers")
    if not isinstance(layers, int):
        raise BertScoreUnavailable(f"[eval] bertscore_model_path {path}: config.json has no num_hidden_layers")
    return layers


class BertScoreModel:
    """BERTScore with a local model, loaded once and used for many batches.

    Args:
        model_path: a local Hugging Face model directory (``[eval] bertscore_model_path``).
        num_layers: the layer whose embeddings are compared (1..the model's layers); None: the last.
        batch_size: texts per forward pass. device: a torch device (``cpu``, ``cuda``); None: cuda when
            available, else cpu (``bert-score``'s choice).

    Raises:
        BertScoreUnavailable: no path, a missing directory, not a model directory, a layer out of range.
    """

    def __init__(
        self,
        model_path: Path | str | None,
        num_layers: int | None = None,
        batch_size: int = 32,
        device: str | None = None,
    ) -> None:
        if not model_path:
            raise BertScoreUnavailable(
                "no BERTScore model configured: set [eval] bertscore_model_path (FINKG_EVAL_BERTSCORE_MODEL_PATH) to a "
                "local model directory, e.g. the all-MiniLM-L6-v2 folder that `finkg models path all-minilm-l6-v2` prints"
            )
        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise BertScoreUnavailable(
                f"[eval] bertscore_model_path {path}: no such directory (nothing is downloaded; "
                "point it at a local Hugging Face model folder)"
            )
        available = _model_layers(path)
        layers = available if num_layers is None else num_layers
        if not 1 <= layers <= available:
            raise BertScoreUnavailable(f"[eval] bertscore_num_layers {layers}: {path.name} has layers 1..{available}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from bert_score import BERTScorer

        self.path, self.num_layers, self.available_layers = path, layers, available
        self.batch_size = batch_size
        self._scorer = BERTScorer(
            model_type=str(path),
            num_layers=layers,
            batch_size=batch_size,
            device=device,
            idf=False,
            rescale_with_baseline=False,
        )

    @property
    def description(self) -> str:
        """Which model and layer, e.g. ``all-minilm-l6-v2, layer 6 of 6, no idf, no rescaling (bert-score
        0.3.13)``: report it with the scores (BERTScore values depend on both)."""
        from importlib.metadata import version

        return (
            f"{self.path.name}, layer {self.num_layers} of {self.available_layers}, no idf, no rescaling "
            f"(bert-score {version('bert-score')})"
        )

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> list[PRF]:
        """BERTScore of each candidate against its reference (same length and order), in batches.

        A pair with an empty (or blank) side scores 0, 0, 0 without the model: a failed generation has no
        tokens to match (bert-score itself cannot encode an empty text with transformers 5).

        Raises:
            ValueError: the two lists differ in length.
        """
        if len(candidates) != len(references):
            raise ValueError(f"{len(candidates)} candidates but {len(references)} references")
        out = [PRF(0.0, 0.0, 0.0)] * len(candidates)
        todo = [i for i, (c, ref) in enumerate(zip(candidates, references)) if c.strip() and ref.strip()]
        if todo:
            # bert_score types score() as returning a hash string too (return_hash=True); not asked here
            p, r, f = self._scorer.score(
                [candidates[i] for i in todo], [references[i] for i in todo], batch_size=self.batch_size
            )
            for i, a, b, c in zip(todo, p.tolist(), r.tolist(), f.tolist()):  # pyright: ignore[reportAttributeAccessIssue]
                out[i] = PRF(float(a), float(b), float(c))
        return out


def bertscore_from_settings(settings: Any) -> BertScoreModel:
    """A :class:`BertScoreModel` from ``[eval] bertscore_model_path``, ``bertscore_num_layers``,
    ``bertscore_batch_size`` and ``bertscore_device``.

    Raises:
        BertScoreUnavailable: see :class:`BertScoreModel`.
    """
    return BertScoreModel(
        settings.eval.bertscore_model_path,
        settings.eval.bertscore_num_layers,
        settings.eval.bertscore_batch_size,
        settings.eval.bertscore_device,
    )


# ------------------------------------------------------------------------------------- the LLM judge

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 5}, "reason": {"type": "string"}},
    "required": ["score", "reason"],
}

REFERENCE_KINDS = {
    "conclusion": "the reference conclusion (the expert's final judgement)",
    "text": "the reference text (the expert's full analysis)",
}

_JUDGE_SYSTEM = (
    "You are a strict financial analyst grading a generated market analysis. Compare the opinions and "
    "conclusions of the generated analysis with {kind}. Score 0 to 5: 5 = the same opinions and conclusions; "
    "4 = the same main conclusion, minor differences; 3 = partly consistent; 2 = mostly different; "
    "1 = contradicts it; 0 = no opinion or unrelated. Judge consistency of views only, not style or length. "
    'Answer with JSON: {{"score": <integer 0-5>, "reason": "<one sentence>"}}.'
)


@dataclass(frozen=True)
class JudgeVerdict:
    """One judge rating.

    Attributes:
        score: 0..5, or None when the answer was malformed.
        reason: the judge's reason ("" when malformed).
        reference_kind: ``conclusion`` or ``text``.
        raw: the judge's raw answer text (kept for audit).
        error: why the answer was rejected, or None.
    """

    score: int | None
    reason: str
    reference_kind: str
    raw: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        """The rating is usable (a score in 0..5)."""
        return self.score is not None


def judge_messages(generated: str, reference: str, reference_kind: str) -> list[dict]:
    """The chat messages of one rating (the system prompt names ``reference_kind``'s meaning).

    Raises:
        ValueError: ``reference_kind`` is not ``conclusion`` or ``text``.
    """
    if reference_kind not in REFERENCE_KINDS:
        raise ValueError(f"reference_kind must be one of {', '.join(REFERENCE_KINDS)}, not {reference_kind!r}")
    return [
        {"role": "system", "content": _JUDGE_SYSTEM.format(kind=REFERENCE_KINDS[reference_kind])},
        {"role": "user", "content": f"Reference {reference_kind}:\n{reference}\n\nGenerated analysis:\n{generated}"},
    ]


def judge_consistency(
    client: LLMClient, generated: str, reference: str, reference_kind: str = "conclusion", max_tokens: int = 192
) -> JudgeVerdict:
    """The LLM's 0-5 consistency rating of ``generated`` against a reference (GLM-4-Score, seed 004 4.1).

    Args:
        client: the judge LLM. reference_kind: ``conclusion`` (the paper's main score) or ``text``.
        max_tokens: the answer's length limit (an answer cut off before its JSON closes is malformed).

    Returns:
        a :class:`JudgeVerdict`; a malformed answer gives ``score=None`` with ``error`` and ``raw``.

    Raises:
        ValueError: an unknown ``reference_kind``. ``BudgetExceeded`` / ``LLMUnavailable`` from the client.
    """
    messages = judge_messages(generated, reference, reference_kind)
    try:
        result = client.chat(messages, max_tokens=max_tokens, json_schema=JUDGE_SCHEMA)
    except LLMAnswerError as exc:
        return JudgeVerdict(None, "", reference_kind, str(exc.raw), str(exc))
    data = result.data
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= 5:
        return JudgeVerdict(None, "", reference_kind, result.text, f"score {score!r} is not an integer in 0..5")
    return JudgeVerdict(score, str(data.get("reason") or ""), reference_kind, result.text)


@dataclass(frozen=True)
class JudgeSummary:
    """Mean of the valid ratings (None when there is none), how many were valid and how many malformed."""

    mean: float | None
    valid: int
    malformed: int


def mean_judge_score(verdicts: Sequence[JudgeVerdict]) -> JudgeSummary:
    """Average the usable ratings; malformed ones are counted, not averaged as 0."""
    scores = [v.score for v in verdicts if v.score is not None]
    return JudgeSummary(sum(scores) / len(scores) if scores else None, len(scores), len(verdicts) - len(scores))


# ------------------------------------------------------------------------------------ all together


@dataclass(frozen=True)
class TextScores:
    """The metrics of one generated text (BERTScore / judge fields None when not computed)."""

    rouge_l: PRF
    bertscore: PRF | None
    judge_conclusion: JudgeVerdict | None
    judge_text: JudgeVerdict | None


def score_texts(
    candidates: Sequence[str],
    references: Sequence[str],
    conclusions: Sequence[str] | None = None,
    bertscore: BertScoreModel | None = None,
    judge: LLMClient | None = None,
    judge_max_tokens: int = 192,
    progress: Tick | None = None,
) -> list[TextScores]:
    """ROUGE-L, BERTScore (when ``bertscore`` is given) and the two judge ratings (when ``judge`` is
    given: against ``conclusions`` when given, and against ``references``) of each candidate.

    Args:
        candidates / references / conclusions: same length and order.
        progress: called with 1 after each candidate's judge ratings.

    Raises:
        ValueError: the lists differ in length. BertScoreUnavailable, BudgetExceeded, LLMUnavailable.
    """
    if conclusions is not None and len(conclusions) != len(candidates):
        raise ValueError(f"{len(candidates)} candidates but {len(conclusions)} conclusions")
    rouge = rouge_l(candidates, references)
    bert: list[PRF | None] = list(bertscore.score(candidates, references)) if bertscore else [None] * len(candidates)
    out = []
    for i, cand in enumerate(candidates):
        jc = jt = None
        if judge is not None:
            if conclusions is not None:
                jc = judge_consistency(judge, cand, conclusions[i], "conclusion", judge_max_tokens)
            jt = judge_consistency(judge, cand, references[i], "text", judge_max_tokens)
        out.append(TextScores(rouge[i], bert[i], jc, jt))
        if progress:
            progress(1)
    return out


def summarize(scores: Sequence[TextScores]) -> dict[str, Any]:
    """Means over texts: ``rouge_l_p/r/f1``, ``bertscore_p/r/f1`` (None when not computed),
    ``judge_conclusion`` / ``judge_text`` (mean of valid ratings, None when none) with
    ``judge_conclusion_malformed`` / ``judge_text_malformed`` counts, and ``texts``."""
    n = len(scores)

    def mean(values: list[float]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    row: dict[str, Any] = {"texts": n}
    for name, getter in (("rouge_l", lambda s: s.rouge_l), ("bertscore", lambda s: s.bertscore)):
        got = [getter(s) for s in scores if getter(s) is not None]
        row[f"{name}_p"] = mean([g.precision for g in got])
        row[f"{name}_r"] = mean([g.recall for g in got])
        row[f"{name}_f1"] = mean([g.f1 for g in got])
    for name in ("judge_conclusion", "judge_text"):
        verdicts = [getattr(s, name) for s in scores if getattr(s, name) is not None]
        summary = mean_judge_score(verdicts)
        row[name] = round(summary.mean, 4) if summary.mean is not None else None
        row[f"{name}_malformed"] = summary.malformed
    return row
