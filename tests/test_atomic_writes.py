"""Two runs writing the same output file at once (issue 47, item 5): each writer uses a uniquely named
temporary file beside the target (kg.atomic), so both finish without an error and the target is one whole
file. Real files under tmp_path, real threads and processes; no temporary file is left behind."""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from finkg import plots
from finkg.eval.checkpoint import ItemLog
from finkg.output import write_text_atomic
from kg import atomic

ROUNDS = 20


def _race(n: int, work: Callable[[int], object]) -> list[BaseException]:
    """Run ``work(i)`` in ``n`` threads released together; the exceptions they raised."""
    start = threading.Barrier(n)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        start.wait()
        try:
            for _ in range(ROUNDS):
                work(i)
        except BaseException as exc:  # every failure is the finding
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _only(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_two_threads_drawing_one_memo_plot_end_with_one_whole_png(tmp_path):
    """The memo's peer chart (``<adsh>.png``): before the fix both threads renamed ``<adsh>.part.png`` and one
    died with FileNotFoundError."""
    dots = [plots.PeerDot(f"peer {i}", 0.3 + i / 50, 1.0 + i / 10) for i in range(12)]
    target = tmp_path / "0000000000-09-000001.png"

    def draw(i: int) -> None:
        chart = plots.PeerChart(dots, caption="twelve peers")  # one chart per thread, as the memo pipeline has
        chart.draw(plots.PeerDot(f"filer {i}", 0.5, 1.5), target, title=f"run {i}")

    assert _race(2, draw) == []
    with Image.open(target) as im:
        im.load()  # the whole file decodes
        assert im.format == "PNG" and im.width > 300
    assert _only(tmp_path) == [target.name]


def test_the_plot_writer_lets_overlapping_writes_of_one_file_both_finish(tmp_path):
    """Every picture goes through the plot module's one writer; here each write lasts long enough that the
    writers always overlap (a fixed temporary name fails this every time)."""
    target = tmp_path / "curve.png"

    def write(i: int) -> None:
        def slow(tmp: Path) -> None:
            Image.new("RGB", (64 + i, 32), (i * 60, 0, 0)).save(tmp, format="PNG")
            time.sleep(0.02)

        plots._atomic(target, slow)

    assert _race(3, write) == []
    with Image.open(target) as im:
        im.load()
        assert im.size in {(64 + i, 32) for i in range(3)}
    assert _only(tmp_path) == [target.name]


def test_threads_writing_one_text_file_never_mix_or_fail(tmp_path):
    target = tmp_path / "out" / "summary.json"
    bodies = [json.dumps({"writer": i, "pad": str(i) * 200_000}) for i in range(4)]
    assert _race(4, lambda i: write_text_atomic(target, bodies[i])) == []
    assert target.read_text(encoding="utf-8") in bodies  # one writer's text, whole
    assert _only(target.parent) == ["summary.json"]


def test_threads_rewriting_one_checkpoint_end_with_one_writers_records(tmp_path):
    path = tmp_path / "answers.jsonl"
    sets = [[{"id": f"{i}-{k}", "answer": i} for k in range(2_000)] for i in range(3)]
    assert _race(3, lambda i: ItemLog(path, "answers").rewrite(sets[i])) == []
    got = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert got in sets
    assert _only(tmp_path) == ["answers.jsonl"]


def _write_in_process(target: str, i: int, start: Any) -> None:
    start.wait()
    for _ in range(ROUNDS):
        atomic.write_text(Path(target), f"process {i}\n" * 100_000)


def test_two_processes_writing_one_file_both_finish(tmp_path):
    target = tmp_path / "report.md"
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_write_in_process, args=(str(target), i, start)) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    assert target.read_text() in {f"process {i}\n" * 100_000 for i in range(2)}
    assert _only(tmp_path) == ["report.md"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "memo.md"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="disk on fire"), atomic.replacing(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("disk on fire")
    assert target.read_text() == "old"
    assert _only(tmp_path) == ["memo.md"]


def test_new_files_get_the_usual_mode_not_mkstemps_private_one(tmp_path):
    target = atomic.write_text(tmp_path / "x.txt", "x")
    assert target.stat().st_mode & 0o777 == atomic.FILE_MODE
