// Interop check of tasks (2025-11-25, experimental) against the official TypeScript client
// (@modelcontextprotocol/sdk 1.32.2, `client.experimental.tasks`): the ticket desk's `report`
// tool (examples/tickets, `#[tool(task = "optional")]`) runs as a task, reports progress, and
// its result is fetched; a second run is cancelled. The Rust side (tests/interop_tasks.rs) checks
// the server's log for the tool's own "report cancelled".
//
// Usage: TICKETS_DB=PATH node ts_tasks.mjs -- COMMAND [ARGS...]   (stdio)
//        node ts_tasks.mjs URL                                    (Streamable HTTP)
//
// Prints one line per check; exits 0 when all pass, 1 when any fails, 2 on bad usage.
import { attempt, check, loadSdk, runMain, sleep } from './harness.mjs';

const argv = process.argv.slice(2);
const stdio = argv[0] === '--' && argv.length >= 2;
const http = argv.length === 1 && /^https?:\/\//.test(argv[0]);
if (!stdio && !http) {
  console.error('usage: TICKETS_DB=PATH node ts_tasks.mjs -- COMMAND [ARGS...]\n       node ts_tasks.mjs URL');
  process.exit(2);
}

const sdk = loadSdk('ts_tasks', ['client/index.js', 'client/stdio.js', 'client/streamableHttp.js', 'types.js']);
const { Client, StdioClientTransport, StreamableHTTPClientTransport } = sdk;

function transport() {
  if (http) return new StreamableHTTPClientTransport(new URL(argv[0]));
  const [command, ...args] = argv.slice(1);
  const env = { TICKETS_DB: process.env.TICKETS_DB ?? '', RUST_LOG: 'info' };
  return new StdioClientTransport({ command, args, env, stderr: 'inherit' });
}

async function main() {
  const client = new Client({ name: 'mcp-runtime-interop-ts-tasks', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport());
  try {
    await attempt('tasks capability', async () => {
      const caps = client.getServerCapabilities();
      check('tasks capability', !!caps?.tasks?.requests?.tools?.call && !!caps?.tasks?.cancel && !!caps?.tasks?.list,
        JSON.stringify(caps?.tasks));
    });

    await attempt('execution.taskSupport', async () => {
      const { tools } = await client.listTools();
      const report = tools.find((t) => t.name === 'report');
      check('execution.taskSupport', report?.execution?.taskSupport === 'optional' && client.isToolTask('report'),
        JSON.stringify(report?.execution));
    });

    await attempt('task runs to its result', async () => {
      const progress = [];
      const seen = [];
      let result;
      const stream = client.experimental.tasks.callToolStream(
        { name: 'report', arguments: { pace_ms: 50 } },
        undefined,
        { onprogress: (p) => progress.push(p), task: { ttl: 60000 } },
      );
      for await (const message of stream) {
        seen.push(message.type === 'taskStatus' ? `taskStatus:${message.task.status}` : message.type);
        if (message.type === 'result') result = message.result;
        if (message.type === 'error') throw message.error;
      }
      const text = result?.content?.[0]?.text ?? '';
      check('task created', seen[0] === 'taskCreated', JSON.stringify(seen));
      check('task result', /^# Ticket report/.test(text) && text.includes('#1 '), JSON.stringify(text.slice(0, 80)));
      check('task progress', progress.length > 0 && progress.at(-1).progress === progress.at(-1).total,
        JSON.stringify(progress));
    });

    await attempt('task listed', async () => {
      const { tasks } = await client.experimental.tasks.listTasks();
      check('task listed', tasks.length >= 1 && tasks.every((t) => typeof t.taskId === 'string'), JSON.stringify(tasks));
    });

    await attempt('task cancelled', async () => {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'report', arguments: { pace_ms: 2000 } },
        undefined,
        { task: { ttl: 60000 } },
      );
      let taskId;
      let cancelled;
      let ending;
      for await (const message of stream) {
        if (message.type === 'taskCreated') {
          taskId = message.task.taskId;
          await sleep(100);
          cancelled = await client.experimental.tasks.cancelTask(taskId);
        }
        if (message.type === 'result' || message.type === 'error') ending = message.type;
      }
      check('cancel answer', cancelled?.status === 'cancelled' && cancelled?.taskId === taskId, JSON.stringify(cancelled));
      const task = await client.experimental.tasks.getTask(taskId);
      check('cancelled for good', task.status === 'cancelled' && ending === 'error', `${task.status}, stream ended with ${ending}`);
    });
  } finally {
    await client.close();
  }
}

await runMain('ts_tasks', main);
