// Interop check of the reference server @modelcontextprotocol/server-everything behind
// `mcp-bridge serve --http` (examples/bridge) against the official TypeScript clients
// (StreamableHTTPClientTransport): its tools, resources, prompts, progress, and the sampling and
// elicitation it asks of the client, which reach the handlers registered here through the
// bridge. The TypeScript half of py_everything.py.
//
// Usage: node ts_everything.mjs URL              SDK v1 (@modelcontextprotocol/sdk 1.32.2)
//        node ts_everything.mjs v2 MODE URL      SDK v2 (@modelcontextprotocol/client 2.3.1, the
//                                                one the Inspector brings, loaded from
//                                                $MCP_INTEROP_INSPECTOR_DIR), MODE legacy or
//                                                2026-07-28 (pinned: the bridge turns the
//                                                upstream's asks into input rounds)
// URL: the bridge's http://127.0.0.1:PORT/mcp.
// Prints one line per check; exits 0 when all pass, 1 when any fails, 2 on bad usage.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { attempt, check, describe, loadSdk, runMain, sameJson, texts } from './harness.mjs';

const FEATURES = 'demo://resource/static/document/features.md';
const MODEL = 'ts-interop-model';

const argv = process.argv.slice(2);
const v2 = argv[0] === 'v2';
const mode = v2 ? argv[1] : 'legacy';
const url = argv[argv.length - 1];
if (argv.length !== (v2 ? 3 : 1) || !['legacy', '2026-07-28'].includes(mode) || !/^https?:\/\//.test(url)) {
  console.error('usage: node ts_everything.mjs URL\n       node ts_everything.mjs v2 legacy|2026-07-28 URL');
  process.exit(2);
}
const label = v2 ? `ts_everything v2 ${mode}` : 'ts_everything';

/** The v2 client, from the Inspector's npm project (CommonJS build, as loadSdk does for v1). */
function loadV2() {
  const dir = process.env.MCP_INTEROP_INSPECTOR_DIR;
  try {
    return createRequire(join(resolve(dir), 'package.json'))('@modelcontextprotocol/client');
  } catch (e) {
    console.error(`${label}: FAIL: cannot load @modelcontextprotocol/client from ${dir}: ${e.message}`);
    process.exit(1);
  }
}

const sdk = v2 ? loadV2() : loadSdk('ts_everything', ['client/index.js', 'client/streamableHttp.js', 'types.js']);
const { Client, StreamableHTTPClientTransport, ElicitRequestSchema, CreateMessageRequestSchema } = sdk;

const asked = { elicitations: [], samplings: [] };

async function main() {
  const options = { capabilities: { elicitation: { form: {} }, sampling: {} } };
  if (v2) options.versionNegotiation = { mode: mode === 'legacy' ? 'legacy' : { pin: mode } };
  const client = new Client({ name: 'mcp-runtime-interop-ts-everything', version: '0.1.0' }, options);
  // v1 names a request by its schema, v2 by its method.
  client.setRequestHandler(v2 ? 'elicitation/create' : ElicitRequestSchema, async ({ params }) => {
    asked.elicitations.push(params);
    return {
      action: 'accept',
      content: { name: 'Grace Hopper', check: true, email: 'grace@example.com', birthdate: '1906-12-09', integer: 9, number: 1.5 },
    };
  });
  client.setRequestHandler(v2 ? 'sampling/createMessage' : CreateMessageRequestSchema, async ({ params }) => {
    asked.samplings.push(params);
    return { role: 'assistant', model: MODEL, stopReason: 'endTurn', content: { type: 'text', text: `sampled: ${params.messages[0]?.content?.text}` } };
  });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  const call = (name, args, options) => (v2
    ? client.callTool({ name, arguments: args }, options)
    : client.callTool({ name, arguments: args }, undefined, options));

  if (mode === 'legacy') {
    const info = client.getServerVersion();
    check('server info', info?.name === 'mcp-servers/everything', JSON.stringify(info));
    check('session', typeof transport.sessionId === 'string', `Mcp-Session-Id ${transport.sessionId}`);
  } else {
    const version = client.getNegotiatedProtocolVersion();
    check('protocol version', version === mode, `negotiated ${version}`);
  }

  await attempt('tool list', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    const wanted = ['echo', 'get-sum', 'get-structured-content', 'trigger-long-running-operation',
      'trigger-sampling-request', 'trigger-elicitation-request'];
    const missing = wanted.filter((n) => !names.includes(n));
    check('tool list', missing.length === 0, `missing ${JSON.stringify(missing)} of ${JSON.stringify(names)}`);
  });
  await attempt('echo', async () => {
    const r = await call('echo', { message: 'hello bridge' });
    check('echo', sameJson(texts(r), ['Echo: hello bridge']), describe(r));
  });
  await attempt('structured content', async () => {
    const r = await call('get-structured-content', { location: 'Chicago' });
    const s = r.structuredContent ?? {};
    const ok = s.temperature === 36 && s.conditions === 'Light rain / drizzle' && s.humidity === 82;
    check('structured content', ok && Object.keys(s).length === 3, describe(r));
  });
  await attempt('progress', async () => {
    const seen = [];
    const r = await call('trigger-long-running-operation', { duration: 0.3, steps: 3 },
      { onprogress: (p) => seen.push([p.progress, p.total]) });
    const ok = !r.isError && texts(r)[0]?.startsWith('Long running operation completed');
    check('progress', ok && sameJson(seen, [[1, 3], [2, 3], [3, 3]]), `${describe(r)} progress=${JSON.stringify(seen)}`);
  });
  await attempt('sampling', async () => {
    const before = asked.samplings.length;
    const r = await call('trigger-sampling-request', { prompt: 'a limerick', maxTokens: 40 });
    const got = texts(r).join(' ');
    const ok = !r.isError && asked.samplings.length === before + 1 && got.includes(MODEL)
      && got.includes('sampled: Resource trigger-sampling-request context: a limerick');
    check('sampling', ok, describe(r));
  });
  await attempt('elicitation', async () => {
    const before = asked.elicitations.length;
    const r = await call('trigger-elicitation-request', {});
    const got = texts(r).join('\n');
    const want = ['- Name: Grace Hopper', '- Agreed to terms: true', '- Email: grace@example.com',
      '- Birthdate: 1906-12-09', '- Favorite Integer: 9', '- Favorite Number: 1.5'];
    const schema = asked.elicitations[before]?.requestedSchema?.properties ?? {};
    const ok = !r.isError && asked.elicitations.length === before + 1 && 'name' in schema
      && want.every((w) => got.includes(w));
    check('elicitation', ok, describe(r));
  });
  await attempt('resources', async () => {
    const listed = (await client.listResources()).resources.map((r) => r.uri);
    check('resource list', listed.includes(FEATURES), JSON.stringify(listed));
    const read = await client.readResource({ uri: FEATURES });
    check('resource read', read.contents[0]?.text?.includes('# Everything Server - Features'), `${read.contents[0]?.text?.slice(0, 60)}`);
    const blob = await client.readResource({ uri: 'demo://resource/dynamic/blob/2' });
    const bytes = Buffer.from(blob.contents[0]?.blob ?? '', 'base64').toString();
    check('template read', bytes.startsWith('Resource 2: This is a base64 blob'), bytes.slice(0, 60));
  });
  await attempt('prompts', async () => {
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    check('prompt list', names.includes('args-prompt'), JSON.stringify(names));
    const got = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Lyon' } });
    check('prompt get', got.messages[0]?.content?.text === "What's weather in Lyon?", JSON.stringify(got.messages[0]));
  });
  if (mode === 'legacy') await transport.terminateSession();
  await client.close();
}

await runMain(label, main);
