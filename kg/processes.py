"""Server processes that stop with the finkg command that started them (issue 45: no stray processes).

finkg starts long-lived servers as child processes: a ``llama-server`` for a GGUF model
(:mod:`generation.llm.server`) and, for the test suite, private Neo4j servers (:mod:`finkg.neo4j_server`).
Such a child must not outlive its command, however that command ends:

- **an exception or a normal exit**: the caller stops it in a ``finally`` or an :mod:`atexit` handler;
- **Ctrl-C (SIGINT)**: the child runs in its own process group (``start_new_session``), so the terminal's
  signal reaches only the command, which unwinds (``KeyboardInterrupt``) and runs those same handlers;
- **SIGTERM or SIGKILL of the command** (no Python code runs): on Linux the child asks the kernel, between
  ``fork`` and ``exec``, for SIGTERM when its parent dies (``prctl(PR_SET_PDEATHSIG, SIGTERM)``, through
  ctypes on the C library). Linux only: on other systems the first two promises hold, this one does not.

The kernel sends the parent-death signal when the *thread* that forked the child ends, not the process. A
server started lazily from a worker thread (a ``ThreadPoolExecutor`` answering questions) would be
killed when that pool shuts down, so :func:`spawn` forks from the main thread or, when called from another
thread, from one long-lived daemon thread of this module, which ends only with the process.

It lives in ``kg``, the lowest layer, so that both ``generation`` and ``finkg`` can use it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from queue import SimpleQueue
from typing import Any

__all__ = ["PR_SET_PDEATHSIG", "parent_death_hook", "spawn"]

PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal this process gets when its parent thread dies (linux/prctl.h)."""

_prctl: Any = None


def parent_death_hook(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen` that ties the child to this process (Linux; None elsewhere).

    In the forked child, before ``exec``, it calls ``prctl(PR_SET_PDEATHSIG, sig)``; if this process died
    between the fork and that call (the child was already handed to another parent, so no signal would
    come), the child exits at once. The C function is looked up here, in the parent, so the child only calls
    it (no library loading after ``fork``).

    Args:
        sig: the signal the child gets when the thread that forked it ends (default SIGTERM: servers shut
            down cleanly on it).
    """
    global _prctl
    if not sys.platform.startswith("linux"):
        return None
    if _prctl is None:
        _prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl, parent = _prctl, os.getpid()

    def tie() -> None:
        prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent is already gone
            os._exit(1)

    return tie


_Request = tuple[Callable[[], subprocess.Popen[bytes]], Future[subprocess.Popen[bytes]]]
"""A start function for the spawner thread and the future its process is handed back in."""

_spawner: tuple[int, SimpleQueue[_Request]] | None = None
_spawner_lock = threading.Lock()


def _spawner_loop(requests: SimpleQueue[_Request]) -> None:
    """The long-lived thread that forks tied children for other threads (see the module doc)."""
    while True:
        start, done = requests.get()
        try:
            done.set_result(start())
        except BaseException as exc:  # handed to the waiting caller, who raises it
            done.set_exception(exc)


def _in_spawner_thread(start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """Run ``start`` in this process's spawner thread (started on first use; a forked process starts its own)."""
    global _spawner
    with _spawner_lock:
        if _spawner is None or _spawner[0] != os.getpid():
            requests: SimpleQueue[_Request] = SimpleQueue()
            threading.Thread(target=_spawner_loop, args=(requests,), name="finkg-spawner", daemon=True).start()
            _spawner = (os.getpid(), requests)
        queue = _spawner[1]
    done: Future[subprocess.Popen[bytes]] = Future()
    queue.put((start, done))
    return done.result()


def spawn(args: Sequence[str | Path], *, tie: bool = True, **popen: Any) -> subprocess.Popen[bytes]:
    """Start a server process in its own process group, tied to this process unless ``tie`` is False.

    Args:
        args: the command line. popen: further :class:`subprocess.Popen` keywords (``stdout``, ``env``,
            ``cwd``...; binary streams; not ``preexec_fn`` or ``start_new_session``, which this sets).
        tie: True: on Linux the child gets SIGTERM when this process dies, even by SIGKILL (see the module
            doc); the caller still stops it in ``finally``/``atexit`` for the other endings. False: only its
            own process group (a server meant to outlive the command, e.g. ``finkg neo4j start``).

    Returns:
        The started process.

    Raises:
        OSError: the program cannot be started. ValueError: ``preexec_fn`` or ``start_new_session`` given.
    """
    if "preexec_fn" in popen or "start_new_session" in popen:
        raise ValueError("spawn sets preexec_fn and start_new_session itself")
    hook = parent_death_hook() if tie else None

    def start() -> subprocess.Popen[bytes]:
        proc: subprocess.Popen[bytes] = subprocess.Popen(  # pyright: ignore[reportAssignmentType]  # binary streams
            list(args), start_new_session=True, preexec_fn=hook, **popen
        )
        return proc

    if hook is None or threading.current_thread() is threading.main_thread():
        return start()
    return _in_spawner_thread(start)
