#!/usr/bin/env bash
# Installs the pinned cargo-fuzz unless that version is already there. Needs the nightly
# toolchain (libFuzzer's instrumentation flags are nightly-only); exits 2 when it is missing,
# so callers can skip fuzzing with a clear message rather than fail. FUZZ_CARGO_WRAP is put
# before the cargo command (e.g. "flock /tmp/cargo.lock" on a shared machine).
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.2

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz/setup.sh: the nightly toolchain is not installed (rustup toolchain install nightly)" >&2
    exit 2
fi
if cargo fuzz --version 2>/dev/null | grep -qx "cargo-fuzz ${CARGO_FUZZ_VERSION}"; then
    exit 0
fi
echo "fuzz/setup.sh: installing cargo-fuzz ${CARGO_FUZZ_VERSION}" >&2
${FUZZ_CARGO_WRAP:-} cargo install cargo-fuzz --version "${CARGO_FUZZ_VERSION}" --locked
