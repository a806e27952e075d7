#!/usr/bin/env bash
# Builds llama.cpp's HTTP server (`llama-server`, the `[llm] backend = "llama-server"` of finkg: several
# parallel slots with continuous batching) and links it into a virtual environment's bin/.
#
#   bash scripts/build-llama-server.sh VENV        (scripts/bootstrap.sh calls it; a few minutes, once)
#
# The sources are the llama.cpp tree inside the sdist of the llama-cpp-python release pinned in
# requirements.lock (the same llama.cpp the Python backend runs): taken from uv's cache when the wheel was
# built there, else downloaded from the package index
# (PyPI's simple API, or UV_INDEX_URL / PIP_INDEX_URL) and checked against the lock's sha256 hashes. The build uses the
# same CMAKE_ARGS as the wheel (portable by default: AVX2/FMA/F16C, no -march=native), and is cached in
# $FINKG_CACHE/llama-server-<version>-<flavour key>, where bootstrap.sh's flavour key includes the CPU for a
# native build, so no other CPU ever reuses a CPU-tuned binary. A failed build leaves nothing behind.
set -euo pipefail

VENV=$1
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${FINKG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/finkg}
: "${CMAKE_ARGS:?CMAKE_ARGS is set by scripts/bootstrap.sh}"
: "${FLAVOUR_KEY:?FLAVOUR_KEY is set by scripts/bootstrap.sh}"
VERSION=$(sed -n 's/^llama-cpp-python==\([^ ]*\).*/\1/p' "$ROOT/requirements.lock" | head -1)
[ -n "$VERSION" ] || { echo "build-llama-server: no llama-cpp-python pin in requirements.lock" >&2; exit 1; }
OUT="$CACHE/llama-server-$VERSION-$FLAVOUR_KEY"

if [ ! -x "$OUT/llama-server" ]; then
  echo "bootstrap: building llama.cpp's llama-server $VERSION into $OUT (first run: a few minutes)" >&2
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/finkg-llama-server.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  SRC=""
  for d in "${UV_CACHE_DIR:-/nonexistent}"/sdists-v*/pypi/llama-cpp-python/"$VERSION"/*/src/vendor/llama.cpp; do
    if [ -f "$d/tools/server/server.cpp" ]; then SRC=$d; break; fi
  done
  if [ -z "$SRC" ]; then
    # the sdist from the index, checked against every sha256 the lock lists for the pin
    HASHES=$(awk -v pin="llama-cpp-python==$VERSION" '$1 == pin {on = 1; next} on && /--hash=sha256:/ {sub(/.*--hash=sha256:/, ""); sub(/[ \\].*/, ""); print; next} on {exit}' "$ROOT/requirements.lock")
    "${FINKG_PYTHON:-python3}" - "$VERSION" "$WORK/sdist.tar.gz" "$HASHES" <<'EOF'
import hashlib, os, re, sys, urllib.parse, urllib.request
version, dest, hashes = sys.argv[1], sys.argv[2], set(sys.argv[3].split())
index = (os.environ.get("UV_INDEX_URL") or os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple").rstrip("/")
page = f"{index}/llama-cpp-python/"
html = urllib.request.urlopen(page, timeout=60).read().decode("utf-8", "replace")
name = f"llama_cpp_python-{version}.tar.gz"
links = [h for h in re.findall(r'href="([^"]+)"', html) if h.split("#")[0].endswith("/" + name) or h.split("#")[0] == name]
if not links:
    sys.exit(f"build-llama-server: {page} lists no {name}")
data = urllib.request.urlopen(urllib.parse.urljoin(page, links[0].split("#")[0]), timeout=600).read()
digest = hashlib.sha256(data).hexdigest()
if digest not in hashes:
    sys.exit(f"build-llama-server: {name} has sha256 {digest}, not one of requirements.lock's")
open(dest, "wb").write(data)
EOF
    tar -xzf "$WORK/sdist.tar.gz" -C "$WORK"
    SRC=$(echo "$WORK"/llama_cpp_python-*/vendor/llama.cpp)
  fi
  # shellcheck disable=SC2086  # CMAKE_ARGS is a list of flags
  cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release $CMAKE_ARGS -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >"$WORK/cmake.log" 2>&1 \
    || { tail -20 "$WORK/cmake.log" >&2; exit 1; }
  cmake --build "$WORK/build" --target llama-server -j"$(nproc)" >"$WORK/build.log" 2>&1 \
    || { tail -30 "$WORK/build.log" >&2; exit 1; }
  mkdir -p "$OUT.tmp"
  cp "$WORK/build/bin/llama-server" "$OUT.tmp/llama-server"
  rm -rf "$OUT"
  mv "$OUT.tmp" "$OUT"
fi
ln -sfn "$OUT/llama-server" "$VENV/bin/llama-server"
