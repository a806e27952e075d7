#!/usr/bin/env bash
# Makes sure this checkout has its virtual environment, then prints the environment's path.
#
# Two environments. The dependencies live outside the clone, in $FINKG_CACHE (default ~/.cache/finkg), in a
# shared environment named by the hash of requirements.lock, the uv version, the Python version and the build
# flavour: a second clone or a CI run with the same lock reuses it, a changed lock builds a new one. An
# interrupted build is detected (no .complete stamp) and redone. The project itself is installed per clone,
# in <clone>/.venv (ignored by git; made in a few seconds), the path printed: an environment of the same
# Python that sees the shared one's packages after its own (a .pth file), holds this clone installed in
# editable mode (no dependencies), and has in its bin/ the shared environment's commands (ruff, pyright,
# lint-imports, pytest, llama-server, ...), those written in Python run by its own interpreter. So `finkg` in
# each clone runs that clone's code, whichever clone was bootstrapped last (tests/test_clones.py).
#
# FINKG_SHARED_READONLY=1 uses the shared environment as it is and never writes to it: one that is missing or
# incomplete is an error (exit 3), not a build. One bootstrap runs at a time per cache (a lock file in it).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${FINKG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/finkg}
UV_VERSION=0.13.9
# Trust the platform certificate store (corporate proxies, custom CAs), as pip does via certifi + SSL_CERT_FILE.
export UV_SYSTEM_CERTS=${UV_SYSTEM_CERTS:-1}
# llama-cpp-python (the local LLM backend) is built from source on first install (a few minutes on 2
# cores). The default build is portable: no -march=native, so a wheel built here runs on any x86-64
# CPU with AVX2/FMA/F16C (x86-64-v3; every machine this project runs on), whatever CPU the cache later
# lands on. A native build (FINKG_LLAMA_NATIVE=1) is opt-in, and it is cached under a key that includes
# this CPU's feature flags, so no other CPU ever reuses it. An explicit CMAKE_ARGS is honoured and keyed too.
if [ -z "${CMAKE_ARGS:-}" ]; then
  if [ "${FINKG_LLAMA_NATIVE:-0}" = 1 ]; then
    CMAKE_ARGS="-DGGML_NATIVE=ON"
  elif [ "$(uname -m)" = x86_64 ]; then
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  else
    CMAKE_ARGS="-DGGML_NATIVE=OFF"
  fi
fi
export CMAKE_ARGS
BUILD_FLAVOUR="cmake=$CMAKE_ARGS"
case "$CMAKE_ARGS" in
  *GGML_NATIVE=ON*|*march=native*|*mcpu=native*)
    # a CPU-tuned binary: key it by this CPU's model and flags
    BUILD_FLAVOUR="$BUILD_FLAVOUR cpu=$( (grep -m1 -E '^(model name|flags|Features)' /proc/cpuinfo; grep -m1 -E '^flags' /proc/cpuinfo) 2>/dev/null | sha256sum | cut -c1-16)" ;;
esac
FLAVOUR_KEY=$(echo "$BUILD_FLAVOUR" | sha256sum | cut -c1-12)
# uv caches built wheels by source, not by CMAKE_ARGS: one uv cache per build flavour.
export UV_CACHE_DIR=${UV_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/finkg/uv-cache-$FLAVOUR_KEY}

PY=${FINKG_PYTHON:-}
if [ -z "$PY" ]; then
  for cand in python3.11 python3 python; do
    if command -v "$cand" >/dev/null 2>&1; then PY=$(command -v "$cand"); break; fi
  done
fi
if [ -z "$PY" ] || ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "finkg needs Python >= 3.11 (found: ${PY:-none}); install it or set FINKG_PYTHON" >&2
  exit 1
fi
PYVER=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

mkdir -p "$CACHE"
# One bootstrap at a time per cache: two first runs would build the same environment over each other, two
# runs in one clone would make its environment over each other.
exec 9>>"$CACHE/.bootstrap.lock"
if command -v flock >/dev/null 2>&1 && ! flock -n 9; then
  echo "bootstrap: waiting for another bootstrap to finish ($CACHE/.bootstrap.lock)" >&2
  flock 9
fi
READONLY=${FINKG_SHARED_READONLY:-0}
shared_missing() {
  if [ "$READONLY" = 1 ]; then
    echo "bootstrap: $1 is missing or incomplete, and FINKG_SHARED_READONLY=1 forbids building it" >&2
    exit 3
  fi
}

UV_HOME="$CACHE/uv-$UV_VERSION"
if [ ! -x "$UV_HOME/bin/uv" ]; then
  shared_missing "$UV_HOME"
  echo "bootstrap: installing uv $UV_VERSION into $UV_HOME" >&2
  rm -rf "$UV_HOME"
  "$PY" -m venv "$UV_HOME" >&2
  "$UV_HOME/bin/pip" install -q "uv==$UV_VERSION" >&2
fi
UV="$UV_HOME/bin/uv"

# The shared environment: the dependencies of requirements.lock (the project is not installed in it).
KEY=$( (cat "$ROOT/requirements.lock"; echo "uv=$UV_VERSION python=$PYVER $BUILD_FLAVOUR") | sha256sum | cut -c1-16)
VENV="$CACHE/venv-py$PYVER-$KEY"
if [ ! -f "$VENV/.complete" ]; then
  shared_missing "$VENV"
  echo "bootstrap: building the virtual environment $VENV from requirements.lock (first run: a few minutes)" >&2
  rm -rf "$VENV"
  "$UV" venv -q --python "$PY" "$VENV" >&2
  VIRTUAL_ENV="$VENV" "$UV" pip sync -q --require-hashes "$ROOT/requirements.lock" >&2
  touch "$VENV/.complete"
fi
# llama.cpp's HTTP server ([llm] backend = "llama-server": parallel slots, continuous batching), built from
# the same llama.cpp sources with the same CMAKE_ARGS, cached by version and build flavour.
if [ ! -x "$VENV/bin/llama-server" ]; then
  shared_missing "$VENV/bin/llama-server"
  CMAKE_ARGS="$CMAKE_ARGS" FLAVOUR_KEY="$FLAVOUR_KEY" FINKG_PYTHON="$PY" FINKG_CACHE="$CACHE" \
    bash "$ROOT/scripts/build-llama-server.sh" "$VENV" >&2
fi

# This clone's environment. Its stamp says what it was made from: the shared environment and the clone's
# path (line 1: another one makes it anew), the project's metadata and the shared environment's commands
# (line 2: another one installs the clone again and adds the new commands).
ENV="$ROOT/.venv"
STAMP="$ENV/.finkg-env"
MADE="shared=$VENV root=$ROOT"
INSTALLED="project=$(sha256sum <"$ROOT/pyproject.toml" | cut -c1-16) commands=$(ls -1 "$VENV/bin" | sha256sum | cut -c1-16)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$(printf '%s\n%s' "$MADE" "$INSTALLED")" ]; then
  if [ "$(head -n 1 "$STAMP" 2>/dev/null)" != "$MADE" ]; then
    if [ -e "$ENV" ] && [ ! -f "$STAMP" ]; then
      echo "bootstrap: $ENV was not made by scripts/bootstrap.sh; move it away and run again" >&2
      exit 1
    fi
    echo "bootstrap: making this clone's environment $ENV" >&2
    rm -rf "$ENV"
    "$UV" venv -q --python "$VENV/bin/python" "$ENV" >&2
    printf '%s\nbeing made\n' "$MADE" >"$STAMP"
  fi
  VIRTUAL_ENV="$ENV" "$UV" pip install -q --no-deps -e "$ROOT" >&2
  # The link to the shared packages and the shared commands (see the docstrings written below).
  "$ENV/bin/python" -I - "$VENV" <<'EOF'
import os
import sys
import sysconfig
from pathlib import Path

shared = Path(sys.argv[1])
own_packages = Path(sysconfig.get_path("purelib"))
shared_packages = shared / own_packages.relative_to(sys.prefix)
if not shared_packages.is_dir():
    sys.exit(f"bootstrap: {shared_packages} is not a folder")
LINK = f'''"""Written by scripts/bootstrap.sh: this environment sees the packages of the shared one, after its own.

The shared site-packages' .pth files are read as Python reads its own, except a finkg install an older bootstrap
left there: this clone's finkg is the one installed here, and the only one this environment imports.
"""

import os
import site
import sys

SHARED = {str(shared_packages)!r}
if SHARED not in sys.path:
    sys.path.append(SHARED)
    for _name in sorted(os.listdir(SHARED)):
        if _name.endswith(".pth") and not _name.startswith("__editable__.finkg-"):
            site.addpackage(SHARED, _name, None)
'''
(own_packages / "_finkg_shared_env.py").write_text(LINK, encoding="utf-8")
(own_packages / "_finkg_shared_env.pth").write_text("import _finkg_shared_env\n", encoding="utf-8")

# The shared environment's commands: a console script (its first lines name the shared interpreter) is
# copied with this environment's interpreter in its place, so it imports this clone's finkg; any other
# (a binary: ruff, llama-server) is a link.
own_bin, shared_bin = Path(sys.prefix) / "bin", shared / "bin"
old, new = str(shared_bin / "python").encode(), str(own_bin / "python").encode()
for exe in sorted(shared_bin.iterdir()):
    mine = own_bin / exe.name
    if mine.exists() or mine.is_symlink() or not exe.is_file() or not os.access(exe, os.X_OK):
        continue  # this environment's own (python, activate, finkg), or no command
    with open(exe, "rb") as f:
        head = f.read(1024)
    first = head.split(b"\n", 2)[:2]
    if head.startswith(b"#!") and any(old in line for line in first):
        lines = exe.read_bytes().split(b"\n", 2)
        lines[:2] = [line.replace(old, new) for line in lines[:2]]
        mine.write_bytes(b"\n".join(lines))
        mine.chmod(0o755)
    else:
        mine.symlink_to(exe)
EOF
  if ! "$ENV/bin/python" -I -c 'import sys, finkg, typer; sys.exit(not finkg.__file__.startswith(sys.argv[1]))' "$ROOT/"; then
    echo "bootstrap: $ENV does not import this clone's finkg and the shared packages; remove it and run again" >&2
    exit 1
  fi
  printf '%s\n%s\n' "$MADE" "$INSTALLED" >"$STAMP"
fi
echo "$ENV"
