"""The one progress interface every long job reports through.

A job that has stages calls ``progress(stage, total)`` once per stage and gets back an ``advance``
function, which it calls with the number of items just finished (and, for LLM stages, the tokens
they cost). The command line implements it with a rich progress bar on a terminal and with
periodic log lines (counts, rate, ETA) when its output is a file or a CI log
(:func:`finkg.output.stage_progress`); a notebook user passes nothing and gets no output.

It lives in ``kg``, the lowest layer, so every room (ingest, retrieval, generation) can accept it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

Tick = Callable[[int], None]
"""An item-level progress callback: called with the number of items just finished. Every :class:`Advance` is
a Tick; a function that only counts (an embedder, a batch writer) takes a Tick."""


class Advance(Protocol):
    """Advance a stage by ``n`` finished items; ``tokens`` (LLM stages) adds to the stage's token count."""

    def __call__(self, n: int, /, tokens: int | None = None) -> None: ...


class StageProgress(Protocol):
    """Open a stage named ``stage`` with ``total`` items (0: unknown) and return its :class:`Advance`."""

    def __call__(self, stage: str, total: int, /) -> Advance: ...


def _ignore(n: int, /, tokens: int | None = None) -> None:
    return None


def silent(stage: str, total: int, /) -> Advance:
    """A :class:`StageProgress` that reports nothing (the default for API callers)."""
    return _ignore


def stage(progress: StageProgress | None, name: str, total: int) -> Advance:
    """``progress(name, total)``, or a no-op advance when ``progress`` is None."""
    return (progress or silent)(name, total)
