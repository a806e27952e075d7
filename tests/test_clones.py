"""Each clone runs its own code (issue 47, item 6).

scripts/bootstrap.sh keeps the dependencies in one environment shared by every clone (in ``$FINKG_CACHE``) and
installs the clone itself into an environment of its own, ``<clone>/.venv``. Here two copies of this checkout
(its files as they are now, so an uncommitted change of bootstrap.sh is what is tested), each with a version of
its own, are bootstrapped one after the other against the real cache: each one's ``finkg`` runs that copy's code,
also after the other one was bootstrapped, and finds the shared environment's commands beside its interpreter.
``FINKG_SHARED_READONLY=1`` makes bootstrap use the shared environment as it is (never build or change it), and
the test checks that nothing in the cache's environments changed. About 10-20 s (an editable install per copy).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.clones

ROOT = Path(__file__).resolve().parents[1]


def cache() -> Path:
    """The cache bootstrap.sh uses: ``$FINKG_CACHE``, default ``~/.cache/finkg``."""
    root = os.environ.get("FINKG_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "finkg"
    return Path(root)


def shared_environments() -> dict[str, tuple[float, list[str], list[str]]]:
    """Every shared environment in the cache: its ``.complete`` stamp's mtime, what its site-packages and bin/ hold
    (not the bytecode Python caches there)."""
    found = {}
    for venv in sorted(cache().glob("venv-py*")):
        stamp = venv / ".complete"
        packages = sorted(p.name for p in venv.glob("lib/python*/site-packages/*") if p.name != "__pycache__")
        commands = sorted(os.listdir(venv / "bin")) if (venv / "bin").is_dir() else []
        found[venv.name] = (stamp.stat().st_mtime if stamp.exists() else -1.0, packages, commands)
    return found


def copy_checkout(dest: Path, version: str) -> Path:
    """A copy of this checkout's files (tracked, and untracked ones git does not ignore) whose ``finkg.__version__``
    is ``version``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    for name in filter(None, listed.split(b"\0")):
        src = ROOT / os.fsdecode(name)
        if src.is_file() and not src.is_symlink():
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / os.fsdecode(name))
    init = dest / "finkg" / "__init__.py"
    text, n = re.subn(
        r'^__version__ = ".*"$', f'__version__ = "{version}"', init.read_text(encoding="utf-8"), flags=re.M
    )
    assert n == 1, "finkg/__init__.py sets __version__ in one line"
    init.write_text(text, encoding="utf-8")
    return dest


def bootstrap(clone: Path) -> Path:
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    env["FINKG_SHARED_READONLY"] = "1"
    out = subprocess.run(
        ["bash", str(clone / "scripts" / "bootstrap.sh")], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, f"bootstrap of {clone} failed:\n{out.stderr}"
    return Path(out.stdout.strip())


def run(exe: Path, *args: str, cwd: Path) -> str:
    """``exe args`` from ``cwd`` (not the clone: the current folder must not be where finkg is found)."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    out = subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)
    assert out.returncode == 0, f"{exe} {' '.join(args)}:\n{out.stderr}"
    return out.stdout.strip()


ORIGIN = "import importlib.util as u; s = u.find_spec('finkg'); print(s and s.origin)"
WHERE = "import finkg, generation.llm.server as s; print(finkg.__version__, finkg.__file__, s.default_server_path())"


def test_two_clones_each_run_their_own_finkg(tmp_path):
    before = shared_environments()
    a = copy_checkout(tmp_path / "a", "0.1.0+clone-a")
    b = copy_checkout(tmp_path / "b", "0.1.0+clone-b")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    assert bootstrap(a) == a / ".venv"
    made = (a / ".venv" / "pyvenv.cfg").stat().st_mtime_ns
    assert bootstrap(b) == b / ".venv"
    assert bootstrap(a) == a / ".venv"  # up to date: nothing made again
    assert (a / ".venv" / "pyvenv.cfg").stat().st_mtime_ns == made

    for clone, version in ((a, "0.1.0+clone-a"), (b, "0.1.0+clone-b")):
        env = clone / ".venv"
        assert run(env / "bin" / "finkg", "--version", cwd=elsewhere) == f"finkg {version}"
        got_version, got_file, server = run(env / "bin" / "python", "-c", WHERE, cwd=elsewhere).split(" ")
        assert (got_version, got_file) == (version, str(clone / "finkg" / "__init__.py"))
        # the shared environment's commands stand beside this interpreter: binaries linked, Python scripts
        # run by this environment's interpreter (so lint-imports and pytest import this clone's packages)
        shared = Path((env / ".finkg-env").read_text(encoding="utf-8").split()[0].removeprefix("shared="))
        assert (shared / ".complete").is_file() and shared.name in before  # reused, not built
        if (shared / "bin" / "llama-server").exists():
            assert server == str(env / "bin" / "llama-server")
        assert (env / "bin" / "ruff").resolve() == (shared / "bin" / "ruff").resolve()
        first_line = (env / "bin" / "lint-imports").read_text(encoding="utf-8").splitlines()[0]
        assert first_line == f"#!{env}/bin/python"
        # the defect: bootstrap installed the clone into the shared environment, for every clone to run
        origin = run(shared / "bin" / "python", "-I", "-c", ORIGIN, cwd=elsewhere)
        assert str(tmp_path) not in origin

    # the shared environments are as they were: the same stamps, packages and commands, none naming a copy
    assert shared_environments() == before
    for venv in cache().glob("venv-py*"):
        for f in venv.glob("lib/python*/site-packages/*.pth"):
            assert str(tmp_path) not in f.read_text(encoding="utf-8", errors="replace"), f
