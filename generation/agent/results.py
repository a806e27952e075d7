"""What every analyst-agent tool returns: a :class:`ToolResult`, a value or an error the agent can read.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 ("Financial Tools": a deterministic execution
layer; every numerical claim anchored to a tool's captured output). A tool never raises for input the LLM
chose badly (an unknown name, a division by zero, a company that is not in the graph): it returns a result
whose ``error`` says what went wrong, and that text goes back to the LLM as an observation. Failures of the
machinery itself (Neo4j unavailable) still raise their :mod:`kg.errors` family.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kg.errors import GenerationError


class ToolError(GenerationError):
    """A tool cannot do what it was asked (bad expression, unknown row, fact not in the graph).

    Raised inside a tool and turned into ``ToolResult(error=...)`` by :func:`tool_call`; the message is what
    the LLM reads, so it names the input at fault and what would work instead.
    """


@dataclass(frozen=True)
class ToolResult:
    """One tool call's outcome.

    Attributes:
        tool: the tool's name (``calculate``, ``fact_lookup``...). args: the arguments it was called with.
        value: the main output: a number (``calculate``, ``ratio``...), a string (``compare``'s direction), a
            list (``table_column``); None when the call failed.
        numbers: every number the tool produced or returned (the value and, e.g., a ratio's components, a
            comparison's change and percent change), in base units: what the answer gate may trace to this
            call.
        detail: the rest of the output, JSON-able (a fact's key, filing and date; a ratio's derivation).
        error: None on success; else the message for the LLM.
    """

    tool: str
    args: dict[str, Any]
    value: Any = None
    numbers: tuple[float, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the call succeeded."""
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        """The result as a JSON-able dict (what a trajectory records)."""
        return {
            "tool": self.tool,
            "args": self.args,
            "value": self.value,
            "numbers": list(self.numbers),
            "detail": self.detail,
            "error": self.error,
        }

    def observation(self) -> str:
        """The result as the LLM reads it: ``{"value": ..., ...detail}`` or ``{"error": "..."}`` (JSON text)."""
        if self.error is not None:
            return json.dumps({"tool": self.tool, "error": self.error})
        return json.dumps({"tool": self.tool, "value": self.value, **self.detail}, default=str)


def finite(value: float, what: str) -> float:
    """``value`` as a float when it is a finite number (not a bool); else :class:`ToolError` naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"{what} must be a number, got {value!r}")
    try:
        x = float(value)
    except OverflowError:
        raise ToolError(f"{what} is too large to be a float") from None
    if not math.isfinite(x):
        raise ToolError(f"{what} is not finite ({x})")
    return x


def tool_call(tool: str, args: dict[str, Any], body: Callable[[], ToolResult]) -> ToolResult:
    """Run ``body`` (a tool's work); a :class:`ToolError` it raises becomes ``ToolResult(tool, args, error=...)``."""
    try:
        return body()
    except ToolError as exc:
        return ToolResult(tool, args, error=str(exc))
