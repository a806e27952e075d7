"""``finkg ask --page``: print an answer read from filing pages (issue 46 item 4)."""

from __future__ import annotations

import json
from typing import Any

from finkg.cli._common import console
from finkg.output import Format


def _say(text: str) -> None:
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def print_page_answer(result: Any, fmt: Format) -> None:
    """``finkg.api.ask_page``'s :class:`generation.agent.page.PageAnswer` printed: the answer, its status, route, the lines read and the pages cited (or the reasons it was refused)."""
    if fmt is Format.json:
        print(json.dumps(result.as_dict(), indent=1, default=str))
        return
    _say(f"answer: {result.answer if result.answer is not None else '(none)'}")
    _say(f"status: {result.status} (by {result.route}, {result.seconds:.1f} s)")
    for reason in result.reasons:
        _say(f"  reason: {reason}")
    if result.expression:
        _say(f"expression: {result.expression}")
    for line in result.lines:
        _say(f"  line: {line}")
    if result.citations:
        _say(f"cited: {', '.join(result.citations)}")
