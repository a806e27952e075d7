"""Every measured figure in the prose of README.md and the docs pages comes from a results file.

``python bench/figures.py --check`` scans README.md and ``docs/**/*.md`` outside the tables that
``bench/tables.py`` generates (``<!-- table:NAME -->`` ... ``<!-- /table:NAME -->``), outside fenced code
blocks, inline code, HTML comments and link targets, for measured figures: a number with a unit of
measurement after it (``ms``, ``s``, ``min``, ``h``, ``%``, ``GB``/``MB``/``GiB``/..., ``x`` or ``×`` for a
ratio, ``EM``, ``F1``, ``points``, ``tokens/s`` and any other ``.../s`` rate) or a metric before it (``EM 41.3``,
``F1 of 52.1``, ``p50 25.6``). Each figure must be equal, within its printed rounding, to some number in some
``bench/results/*.json`` (any number anywhere in the file, in the unit printed or converted: a fraction as a
percentage, seconds as milliseconds or minutes, bytes as GiB, ...), or be allowed in ``bench/figures-allow.toml``:
numbers that are not measurements (defaults, limits, targets, sizes of data sets), each with its reason. A figure
typed into prose without a results file, or contradicting its results file, fails; so does an allow-list entry that
no longer matches any figure (the list stays short and current).

    python bench/figures.py --check                        # README.md and docs/**/*.md; exit 1 on a figure
    python bench/figures.py --check PAGE.md ... --results-dir DIR --allow FILE

Without ``--check`` it prints every figure found and where it matched, for reading. Exit 2: a file that cannot be
read, a results file that is not JSON, an allow-list that is not valid.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from tables import display_name, targets  # noqa: E402  (the pages whose tables are generated are the pages checked)

RESULTS = ROOT / "bench" / "results"
ALLOW = ROOT / "bench" / "figures-allow.toml"

# the generated tables (bench/tables.py's markers): their figures are checked by `bench/tables.py --check`
BLOCK = re.compile(r"<!-- table:(?P<name>[\w.-]+) -->\n.*?<!-- /table:(?P=name) -->", re.S)
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.S | re.M)
COMMENT = re.compile(r"<!--.*?-->", re.S)
CODE = re.compile(r"(`+).+?\1", re.S)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
# the results files a page names (its generated tables name theirs: "_From `bench/results/NAME.json`...")
CITED = re.compile(r"bench/results/([\w.@+-]+\.jsonl?)\b")

NUMBER = r"(?P<num>[+\-−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[+\-−]?\d+(?:\.\d+)?)"
# a unit after the number, and its kind: the kind chooses the results fields a figure may come from
UNITS = {
    **dict.fromkeys(("ms", "milliseconds"), "ms"),
    **dict.fromkeys(("s", "sec", "seconds"), "s"),
    **dict.fromkeys(("min", "minute", "minutes"), "min"),
    **dict.fromkeys(("h", "hour", "hours"), "h"),
    **dict.fromkeys(("%", "percent"), "%"),
    **dict.fromkeys(("x", "×"), "ratio"),
    **dict.fromkeys(("EM", "F1", "points", "point", "pp"), "score"),
}
# sizes, in bytes per unit: a size is compared in bytes, the printed unit read as decimal or binary
SIZES = {"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40}
UNIT_AFTER = re.compile(
    NUMBER + r"(?P<sep>\s?)(?P<unit>milliseconds|ms|seconds|sec|s|minutes|minute|min|hours|hour|h|percent|%|[KMGT]i?B"
    r"|x|×|EM|F1|points|point|pp|(?:[A-Za-z][\w-]*\s)?[A-Za-z][\w-]*/s)(?![\w/])"
)
# a metric before the number: "EM 41.3", "F1 of 0.52", "p95 56.3" (not "F1 95 % intervals")
METRIC_BEFORE = re.compile(
    r"\b(?P<unit>EM|F1|p50|p90|p95|p99)(?:\s(?:of|=|was|is|at))?\s" + NUMBER + r"(?![\w.,]\d|\s?%)"
)


@dataclass(frozen=True)
class Figure:
    """A measured figure: where it is, its text as printed, its value (bytes for a size), the value of a unit of
    its last printed digit (the rounding), and the kind of its unit."""

    path: str
    line: int
    text: str
    value: float
    step: float
    kind: str


@dataclass(frozen=True)
class Allowed:
    """An allow-list entry: a figure's text (as the checker prints it) in a file (``*``: any), and why it is no
    measurement."""

    file: str
    figure: str
    reason: str


class FiguresError(Exception):
    """A page, results file or allow-list that cannot be read (the message names it)."""


def _blank(m: re.Match[str]) -> str:
    """The match with every character but newlines blanked, so line numbers stay as in the page."""
    return re.sub(r"[^\n]", " ", m.group(0))


def prose(text: str) -> str:
    """``text`` with the generated tables, code, HTML comments and link targets blanked out (lines kept)."""
    for pattern in (BLOCK, FENCE, COMMENT, CODE, LINK_TARGET):
        text = pattern.sub(_blank, text)
    return text


def _figure(m: re.Match[str], path: str, line: int) -> Figure:
    unit = m["unit"]
    digits = m["num"].lstrip("+-−").replace(",", "")
    step = 10.0 ** -(len(digits.split(".")[1]) if "." in digits else 0)
    value = abs(float(digits))
    if unit in SIZES:
        return Figure(path, line, m.group(0).strip(), value * SIZES[unit], step * SIZES[unit], "size")
    if unit.endswith("/s"):
        kind = "rate"
    elif unit in ("p50", "p90", "p95", "p99"):
        kind = "latency"
    else:
        kind = UNITS[unit]
    return Figure(path, line, m.group(0).strip(), value, step, kind)


def line_figures(line: str, path: str = "", number: int = 0) -> list[Figure]:
    """The measured figures of one line of text, in order."""
    found: list[tuple[int, Figure]] = []
    seen: set[int] = set()
    for pattern in (UNIT_AFTER, METRIC_BEFORE):
        for m in pattern.finditer(line):
            if pattern is UNIT_AFTER:
                before = line[m.start() - 1] if m.start() else " "
                after = line[m.end()] if m.end() < len(line) else " "
                if before.isalnum() or before in "_.":
                    continue  # part of a name or a version ("q4_k_m", "v2.5x"), not a figure
                if m["unit"] in ("x", "h") and (m["sep"] or after.isdigit()):
                    continue  # "3 x 2", "2x2" (products) and "5 h" (read with its minutes) are no figures
            if m.start("num") in seen:
                continue
            seen.add(m.start("num"))
            found.append((m.start(), _figure(m, path, number)))
    return [f for _, f in sorted(found, key=lambda t: t[0])]


def figures(text: str, path: str) -> list[Figure]:
    """The measured figures of a page's prose, in order."""
    return [f for i, line in enumerate(prose(text).split("\n"), 1) for f in line_figures(line, path, i)]


# The unit a results file's field is in, read from its name (``hybrid_asof_p50_ms``, ``wall_min``,
# ``bulk_facts_per_s``, ``ratio_tx_over_bulk_s_x``, ``agent_em_pct``, ``median_seconds``, ``bulk_store_mb``);
# ``em``, ``f1``, ``em_diff``, NDCG, ROUGE, ... hold scores; a field whose name gives no unit (``rate``,
# ``hit_rate``, ``count``) holds a share or a count.
FIELD_UNITS = (
    ("score", re.compile(r"(^|[_.-])(em|f1)($|[_.@-])|em_diff|^ci_(low|high)$|ndcg|mrr|rouge|bertscore|judge")),
    ("rate", re.compile(r"(per_s|_per_s_\w*|tokens_per_s\w*)$")),
    ("x", re.compile(r"(_x|^x_\w+|speedup\w*|_over_\w+)$")),
    ("pct", re.compile(r"(_pct|^pct_\w*)$")),
    ("us", re.compile(r"_us_")),
    ("ms", re.compile(r"(^ms|_ms|_ms_\w+|^ms_\w+)$")),
    ("min", re.compile(r"(_min|minutes|_min_\w+|^projected_\w+_min)$")),
    ("h", re.compile(r"( h|_h)$")),
    ("s", re.compile(r"(_s|^s|\bs|seconds|^s_per_\w+|_s_per_\w+|seconds_per_\w+|\.seconds)$")),
    ("KB", re.compile(r"_kb(_per_\w+)?$", re.I)),
    ("MB", re.compile(r"_mb$", re.I)),
    ("GB", re.compile(r"_gb$", re.I)),
    ("GiB", re.compile(r"_gib$", re.I)),
    ("MiB", re.compile(r"_mib$", re.I)),
)
# a list longer than this holds items (questions, training steps, answers), not figures of a run
MAX_ITEMS = 60


def field_unit(key: str) -> str | None:
    """The unit of a results field named ``key`` (None: a share or a count)."""
    for unit, pattern in FIELD_UNITS:
        if pattern.search(key):
            return unit
    return None


def _numbers(value: Any, key: str) -> Iterator[tuple[str | None, float]]:
    """``(unit, number)`` of every number in ``value``; a figure written in a string (a run note) counts with the
    kind of its unit, a size in bytes."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        if math.isfinite(value):
            unit = field_unit(key)
            if unit in SIZES:
                yield "bytes", abs(value) * SIZES[unit]
            else:
                yield unit, abs(float(value))
            if unit is None and abs(value) <= 1:
                yield "share", abs(float(value))  # a share of 1, printable as a percentage
    elif isinstance(value, str):
        for figure in line_figures(value):
            yield (
                {"size": "bytes", "%": "pct", "ratio": "x", "latency": "ms"}.get(figure.kind, figure.kind),
                figure.value,
            )
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, str(k))
    elif isinstance(value, list) and len(value) <= MAX_ITEMS:
        for v in value:
            yield from _numbers(v, key)


def results_values(directory: Path) -> dict[str, dict[str | None, list[float]]]:
    """``{results file name: {unit of the field: its numbers}}`` of ``directory/*.json`` (and ``*.jsonl``, a
    record a line)."""
    out: dict[str, dict[str | None, list[float]]] = {}
    for path in sorted([*directory.glob("*.json"), *directory.glob("*.jsonl")]):
        try:
            text = path.read_text(encoding="utf-8")
            records = (
                [json.loads(x) for x in text.splitlines() if x.strip()]
                if path.suffix == ".jsonl"
                else [json.loads(text)]
            )
        except (OSError, json.JSONDecodeError) as exc:
            raise FiguresError(f"{path}: not a readable JSON results file ({exc})") from exc
        values: dict[str | None, set[float]] = {}
        for unit, number in _numbers(records, ""):
            values.setdefault(unit, set()).add(number)
        out[path.name] = {unit: sorted(numbers) for unit, numbers in values.items()}
    return out


# for a figure printed in a unit of each kind: the fields (by unit) it may come from, and the factor from the
# field's unit to the printed one
SOURCES: dict[str, tuple[tuple[str | None, float], ...]] = {
    "ms": (("ms", 1.0), ("s", 1e3), ("us", 1e-3)),
    "latency": (("ms", 1.0), ("s", 1.0)),
    "s": (("s", 1.0), ("ms", 1e-3), ("min", 60.0)),
    "min": (("min", 1.0), ("s", 1 / 60), ("ms", 1 / 60000), ("h", 60.0)),
    "h": (("h", 1.0), ("min", 1 / 60), ("s", 1 / 3600)),
    "%": (("pct", 1.0), ("score", 1.0), ("share", 100.0)),  # a percentage, a score, a share printed as a percentage
    "score": (("score", 1.0), ("pct", 1.0)),
    "ratio": (("x", 1.0),),
    "rate": (("rate", 1.0),),
    # in bytes; a unit printed decimal for binary (GB for GiB) or the other way round
    "size": tuple(("bytes", f) for f in (1.0, 1.024, 1 / 1.024, 1.024**2, 1 / 1.024**2, 1.024**3, 1 / 1.024**3)),
}


def matches(figure: Figure, values: dict[str | None, list[float]]) -> bool:
    """Whether some value of a field in the figure's unit rounds to the figure as printed (within half a unit of
    its last digit)."""
    tolerance = 0.5 * figure.step * (1 + 1e-9)
    for unit, scale in SOURCES[figure.kind]:
        if any(abs(value * scale - figure.value) <= tolerance for value in values.get(unit, ())):
            return True
    return False


def load_allow(path: Path) -> list[Allowed]:
    """The allow-list: ``[[allow]]`` tables of ``file``, ``figure`` and a non-empty ``reason``."""
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise FiguresError(f"{path}: not a readable TOML allow-list ({exc})") from exc
    out = []
    for i, entry in enumerate(data.get("allow", []), 1):
        if not all(isinstance(entry.get(k), str) and entry[k].strip() for k in ("file", "figure", "reason")):
            raise FiguresError(f"{path}: [[allow]] entry {i} needs a file, a figure and a reason")
        out.append(Allowed(entry["file"], entry["figure"], entry["reason"]))
    return out


@dataclass
class Report:
    """What the check found: figures without a results file, allowed ones, and allow-list entries never used."""

    unmatched: list[tuple[Figure, str | None]]  # and a results file the page does not name that has it
    matched: list[tuple[Figure, str]]
    allowed: list[tuple[Figure, Allowed]]
    unused: list[Allowed]


def check(
    pages: Sequence[tuple[str, str]], values: dict[str, dict[str | None, list[float]]], allow: Sequence[Allowed]
) -> Report:
    """Check the figures of ``pages`` (``(name, text)``) against the results files' ``values`` and ``allow``."""
    report = Report([], [], [], [])
    used: set[Allowed] = set()
    for name, text in pages:
        named = {m[1] for m in CITED.finditer(text)} & set(values)
        for figure in figures(text, name):
            entry = next((a for a in allow if a.file in (name, "*") and a.figure == figure.text), None)
            if entry is not None:
                used.add(entry)
                report.allowed.append((figure, entry))
                continue
            source = next((stem for stem in sorted(named) if matches(figure, values[stem])), None)
            if source is not None:
                report.matched.append((figure, source))
                continue
            elsewhere = next((stem for stem, vs in values.items() if matches(figure, vs)), None)
            report.unmatched.append((figure, elsewhere))
    checked = {name for name, _ in pages}
    report.unused = [a for a in allow if a not in used and a.file in (*checked, "*")]
    return report


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("pages", type=Path, nargs="*", help="Markdown files (default: README.md and docs/**/*.md)")
    ap.add_argument("--check", action="store_true", help="exit 1 on a figure found in no results file")
    ap.add_argument("--results-dir", type=Path, default=RESULTS)
    ap.add_argument("--allow", type=Path, default=ALLOW, help="the allow-list (default: bench/figures-allow.toml)")
    args = ap.parse_args(argv)
    try:
        pages = [(display_name(p), p.read_text(encoding="utf-8")) for p in (args.pages or targets())]
        report = check(pages, results_values(args.results_dir), load_allow(args.allow))
    except (FiguresError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.check:
        for figure, source in report.matched:
            print(f"{figure.path}:{figure.line}: {figure.text}  <- bench/results/{source}")
        for figure, entry in report.allowed:
            print(f"{figure.path}:{figure.line}: {figure.text}  <- allowed: {entry.reason}")
    for figure, elsewhere in report.unmatched:
        where = (
            f"is in bench/results/{elsewhere}, which the page does not name" if elsewhere else "is in no results file"
        )
        print(f"{figure.path}:{figure.line}: {figure.text!r} {where}", file=sys.stderr)
    for entry in report.unused:
        print(f"{args.allow}: allowed {entry.figure!r} in {entry.file} matches no figure there", file=sys.stderr)
    if report.unmatched or report.unused:
        print(
            f"{len(report.unmatched)} figure(s) without a results file, {len(report.unused)} stale allow-list "
            "entr(y/ies): quote the results file's figure (or its generated table), or allow a figure that is no "
            f"measurement in {display_name(args.allow)} with its reason",
            file=sys.stderr,
        )
        return 1 if args.check else 0
    print(
        f"{len(report.matched)} figures from results files, {len(report.allowed)} allowed, in {len(pages)} files",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
