"""No stray processes (issue 45 item 6): a ``llama-server`` finkg starts stops when the command that started it
ends, whatever the reason: SIGKILL or SIGTERM of the command (the Linux parent-death signal,
kg/processes.py), Ctrl-C (SIGINT) or an exception (atexit).

Each case is real: a Python subprocess starts a llama-server with SmolLM2 through finkg's own backend
(:class:`generation.llm.server.LlamaServerBackend`), prints the server's pid and waits; the test ends that
parent as a user or the system would and watches the server's pid disappear. No mock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_llm import smol_gguf

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux only"),
]

ROOT = Path(__file__).resolve().parents[1]

# The command: start the server (from the main thread, or from a worker thread that then ends, as a
# ThreadPoolExecutor answering questions does), print its pid, then wait -- or fail, for the exception case.
PARENT = textwrap.dedent(
    """
    import sys, threading, time
    from generation.llm.server import LlamaServerBackend

    backend = LlamaServerBackend(sys.argv[1], n_ctx=512, parallel=1, n_threads=1)
    if sys.argv[2] == "thread":
        worker = threading.Thread(target=backend.start)
        worker.start()
        worker.join()  # the thread that asked for the server has ended; the server must still serve
    else:
        backend.start()
    print(backend._proc.pid, flush=True)
    line = sys.stdin.readline()
    if line.strip() == "fail":
        raise RuntimeError("the command failed")
    time.sleep(600)
    """
)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its new parent, counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_within(pid: int, seconds: float) -> bool:
    """Whether ``pid`` stops running within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return not alive(pid)


def start_parent(started_in: str) -> tuple[subprocess.Popen[str], int]:
    """The command, started; returns it and its llama-server's pid (running, a process of its own group)."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(smol_gguf()), started_in],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()
    if not line.strip():
        parent.kill()
        pytest.fail(f"the command did not start its llama-server: {parent.communicate()[1][-2000:]}")
    pid = int(line)
    assert alive(pid) and "llama-server" in Path(f"/proc/{pid}/cmdline").read_text()
    assert os.getpgid(pid) == pid != os.getpgid(parent.pid)  # its own process group: a Ctrl-C misses it
    return parent, pid


@pytest.mark.parametrize(
    ("started_in", "ending"),
    [
        ("main", signal.SIGKILL),
        ("thread", signal.SIGKILL),
        ("main", signal.SIGTERM),
        ("main", signal.SIGINT),
        ("main", "exception"),
    ],
)
def test_the_llama_server_stops_when_its_command_ends_for_any_reason(started_in, ending):
    parent, pid = start_parent(started_in)
    try:
        if started_in == "thread":
            time.sleep(1.0)  # the thread that forked it ended: the kernel must not take that for the parent's death
            assert alive(pid)
        if ending == "exception":
            parent.communicate("fail\n", timeout=180)  # loaded cores: the server's stop takes its time
            assert parent.returncode == 1
        else:
            parent.send_signal(ending)
            parent.wait(timeout=180)
            assert parent.returncode == -ending or (ending == signal.SIGINT and parent.returncode == 1)
        assert gone_within(pid, 20), f"llama-server {pid} outlived its command ({ending!r})"
    finally:
        parent.kill()
        parent.wait()
        if alive(pid):  # the test failed: do not leave the stray behind
            os.kill(pid, signal.SIGKILL)
