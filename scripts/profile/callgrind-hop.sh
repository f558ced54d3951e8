#!/usr/bin/env bash
# Instructions per forwarded call of the bridge in the hop bench, counted by callgrind over 6 s
# of load at 32 in flight (the bridge runs under valgrind through HOP_BRIDGE_PREFIX; the
# counters are zeroed after the warm-up and dumped 6 s later; the calls are those
# `Source::forward` served in that window):
#   BIN=$(ls -t target/release/deps/hop-* | grep -v '\.d$' | head -1) \
#     scripts/profile/callgrind-hop.sh 'http>bridge>stdio' session /tmp/cg-hop
set -euo pipefail
: "${BIN:?BIN=the hop bench binary (cargo bench -p mcp-integration --bench hop --no-run)}"
PATHS=$1 ERA=$2 OUT=$3
rm -f "$OUT".*
HOP_BRIDGE_PREFIX="valgrind --tool=callgrind --callgrind-out-file=$OUT.%p" HOP_PATHS="$PATHS" \
    HOP_ERAS="$ERA" HOP_IN_FLIGHT=32 BENCH_ROUNDS=1 BENCH_SECS=14 BENCH_WARMUP_SECS=4 \
    "$BIN" >"$OUT.bench" 2>&1 &
driver=$!
sleep 8
bridge=$(pgrep -f "callgrind-out-file=$OUT" | head -1)
callgrind_control -z "$bridge" >/dev/null
sleep 6
callgrind_control -d "$bridge" >/dev/null
wait "$driver"
f=$(ls -t "$OUT".*.1 | head -1)
callgrind_annotate --inclusive=yes --tree=calling "$f" 2>/dev/null >"$OUT.tree"
total=$(awk '/PROGRAM TOTALS/ {gsub(/,/, "", $1); print $1}' "$OUT.tree")
calls=$(grep -E '^ +[0-9,]+ .*>.*mount::Source>::forward \(' "$OUT.tree" | head -1 |
    sed -E 's/.*\(([0-9,]+)x\).*/\1/' | tr -d ,)
echo "$PATHS $ERA: $((total / calls)) instructions per forwarded call ($f)"
