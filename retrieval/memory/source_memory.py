"""Bayesian source memory, stored in Neo4j (seed 000, section 3.5, Appendix B's update example, Appendix C).

**Cells.** One ``(:SourceMemoryCell {id, run, family, event_type, horizon, positive, negative, updates})``
per evaluation run, source family f, event type e and horizon h, with ``id = "<run>|<f>|<e>|<h>"`` (the
paper's cell key ``f|e|h``, prefixed by the run so that several conditions, e.g. memory, shuffled-label
memory with five seeds and shuffled-event-type memory, live in one graph side by side). Counts a (positive)
and b (negative) start at zero (a missing cell is a cell at zero) and are fractional.

**Feedback** (section 3.5). After the horizon h of an anchor matures, the reader's prediction for h is
compared with the realized residual-impact label y in {-1, 0, +1}. The cited evidence ids (the reader's
JSON ``ids`` for h) are matched against the retrieved top-k context; ids not in it are ignored. If no cited
id is valid, nothing is updated. Otherwise each distinct source family F of the valid cited passages gets

    credit = w(y, h) / |F|,   w(y, h) = 1 / (C * p_val(y | h)),   C = 3,

added to its cell's a when the prediction was correct and to b when not (Appendix B: "if both News and SEC
Filing are cited ... each source family receives w/2"). p_val(y | h) is the validation-split frequency of
label y at horizon h (Table 1 gives them per horizon), so the expected weight is about one.

**Equations 4-6.** The extracted seed text lost the formulas' symbols; finkg reconstructs them from the
prose (and DESIGN.md's summary) as

    (4)  u = (a + 1) / (a + b + 2)                         posterior mean of Beta(a + 1, b + 1); 1/2 neutral
    (5)  s_naive = r + lambda * (u - 1/2)                  the naive score the paper rejects
    (6)  n = a + b,  rho = n / (n + kappa),
         s = r + lambda * clip(rho * (u - 1/2), -c, c)

where r is the passage's static relevance (min-max normalized to [0, 1] within the pool) and the cell is
the passage's (source family, anchor event type, h). "Let n = a + b and rho = n / (n + kappa)" is the
sentence whose symbols were lost; shrinkage multiplies the centered utility (cold cells stay neutral) and
clipping bounds the product (memory never moves a score by more than lambda * c). **Parameters**: lambda =
0.30 and c = 0.20 (Appendix C: the selected setting; "the maximum memory contribution is then lambda * c =
0.06"); K = 20 candidates and a top-5 context (section 3.3, section 4.3's "final top-5 context"). **kappa is
not recoverable** from the extracted text (section 3.5 says "we set [kappa], [lambda] and [c]" with the values
lost, and Appendix C varies only lambda and c): finkg uses kappa = 10 (a cell needs ten units of feedback
to reach half strength) and keeps it a setting (``[memory] kappa``).

**Ranking.** The reader gets one context for all horizons: candidates are ranked by the memory-adjusted
score averaged over the horizons, ``mean_h s_h`` (ties: higher static relevance, then id), and the top k
form the context (:func:`rank_evidence`).

**Prequential updates.** Feedback is recorded when the prediction is made
(``(:SourceMemoryFeedback {id: "<run>|<anchor id>|<h>", run, anchor_id, event_type, horizon, predicted,
label, matured_at, families, ...})``) and applied to the cells only by :meth:`SourceMemory.apply_matured`
(as_of): the events whose horizon matured by ``as_of`` (``matured_at <= as_of``), nothing later. Applying is
idempotent: an applied event is marked (``applied_at``) in the same transaction that adds its credit, and a
marked event is never applied again, so a rerun, a retried batch or a second call with the same ``as_of``
counts each event once. Each applied event links to the cells it moved, ``(:SourceMemoryFeedback)-
[:CREDITED {positive, negative}]->(:SourceMemoryCell)``, so Neo4j Browser shows where every count came from
(:func:`kg.cypher.memory_browser_query`).

**Controls** (section 4.3), options of the same update (:class:`MemoryControl`):
``shuffled_label`` replaces each matured label by a draw from the validation class distribution of its
horizon (a draw seeded by ``(seed, anchor id, horizon)``, so it depends neither on the run id nor on order or
batching), and the
class weight follows the drawn label; ``shuffled_event_type`` indexes the updated cell by a seeded random
permutation of the event types (the true event type is still used to read the memory, so the learned
utilities land on the wrong event types while keeping their global structure). Evaluation labels are never
touched.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, Protocol

from kg import BatchWriter, Graph, cypher
from retrieval.contract import AsOf, Evidence, Retriever, as_of_cutoff, available
from retrieval.text.point_in_time import utc_text

HORIZONS: tuple[str, ...] = ("1D", "3D", "5D")
"""Forecast horizons of the reader's JSON (seed 000, Appendix B)."""
LABELS: tuple[int, ...] = (-1, 0, 1)
"""Residual-impact classes (negative, neutral, positive)."""
N_CLASSES = len(LABELS)
"""C of the class-balanced weight 1 / (C * p_val(y))."""


# --------------------------------------------------------------------------- equations 4-6


@dataclass(frozen=True)
class MemoryParams:
    """Source-memory parameters (module docstring: which ones the paper gives and which finkg chose).

    Attributes:
        kappa: shrinkage pseudo-count, > 0 (rho = n / (n + kappa)).
        clip: bound c of the centered, shrunk utility, >= 0.
        strength: lambda >= 0, the weight of memory against static relevance (0: static ranking).
        top_k: passages in the reader's context, >= 1.
    """

    kappa: float = 10.0
    clip: float = 0.20
    strength: float = 0.30
    top_k: int = 5

    def __post_init__(self) -> None:
        if not self.kappa > 0:
            raise ValueError(f"kappa must be > 0, got {self.kappa}")
        if not self.clip >= 0:
            raise ValueError(f"clip must be >= 0, got {self.clip}")
        if not self.strength >= 0:
            raise ValueError(f"strength (lambda) must be >= 0, got {self.strength}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {self.top_k}")


def utility(positive: float, negative: float) -> float:
    """Equation 4: u = (a + 1) / (a + b + 2), the Beta posterior mean (0.5 for an empty cell).

    Raises:
        ValueError: a negative count.
    """
    if positive < 0 or negative < 0:
        raise ValueError(f"counts must be >= 0, got a={positive}, b={negative}")
    return (positive + 1.0) / (positive + negative + 2.0)


def shrinkage(positive: float, negative: float, kappa: float) -> float:
    """rho = n / (n + kappa) with n = a + b (0 for an empty cell, towards 1 as feedback accumulates)."""
    n = positive + negative
    return n / (n + kappa)


def memory_adjustment(positive: float, negative: float, params: MemoryParams) -> float:
    """The memory term of equation 6 before lambda: clip(rho * (u - 1/2), -c, c)."""
    centered = shrinkage(positive, negative, params.kappa) * (utility(positive, negative) - 0.5)
    return max(-params.clip, min(params.clip, centered))


def memory_score(relevance: float, positive: float, negative: float, params: MemoryParams) -> float:
    """Equation 6: s = r + lambda * clip(rho * (u - 1/2), -c, c) for one passage and one horizon."""
    return relevance + params.strength * memory_adjustment(positive, negative, params)


# --------------------------------------------------------------------------- ranking


class Scored(Protocol):
    """What :func:`rank_evidence` needs of a candidate (``retrieval.text.point_in_time.Candidate`` fits)."""

    @property
    def id(self) -> str: ...

    @property
    def source_family(self) -> str: ...

    @property
    def score(self) -> float | None: ...


@dataclass(frozen=True)
class RankedEvidence:
    """One passage of the memory-reranked context.

    Attributes:
        id: the Chunk id; ``source_family``: its family; ``rank``: 1 = first.
        relevance: static relevance r; ``score``: mean over horizons of equation 6.
        by_horizon: horizon -> equation 6 for that horizon's cell.
    """

    id: str
    source_family: str
    rank: int
    relevance: float
    score: float
    by_horizon: dict[str, float]


Cells = Mapping[tuple[str, str, str], tuple[float, float]]
"""(family, event_type, horizon) -> (positive, negative); a missing cell is (0, 0)."""


def rank_evidence(
    candidates: Sequence[Scored],
    cells: Cells,
    event_type: str,
    params: MemoryParams,
    horizons: Sequence[str] = HORIZONS,
    k: int | None = None,
) -> list[RankedEvidence]:
    """The shared context: candidates ranked by equation 6 averaged over ``horizons``, the top ``k``.

    Args:
        candidates: the pool (each with ``id``, ``source_family`` and static ``score`` in [0, 1]; None
            counts as 0).
        cells: the memory of the run (:meth:`SourceMemory.cells`); the anchor's ``event_type`` picks them.
        k: context size; None: ``params.top_k``.

    Returns:
        At most k :class:`RankedEvidence`, best first (ties: higher relevance, then id).

    Raises:
        ValueError: no horizons, or two candidates share an id.
    """
    if not horizons:
        raise ValueError("at least one horizon is needed")
    if len({c.id for c in candidates}) != len(candidates):
        raise ValueError("candidate ids must be unique")
    scored = []
    for c in candidates:
        r = float(c.score or 0.0)
        per = {h: memory_score(r, *cells.get((c.source_family, event_type, h), (0.0, 0.0)), params) for h in horizons}
        scored.append((sum(per.values()) / len(per), r, c, per))
    scored.sort(key=lambda t: (-t[0], -t[1], t[2].id))
    top = scored[: params.top_k if k is None else k]
    return [RankedEvidence(c.id, c.source_family, i, r, s, per) for i, (s, r, c, per) in enumerate(top, start=1)]


# --------------------------------------------------------------------------- feedback


@dataclass(frozen=True)
class Feedback:
    """One anchor-horizon outcome, recorded at prediction time and applied once its horizon matured.

    Attributes:
        anchor_id: the anchor; ``event_type``: its type (Appendix A); ``horizon``: one of :data:`HORIZONS`.
        predicted: the reader's signal for the horizon (-1, 0, +1).
        label: the realized residual-impact label (-1, 0, +1), used only after ``matured_at``.
        matured_at: when the label becomes known (the horizon's last close), ISO UTC or aware datetime.
        cited_ids: the evidence ids the reader cited for this horizon (any, valid or not).
        retrieved: the context the reader got: chunk id -> source family (the top-k).
    """

    anchor_id: str
    event_type: str
    horizon: str
    predicted: int
    label: int
    matured_at: str | datetime
    cited_ids: Sequence[str]
    retrieved: Mapping[str, str]

    @property
    def valid_ids(self) -> list[str]:
        """Cited ids that are in the retrieved context, each once, in citation order."""
        return [i for n, i in enumerate(self.cited_ids) if i in self.retrieved and i not in self.cited_ids[:n]]

    @property
    def families(self) -> list[str]:
        """Distinct source families of the valid cited ids, sorted (empty: no update)."""
        return sorted({self.retrieved[i] for i in self.valid_ids})


@dataclass(frozen=True)
class MemoryControl:
    """How :meth:`SourceMemory.apply_matured` treats labels and event types (section 4.3).

    Attributes:
        kind: ``none`` (the method), ``shuffled_label`` or ``shuffled_event_type``.
        seed: the control's seed (one run per seed: the paper reports 5 shuffles).
        event_types: the event types permuted by ``shuffled_event_type`` (all the anchors' types, e.g.
            the Appendix A mapper's five).
    """

    kind: Literal["none", "shuffled_label", "shuffled_event_type"] = "none"
    seed: int = 0
    event_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("none", "shuffled_label", "shuffled_event_type"):
            raise ValueError(f"unknown memory control {self.kind!r}")
        if self.kind == "shuffled_event_type" and len(set(self.event_types)) < 2:
            raise ValueError("shuffled_event_type needs the list of (at least two) event types to permute")

    def permutation(self) -> dict[str, str]:
        """event type -> the event type whose cell its feedback updates (identity unless shuffled)."""
        types = sorted(set(self.event_types))
        if self.kind != "shuffled_event_type":
            return {t: t for t in types}
        shuffled = list(types)
        random.Random(f"finkg-event-types|{self.seed}").shuffle(shuffled)
        return dict(zip(types, shuffled))

    def draw_label(self, event_key: str, distribution: Mapping[int, float]) -> int:
        """The shuffled label of one feedback event: a draw from ``distribution`` (label -> probability)
        seeded by (seed, ``event_key`` = ``"<anchor id>|<horizon>"``), so the same event draws the same label
        under the same seed whatever the run id, order or batching."""
        rng = random.Random(f"finkg-label|{self.seed}|{event_key}")
        return rng.choices(list(LABELS), weights=[distribution[y] for y in LABELS])[0]


def class_weights(frequencies: Mapping[str, Mapping[int, float]]) -> dict[str, dict[int, float]]:
    """w(y, h) = 1 / (C * p_val(y | h)) with C = 3, from validation label frequencies per horizon.

    Args:
        frequencies: horizon -> {-1: p, 0: p, 1: p}, each p > 0, summing to 1 (within 1e-6); shares, not
            percentages.

    Raises:
        ValueError: a label missing, a frequency <= 0, or a horizon's frequencies not summing to 1.
    """
    out: dict[str, dict[int, float]] = {}
    for h, dist in frequencies.items():
        missing = [y for y in LABELS if y not in dist]
        if missing:
            raise ValueError(f"horizon {h}: no validation frequency for label(s) {missing}")
        if any(not dist[y] > 0 for y in LABELS):
            raise ValueError(f"horizon {h}: every label frequency must be > 0, got {dict(dist)}")
        total = sum(dist[y] for y in LABELS)
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"horizon {h}: label frequencies sum to {total}, not 1 (give shares, not %)")
        out[h] = {y: 1.0 / (N_CLASSES * dist[y]) for y in LABELS}
    return out


@dataclass
class ApplyStats:
    """What one :meth:`SourceMemory.apply_matured` call did.

    Attributes:
        applied: feedback events applied now (each counted once, ever).
        updated: applied events that moved at least one cell (had a valid citation).
        no_citation: applied events without a valid cited id (no update, by the paper's rule).
        cells_touched: (cell, event) credits written.
        positive, negative: total credit added to a and to b.
    """

    applied: int = 0
    updated: int = 0
    no_citation: int = 0
    cells_touched: int = 0
    positive: float = 0.0
    negative: float = 0.0


def read_cells(graph: Graph, run: str, event_type: str | None = None) -> list[dict[str, Any]]:
    """The cells of ``run`` (one event type, or all when None) as rows ``{family, event_type, horizon, positive,
    negative, updates}``, ordered by event type, horizon and family."""
    return graph.read(cypher.MEMORY_CELLS, {"run": run, "event_type": event_type})


@dataclass
class SourceMemory:
    """The source memory of one evaluation run in Neo4j.

    Args:
        graph: the connection; ``run``: the run id (part of every cell and feedback key).
        label_frequencies: validation label shares per horizon (:func:`class_weights`).
        params: equation 6's parameters; ``control``: the method or a shuffled control.
        writer: the batched writer (default: ``BatchWriter(graph)``).
    """

    graph: Graph
    run: str
    label_frequencies: Mapping[str, Mapping[int, float]]
    params: MemoryParams = field(default_factory=MemoryParams)
    control: MemoryControl = field(default_factory=MemoryControl)
    writer: BatchWriter | None = None

    def __post_init__(self) -> None:
        if not self.run or "|" in self.run:
            raise ValueError(f"run id must be non-empty and free of '|', got {self.run!r}")
        self.weights = class_weights(self.label_frequencies)
        self.writer = self.writer or BatchWriter(self.graph)
        self._permutation = self.control.permutation()

    def cell_id(self, family: str, event_type: str, horizon: str) -> str:
        """``"<run>|<family>|<event type>|<horizon>"``."""
        return f"{self.run}|{family}|{event_type}|{horizon}"

    def feedback_id(self, anchor_id: str, horizon: str) -> str:
        """``"<run>|<anchor id>|<horizon>"`` (one feedback event per anchor and horizon)."""
        return f"{self.run}|{anchor_id}|{horizon}"

    def record(self, feedback: Iterable[Feedback]) -> int:
        """Record feedback events as pending (nothing changes in the cells until they mature).

        Recording an event again replaces its pending record; an event already applied is left as it is.
        Returns the number of events recorded or replaced.

        Raises:
            ValueError: an unknown horizon (no validation frequencies for it) or a signal/label outside
                {-1, 0, +1}, naming the anchor.
        """
        rows = []
        for f in feedback:
            where = f"feedback {f.anchor_id}/{f.horizon}"
            if f.horizon not in self.weights:
                raise ValueError(f"{where}: horizon {f.horizon!r} has no validation label frequencies")
            for name, value in (("predicted", f.predicted), ("label", f.label)):
                if value not in LABELS:
                    raise ValueError(f"{where}: {name} must be -1, 0 or 1, got {value!r}")
            if self.control.kind == "shuffled_event_type" and f.event_type not in self._permutation:
                raise ValueError(f"{where}: event type {f.event_type!r} is not among the control's event types")
            rows.append(
                {
                    "id": self.feedback_id(f.anchor_id, f.horizon),
                    "props": {
                        "run": self.run,
                        "anchor_id": f.anchor_id,
                        "event_type": f.event_type,
                        "horizon": f.horizon,
                        "predicted": f.predicted,
                        "label": f.label,
                        "matured_at": utc_text(f.matured_at, f"{where}: matured_at"),
                        "cited_ids": list(f.cited_ids),
                        "valid_ids": f.valid_ids,
                        "families": f.families,
                        "retrieved": len(f.retrieved),
                    },
                }
            )
        assert self.writer is not None  # set in __post_init__
        return self.writer.run_batches(cypher.RECORD_MEMORY_FEEDBACK, rows)

    def _update(self, fb: Mapping[str, Any]) -> dict[str, Any]:
        """The cell credits of one matured feedback record, with the control applied."""
        horizon = fb["horizon"]
        label = int(fb["label"])
        event_type = fb["event_type"]
        if self.control.kind == "shuffled_label":
            label = self.control.draw_label(f"{fb['anchor_id']}|{horizon}", self.label_frequencies[horizon])
        elif self.control.kind == "shuffled_event_type":
            event_type = self._permutation[event_type]
        correct = int(fb["predicted"]) == label
        weight = self.weights[horizon][label]
        families = list(fb.get("families") or [])
        credits = [
            {
                "cell": self.cell_id(fam, event_type, horizon),
                "family": fam,
                "positive": weight / len(families) if correct else 0.0,
                "negative": 0.0 if correct else weight / len(families),
            }
            for fam in families
        ]
        return {
            "id": fb["id"],
            "run": self.run,
            "horizon": horizon,
            "event_type": event_type,
            "label": label,
            "correct": correct,
            "weight": weight,
            "credits": credits,
            "outcome": ("correct" if correct else "incorrect") if families else "no_citation",
        }

    def apply_matured(self, as_of: str | datetime) -> ApplyStats:
        """Apply every recorded, not yet applied feedback event whose horizon matured by ``as_of``
        (``matured_at <= as_of``); later ones stay pending. Batched: one transaction per batch of events,
        marking each event applied in the transaction that adds its credit (idempotent).

        Raises:
            EvidenceInputError: ``as_of`` is not an aware time.
        """
        cutoff = utc_text(as_of, "apply_matured: as_of")
        pending = [
            r["feedback"] for r in self.graph.read(cypher.PENDING_MEMORY_FEEDBACK, {"run": self.run, "as_of": cutoff})
        ]
        rows = [self._update(fb) for fb in pending]
        stats = ApplyStats()
        if not rows:
            return stats
        assert self.writer is not None  # set in __post_init__
        stats.cells_touched = self.writer.run_batches(cypher.APPLY_MEMORY_FEEDBACK, rows, {"as_of": cutoff})
        stats.applied = len(rows)
        stats.no_citation = sum(r["outcome"] == "no_citation" for r in rows)
        stats.updated = stats.applied - stats.no_citation
        stats.positive = sum(c["positive"] for r in rows for c in r["credits"])
        stats.negative = sum(c["negative"] for r in rows for c in r["credits"])
        return stats

    def cells(self, event_type: str | None = None) -> dict[tuple[str, str, str], tuple[float, float]]:
        """(family, event type, horizon) -> (positive, negative) of this run (one event type or all)."""
        rows = read_cells(self.graph, self.run, event_type)
        return {
            (r["family"], r["event_type"], r["horizon"]): (float(r["positive"]), float(r["negative"])) for r in rows
        }

    def rank(
        self, candidates: Sequence[Scored], event_type: str, horizons: Sequence[str] = HORIZONS, k: int | None = None
    ) -> list[RankedEvidence]:
        """:func:`rank_evidence` with this run's cells for ``event_type`` as they are now (apply the matured
        feedback first)."""
        return rank_evidence(candidates, self.cells(event_type), event_type, self.params, horizons, k)

    def cells_as_of(
        self, as_of: AsOf | None, event_type: str | None = None
    ) -> dict[tuple[str, str, str], tuple[float, float]]:
        """:meth:`cells` as they stood at ``as_of``: only the credit of feedback whose horizon matured by then
        (:data:`kg.cypher.MEMORY_CELLS_AS_OF`), so a label realized after ``as_of`` never moves a ranking for it.

        Raises:
            AsOfRequired: ``as_of`` is None.
        """
        rows = self.graph.read(
            cypher.MEMORY_CELLS_AS_OF, {"run": self.run, "event_type": event_type, "as_of": as_of_cutoff(as_of)}
        )
        return {
            (r["family"], r["event_type"], r["horizon"]): (float(r["positive"]), float(r["negative"])) for r in rows
        }

    def counts(self) -> dict[str, int]:
        """``{"recorded", "applied", "no_citation"}`` feedback events of this run."""
        (row,) = self.graph.read(cypher.MEMORY_FEEDBACK_COUNTS, {"run": self.run})
        return {k: int(v or 0) for k, v in row.items()}

    def reset(self) -> None:
        """Delete this run's cells and feedback (start the prequential protocol again at zero)."""
        self.graph.write(cypher.DELETE_MEMORY_RUN, {"run": self.run})


# --------------------------------------------------------------------------- the reranker under the retrieval contract


@dataclass(frozen=True)
class _PoolItem:
    """An inner retriever's item as :func:`rank_evidence` sees it (score: relevance min-max normalized in the pool)."""

    id: str
    source_family: str
    score: float | None


class MemoryReranker:
    """The source memory as a reranker of another retriever (:class:`retrieval.contract.Retriever`).

    ``search`` asks ``inner`` for a pool of ``pool_size`` items as of ``as_of`` (the inner retriever removes
    later items before it scores), drops any item the inner one returned that was not available then (undated
    included), min-max normalizes the inner scores within the pool (the static relevance r of equation 6) and
    ranks by equation 6 averaged over ``horizons`` with the memory's cells as of ``as_of``
    (:meth:`SourceMemory.cells_as_of`: feedback matured later does not count).

    Args:
        inner: the retriever whose items are reranked (e.g. :class:`retrieval.text.hybrid.HybridIndex`).
        memory: the run's source memory. event_type: the anchor's event type (picks the cells).
        horizons: averaged over. pool_size: K, the pool asked of ``inner`` (seed 000: 20).
    """

    def __init__(
        self,
        inner: Retriever,
        memory: SourceMemory,
        event_type: str,
        horizons: Sequence[str] = HORIZONS,
        pool_size: int = 20,
    ) -> None:
        if pool_size < 1:
            raise ValueError(f"pool_size must be >= 1, got {pool_size}")
        self.inner, self.memory, self.event_type = inner, memory, event_type
        self.horizons, self.pool_size = tuple(horizons), pool_size

    def search(
        self, query: str, *, as_of: AsOf | None, k: int | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[Evidence]:
        """The top ``k`` (default: the memory's ``top_k``) of the inner pool, reranked by the memory as of ``as_of``.

        Raises:
            AsOfRequired: ``as_of`` is None.
        """
        cutoff = as_of_cutoff(as_of)
        pool = [
            e
            for e in self.inner.search(query, as_of=cutoff, k=self.pool_size, filters=filters)
            if available(e.available_at, cutoff, "drop")
        ]
        if not pool:
            return []
        scores = [e.score for e in pool]
        lo, hi = min(scores), max(scores)
        relevance = [(x - lo) / (hi - lo) if hi > lo else 0.0 for x in scores]
        by_id = {e.id: e for e in pool}
        items = [_PoolItem(e.id, e.source_family or "", r) for e, r in zip(pool, relevance)]
        cells = self.memory.cells_as_of(cutoff, self.event_type)
        ranked = rank_evidence(items, cells, self.event_type, self.memory.params, self.horizons, k)
        return [
            replace(
                by_id[r.id],
                score=r.score,
                metadata={
                    **by_id[r.id].metadata,
                    "reranker": "source-memory",
                    "run": self.memory.run,
                    "event_type": self.event_type,
                    "relevance": r.relevance,
                    "inner_score": by_id[r.id].score,
                    "by_horizon": r.by_horizon,
                    "rank": r.rank,
                },
            )
            for r in ranked
        ]
