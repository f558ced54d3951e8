// Interop check of the ticket desk example (examples/tickets) over stdio against the official
// TypeScript client (@modelcontextprotocol/sdk 1.32.2): the same checks as py_tickets.py.
//
// Usage: TICKETS_DB=PATH node ts_tickets.mjs -- COMMAND [ARGS...]
//
// TICKETS_DB is passed on to the server explicitly: the SDK hands a server only a short list of
// "safe" variables (PATH, HOME, ...), never the rest of our environment. PATH should name a fresh
// database: the checks expect the four seeded tickets. This SDK only knows the initialize
// handshake (2025-11-25). Prints one line per check; exits 0 when all pass, 1 when any fails,
// 2 on bad usage. The SDK is loaded by harness.mjs (from $MCP_INTEROP_NODE_DIR).
import { attempt, check, loadSdk, runMain, sameJson } from './harness.mjs';

const EXPECTED_RESOURCES = ['tickets://statuses', 'tickets://1', 'tickets://2', 'tickets://3', 'tickets://4'];
const EXPECTED_STATUSES = ['open', 'in_progress', 'closed'];
const RESOURCE_NOT_FOUND = -32002; // the session era's code
const INVALID_PARAMS = -32602;

const argv = process.argv.slice(2);
const db = process.env.TICKETS_DB;
if (argv[0] !== '--' || argv.length < 2 || !db) {
  console.error('usage: TICKETS_DB=PATH node ts_tickets.mjs -- COMMAND [ARGS...]');
  process.exit(2);
}
const [command, ...args] = argv.slice(1);

const sdk = loadSdk('ts_tickets', ['client/index.js', 'client/stdio.js', 'types.js']);
const { Client, StdioClientTransport, McpError } = sdk;

const parse = (text) => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

async function main() {
  // stderr 'inherit': the server's log lands in our stderr, which the Rust test shows on failure.
  const transport = new StdioClientTransport({ command, args, env: { TICKETS_DB: db }, stderr: 'inherit' });
  const client = new Client({ name: 'mcp-runtime-interop-ts', version: '0.1.0' });
  await client.connect(transport); // initialize + notifications/initialized
  try {
    await attempt('resource list', async () => {
      const { resources } = await client.listResources();
      const uris = resources.map((r) => r.uri);
      const mimes = [...new Set(resources.map((r) => r.mimeType))];
      check('resource list', sameJson(uris, EXPECTED_RESOURCES) && sameJson(mimes, ['application/json']),
        `${JSON.stringify(uris)} with MIME types ${JSON.stringify(mimes)}; expected ${JSON.stringify(EXPECTED_RESOURCES)}, all application/json`);
    });

    await attempt('resource templates', async () => {
      const { resourceTemplates } = await client.listResourceTemplates();
      const templates = resourceTemplates.map((t) => t.uriTemplate);
      check('resource templates', sameJson(templates, ['attachments://{+path}', 'tickets://{id}']), JSON.stringify(templates));
    });

    await attempt('read tickets://statuses', async () => {
      const { contents } = await client.readResource({ uri: 'tickets://statuses' });
      const values = contents.map((c) => parse(c.text));
      check('read tickets://statuses', sameJson(values, [EXPECTED_STATUSES]), JSON.stringify(values));
    });

    await attempt('read tickets://1', async () => {
      const { contents } = await client.readResource({ uri: 'tickets://1' });
      const ticket = contents.length === 1 ? parse(contents[0].text) : undefined;
      const ok = ticket?.id === 1 && ticket?.status === 'open' && !!ticket?.title
        && contents[0].mimeType === 'application/json';
      check('read tickets://1', ok,
        `${contents.length} contents, mimeType ${JSON.stringify(contents[0]?.mimeType)}, ticket ${JSON.stringify(ticket)}`);
    });

    await attempt('read missing ticket', async () => {
      try {
        const r = await client.readResource({ uri: 'tickets://99' });
        check('read missing ticket', false, `expected McpError ${RESOURCE_NOT_FOUND}, got ${JSON.stringify(r)}`);
      } catch (e) {
        check('read missing ticket',
          e instanceof McpError && e.code === RESOURCE_NOT_FOUND && sameJson(e.data, { uri: 'tickets://99' }),
          `${e.name} ${e.code}: ${e.message} data=${JSON.stringify(e.data)} (expected code ${RESOURCE_NOT_FOUND}, data {"uri":"tickets://99"})`);
      }
    });

    await attempt('get prompt triage_ticket', async () => {
      const got = await client.getPrompt({ name: 'triage_ticket', arguments: { id: '1' } });
      const kinds = got.messages.map((m) => m.content.type);
      const embedded = got.messages.filter((m) => m.content.type === 'resource').map((m) => m.content.resource);
      const ticket = embedded.length ? parse(embedded[0].text) : undefined;
      const ok = sameJson(kinds, ['text', 'resource']) && got.messages.every((m) => m.role === 'user')
        && embedded[0]?.uri === 'tickets://1' && ticket?.id === 1;
      check('get prompt triage_ticket', ok,
        `description ${JSON.stringify(got.description)}, content types ${JSON.stringify(kinds)}, embedded ${JSON.stringify(embedded.map((r) => r.uri))} with ticket ${JSON.stringify(ticket)}`);
    });

    await attempt('prompt without id', async () => {
      try {
        const got = await client.getPrompt({ name: 'triage_ticket', arguments: {} });
        check('prompt without id', false, `expected McpError ${INVALID_PARAMS}, got ${JSON.stringify(got)}`);
      } catch (e) {
        check('prompt without id', e instanceof McpError && e.code === INVALID_PARAMS && e.message.includes('`id`'),
          `${e.name} ${e.code}: ${e.message} (expected McpError ${INVALID_PARAMS} naming \`id\`)`);
      }
    });

    for (const [label, ref] of [
      ['complete template variable', { type: 'ref/resource', uri: 'tickets://{id}' }],
      ['complete prompt argument', { type: 'ref/prompt', name: 'triage_ticket' }],
    ]) {
      await attempt(label, async () => {
        const { completion: c } = await client.complete({ ref, argument: { name: 'id', value: '1' } });
        check(label, sameJson(c.values, ['1']) && c.total === 1 && c.hasMore === false,
          `values=${JSON.stringify(c.values)} total=${c.total} hasMore=${c.hasMore}; expected ["1"], 1, false`);
      });
    }

    await attempt('tool query_tickets_by_status', async () => {
      // Listing first: the SDK validates structuredContent against the listed outputSchema.
      await client.listTools();
      const r = await client.callTool({ name: 'query_tickets_by_status', arguments: { status: 'open' } });
      const found = r.structuredContent?.result;
      const ids = Array.isArray(found) ? found.map((t) => t.id) : found;
      check('tool query_tickets_by_status', !r.isError && sameJson(ids, [1, 4]),
        `isError=${JSON.stringify(r.isError)} ids=${JSON.stringify(ids)}; expected [1,4]`);
    });
  } finally {
    await client.close();
  }
}

await runMain('ts_tickets', main);
