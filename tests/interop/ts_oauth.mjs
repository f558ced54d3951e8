// The official TypeScript client (@modelcontextprotocol/sdk, pinned in package.json) doing the
// whole OAuth discovery flow against an MCP server with authorization: a 401 with
// `resource_metadata` → the protected resource metadata → the authorization server's metadata
// → a client-credentials token (with `resource`) → the calls. Run by tests/auth.rs.
//
//   node ts_oauth.mjs URL ISSUER CLIENT_ID CLIENT_SECRET SCOPE
//
// Prints one JSON line: {"tools": [names], "whoami": text, "denied": status-or-null}.
import { loadSdk } from './harness.mjs';

const { Client, StreamableHTTPClientTransport, ClientCredentialsProvider } = loadSdk('ts_oauth', [
  'client/index.js',
  'client/streamableHttp.js',
  'client/auth-extensions.js',
]);

const [url, issuer, clientId, clientSecret, scope] = process.argv.slice(2);
const provider = new ClientCredentialsProvider({ clientId, clientSecret, scope, expectedIssuer: issuer });
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
const client = new Client({ name: 'ts-oauth-interop', version: '1.0.0' });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const who = await client.callTool({ name: 'whoami', arguments: {} });
let denied = null;
try {
  await client.callTool({ name: 'close_ticket', arguments: { id: 1 } });
} catch (e) {
  denied = String(e?.code ?? e?.message ?? e);
}
console.log(JSON.stringify({ tools, whoami: who.content[0].text, denied }));
await client.close();
