#!/usr/bin/env bash
# Makes sure this checkout has its virtual environment, then prints the environment's path.
#
# The environment lives outside the clone, in $FINKG_CACHE (default ~/.cache/finkg), under a
# name keyed by the hash of requirements.lock, the uv version and the Python version: a second
# clone or a CI run with the same lock reuses it, a changed lock builds a new one. An
# interrupted build is detected (no .complete stamp) and redone. The checkout itself is
# installed into it in editable mode (no dependencies), which takes a second.
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
UV_HOME="$CACHE/uv-$UV_VERSION"
if [ ! -x "$UV_HOME/bin/uv" ]; then
  echo "bootstrap: installing uv $UV_VERSION into $UV_HOME" >&2
  rm -rf "$UV_HOME"
  "$PY" -m venv "$UV_HOME" >&2
  "$UV_HOME/bin/pip" install -q "uv==$UV_VERSION" >&2
fi
UV="$UV_HOME/bin/uv"

KEY=$( (cat "$ROOT/requirements.lock"; echo "uv=$UV_VERSION python=$PYVER $BUILD_FLAVOUR") | sha256sum | cut -c1-16)
VENV="$CACHE/venv-py$PYVER-$KEY"
if [ ! -f "$VENV/.complete" ]; then
  echo "bootstrap: building the virtual environment $VENV from requirements.lock (first run: a few minutes)" >&2
  rm -rf "$VENV"
  "$UV" venv -q --python "$PY" "$VENV" >&2
  VIRTUAL_ENV="$VENV" "$UV" pip sync -q --require-hashes "$ROOT/requirements.lock" >&2
  touch "$VENV/.complete"
fi
VIRTUAL_ENV="$VENV" "$UV" pip install -q --no-deps -e "$ROOT" >&2
# llama.cpp's HTTP server ([llm] backend = "llama-server": parallel slots, continuous batching), built from
# the same llama.cpp sources with the same CMAKE_ARGS, cached by version and build flavour.
if [ ! -x "$VENV/bin/llama-server" ]; then
  CMAKE_ARGS="$CMAKE_ARGS" FLAVOUR_KEY="$FLAVOUR_KEY" FINKG_PYTHON="$PY" FINKG_CACHE="$CACHE" \
    bash "$ROOT/scripts/build-llama-server.sh" "$VENV" >&2
fi
echo "$VENV"
