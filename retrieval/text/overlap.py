"""Ranking texts by the words they share with a query: the cheap relevance order used when a prompt must leave
texts out to fit (the analyst agent's quoted answers, the seed-004 reader's facts).

Words are lower-cased runs of ASCII letters and digits; a text's score is the number of distinct query words it
contains (no weighting, no stop words). :func:`content_words` gives a text's content words (stop words left out):
what the answer gate's quote check and the table row matcher compare.
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


_CONTENT = re.compile(r"[a-z]{3,}")


def content_words(text: str) -> list[str]:
    """The content words of ``text`` in order: lower-cased runs of three or more ASCII letters that are not English
    stop words (scikit-learn's list). Example: ``content_words("The net sales from Americas")`` ->
    ``["net", "sales", "americas"]``."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return [w for w in _CONTENT.findall(text.lower()) if w not in ENGLISH_STOP_WORDS]
