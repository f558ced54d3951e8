// A representative server written with the official TypeScript SDK (@modelcontextprotocol/sdk
// 1.32.2, McpServer), for tests/interop_client.rs: our Rust client against it.
//
//   node ts_server.mjs               stdio (default)
//   node ts_server.mjs --http PORT   Streamable HTTP on 127.0.0.1:PORT at /mcp (sessions)
//   node ts_server.mjs --sse PORT    deprecated HTTP+SSE on 127.0.0.1:PORT (GET /sse, POST /messages)
//
// The SDK is loaded from $MCP_INTEROP_NODE_DIR (or $ROOT/.interop/node), as the clients do.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const nodeDir = process.env.MCP_INTEROP_NODE_DIR || fileURLToPath(new URL('../../.interop/node/', import.meta.url));
const require = createRequire(join(resolve(nodeDir), 'package.json'));
const { McpServer, ResourceTemplate } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { SSEServerTransport } = require('@modelcontextprotocol/sdk/server/sse.js');
const { completable } = require('@modelcontextprotocol/sdk/server/completable.js');
const { z } = require('zod');

function build() {
  const server = new McpServer({ name: 'ts-interop', version: '1.0.0' });

  server.registerTool('add', {
    description: 'Add two numbers.',
    inputSchema: { a: z.number().int(), b: z.number().int() },
    outputSchema: { result: z.number().int() },
  }, async ({ a, b }) => {
    const output = { result: a + b };
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
  });

  server.registerTool('count', {
    description: 'Count to `steps`, reporting progress at each step.',
    inputSchema: { steps: z.number().int() },
  }, async ({ steps }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
        });
      }
    }
    return { content: [{ type: 'text', text: `counted ${steps}` }] };
  });

  server.registerTool('greet', {
    description: 'Ask the user for their name (form elicitation) and greet them.',
  }, async () => {
    const answer = await server.server.elicitInput({
      message: 'What is your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    });
    const text = answer.action === 'accept' ? `Hello, ${answer.content.name}!` : `no name (${answer.action})`;
    return { content: [{ type: 'text', text }] };
  });

  server.registerTool('fail', { description: 'Always fails.' }, async () => {
    throw new Error('this tool always fails');
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
    argsSchema: { code: completable(z.string(), (value) => ['python', 'perl', 'rust', 'ruby'].filter((l) => l.startsWith(value))) },
  }, ({ code }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Please review this code:\n\n${code}` } }],
  }));

  return server;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString();
  return text ? JSON.parse(text) : undefined;
}

const [flag, portArg] = process.argv.slice(2);
if (flag === '--http') {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    try {
      if (!req.url.startsWith('/mcp')) { res.writeHead(404).end(); return; }
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const id = req.headers['mcp-session-id'];
      let transport = id && sessions.get(id);
      if (!transport) {
        if (id) { res.writeHead(404).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } })); return; }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
        await build().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      console.error(e);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  http.listen(Number(portArg), '127.0.0.1', () => console.error(`serving Streamable HTTP on http://127.0.0.1:${portArg}/mcp`));
} else if (flag === '--sse') {
  const transports = new Map();
  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        transports.set(transport.sessionId, transport);
        res.on('close', () => transports.delete(transport.sessionId));
        await build().connect(transport);
      } else if (req.method === 'POST' && url.pathname === '/messages') {
        const transport = transports.get(url.searchParams.get('sessionId'));
        if (!transport) { res.writeHead(404).end('unknown session'); return; }
        await transport.handlePostMessage(req, res, await readBody(req));
      } else {
        res.writeHead(404).end();
      }
    } catch (e) {
      console.error(e);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  http.listen(Number(portArg), '127.0.0.1', () => console.error(`serving HTTP+SSE on http://127.0.0.1:${portArg}/sse`));
} else {
  await build().connect(new StdioServerTransport());
}
