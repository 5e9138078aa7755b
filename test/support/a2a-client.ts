/**
 * The A2A tests' side of the wire: the official `@a2a-js/sdk` client with a bearer token, messages
 * and parts as the SDK's types spell them, and a stream read to its end.
 */
import { type Message, type Part, type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';

/** The protocol's task states, by the names the tests read. */
export const working = TaskState.TASK_STATE_WORKING;
export const completed = TaskState.TASK_STATE_COMPLETED;
export const failedState = TaskState.TASK_STATE_FAILED;
export const canceled = TaskState.TASK_STATE_CANCELED;
export const inputRequired = TaskState.TASK_STATE_INPUT_REQUIRED;

/** A `fetch` that sends `authorization: <token>` with every request. */
export const fetchWithToken =
  (token: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', token);
    return fetch(input, { ...init, headers });
  };

/** The SDK client of the agent at `url` (its base, ending in `/`: the card is read relative to it). */
export const a2aClient = (url: string, fetchImpl: typeof fetch) =>
  new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }).createFromUrl(url);

export type A2ATestClient = Awaited<ReturnType<typeof a2aClient>>;

export const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
export const data = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

let serial = 0;
export const message = (parts: Part[], taskId = ''): Message => ({
  messageId: `m-${++serial}`,
  contextId: '',
  taskId,
  role: 1,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** The params of `sendMessage` / `sendMessageStream`. */
export const send = (parts: Part[], taskId = '', returnImmediately = false) => ({
  tenant: '',
  message: message(parts, taskId),
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
  metadata: undefined,
});

export const asTask = (result: Message | Task): Task => {
  if (!('status' in result)) throw new Error('expected a task');
  return result;
};

export const partText = (parts: Part[] | undefined) =>
  (parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
export const partData = (parts: Part[] | undefined) => (parts ?? []).find((part) => part.content?.$case === 'data')?.content?.value;
export const artifactText = (task: Task) => task.artifacts.map((artifact) => partText(artifact.parts)).join('|');

/**
 * A stream to its end: its events, the states it went through, the answer text its artifact
 * updates add up to, the artifacts it built, and the text of each `working` status message.
 */
export async function drain(stream: AsyncGenerator<StreamResponse>, onEvent?: (event: StreamResponse) => void) {
  const events: StreamResponse[] = [];
  const progress: string[] = [];
  const artifacts = new Map<string, Part[]>();
  let answer = '';
  for await (const event of stream) {
    events.push(event);
    onEvent?.(event);
    const payload = event.payload;
    if (payload?.$case === 'artifactUpdate' && payload.value.artifact) {
      const { artifactId, parts } = payload.value.artifact;
      artifacts.set(artifactId, payload.value.append ? [...(artifacts.get(artifactId) ?? []), ...parts] : parts);
      const piece = partText(parts);
      answer = payload.value.append ? answer + piece : piece;
    }
    if (payload?.$case === 'statusUpdate' && payload.value.status?.state === working && payload.value.status.message) {
      progress.push(partText(payload.value.status.message.parts));
    }
  }
  const states = events
    .map((event) =>
      event.payload?.$case === 'task'
        ? event.payload.value.status?.state
        : event.payload?.$case === 'statusUpdate'
          ? event.payload.value.status?.state
          : undefined,
    )
    .filter((state) => state !== undefined);
  return { events, states, answer, progress, artifacts };
}

/** Waits until `check` holds (polling every 5 ms), or throws after `ms`. */
export const until = async (check: () => boolean | Promise<boolean>, ms = 3000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};
