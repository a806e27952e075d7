"""Write an SEC Financial Statement Data Sets quarter ZIP from secfsdstools' parquet files of it.

HansjoergW/sec-fincancial-statement-data-set (Apache-2.0) keeps some quarters of its test data only as parquet
(``tests/_testdata/parquet_new/quarter/2010q1.zip/{sub,num,pre}.txt.parquet``; its ``2010q1.zip`` is not in the
repository). This writes them back in the FSDS text layout that ``finkg ingest sec`` and
``scripts/make_user_questions.py --quarter`` read: every row and column of ``sub.txt``, ``num.txt`` and ``pre.txt``,
tab-separated, header first, an empty field for a null, ``value`` with the four decimals FSDS writes, integer
columns without a decimal point. The parquet has no ``tag.txt``: the rows of ``--tags`` quarters' ``tag.txt`` for the
``(tag, version)`` pairs the quarter uses are written (the standard taxonomies' tags, us-gaap/2009 and the like); a
filer's own tags get none, as in an FSDS daily file. Checked on 2010q2, which the repository has in both forms: the
rows written equal the ZIP's. Parquet is read by pandas through pyarrow (installed with edgartools).

    python scripts/fsds_from_parquet.py PARQUET_DIR OUT.zip [--tags QUARTER.zip ...]

Raises ``SystemExit`` naming the file when ``PARQUET_DIR`` lacks one of the three parquet files.
"""

from __future__ import annotations

import argparse
import io
import zipfile
from pathlib import Path

import pandas as pd

MEMBERS = ("sub", "num", "pre")
INTEGER_FLOATS = {"sic", "changed", "fy"}
"""sub.txt columns the parquet stores as float (a null among integers)."""


def _text(df: pd.DataFrame) -> str:
    """``df`` in the FSDS text layout (module doc)."""
    df = df.copy()
    for c in df.columns:
        if c == "value":
            df[c] = df[c].map(lambda v: "" if pd.isna(v) else f"{v:.4f}")
        elif c in INTEGER_FLOATS:
            df[c] = df[c].map(lambda v: "" if pd.isna(v) else str(int(v)))
        elif c == "ein":  # the employer identification number: nine digits, leading zeros kept
            df[c] = df[c].map(lambda v: "" if pd.isna(v) else f"{int(v):09d}")
    buf = io.StringIO()
    df.to_csv(buf, sep="\t", index=False, na_rep="", lineterminator="\n")
    return buf.getvalue()


def _tags(quarters: list[Path], used: pd.DataFrame) -> pd.DataFrame:
    """The ``tag.txt`` rows of ``quarters`` (a later quarter's row wins) for the ``(tag, version)`` pairs ``used``."""
    frames = []
    for q in quarters:
        with zipfile.ZipFile(q) as z, z.open("tag.txt") as f:
            frames.append(pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1"))
    if not frames:
        return pd.DataFrame(columns=["tag", "version"])
    tag = pd.concat(frames).drop_duplicates(["tag", "version"], keep="last")
    return tag.merge(used.astype(str).drop_duplicates(), on=["tag", "version"])


def convert(parquet_dir: Path, out: Path, tag_quarters: list[Path]) -> dict[str, int]:
    """Write ``out`` from ``parquet_dir``'s ``{sub,num,pre}.txt.parquet`` (module doc); returns the rows per member.

    Raises:
        SystemExit: a parquet file is missing.
    """
    frames = {}
    for m in MEMBERS:
        path = parquet_dir / f"{m}.txt.parquet"
        if not path.is_file():
            raise SystemExit(f"{path}: no such file (secfsdstools writes sub, num and pre as <member>.txt.parquet)")
        frames[m] = pd.read_parquet(path)
    used = pd.concat([frames["num"][["tag", "version"]], frames["pre"][["tag", "version"]]])
    tag = _tags(tag_quarters, used)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for m in MEMBERS:
            z.writestr(f"{m}.txt", _text(frames[m]))
        if len(tag):
            z.writestr("tag.txt", tag.to_csv(sep="\t", index=False, lineterminator="\n"))
    return {**{f"{m}.txt": len(frames[m]) for m in MEMBERS}, "tag.txt": len(tag)}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("parquet_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--tags", type=Path, nargs="*", default=[], help="FSDS quarter ZIPs whose tag.txt rows to use")
    args = ap.parse_args()
    counts = convert(args.parquet_dir, args.out, args.tags)
    print(", ".join(f"{k}: {v:,} rows" for k, v in counts.items()), "->", args.out)


if __name__ == "__main__":
    main()
