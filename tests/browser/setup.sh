#!/usr/bin/env bash
# Installs what tests/browser.rs needs:
#
#   chromium              Debian's package (apt-get), skipped when a chromium is on PATH
#   $ROOT/.interop/browser npm project from tests/browser/package.json + package-lock.json:
#                         the TypeScript SDK, esbuild (bundles the page) and playwright-core
#                         (drives chromium; it downloads no browser of its own)
#   $ROOT/.interop/browser-apps
#                         npm project from tests/browser/apps/package.json + package-lock.json:
#                         @modelcontextprotocol/ext-apps (the MCP Apps host and app APIs) with
#                         the TypeScript SDK v2 client it builds on, esbuild and playwright-core
#
# Safe to run again and again: the npm half keeps a stamp holding a hash of its pin files and is
# skipped while it matches. Logs go to stderr; stdout stays empty.
#
# Exit status: 0 ready; 3 chromium is missing and cannot be installed here (not root, or no
# apt-get, or the install failed): tests/browser.rs then skips, unless MCP_BROWSER_REQUIRED=1
# (scripts/test-all sets it); 1 anything else.
#
# Environment: NPM (default npm), CHROMIUM (a chromium to use instead of the one on PATH).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$ROOT/.interop"
NODE_DIR="$OUT/browser"
NPM="${NPM:-npm}"

log() { echo "browser setup: $*" >&2; }
die() { log "error: $*"; exit 1; }

mkdir -p "$OUT"
# Two test binaries (or a developer by hand) may run this at once: one npm or apt at a time.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$OUT/.browser-setup.lock"
  flock 9
fi

# ---------- chromium ----------
if [ -n "${CHROMIUM:-}" ] && [ -x "$CHROMIUM" ]; then
  log "chromium: $CHROMIUM (from CHROMIUM)"
elif command -v chromium >/dev/null 2>&1; then
  log "chromium up to date ($(command -v chromium))"
else
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    log "chromium is not installed, and this is not root with apt-get: install Debian's chromium package"
    exit 3
  fi
  log "installing chromium (apt-get)"
  if ! { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2; }; then
    log "apt-get install chromium failed"
    exit 3
  fi
  command -v chromium >/dev/null 2>&1 || { log "chromium is still missing after apt-get"; exit 3; }
  log "chromium installed"
fi

# ---------- npm projects, each locked, each skipped while its stamp matches ----------
# install_npm DIR PIN_DIR PACKAGE...: `npm ci` of PIN_DIR's package.json + package-lock.json
# into DIR, then checks that each PACKAGE is there.
install_npm() {
  local dir="$1" pins="$2"
  shift 2
  local key stamp
  key="$(cat "$pins/package.json" "$pins/package-lock.json" | sha256sum | cut -d' ' -f1)"
  stamp="$dir/.browser-stamp"
  if [ -f "$dir/node_modules/playwright-core/package.json" ] \
    && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
    log "npm tools up to date ($dir)"
    return
  fi
  command -v "$NPM" >/dev/null 2>&1 || die "$NPM not found (need Node >= 20 with npm)"
  rm -f "$stamp"
  mkdir -p "$dir"
  cp "$pins/package.json" "$pins/package-lock.json" "$dir/"
  log "npm ci in $dir (locked by ${pins#"$ROOT"/}/package-lock.json)"
  # playwright-core has no install script; this only keeps any other package from fetching a browser.
  (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$NPM" ci --no-audit --no-fund --loglevel=error >&2) \
    || die "npm ci failed (is the npm registry reachable?)"
  for pkg in "$@"; do
    [ -f "$dir/node_modules/$pkg/package.json" ] || die "$pkg is missing after the install"
  done
  echo "$key" > "$stamp"
  log "npm tools installed ($dir)"
}

install_npm "$NODE_DIR" "$HERE" esbuild playwright-core @modelcontextprotocol/sdk
install_npm "$OUT/browser-apps" "$HERE/apps" esbuild playwright-core \
  @modelcontextprotocol/ext-apps @modelcontextprotocol/client
