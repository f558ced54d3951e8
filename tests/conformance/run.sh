#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance) over Streamable
# HTTP against examples/conformance (the package example-conformance: the `conformance` server
# and the `conformance_client` client, built on mcp_runtime::client), prints the score of each run, and fails on regressions.
#
#   tests/conformance/run.sh [--only 0.1|2025|2026|all|proxy-2025|proxy-2026|client-2025|
#                                   client-2026|client-all]...
#                            [--out DIR] [--verbose]
#
# Four runs against one server (target/debug/conformance --http 127.0.0.1:0):
#   0.1      conformance 0.1.16          --suite all                  (stateful wire)
#   2025     conformance 0.2.0-alpha.12  --requirements 2025-11-25    (stateful wire)
#   2026     conformance 0.2.0-alpha.12  --requirements 2026-07-28    (stateless wire)
#   all      conformance 0.2.0-alpha.12  --suite all                  (every scenario, with the
#            extensions: tasks, skills; a skipped skills check is a failure here, since the
#            fixture declares skills)
# two runs against the same server behind our proxy (examples/bridge: `mcp-bridge serve --http
# 127.0.0.1:0 -- target/debug/conformance`, the server over stdio, mcp_runtime::compose::Proxy
# in front), which must score as the server does directly:
#   proxy-2025  conformance 0.2.0-alpha.12  --requirements 2025-11-25
#   proxy-2026  conformance 0.2.0-alpha.12  --requirements 2026-07-28
# (the same expected failures apply; every check passes through the proxy as directly, except
# that the three checks of the not-scored server-sse-polling scenario are not run: the
# server's early end of a response stream has nothing to travel on over stdio, and the proxy
# answers that call in JSON. The two runs take about 2 s and 12 s, mostly the suite's own
# waits in the tasks scenarios; they go on in the background beside the others, and add about
# 5 s to the whole script.)
# and three client runs (`conformance client --command target/debug/conformance_client`;
# the suite starts a mock server per scenario and runs the client against it):
#   client-2025  0.2.0-alpha.12  client --requirements 2025-11-25
#   client-2026  0.2.0-alpha.12  client --requirements 2026-07-28
#   client-all   0.2.0-alpha.12  client --suite all   (a skipped sep-2640 check is a failure
#                here too: the client reads skills)
# (the versions are pinned, with their whole dependency tree, in tests/conformance/suite-*/).
#
# Every failed or warned check is compared with tests/conformance/expected-failures.txt
# (features not built yet): one not listed there is a regression and the script exits 1; a listed entry
# that failed nowhere is printed so the list can be trimmed (that alone does not fail).
#
# Installs, once, into $ROOT/.interop/conformance (git-ignored; a stamp per part, redone only
# when its pin changes): Node 22 from the npm package node-linux-<arch> (the suite needs
# Node >= 22; a system node >= 22, or MCP_CONFORMANCE_NODE, is used instead when there is one)
# and each suite version with `npm ci` from the lock files in tests/conformance/suite-*/.
# Needs npm; the only network access is the npm registry.
#
# Options:
#   --only RUN     run only 0.1, 2025, 2026 or all (repeatable); listed entries of runs left out are
#                  not reported as stale
#   --out DIR      where results go (default: .interop/conformance/runs/<utc time>)
#   --verbose      also print the suite's own console output
# Exit status: 0 no regression, 1 regression (or a run that crashed), 2 usage, 3 install failed,
#   4 the server did not start.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="$ROOT/.interop/conformance"
EXPECTED="$HERE/expected-failures.txt"
NODE22_VERSION="22.23.5"   # npm package node-linux-<arch>
RUN_TIMEOUT=600            # seconds, whole suite run

log() { echo "conformance: $*" >&2; }
die() { local code="$1"; shift; log "error: $*"; exit "$code"; }
usage() { awk 'NR==1{next} /^#/{sub(/^# ?/,""); print; next} {exit}' "$0"; }

ONLY=() OUT="" VERBOSE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --only)
      case "${2:-}" in 0.1|2025|2026|all|proxy-2025|proxy-2026|client-2025|client-2026|client-all) ONLY+=("$2") ;; *) usage >&2; die 2 "--only takes 0.1, 2025, 2026, all, proxy-2025, proxy-2026, client-2025, client-2026 or client-all" ;; esac
      shift 2 ;;
    --out) OUT="${2:-}"; [ -n "$OUT" ] || die 2 "--out needs a directory"; shift 2 ;;
    --verbose) VERBOSE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die 2 "unknown argument: $1" ;;
  esac
done
ALL_RUNS=(0.1 2025 2026 all proxy-2025 proxy-2026 client-2025 client-2026 client-all)
[ "${#ONLY[@]}" -gt 0 ] || ONLY=("${ALL_RUNS[@]}")
wanted() { local r; for r in "${ONLY[@]}"; do [ "$r" = "$1" ] && return 0; done; return 1; }

fingerprint() {
  local words="$1"; shift
  { printf '%s\n' "$words"; cat "$@"; } | sha256sum | cut -d' ' -f1
}
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# ---------- install (once; under a lock, as several test runs may overlap) ----------
mkdir -p "$CACHE" || die 3 "cannot create $CACHE"
exec 9>"$CACHE/.install.lock"
command -v flock >/dev/null 2>&1 && flock 9

NODE="${MCP_CONFORMANCE_NODE:-}"
if [ -z "$NODE" ] && command -v node >/dev/null 2>&1 && [ "$(node_major node)" -ge 22 ]; then
  NODE="$(command -v node)"
fi
if [ -z "$NODE" ]; then
  case "$(uname -m)" in
    x86_64|amd64) ARCH=x64 ;;
    aarch64|arm64) ARCH=arm64 ;;
    *) die 3 "no Node >= 22 and no node-linux package for $(uname -m); set MCP_CONFORMANCE_NODE" ;;
  esac
  NODE_DIR="$CACHE/node22"
  NODE="$NODE_DIR/node_modules/node-linux-$ARCH/bin/node"
  NODE_KEY="node-linux-$ARCH@$NODE22_VERSION"
  if [ ! -x "$NODE" ] || [ "$(cat "$NODE_DIR/.stamp" 2>/dev/null)" != "$NODE_KEY" ]; then
    command -v npm >/dev/null 2>&1 || die 3 "npm not found (needed to install Node 22 and the suite)"
    log "installing Node $NODE22_VERSION (npm package node-linux-$ARCH) into $NODE_DIR"
    rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
    npm install --prefix "$NODE_DIR" --no-save --no-audit --no-fund --loglevel=error \
      "node-linux-$ARCH@$NODE22_VERSION" >&2 || die 3 "could not install Node 22 (is the npm registry reachable?)"
    echo "$NODE_KEY" > "$NODE_DIR/.stamp"
  fi
fi
[ "$(node_major "$NODE")" -ge 22 ] || die 3 "$NODE is not Node >= 22"

# The pinned suite version in tests/conformance/DIR-NAME/package.json.
suite_version() { sed -n 's/.*"@modelcontextprotocol\/conformance": "\(.*\)".*/\1/p' "$HERE/$1/package.json" | head -1; }
# install_suite DIR-NAME: npm ci from tests/conformance/DIR-NAME/{package.json,package-lock.json}
install_suite() {
  local name="$1" src="$HERE/$1" dst="$CACHE/$1" key
  key="$(fingerprint "$name" "$src/package.json" "$src/package-lock.json")"
  if [ -f "$dst/node_modules/@modelcontextprotocol/conformance/dist/index.js" ] \
    && [ "$(cat "$dst/.stamp" 2>/dev/null)" = "$key" ]; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || die 3 "npm not found (needed to install the suite)"
  log "installing @modelcontextprotocol/conformance@$(suite_version "$name") into $dst (npm ci)"
  rm -rf "$dst" && mkdir -p "$dst"
  cp "$src/package.json" "$src/package-lock.json" "$dst/"
  # npm on an older system Node warns EBADENGINE for packages that want Node 22; the suite itself
  # runs on $NODE.
  (cd "$dst" && npm ci --no-audit --no-fund --loglevel=error >&2) || die 3 "npm ci failed in $dst (is the npm registry reachable?)"
  echo "$key" > "$dst/.stamp"
}
wanted 0.1 && install_suite suite-0.1
{ wanted 2025 || wanted 2026 || wanted all || wanted proxy-2025 || wanted proxy-2026 || wanted client-2025 || wanted client-2026 || wanted client-all; } && install_suite suite-0.2
SERVER_RUNS=0; { wanted 0.1 || wanted 2025 || wanted 2026 || wanted all; } && SERVER_RUNS=1
PROXY_RUNS=0; { wanted proxy-2025 || wanted proxy-2026; } && PROXY_RUNS=1
CLIENT_RUNS=0; { wanted client-2025 || wanted client-2026 || wanted client-all; } && CLIENT_RUNS=1
flock -u 9 2>/dev/null || true
exec 9>&-

suite_js() { echo "$CACHE/$1/node_modules/@modelcontextprotocol/conformance/dist/index.js"; }

# ---------- build the server and the client, start the server ----------
# The workspace's binaries and examples, as the integration tests build them
# (integration/tests/support/mod.rs): the same selection unifies the same features, so after
# `cargo test` (scripts/test-all) this is a no-op, where `-p example-conformance` alone would
# compile mcp-runtime again with that package's features.
log "building examples/conformance (the conformance server and conformance_client) and examples/bridge"
(cd "$ROOT" && cargo build --locked --quiet --workspace --bins --examples) \
  || die 4 "cargo build --workspace --bins --examples failed"
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
SERVER_BIN="$TARGET_DIR/debug/conformance"
CLIENT_BIN="$TARGET_DIR/debug/conformance_client"
BRIDGE_BIN="$TARGET_DIR/debug/mcp-bridge"
[ -x "$SERVER_BIN" ] || die 4 "$SERVER_BIN not found after the build"
[ -x "$CLIENT_BIN" ] || die 4 "$CLIENT_BIN not found after the build"
[ -x "$BRIDGE_BIN" ] || die 4 "$BRIDGE_BIN not found after the build"

if [ -z "$OUT" ]; then
  OUT="$CACHE/runs/$(date -u +%Y%m%dT%H%M%SZ)-$$"
  # Keep the 10 newest default result directories (about 1 MB each).
  ls -1d "$CACHE"/runs/*/ 2>/dev/null | sort | head -n -9 | xargs -r rm -rf
fi
mkdir -p "$OUT" || die 2 "cannot create $OUT"
OUT="$(cd "$OUT" && pwd)"

# stop_server PID: stops a server started by start_server (its whole process group), once.
SERVER_PIDS=()
stop_server() {
  local pid="$1" p kept=()
  [ -n "$pid" ] || return 0
  for p in "${SERVER_PIDS[@]}"; do [ "$p" = "$pid" ] || kept+=("$p"); done
  [ "${#kept[@]}" != "${#SERVER_PIDS[@]}" ] || return 0   # stopped already
  SERVER_PIDS=("${kept[@]}")
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null
}
stop_servers() { local pid; for pid in "${SERVER_PIDS[@]}"; do stop_server "$pid"; done; }
trap stop_servers EXIT
trap 'exit 130' INT TERM

# start_server LOG COMMAND...: starts COMMAND (an HTTP server on 127.0.0.1:0) in its own process
# group, so that stopping it cannot miss a child (the proxy's upstream), and sets SERVER_PID and
# URL (from the address it logs). RUST_LOG keeps the per-request lines (useful when a check
# fails).
start_server() {
  local log_file="$1"; shift
  setsid env RUST_LOG="${RUST_LOG:-info}" "$@" >"$log_file" 2>&1 </dev/null &
  SERVER_PID=$!
  SERVER_PIDS+=("$SERVER_PID")
  URL=""
  for _ in $(seq 1 150); do
    URL="$(sed -n 's#.*serving MCP on \(http://127\.0\.0\.1:[0-9]*/mcp\).*#\1#p' "$log_file" | head -1)"
    [ -n "$URL" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.2
  done
  [ -n "$URL" ] || { tail -20 "$log_file" >&2; die 4 "the server did not start (log: $log_file)"; }
  log "server at $URL (pid $SERVER_PID, log $log_file); results in $OUT"
}
# The same server behind the proxy: the bridge starts it over stdio (its own child, in the
# bridge's process group).
PROXY_PID="" PROXY_URL=""
if [ "$PROXY_RUNS" = 1 ]; then
  start_server "$OUT/proxy.log" "$BRIDGE_BIN" serve --http 127.0.0.1:0 -- "$SERVER_BIN"
  PROXY_PID="$SERVER_PID" PROXY_URL="$URL"
fi
DIRECT_PID="" URL=""
if [ "$SERVER_RUNS" = 1 ]; then
  start_server "$OUT/server.log" "$SERVER_BIN" --http 127.0.0.1:0
  DIRECT_PID="$SERVER_PID"
fi

# ---------- the runs ----------
# run_suite LEG LABEL SUITE-DIR ARGS...: one suite run of the server or client leg, its console
# output in $OUT/LABEL/console.log (LABEL starts with the suite version)
RUNS=()
CRASHED=0
run_suite() {
  local leg="$1" label="$2" dir="$3"; shift 3
  local rdir="$OUT/$label" rc start target
  rm -rf "$rdir" && mkdir -p "$rdir"   # results of an earlier run in the same --out must not count
  echo "$*" > "$rdir/args"
  echo "$leg" > "$rdir/leg"
  suite_version "$dir" > "$rdir/version"
  log "run $label: conformance $leg $* (node $("$NODE" --version))"
  if [ "$leg" = client ]; then target=(--command "$CLIENT_BIN"); else target=(--url "$URL"); fi
  start=$(date +%s)
  if [ "$VERBOSE" = 1 ]; then
    timeout --kill-after=10 "$RUN_TIMEOUT" "$NODE" "$(suite_js "$dir")" "$leg" "${target[@]}" -o "$rdir" "$@" 2>&1 | tee "$rdir/console.log"
    rc=${PIPESTATUS[0]}
  else
    timeout --kill-after=10 "$RUN_TIMEOUT" "$NODE" "$(suite_js "$dir")" "$leg" "${target[@]}" -o "$rdir" "$@" >"$rdir/console.log" 2>&1
    rc=$?
  fi
  echo "$(( $(date +%s) - start ))" > "$rdir/seconds"
  # 0 = all passed, 1 = some check failed; anything else is a crash or our timeout.
  if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
    tail -20 "$rdir/console.log" >&2
    log "run $label: the suite exited with status $rc (124/137: timed out after ${RUN_TIMEOUT}s)"
    CRASHED=1
    touch "$rdir/crashed"   # read back for the runs made in the background
  fi
  RUNS+=("$label")
}
# The proxy runs go on in the background, beside the direct and client runs: all mostly wait,
# on the suite's own timers.
PROXY_LABELS=() PROXY_JOB=""
if [ "$PROXY_RUNS" = 1 ]; then
  wanted proxy-2025 && PROXY_LABELS+=("$(suite_version suite-0.2)-proxy-req-2025-11-25")
  wanted proxy-2026 && PROXY_LABELS+=("$(suite_version suite-0.2)-proxy-req-2026-07-28")
  (
    trap - EXIT INT TERM
    URL="$PROXY_URL"
    wanted proxy-2025 && run_suite server "$(suite_version suite-0.2)-proxy-req-2025-11-25" suite-0.2 --requirements 2025-11-25
    wanted proxy-2026 && run_suite server "$(suite_version suite-0.2)-proxy-req-2026-07-28" suite-0.2 --requirements 2026-07-28
  ) &
  PROXY_JOB=$!
fi
wanted 0.1 && run_suite server "$(suite_version suite-0.1)-all" suite-0.1 --suite all
wanted 2025 && run_suite server "$(suite_version suite-0.2)-req-2025-11-25" suite-0.2 --requirements 2025-11-25
wanted 2026 && run_suite server "$(suite_version suite-0.2)-req-2026-07-28" suite-0.2 --requirements 2026-07-28
wanted all && run_suite server "$(suite_version suite-0.2)-all" suite-0.2 --suite all
stop_server "$DIRECT_PID"
SERVER_LABELS=("${RUNS[@]}")
RUNS=()
wanted client-2025 && run_suite client "$(suite_version suite-0.2)-client-req-2025-11-25" suite-0.2 --requirements 2025-11-25
wanted client-2026 && run_suite client "$(suite_version suite-0.2)-client-req-2026-07-28" suite-0.2 --requirements 2026-07-28
wanted client-all && run_suite client "$(suite_version suite-0.2)-client-all" suite-0.2 --suite all
if [ -n "$PROXY_JOB" ]; then
  wait "$PROXY_JOB"
  stop_server "$PROXY_PID"
  for label in "${PROXY_LABELS[@]}"; do [ -f "$OUT/$label/crashed" ] && CRASHED=1; done
fi
RUNS=("${SERVER_LABELS[@]}" "${PROXY_LABELS[@]}" "${RUNS[@]}")

# ---------- score and compare with the expected failures ----------
FULL=0; [ "${#ONLY[@]}" = "${#ALL_RUNS[@]}" ] && FULL=1
"$NODE" - "$OUT" "$EXPECTED" "$CACHE/suite-0.2/node_modules" "$FULL" "$CRASHED" "${RUNS[@]}" <<'SUMMARY_JS'
const fs = require('fs'), path = require('path');
const [out, expectedFile, modules02, full, crashed, ...runs] = process.argv.slice(2);

// expected-failures.txt: `scenario/check-id` (server; or a bare `scenario` for all its checks),
// or `client SCENARIO CHECK-ID` (client scenario names contain `/`, e.g. `auth/dpop`), then
// optionally `# why`; blank and comment lines are skipped.
const expected = [];
fs.readFileSync(expectedFile, 'utf8').split('\n').forEach((raw, i) => {
  const line = raw.replace(/#.*/, '').trim();
  if (!line) return;
  let leg = 'server', scenario, check;
  if (/^client\s/.test(line)) {
    [, scenario, check] = line.split(/\s+/);
    leg = 'client';
  } else {
    [scenario, check] = line.split('/');
  }
  expected.push({ leg, scenario, check: check || null, line: i + 1, text: line, why: (raw.split('#')[1] || '').trim(), hits: 0, passes: 0, ran: false });
});
const matches = (e, leg, s, c) => e.leg === leg && e.scenario === s && (e.check === null || e.check === c);
const show = (leg, s, c) => (leg === 'client' ? `client ${s} ${c}` : `${s}/${c}`);

let YAML = null;
const yamlFor = (args, leg) => {
  const m = args.match(/--requirements (\S+)/);
  if (!m) return null;
  YAML = YAML || require(path.join(modules02, 'yaml'));
  const file = path.join(modules02, '@modelcontextprotocol/conformance/requirements', m[1] + '.yaml');
  const req = YAML.parse(fs.readFileSync(file, 'utf8')) || {};
  const why = new Map((req.not_scored || []).filter((e) => e && e.leg === leg).map((e) => [e.scenario, e.reason || 'not scored']));
  return { scored: new Set(req[leg] || []), why };
};

const regressions = [];
const totals = [];
for (const label of runs) {
  const rdir = path.join(out, label);
  const args = fs.readFileSync(path.join(rdir, 'args'), 'utf8').trim();
  const secs = fs.readFileSync(path.join(rdir, 'seconds'), 'utf8').trim();
  const version = fs.readFileSync(path.join(rdir, 'version'), 'utf8').trim();
  const consoleLog = fs.existsSync(path.join(rdir, 'console.log')) ? fs.readFileSync(path.join(rdir, 'console.log'), 'utf8') : '';
  const leg = fs.readFileSync(path.join(rdir, 'leg'), 'utf8').trim();
  // Server runs name the scenarios they start; client runs print a line per scenario.
  const started = leg === 'client'
    ? [...consoleLog.matchAll(/^[\u2713\u2717] (\S+): \d+ passed/gm)].map((m) => m[1])
    : [...consoleLog.matchAll(/^Running client scenario '([^']+)'/gm)].map((m) => m[1]);
  // Results: `server-<scenario>-<time>/` (server); `<scenario>-<time>/`, and
  // `auth/<name>-<time>/` for the auth scenarios (client).
  const results = new Map();
  const scan = (dir, prefix) => {
    for (const d of fs.readdirSync(dir)) {
      const m = d.match(leg === 'client' ? /^(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/ : /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/);
      const f = path.join(dir, d, 'checks.json');
      if (m && fs.existsSync(f)) results.set(prefix + m[1], JSON.parse(fs.readFileSync(f, 'utf8')));
      else if (leg === 'client' && d === 'auth' && fs.statSync(path.join(dir, d)).isDirectory()) scan(path.join(dir, d), 'auth/');
    }
  };
  scan(rdir, '');
  const req = yamlFor(args, leg);
  const order = [...new Set([...started, ...results.keys()])];
  const t = { scored: { p: 0, f: 0 }, unscored: { p: 0, f: 0 }, warnings: 0, skipped: 0 };
  console.log(`\n== conformance ${version} ${leg} ${args} (${order.length} scenarios, ${secs} s)`);
  for (const s of order) {
    const unscored = req && !req.scored.has(s);
    const tag = unscored ? `  [not scored: ${req.why.get(s) || 'not in the set'}]` : '';
    const bucket = unscored ? t.unscored : t.scored;
    let checks = results.get(s);
    if (!checks) checks = [{ id: '(did not finish)', status: 'FAILURE', errorMessage: 'no checks.json: the scenario crashed or timed out' }];
    for (const e of expected) if (e.leg === leg && e.scenario === s) e.ran = true;
    const p = checks.filter((c) => c.status === 'SUCCESS').length;
    const f = checks.filter((c) => c.status === 'FAILURE').length;
    const w = checks.filter((c) => c.status === 'WARNING').length;
    const k = checks.filter((c) => c.status === 'SKIPPED').length;
    // The fixture declares skills, and the client reads them: a skills check skipped (for
    // want of a declaration, or a client that never listed the skills) is a regression, like
    // a failure, on both legs.
    for (const c of checks.filter((c) => c.status === 'SKIPPED' && /^sep-2640-/.test(c.id || ''))) {
      const msg = (c.errorMessage || c.description || '').replace(/\s+/g, ' ').slice(0, 300);
      const why = leg === 'server' ? 'the fixture declares skills' : 'the client reads skills';
      console.log(`       SKIPPED  ${show(leg, s, c.id)}: ${msg}   <-- ${why}`);
      regressions.push(`${label}: SKIPPED ${show(leg, s, c.id)}: ${msg}`);
    }
    bucket.p += p; bucket.f += f; t.warnings += w; t.skipped += k;
    console.log(`${f ? 'FAIL' : 'ok  '} ${s}: ${p} passed, ${f} failed${w ? `, ${w} warnings` : ''}${k ? `, ${k} skipped` : ''}${tag}`);
    for (const c of checks) {
      if (c.status === 'SUCCESS') expected.filter((e) => matches(e, leg, s, c.id)).forEach((e) => e.passes++);
      if (c.status !== 'FAILURE' && c.status !== 'WARNING') continue;
      const msg = (c.errorMessage || c.description || '').replace(/\s+/g, ' ').slice(0, 300);
      // A WARNING is a SHOULD the server no longer meets: a regression too, unless listed.
      const kind = c.status === 'WARNING' ? 'WARNING' : 'FAILED ';
      const hit = expected.filter((e) => matches(e, leg, s, c.id));
      hit.forEach((e) => e.hits++);
      if (hit.length) console.log(`       expected ${show(leg, s, c.id)}: ${msg}`);
      else {
        console.log(`       ${kind}  ${show(leg, s, c.id)}: ${msg}   <-- not in expected-failures.txt`);
        regressions.push(`${label}: ${c.status} ${show(leg, s, c.id)}: ${msg}`);
      }
    }
  }
  let line;
  if (req) {
    line = `conformance ${label}: ${t.scored.p} passed, ${t.scored.f} failed (scored); not scored: ${t.unscored.p} passed, ${t.unscored.f} failed`;
  } else {
    line = `conformance ${label}: ${t.scored.p} passed, ${t.scored.f} failed`;
  }
  if (t.warnings || t.skipped) line += `; ${t.warnings} warnings, ${t.skipped} skipped`;
  console.log(line);
  totals.push(line);
}

console.log('\n== summary');
totals.forEach((l) => console.log(l));
// Stale: failed nowhere, and seen passing (or, after all the runs, its scenario ran at all: a
// check can also turn SKIPPED or disappear). A partial run cannot tell more, since a check may
// be skipped in one run and fail in another.
const stale = expected.filter((e) => e.hits === 0 && (e.passes > 0 || (full === '1' && e.ran)));
const neverRan = expected.filter((e) => !e.ran);
if (stale.length) {
  console.log(`\nlisted in expected-failures.txt but passing now (remove them):`);
  stale.forEach((e) => console.log(`  line ${e.line}: ${e.text}${e.why ? `  # ${e.why}` : ''}`));
}
if (full === '1' && neverRan.length) {
  console.log(`\nlisted in expected-failures.txt but never run (typo, or a scenario that no longer exists?):`);
  neverRan.forEach((e) => console.log(`  line ${e.line}: ${e.text}`));
}
if (regressions.length) {
  console.log(`\nREGRESSIONS: ${regressions.length} failed or warned check(s) not in tests/conformance/expected-failures.txt:`);
  regressions.forEach((r) => console.log(`  ${r}`));
}
const listedFailing = expected.filter((e) => e.hits > 0).length;
console.log(`\nconformance: ${regressions.length} unexpected failures; ${listedFailing} of ${expected.length} expected-failure entries still fail${stale.length ? `, ${stale.length} pass now` : ''}`);
process.exit(regressions.length || crashed === '1' ? 1 : 0);
SUMMARY_JS
