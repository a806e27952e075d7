"""JSON answers: the schema stated in a prompt, parsing with repair, a small schema check.

Used by :class:`generation.llm.client.LLMClient` after the cache, so a cached raw answer is
parsed the same way on every run. Order (:func:`parse_answer`):

1. ``json.loads`` of the stripped answer (constrained decoding normally gives this);
2. else ``json_repair.loads`` (code fences, trailing commas, prose around the JSON, a cut-off
   end): ``repaired=True``;
3. the result must pass :func:`schema_problems` (top-level type, required keys, the declared
   types of top-level properties and of array items); otherwise :class:`AnswerNotJSON`.

The check is deliberately small (no ``jsonschema`` dependency): it catches the failures local
models actually produce (prose instead of JSON, a list where an object was asked, a missing key,
a string where a list was asked) without claiming full JSON Schema validation.
"""

from __future__ import annotations

import json
from typing import Any

import json_repair

from kg.errors import LLMError

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


class AnswerNotJSON(LLMError):
    """The answer is not JSON even after repair, or does not fit the schema; the message says why."""


def describe_schema(schema: dict, depth: int = 0) -> str:
    """A short English description of a JSON schema's shape, e.g. ``a JSON object with the keys
    "company" (string), "revenue" (number); required: company, revenue``. Small local models copy
    a raw schema dump instead of answering; a description of the keys they follow."""
    kind = _kind(schema)
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if kind == "object" and schema.get("properties") and depth < 3:
        keys = ", ".join(
            f'"{k}" ({describe_schema(v, depth + 1) if isinstance(v, dict) else "any"})'
            for k, v in schema["properties"].items()
        )
        required = schema.get("required") or []
        return f"a JSON object with the keys {keys}" + (f"; required: {', '.join(required)}" if required else "")
    if kind == "array" and isinstance(schema.get("items"), dict) and depth < 3:
        return f"an array of {describe_schema(schema['items'], depth + 1)}"
    if isinstance(kind, list):
        return " or ".join(kind)
    return kind or "any JSON value"


def schema_instruction(schema: dict) -> str:
    """The sentence added to the prompt of a backend that cannot constrain decoding."""
    return f"Answer with JSON only: {describe_schema(schema)}."


def with_schema_in_prompt(messages: list[dict], schema: dict) -> list[dict]:
    """``messages`` with :func:`schema_instruction` appended to the system message (one is added
    at the front when there is none). The input list is not changed."""
    out = [dict(m) for m in messages]
    text = schema_instruction(schema)
    for m in out:
        if m.get("role") == "system":
            m["content"] = f"{m.get('content') or ''}\n\n{text}".strip()
            return out
    return [{"role": "system", "content": text}, *out]


def _type_ok(value: Any, kind: str | list[str] | None) -> bool:
    if kind is None:
        return True
    kinds = [kind] if isinstance(kind, str) else list(kind)
    for k in kinds:
        types = _TYPES.get(k)
        if types is None:
            return True  # a type this small check does not know: not judged
        if isinstance(value, bool) and k in ("integer", "number"):
            continue  # JSON true is not a number
        if isinstance(value, types):
            return True
    return False


def _kind(schema: dict) -> str | list[str] | None:
    if "type" in schema:
        return schema["type"]
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def schema_problems(data: Any, schema: dict) -> list[str]:
    """What is wrong with ``data`` against ``schema`` (empty list: nothing found).

    Checked: the top-level type; for objects the ``required`` keys and the types of the declared
    ``properties`` (and, for a property that is an array, the type of its items); for arrays the
    type of their items; ``enum`` of top-level properties. Nested objects below that are not
    checked.
    """
    problems: list[str] = []
    kind = _kind(schema)
    if not _type_ok(data, kind):
        return [f"expected a JSON {kind}, got {type(data).__name__}"]
    if isinstance(data, dict):
        for key in schema.get("required", []):
            if key not in data:
                problems.append(f"required key {key!r} is missing")
        for key, sub in (schema.get("properties") or {}).items():
            if key not in data or not isinstance(sub, dict):
                continue
            problems += [f"{key}: {p}" for p in _value_problems(data[key], sub)]
    elif isinstance(data, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(data):
            if not _type_ok(item, _kind(schema["items"])):
                problems.append(f"item {i}: expected {_kind(schema['items'])}, got {type(item).__name__}")
    return problems


def _value_problems(value: Any, sub: dict) -> list[str]:
    kind = _kind(sub)
    if not _type_ok(value, kind):
        return [f"expected {kind}, got {type(value).__name__}"]
    if "enum" in sub and value not in sub["enum"]:
        return [f"{value!r} is not one of {sub['enum']}"]
    if isinstance(value, list) and isinstance(sub.get("items"), dict):
        item_kind = _kind(sub["items"])
        return [
            f"item {i}: expected {item_kind}, got {type(v).__name__}"
            for i, v in enumerate(value)
            if not _type_ok(v, item_kind)
        ]
    return []


def parse_answer(text: str, schema: dict) -> tuple[Any, bool]:
    """The JSON value of an LLM answer, checked against ``schema``.

    Returns:
        ``(data, repaired)``: ``repaired`` is True when ``json.loads`` failed and json-repair
        produced ``data``.

    Raises:
        AnswerNotJSON: empty answer, nothing JSON-like in it, or the value fails
            :func:`schema_problems`; the message lists the problems.
    """
    stripped = text.strip()
    if not stripped:
        raise AnswerNotJSON("the answer is empty")
    repaired = False
    try:
        data = json.loads(stripped)
    except ValueError:
        repaired = True
        data = json_repair.loads(stripped)
        if data == "" or (isinstance(data, str) and not stripped.startswith('"')):
            raise AnswerNotJSON("the answer holds no JSON, even after json-repair") from None
    problems = schema_problems(data, schema)
    if problems:
        how = "after json-repair, " if repaired else ""
        raise AnswerNotJSON(f"{how}the JSON does not fit the schema: " + "; ".join(problems[:5]))
    return data, repaired
