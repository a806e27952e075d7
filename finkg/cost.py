"""What a long LLM batch will cost, said before it starts: its size and the time the configured model's measured
rate gives it.

The commands that run the LLM over many items (``finkg report``, ``finkg eval tatqa`` and ``agent`` and
``reports`` and ``feedback``, ``finkg extract``, ``finkg experience learn``, ``finkg memo`` with its
``structured-llm`` system) hand their API function a :class:`BatchCost`. The
function calls :meth:`BatchCost.start` once it knows how many items are still to do, before it loads a model
or writes anything, and :meth:`BatchCost.finish` when the batch has ended, which records the real seconds per
item for the command and model in ``[batch] rates_file`` (a small JSON file in finkg's cache folder, on this
machine). The estimate reads that record; when none was made yet it reads a benchmark figure of
``bench/results`` measured with the same model, and says which; else it says that no rate was measured for the
model yet. Above ``[batch] confirm_above_hours`` (or, with no rate, ``confirm_above_items`` items) the
estimate asks for confirmation; the command line's ``confirm`` hook asks on a terminal and refuses elsewhere
unless ``--yes`` was given (:func:`finkg.cli._common.batch_cost`).

Example line::

    finkg eval tatqa: 100,000 questions, about 1,058 h at 38.1 s/question (measured 2026-12-01 for
    llama-cpp:SmolLM2-135M-Instruct-Q8_0.gguf)
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from finkg.config import Settings

log = logging.getLogger(__name__)

#: Benchmark figures (seconds per item) a command's estimate may use before a batch of it was measured here:
#: command -> (file in bench/results, figure). One applies when its parameters name the configured model file.
BENCH_RATES: dict[str, tuple[str, str]] = {
    "finkg eval tatqa": ("agent-latency.json", "one_wall_s_per_answer"),
    "finkg eval agent": ("agent-latency.json", "one_wall_s_per_answer"),
    "finkg experience learn": ("agent-latency.json", "one_wall_s_per_answer"),
}

#: Below this share of fresh LLM calls (the rest answered by the disk cache) a batch's rate is not recorded: a
#: rerun over a warm cache measures the cache, not the model.
FRESH_SHARE = 0.9


def model_label(settings: Settings, adapter: Path | None = None) -> str:
    """The configured LLM as the backends name it (``llama-cpp:<file>.gguf``, ``openai:<url>:<model>``, with
    ``+<adapter>`` for a LoRA adapter): the key of its measured rates. Reads the settings only (no model)."""
    llm = settings.llm
    kind = llm.backend or "no-llm"
    if kind == "openai":
        name = f"openai:{llm.base_url}:{llm.model}"
    elif kind == "transformers" and llm.model_path is not None:
        name = f"transformers:{Path(llm.model_path).name}" + (f"/{llm.gguf_file}" if llm.gguf_file else "")
    else:
        name = f"{kind}:{Path(llm.model_path).name}" if llm.model_path is not None else kind
    adapter = adapter or llm.adapter_path
    return name + (f"+{Path(adapter).name}" if adapter else "")


@dataclass(frozen=True)
class Rate:
    """Seconds per item of a command with a model, and where the figure comes from (``source``, said in the
    estimate: ``measured 2026-12-01 for <model>`` or the benchmark file and its date)."""

    seconds: float
    source: str


def _read_rates(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _bench_rate(command: str, model: str) -> Rate | None:
    """The benchmark figure of ``command`` (:data:`BENCH_RATES`) when its run named ``model``'s file."""
    if command not in BENCH_RATES:
        return None
    from finkg.eval.results import RESULTS_DIR

    name, figure = BENCH_RATES[command]
    record = _read_rates(RESULTS_DIR / name)
    seconds = (record.get("figures") or {}).get(figure)
    stem = model.partition(":")[2].removesuffix(".gguf").lower()
    if not isinstance(seconds, int | float) or seconds <= 0 or not stem:
        return None
    if stem not in json.dumps(record.get("parameters") or {}).lower():
        return None
    day = str(record.get("date", ""))[:10]
    return Rate(float(seconds), f"from bench/results/{name}, {day}; not yet measured on this machine")


def measured_rate(settings: Settings, command: str, model: str) -> Rate | None:
    """The seconds per item last measured for ``command`` with ``model`` on this machine (``[batch] rates_file``),
    else a benchmark figure for that model (:data:`BENCH_RATES`), else None."""
    got = _read_rates(settings.batch.rates_file).get(command, {}).get(model)
    if isinstance(got, dict) and isinstance(got.get("seconds_per_item"), int | float) and got["seconds_per_item"] > 0:
        return Rate(float(got["seconds_per_item"]), f"measured {got.get('date', '?')} for {model}")
    return _bench_rate(command, model)


def record_rate(settings: Settings, command: str, model: str, items: int, seconds: float) -> None:
    """Keep ``seconds / items`` as the rate of ``command`` with ``model`` (replacing the earlier one) in
    ``[batch] rates_file``, written whole. A file that cannot be written is logged, never an error: the batch
    is done."""
    from kg import atomic

    path = settings.batch.rates_file
    rates = _read_rates(path)
    per_command = rates.setdefault(command, {})
    if not isinstance(per_command, dict):
        per_command = rates[command] = {}
    per_command[model] = {
        "seconds_per_item": round(seconds / items, 3),
        "items": items,
        "seconds": round(seconds, 1),
        "date": datetime.now(UTC).date().isoformat(),
    }
    try:
        atomic.write_text(path, json.dumps(rates, indent=1, sort_keys=True) + "\n")
    except OSError as exc:
        log.warning("could not record the batch rate in %s: %s", path, exc)


def duration(seconds: float) -> str:
    """``40 s``, ``12 min``, ``2.5 h``, ``1,058 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    hours = seconds / 3600
    return f"{hours:.1f} h" if hours < 10 else f"{hours:,.0f} h"


@dataclass(frozen=True)
class Estimate:
    """A batch's size and expected time.

    Attributes:
        command: e.g. ``finkg eval tatqa``. items: still to do. unit: what an item is (``question``, ``answer``,
        ``chunk``). detail: how the items were counted, said after the count (may be ""). model: the
        :func:`model_label`. rate: None when none is known. ask: why to ask before starting (None: no need).
    """

    command: str
    items: int
    unit: str
    detail: str
    model: str
    rate: Rate | None
    ask: str | None

    @property
    def seconds(self) -> float | None:
        """Expected wall seconds (None without a rate)."""
        return None if self.rate is None else self.items * self.rate.seconds

    def line(self) -> str:
        """The one line said before the batch starts."""
        size = f"{self.items:,} {self.unit}{'' if self.items == 1 else 's'}" + (
            f" ({self.detail})" if self.detail else ""
        )
        if self.rate is None or self.seconds is None:
            return f"{self.command}: {size}; no rate measured for {self.model} yet (one is recorded when a batch ends)"
        return (
            f"{self.command}: {size}, about {duration(self.seconds)} at {self.rate.seconds:.1f} s/{self.unit} "
            f"({self.rate.source})"
        )


def estimate(settings: Settings, command: str, items: int, unit: str, *, detail: str = "", model: str) -> Estimate:
    """The :class:`Estimate` of ``items`` items of ``command`` with ``model`` under the ``[batch]`` limits."""
    rate = measured_rate(settings, command, model)
    limits = settings.batch
    ask = None
    if rate is not None and items * rate.seconds > limits.confirm_above_hours * 3600:
        ask = f"estimated above [batch] confirm_above_hours = {limits.confirm_above_hours:g}"
    elif rate is None and items > limits.confirm_above_items:
        ask = f"no measured rate and more than [batch] confirm_above_items = {limits.confirm_above_items:,} {unit}s"
    return Estimate(command, items, unit, detail, model, rate, ask)


class BatchCost:
    """One batch's cost: said (and confirmed) before it starts, its real rate recorded when it ends.

    Args:
        command: the command line's name of the batch (``finkg eval tatqa``): the key of its rates.
        unit: what one item is (``question``, ``answer``, ``chunk``).
        confirm: called with the estimate before the batch starts (when there is anything to do); it may raise
            to stop the batch (the command line's asks, or refuses with exit 2). None: nothing said.
    """

    def __init__(self, command: str, unit: str, confirm: Callable[[Estimate], None] | None = None) -> None:
        self.command, self.unit, self.confirm = command, unit, confirm
        self.estimate: Estimate | None = None
        self._settings: Settings | None = None
        self._t0 = 0.0

    def start(
        self, settings: Settings, items: int, *, detail: str = "", adapter: Path | None = None, unit: str | None = None
    ) -> Estimate:
        """The batch of ``items`` items (still to do) is about to start: estimate it and pass it to ``confirm``
        (which may raise to stop it). Call before loading any model or writing anything."""
        self._settings = settings
        self.unit = unit or self.unit
        self.estimate = estimate(
            settings, self.command, items, self.unit, detail=detail, model=model_label(settings, adapter)
        )
        if items > 0 and self.confirm is not None:
            self.confirm(self.estimate)
        self._t0 = time.perf_counter()
        return self.estimate

    def finish(
        self, items: int, *, seconds: float | None = None, calls: int | None = None, cache_hits: int = 0
    ) -> None:
        """The batch ended having done ``items`` items in ``seconds`` (default: since :meth:`start`): record the
        rate, unless nothing was done or fewer than :data:`FRESH_SHARE` of the LLM requests (``calls`` made,
        ``cache_hits`` answered by the cache; None: not counted) reached the model."""
        if self._settings is None or self.estimate is None or items <= 0:
            return
        if calls is not None and (calls == 0 or calls < FRESH_SHARE * (calls + cache_hits)):
            return
        spent = time.perf_counter() - self._t0 if seconds is None else seconds
        record_rate(self._settings, self.command, self.estimate.model, items, spent)
