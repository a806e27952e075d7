"""The Neo4j Browser workspace shipped with finkg: a style sheet and a set of saved queries.

* ``finkg.grass``: the GRASS style sheet (colour, diameter and caption per label, caption and colour per
  relationship type). Browser loads it when the file is dropped on its ``:style`` frame, or from
  ``:style <text>`` typed in its editor. Its grammar is Browser's own (``parseGrass`` of Neo4j Browser
  5): ``selector { key: value; ... }`` blocks, no comments, and no ``:`` or ``;`` inside a value.
* ``queries/<name>.cypher``: one read-only Cypher query each, under a header of ``//`` comments:
  ``// name: <name>`` (the file's stem), ``// shows: ...`` (continued on indented ``//`` lines) and one
  ``// :param <name> => <Cypher expression>`` line per parameter, with an example from the SEC, FOMC and
  AKShare data the README loads. Pasting the ``:param`` lines (without ``//``) and then the query into
  Browser runs it; a file dropped on Browser's Favorites drawer becomes a saved script.

Cypher lives in ``kg`` (docs/ARCHITECTURE.md), so the saved queries live here too; ``finkg browser``
prints them and docs/queries/README.md points here rather than holding copies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import ConfigError

if TYPE_CHECKING:
    from kg.driver import Graph

STYLE_FILE = "finkg.grass"
QUERY_DIR = "queries"

_PARAM = re.compile(r"^//\s*:param\s+([A-Za-z_][A-Za-z0-9_]*)\s*=>\s*(.+?)\s*$")
_FIELD = re.compile(r"^//\s*(name|shows):\s*(.*?)\s*$")


@dataclass(frozen=True)
class SavedQuery:
    """One saved query: ``name`` (the file's stem), what it ``shows``, its example parameters
    (``params``: name -> the Cypher expression of a ``:param name => expression`` line, in file order),
    the query ``text`` (without the header) and the file's ``path``."""

    name: str
    shows: str
    params: dict[str, str]
    text: str
    path: Path

    def param_lines(self) -> list[str]:
        """The ``:param`` commands to paste into Neo4j Browser before the query."""
        return [f":param {name} => {expr}" for name, expr in self.params.items()]

    def source(self) -> str:
        """The file's whole text (header and query), as Browser's Favorites import it."""
        return self.path.read_text(encoding="utf-8")


def _package_dir() -> Path:
    return Path(str(resources.files(__name__)))


def style_path() -> Path:
    """The path of the GRASS style sheet shipped in the package."""
    return _package_dir() / STYLE_FILE


def style_text() -> str:
    """The GRASS style sheet's text."""
    return style_path().read_text(encoding="utf-8")


def parse_saved_query(path: Path) -> SavedQuery:
    """Read a saved query file (the header format in this module's docstring).

    Raises:
        ConfigError: no ``// name:`` line, a name that differs from the file's stem, no ``// shows:``
            line, a header line that is none of the three, a parameter given twice, or no query text.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    header = 0
    while header < len(lines) and lines[header].strip().startswith("//"):
        header += 1
    fields: dict[str, str] = {}
    params: dict[str, str] = {}
    last = ""
    for line in lines[:header]:
        stripped = line.strip()
        if m := _PARAM.match(stripped):
            if m.group(1) in params:
                raise ConfigError(f"{path}: parameter {m.group(1)!r} is given twice")
            params[m.group(1)] = m.group(2)
            last = ""
        elif m := _FIELD.match(stripped):
            last = m.group(1)
            fields[last] = m.group(2)
        elif last == "shows" and stripped.startswith("//  "):
            fields["shows"] += " " + stripped[2:].strip()
        else:
            raise ConfigError(
                f"{path}: header line {stripped!r} is not '// name: ...', '// shows: ...' (continued on "
                "'//   ...' lines) or '// :param NAME => EXPRESSION'"
            )
    text = "\n".join(lines[header:]).strip()
    if fields.get("name") != path.stem:
        raise ConfigError(f"{path}: the header's '// name:' must be the file's stem {path.stem!r}")
    if not fields.get("shows"):
        raise ConfigError(f"{path}: no '// shows: ...' line says what the query shows")
    if not text:
        raise ConfigError(f"{path}: no query after the header")
    return SavedQuery(name=path.stem, shows=fields["shows"], params=params, text=text, path=path)


def saved_queries() -> list[SavedQuery]:
    """Every saved query shipped in the package, by name."""
    return [parse_saved_query(p) for p in sorted((_package_dir() / QUERY_DIR).glob("*.cypher"))]


def saved_query(name: str) -> SavedQuery:
    """The saved query called ``name``.

    Raises:
        ConfigError: no saved query has that name (the message lists the names).
    """
    queries = {q.name: q for q in saved_queries()}
    if name not in queries:
        raise ConfigError(f"no saved query {name!r}; the saved queries are {', '.join(queries)}")
    return queries[name]


def example_params(graph: Graph, query: SavedQuery) -> dict[str, Any]:
    """The values of ``query``'s example ``:param`` expressions, evaluated by the server as Browser does
    (``RETURN <expression>``), each behind the read-only guard.

    Raises:
        ReadOnlyViolation: an expression that is not a plain read.
    """
    from kg.guard import check_read_only

    values: dict[str, Any] = {}
    for name, expr in query.params.items():
        statement = f"RETURN {expr} AS value"
        check_read_only(graph, statement)
        values[name] = graph.read(statement)[0]["value"]
    return values


def parse_grass(text: str) -> dict[str, dict[str, str]]:
    """A GRASS style sheet as Neo4j Browser 5 reads it (a port of its ``parseGrass``): selector ->
    {key: value}, quotes removed, whitespace outside braces and quotes dropped; a declaration that does
    not split into exactly one key and one value at ``:`` is ignored, as Browser ignores it."""
    in_quotes = in_block = nested = False
    selector = body = ""
    blocks: dict[str, str] = {}
    for ch in text:
        special = True
        if ch == "{":
            if in_quotes:
                special = False
            elif in_block:
                nested = True
            else:
                in_block = True
        elif ch == "}":
            if in_quotes:
                special = False
            elif nested:
                nested = False
            else:
                in_block = False
                blocks[selector] = body
                selector = body = ""
        elif ch in "'\"":
            in_quotes = not in_quotes
        else:
            special = False
        if not special:
            if in_block:
                body += ch
            elif not ch.isspace():
                selector += ch
    parsed: dict[str, dict[str, str]] = {}
    for sel, content in blocks.items():
        rules: dict[str, str] = {}
        for declaration in content.split(";"):
            parts = declaration.split(":")
            if len(parts) == 2:
                rules[parts[0].strip()] = parts[1].strip()
        parsed[sel] = rules
    return parsed


__all__ = [
    "SavedQuery",
    "example_params",
    "parse_grass",
    "parse_saved_query",
    "saved_queries",
    "saved_query",
    "style_path",
    "style_text",
]
