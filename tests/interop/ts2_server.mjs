// A representative server written with the TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0,
// McpServer), for tests/interop_client.rs: our Rust client against it. The SDK serves both eras
// from one factory: 2026-07-28 (answering `server/discover`, one request at a time, input rounds
// as `InputRequiredResult`s) and the 2025 session era (`initialize`, where its "legacy shim"
// turns the same `inputRequired(...)` returns into real server-to-client requests).
//
//   node ts2_server.mjs               stdio (serveStdio: the client's first message picks the era)
//   node ts2_server.mjs --http PORT   Streamable HTTP on 127.0.0.1:PORT at /mcp (createMcpHandler:
//                                     2026-07-28 per request, the session era served statelessly)
//
// The tools of ts_server.mjs (`add`, `count` with progress, `greet` that elicits a form, `fail`),
// its resource, template, prompt and completions, and the asks that need input rounds:
// `sample` (sampling), `roots` (roots/list), `plan` (two rounds: a form, then a sampling request
// that uses its answer, with `requestState` carried between them), `log` (a log message) and
// `touch` (announces that a resource changed: to `subscriptions/listen` streams in 2026-07-28).
//
// The SDK is loaded from $MCP_INTEROP_NODE_DIR (or $ROOT/.interop/node), as the other scripts do.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const nodeDir = process.env.MCP_INTEROP_NODE_DIR || fileURLToPath(new URL('../../.interop/node/', import.meta.url));
const require = createRequire(join(resolve(nodeDir), 'package.json'));
const {
  McpServer, ResourceTemplate, completable, createMcpHandler, inputRequired, inputResponse, acceptedContent,
} = require('@modelcontextprotocol/server');
const { serveStdio } = require('@modelcontextprotocol/server/stdio');
const { z } = require('zod');

const text = (t) => ({ content: [{ type: 'text', text: t }] });

/// The HTTP handler's `notify` (its `subscriptions/listen` bus), when serving HTTP.
let httpNotifier;

function build() {
  const server = new McpServer({ name: 'ts2-interop', version: '1.0.0' }, {
    capabilities: { logging: {}, resources: { subscribe: true } },
    // 2026-07-28 cache hints: the tool list may be kept a minute, by any cache.
    cacheHints: { 'tools/list': { ttlMs: 60000, cacheScope: 'public' } },
  });

  server.registerTool('add', {
    description: 'Add two numbers.',
    inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
    outputSchema: z.object({ result: z.number().int() }),
  }, async ({ a, b }) => {
    const output = { result: a + b };
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
  });

  server.registerTool('count', {
    description: 'Count to `steps`, reporting progress at each step.',
    inputSchema: z.object({ steps: z.number().int() }),
  }, async ({ steps }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
        });
      }
    }
    return text(`counted ${steps}`);
  });

  const nameForm = z.object({ name: z.string() });
  server.registerTool('greet', {
    description: 'Ask the user for their name (form elicitation) and greet them.',
  }, async (ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'name');
    if (answer.kind === 'elicit') {
      return text(answer.action === 'accept' ? `Hello, ${answer.content?.name}!` : `no name (${answer.action})`);
    }
    return inputRequired({
      inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameForm }) },
    });
  });

  server.registerTool('fail', { description: 'Always fails.' }, async () => {
    throw new Error('this tool always fails');
  });

  server.registerTool('sample', {
    description: 'Ask the client to sample a haiku about `topic`.',
    inputSchema: z.object({ topic: z.string() }),
  }, async ({ topic }, ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'haiku');
    if (answer.kind === 'sampling') {
      const block = answer.result.content;
      return text(`${answer.result.model} wrote: ${block.type === 'text' ? block.text : `(${block.type})`}`);
    }
    return inputRequired({
      inputRequests: {
        haiku: inputRequired.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: `Write a haiku about ${topic}` } }],
          maxTokens: 60,
        }),
      },
    });
  });

  server.registerTool('roots', { description: "List the client's roots." }, async (ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'roots');
    if (answer.kind === 'roots') {
      return text(answer.roots.map((r) => `${r.name ?? '?'}=${r.uri}`).join(', '));
    }
    return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
  });

  server.registerTool('plan', {
    description: 'Two rounds: ask for a name, then ask the model for a plan for it.',
  }, async (ctx) => {
    const state = ctx.mcpReq.requestState();
    if (state === undefined) {
      return inputRequired({
        inputRequests: { who: inputRequired.elicit({ message: 'Plan for whom?', requestedSchema: nameForm }) },
        requestState: 'asked-name',
      });
    }
    if (state === 'asked-name') {
      const who = acceptedContent(ctx.mcpReq.inputResponses, 'who', nameForm);
      if (!who) return { ...text('no name given'), isError: true };
      return inputRequired({
        inputRequests: {
          plan: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: `Plan a day for ${who.name}` } }],
            maxTokens: 60,
          }),
        },
        requestState: `asked-plan:${who.name}`,
      });
    }
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'plan');
    if (!state.startsWith('asked-plan:') || answer.kind !== 'sampling') {
      return { ...text(`unexpected round: ${state} / ${answer.kind}`), isError: true };
    }
    return text(`plan for ${state.slice('asked-plan:'.length)}: ${answer.result.content.text}`);
  });

  server.registerTool('log', { description: 'Send one log message, then answer.' }, async (ctx) => {
    await ctx.mcpReq.log('warning', 'a warning from the v2 server', 'ts2-interop');
    return text('logged');
  });

  server.registerTool('touch', {
    description: 'Announce that the resource `uri` changed.',
    inputSchema: z.object({ uri: z.string() }),
  }, async ({ uri }) => {
    // Over HTTP every request has an instance of its own: the change goes through the handler's
    // bus to the open `subscriptions/listen` streams. Over stdio the connection's instance sends
    // it (to the listen streams that asked for it in 2026-07-28; as is in the session era).
    if (httpNotifier) httpNotifier.resourceUpdated(uri);
    else await server.server.sendResourceUpdated({ uri });
    return text(`touched ${uri}`);
  });

  server.registerResource('config', 'config://app', { mimeType: 'text/plain', description: "The app's configuration." },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'debug=true' }] }));

  server.registerResource('greeting', new ResourceTemplate('greeting://{name}', {
    list: undefined,
    complete: { name: (value) => ['ada', 'alan', 'grace'].filter((n) => n.startsWith(value)) },
  }), { description: 'A greeting for `name`.' },
  async (uri, { name }) => ({ contents: [{ uri: uri.href, text: `Hello, ${name}!` }] }));

  server.registerPrompt('review', {
    description: 'Review some code.',
    argsSchema: z.object({
      code: completable(z.string(), (value) => ['python', 'perl', 'rust', 'ruby'].filter((l) => l.startsWith(value))),
    }),
  }, ({ code }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Please review this code:\n\n${code}` } }],
  }));

  return server;
}

/// Serves a web-standard `fetch` handler on node:http (what `@modelcontextprotocol/node` does).
function serveFetch(handler, port) {
  const http = createServer(async (req, res) => {
    const aborted = new AbortController();
    res.on('close', () => { if (!res.writableFinished) aborted.abort(); });
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
      }
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
        method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined, signal: aborted.signal,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (e) {
      if (!aborted.signal.aborted) console.error(e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  http.listen(port, '127.0.0.1', () => console.error(`serving Streamable HTTP on http://127.0.0.1:${port}/mcp`));
}

const [flag, portArg] = process.argv.slice(2);
if (flag === '--http') {
  const handler = createMcpHandler(() => build(), { legacy: 'stateless', onerror: (e) => console.error(e) });
  httpNotifier = handler.notify;
  serveFetch(handler, Number(portArg));
} else {
  serveStdio(() => build(), { onerror: (e) => console.error(e) });
}
