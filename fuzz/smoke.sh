#!/usr/bin/env bash
# The CI smoke run: installs the pinned cargo-fuzz (setup.sh), builds every target, runs each
# for FUZZ_SMOKE_SECONDS (default 5) from the committed corpus, and fails if any crashes,
# times out (> 2 s on one input) or goes over 512 MB. Before each target's run, the
# reproducers of its fixed findings (regressions/<target>/) must pass. New inputs go to a
# temporary directory, so the committed corpus is unchanged.
# Skips (exit 0, with a message) only when the nightly toolchain is missing.
set -euo pipefail
cd "$(dirname "$0")"

# 5 s each: the committed corpus is replayed first whatever the length, and eleven targets at
# 10 s were a minute of CI's 20-minute budget (issue #26).
seconds=${FUZZ_SMOKE_SECONDS:-5}

status=0
bash setup.sh || status=$?
if [ "$status" -eq 2 ]; then
    echo "fuzz/smoke.sh: SKIPPED: no nightly toolchain, so no fuzzing (install it with: rustup toolchain install nightly)" >&2
    exit 0
elif [ "$status" -ne 0 ]; then
    exit "$status"
fi

# -s none: the targets are safe Rust on the paths they drive; panics and the targets' own
# assertions are the oracle, and without ASan the build and the runs take half the time.
${FUZZ_CARGO_WRAP:-} cargo +nightly fuzz build -s none

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
# One target: its regressions, then its smoke run; its outcome in $work/<target>.status
# (and its output in $work/<target>.out, printed in target order once all are done).
smoke() {
    local target=$1 out=$work/$1.out
    # The reproducers of fixed findings first: each must now pass.
    if [ -d "regressions/$target" ]; then
        echo "== fuzz regressions: $target" >>"$out"
        if ! "target/$triple/release/$target" -timeout=2 -rss_limit_mb=512 \
            regressions/"$target"/* >"$work/$target.regressions.log" 2>&1; then
            tail -n 40 "$work/$target.regressions.log" >>"$out"
            echo "$target (regressions)" >"$work/$target.status"
            return
        fi
    fi
    echo "== fuzz smoke: $target (${seconds} s)" >>"$out"
    # A fixed seed: every CI run replays the same mutation sequence (a slower machine gets
    # less far along it), so the smoke run does not fail at random on a bug a lucky mutation
    # hits; campaigns (run.sh without -seed) explore freely.
    if ! ./run.sh "$target" "$seconds" "$work/$target" -seed="${FUZZ_SMOKE_SEED:-1}" \
        >"$work/$target.log" 2>&1; then
        tail -n 40 "$work/$target.log" >>"$out"
        echo "$target" >"$work/$target.status"
    else
        grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$target.log" >>"$out" || true
    fi
}

# Two targets at a time (FUZZ_SMOKE_JOBS): each is one process on one core, and thirteen
# in a row were two minutes of CI's budget.
jobs_max=${FUZZ_SMOKE_JOBS:-2}
targets=()
for src in fuzz_targets/*.rs; do
    target=$(basename "$src" .rs)
    targets+=("$target")
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
        wait -n || true
    done
    smoke "$target" &
done
wait
for target in "${targets[@]}"; do
    cat "$work/$target.out" >&2
    if [ -s "$work/$target.status" ]; then
        failed+=("$(cat "$work/$target.status")")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz/smoke.sh: FAILED: ${failed[*]} (inputs in fuzz/artifacts/<target>/)" >&2
    exit 1
fi
echo "fuzz/smoke.sh: all targets ran ${seconds} s without a finding" >&2
