"""Token-aware, sentence-aware chunking of clean text.

A section's paragraphs are split into sentences (pysbd, the rule-based Golden-Rules segmenter,
one paragraph at a time so that a paragraph break always ends a sentence), and whole sentences
are packed into chunks of at most ``chunk_tokens`` tokens. Consecutive chunks of a section
overlap by whole sentences: the next chunk starts with the previous chunk's trailing sentences
whose tokens add up to at most ``chunk_overlap`` (a chunk that ends on a sentence longer than
the overlap starts the next one without overlap, rather than cutting a sentence in two).
A sentence longer than the budget alone is cut at token boundaries into pieces of at most
``chunk_tokens`` tokens, which then count as sentences. Chunks never cross a section boundary.

Tokens are counted with a configured Hugging Face tokenizer (a ``tokenizer.json`` file, or a
model directory holding one: the embedding model's, so that a chunk fits the model's window),
without special tokens. With none configured, :class:`ApproxTokenCounter` counts words and
punctuation marks (``\\w+|[^\\w\\s]``): for English financial text it counts about 0.9 to 1.0
times the all-MiniLM-L6-v2 WordPiece count (measured on the FOMC statements: see the README),
so the budget then is approximate in model tokens but ingest needs no model.

Each chunk keeps its sentences (extraction prompts work sentence by sentence) and its text
(the sentences joined with single spaces).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import pysbd

APPROX_TOKEN = re.compile(r"\w+|[^\w\s]")
PARAGRAPH_BREAK = re.compile(r"\n\s*\n|\n")


class TokenCounter(Protocol):
    """Counts tokens and gives their character spans (``[(start, end), ...]``) in a text."""

    name: str

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens of ``text``, in order."""
        ...

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...


class ApproxTokenCounter:
    """Words and punctuation marks as tokens (regex ``\\w+|[^\\w\\s]``); needs no model."""

    name = "approx:words+punct"

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in APPROX_TOKEN.finditer(text)]

    def count(self, text: str) -> int:
        return sum(1 for _ in APPROX_TOKEN.finditer(text))


class HFTokenCounter:
    """A Hugging Face ``tokenizers`` tokenizer loaded from a ``tokenizer.json`` file.

    Args:
        path: the ``tokenizer.json`` file, or a model directory that holds one.

    Raises:
        FileNotFoundError: no ``tokenizer.json`` at ``path``.
        ValueError: the file is not a tokenizer the ``tokenizers`` package can load.
    """

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        path = Path(path).expanduser()
        file = path / "tokenizer.json" if path.is_dir() else path
        if not file.is_file():
            raise FileNotFoundError(
                f"{file}: no tokenizer.json (set [text] tokenizer to a tokenizer.json "
                "file or a model directory that holds one)"
            )
        try:
            self._tok = Tokenizer.from_file(str(file))
        except Exception as exc:  # the Rust library raises a bare Exception
            raise ValueError(f"{file}: not a Hugging Face tokenizer.json ({exc})") from exc
        self._tok.no_truncation()
        self._tok.no_padding()
        self.name = f"hf:{file.parent.name}/{file.name}"

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [(a, b) for a, b in self._tok.encode(text, add_special_tokens=False).offsets]

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=4)
def load_token_counter(path: Path | None) -> TokenCounter:
    """The token counter for ``path`` (a tokenizer.json or model dir), else :class:`ApproxTokenCounter`.

    Raises:
        FileNotFoundError, ValueError: as :class:`HFTokenCounter`.
    """
    return HFTokenCounter(path) if path else ApproxTokenCounter()


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    r"""Sentences of ``text``: each line (paragraph) segmented by pysbd, whitespace collapsed.

    The readers give one paragraph, list item or table row per line, so a line break always ends
    a sentence. Empty sentences are dropped.

    >>> split_sentences("The Committee decided today. Inflation has moderated.\nVoting: A. B. Smith.")
    ['The Committee decided today.', 'Inflation has moderated.', 'Voting: A. B. Smith.']
    """
    out: list[str] = []
    for para in PARAGRAPH_BREAK.split(text):
        para = " ".join(para.split())
        if not para:
            continue
        out.extend(s for s in (" ".join(x.split()) for x in _segmenter().segment(para)) if s)
    return out


@dataclass(frozen=True)
class TextChunk:
    """One chunk of a document.

    Attributes:
        seq: position in the document, from 0.
        section: title of the section it comes from ("" when the document has none).
        sentences: the sentences, in order (a sentence over the budget appears as its pieces).
        text: the sentences joined with single spaces.
        n_tokens: tokens of ``text`` by the counter used.
        overlap_sentences: how many leading sentences repeat the previous chunk's last ones.
    """

    seq: int
    section: str
    sentences: tuple[str, ...]
    text: str
    n_tokens: int
    overlap_sentences: int = 0


@dataclass
class _Sentence:
    text: str
    n_tokens: int


@dataclass
class ChunkingStats:
    """Counts over a chunking run: sentences seen, sentences cut because over budget."""

    sentences: int = 0
    split_sentences: int = 0


def _pieces(sentence: str, counter: TokenCounter, budget: int) -> list[_Sentence]:
    """``sentence`` cut into pieces of at most ``budget`` tokens, between words where it can."""
    spans = counter.spans(sentence)
    out = []
    i = 0
    while i < len(spans):
        end = min(i + budget, len(spans))
        # cut between words: back off while the next token continues the same word (no space between)
        cut = end
        while cut < len(spans) and cut - 1 > i and spans[cut][0] == spans[cut - 1][1]:
            cut -= 1
        if cut < len(spans) and spans[cut][0] == spans[cut - 1][1]:
            cut = end  # one word longer than the budget (a URL): cut inside it
        piece = sentence[spans[i][0] : spans[cut - 1][1]].strip()
        if piece:
            out.append(_Sentence(piece, counter.count(piece)))
        i = cut
    return out


def _sentences(text: str, counter: TokenCounter, budget: int, stats: ChunkingStats) -> list[_Sentence]:
    out: list[_Sentence] = []
    for s in split_sentences(text):
        stats.sentences += 1
        n = counter.count(s)
        if n > budget:
            stats.split_sentences += 1
            out.extend(_pieces(s, counter, budget))
        else:
            out.append(_Sentence(s, n))
    return out


def _joined(picked: list[_Sentence], counter: TokenCounter) -> tuple[str, int]:
    body = " ".join(s.text for s in picked)
    return body, counter.count(body)


def chunk_sections(
    sections: Sequence[tuple[str, str]],
    counter: TokenCounter,
    chunk_tokens: int,
    chunk_overlap: int,
    stats: ChunkingStats | None = None,
) -> list[TextChunk]:
    """Pack the sentences of each ``(title, text)`` section into chunks (see the module docstring).

    Args:
        sections: ``(section title, text)`` pairs, in document order; text has one paragraph
            per line (blank lines allowed).
        counter: the token counter.
        chunk_tokens: token budget per chunk (>= 8).
        chunk_overlap: at most this many tokens of whole trailing sentences repeat at the start
            of the next chunk of the same section (0 <= overlap < chunk_tokens / 2).
        stats: filled with sentence counts when given.

    Returns:
        Chunks numbered from 0 across the document; every chunk has ``n_tokens <= chunk_tokens``.

    Raises:
        ValueError: budget or overlap out of range.
    """
    if chunk_tokens < 8:
        raise ValueError(f"chunk_tokens must be >= 8, got {chunk_tokens}")
    if not 0 <= chunk_overlap < chunk_tokens / 2:
        raise ValueError(
            f"chunk_overlap must be >= 0 and below half of chunk_tokens ({chunk_tokens}), got {chunk_overlap}"
        )
    stats = stats if stats is not None else ChunkingStats()
    chunks: list[TextChunk] = []
    for title, text in sections:
        sents = _sentences(text, counter, chunk_tokens, stats)
        i = 0
        carried = 0  # leading sentences of the chunk being built that repeat the previous chunk
        while i < len(sents):
            start = i - carried
            picked: list[_Sentence] = list(sents[start:i])
            total = sum(s.n_tokens for s in picked)
            while i < len(sents) and total + sents[i].n_tokens <= chunk_tokens:
                picked.append(sents[i])
                total += sents[i].n_tokens
                i += 1
            if len(picked) == carried:  # the carried sentences leave no room for the next one
                picked, carried = [], 0
                continue
            body, n = _joined(picked, counter)
            while n > chunk_tokens and len(picked) > carried + 1:  # joining changed the count (BPE)
                picked.pop()
                i -= 1
                body, n = _joined(picked, counter)
            if n > chunk_tokens and carried:  # still over: give up the overlap for this chunk
                picked, carried = picked[carried:], 0
                body, n = _joined(picked, counter)
            chunks.append(TextChunk(len(chunks), title, tuple(s.text for s in picked), body, n, carried))
            if i >= len(sents):
                break
            carried, tail = 0, 0
            for s in reversed(picked[1:]):  # never carry a whole chunk: the next must move on
                if tail + s.n_tokens > chunk_overlap:
                    break
                tail += s.n_tokens
                carried += 1  # noqa: SIM113  (a count after the break, not an index)
    return chunks
