// The app of the MCP Apps browser test (bundled by drive.mjs with esbuild and inlined into
// app.html, which examples/apps.rs serves from the file APPS_COUNTER_HTML names): the counter
// of examples/apps.html, written on the ext-apps `App` API. It shows the tool result the host
// sends, and its button calls the app-only `increment` through the host.
import { App, PostMessageTransport } from '@modelcontextprotocol/ext-apps';

const text = (result) =>
  (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const show = (line) => { document.getElementById('status').textContent = line; };

const app = new App({ name: 'counter-test', version: '1.0.0' }, {});
app.ontoolresult = (result) => show(text(result));
document.getElementById('plus').addEventListener('click', async () => {
  try {
    show(text(await app.callServerTool({ name: 'increment', arguments: { by: 2 } })));
  } catch (e) {
    show(`The host refused: ${e.message}`);
  }
});
app.connect(new PostMessageTransport(window.parent, window.parent)).then(
  () => { document.getElementById('plus').disabled = false; },
  (e) => show(`connect failed: ${e}`),
);
