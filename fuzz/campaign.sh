#!/usr/bin/env bash
# A long campaign in the background: runs targets one after another, each for a wall-clock
# time, at the lowest priority (so builds and tests on the same machine go first), and appends
# one line per run to <logdir>/summary.tsv with what FUZZING.md records:
#   fuzz/campaign.sh <logdir> <target>:<seconds> [<target>:<seconds> ...]
# Each run goes through run.sh (dictionary, limits, work corpus fuzz/corpus-work/<target>).
# A run that stops on a finding is logged with its exit status and the campaign goes on with
# the next target; the input is in fuzz/artifacts/<target>/.
# The CPU seconds column (user + system, from /usr/bin/time) is what "CPU-hours" count: at
# nice 19 a run gets only the CPU that nothing else wants, so wall time overstates it.
set -uo pipefail
# `nice` orders processes within one autogroup only: where the kernel groups processes by
# session (CONFIG_SCHED_AUTOGROUP, on by default on most distributions, this machine included),
# a campaign started in a session of its own is a group that gets as much CPU as a whole build
# in another session, nice 19 or not. So the campaign runs in a new session whose group's own
# nice is 19 (/proc/self/autogroup): then the builds and tests of the machine come first.
if [ -z "${MCP_FUZZ_SESSION:-}" ] && command -v setsid >/dev/null 2>&1; then
    MCP_FUZZ_SESSION=1 exec setsid -w "$BASH" "$0" "$@"
fi
echo 19 >/proc/self/autogroup 2>/dev/null || true
# At nice 19 a run gets no CPU while anything else wants it, for seconds at a time: libFuzzer's
# wall-clock timeout (2 s in run.sh) then fires on inputs that take milliseconds (four false
# timeouts in the first hour of the fifth round). Campaigns default to 60 s; replay each run's
# timeout artifacts and slowest inputs at -timeout=2 on an idle machine before calling them
# findings.
export MCP_FUZZ_TIMEOUT=${MCP_FUZZ_TIMEOUT:-60}
cd "$(dirname "$0")"

logdir=$1
shift
mkdir -p "$logdir"
summary=$logdir/summary.tsv
[ -s "$summary" ] || printf 'start\ttarget\twall_s\tcpu_s\texecs\texec_per_s_cpu\tcov\tft\tcorpus\tpeak_rss_mb\tstatus\n' >"$summary"

for spec in "$@"; do
    target=${spec%%:*}
    seconds=${spec##*:}
    start=$(date -u +%FT%TZ)
    log=$logdir/$target.$(date -u +%Y%m%dT%H%M%S).log
    timing=$(mktemp)
    nice -n 19 /usr/bin/time -f '%e %U %S' -o "$timing" bash run.sh "$target" "$seconds" >"$log" 2>&1
    status=$?
    # A run that stopped on a finding has "Command exited with non-zero status N" first.
    read -r wall user sys < <(tail -n 1 "$timing")
    rm -f "$timing"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", u + s }')
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
    # The last status line libFuzzer printed: "#N <event> cov: C ft: F corp: K/S ...".
    last=$(grep -E '^#[0-9]+' "$log" | grep ' cov: ' | tail -n 1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
    rate=$(awk -v e="${execs:-0}" -v c="$cpu" 'BEGIN { if (c > 0) printf "%.0f", e / c; else print 0 }')
    printf '%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$start" "$target" "$wall" "$cpu" \
        "${execs:-?}" "$rate" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}" "$status" >>"$summary"
done
