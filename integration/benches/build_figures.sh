#!/usr/bin/env bash
# Build figures of a server on mcp-runtime, for BENCHMARKS.md: the unique crates it depends on
# (normal dependencies, from `cargo tree`) and the crates a cold build compiles (its `Compiling`
# lines), the cold debug build time of the quickstart, and the size of its stripped release
# binary, for the default features and for a stdio-only build
# (`default-features = false, features = ["stdio", "macros"]`); and first what the README's
# first command, `cargo run --example quickstart`, compiles in a fresh clone of this repository.
#
#   integration/benches/build_figures.sh   (about 12 minutes on 2 cores: five cold builds)
#
# Each build is a fresh package in a temporary directory with examples/quickstart.rs as its
# main.rs and mcp-runtime as a path dependency, with a fresh target directory (cold: every
# dependency compiled), using the workspace's Cargo.lock so versions match. Prints one line per
# figure; nothing is asserted (timings depend on the machine and its load).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
JOBS="${JOBS:-2}"

make_package() { # DIR FEATURES-TOML
  mkdir -p "$1/src"
  cat > "$1/Cargo.toml" <<TOML
[package]
name = "quickstart"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
mcp-runtime = { path = "$ROOT/mcp-runtime"$2 }
# The quickstart derives Deserialize/Serialize/JsonSchema and uses tokio::select!, which name these crates (already in
# mcp-runtime's tree: no extra crates).
serde = { version = "1", features = ["derive"] }
schemars = "1"
tokio = { version = "1", features = ["time", "macros"] }

[workspace]
TOML
  cp "$ROOT/examples/quickstart.rs" "$1/src/main.rs"
  cp "$ROOT/Cargo.lock" "$1/Cargo.lock"
}

figures() { # LABEL FEATURES-TOML
  local dir="$WORK/$1"
  make_package "$dir" "$2"
  local crates
  crates="$(cd "$dir" && cargo tree -e normal --prefix none 2>/dev/null | sed 's/ (\*)//; s/ (proc-macro)//' | sort -u | grep -vc '^quickstart ')"
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && CARGO_TARGET_DIR="$dir/target" cargo build -j "$JOBS" 2>"$dir/build.log")
  end=$(date +%s.%N)
  local compiled
  compiled=$(grep -c '^ *Compiling' "$dir/build.log")
  (cd "$dir" && CARGO_TARGET_DIR="$dir/target" cargo build --quiet --release -j "$JOBS")
  cp "$dir/target/release/quickstart" "$dir/stripped"
  strip "$dir/stripped"
  local size
  size=$(stat -c %s "$dir/stripped")
  printf '%-12s crates %3d   compiled %3d   cold debug build %6.1f s   stripped release binary %5.2f MiB\n' \
    "$1" "$crates" "$compiled" "$(echo "$end - $start" | bc)" "$(echo "scale=2; $size / 1048576" | bc)"
}

echo "build figures of examples/quickstart.rs (rustc $(rustc --version | cut -d' ' -f2), -j $JOBS)"

# The README's first command in a fresh clone (the committed HEAD): every crate the root
# package's examples need, cold.
git clone --quiet "$ROOT" "$WORK/clone"
git -C "$WORK/clone" checkout --quiet "$(git -C "$ROOT" rev-parse HEAD)"
start=$(date +%s.%N)
(cd "$WORK/clone" && CARGO_TARGET_DIR="$WORK/clone/target" cargo build --locked -j "$JOBS" \
  --example quickstart 2>"$WORK/clone.log")
end=$(date +%s.%N)
printf '%-12s compiled %3d   cold debug build %6.1f s   (cargo run --example quickstart in a fresh clone)\n' \
  "root" "$(grep -c '^ *Compiling' "$WORK/clone.log")" "$(echo "$end - $start" | bc)"
rm -rf "$WORK/clone"
figures default ""
figures stdio-only ', default-features = false, features = ["stdio", "macros"]'
