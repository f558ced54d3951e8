#!/usr/bin/env bash
# Installs what the scale-out tests need, from Debian's packages (apt-get), each skipped when
# it is already on PATH:
#
#   redis-server   the shared store of mcp-redis (tests start their own on 127.0.0.1, no
#                  persistence; the package's own service is never started)
#   nginx          the load balancer of deploy/nginx.conf (nginx-light is enough)
#   haproxy        the load balancer of deploy/haproxy.cfg
#
# Versions are Debian 12's (redis 7.0.15, nginx 1.22.1, HAProxy 2.6.12): the pins below name
# them, and apt-get installs the one Debian's archive has when that point release moved on.
#
# Safe to run again and again. Logs go to stderr; stdout stays empty.
#
# Exit status: 0 ready; 3 something is missing and cannot be installed here (not root, or no
# apt-get, or the install failed): the tests that need it then skip, unless
# MCP_FLEET_REQUIRED=1 (scripts/test-all sets it); 1 anything else.
set -euo pipefail

log() { echo "fleet setup: $*" >&2; }

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=("redis-server")
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=("nginx-light")
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=("haproxy")

if [ ${#missing[@]} -eq 0 ]; then
  log "redis-server, nginx and haproxy up to date"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  log "missing: ${missing[*]}; this is not root with apt-get: install Debian's packages"
  exit 3
fi

# Two test binaries (or a developer by hand) may run this at once: one apt at a time.
if command -v flock >/dev/null 2>&1; then
  exec 9>/tmp/.mcp-fleet-setup.lock
  flock 9
fi
# No package's own service may start (a system redis on 6379, nginx on 80): the tests run
# their own processes on loopback ports.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
fi
pinned() {
  case "$1" in
    redis-server) echo "redis-server=5:7.0.15-1~deb12u10" ;;
    nginx-light) echo "nginx-light=1.22.1-9+deb12u11" ;;
    haproxy) echo "haproxy=2.6.12-1+deb12u4" ;;
  esac
}
log "installing ${missing[*]} (apt-get)"
apt-get update -qq >&2 || { log "apt-get update failed"; exit 3; }
pins=()
for p in "${missing[@]}"; do pins+=("$(pinned "$p")"); done
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pins[@]}" >&2; then
  log "the pinned versions are gone from the archive; installing Debian 12's current ones"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
    || { log "apt-get install failed"; exit 3; }
fi
# A service the package started anyway (no policy-rc.d honoured) is stopped: ports stay free.
for svc in redis-server nginx haproxy; do
  command -v service >/dev/null 2>&1 && service "$svc" stop >/dev/null 2>&1 || true
done
log "installed ${missing[*]}"
