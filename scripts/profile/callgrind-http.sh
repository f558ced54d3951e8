#!/usr/bin/env bash
# Instructions per `tools/call add` of the http bench's server (or its raw hyper responder),
# counted by callgrind over N sequential calls on one keep-alive connection, after the session
# is open (the counters are zeroed, then dumped, around the calls):
#   BIN=$(ls -t target/release/deps/http-* | grep -v '\.d$' | head -1) \
#     scripts/profile/callgrind-http.sh mcp session 2000 /tmp/cg-http
# ROLE: mcp | mcp-jwt | floor | raw; ERA: session | 2026 (2026-07-28 calls, no session). Needs valgrind,
# python3; mcp-jwt (every request with a JWT the server verifies, then finds in its cache) starts
# the test suite's authorization server (tests/auth/setup.sh: Node and oidc-provider).
# `callgrind_annotate --inclusive=yes OUT.cg.1` then shows where they go.
set -euo pipefail
: "${BIN:?BIN=the http bench binary (cargo bench -p mcp-integration --bench http --no-run)}"
ROLE=$1 ERA=$2 N=$3 OUT=$4
here=$(dirname "$0")
rm -f "$OUT".cg*
args=()
if [ "$ROLE" = mcp-jwt ]; then
    node=$(bash "$here/../../tests/auth/setup.sh" 2>/dev/null)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    resource="http://127.0.0.1:$port/mcp"
    coproc AS { PORT=0 RESOURCE=$resource exec "$node" "$here/../../.interop/auth/as.mjs" 2>/dev/null; }
    read -r line <&"${AS[0]}"
    issuer=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["issuer"])' "$line")
    export TOKEN=$(curl -s -u mcp-test:test-secret -d grant_type=client_credentials -d scope=mcp \
        --data-urlencode "resource=$resource" "$issuer/token" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
    args=("$port" "$issuer")
fi
coproc SRV { RUST_LOG=warn exec valgrind --tool=callgrind --callgrind-out-file="$OUT.cg" "$BIN" "--serve-$ROLE" "${args[@]}" 2>/dev/null; }
read -r line <&"${SRV[0]}"
port=${line#PORT }
# The raw and floor responders have no sessions: no handshake.
coproc DRV { exec python3 "$here/drive-http.py" "$port" "$N" "$ERA" $(case $ROLE in raw | floor) echo no-init ;; esac); }
read -r _ <&"${DRV[0]}"
callgrind_control -z "$SRV_PID" >/dev/null
echo >&"${DRV[1]}"
read -r _ <&"${DRV[0]}"
callgrind_control -d "$SRV_PID" >/dev/null
kill "$SRV_PID" ${AS_PID:-}
wait 2>/dev/null || true
f=$(ls -t "$OUT".cg.* | head -1)
total=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(/,/, "", $1); print $1}')
echo "$ROLE $ERA: $((total / N)) instructions per call ($f)"
