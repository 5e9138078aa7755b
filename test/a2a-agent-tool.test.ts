/**
 * `a2aAgentTool` (issue 50, item 3; DESIGN §20): a remote A2A agent as a tool of a conversation.
 * Everything is real: the remote is the A2A SDK's own server (`DefaultRequestHandler`,
 * `InMemoryTaskStore`, `JsonRpcTransportHandler`) on a loopback socket, with an `AgentExecutor`
 * scripted per test by the message it receives; the parent conversation's model is the planned
 * OpenAI wire server, reached through the real `openaiProvider`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AGENT_CARD_PATH,
  formatSSEErrorEvent,
  formatSSEEvent,
  Role,
  SSE_HEADERS,
  TaskState,
  type AgentCard,
  type Message,
} from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import {
  AgentEvent,
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, openaiProvider, type ConversationEmittedEvent, type RunOutput, type Tool } from '../src/index.js';
import { A2AAgentError, a2aAgentTool, a2aAgentToolFromCard, type A2AAgentProgress } from '../src/protocols/a2a/agent-tool/index.js';
import { startPlannedWireServer, type PlannedWireServer } from './support/planned-wire-server.js';
import { closedPortUrl } from './support/wire-server.js';

/** A message with this text has its stream cut by the server after the task's first `working`. */
const dropMarker = 'drop mid-stream';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a script may do on the remote task it runs. */
type TaskScript = {
  ctx: RequestContext;
  /** Publishes the task itself (the first event every execution must publish). */
  start(): void;
  status(state: TaskState, text?: string): void;
  artifact(text: string, options?: { id?: string; append?: boolean; lastChunk?: boolean }): void;
  /** Aborted when the server's `cancelTask` reaches this task. */
  canceled: AbortSignal;
};

type Script = (task: TaskScript) => Promise<void>;

const agentMessage = (ctx: RequestContext, text: string): Message => ({
  messageId: crypto.randomUUID(),
  contextId: ctx.contextId,
  taskId: ctx.taskId,
  role: Role.ROLE_AGENT,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const textOf = (message: Message) => message.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');

/**
 * A real A2A server: the SDK's request handler and JSON-RPC transport over node:http. The first
 * message of a task picks its script by its text (`scripts`); a follow-up on the same task goes to
 * `followUps`. `/broken/` serves HTML as its card; `/html-rpc/` a card whose endpoint answers HTML.
 */
async function startA2AServer() {
  const scripts = new Map<string, Script>();
  const followUps = new Map<string, Script>();
  const cancels = new Map<string, AbortController>();
  const contexts = new Map<string, string>();
  const canceledTasks: string[] = [];
  const authorizations: Array<string | undefined> = [];
  const subscriptions = { count: 0 };
  const executor: AgentExecutor = {
    async execute(ctx, bus) {
      const text = textOf(ctx.userMessage);
      const script = ctx.task ? followUps.get(ctx.taskId) : scripts.get(text);
      const controller = cancels.get(ctx.taskId) ?? new AbortController();
      cancels.set(ctx.taskId, controller);
      contexts.set(ctx.taskId, ctx.contextId);
      await (script ?? defaultScript)(taskScript(ctx, bus, controller.signal));
    },
    async cancelTask(taskId, bus) {
      canceledTasks.push(taskId);
      cancels.get(taskId)?.abort();
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: contexts.get(taskId) ?? '',
          status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
      bus.finished();
    },
  };
  let base = '';
  const card = (path: string): AgentCard => ({
    name: 'Test Researcher',
    description: 'Answers research questions.',
    supportedInterfaces: [{ url: `${base}${path}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'lookup',
        name: 'Lookup',
        description: 'Finds facts',
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  });
  const store = new InMemoryTaskStore();
  const handler = new DefaultRequestHandler(card('/rpc'), store, executor);
  const transport = new JsonRpcTransportHandler(handler);
  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => resolve(body));
    });
  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    authorizations.push(req.headers.authorization);
    const url = req.url ?? '';
    if (req.method === 'GET' && url === `/${AGENT_CARD_PATH}`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card('/rpc')));
      return;
    }
    if (req.method === 'GET' && url === `/html-rpc/${AGENT_CARD_PATH}`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card('/html-rpc/rpc')));
      return;
    }
    if (url.startsWith('/broken/') || url === '/html-rpc/rpc') {
      res.writeHead(url.startsWith('/broken/') ? 200 : 502, { 'content-type': 'text/html' }).end('<html><body>Bad gateway</body></html>');
      return;
    }
    if (req.method !== 'POST' || url !== '/rpc') {
      res.writeHead(404).end();
      return;
    }
    void readBody(req).then(async (body) => {
      if (body.includes('"SubscribeToTask"')) subscriptions.count++;
      const version = req.headers['a2a-version'];
      const context = defaultServerCallContextBuilder({
        extensions: undefined,
        user: new UnauthenticatedUser(),
        headers: req.headers,
        requestedVersion: typeof version === 'string' ? version : undefined,
      });
      const result = await transport.handle(body, context);
      if (Symbol.asyncIterator in result) {
        res.writeHead(200, SSE_HEADERS);
        try {
          for await (const event of result) {
            await new Promise((resolve) => res.write(formatSSEEvent(event), resolve));
            // A connection that drops mid-task (a proxy's idle timeout): the task goes on without this stream.
            if (
              body.includes(dropMarker) &&
              body.includes('SendStreamingMessage') &&
              JSON.stringify(event).includes('TASK_STATE_WORKING')
            ) {
              res.destroy();
              break;
            }
          }
        } catch (error) {
          res.write(formatSSEErrorEvent({ jsonrpc: '2.0', id: null, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }));
        }
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    scripts,
    followUps,
    canceledTasks,
    authorizations,
    /** How many `SubscribeToTask` requests came. */
    subscriptions,
    /** The task's state as a separate SDK client reads it with `getTask`. */
    async taskState(taskId: string) {
      const client = await new ClientFactory().createFromUrl(base);
      return (await client.getTask({ tenant: '', id: taskId })).status?.state;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function taskScript(ctx: RequestContext, bus: ExecutionEventBus, canceled: AbortSignal): TaskScript {
  const { taskId, contextId } = ctx;
  return {
    ctx,
    canceled,
    start() {
      if (ctx.task) {
        bus.publish(AgentEvent.task(ctx.task));
        return;
      }
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: undefined,
        }),
      );
    },
    status(state, text) {
      const message = text === undefined ? undefined : agentMessage(ctx, text);
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, message, timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
      if (
        [
          TaskState.TASK_STATE_COMPLETED,
          TaskState.TASK_STATE_FAILED,
          TaskState.TASK_STATE_REJECTED,
          TaskState.TASK_STATE_INPUT_REQUIRED,
        ].includes(state)
      )
        bus.finished();
    },
    artifact(text, { id = 'answer', append = false, lastChunk = true } = {}) {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: id,
            name: 'answer',
            description: '',
            parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
            metadata: undefined,
            extensions: [],
          },
          append,
          lastChunk,
          metadata: undefined,
        }),
      );
    },
  };
}

const defaultScript: Script = async (task) => {
  task.start();
  task.status(TaskState.TASK_STATE_FAILED, 'no script for this message');
};

/** A script that starts working and then waits until the task is canceled. */
const untilCanceled: Script = async (task) => {
  task.start();
  task.status(TaskState.TASK_STATE_WORKING, 'thinking hard');
  await new Promise<void>((resolve) => task.canceled.addEventListener('abort', () => resolve(), { once: true }));
};

let a2a: Awaited<ReturnType<typeof startA2AServer>>;
let model: PlannedWireServer;

beforeAll(async () => {
  a2a = await startA2AServer();
  // The parent's model: the first round calls the tool named in the user message with that message;
  // the next answers with the tool's result, so the final text proves what the model was given.
  model = await startPlannedWireServer((step) => {
    if (step.round === 0) {
      const [toolName = '', ...rest] = step.lastUser.split(' ');
      return { toolCalls: [{ id: 'call_1', name: toolName, args: { message: rest.join(' ') } }] };
    }
    const result = step.messages.at(-1);
    return { text: `parent saw: ${result?.role === 'tool' ? result.content : '(no tool result)'}` };
  });
});

afterAll(async () => {
  await Promise.all([a2a?.close(), model?.close()]);
});

/** Runs a parent conversation whose user message is `<tool name> <message for the remote>`. */
async function runParent(
  tool: Tool,
  message: string,
  options: { onEvent?: (event: ConversationEmittedEvent, actor: { send(event: { type: 'cancel' }): void }) => void } = {},
) {
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: `${model.url}/v1` }),
    tools: [tool],
  });
  const actor = createActor(machine, { input: {} });
  const events: ConversationEmittedEvent[] = [];
  actor.on('*', (event) => {
    events.push(event);
    options.onEvent?.(event, actor);
  });
  actor.start();
  actor.send({ type: 'user.message', content: `${tool.name} ${message}` });
  const output: RunOutput = await toPromise(actor);
  const results = events.filter((event) => event.type === 'tool.result');
  const progress = events.flatMap((event) => (event.type === 'tool.progress' ? [event.data as A2AAgentProgress] : []));
  return { output, events, results, progress };
}

/** Waits until `check` holds, for at most `ms`. */
async function eventually(check: () => boolean | Promise<boolean>, ms = 2_000) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await sleep(10);
  }
}

describe('a2aAgentTool: a remote A2A agent as a tool', () => {
  it('names itself from the card; streams status and artifact chunks as progress; the artifacts are the result; the parent finishes', async () => {
    a2a.scripts.set('capital of France?', async (task) => {
      task.start();
      task.status(TaskState.TASK_STATE_WORKING, 'looking it up');
      task.artifact('Paris is ', { lastChunk: false });
      task.artifact('the capital.', { append: true, lastChunk: true });
      task.status(TaskState.TASK_STATE_COMPLETED);
    });
    const before = a2a.authorizations.length;
    const tool = await a2aAgentToolFromCard(a2a.url, { headers: async () => ({ authorization: 'Bearer t0ken' }) });
    expect(tool.name).toBe('test_researcher');
    expect(tool.description).toContain('Answers research questions.');
    expect(tool.description).toContain('Lookup: Finds facts');
    const { output, results, progress } = await runParent(tool, 'capital of France?');
    expect(output.status).toBe('done');
    expect(results).toEqual([
      { type: 'tool.result', toolCallId: 'call_1', name: 'test_researcher', result: 'Paris is the capital.', isError: false },
    ]);
    expect(output.text).toBe('parent saw: Paris is the capital.');
    // Progress, in order: the task, working with its message, the two chunks, completed.
    expect(
      progress.map((update) => (update.kind === 'status' ? `${update.state}:${update.text ?? ''}` : `artifact:${update.text}`)),
    ).toEqual(['submitted:', 'working:looking it up', 'artifact:Paris is ', 'artifact:the capital.', 'completed:']);
    expect(progress.every((update) => update.agent === 'Test Researcher' && typeof update.taskId === 'string')).toBe(true);
    // Every request to the agent (the card, the stream) carried the caller's header.
    expect(a2a.authorizations.slice(before).length).toBeGreaterThanOrEqual(2);
    expect(a2a.authorizations.slice(before).every((value) => value === 'Bearer t0ken')).toBe(true);
  });

  it('a stream that drops mid-task is resubscribed: the rest of the task arrives and is the result', async () => {
    a2a.scripts.set(dropMarker, async (task) => {
      task.start();
      const before = a2a.subscriptions.count;
      task.status(TaskState.TASK_STATE_WORKING, 'step 1');
      // The rest comes once the client has subscribed again (and the server has had a moment to attach it).
      await eventually(() => a2a.subscriptions.count > before);
      await sleep(30);
      task.artifact('survived the drop');
      task.status(TaskState.TASK_STATE_COMPLETED);
    });
    const tool = a2aAgentTool(a2a.url, { name: 'research', description: 'Research' });
    const { output, results, progress } = await runParent(tool, dropMarker);
    expect(results[0]).toMatchObject({ isError: false, result: 'survived the drop' });
    expect(output.text).toBe('parent saw: survived the drop');
    // The working update before the drop, then what the resubscription brought.
    expect(progress.map((update) => (update.kind === 'status' ? update.state : 'artifact'))).toEqual([
      'submitted',
      'working',
      'working',
      'artifact',
      'completed',
    ]);
  });

  it('a task that fails is an error result naming the agent and its message; the parent model goes on', async () => {
    a2a.scripts.set('fail please', async (task) => {
      task.start();
      task.status(TaskState.TASK_STATE_FAILED, 'the database is down');
    });
    // Given the card's own URL rather than the agent's base URL.
    const tool = await a2aAgentToolFromCard(`${a2a.url}/${AGENT_CARD_PATH}`, { name: 'research' });
    expect(tool.description).toContain('Answers research questions.');
    const { output, results } = await runParent(tool, 'fail please');
    expect(output.status).toBe('done');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ isError: true });
    const result = (results[0] as { result: string }).result;
    expect(result).toContain('the remote agent "Test Researcher" failed: the database is down');
    expect(output.text).toContain('the database is down');
  });

  it("onFailure: 'halt' ends the parent halted with the remote agent's failure", async () => {
    a2a.scripts.set('reject please', async (task) => {
      task.start();
      task.status(TaskState.TASK_STATE_REJECTED, 'not my kind of question');
    });
    const tool = a2aAgentTool(a2a.url, { name: 'research', onFailure: 'halt' });
    const { output } = await runParent(tool, 'reject please');
    expect(output.status).toBe('halted');
    expect(output.reason).toBe('tool_halt');
    expect(output.text).toContain('the remote agent "Test Researcher" rejected the task: not my kind of question');
  });

  it('input-required is an error result naming it by default; onInputRequired answers on the same task', async () => {
    const asking: Script = async (task) => {
      task.start();
      task.status(TaskState.TASK_STATE_INPUT_REQUIRED, 'Which currency?');
      a2a.followUps.set(task.ctx.taskId, async (next) => {
        next.start();
        next.artifact(`Converted to ${textOf(next.ctx.userMessage)}.`);
        next.status(TaskState.TASK_STATE_COMPLETED);
      });
    };
    a2a.scripts.set('convert 10', asking);
    const plain = a2aAgentTool(a2a.url, { name: 'convert', description: 'Converts money' });
    const refused = await runParent(plain, 'convert 10');
    expect(refused.output.status).toBe('done');
    expect(refused.results[0]).toMatchObject({ isError: true });
    expect((refused.results[0] as { result: string }).result).toContain(
      'the remote agent "Test Researcher" needs more input to go on: Which currency?',
    );
    expect((refused.results[0] as { result: string }).result).toContain('input-required');

    const questions: string[] = [];
    const answering = a2aAgentTool(a2a.url, {
      name: 'convert',
      description: 'Converts money',
      onInputRequired: ({ question, answered }) => {
        questions.push(question);
        return answered === 0 ? 'EUR' : undefined;
      },
    });
    const { output, results } = await runParent(answering, 'convert 10');
    expect(questions).toEqual(['Which currency?']);
    // A handler that throws fails the call naming the handler, not the remote agent's answer.
    const throwing = a2aAgentTool(a2a.url, {
      name: 'convert',
      description: 'Converts money',
      onInputRequired: () => {
        throw new Error('no wallet configured');
      },
    });
    const broken = await runParent(throwing, 'convert 10');
    expect(broken.results[0]).toMatchObject({ isError: true });
    expect((broken.results[0] as { result: string }).result).toContain(
      'onInputRequired failed to answer the remote agent "Test Researcher": no wallet configured',
    );
    expect(results[0]).toMatchObject({ isError: false, result: 'Converted to EUR.' });
    expect(output.text).toBe('parent saw: Converted to EUR.');
  });

  it("the parent's cancel reaches the remote task: cancelTask is sent and the task ends canceled", async () => {
    a2a.scripts.set('think forever', untilCanceled);
    const tool = a2aAgentTool(a2a.url, { name: 'research', description: 'Research' });
    let taskId = '';
    const { output } = await runParent(tool, 'think forever', {
      onEvent: (event, actor) => {
        const data = event.type === 'tool.progress' ? (event.data as A2AAgentProgress) : undefined;
        if (data?.kind === 'status' && data.state === 'working') {
          taskId = data.taskId;
          actor.send({ type: 'cancel' });
        }
      },
    });
    expect(output.status).toBe('halted');
    expect(output.reason).toBe('cancelled');
    expect(taskId).not.toBe('');
    await eventually(() => a2a.canceledTasks.includes(taskId));
    await eventually(async () => (await a2a.taskState(taskId)) === TaskState.TASK_STATE_CANCELED);
  });

  it('a cancel that comes before the remote task is known still cancels it once it is', async () => {
    let cancelParent = () => {};
    let remoteTaskId = '';
    a2a.scripts.set('cancel me early', async (task) => {
      remoteTaskId = task.ctx.taskId;
      // The caller gives up while the server has the request but has not yet answered with the task.
      cancelParent();
      await sleep(100);
      await untilCanceled(task);
    });
    const tool = a2aAgentTool(a2a.url, { name: 'research', description: 'Research' });
    const { output, progress } = await runParent(tool, 'cancel me early', {
      onEvent: (event, actor) => {
        if (event.type === 'tool.started') cancelParent = () => actor.send({ type: 'cancel' });
      },
    });
    expect(output.reason).toBe('cancelled');
    expect(progress).toEqual([]);
    expect(remoteTaskId).not.toBe('');
    await eventually(() => a2a.canceledTasks.includes(remoteTaskId));
    expect(await a2a.taskState(remoteTaskId)).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('the call timing out cancels the remote task; the parent gets the timeout as an error result', async () => {
    a2a.scripts.set('slow one', untilCanceled);
    const tool = a2aAgentTool(a2a.url, { name: 'research', description: 'Research', timeoutMs: 300 });
    const started = Date.now();
    const { output, results, progress } = await runParent(tool, 'slow one');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(output.status).toBe('done');
    expect(results[0]).toMatchObject({ isError: true });
    expect((results[0] as { result: string }).result).toMatch(/timed out/);
    const taskId = progress[0]?.taskId ?? '';
    await eventually(() => a2a.canceledTasks.includes(taskId));
    expect(await a2a.taskState(taskId)).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('an unreachable agent, an HTML card or an HTML endpoint: a clear error, never a crash', async () => {
    const closed = await closedPortUrl();
    // From the card: the card is needed at once, and making the tool rejects.
    const noCard = await a2aAgentToolFromCard(closed).catch((error: unknown) => error);
    expect(A2AAgentError.isInstance(noCard) && noCard.kind).toBe('card');
    expect(String(noCard)).toContain(`could not read the agent card of the remote A2A agent at ${closed}/`);
    const htmlCard = await a2aAgentToolFromCard(`${a2a.url}/broken/`).catch((error: unknown) => error);
    expect(A2AAgentError.isInstance(htmlCard) && htmlCard.kind).toBe('card');

    // Otherwise the card is read on the first call: the call fails, the parent goes on.
    const lazy = a2aAgentTool(closed);
    expect(lazy.name).toBe(new URL(closed).hostname.replace(/[^a-zA-Z0-9_-]+/g, '_'));
    const down = await runParent(lazy, 'anyone there?');
    expect(down.output.status).toBe('done');
    expect(down.results[0]).toMatchObject({ isError: true });
    expect((down.results[0] as { result: string }).result).toContain('could not read the agent card');

    // A card whose endpoint answers HTML: the call is an error result, not a crash.
    const htmlEndpoint = a2aAgentTool(`${a2a.url}/html-rpc`, { name: 'research', description: 'Research' });
    const garbled = await runParent(htmlEndpoint, 'hello?');
    expect(garbled.output.status).toBe('done');
    expect(garbled.results[0]).toMatchObject({ isError: true });
    expect((garbled.results[0] as { result: string }).result).toContain('the remote agent "Test Researcher"');
  });

  it('bad options are refused at creation', async () => {
    expect(() => a2aAgentTool('ftp://example.com')).toThrow('Invalid option a2aAgentTool(url): expected an http(s) URL');
    expect(() => a2aAgentTool(a2a.url, { name: 'no spaces allowed' })).toThrow('Invalid option a2aAgentTool.name');
    expect(() => a2aAgentTool(a2a.url, { onFailure: 'explode' as 'halt' })).toThrow('Invalid option a2aAgentTool.onFailure');
    await expect(a2aAgentToolFromCard('ftp://example.com')).rejects.toThrow('Invalid option a2aAgentTool(url): expected an http(s) URL');
    // Made synchronously, as a tool list expects: named from the URL, described as a remote agent.
    const plain = a2aAgentTool('https://agents.example.com/research/');
    expect(plain.name).toBe('research');
    expect(plain.description).toContain('https://agents.example.com/research/');
  });
});

describe('the SDK is an optional peer', () => {
  it('no module of the agent tool imports @a2a-js/sdk at load time: only types, and load-sdk.ts on first use', () => {
    const folder = new URL('../src/protocols/a2a/agent-tool/', import.meta.url);
    const files = readdirSync(folder).filter((name) => name.endsWith('.ts'));
    expect(files).toContain('index.ts');
    for (const name of files) {
      const source = readFileSync(new URL(name, folder), 'utf8');
      // With verbatimModuleSyntax only a whole `import type` statement is erased from the output.
      const loaded = [...source.matchAll(/^import\s+(?!type\s)[^;]*?from\s+'(@a2a-js\/sdk[^']*)'/gm)].map((match) => match[1]);
      expect(loaded, name).toEqual([]);
      const dynamic = [...source.matchAll(/import\('(@a2a-js\/sdk[^']*)'\)/g)].map((match) => match[1]);
      expect(dynamic, name).toEqual(name === 'load-sdk.ts' ? ['@a2a-js/sdk/client', '@a2a-js/sdk'] : []);
    }
  });
});
