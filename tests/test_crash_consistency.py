"""Crash consistency of ingest and of the outputs made from the graph (issue 22 section 1, issue 16).

Real processes and the real Neo4j: ``finkg ingest sec`` runs in a subprocess that SIGKILLs itself at a named
stage (the test-only hook ``FINKG_TEST_KILL_AT``, :mod:`ingest.runs`); nothing is mocked. Each test ingests a
copy of two filings of the shipped daily archive whose accession numbers, CIKs and names carry a token of
its own, so the shared graph's real filings are never touched, and removes what it wrote afterwards.
"""

from __future__ import annotations

import os
import signal
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cli import finkg

from finkg import api
from finkg.pipelines import memos
from finkg.pipelines import sec as pipelines
from ingest import runs
from ingest.sec.fsds import read_fsds
from kg import BatchWriter, cypher
from kg.ledger import Ledger
from retrieval.facts.fact_map import list_filings, read_fact_maps

pytestmark = pytest.mark.reliability("crash")

DAILY = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "20250404.zip"
KEEP = ("0001013237-25-000051", "0001023459-25-000032")  # FactSet (10-Q), Simulations Plus (10-Q)
STAGES = (
    "companies",
    "filings",
    "concepts",
    "facts",
    "evidence",
    "reports",  # the kill: every node written, no relationship yet
    "reports+1",  # half of the REPORTS links written
    "of_concept",
    "evidence_for",
    "facts#2",  # the second group of facts (a group is 4 batches: 400 facts here): the first group written whole
    "evidence_for#2",  # the second group's last links: every fact and chunk written, no FILED link yet
    "filed",
    "link",  # the filings are whole and visible; the run's LOADED links and its end are not written
    "done",
)
SMALL_BATCHES = {"FINKG_WRITER__BATCH_SIZE": "100"}  # several batches per stage, so "reports+1" is half-way, and
# two groups of facts (ingest.sec.fsds.GROUP_BATCHES batches each), so "facts#2" is half-way through a streamed ingest


class Copy:
    """A copy of the two kept filings under a token of its own (accession numbers, CIKs, company names)."""

    def __init__(self, folder: Path) -> None:
        self.token = f"zz{uuid.uuid4().hex[:8]}"
        base = 9_000_000_000 + int(self.token[2:], 16) % 10_000_000 * 10
        self.adsh = {a: f"{self.token}-{i:02d}" for i, a in enumerate(KEEP)}
        self.cik: dict[str, str] = {}
        self.path = folder / f"{self.token}.zip"
        with zipfile.ZipFile(DAILY) as src, zipfile.ZipFile(self.path, "w") as dst:
            for member in src.namelist():
                lines = src.read(member).decode("utf-8").split("\n")
                header = lines[0].rstrip("\r").split("\t")
                out = [lines[0]]
                for line in lines[1:]:
                    f = line.split("\t")
                    if f[0] not in self.adsh:
                        continue
                    if member == "sub.txt":
                        cik = header.index("cik")
                        self.cik.setdefault(f[cik], str(base + len(self.cik)))
                        f[cik] = self.cik[f[cik]]
                        f[header.index("name")] += f" {self.token}"
                    f[0] = self.adsh[f[0]]
                    out.append("\t".join(f))
                dst.writestr(member, "\n".join(out) + "\n")
        self.run_id = runs.run_id("sec-fsds", read_fsds(self.path).sha256)

    @property
    def adshs(self) -> list[str]:
        return sorted(self.adsh.values())

    def counts(self, graph) -> dict[str, int]:
        """What the graph holds of this copy (every node and relationship an ingest writes)."""
        p = {"t": self.token, "e": "evidence:" + self.token, "ciks": [int(c) for c in self.cik.values()]}
        q = (
            "CALL () { MATCH (f:Filing) WHERE f.adsh STARTS WITH $t RETURN count(f) AS filings }\n"
            "CALL () { MATCH (c:Company) WHERE c.cik IN $ciks RETURN count(c) AS companies }\n"
            "CALL () { MATCH (x:Fact) WHERE x.key STARTS WITH $t RETURN count(x) AS facts }\n"
            "CALL () { MATCH (c:Chunk) WHERE c.id STARTS WITH $e RETURN count(c) AS chunks }\n"
            "CALL () { MATCH (:Company)-[r:FILED]->(f:Filing) WHERE f.adsh STARTS WITH $t RETURN count(r) AS filed }\n"
            "CALL () { MATCH (:Filing)-[r:REPORTS]->(x:Fact) WHERE x.key STARTS WITH $t RETURN count(r) AS reports }\n"
            "CALL () { MATCH (x:Fact)-[r:OF_CONCEPT]->() WHERE x.key STARTS WITH $t RETURN count(r) AS of_concept }\n"
            "CALL () { MATCH (c:Chunk)-[r:EVIDENCE_FOR]->() WHERE c.id STARTS WITH $e RETURN count(r) AS evidence_for }\n"
            "CALL () { MATCH (:IngestRun)-[r:LOADED]->(f:Filing) WHERE f.adsh STARTS WITH $t RETURN count(r) AS loaded }\n"
            "RETURN filings, companies, facts, chunks, filed, reports, of_concept, evidence_for, loaded"
        )
        return graph.read(q, p)[0]

    def run(self, graph) -> dict:
        return graph.read("MATCH (r:IngestRun {id: $id}) RETURN r {.*} AS r", {"id": self.run_id})[0]["r"]

    def remove(self, graph) -> None:
        p = {"t": self.token, "e": "evidence:" + self.token, "ciks": [int(c) for c in self.cik.values()]}
        graph.run_autocommit("MATCH (c:Chunk) WHERE c.id STARTS WITH $e DETACH DELETE c", p)
        graph.run_autocommit("MATCH (x:Fact) WHERE x.key STARTS WITH $t DETACH DELETE x", p)
        graph.run_autocommit("MATCH (f:Filing) WHERE f.adsh STARTS WITH $t DETACH DELETE f", p)
        graph.run_autocommit("MATCH (c:Company) WHERE c.cik IN $ciks DETACH DELETE c", p)
        graph.run_autocommit("MATCH (m:Memo) WHERE m.id CONTAINS $t DETACH DELETE m", p)
        graph.run_autocommit("MATCH (c:Claim) WHERE c.id CONTAINS $t DETACH DELETE c", p)
        graph.run_autocommit("MATCH (r:IngestRun {id: $id}) DETACH DELETE r", {"id": self.run_id})


@pytest.fixture
def copies(graph, tmp_path) -> Iterator[list[Copy]]:
    """A factory of token copies (``copies.append(Copy(tmp_path))``); all are removed afterwards."""
    made: list[Copy] = []
    yield made
    for c in made:
        c.remove(graph)


def _new(copies: list[Copy], tmp_path: Path) -> Copy:
    c = Copy(tmp_path)
    copies.append(c)
    return c


@pytest.fixture(scope="module")
def clean_counts(graph, settings, tmp_path_factory) -> dict[str, int]:
    """The counts a clean ingest of a token copy leaves (in-process; removed at once)."""
    c = Copy(tmp_path_factory.mktemp("clean"))
    try:
        pipelines.ingest_sec(graph, settings, [c.path])
        counts = c.counts(graph)
        assert c.run(graph)["status"] == "done"
    finally:
        c.remove(graph)
    assert counts["filings"] == counts["filed"] == counts["loaded"] == 2 and counts["facts"] > 400
    assert counts["reports"] == counts["of_concept"] == counts["facts"] == counts["chunks"] == counts["evidence_for"]
    return counts


def _visible(graph, c: Copy) -> dict[str, int]:
    """What the readers see of a copy: filings (memo list), fact maps, company filings, evidence chunks."""
    filings = list_filings(graph, c.adshs)
    maps = list(read_fact_maps(graph, c.adshs))
    by_company = graph.read(cypher.COMPANY_FILINGS, {"cik": None, "name": c.token})
    evidence = [
        r
        for r in graph.read(cypher.EVIDENCE_CHUNKS_PAGE, {"after": "evidence:" + c.token, "limit": 2000})
        if r["id"].startswith("evidence:" + c.token)
    ]
    return {"filings": len(filings), "maps": len(maps), "company": len(by_company), "evidence": len(evidence)}


@pytest.mark.neo4j
@pytest.mark.parametrize("stage", STAGES)
def test_a_killed_ingest_is_interrupted_unseen_and_completed_by_a_rerun(graph, copies, tmp_path, stage, clean_counts):
    c = _new(copies, tmp_path)
    killed = finkg("ingest", "sec", str(c.path), env={runs.KILL_AT_ENV: stage, **SMALL_BATCHES})
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    run = c.run(graph)
    assert run["status"] == "running" and not runs.process_alive(run["pid"], run["proc_start"])

    half = c.counts(graph)
    seen = _visible(graph, c)
    if half["filed"] == 0:  # killed before the filings' last link: nothing of them is seen
        assert seen == {"filings": 0, "maps": 0, "company": 0, "evidence": 0}, (stage, half)
    else:  # FILED comes last: a filing in sight is whole
        assert stage in ("link", "done") and half["reports"] == clean_counts["reports"], (stage, half)
        assert seen == {"filings": 2, "maps": 2, "company": 2, "evidence": clean_counts["chunks"]}
    if stage == "reports+1":
        assert 0 < half["reports"] < clean_counts["reports"]  # the facts without REPORTS links

    status = api.schema_status(graph=graph)  # `finkg db status`: marks and shows the interrupted run
    shown = {r["id"]: r for r in status.unfinished_runs}
    assert shown[c.run_id]["status"] == "interrupted" and f"process {run['pid']}" in shown[c.run_id]["error"]
    assert c.run(graph)["status"] == "interrupted"
    assert status.hidden_filings >= half["filings"] - half["filed"]  # written but not in sight, and counted

    again = finkg("ingest", "sec", str(c.path))
    assert again.returncode == 0, again.stderr[-2000:]
    assert c.run(graph)["status"] == "done" and c.run(graph)["error"] == ""
    assert c.counts(graph) == clean_counts
    assert _visible(graph, c) == {"filings": 2, "maps": 2, "company": 2, "evidence": clean_counts["chunks"]}


@pytest.mark.neo4j
def test_the_next_ingest_marks_a_dead_run_interrupted_and_db_status_shows_it(graph, copies, tmp_path):
    dead, other = _new(copies, tmp_path), _new(copies, tmp_path)
    assert finkg("ingest", "sec", str(dead.path), env={runs.KILL_AT_ENV: "facts"}).returncode == -signal.SIGKILL
    assert dead.run(graph)["status"] == "running"
    assert finkg("ingest", "sec", str(other.path)).returncode == 0  # another file's ingest starts: it notices
    assert dead.run(graph)["status"] == "interrupted" and other.run(graph)["status"] == "done"
    shown = finkg("db", "status", "--format", "csv")
    assert shown.returncode == 0, shown.stderr
    line = next(x for x in shown.stdout.splitlines() if x.startswith(dead.run_id))
    assert ",interrupted," in line and "killed or crashed" in line


@pytest.mark.neo4j
def test_a_live_run_is_left_running(graph, copies, tmp_path, settings):
    c = _new(copies, tmp_path)
    writer = BatchWriter(graph)
    runs.start(writer, c.run_id, {"kind": "sec-fsds", "source": str(c.path)})  # this very process: alive
    assert all(r["id"] != c.run_id for r in runs.mark_interrupted(graph))
    assert c.run(graph)["status"] == "running" and c.run(graph)["pid"] == os.getpid()
    runs.finish(writer, c.run_id, {"rows": 0})
    assert c.run(graph)["status"] == "done"


@pytest.mark.neo4j
def test_a_memo_made_on_a_half_graph_is_redone_after_the_repair(graph, settings, copies, tmp_path):
    c = _new(copies, tmp_path)
    pipelines.ingest_sec(graph, settings, [c.path])
    factset = c.adsh[KEEP[0]]
    clean = tmp_path / "clean"
    memos.run_memos(graph, settings, clean, ["structured"], [factset])
    want = (clean / "structured" / f"{factset}.md").read_text()
    gap = "- Revenue: not applicable; not reported for the period"
    assert gap not in want

    # the half graph of the issue: the filing is listed but its revenue facts have no REPORTS link
    graph.write(
        "MATCH (:Filing {adsh: $a})-[r:REPORTS]->(x:Fact) WHERE x.tag STARTS WITH 'Revenue' DELETE r", {"a": factset}
    )
    out = tmp_path / "out"
    first = memos.run_memos(graph, settings, out, ["structured"], [factset])[0]
    half = (out / "structured" / f"{factset}.md").read_text()
    assert first.written == 1 and gap in half  # the wrong memo of the issue: a reported figure "not reported"
    assert memos.run_memos(graph, settings, out, ["structured"], [factset])[0].skipped_done == 1  # same facts

    assert finkg("ingest", "sec", str(c.path)).returncode == 0  # the repair: a re-ingest of the same archive
    redo = memos.run_memos(graph, settings, out, ["structured"], [factset])[0]
    assert (redo.written, redo.skipped_done) == (1, 0)  # the facts' digest changed: the memo is made again
    assert (out / "structured" / f"{factset}.md").read_text() == want
    n = graph.read(
        "MATCH (:Memo {id: $id})-[:HAS_CLAIM]->(k:Claim) RETURN count(k) AS n", {"id": f"structured:{factset}"}
    )
    claims = (clean / "structured" / "claims" / f"{factset}.jsonl").read_text().splitlines()
    assert n == [{"n": len(claims)}]  # the half memo's claims were replaced, not added to
    state = Ledger(graph, "Memo").state([f"structured:{factset}"])[f"structured:{factset}"]
    assert state["status"] == "done" and state["error"] == "" and state["attempts"] == 3
