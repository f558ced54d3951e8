// Drives the MCP Apps browser test (integration/tests/browser.rs): bundles host.js (the host
// page's script) and app.js (inlined into app.html, the app the server is told to serve) with
// the pinned esbuild, then opens each host page URL given in headless Debian chromium through
// the pinned playwright-core. In each, once the host has rendered the app and handed it the
// tool's result, it reads the app's status line, clicks the app's button (the app calls
// `increment` through the host) and reads the status line again. Prints one JSON line:
// [{ page, host, app: { shown, clicked }, console }] in the order given.
//
// Usage: node drive.mjs OUT_DIR PAGE_URL...   (OUT_DIR gets apps-host.js and app.html)
// Environment: MCP_BROWSER_NODE_DIR (the npm project tests/browser/setup.sh installs for apps),
//              CHROMIUM (default /usr/bin/chromium).
import { createRequire } from 'node:module';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BUDGET_MS = 15000;

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
const require = createRequire(path.join(nodeDir, 'package.json'));
const esbuild = require('esbuild');
const { chromium } = require('playwright-core');

const bundle = (entry, outfile) =>
  esbuild.build({
    entryPoints: [path.join(HERE, entry)],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    nodePaths: [path.join(nodeDir, 'node_modules')],
    logLevel: 'error',
    ...(outfile ? { outfile } : { write: false }),
  });
await bundle('host.js', path.join(outDir, 'apps-host.js'));
const app = await bundle('app.js');
const template = await readFile(path.join(HERE, 'app.html'), 'utf8');
// A function replacement: `$` in the bundle must stay as it is.
await writeFile(
  path.join(outDir, 'app.html'),
  template.replace('/*APP_BUNDLE*/', () => app.outputFiles[0].text),
);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});

/** The app's `#status` once `accept` holds for it, or what it said when time ran out. */
async function statusWhen(frame, accept) {
  const deadline = Date.now() + BUDGET_MS;
  let last = null;
  while (Date.now() < deadline) {
    last = await frame.locator('#status').textContent().catch(() => null);
    if (last !== null && accept(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  return `timed out; last: ${last}`;
}

const report = [];
try {
  for (const page of pages) {
    const tab = await browser.newPage();
    const console_ = [];
    tab.on('console', (m) => console_.push(`${m.type()}: ${m.text()}`));
    tab.on('pageerror', (e) => console_.push(`pageerror: ${e}`));
    await tab.goto(page);
    let host;
    const appSaw = {};
    try {
      await tab.waitForFunction(() => window.__result !== undefined, null, { timeout: BUDGET_MS });
      host = await tab.evaluate(() => window.__result);
      if (host.ok) {
        const frame = await (await tab.waitForSelector('#app')).contentFrame();
        appSaw.shown = await statusWhen(frame, (s) => s.startsWith('Counter:'));
        await frame.locator('#plus:not([disabled])').click({ timeout: BUDGET_MS });
        appSaw.clicked = await statusWhen(frame, (s) => s !== appSaw.shown && !s.startsWith('Waiting'));
      }
    } catch (e) {
      host = host ?? { ok: false };
      host.driveError = String(e);
    }
    report.push({ page, host, app: appSaw, console: console_ });
    await tab.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
