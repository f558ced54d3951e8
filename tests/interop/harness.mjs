// What the TypeScript interop scripts share: loading the pinned SDK, the check collector, result
// formatting, and the way a script runs and exits (one line per check; exit 0 when all pass, 1
// when any fails or the run does not finish within the deadline). Imported by the ts_*.mjs
// scripts next to it.

import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const DEADLINE_MS = 60000; // a hung server must fail the run, not hang it

/**
 * The SDK modules `paths` (under @modelcontextprotocol/sdk/) merged, from the pinned install
 * ($ROOT/.interop/node, or $MCP_INTEROP_NODE_DIR). It cannot be a static `import`: ESM resolves
 * bare specifiers from this file's own directory and ignores both the working directory and
 * NODE_PATH. A require() anchored in that project resolves it, through the package's "require"
 * export (the CommonJS build of the same release).
 */
export function loadSdk(label, paths) {
  const nodeDir = process.env.MCP_INTEROP_NODE_DIR || fileURLToPath(new URL('../../.interop/node/', import.meta.url));
  const require = createRequire(join(resolve(nodeDir), 'package.json'));
  try {
    return Object.assign({}, ...paths.map((p) => require(`@modelcontextprotocol/sdk/${p}`)));
  } catch (e) {
    console.error(`${label}: FAIL: cannot load @modelcontextprotocol/sdk from ${nodeDir} (run tests/interop/setup.sh): ${e.message}`);
    process.exit(1);
  }
}

const failed = [];

/** Records one check; every check runs, so one run shows everything that is wrong. */
export function check(name, ok, detail) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${detail}`);
  if (!ok) failed.push(name);
  return ok;
}

/** Runs one check's steps; an exception (an McpError, a schema mismatch, a timeout) fails it. */
export async function attempt(name, step) {
  try {
    await step();
  } catch (e) {
    check(name, false, `${e?.name} ${e?.code ?? ''}: ${e?.message ?? e}`);
  }
}

export const texts = (r) => (r.content ?? []).filter((b) => b.type === 'text').map((b) => b.text);
export const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);
export const textIs = (r, expected) => !r.isError && sameJson(texts(r), [expected]);
export const describe = (r) =>
  `isError=${JSON.stringify(r.isError)} text=${JSON.stringify(texts(r))} structured=${JSON.stringify(r.structuredContent)}`;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs `main` within the deadline, then exits with the outcome of the checks. */
export async function runMain(label, main) {
  const deadline = setTimeout(() => {
    console.error(`${label}: FAIL: no answer within ${DEADLINE_MS / 1000}s`);
    process.exit(1);
  }, DEADLINE_MS);
  try {
    await main();
  } catch (e) {
    console.error(`${label}: FAIL: ${e?.stack ?? e}`);
    process.exit(1);
  }
  clearTimeout(deadline);
  if (failed.length) {
    console.error(`${label}: ${failed.length} check(s) failed: ${failed.join(', ')}`);
    process.exit(1);
  }
  console.log(`${label}: all checks passed`);
  process.exit(0);
}
