// The observe subpaths as a user installs them: actorloop/rx with rxjs, actorloop/inspect with
// elkjs, and @statelyai/inspect not installed (its bridge must say so, and nothing else break).
// Type-checked with strict and skipLibCheck: false, then run.
import { type ConversationActor, createConversationMachine, handlerProvider, type RunOutput } from 'actorloop';
import { MissingDependencyError, type WatchedSummary, createStatelyInspector, startLiveViewer } from 'actorloop/inspect';
import { events$, output$, state$, text$ } from 'actorloop/rx';
import { distinctUntilChanged, filter, lastValueFrom, map, toArray } from 'rxjs';
import { createActor } from 'xstate';

const machine = createConversationMachine({
  provider: handlerProvider(async function* () {
    yield {
      id: '1',
      object: 'chat.completion.chunk',
      model: 'm',
      choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello ' }, finish_reason: null }],
    };
    yield {
      id: '1',
      object: 'chat.completion.chunk',
      model: 'm',
      choices: [{ index: 0, delta: { content: 'there.' }, finish_reason: 'stop' }],
    };
  }),
});

const viewer = await startLiveViewer();
const actor: ConversationActor = createActor(machine, { input: { messages: [] } });
viewer.watch(actor, { id: 'r1' });
const states = lastValueFrom(
  state$(actor).pipe(
    map((snapshot) => (typeof snapshot.value === 'string' ? snapshot.value : (Object.keys(snapshot.value)[0] ?? ''))),
    distinctUntilChanged(),
    toArray(),
  ),
);
const text = lastValueFrom(text$(actor));
const tools = lastValueFrom(
  events$(actor, 'tool.result').pipe(
    filter((event) => !event.isError),
    toArray(),
  ),
);
const output: Promise<RunOutput> = lastValueFrom(output$(actor));
actor.start();
actor.send({ type: 'user.message', content: 'hi' });

const runs = (await (await fetch(`${viewer.url}api/conversations`)).json()) as WatchedSummary[];
const view = (await (await fetch(`${viewer.url}api/conversations/${runs[0]?.id}`)).json()) as { chart: string };
const chart = await (await fetch(`${viewer.url}chart/${view.chart}/overview.svg`)).text();
await viewer.close();

let statelyMissing = 'loaded';
try {
  await createStatelyInspector();
} catch (error) {
  if (MissingDependencyError.isInstance(error)) statelyMissing = `${error.name} ${error.packageName}`;
}

console.log(
  JSON.stringify({
    states: await states,
    text: await text,
    tools: (await tools).length,
    status: (await output).status,
    viewer: { runs: runs.map((run) => run.id), chart: chart.includes('data-state="requesting"') },
    statelyMissing,
  }),
);
