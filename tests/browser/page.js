// The script of the browser test's page (bundled by drive.mjs with esbuild): the official
// TypeScript SDK client, in the browser, against the ticket desk at the URL in `?mcp=`. It lists
// the tools, opens a ticket and queries the open ones, then leaves what happened in
// `window.__result` for drive.mjs to read: { ok, tools, created, open } or { ok: false, error }
// (with `?probe=401`, one tokenless POST: { ok: false, status, challenge }).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

async function run() {
  const params = new URLSearchParams(location.search);
  const url = new URL(params.get('mcp'));
  // A bearer token, when the desk requires one (`?token=`; the test obtained it from its
  // authorization server). Without it the desk answers 401, which the script can read.
  const token = params.get('token');
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  if (params.get('probe') === '401') {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    return { ok: false, status: r.status, challenge: r.headers.get('www-authenticate') };
  }
  const client = new Client({ name: 'browser-page', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
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
