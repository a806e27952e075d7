"""XBRL instance documents (.xml) into the graph model of :mod:`ingest.sec.fsds` (Company, Filing,
Concept, Fact).

Why a parser of our own: no maintained XBRL processor fits offline use. Arelle (the reference
processor) loads and validates the taxonomy schemas an instance points to (``link:schemaRef``,
then us-gaap, dei, ...) over the network, which this project cannot reach. What we need does
not require the taxonomies: contexts (entity, period, dimensions), units and the facts that
point to them are all in the instance itself. The document is parsed once with lxml (entities
not resolved, no network), which takes well under a second for a 2.5 MB 10-K.

What is read:

- contexts: the entity identifier (the CIK), the period (``instant``, ``startDate``/``endDate``
  or ``forever``) and whether ``segment`` or ``scenario`` holds any member
  (``xbrldi:explicitMember``, ``xbrldi:typedMember``): such a fact is *dimensional*, except when its one
  member is on ``dei:LegalEntityAxis`` (a parent and its co-registrant subsidiaries in one instance):
  then the fact is kept for that legal entity, its ``coreg`` the member's name as FSDS writes it
  (:func:`legal_entity`);
- units: one measure (``iso4217:USD`` is USD), several multiplied, or ``divide``
  (``USD/shares``); only USD is kept;
- facts: every element under the root that has a ``contextRef``. A fact without ``unitRef`` is
  non-numeric (text, dates, booleans: ``skipped_non_numeric``). ``xsi:nil="true"`` is a fact
  without value (``nil_value``). ``decimals`` is kept as an int; ``INF`` gives None with
  ``precision_inf: True``; a legacy ``precision`` is turned into decimals by the XBRL 2.1 rule
  ``precision - (floor(log10(|value|)) + 1)``. Elements without ``contextRef`` (tuples) are
  counted ``skipped_tuple``. A numeric value that is not a finite number (``NaN``, ``INF``, ``1e999``:
  ``xs:double`` allows the first two) is refused: the fact is skipped and counted ``skipped_non_finite``.

Normalization, as :mod:`ingest.sec.fsds`: kept are USD facts of the filer's own entity with no
dimensions; the others are counted by reason (``skipped_not_usd``, ``skipped_dimensional``,
``skipped_forever``, ``skipped_other_entity``). Duplicates (same fact key) are counted as in
:func:`ingest.sec.companyfacts.add_fact`. ``rows == kept + sum(skipped_*)`` always holds.

Fields. ``ddate`` is the exact end date (or instant) as YYYYMMDD, ``qtrs`` 0 for instants, else
``round(days / 91.3)``. ``version`` is the FSDS form of the concept's namespace: a standard
taxonomy (fasb.org, xbrl.sec.gov, xbrl.ifrs.org) gives ``name/year``
(``http://fasb.org/us-gaap/2023`` -> ``us-gaap/2023``, ``http://xbrl.sec.gov/dei/2023`` ->
``dei/2023``); a company extension (``http://www.tesla.com/20240630``) gives the accession
number when it is known (argument or ``dei:AccessionNumber``, as FSDS does), else its prefix
(``tsla``).

Filing: ``form`` from ``dei:DocumentType``, ``period`` from ``dei:DocumentPeriodEndDate``,
``fy``/``fp`` from ``dei:DocumentFiscalYearFocus``/``DocumentFiscalPeriodFocus``, ``cik`` from the
identifier of the ``dei:DocumentType`` fact's context, company name from
``dei:EntityRegistrantName``; ``filed`` and ``accepted`` are not in an instance (None). The
accession number is not in the file either: it is the ``adsh`` argument, else
``dei:AccessionNumber`` when present, else a deterministic pseudo accession
``<file stem>.<first 12 hex digits of the file's sha256>`` (e.g.
``tsla-20240630-10q.0c5d...``), so the same file always gets the same keys.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lxml import etree

from ingest.sec.companyfacts import ADSH, add_fact, fact_row, parse_date, quarters
from ingest.sec.fsds import FsdsData
from kg.errors import IngestError

SOURCE = "xbrl-instance"
XBRLI = "http://www.xbrl.org/2003/instance"
LINK = "http://www.xbrl.org/2003/linkbase"
ISO4217 = "http://www.xbrl.org/2003/iso4217"
XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
STANDARD_HOSTS = {"fasb.org", "xbrl.sec.gov", "xbrl.ifrs.org"}
DEI = re.compile(r"http://xbrl\.sec\.gov/dei/\d{4}")
DEI_FIELDS = (
    "DocumentType",
    "DocumentPeriodEndDate",
    "DocumentFiscalYearFocus",
    "DocumentFiscalPeriodFocus",
    "EntityRegistrantName",
    "AccessionNumber",
)


class XbrlInstanceFormatError(IngestError):
    """The file is not a usable XBRL instance; the message names the file, the XML line and the
    field (e.g. ``tsla.xml: line 4060: fact us-gaap:Revenues (context c-9): value is not a number``)."""


@dataclass(frozen=True)
class Context:
    """One ``xbrli:context``: CIK of the entity, period (``start`` None for instants; ``end`` None
    for ``forever``) and whether it has dimensions (segment or scenario members)."""

    cik: int
    start: date | None
    end: date | None
    dimensional: bool
    coreg: str | None = None


def _fail(path: Path, el: Any, message: str) -> XbrlInstanceFormatError:
    line = getattr(el, "sourceline", None)
    return XbrlInstanceFormatError(f"{path}: line {line}: {message}" if line else f"{path}: {message}")


def _qname(el: etree._Element) -> str:
    """``us-gaap:Revenues`` for an element (the prefix as the document spells it)."""
    local = etree.QName(el).localname
    return f"{el.prefix}:{local}" if el.prefix else local


def _text(path: Path, parent: etree._Element, name: str, what: str) -> tuple[str, etree._Element]:
    """(stripped text, element) of the child ``xbrli:name`` of ``parent``, which must not be empty."""
    child = parent.find(f"{{{XBRLI}}}{name}")
    if child is None or not (child.text or "").strip():
        raise _fail(path, parent, f"{what}: <{name}> is missing or empty")
    return (child.text or "").strip(), child


def _date(path: Path, el: etree._Element, text: str, what: str) -> date:
    try:
        return parse_date(text)
    except ValueError as exc:
        raise _fail(path, el, f"{what}: bad date ({exc})") from None


def _period_date(path: Path, period: etree._Element, name: str, what: str) -> date:
    text, el = _text(path, period, name, what)
    return _date(path, el, text, f"{what} {name}")


def _context(path: Path, el: etree._Element) -> tuple[str, Context]:
    cid = el.get("id")
    if not cid:
        raise _fail(path, el, "context without id")
    what = f"context {cid}"
    entity = el.find(f"{{{XBRLI}}}entity")
    period = el.find(f"{{{XBRLI}}}period")
    if entity is None or period is None:
        raise _fail(path, el, f"{what}: <entity> or <period> is missing")
    ident, _ = _text(path, entity, "identifier", what)
    if not (ident.isascii() and ident.isdigit() and len(ident) <= 10):
        raise _fail(path, entity, f"{what}: identifier is not a CIK number: {ident[:80]!r}")
    members = [
        m
        for box in (entity.find(f"{{{XBRLI}}}segment"), el.find(f"{{{XBRLI}}}scenario"))
        if box is not None
        for m in box
        if isinstance(m.tag, str)
    ]
    if period.find(f"{{{XBRLI}}}instant") is not None:
        start, end = None, _period_date(path, period, "instant", what)
    elif period.find(f"{{{XBRLI}}}forever") is not None:
        start = end = None
    else:
        start = _period_date(path, period, "startDate", what)
        end = _period_date(path, period, "endDate", what)
        if start > end:
            raise _fail(path, period, f"{what}: startDate {start} is after endDate {end}")
    coreg = legal_entity(members)
    return cid, Context(int(ident), start, end, bool(members) and coreg is None, coreg)


def legal_entity(members: list[etree._Element]) -> str | None:
    """The co-registrant a context speaks for, as FSDS's ``coreg`` names it: the local name of the member
    (without its ``Member`` suffix: ``us-gaap:ParentCompanyMember`` -> ``ParentCompany``) when the context's
    only dimension is ``dei:LegalEntityAxis``; None otherwise (no dimension, or other dimensions too)."""
    if len(members) != 1:
        return None
    m = members[0]
    if etree.QName(m).localname != "explicitMember" or not (m.get("dimension") or "").endswith(":LegalEntityAxis"):
        return None
    local = (m.text or "").strip().rpartition(":")[2]
    return local.removesuffix("Member") or None


def _measure(path: Path, el: etree._Element) -> tuple[str, bool]:
    """(local name, is ISO 4217 USD) of one ``<measure>``, its prefix resolved in scope."""
    text = (el.text or "").strip()
    prefix, _, local = text.rpartition(":")
    ns = el.nsmap.get(prefix or None)
    if not local or (prefix and ns is None):
        raise _fail(path, el, f"measure {text!r} is not a QName in scope")
    return local, ns == ISO4217 and local == "USD"


def _unit(path: Path, el: etree._Element) -> tuple[str, str]:
    """(id, uom) of one ``xbrli:unit``: ``USD``, ``shares``, ``USD/shares``, ``a*b``."""
    uid = el.get("id")
    if not uid:
        raise _fail(path, el, "unit without id")
    divide = el.find(f"{{{XBRLI}}}divide")
    if divide is not None:
        parts = []
        for side in ("unitNumerator", "unitDenominator"):
            box = divide.find(f"{{{XBRLI}}}{side}")
            if box is None:
                raise _fail(path, divide, f"unit {uid}: <{side}> is missing")
            parts.append("*".join(_measure(path, m)[0] for m in box.iter(f"{{{XBRLI}}}measure")))
        return uid, "/".join(parts)
    measures = [_measure(path, m) for m in el.iter(f"{{{XBRLI}}}measure")]
    if not measures:
        raise _fail(path, el, f"unit {uid}: no <measure>")
    if len(measures) == 1 and measures[0][1]:
        return uid, "USD"
    return uid, "*".join(local for local, _ in measures)


def taxonomy_version(namespace: str, prefix: str | None, extension: str | None) -> str:
    """The FSDS ``version`` of a concept namespace (see module docstring).

    >>> taxonomy_version("http://fasb.org/us-gaap/2023", "us-gaap", None)
    'us-gaap/2023'
    >>> taxonomy_version("http://www.tesla.com/20240630", "tsla", None)
    'tsla'
    >>> taxonomy_version("http://www.tesla.com/20240630", "tsla", "0000950170-24-087843")
    '0000950170-24-087843'
    """
    try:
        url = urlparse(namespace)
    except ValueError:  # e.g. an unbalanced "[" in the host part: not a standard taxonomy
        return extension or prefix or "ext"
    parts = [p for p in url.path.split("/") if p]
    if url.netloc in STANDARD_HOSTS:
        year = next((p[:4] for p in parts if p[:4].isdigit()), None)
        name = next((p for p in reversed(parts) if not p[:1].isdigit() and p != "taxonomy"), None)
        if year and name:
            return f"{name}/{year}"
    return extension or prefix or "ext"


def _decimals(path: Path, el: etree._Element, value: float | None) -> tuple[int | None, bool]:
    """(decimals, is INF) of a numeric fact from ``decimals`` or a legacy ``precision``."""
    for attr in ("decimals", "precision"):
        raw = el.get(attr)
        if raw is None:
            continue
        raw = raw.strip()
        if raw == "INF":
            return None, True
        try:
            n: int | None = int(raw)
        except ValueError:
            n = None
        if n is None or abs(n) > 1_000:
            raise _fail(path, el, f"fact {_qname(el)}: {attr} is not an integer (-1000 to 1000) or INF: {raw[:80]!r}")
        if attr == "decimals":
            return n, False
        if value is None or value == 0 or n == 0:
            return None, False
        return n - (math.floor(math.log10(abs(value))) + 1), False
    return None, False


def read_instance(path: Path, adsh: str | None = None) -> FsdsData:
    """Read and normalize one XBRL instance document (see the module docstring for the rules).

    Args:
        path: the ``.xml`` instance (not inline XBRL ``.htm``).
        adsh: the filing's accession number (``0000950170-24-087843``); when None, taken from
            ``dei:AccessionNumber`` or else a pseudo accession derived from file name and hash.

    Returns:
        :class:`~ingest.sec.fsds.FsdsData`: one company (cik, name, sic None), one filing (adsh,
        cik, form, period YYYYMMDD, fy, fp, filed None, accepted None, source = file name),
        concepts (key ``version:tag``, label None), USD whole-entity facts (the fields of
        :func:`ingest.sec.companyfacts.fact_row`, ``decimals`` as int or None) and ``counts``:
        rows (fact elements), kept, skipped_non_finite, skipped_not_usd, skipped_dimensional, skipped_non_numeric,
        skipped_forever, skipped_other_entity, skipped_tuple, skipped_duplicate,
        skipped_duplicate_conflict, nil_value, filings, companies, concepts, current.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        XbrlInstanceFormatError: not well-formed XML (a truncated file included; the line is
            named), not an ``xbrli:xbrl`` root, a context or unit without its parts, a bad date, a
            fact whose ``contextRef`` or ``unitRef`` is not defined, a numeric fact whose value
            is not a number, bad ``decimals``, ``dei:DocumentType`` /
            ``dei:DocumentPeriodEndDate`` missing, or an ``adsh`` (argument or
            ``dei:AccessionNumber``) not of the form ``##########-##-######``.
    """
    path = Path(path)
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, remove_comments=True)
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        raise XbrlInstanceFormatError(f"{path}: line {exc.lineno}: not well-formed XML ({exc.msg})") from None
    if root.tag != f"{{{XBRLI}}}xbrl":
        raise _fail(path, root, f"root element is {root.tag!r}, not xbrli:xbrl (an XBRL instance)")

    contexts = dict(_context(path, el) for el in root.iterchildren(f"{{{XBRLI}}}context"))
    units = dict(_unit(path, el) for el in root.iterchildren(f"{{{XBRLI}}}unit"))
    data = FsdsData(source=path, sha256=digest)
    c = data.counts
    dei: dict[str, tuple[str, etree._Element, Context]] = {}
    numeric: list[tuple[etree._Element, Context, float | None, int | None, bool]] = []
    for el in root.iterchildren():
        if not isinstance(el.tag, str):
            continue
        ns = etree.QName(el).namespace
        if ns in (XBRLI, LINK):
            continue
        c["rows"] += 1
        ref = el.get("contextRef")
        if ref is None:
            c["skipped_tuple"] += 1
            continue
        ctx = contexts.get(ref)
        if ctx is None:
            raise _fail(path, el, f"fact {_qname(el)}: contextRef {ref!r} is not a defined context")
        unit_ref = el.get("unitRef")
        if unit_ref is None:
            local = etree.QName(el).localname
            if ns and DEI.fullmatch(ns) and local in DEI_FIELDS and not ctx.dimensional:
                dei.setdefault(local, ((el.text or "").strip(), el, ctx))
            c["skipped_non_numeric"] += 1
            continue
        uom = units.get(unit_ref)
        if uom is None:
            raise _fail(path, el, f"fact {_qname(el)}: unitRef {unit_ref!r} is not a defined unit")
        value = None
        if el.get(XSI_NIL) not in ("true", "1"):
            text = (el.text or "").strip()
            try:
                value = float(text)
            except ValueError:
                raise _fail(
                    path, el, f"fact {_qname(el)} (context {ref}): value is not a number: {text[:80]!r}"
                ) from None
            if not math.isfinite(value):  # NaN, INF, 1e999: never a fact
                c["skipped_non_finite"] += 1
                continue
        decimals, inf = _decimals(path, el, value)
        if uom != "USD":
            c["skipped_not_usd"] += 1
        elif ctx.dimensional:
            c["skipped_dimensional"] += 1
        elif ctx.end is None:
            c["skipped_forever"] += 1
        else:
            numeric.append((el, ctx, value, decimals, inf))

    for name in ("DocumentType", "DocumentPeriodEndDate"):
        if not dei.get(name, ("",))[0]:
            raise XbrlInstanceFormatError(f"{path}: dei:{name} is missing (a whole-entity fact is required)")
    form, _, form_ctx = dei["DocumentType"]
    text, el, _ = dei["DocumentPeriodEndDate"]
    period = _date(path, el, text, "dei:DocumentPeriodEndDate").strftime("%Y%m%d")
    fy = None
    if "DocumentFiscalYearFocus" in dei:
        text, el, _ = dei["DocumentFiscalYearFocus"]
        if not (text.isascii() and text.isdigit() and len(text) <= 4):
            raise _fail(path, el, f"dei:DocumentFiscalYearFocus is not a year: {text[:80]!r}")
        fy = int(text)
    if adsh is not None and not ADSH.fullmatch(adsh):
        raise XbrlInstanceFormatError(f"{path}: accession {adsh!r} is not an accession number (##########-##-######)")
    if "AccessionNumber" in dei:
        text, el, _ = dei["AccessionNumber"]
        if not ADSH.fullmatch(text):
            raise _fail(path, el, f"dei:AccessionNumber is not an accession number (##########-##-######): {text!r}")
    known = adsh or dei.get("AccessionNumber", ("",))[0] or None
    if adsh is None:
        adsh = known or f"{re.sub(r'[^A-Za-z0-9_.-]', '_', path.stem)}.{digest[:12]}"
    cik = form_ctx.cik
    name = dei.get("EntityRegistrantName", ("",))[0] or None
    data.companies = [{"cik": cik, "name": name, "sic": None}]
    data.filings = [
        {
            "adsh": adsh,
            "cik": cik,
            "form": form,
            "period": period,
            "fy": fy,
            "fp": dei.get("DocumentFiscalPeriodFocus", ("",))[0] or None,
            "filed": None,
            "accepted": None,
            "source": path.name,
        }
    ]

    index: dict[str, int] = {}
    concepts: dict[str, dict[str, Any]] = {}
    for el, ctx, value, decimals, inf in numeric:
        if ctx.cik != cik:
            c["skipped_other_entity"] += 1
            continue
        assert ctx.end is not None, "forever contexts are skipped above"
        q = etree.QName(el)
        version = taxonomy_version(q.namespace or "", el.prefix, known)
        row = fact_row(
            adsh=adsh,
            cik=cik,
            tag=q.localname,
            version=version,
            end=ctx.end,
            qtrs=quarters(ctx.start, ctx.end),
            value=value,
            form=form,
            period=period,
            decimals=decimals,
            source=SOURCE,
            coreg=ctx.coreg,
        )
        if inf:
            row["precision_inf"] = True
        add_fact(data, index, row)
        concepts.setdefault(
            row["concept"], {"key": row["concept"], "tag": q.localname, "version": version, "label": None}
        )
    used = {f["concept"] for f in data.facts}
    data.concepts = [k for key, k in concepts.items() if key in used]
    for reason in ("skipped_not_usd", "skipped_dimensional", "skipped_non_numeric", "skipped_non_finite", "nil_value"):
        c[reason] += 0  # present in the run record even when 0
    c["filings"], c["companies"], c["concepts"] = 1, 1, len(data.concepts)
    c["current"] = sum(1 for f in data.facts if f["period_role"] == "current")
    return data
