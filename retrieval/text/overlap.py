"""Ranking texts by the words they share with a query: the cheap relevance order used when a prompt must leave
texts out to fit (the analyst agent's quoted answers, the seed-004 reader's facts).

Words are lower-cased runs of ASCII letters and digits; a text's score is the number of distinct query words it
contains (no weighting, no stop words).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[a-z0-9]+")


def by_shared_words(query: str, texts: Sequence[str]) -> list[int]:
    """Indices of ``texts``, those sharing the most distinct words with ``query`` first, ties in their order.

    Example: ``by_shared_words("revenue in 2019", ["cost", "revenue 2019", "revenue"])`` -> ``[1, 2, 0]``.
    """
    words = set(_WORD.findall(query.lower()))
    return sorted(range(len(texts)), key=lambda i: -len(words & set(_WORD.findall(texts[i].lower()))))
