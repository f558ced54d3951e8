// Interop check of a stdio MCP server against the official TypeScript client
// (@modelcontextprotocol/sdk 1.32.2), the same checks as py_client.py.
//
// Usage: node ts_client.mjs -- COMMAND [ARGS...]
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

const argv = process.argv.slice(2);
if (argv[0] !== '--' || argv.length < 2) {
  console.error('usage: node ts_client.mjs -- COMMAND [ARGS...]');
  process.exit(2);
}
const [command, ...args] = argv.slice(1);

const sdk = loadSdk('ts_client', ['client/index.js', 'client/stdio.js', 'types.js']);
const { Client, StdioClientTransport, McpError } = sdk;

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
  // stderr 'inherit': the server's log lands in our stderr, which the Rust test shows on failure.
  const transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
  // Client keeps no copy of the negotiated version; connect() hands it to the transport's optional
  // setProtocolVersion (HTTP transports send it as a header), which the stdio transport lacks.
  let negotiated;
  transport.setProtocolVersion = (v) => {
    negotiated = v;
  };
  const client = new Client({ name: 'mcp-runtime-interop-ts', version: '0.1.0' });

  const started = performance.now();
  await client.connect(transport); // initialize + notifications/initialized
  const connectMs = performance.now() - started;
  try {
    check('connect time', connectMs < CONNECT_BUDGET_MS, `${(connectMs / 1000).toFixed(2)}s (budget ${CONNECT_BUDGET_MS / 1000}s)`);
    check('protocol version', negotiated === EXPECTED_VERSION, `negotiated ${JSON.stringify(negotiated)}, expected "${EXPECTED_VERSION}"`);
    const name = client.getServerVersion()?.name;
    check('server name', name === EXPECTED_SERVER, `${JSON.stringify(name)} from initialize, expected "${EXPECTED_SERVER}"`);

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
  } finally {
    await client.close();
  }
}

await runMain('ts_client', main);
