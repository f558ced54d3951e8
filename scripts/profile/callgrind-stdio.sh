#!/usr/bin/env bash
# Instructions per `tools/call add` of the stdio bench's server, counted by callgrind over N
# calls read from a file (the handshake first; the whole run is counted, so the per-call
# figure includes start-up spread over N: 20,000 calls make that a few per cent at most):
#   BIN=$(ls -t target/release/deps/stdio-* | grep -v '\.d$' | head -1) \
#     scripts/profile/callgrind-stdio.sh mcp 20000 /tmp/cg-stdio
# ERA=2026 (environment): 2026-07-28 calls (`_meta` on each, no handshake) instead.
# ROLE: mcp | mcp-layer (one pass-through middleware layer) | floor (serde_json's floor) | raw. Needs valgrind, python3.
# `callgrind_annotate --inclusive=yes OUT.cg` then shows where they go.
set -euo pipefail
: "${BIN:?BIN=the stdio bench binary (cargo bench -p mcp-integration --bench stdio --no-run)}"
ROLE=$1 N=$2 OUT=$3
python3 - "$N" "${ERA:-session}" >"$OUT.jsonl" <<'PY'
import json, sys
n, era = int(sys.argv[1]), sys.argv[2]
params = {"name": "add", "arguments": {"a": 2, "b": 3}}
if era == "2026":
    params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {}}
else:
    print(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "callgrind", "version": "0"}}}))
    print(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
for i in range(1, n + 1):
    print(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}))
PY
RUST_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$OUT.cg" "$BIN" "--serve-$ROLE" \
    <"$OUT.jsonl" >"$OUT.out" 2>/dev/null
answers=$(grep -c '"structuredContent":{"result":5}' "$OUT.out" || true)
# (The raw responder answers the handshake with the call's result too: N + 1.)
[ "$answers" -ge "$N" ] || { echo "expected $N answers, got $answers" >&2; exit 1; }
total=$(callgrind_annotate "$OUT.cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(/,/, "", $1); print $1}')
echo "$ROLE: $((total / N)) instructions per call ($OUT.cg)"
