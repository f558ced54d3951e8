// Interop check of the Context example (examples/context.rs) against the official TypeScript
// client (@modelcontextprotocol/sdk 1.32.2): elicitation, sampling, roots, progress, logging,
// resources/subscribe and tools list_changed. The session-era half of py_context.py.
//
// Usage: node ts_context.mjs -- COMMAND [ARGS...]   (stdio: spawns COMMAND as the server)
//        node ts_context.mjs URL                    (Streamable HTTP: http://127.0.0.1:PORT/mcp)
//
// This SDK only knows the initialize handshake (2025-11-25), so the server asks with real
// requests (elicitation/create, sampling/createMessage, roots/list), answered by the handlers
// registered here. Over HTTP the server may have served earlier runs: nothing here assumes a fresh
// board. Prints one line per check; exits 0 when all pass, 1 when any fails, 2 on bad usage.
//
// The SDK is loaded from the npm project tests/interop/setup.sh installs ($ROOT/.interop/node,
// or $MCP_INTEROP_NODE_DIR), with require() anchored there (see harness.mjs for why).
import { attempt, check, describe, loadSdk, runMain, sameJson, sleep, textIs } from './harness.mjs';

const EXPECTED_VERSION = '2025-11-25';
const EXPECTED_TOOLS = ['count', 'greet', 'list_roots', 'order_pizza', 'pin_note', 'set_beta', 'summarize'];
const BOARD = 'notes://board';
const ORDER_PROMPT = 'What would you like?';
const NAME_PROMPT = 'What is your name?';
const WAIT_MS = 5000; // how long a notification may take to arrive

const argv = process.argv.slice(2);
const stdio = argv[0] === '--' && argv.length >= 2;
const http = argv.length === 1 && /^https?:\/\//.test(argv[0]);
if (!stdio && !http) {
  console.error('usage: node ts_context.mjs -- COMMAND [ARGS...]\n       node ts_context.mjs URL');
  process.exit(2);
}

const sdk = loadSdk('ts_context', ['client/index.js', 'client/stdio.js', 'client/streamableHttp.js', 'types.js']);
const {
  Client, StdioClientTransport, StreamableHTTPClientTransport,
  ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema,
  LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema,
} = sdk;

/** Polls `ok` until it holds or `timeout` passes. */
async function eventually(ok, timeout = WAIT_MS) {
  const from = performance.now();
  while (!ok() && performance.now() - from < timeout) await sleep(20);
  return ok();
}

function transport() {
  if (http) return new StreamableHTTPClientTransport(new URL(argv[0]));
  // stderr 'inherit': the server's log lands in our stderr, which the Rust test shows on failure.
  const [command, ...args] = argv.slice(1);
  return new StdioClientTransport({ command, args, stderr: 'inherit' });
}

// The client's side: handlers that record every request the server makes and answer from a plan.
const user = {
  answers: new Map(), // elicitation answers by the server's message
  elicitations: [],
  samplings: [],
  rootsAsked: 0,
  logs: [],
  updated: [], // resources/updated URIs
  toolLists: [], // tool names after each tools list_changed (the SDK refetches the list itself)
};

function makeClient() {
  return new Client({ name: 'mcp-runtime-interop-ts-context', version: '0.1.0' }, {
    capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } },
    listChanged: {
      tools: {
        debounceMs: 0,
        onChanged: (error, tools) => user.toolLists.push(error ? `error: ${error.message}` : tools.map((t) => t.name).sort()),
      },
    },
  });
}

function installHandlers(client) {
  client.setRequestHandler(ElicitRequestSchema, async ({ params }) => {
    user.elicitations.push(params);
    const answer = user.answers.get(params.message);
    if (!answer) throw new Error(`no answer planned for ${JSON.stringify(params.message)}`);
    return answer;
  });
  client.setRequestHandler(CreateMessageRequestSchema, async ({ params }) => {
    user.samplings.push(params);
    return { role: 'assistant', content: { type: 'text', text: 'Pizza is good.' }, model: 'test-model-1', stopReason: 'endTurn' };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    user.rootsAsked += 1;
    return { roots: [{ uri: 'file:///home/ada/project', name: 'project' }, { uri: 'file:///tmp/scratch' }] };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    user.logs.push([params.level, params.data]);
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => {
    user.updated.push(params.uri);
  });
}

const call = (client, name, args, options) => client.callTool({ name, arguments: args }, undefined, options);

// ---------------------------------------------------------------- elicitation

async function orderAccept(client) {
  const before = user.elicitations.length;
  user.answers.set(ORDER_PROMPT, {
    action: 'accept',
    content: { size: 'large', quantity: 2, toppings: ['olives', 'peppers'], email: 'ada@example.com' },
  });
  const r = await call(client, 'order_pizza', {});
  const asked = user.elicitations.slice(before);
  const expected = 'Ordered 2 Large pizza(s) with olives, peppers; receipt to ada@example.com.';
  check('order_pizza accept', textIs(r, expected) && asked.length === 1,
    `${describe(r)} after ${asked.length} elicitation(s); expected ${JSON.stringify(expected)} after one`);
  if (!asked.length) return;
  const schema = asked[0].requestedSchema ?? {};
  const { size = {}, quantity = {}, toppings = {}, email = {} } = schema.properties ?? {};
  const options = (size.oneOf ?? []).map((o) => [o.const, o.title]);
  const ok = asked[0].mode === 'form' && schema.type === 'object'
    && sameJson(Object.keys(schema.properties ?? {}).sort(), ['email', 'quantity', 'size', 'toppings'])
    && sameJson([...(schema.required ?? [])].sort(), ['quantity', 'size'])
    && sameJson(options, [['small', 'Small (25 cm)'], ['medium', 'Medium (30 cm)'], ['large', 'Large (35 cm)']])
    && quantity.type === 'integer' && quantity.minimum === 1 && quantity.maximum === 10
    && toppings.type === 'array' && sameJson(toppings.items?.enum, ['mushrooms', 'olives', 'peppers'])
    && email.type === 'string' && email.format === 'email';
  check('order form schema', ok, `mode=${JSON.stringify(asked[0].mode)} schema=${JSON.stringify(schema)}`);
}

async function orderRefused(client, action, expected) {
  const before = user.elicitations.length;
  user.answers.set(ORDER_PROMPT, { action });
  const r = await call(client, 'order_pizza', {});
  const asked = user.elicitations.length - before;
  check(`order_pizza ${action}`, textIs(r, expected) && asked === 1,
    `${describe(r)} after ${asked} elicitation(s); expected ${JSON.stringify(expected)} after one`);
}

async function greetAsks(client) {
  const before = user.elicitations.length;
  user.answers.set(NAME_PROMPT, { action: 'accept', content: { name: 'Ada' } });
  const r = await call(client, 'greet', {});
  const asked = user.elicitations.slice(before);
  const schema = asked[0]?.requestedSchema ?? {};
  check('greet asks for the name',
    textIs(r, 'Hello, Ada!') && asked.length === 1 && schema.properties?.name?.type === 'string'
      && sameJson(schema.required, ['name']),
    `${describe(r)}; asked ${JSON.stringify(asked.map((a) => a.message))} with schema ${JSON.stringify(schema)}`);
}

async function greetWithoutElicitation() {
  // A second client (a second server process over stdio, a second session over HTTP) that
  // declares no capabilities at all.
  const plain = new Client({ name: 'mcp-runtime-interop-ts-plain', version: '0.1.0' });
  await plain.connect(transport());
  try {
    const r = await call(plain, 'greet', {});
    check('greet without elicitation capability', textIs(r, 'Hello, stranger!'), `${describe(r)}; expected 'Hello, stranger!'`);
  } finally {
    await plain.close();
  }
}

// ---------------------------------------------------------------- sampling and roots

async function summarize(client) {
  const before = user.samplings.length;
  const r = await call(client, 'summarize', { text: 'Pizza, the food of the gods.' });
  const asked = user.samplings.slice(before);
  const expected = 'Summary (test-model-1): Pizza is good.';
  check('summarize', textIs(r, expected) && asked.length === 1,
    `${describe(r)} after ${asked.length} sampling request(s); expected ${JSON.stringify(expected)} after one`);
  if (!asked.length) return;
  const p = asked[0];
  const ok = sameJson(p.messages, [{ role: 'user', content: { type: 'text', text: 'Summarize in one sentence:\n\nPizza, the food of the gods.' } }])
    && p.systemPrompt === 'You are concise.' && p.maxTokens === 200 && p.temperature === 0.2;
  check('sampling request', ok, JSON.stringify(p));
}

async function listRoots(client) {
  const before = user.rootsAsked;
  const r = await call(client, 'list_roots', {});
  const expected = '2 root(s)\nproject: file:///home/ada/project\nfile:///tmp/scratch';
  check('list_roots', textIs(r, expected) && user.rootsAsked === before + 1,
    `${describe(r)} after ${user.rootsAsked - before} roots request(s); expected ${JSON.stringify(expected)} after one`);
}

// ---------------------------------------------------------------- progress and logs

async function countProgress(client) {
  const seen = [];
  const r = await call(client, 'count', { n: 5 }, { onprogress: (p) => seen.push([p.progress, p.total, p.message]) });
  check('count', textIs(r, 'counted to 5'), `${describe(r)}; expected 'counted to 5'`);
  const expected = [1, 2, 3, 4, 5].map((i) => [i, 5, `${i} of 5`]);
  // The SDK runs progress handlers in a microtask but drops a call's handler as soon as its
  // response is read (protocol.js `_onnotification` vs `_onresponse`): when the last progress
  // notification and the result arrive in one read, the last one can be lost on the client side.
  // The wire order is checked exactly by py_context.py and tests/stdio_context.rs; here every
  // progress seen must be the expected one, in order, and at most the last may be missing.
  const ok = seen.length >= expected.length - 1 && sameJson(seen, expected.slice(0, seen.length));
  check('count progress', ok, `${JSON.stringify(seen)}; expected ${JSON.stringify(expected)} (the last may be lost by the SDK)`);
}

async function logging(client) {
  const ALL = [['info', 'counting to 3'], ['debug', 'reached 1'], ['debug', 'reached 2'], ['debug', 'reached 3']];
  for (const [level, expected] of [['debug', ALL], ['info', ALL.slice(0, 1)]]) {
    await client.setLoggingLevel(level);
    const before = user.logs.length;
    const r = await call(client, 'count', { n: 3 });
    if (!textIs(r, 'counted to 3')) throw new Error(`count: ${describe(r)}`);
    await sleep(200); // a log line still on its way would show up here
    const got = user.logs.slice(before);
    check(`logging at ${level}`, sameJson(got, expected), `${JSON.stringify(got)}; expected ${JSON.stringify(expected)}`);
  }
}

// ---------------------------------------------------------------- change notifications

async function board(client) {
  const read = async () => (await client.readResource({ uri: BOARD })).contents.flatMap((c) => c.text.split('\n')).filter((l) => l);
  const before = await read();
  await client.subscribeResource({ uri: BOARD });
  const note = 'buy flour (typescript)';
  const r = await call(client, 'pin_note', { text: note });
  const arrived = await eventually(() => user.updated.includes(BOARD));
  check('resource updated', arrived, `resources/updated for ${JSON.stringify(user.updated)}; expected ${BOARD}`);
  const expected = `${before.length + 1} note(s) on the board`;
  check('pin_note', textIs(r, expected), `${describe(r)}; expected ${JSON.stringify(expected)}`);
  const after = await read();
  check('read the board', sameJson(after, [...before, note]), `${JSON.stringify(after)}; expected ${JSON.stringify([...before, note])}`);
}

async function beta(client) {
  const listChanged = client.getServerCapabilities()?.tools?.listChanged;
  check('tools listChanged capability', listChanged === true, `capabilities.tools.listChanged = ${JSON.stringify(listChanged)}`);
  for (const enabled of [true, false]) {
    const before = user.toolLists.length;
    const r = await call(client, 'set_beta', { enabled });
    // The SDK's listChanged handler refetches tools/list on the notification and hands it over.
    const arrived = await eventually(() => user.toolLists.length > before);
    const names = user.toolLists[before];
    const state = enabled ? 'on' : 'off';
    check(`set_beta ${enabled}`,
      textIs(r, `beta_feature is ${state}`) && arrived && Array.isArray(names) && names.includes('beta_feature') === enabled,
      `${describe(r)}; tools after notifications/tools/list_changed: ${arrived ? JSON.stringify(names) : 'no notification'}`);
    if (enabled) {
      const b = await call(client, 'beta_feature', {});
      check('call beta_feature', textIs(b, 'You found the beta feature.'), describe(b));
    }
  }
}

async function main() {
  const client = makeClient();
  installHandlers(client);
  const t = transport();
  // Client keeps no copy of the negotiated version; connect() hands it to the transport's optional
  // setProtocolVersion, which the HTTP transport has (and keeps) and the stdio one lacks.
  let negotiated;
  const keep = t.setProtocolVersion?.bind(t);
  t.setProtocolVersion = (v) => {
    negotiated = v;
    keep?.(v);
  };
  await client.connect(t); // initialize + notifications/initialized
  try {
    const version = negotiated;
    check('protocol version', version === EXPECTED_VERSION, `negotiated ${JSON.stringify(version)}, expected "${EXPECTED_VERSION}"`);
    await attempt('tool list', async () => {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      check('tool list', sameJson(names, EXPECTED_TOOLS), `${JSON.stringify(names)}; expected ${JSON.stringify(EXPECTED_TOOLS)}`);
    });
    await attempt('order_pizza accept', () => orderAccept(client));
    await attempt('order_pizza decline', () => orderRefused(client, 'decline', 'Order declined.'));
    await attempt('order_pizza cancel', () => orderRefused(client, 'cancel', 'Order cancelled.'));
    await attempt('greet asks for the name', () => greetAsks(client));
    await attempt('summarize', () => summarize(client));
    await attempt('list_roots', () => listRoots(client));
    await attempt('count progress', () => countProgress(client));
    await attempt('logging', () => logging(client));
    await attempt('greet without elicitation capability', greetWithoutElicitation);
    await attempt('resource updated', () => board(client));
    await attempt('tools list_changed', () => beta(client));
  } finally {
    await client.close();
  }
}

await runMain('ts_context', main);
