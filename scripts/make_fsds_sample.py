"""Cut an SEC Financial Statement Data Sets ZIP down to a few filings, for a small real sample the tests ship.

Keeps, byte for byte, the header and the rows of ``sub.txt``, ``num.txt`` and ``pre.txt`` whose ``adsh`` (accession
number, the first field) is one of the filings asked for, and the rows of ``tag.txt`` whose ``(tag, version)`` those
``num.txt`` and ``pre.txt`` rows use; nothing else (no ``readme.htm``). The layout and the encoding are the source's,
so the sample reads as the quarter does.

    python scripts/make_fsds_sample.py SOURCE.zip OUT.zip ADSH [ADSH ...]

Raises ``SystemExit`` naming the source and the accession numbers it lacks when one is not in its ``sub.txt``.
"""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path

MEMBERS = ("sub.txt", "num.txt", "pre.txt")


def _rows(z: zipfile.ZipFile, member: str) -> tuple[bytes, list[bytes]]:
    lines = z.read(member).splitlines(keepends=True)
    return lines[0], lines[1:]


def cut(source: Path, out: Path, adshs: set[str]) -> dict[str, int]:
    """Write the sample ``out`` of ``source`` (module doc); returns the rows kept per member.

    Raises:
        SystemExit: an accession number of ``adshs`` is not in ``source``'s sub.txt.
    """
    keys = {a.encode() for a in adshs}
    kept: dict[str, tuple[bytes, list[bytes]]] = {}
    with zipfile.ZipFile(source) as z:
        for member in MEMBERS:
            header, rows = _rows(z, member)
            kept[member] = (header, [r for r in rows if r.split(b"\t", 1)[0] in keys])
        missing = keys - {r.split(b"\t", 1)[0] for r in kept["sub.txt"][1]}
        if missing:
            raise SystemExit(f"{source}: sub.txt has no filing {', '.join(sorted(m.decode() for m in missing))}")
        used: set[tuple[bytes, bytes]] = set()
        for member in ("num.txt", "pre.txt"):
            header = kept[member][0].rstrip(b"\r\n").split(b"\t")
            t, v = header.index(b"tag"), header.index(b"version")
            used |= {(f[t], f[v]) for f in (r.rstrip(b"\r\n").split(b"\t") for r in kept[member][1])}
        if "tag.txt" in z.namelist():
            header, rows = _rows(z, "tag.txt")
            kept["tag.txt"] = (header, [r for r in rows if tuple(r.split(b"\t", 2)[:2]) in used])
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for member, (header, rows) in kept.items():
            z.writestr(member, header + b"".join(rows))
    return {m: len(rows) for m, (_, rows) in kept.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("adsh", nargs="+")
    args = ap.parse_args()
    for member, n in cut(args.source, args.out, set(args.adsh)).items():
        print(f"{member}: {n} rows")


if __name__ == "__main__":
    main()
