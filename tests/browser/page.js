// The script of the browser test's page (bundled by drive.mjs with esbuild): the official
// TypeScript SDK client, in the browser, against the ticket desk at the URL in `?mcp=`. It lists
// the tools, opens a ticket and queries the open ones, then leaves what happened in
// `window.__result` for drive.mjs to read: { ok, tools, created, open } or { ok: false, error }.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

async function run() {
  const url = new URL(new URLSearchParams(location.search).get('mcp'));
  const client = new Client({ name: 'browser-page', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  const { tools } = await client.listTools();
  const title = `from ${location.origin}`;
  const created = await client.callTool({ name: 'create_ticket', arguments: { title } });
  const open = await client.callTool({
    name: 'query_tickets_by_status',
    arguments: { status: 'open' },
  });
  // The session id came back through Access-Control-Expose-Headers, or the calls above failed.
  const session = transport.sessionId ?? null;
  await transport.terminateSession();
  await client.close();
  return {
    ok: true,
    tools: tools.map((t) => t.name).sort(),
    created: created.structuredContent ?? created.content,
    createdIsError: created.isError ?? false,
    open: open.structuredContent ?? open.content,
    session,
  };
}

run().then(
  (result) => { window.__result = result; },
  (e) => { window.__result = { ok: false, error: String(e && e.stack ? e.stack : e) }; },
);
