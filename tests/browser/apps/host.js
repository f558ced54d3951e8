// The host page of the MCP Apps browser test (bundled by drive.mjs with esbuild): a web host
// built on the ext-apps `AppBridge`, connected to examples/apps.rs (`?mcp=`) over Streamable
// HTTP with the TypeScript SDK v2 client, declaring the Apps extension (in the session era, or
// with `?era=2026-07-28` pinned to the stateless one). It lists the tools,
// reads the app `show_counter` links to, renders it in a sandboxed iframe under the spec's
// default CSP, calls the tool as the model would and hands input and result to the app. Every
// call the app makes (`tools/call` of `increment`) goes through the bridge to the server.
// What it saw is left in `window.__result` for drive.mjs; `window.__appCalls` counts the
// app's calls that reached the bridge.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from '@modelcontextprotocol/ext-apps/app-bridge';

const UI = 'io.modelcontextprotocol/ui';
// SEP-1865's restrictive default, for an app that declares no `csp`.
const DEFAULT_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'";

const text = (result) =>
  (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function run() {
  const params = new URLSearchParams(location.search);
  const url = new URL(params.get('mcp'));
  const era = params.get('era');
  const info = { name: 'apps-test-host', version: '1.0.0' };
  const client = new Client(info, {
    capabilities: { extensions: { [UI]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
    ...(era ? { versionNegotiation: { mode: { pin: era } } } : {}),
  });
  await client.connect(new StreamableHTTPClientTransport(url));
  const { tools } = await client.listTools();
  const show = tools.find((t) => t.name === 'show_counter');
  const increment = tools.find((t) => t.name === 'increment');
  const uri = getToolUiResourceUri(show);
  const read = await client.readResource({ uri });
  const page = read.contents[0];
  const csp = page._meta?.ui?.csp ? null : DEFAULT_CSP;
  const html = csp
    ? page.text.replace('<head>', `<head><meta http-equiv="Content-Security-Policy" content="${csp}">`)
    : page.text;

  const iframe = document.createElement('iframe');
  iframe.id = 'app';
  iframe.sandbox = 'allow-scripts';
  iframe.style.border = page._meta?.ui?.prefersBorder ? '1px solid #888' : 'none';
  document.body.append(iframe);
  const bridge = new AppBridge(client, info, { serverTools: {}, serverResources: {}, logging: {} });
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;

  // The model's call, while the app starts.
  const call = client.callTool({ name: 'show_counter', arguments: {} });
  await initialized;
  await bridge.sendToolInput({ arguments: {} });
  const result = await call;
  await bridge.sendToolResult(result);
  return {
    ok: true,
    protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null,
    serverExtension: client.getServerCapabilities()?.extensions?.[UI] ?? null,
    uri,
    showMeta: show._meta ?? null,
    incrementMeta: increment?._meta ?? null,
    incrementAppOnly: increment ? isToolVisibilityAppOnly(increment) : null,
    page: { mimeType: page.mimeType, meta: page._meta ?? null, bytes: page.text.length },
    modelResult: text(result),
  };
}

run().then(
  (result) => { window.__result = result; },
  (e) => { window.__result = { ok: false, error: String(e && e.stack ? e.stack : e) }; },
);
