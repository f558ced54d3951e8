// Interop check of an MCP server over Streamable HTTP against the official TypeScript client
// (@modelcontextprotocol/sdk 1.32.2, `StreamableHTTPClientTransport`): the same tool checks as
// py_http.py, plus the transport's own life cycle: the session id from initialize, the GET
// stream it opens after `notifications/initialized`, the session headers on every later request,
// and `terminateSession()` (DELETE) at the end, which must really succeed (the SDK itself also
// accepts a 405 there) and end the session.
//
// Usage: node ts_http.mjs URL      (URL: the MCP endpoint, http://127.0.0.1:PORT/mcp)
//
// This SDK only knows the initialize handshake, so the negotiated version is 2025-11-25.
// Prints one line per check; exits 0 when all pass, 1 when any fails, 2 on bad usage.
//
// The SDK is loaded from the npm project tests/interop/setup.sh installs ($ROOT/.interop/node,
// or $MCP_INTEROP_NODE_DIR), with require() anchored there (see harness.mjs for why).
import { check, describe, loadSdk, runMain, sameJson, sleep, texts } from './harness.mjs';

const EXPECTED_VERSION = '2025-11-25';
const EXPECTED_SERVER = 'mcp-examples';
const EXPECTED_TOOLS = ['add', 'divide', 'greet', 'measure', 'sleep'];
const INVALID_PARAMS = -32602;
const CONNECT_BUDGET_MS = 5000; // same budget as the Python client
const GET_STREAM_WAIT_MS = 5000; // the SDK opens the GET stream in the background

const argv = process.argv.slice(2);
if (argv.length !== 1 || !/^https?:\/\//.test(argv[0])) {
  console.error('usage: node ts_http.mjs URL');
  process.exit(2);
}
const url = new URL(argv[0]);

const sdk = loadSdk('ts_http', ['client/index.js', 'client/streamableHttp.js', 'types.js']);
const { Client, StreamableHTTPClientTransport, McpError } = sdk;

// Every HTTP exchange the transport makes: what it sent and what came back (the body untouched).
const exchanges = [];
async function recordingFetch(input, init = {}) {
  const headers = new Headers(init.headers);
  const entry = {
    method: (init.method ?? 'GET').toUpperCase(),
    session: headers.get('mcp-session-id'),
    version: headers.get('mcp-protocol-version'),
    rpc: typeof init.body === 'string' ? JSON.parse(init.body).method ?? 'response' : undefined,
    status: undefined,
    contentType: undefined,
  };
  exchanges.push(entry);
  const response = await fetch(input, init);
  entry.status = response.status;
  entry.contentType = response.headers.get('content-type');
  return response;
}
const show = (e) =>
  `${e.method}${e.rpc ? ` ${e.rpc}` : ''} -> ${e.status} ${e.contentType ?? ''} (session ${JSON.stringify(e.session)}, version ${JSON.stringify(e.version)})`;
const log = () => exchanges.map(show).join('; ');

async function call(client, label, name, args, ok, expected) {
  // A JSON-RPC error here is a failed check too (these calls should all produce results).
  try {
    const r = await client.callTool({ name, arguments: args });
    check(label, ok(r), `${describe(r)}; expected ${expected}`);
  } catch (e) {
    check(label, false, `${e.name} ${e.code ?? ''}: ${e.message}; expected ${expected}`);
  }
}

async function main() {
  const transport = new StreamableHTTPClientTransport(url, { fetch: recordingFetch });
  const client = new Client({ name: 'mcp-runtime-interop-ts-http', version: '0.1.0' });
  const errors = [];
  client.onerror = (e) => errors.push(e);

  const started = performance.now();
  await client.connect(transport); // initialize + notifications/initialized, then the GET stream
  const connectMs = performance.now() - started;
  try {
    check('connect time', connectMs < CONNECT_BUDGET_MS, `${(connectMs / 1000).toFixed(2)}s (budget ${CONNECT_BUDGET_MS / 1000}s)`);
    const negotiated = transport.protocolVersion;
    check('protocol version', negotiated === EXPECTED_VERSION, `negotiated ${JSON.stringify(negotiated)}, expected "${EXPECTED_VERSION}"`);
    const sessionId = transport.sessionId;
    check('session id', typeof sessionId === 'string' && sessionId.length >= 32,
      `Mcp-Session-Id ${JSON.stringify(sessionId)} (expected one of at least 32 characters)`);
    const name = client.getServerVersion()?.name;
    check('server name', name === EXPECTED_SERVER, `${JSON.stringify(name)} from initialize, expected "${EXPECTED_SERVER}"`);

    // The SDK GETs the endpoint once `notifications/initialized` got its 202, without awaiting it.
    const waitFrom = performance.now();
    let get;
    while (!(get = exchanges.find((e) => e.method === 'GET' && e.status !== undefined))
      && performance.now() - waitFrom < GET_STREAM_WAIT_MS) {
      await sleep(20);
    }
    check('GET stream', get?.status === 200 && get.contentType?.startsWith('text/event-stream') && get.session === sessionId,
      get ? show(get) : `no GET within ${GET_STREAM_WAIT_MS / 1000}s; exchanges: ${log()}`);

    // Listing first also matters for callTool: the SDK validates structuredContent against the
    // outputSchema of tools it has listed.
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    check('tool list', sameJson(names, EXPECTED_TOOLS), JSON.stringify(names));

    await call(client, 'add 2+3', 'add', { a: 2, b: 3 },
      (r) => !r.isError && sameJson(texts(r), ['5']) && sameJson(r.structuredContent, { result: 5 }),
      "text '5', structured {result: 5}");
    await call(client, 'measure', 'measure', { from: { x: 0, y: 0 }, to: { x: 3, y: 4 } },
      (r) => !r.isError && r.structuredContent?.distance === 5.0,
      'structured distance 5.0');
    await call(client, 'divide by zero', 'divide', { dividend: 1, divisor: 0 },
      (r) => r.isError === true && sameJson(texts(r), ['cannot divide by zero']),
      "isError with text 'cannot divide by zero'");
    await call(client, 'bad argument', 'add', { a: 'x', b: 1 },
      (r) => r.isError === true && texts(r).some((t) => t.includes('`a`')),
      'isError with text naming `a`');

    try {
      const r = await client.callTool({ name: 'nope', arguments: {} });
      check('unknown tool', false, `expected MCP error ${INVALID_PARAMS}, got a result: ${describe(r)}`);
    } catch (e) {
      check('unknown tool', e instanceof McpError && e.code === INVALID_PARAMS,
        `${e.name} ${e.code}: ${e.message} (expected McpError code ${INVALID_PARAMS})`);
    }

    // Every POST after initialize carried the session and the negotiated version.
    const posts = exchanges.filter((e) => e.method === 'POST' && e.rpc !== 'initialize');
    const bare = posts.filter((e) => e.session !== sessionId || e.version !== EXPECTED_VERSION);
    check('session headers', posts.length > 0 && bare.length === 0,
      bare.length ? `without them: ${bare.map(show).join('; ')}` : `${posts.length} POSTs with Mcp-Session-Id and MCP-Protocol-Version`);
    const refused = exchanges.filter((e) => e.status !== undefined && (e.status < 200 || e.status > 299));
    check('HTTP statuses', refused.length === 0, refused.length ? `refused: ${refused.map(show).join('; ')}` : 'all 2xx');
    check('transport errors', errors.length === 0, errors.length ? errors.map((e) => e?.message ?? String(e)).join('; ') : 'none');

    // DELETE: terminateSession() resolves on a 405 too, so look at what the server answered.
    try {
      await transport.terminateSession();
      const del = exchanges.filter((e) => e.method === 'DELETE').at(-1);
      check('terminateSession', del?.status === 200 && del.session === sessionId && transport.sessionId === undefined,
        del ? `${show(del)}; session id afterwards ${JSON.stringify(transport.sessionId)}` : `no DELETE sent; exchanges: ${log()}`);
    } catch (e) {
      check('terminateSession', false, `${e.name} ${e.code ?? ''}: ${e.message}`);
    }
    // The ended session is gone: the server answers its id with 404.
    const after = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': EXPECTED_VERSION,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list', params: {} }),
    });
    const text = await after.text();
    check('session ended', after.status === 404, `POST with the terminated session id -> ${after.status} ${text}`);
  } finally {
    await client.close();
  }
}

await runMain('ts_http', main);
