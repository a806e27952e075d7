"""Clustering at scale: embedding seconds, clustering seconds and peak memory at 10k and 50k entities,
with the exact full-matrix clustering measured in the same run as the baseline.

Entity names are real financial strings, deduplicated by ``generation.kgbuild.names.normalize_name``, taken
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

Each clustering is measured in a fresh subprocess (its own peak RSS, VmHWM, which includes the
interpreter, numpy/sklearn and the loaded vectors: the "base" column is that process's RSS before
clustering). ``--sweep`` adds the measurement behind the default ``[cluster] distance_threshold``
(ARI between clusters and the XBRL tags of 5,000 line-item labels) and the merge precision of the
resolution thresholds.

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

from finkg.eval.results import RESULTS_DIR, write_result  # noqa: E402
from generation.kgbuild.names import normalize_name, split_camel_case  # noqa: E402

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
            yield from csv.DictReader(
                io.TextIOWrapper(fh, encoding="utf-8", errors="replace"), delimiter="\t", quoting=csv.QUOTE_NONE
            )


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


def _peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM of /proc/self/status (getrusage's ru_maxrss would include
    the parent's peak, which Linux carries across fork and exec), else getrusage."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def worker(kind: str, n: int, vectors: str, threshold: float, k: int, out: str) -> None:
    """One measurement in this (fresh) process: prints JSON with seconds, peak and base RSS."""
    from generation.kgbuild.clustering import agglomerative_clusters, exact_agglomerative_clusters

    x = np.load(vectors, mmap_mode="r")[:n].copy()
    base = _rss_mb()
    t0 = time.perf_counter()
    if kind == "exact":
        labels = exact_agglomerative_clusters(x, threshold)
    else:
        labels = agglomerative_clusters(x, threshold, n_neighbors=k)
    seconds = time.perf_counter() - t0
    peak = _peak_rss_mb()
    np.save(out, labels)
    sizes = np.bincount(labels)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_rss_mb": peak,
                "base_rss_mb": base,
                "clusters": len(sizes),
                "singletons": int((sizes == 1).sum()),
                "largest": int(sizes.max()),
            }
        )
    )


def measure(kind: str, n: int, vectors: Path, threshold: float, k: int) -> tuple[dict, np.ndarray]:
    out = CACHE / f"labels-{kind}-{n}.npy"
    proc = subprocess.run(
        [
            sys.executable,
            __file__,
            "--worker",
            kind,
            "--n",
            str(n),
            "--vectors",
            str(vectors),
            "--threshold",
            str(threshold),
            "--k",
            str(k),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["killed"])[-1]}, np.array([])
    return json.loads(proc.stdout.strip().splitlines()[-1]), np.load(out)


def tag_groups(texts: list[str]) -> np.ndarray:
    """For each text that is a pre.txt label, its XBRL tag (the most frequent one), else -1."""
    from collections import Counter, defaultdict

    tags: dict[str, Counter] = defaultdict(Counter)
    for z in FSDS:
        for r in _tsv(z, "pre.txt"):
            tags[normalize_name(r["plabel"])][r["tag"]] += 1
    names: dict[str, int] = {}
    out = []
    for t in texts:
        c = tags.get(normalize_name(t))
        out.append(names.setdefault(c.most_common(1)[0][0], len(names)) if c else -1)
    return np.array(out)


def sweep(texts: list[str], x: np.ndarray, k: int) -> None:
    """Threshold choice: ARI between clusters and XBRL tags on line-item labels, and merge precision
    (share of candidate pairs whose two labels carry the same tag) for the resolution thresholds."""
    from rapidfuzz import fuzz
    from sklearn.metrics import adjusted_rand_score

    from generation.kgbuild.clustering import agglomerative_clusters, knn
    from generation.kgbuild.names import name_guard

    groups = tag_groups(texts)
    keep = np.flatnonzero(groups >= 0)[:5000]
    xs, gs = x[keep], groups[keep]
    print(f"\nthreshold sweep on {len(keep)} line-item labels with their XBRL tag ({len(set(gs))} tags)")
    print(f"{'distance_threshold':>18} {'clusters':>9} {'ARI vs tags':>12}")
    for t in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5):
        labels = agglomerative_clusters(xs, t, n_neighbors=k)
        print(f"{t:>18} {len(set(labels)):>9} {adjusted_rand_score(gs, labels):>12.3f}")
    idx, sim = knn(xs, k)
    keys = [normalize_name(texts[i]) for i in keep]
    guards = [name_guard(q) for q in keys]
    pairs = [
        (a, int(b), float(s))
        for a in range(len(keep))
        for b, s in zip(idx[a], sim[a])
        if a < b and guards[a] == guards[int(b)]
    ]
    print(f"\nmerge precision on the same labels ({len(pairs)} guarded kNN pairs): same-tag share")
    for t in (85, 88, 90, 92, 95):
        hits = [gs[a] == gs[b] for a, b, _ in pairs if fuzz.token_sort_ratio(keys[a], keys[b]) >= t]
        print(f"  fuzzy >= {t}: {len(hits)} pairs, precision {np.mean(hits) if hits else float('nan'):.3f}")
    for t in (0.85, 0.9, 0.93, 0.95, 0.97):
        hits = [gs[a] == gs[b] for a, b, s in pairs if s >= t]
        print(f"  embedding >= {t}: {len(hits)} pairs, precision {np.mean(hits) if hits else float('nan'):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    ap.add_argument("--exact-sizes", type=int, nargs="+", default=[5_000, 10_000])
    ap.add_argument("--threshold", type=float, default=0.30)
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--model-path", default=os.environ.get("FINKG_EMBEDDING_MODEL_PATH"))
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where clustering.json goes")
    ap.add_argument("--worker", choices=["exact", "constrained"], help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--vectors", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.n, args.vectors, args.threshold, args.k, args.out)
        return
    from sklearn.metrics import adjusted_rand_score

    largest = max(args.sizes + args.exact_sizes)
    texts, counts = collect(largest)
    print("names:", ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    embed: dict[int, tuple[float, bool]] = {}
    vectors_path = None
    for n in sorted(set(args.sizes)):
        vecs, secs, cached = embed_cached(texts[:n], args.model_path, args.batch_size)
        embed[n] = (secs, cached)
        if n == largest:
            vectors_path = CACHE / "bench-vectors.npy"
            np.save(vectors_path, vecs)
    if vectors_path is None:
        vecs, _, _ = embed_cached(texts, args.model_path, args.batch_size)
        vectors_path = CACHE / "bench-vectors.npy"
        np.save(vectors_path, vecs)
    print(f"\nthreshold {args.threshold} (cosine distance), k = {args.k}; each clustering in a fresh process")
    head = (
        f"{'n':>7} {'method':<12} {'embed s':>8} {'cluster s':>9} {'peak RSS MB':>11} {'base MB':>8} "
        f"{'clusters':>8} {'singletons':>10} {'largest':>7} {'ARI vs exact':>12}"
    )
    print(head)
    exact_labels: dict[int, np.ndarray] = {}
    result_rows: list[dict] = []
    exact_secs: dict[int, float] = {}
    for n in sorted(set(args.exact_sizes + args.sizes)):
        rows = []
        if n in args.exact_sizes:
            r, labels = measure("exact", n, vectors_path, args.threshold, args.k)
            rows.append(("exact", r, labels))
            if "error" not in r:
                exact_labels[n], exact_secs[n] = labels, r["seconds"]
        r, labels = measure("constrained", n, vectors_path, args.threshold, args.k)
        rows.append(("constrained", r, labels))
        for method, r, labels in rows:
            if "error" in r:
                print(f"{n:>7} {method:<12} failed: {r['error']}")
                continue
            ari = f"{adjusted_rand_score(exact_labels[n], labels):.4f}" if n in exact_labels else "-"
            emb = f"{embed[n][0]:.0f}{'*' if embed[n][1] else ''}" if n in embed else "-"
            print(
                f"{n:>7} {method:<12} {emb:>8} {r['seconds']:>9.1f} {r['peak_rss_mb']:>11.0f} "
                f"{r['base_rss_mb']:>8.0f} {r['clusters']:>8} {r['singletons']:>10} {r['largest']:>7} {ari:>12}"
            )
            if method == "constrained" and n in exact_secs:
                print(f"{'':>7} ratio exact / constrained seconds: {exact_secs[n] / r['seconds']:.1f}x")
            result_rows.append(
                {
                    "n": n,
                    "method": method,
                    "embed_s": round(embed[n][0], 1) if n in embed else None,
                    "embed_cached": embed[n][1] if n in embed else None,
                    **{k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()},
                    "ari_vs_exact": float(ari) if ari != "-" else None,
                    "exact_over_constrained_s": round(exact_secs[n] / r["seconds"], 2)
                    if method == "constrained" and n in exact_secs
                    else None,
                }
            )
    print(
        "* embedding seconds measured in an earlier run (cached vectors); exact full-matrix memory at "
        f"50,000: {50_000 * 49_999 / 2 * 8 / 2**30:.1f} GiB for the condensed distances alone"
    )
    largest_ok = [r for r in result_rows if r["method"] == "constrained" and "error" not in r]
    top = max(largest_ok, key=lambda r: r["n"]) if largest_ok else {}
    paired = [r for r in largest_ok if r["exact_over_constrained_s"] is not None]
    figures = {
        "largest_n": top.get("n"),
        "largest_cluster_s": top.get("seconds"),
        "largest_peak_rss_mb": top.get("peak_rss_mb"),
    }
    if paired:
        best = max(paired, key=lambda r: r["n"])
        figures |= {
            "exact_n": best["n"],
            "ari_vs_exact": best["ari_vs_exact"],
            "ratio_exact_over_constrained_s_x": best["exact_over_constrained_s"],
        }
    path = write_result(
        "clustering",
        {
            "sizes": args.sizes,
            "exact_sizes": args.exact_sizes,
            "threshold": args.threshold,
            "k": args.k,
            "model_path": args.model_path,
            "names": counts,
        },
        figures,
        tables={"runs": result_rows},
        directory=args.results_dir,
    )
    print(f"results: {path}")
    if args.sweep:
        sweep(texts, np.load(vectors_path), args.k)


if __name__ == "__main__":
    main()
