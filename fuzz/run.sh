#!/usr/bin/env bash
# Runs one fuzz target (already built with `cargo +nightly fuzz build -s none`) for a time,
# with its dictionary and the limits FUZZING.md reports against:
#   fuzz/run.sh <target> <seconds> [work-corpus-dir] [extra libFuzzer flags...]
# New inputs go to the work corpus (default fuzz/corpus-work/<target>, git-ignored); the
# committed corpus fuzz/corpus/<target> is read, never written. Crashes, timeouts and OOMs
# land in fuzz/artifacts/<target>/ and make the exit status non-zero.
set -euo pipefail
cd "$(dirname "$0")"

target=$1
seconds=$2
work=${3:-corpus-work/$target}
shift $(( $# >= 3 ? 3 : 2 ))

case $target in
    era_headers) dicts=(dict/headers.dict dict/jsonrpc.dict) ;;
    client_sse) dicts=(dict/sse.dict) ;;
    client_stdio_lines) dicts=(dict/stdio.dict dict/jsonrpc.dict) ;;
    uri_template) dicts=(dict/uri.dict) ;;
    schema_profile | form) dicts=(dict/schema.dict) ;;
    *) dicts=(dict/jsonrpc.dict) ;;
esac
dict=$(mktemp)
trap 'rm -f "$dict"' EXIT
cat "${dicts[@]}" >"$dict"

triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
bin=target/$triple/release/$target
mkdir -p "$work" "corpus/$target" "artifacts/$target"
# -timeout=2: any input slower than 2 s is a finding (the goal is < 1 s; the margin is for a
# busy machine). libFuzzer's timeout is wall-clock time: a run starved of CPU (campaign.sh's
# nice-19 runs on a machine that builds) raises it with MCP_FUZZ_TIMEOUT, and its slowest
# inputs are replayed at the default afterwards (FUZZING.md). -rss_limit_mb=512 and -malloc_limit_mb=512: the research goal's memory cap.
exec "$bin" "$work" "corpus/$target" \
    -dict="$dict" \
    -max_total_time="$seconds" \
    -timeout="${MCP_FUZZ_TIMEOUT:-2}" \
    -rss_limit_mb=512 \
    -malloc_limit_mb=512 \
    -print_final_stats=1 \
    -artifact_prefix="artifacts/$target/" \
    "$@"
