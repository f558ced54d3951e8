// Drives the browser test (tests/browser.rs): bundles page.js with the pinned esbuild, then
// opens each page URL given in headless Debian chromium through the pinned playwright-core and
// prints one JSON line: [{ page, result, console }] in the order given (result is what the
// page left in window.__result, or { ok: false, error } when it left nothing in time).
//
// Usage: node drive.mjs OUT_DIR PAGE_URL...   (the Rust test serves OUT_DIR at each page's origin)
// Environment: MCP_BROWSER_NODE_DIR (the npm project tests/browser/setup.sh installs),
//              CHROMIUM (default /usr/bin/chromium).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PAGE_BUDGET_MS = 15000;

const [outDir, ...pages] = process.argv.slice(2);
if (!outDir || pages.length === 0) {
  console.error('usage: node drive.mjs OUT_DIR PAGE_URL...');
  process.exit(2);
}
const nodeDir = process.env.MCP_BROWSER_NODE_DIR;
if (!nodeDir) {
  console.error('drive.mjs: MCP_BROWSER_NODE_DIR is not set');
  process.exit(2);
}
// Both tools resolve from the installed project, not from this folder (which has no node_modules).
const require = createRequire(path.join(nodeDir, 'package.json'));
const esbuild = require('esbuild');
const { chromium } = require('playwright-core');

await esbuild.build({
  entryPoints: [path.join(HERE, 'page.js')],
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2022',
  outfile: path.join(outDir, 'bundle.js'),
  nodePaths: [path.join(nodeDir, 'node_modules')],
  logLevel: 'error',
});

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // Root in a container has no user namespace for chromium's sandbox.
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
const report = [];
try {
  for (const page of pages) {
    const tab = await browser.newPage();
    const console_ = [];
    tab.on('console', (m) => console_.push(`${m.type()}: ${m.text()}`));
    tab.on('pageerror', (e) => console_.push(`pageerror: ${e}`));
    await tab.goto(page);
    let result;
    try {
      await tab.waitForFunction(() => window.__result !== undefined, null, { timeout: PAGE_BUDGET_MS });
      result = await tab.evaluate(() => window.__result);
    } catch (e) {
      result = { ok: false, error: `the page left no result within ${PAGE_BUDGET_MS} ms: ${e}` };
    }
    report.push({ page, result, console: console_ });
    await tab.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
