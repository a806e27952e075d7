"""The analyst agent's deterministic arithmetic tools: ``calculate``, ``compare``, ``date_diff``, ``scale``.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4, "Numerical Reasoning Engine" (arithmetic
decoupled from generation and executed deterministically). The seed runs Python code in a persistent
namespace; finkg never runs model-written code: ``calculate`` evaluates one arithmetic expression over named
operands with simpleeval (a restricted AST evaluator; no ``eval``), and every bad input comes back as a
:class:`~generation.agent.results.ToolResult` with an error the LLM can read.
"""

from __future__ import annotations

import ast
import datetime as dt
import math
import re
from typing import Any

import simpleeval

from generation.agent.results import ToolError, ToolResult, finite, tool_call
from generation.verify.numbers import parse_number

MAX_EXPRESSION_CHARS = 500
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FUNCTIONS = {"abs": abs, "min": min, "max": max, "round": round}
_OPERATORS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: simpleeval.safe_power,
    ast.USub: lambda a: -a,
    ast.UAdd: lambda a: +a,
}
_NODES = (ast.Expr, ast.Name, ast.UnaryOp, ast.BinOp, ast.Call, ast.Constant)


def calculate(expression: str, operands: dict[str, float]) -> ToolResult:
    """Evaluate an arithmetic ``expression`` over named ``operands``.

    Args:
        expression: e.g. ``"(rev_2019 - rev_2018) / rev_2018 * 100"``; numbers, operand names, ``+ - * / // %
            **``, parentheses and ``abs``, ``min``, ``max``, ``round``; at most 500 characters.
        operands: name -> finite number (identifiers only).

    Returns:
        ``ToolResult(value=float, numbers=(value,), detail={"expression", "operands"})``; an error result (never
        an exception) for an empty, too long or malformed expression, an operand name or value that is not
        valid, a name the operands do not define, an operator or function not allowed, division by zero,
        overflow, a non-finite or non-numeric result.
    """
    args = {"expression": expression, "operands": operands}

    def body() -> ToolResult:
        if not isinstance(expression, str) or not expression.strip():
            raise ToolError("the expression is empty")
        if len(expression) > MAX_EXPRESSION_CHARS:
            raise ToolError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
        if not isinstance(operands, dict):
            raise ToolError(f"operands must be an object of name -> number, got {type(operands).__name__}")
        names: dict[str, float] = {}
        for name, value in operands.items():
            if not isinstance(name, str) or not _NAME.match(name):
                raise ToolError(f"operand name {name!r} is not an identifier (letters, digits, _)")
            names[name] = finite(value, f"operand {name!r}")
        evaluator = simpleeval.SimpleEval(operators=_OPERATORS, functions=_FUNCTIONS, names=names)
        # arithmetic only: no attributes, subscripts, comparisons, strings, assignments or comprehensions
        evaluator.nodes = {k: v for k, v in (evaluator.nodes or {}).items() if k in _NODES}
        try:
            result = evaluator.eval(expression.strip())
        except ZeroDivisionError:
            raise ToolError(f"division by zero in {expression!r}") from None
        except OverflowError:
            raise ToolError(f"overflow: the result of {expression!r} is too large") from None
        except simpleeval.NameNotDefined as exc:
            raise ToolError(
                f"unknown name {exc.name!r}: define it in operands ({', '.join(names) or 'none'})"
            ) from None
        except simpleeval.NumberTooHigh:
            raise ToolError(f"overflow: a power in {expression!r} is too large") from None
        except (simpleeval.InvalidExpression, SyntaxError, TypeError, ValueError) as exc:
            raise ToolError(f"malformed expression {expression!r}: {exc}") from None
        value = finite(result, f"the result of {expression!r}")
        return ToolResult("calculate", args, value, (value,), {"expression": expression, "operands": names})

    return tool_call("calculate", args, body)


_DERIVATION_NUMBER = re.compile(r"\$?\s?(\d[\d,]*(?:\.\d+)?|\.\d+)\s?%?")


def derivation_program(derivation: str) -> tuple[str, dict[str, float]] | None:
    """A data set's derivation (TAT-QA's ``derivation`` field) as a ``calculate`` expression over named operands, or
    None when it is not pure arithmetic (``"(44.1-56.7)/56.7"`` -> ``("(n1-n2)/n3", {"n1": 44.1, "n2": 56.7,
    "n3": 56.7})``; ``$``, ``%`` and thousands commas dropped, ``[ ]`` read as parentheses, ``×`` and ``÷`` as ``*``
    and ``/``)."""
    text = derivation.strip().replace("[", "(").replace("]", ")").replace("×", "*").replace("÷", "/")
    operands: dict[str, float] = {}

    def name(m: re.Match[str]) -> str:
        key = f"n{len(operands) + 1}"
        operands[key] = float(m.group(1).replace(",", ""))
        return key

    expression = _DERIVATION_NUMBER.sub(name, text)
    if not operands or not re.fullmatch(r"[n0-9+\-*/(). ]+", expression):
        return None
    return " ".join(expression.split()), operands


def reproduces(value: float, gold: float) -> bool:
    """Whether a computed ``value`` rounded to two decimals is the ``gold`` answer (within 0.011 or 0.1 %)."""
    return abs(round(value, 2) - gold) <= max(0.011, 1e-3 * abs(gold))


def checked_program(derivation: str, gold: float) -> tuple[str, dict[str, float]] | None:
    """:func:`derivation_program` checked against the ``gold`` answer: the expression, or the expression times 100
    (a percentage the derivation leaves as a ratio), whose :func:`calculate` result reproduces ``gold``
    (:func:`reproduces`); None when neither does or the derivation is not arithmetic."""
    found = derivation_program(derivation)
    if found is None:
        return None
    expression, operands = found
    for candidate in (expression, f"({expression}) * 100"):
        result = calculate(candidate, operands)
        if result.ok and result.value is not None and reproduces(float(result.value), float(gold)):
            return candidate, operands
    return None


def compare(a: float, b: float) -> ToolResult:
    """The change from ``a`` (the earlier or reference value) to ``b``, and its direction word.

    Returns:
        ``value``: ``"increased"`` (b > a), ``"decreased"`` (b < a) or ``"unchanged"``; ``detail``: ``change``
        (b - a, in the inputs' units), ``percent_change`` ((b - a) / |a| * 100; None when a is 0); ``numbers``:
        the change and the percent change. An error result when either input is not a finite number.
    """
    args = {"a": a, "b": b}

    def body() -> ToolResult:
        x, y = finite(a, "a"), finite(b, "b")
        change = y - x
        direction = "increased" if change > 0 else "decreased" if change < 0 else "unchanged"
        pct = change / abs(x) * 100 if x != 0 else None
        numbers = (change,) if pct is None else (change, pct)
        return ToolResult("compare", args, direction, numbers, {"change": change, "percent_change": pct})

    return tool_call("compare", args, body)


def parse_date(text: str) -> dt.date:
    """A date from ``2009-06-30``, ``20090630``, ``June 30, 2009``, ``30 June 2009`` or ``06/30/2009``.

    Raises:
        ToolError: anything else, or an impossible date.
    """
    s = str(text).strip()
    if re.fullmatch(r"\d{8}", s):
        try:
            return dt.date(int(s[:4]), int(s[4:6]), int(s[6:]))
        except ValueError:
            raise ToolError(f"{text!r} is not a valid date") from None
    m = parse_number(s)
    if m is None or m.iso_date is None:
        raise ToolError(f"{text!r} is not a date (use YYYY-MM-DD)")
    return dt.date.fromisoformat(m.iso_date)


def date_diff(start: str, end: str, unit: str = "days") -> ToolResult:
    """The time from ``start`` to ``end`` (negative when ``end`` is earlier).

    Args:
        start, end: dates (see :func:`parse_date`). unit: ``days``; ``months`` (whole calendar months: a month
            counts once its day of month, or the end of the month, is reached: 2008-12-31 to 2009-06-30 is 6); ``years`` (days / 365.25).

    Returns:
        ``value``: the difference in ``unit`` (days and months integers, years a float); ``detail``: both ISO
        dates and ``days``. An error result for a date that cannot be read or an unknown unit.
    """
    args = {"start": start, "end": end, "unit": unit}

    def body() -> ToolResult:
        d0, d1 = parse_date(start), parse_date(end)
        days = (d1 - d0).days
        if unit == "days":
            value: float = days
        elif unit == "months":
            sign = 1 if d1 >= d0 else -1
            lo, hi = (d0, d1) if sign > 0 else (d1, d0)
            month_end = (hi + dt.timedelta(days=1)).day == 1
            months = (hi.year - lo.year) * 12 + hi.month - lo.month - (1 if hi.day < lo.day and not month_end else 0)
            value = sign * months
        elif unit == "years":
            value = days / 365.25
        else:
            raise ToolError(f"unknown unit {unit!r}: use days, months or years")
        return ToolResult(
            "date_diff", args, value, (float(value),), {"start": d0.isoformat(), "end": d1.isoformat(), "days": days}
        )

    return tool_call("date_diff", args, body)


SCALES: dict[str, float] = {
    "": 1.0,
    "unit": 1.0,
    "units": 1.0,
    "one": 1.0,
    "thousand": 1e3,
    "thousands": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "billion": 1e9,
    "billions": 1e9,
}
"""Money and count scales: name -> multiplier to base units."""
RATES: dict[str, float] = {"percent": 100.0, "%": 100.0, "fraction": 1.0, "decimal": 1.0}
"""Rate scales: name -> how many of it make one (``0.125`` fraction = ``12.5`` percent)."""


def scale(value: float, from_scale: str, to_scale: str) -> ToolResult:
    """``value`` written in ``from_scale``, rewritten in ``to_scale``.

    Args:
        value: a finite number. from_scale, to_scale: both amount scales (``""``/``units``, ``thousand(s)``,
            ``million(s)``, ``billion(s)``) or both rate scales (``percent``/``%``, ``fraction``/``decimal``);
            case-insensitive.

    Returns:
        ``value``: the converted number (``scale(1452.4, "million", "billion")`` is 1.4524); an error result
        for an unknown scale or an amount converted to a rate (or back).
    """
    args = {"value": value, "from": from_scale, "to": to_scale}

    def body() -> ToolResult:
        x = finite(value, "value")
        f, t = str(from_scale).strip().lower(), str(to_scale).strip().lower()
        if f in SCALES and t in SCALES:
            out = x * SCALES[f] / SCALES[t]
        elif f in RATES and t in RATES:
            out = x / RATES[f] * RATES[t]
        else:
            known = ", ".join(k for k in [*SCALES, *RATES] if k)
            if (f in SCALES or f in RATES) and (t in SCALES or t in RATES):
                raise ToolError(f"cannot convert {from_scale!r} to {to_scale!r}: an amount is not a rate")
            raise ToolError(
                f"unknown scale {from_scale if f not in SCALES and f not in RATES else to_scale!r}: use {known}"
            )
        if not math.isfinite(out):
            raise ToolError("overflow: the converted value is too large")
        return ToolResult("scale", args, out, (out,), {"from": f, "to": t})

    return tool_call("scale", args, body)


def _schema(properties: dict[str, Any], required: list[str], description: str) -> dict[str, Any]:
    return {"description": description, "type": "object", "properties": properties, "required": required}


CALCULATE_SCHEMA = _schema(
    {
        "expression": {"type": "string", "description": "arithmetic over operand names, e.g. (a - b) / b * 100"},
        "operands": {"type": "object", "description": "operand name -> number taken from the table or facts"},
    },
    ["expression", "operands"],
    "Evaluate one arithmetic expression over named operands (+ - * / // % **, abs, min, max, round).",
)
COMPARE_SCHEMA = _schema(
    {"a": {"type": "number", "description": "earlier or reference value"}, "b": {"type": "number"}},
    ["a", "b"],
    "Direction (increased/decreased/unchanged), change b - a and percent change from a to b.",
)
DATE_DIFF_SCHEMA = _schema(
    {
        "start": {"type": "string", "description": "YYYY-MM-DD"},
        "end": {"type": "string", "description": "YYYY-MM-DD"},
        "unit": {"type": "string", "enum": ["days", "months", "years"]},
    },
    ["start", "end"],
    "Time from start to end in days, whole months or years.",
)
SCALE_SCHEMA = _schema(
    {
        "value": {"type": "number"},
        "from": {"type": "string", "description": "units, thousand, million, billion, percent or fraction"},
        "to": {"type": "string", "description": "units, thousand, million, billion, percent or fraction"},
    },
    ["value", "from", "to"],
    "Rewrite a number from one scale to another (million -> billion, fraction -> percent).",
)
